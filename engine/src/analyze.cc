// Analyze(): placement, per-op roofline timing, prefill and every decode
// step, bottleneck, suggestions and economy.
//
// Overheads: the pure roofline (options.pure_roofline, or a default
// Efficiency: eta = 1, no profile, zero overheads) adds no overhead at all,
// so the result is an upper bound on speed. Otherwise each op instance pays
// efficiency.per_kernel_overhead_seconds per kernel (or, when a calibration
// profile is named but fitted no per-kernel overhead, the hardware's
// published kernel_launch_seconds), each step pays
// efficiency.per_step_overhead_seconds, and the prefill (once per request
// batch) also efficiency.per_request_overhead_seconds.
//
// Compute roof unknown (hardware with no peak at all): ops get no compute
// time, so every time is the memory-roof time, still an upper bound on speed;
// the result says compute_roof_known = false, the ridge point is 0, and no
// batch suggestion is made (its gain depends on the missing roof).
//
// decode_first_step is the step at KV length prompt + 1 (it feeds the token
// the prefill emitted); decode_last_step is at prompt + generated - 1.
#include "ridgeline/engine/analyze.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "operators.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/engine/step.h"
#include "validate_util.h"

namespace ridgeline::engine {
namespace {

using internal::Av;
using internal::GraphContext;
using internal::OpCost;
using internal::OpList;
using internal::StepShape;

constexpr int kWeights = static_cast<int>(OperandClass::kWeights);
constexpr int kKv = static_cast<int>(OperandClass::kKvCache);
constexpr int kAct = static_cast<int>(OperandClass::kActivations);
constexpr double kSecondsPerYear = 365.25 * 24 * 3600;
constexpr double kJoulesPerKwh = 3.6e6;

// Where each operand class lives: fraction of its bytes per tier, and the
// bandwidth-weighted inverse used to time its traffic.
struct PlacementInfo {
  std::array<std::array<double, kMaxTiers>, kOperandClassCount> frac{};
  std::array<double, kOperandClassCount> inv_read{};   // sum frac / read bw
  std::array<double, kOperandClassCount> inv_write{};  // sum frac / write bw
  std::array<int, kOperandClassCount> pim_tier{-1, -1, -1};
  int weight_tier = 0;  // tier holding the largest share of the weights
};

std::string Gb(double bytes) { return absl::StrFormat("%.1f GB", bytes / 1e9); }

// Pinned classes first (a pin is a constraint: it must not find its tier
// already filled by an unpinned class that could have spilled), then the
// unpinned ones in the order weights, KV cache, activations, each to the
// fastest tiers with room, spilling the remainder into the next tier.
MemoryFootprint Place(const Hardware& hw, const PlacementPins& pins,
                      const std::array<double, kOperandClassCount>& need,
                      PlacementInfo* p) {
  MemoryFootprint fp;
  fp.required_bytes = need;
  const int n = static_cast<int>(hw.tiers.size());
  std::array<double, kMaxTiers> free{};
  fp.tiers.reserve(n);
  for (int t = 0; t < n; ++t) {
    free[t] = hw.tiers[t].capacity_bytes;
    TierUsage u;
    u.tier = t;
    u.name = hw.tiers[t].name;
    u.capacity_bytes = hw.tiers[t].capacity_bytes;
    fp.tiers.push_back(std::move(u));
  }
  auto fail = [&](std::string why) {
    fp.fits = false;
    if (!fp.not_fitting.empty()) absl::StrAppend(&fp.not_fitting, "; ");
    absl::StrAppend(&fp.not_fitting, why);
  };
  std::array<int, kOperandClassCount> order{};
  int next = 0;
  for (int c = 0; c < kOperandClassCount; ++c) {
    if (pins.tier[c].has_value()) order[next++] = c;
  }
  for (int c = 0; c < kOperandClassCount; ++c) {
    if (!pins.tier[c].has_value()) order[next++] = c;
  }
  for (const int c : order) {
    const auto cname = Av(OperandClassName(static_cast<OperandClass>(c)));
    const double bytes = need[c];
    const auto& pin = pins.tier[c];
    if (pin.has_value()) {
      const int t = *pin;
      if (bytes > free[t]) {
        fail(absl::StrCat(cname, " pinned to tier ", t, " (", hw.tiers[t].name,
                          ") need ", Gb(bytes), "; ", Gb(free[t]), " free"));
      }
      fp.tiers[t].bytes[c] += bytes;
      free[t] = std::max(0.0, free[t] - bytes);
      continue;
    }
    double rem = bytes;
    double free_total = 0;
    for (int t = 0; t < n; ++t) free_total += free[t];
    for (int t = 0; t < n && rem > 0; ++t) {
      const double take = std::min(rem, free[t]);
      if (take <= 0) continue;
      fp.tiers[t].bytes[c] += take;
      free[t] -= take;
      rem -= take;
    }
    if (rem > 0) {
      fail(absl::StrCat(cname, " need ", Gb(bytes), "; ", Gb(free_total),
                        " free in all tiers"));
      // Evaluate as if the rest sat in the slowest tier.
      fp.tiers[n - 1].bytes[c] += rem;
    }
  }
  for (int c = 0; c < kOperandClassCount; ++c) {
    const double bytes = need[c];
    int best = 0;
    for (int t = 0; t < n; ++t) {
      p->frac[c][t] = bytes > 0 ? fp.tiers[t].bytes[c] / bytes : 0;
      if (p->frac[c][t] > p->frac[c][best]) best = t;
    }
    if (bytes <= 0) {
      // Nothing to place: traffic (if any) goes to the pinned or first tier.
      best = pins.tier[c].value_or(0);
      p->frac[c][best] = 1;
    }
    if (c == kWeights) p->weight_tier = best;
    double pim_share = 0;
    for (int t = 0; t < n; ++t) {
      p->inv_read[c] +=
          p->frac[c][t] / hw.tiers[t].read_bandwidth_bytes_per_second;
      p->inv_write[c] +=
          p->frac[c][t] / hw.tiers[t].write_bandwidth_bytes_per_second;
      if (hw.tiers[t].near_memory_compute.has_value() &&
          p->frac[c][t] > pim_share) {
        pim_share = p->frac[c][t];
        p->pim_tier[c] = t;
      }
    }
  }
  for (TierUsage& u : fp.tiers) {
    u.used_bytes = u.bytes[0] + u.bytes[1] + u.bytes[2];
  }
  return fp;
}

// The roof that dominates: overhead when it exceeds every roof, else the
// largest of interconnect, compute and memory (memory when all are 0).
inline Bound DominantBound(double compute, double memory, double link,
                           double overhead) {
  const double local = compute > memory ? compute : memory;
  if (overhead > (link > local ? link : local)) return Bound::kOverhead;
  if (link > 0 && link >= local) return Bound::kInterconnect;
  return compute >= memory && compute > 0 ? Bound::kCompute : Bound::kMemory;
}

struct Timing {
  double compute = 0, memory = 0, link = 0, overhead = 0, seconds = 0;
  Bound bound = Bound::kMemory;
  int tier = -1;
  MathType math = MathType::kBf16;
};

// Times ops under the roofline for one scenario and placement. Stateless
// after construction.
class Evaluator {
 public:
  Evaluator(const Scenario& s, const PlacementInfo& p)
      : s_(s), p_(p), link_bw_(LinkBandwidth(s)) {
    const Efficiency& e = s.efficiency;
    if (s.options.pure_roofline) return;
    eta_c_ = e.compute;
    eta_m_ = e.memory;
    use_hook_ = e.profile_name.empty() && bool(s.hardware.efficiency_hook);
    per_kernel_ = e.per_kernel_overhead_seconds;
    if (!e.profile_name.empty() && per_kernel_ == 0) {
      per_kernel_ = s.hardware.kernel_launch_seconds;
    }
    per_step_ = e.per_step_overhead_seconds;
    per_request_ = e.per_request_overhead_seconds;
  }

  // Unpublished interconnect: all-reduce bytes cost no link time, so the
  // result stays an upper bound on speed (and says so in a warning).
  static double LinkBandwidth(const Scenario& s) {
    return s.hardware.interconnect_bytes_per_second.value_or(0);
  }

  double per_step() const { return per_step_; }
  // What the prefill of a request batch pays on top of its ops.
  double prefill_fixed() const { return per_step_ + per_request_; }
  bool pure() const {
    if (use_hook_ || per_kernel_ > 0 || per_step_ > 0 || per_request_ > 0)
      return false;
    for (int i = 0; i < kOpClassCount; ++i) {
      if (eta_c_[i] != 1 || eta_m_[i] != 1) return false;
    }
    return true;
  }

  Timing Time(const OpCost& op) const {
    const int cls = static_cast<int>(op.op_class);
    double eta_c = eta_c_[cls], eta_m = eta_m_[cls];
    double mem_raw = 0;
    for (int c = 0; c < kOperandClassCount; ++c) {
      mem_raw += op.read[c] * p_.inv_read[c] + op.write[c] * p_.inv_write[c];
    }
    if (use_hook_) {
      const double bytes = Sum(op.read) + Sum(op.write);
      std::optional<OpEfficiency> h = s_.hardware.efficiency_hook(
          OpShape{op.op_class, op.math, op.rows, op.flops, bytes});
      // A hook answer outside (0, 1] is ignored (engine defaults apply).
      if (h.has_value() && h->compute > 0 && h->compute <= 1 && h->memory > 0 &&
          h->memory <= 1) {
        eta_c = h->compute;
        eta_m = h->memory;
      }
    }
    Timing t;
    t.math = op.math;
    const double peak =
        s_.hardware.peak_ops_per_second[static_cast<int>(op.math)].value_or(0);
    t.compute = peak > 0 ? op.flops / (peak * eta_c) : 0;
    t.memory = mem_raw / eta_m;
    if (op.pim_candidate && t.memory > t.compute)
      TryPim(op, eta_c, eta_m, mem_raw, &t);
    t.overhead =
        per_kernel_ * op.kernels_per_layer * static_cast<double>(op.layers);
    if (op.link_bytes > 0 && link_bw_ > 0) t.link = op.link_bytes / link_bw_;
    const double local = std::max(t.compute, t.memory);
    t.seconds = (t.link > local ? t.link : local) + t.overhead;
    t.bound = DominantBound(t.compute, t.memory, t.link, t.overhead);
    return t;
  }

 private:
  static double Sum(const std::array<double, kOperandClassCount>& a) {
    return a[0] + a[1] + a[2];
  }

  // In-memory execution: the dominant operand's share in the PIM tier moves
  // at the internal bandwidth; everything else as before.
  void TryPim(const OpCost& op, double eta_c, double eta_m, double mem_raw,
              Timing* t) const {
    const int d = static_cast<int>(op.dominant);
    const int tier = p_.pim_tier[d];
    if (tier < 0) return;
    const MemoryTier& mt = s_.hardware.tiers[tier];
    const NearMemoryCompute& nmc = *mt.near_memory_compute;
    const std::optional<MathType> math =
        ExecutedMathType(nmc.peak_ops_per_second, op.math);
    if (!math.has_value()) return;
    const double peak = *nmc.peak_ops_per_second[static_cast<int>(*math)];
    const double share = op.read[d] * p_.frac[d][tier];
    const double compute = op.flops / (peak * eta_c);
    const double memory =
        (mem_raw - share / mt.read_bandwidth_bytes_per_second +
         share / nmc.internal_bandwidth_bytes_per_second) /
        eta_m;
    if (std::max(compute, memory) < std::max(t->compute, t->memory)) {
      t->compute = compute;
      t->memory = memory;
      t->tier = tier;
      t->math = *math;
    }
  }

  const Scenario& s_;
  const PlacementInfo& p_;
  std::array<double, kOpClassCount> eta_c_{1, 1, 1, 1};
  std::array<double, kOpClassCount> eta_m_{1, 1, 1, 1};
  bool use_hook_ = false;
  double per_kernel_ = 0;
  double per_step_ = 0;
  double per_request_ = 0;
  double link_bw_ = 0;
};

// Bytes one op moves over all tiers: the sum MakeOpResult reports and
// TimeStep totals, in one place so both agree to the bit.
double OpBytes(const OpCost& op, const PlacementInfo& p, int tiers,
               double scale) {
  double bytes = 0;
  for (int c = 0; c < kOperandClassCount; ++c) {
    for (int tier = 0; tier < tiers; ++tier) {
      const double f = p.frac[c][tier];
      if (f == 0) continue;
      bytes += op.read[c] * f * scale + op.write[c] * f * scale;
    }
  }
  return bytes;
}

// Fills the result fields of one op from its cost, timing and placement;
// `scale` multiplies the amounts (identical decode steps).
OpResult MakeOpResult(const OpCost& op, const Timing& t, const PlacementInfo& p,
                      int tiers, double scale) {
  OpResult r;
  r.kind = op.kind;
  r.op_class = op.op_class;
  r.layer_group = op.layer_group;
  r.layers = op.layers;
  r.math = t.math;
  r.flops = op.flops * scale;
  for (int c = 0; c < kOperandClassCount; ++c) {
    for (int tier = 0; tier < tiers; ++tier) {
      const double f = p.frac[c][tier];
      if (f == 0) continue;
      r.traffic[c][tier].read = op.read[c] * f * scale;
      r.traffic[c][tier].write = op.write[c] * f * scale;
    }
  }
  r.bytes = OpBytes(op, p, tiers, scale);
  r.intensity = r.bytes > 0 ? r.flops / r.bytes : 0;
  r.compute_seconds = t.compute * scale;
  r.memory_seconds = t.memory * scale;
  r.interconnect_seconds = t.link * scale;
  r.overhead_seconds = t.overhead * scale;
  r.seconds = t.seconds * scale;
  r.bound = t.bound;
  r.executed_in_tier = t.tier;
  r.attained_flops_per_second = r.seconds > 0 ? r.flops / r.seconds : 0;
  return r;
}

void AddTotals(const OpResult& r, StepTotals* tot) {
  tot->flops += r.flops;
  tot->bytes += r.bytes;
  tot->compute_seconds += r.compute_seconds;
  tot->memory_seconds += r.memory_seconds;
  tot->interconnect_seconds += r.interconnect_seconds;
  tot->seconds += r.seconds;
}

// Decode: a KV-dependent op at step context L is base + x * slope with x
// the keys read (the window caps it).
double KeysRead(const OpCost& op, int64_t kv_length) {
  return static_cast<double>(op.window > 0 ? std::min(kv_length, op.window)
                                           : kv_length);
}

void OpAt(const OpCost& base, const OpCost& slope, double x, OpCost* out) {
  out->flops = base.flops + x * slope.flops;
  for (int c = 0; c < kOperandClassCount; ++c) {
    out->read[c] = base.read[c] + x * slope.read[c];
    out->write[c] = base.write[c] + x * slope.write[c];
  }
}

// The decode graph of `batch` sequences as `base` (no keys read) and, for
// the KV-dependent ops, `slope` (per key read); other ops' slope entries are
// unused. Every decode step of Analyze and StepEvaluator::Decode come from
// here.
void BuildDecode(const GraphContext& g, int64_t batch, int64_t kv_length,
                 OpList* base, OpList* slope) {
  internal::BuildStepOps(g, StepShape{batch, 1, kv_length, 0}, base);
  internal::BuildStepOps(g, StepShape{batch, 1, kv_length, 1}, slope);
  for (size_t i = 0; i < base->size(); ++i) {
    if ((*base)[i].kv_dependent) {
      OpCost& s = (*slope)[i];
      OpAt(s, (*base)[i], -1, &s);  // (x = 1) - (x = 0)
    }
  }
}

// Times one step's ops in order and returns its totals; with `slope`, the
// KV-dependent ops are taken at `kv_length`. With `ops_out`, also the
// per-op results (whose sums are the totals). `fixed` is the step's fixed
// cost (per step, plus per request for a prefill); `overhead` (optional)
// gets the kernel plus fixed overheads.
StepTotals TimeStep(const OpList& ops, const OpList* slope, int64_t kv_length,
                    double fixed, const Evaluator& ev, const PlacementInfo& p,
                    int tiers, std::vector<OpResult>* ops_out,
                    double* overhead) {
  StepTotals tot;
  double over = fixed;
  OpCost at;
  for (size_t i = 0; i < ops.size(); ++i) {
    const OpCost* op = &ops[i];
    if (slope != nullptr && op->kv_dependent) {
      at = *op;
      OpAt(*op, (*slope)[i], KeysRead(*op, kv_length), &at);
      op = &at;
    }
    const Timing t = ev.Time(*op);
    if (ops_out != nullptr)
      ops_out->push_back(MakeOpResult(*op, t, p, tiers, 1));
    // What AddTotals(MakeOpResult(op, t, p, tiers, 1)) adds.
    tot.flops += op->flops;
    tot.bytes += OpBytes(*op, p, tiers, 1);
    tot.compute_seconds += t.compute;
    tot.memory_seconds += t.memory;
    tot.interconnect_seconds += t.link;
    tot.seconds += t.seconds;
    over += t.overhead;
  }
  tot.seconds += fixed;
  if (overhead != nullptr) *overhead = over;
  return tot;
}

StepResult EvaluateStep(Phase phase, int64_t tokens, int64_t kv_length,
                        const OpList& ops, const OpList* slope,
                        const Evaluator& ev, const PlacementInfo& p,
                        int tiers) {
  StepResult s;
  s.phase = phase;
  s.steps = 1;
  s.tokens = tokens;
  s.kv_length = kv_length;
  s.ops.reserve(ops.size());
  const double fixed =
      phase == Phase::kPrefill ? ev.prefill_fixed() : ev.per_step();
  s.totals =
      TimeStep(ops, slope, kv_length, fixed, ev, p, tiers, &s.ops, nullptr);
  return s;
}

// Running sums of one KV-dependent op over the decode steps.
struct OpAccumulator {
  double flops = 0;
  std::array<double, kOperandClassCount> read{}, write{};
  double compute = 0, memory = 0, overhead = 0, seconds = 0;
  Timing last;
};

double Metric(const AnalysisResult& r, bool decode) {
  return decode ? r.decode_tokens_per_second_total
                : r.prefill_tokens_per_second;
}

void ComputeBottleneck(AnalysisResult* r, bool decode) {
  const StepResult& step = decode ? r->decode : r->prefill;
  Bottleneck& b = r->bottleneck;
  b.phase = step.phase;
  const OpResult* worst = nullptr;
  for (const OpResult& op : step.ops) {
    if (worst == nullptr || op.seconds > worst->seconds) worst = &op;
  }
  if (worst == nullptr) return;
  b.op = worst->kind;
  b.layer_group = worst->layer_group;
  b.bound = worst->bound;
  b.share_of_phase_time =
      step.totals.seconds > 0 ? worst->seconds / step.totals.seconds : 0;
  b.intensity = worst->intensity;
  // Where this op's two roofs meet: attained compute roof over attained
  // memory roof = intensity * memory_s / compute_s.
  b.ridge_point =
      worst->compute_seconds > 0 && worst->bytes > 0
          ? worst->intensity * worst->memory_seconds / worst->compute_seconds
          : r->ridge_point;
  const std::string group =
      worst->layer_group.empty()
          ? std::string()
          : absl::StrCat(" (", Av(worst->layer_group), " layers)");
  std::string where;
  switch (b.bound) {
    case Bound::kMemory:
      if (!r->compute_roof_known && worst->compute_seconds == 0) {
        // No peak is published: neither a ridge point nor a compute bound
        // can be stated, only that memory alone takes this long.
        b.ridge_point = 0;
        where = absl::StrFormat(
            "memory time at %.3g FLOP/byte; the compute roof is unknown (no "
            "published peak), so this is a lower bound on its time",
            b.intensity);
        break;
      }
      where = absl::StrFormat(
          "memory-bound at %.3g FLOP/byte, %.3gx below its ridge point of "
          "%.3g FLOP/byte",
          b.intensity, b.intensity > 0 ? b.ridge_point / b.intensity : 0,
          b.ridge_point);
      break;
    case Bound::kCompute:
      where = absl::StrFormat(
          "compute-bound at %.3g FLOP/byte, above its ridge point of %.3g "
          "FLOP/byte",
          b.intensity, b.ridge_point);
      break;
    case Bound::kOverhead:
      where = absl::StrFormat(
          "overhead-bound: %.3g s of kernel overhead exceed both roofs",
          worst->overhead_seconds);
      break;
    case Bound::kInterconnect:
      where = absl::StrFormat(
          "interconnect-bound: %.3g s of all-reduce traffic over the "
          "device-to-device link",
          worst->interconnect_seconds);
      break;
  }
  b.text = absl::StrFormat(
      "%s is limited by %s%s: %.1f%% of %s time (%.3g s), %s%s.",
      Av(PhaseName(b.phase)), Av(OpKindName(b.op)), group,
      100 * b.share_of_phase_time, Av(PhaseName(b.phase)), worst->seconds,
      where,
      worst->executed_in_tier >= 0
          ? absl::StrCat(", run in memory tier ", worst->executed_in_tier)
          : std::string());
  // The calibration's fixed costs (per step, per request) belong to no op;
  // say so when they outweigh the worst op.
  double op_seconds = 0;
  for (const OpResult& op : step.ops) op_seconds += op.seconds;
  const double fixed = step.totals.seconds - op_seconds;
  if (fixed > worst->seconds) {
    absl::StrAppend(
        &b.text,
        absl::StrFormat(" Fixed overhead (per step%s) takes more: %.1f%% "
                        "(%.3g s).",
                        b.phase == Phase::kPrefill ? " and per request" : "",
                        100 * fixed / step.totals.seconds, fixed));
  }
}

void ComputeEconomy(const Scenario& s, AnalysisResult* r) {
  const Hardware& hw = s.hardware;
  Economy& e = r->economy;
  // Per-op-and-byte needs an energy for every math type and tier used.
  auto step_energy = [&](const StepResult& step) -> std::optional<double> {
    double j = 0;
    for (const OpResult& op : step.ops) {
      if (op.flops > 0) {
        std::optional<double> per_op =
            hw.energy_joules_per_op[static_cast<int>(op.math)];
        if (op.executed_in_tier >= 0) {
          per_op = hw.tiers[op.executed_in_tier]
                       .near_memory_compute->energy_joules_per_op;
        }
        if (!per_op.has_value()) return std::nullopt;
        j += op.flops * *per_op;
      }
      for (int c = 0; c < kOperandClassCount; ++c) {
        for (size_t t = 0; t < hw.tiers.size(); ++t) {
          const Traffic& tr = op.traffic[c][t];
          if (tr.read + tr.write == 0) continue;
          if (!hw.tiers[t].energy_joules_per_byte.has_value()) {
            return std::nullopt;
          }
          j += (tr.read + tr.write) * *hw.tiers[t].energy_joules_per_byte;
        }
      }
    }
    return j + hw.idle_watts.value_or(0) * step.totals.seconds;
  };
  std::optional<double> pj = step_energy(r->prefill);
  std::optional<double> dj = step_energy(r->decode);
  if (pj.has_value() && dj.has_value()) {
    e.energy_method = EnergyMethod::kPerOpAndByte;
  } else if (hw.tdp_watts.has_value()) {
    e.energy_method = EnergyMethod::kBoardPower;
    pj = *hw.tdp_watts * r->prefill.totals.seconds;
    dj = *hw.tdp_watts * r->decode.totals.seconds;
  } else {
    e.energy_method = EnergyMethod::kUnknown;
    pj.reset();
    dj.reset();
  }
  // Tensor parallelism: every device does its share for the same time.
  const double devices = static_cast<double>(s.parallelism.tensor_parallel);
  if (pj.has_value()) *pj *= devices;
  if (dj.has_value()) *dj *= devices;
  e.prefill_joules = pj;
  e.decode_joules = dj;
  const double out_tokens = static_cast<double>(s.workload.batch) *
                            static_cast<double>(s.workload.generated_tokens);
  if (out_tokens <= 0) {
    e.note = "no output tokens: per-token figures are undefined";
    return;
  }
  const Economics& x = s.economics;
  // Seconds of device life that one served second costs.
  const double life = x.amortization_years * kSecondsPerYear * x.utilization;
  std::optional<double> joules;
  if (pj.has_value()) joules = *pj + *dj;
  if (joules.has_value()) e.joules_per_output_token = *joules / out_tokens;
  absl::InlinedVector<std::string_view, 4> notes;
  if (joules.has_value() || hw.price_usd.has_value()) {
    double usd = 0;
    if (hw.price_usd.has_value()) {
      usd += *hw.price_usd * devices * r->e2e_seconds / life;
    } else {
      notes.push_back("price unknown: $/Mtoken counts energy only");
    }
    if (joules.has_value()) {
      usd += *joules / kJoulesPerKwh * x.pue * x.electricity_usd_per_kwh;
    } else {
      notes.push_back("energy unknown: $/Mtoken counts purchase price only");
    }
    e.usd_per_million_output_tokens = usd / out_tokens * 1e6;
  }
  if (joules.has_value()) {
    double g = *joules / kJoulesPerKwh * x.pue * x.grid_g_co2e_per_kwh;
    if (hw.embodied_kg_co2e.has_value()) {
      g += *hw.embodied_kg_co2e * devices * 1000 * r->e2e_seconds / life;
    } else {
      notes.push_back("embodied carbon unknown: operational carbon only");
    }
    e.g_co2e_per_million_output_tokens = g / out_tokens * 1e6;
  }
  if (e.energy_method == EnergyMethod::kBoardPower) {
    notes.push_back("energy from board power x time: an upper bound");
  }
  for (std::string_view n : notes) {
    if (!e.note.empty()) absl::StrAppend(&e.note, "; ");
    absl::StrAppend(&e.note, Av(n));
  }
}

absl::StatusOr<AnalysisResult> AnalyzeValidated(const Scenario& s, bool full);

void ComputeSuggestions(const Scenario& s, AnalysisResult* r) {
  const bool decode = s.workload.generated_tokens > 1;
  const std::string metric =
      decode ? "decode_tokens_per_second" : "prefill_tokens_per_second";
  const double before = Metric(*r, decode);
  // Returns true when the change was kept.
  auto attempt = [&](const std::string& kind, const std::string& change,
                     Scenario mod) -> bool {
    mod.options.suggestions = false;
    absl::StatusOr<AnalysisResult> alt = AnalyzeValidated(mod, false);
    if (!alt.ok() || !alt->memory.fits) return false;
    const double after = Metric(*alt, decode);
    const bool newly_fits = !r->memory.fits;
    if (!newly_fits && !(after > before * 1.01)) return false;
    Suggestion sg;
    sg.kind = kind;
    sg.change = change;
    sg.metric = metric;
    sg.before = before;
    sg.after = after;
    sg.gain = before > 0 ? after / before : 0;
    sg.text = absl::StrFormat(
        "%s: %.2fx %s (%.4g -> %.4g tokens/s)%s", change, sg.gain,
        decode ? "decode tok/s" : "prefill tok/s", before, after,
        newly_fits ? "; and the model then fits" : "");
    if (kind == "batch") {
      absl::StrAppend(&sg.text, absl::StrFormat("; TPOT %.3g ms -> %.3g ms",
                                                r->tpot_mean_seconds * 1e3,
                                                alt->tpot_mean_seconds * 1e3));
    }
    r->suggestions.push_back(std::move(sg));
    return true;
  };

  const Precision& pr = s.precision;
  if (pr.weights.bits > 4.5 + 1e-9) {
    absl::StatusOr<NumberFormat> int4 = ParseNumberFormat("int4-g128");
    if (int4.ok()) {
      Scenario mod = s;
      mod.precision.weights = *int4;
      attempt("weights-format", "weights int4-g128", std::move(mod));
    }
  }
  if (pr.weights.bits > 8 + 1e-9 &&
      s.hardware.peak_ops_per_second[static_cast<int>(MathType::kFp8)]
          .has_value()) {
    absl::StatusOr<NumberFormat> fp8 = ParseNumberFormat("fp8");
    if (fp8.ok()) {
      Scenario mod = s;
      mod.precision.weights = *fp8;
      mod.precision.activations = *fp8;
      attempt("weights-format", "weights and activations fp8", std::move(mod));
    }
  }
  if (pr.kv_cache.bits > 8 + 1e-9) {
    absl::StatusOr<NumberFormat> fp8 = ParseNumberFormat("fp8");
    if (fp8.ok()) {
      Scenario mod = s;
      mod.precision.kv_cache = *fp8;
      attempt("kv-format", "kv cache fp8", std::move(mod));
    }
  }
  // Batching only pays until the compute roof; without one its gain
  // cannot be computed.
  if (decode && r->compute_roof_known &&
      r->bottleneck.bound == Bound::kMemory) {
    // Decode intensity of the weight matmuls grows ~linearly with batch.
    double flops = 0, bytes = 0;
    for (const OpResult& op : r->decode_first_step.ops) {
      if (op.op_class == OpClass::kGemm || op.op_class == OpClass::kGemv) {
        flops += op.flops;
        bytes += op.bytes;
      }
    }
    const int64_t b = s.workload.batch;
    std::vector<std::pair<int64_t, std::string>> tries;
    if (bytes > 0 && flops > 0) {
      const double target = std::ceil(b * r->ridge_point / (flops / bytes));
      const int64_t t = static_cast<int64_t>(
          std::clamp(target, static_cast<double>(b + 1), 65536.0));
      tries.emplace_back(
          t, absl::StrFormat("batch %d (reaches the ridge point)", t));
    }
    if (4 * b <= 65536)
      tries.emplace_back(4 * b, absl::StrFormat("batch %d", 4 * b));
    for (const auto& [batch, change] : tries) {
      if (batch <= b) continue;
      Scenario mod = s;
      mod.workload.batch = batch;
      if (attempt("batch", change, std::move(mod))) break;
    }
  }
  // Pins that slow things down: weights pinned to a slow tier while a
  // faster one has room, or KV / activations pinned where they push the
  // weights out into a slower tier. Unpinning lets placement move them.
  for (int c : {kWeights, kKv, kAct}) {
    const auto& pin = s.pins.tier[c];
    if (!pin.has_value()) continue;
    Scenario mod = s;
    mod.pins.tier[c].reset();
    attempt("tier",
            absl::StrCat(Av(OperandClassName(static_cast<OperandClass>(c))),
                         " unpinned from ", s.hardware.tiers[*pin].name,
                         " (weights to the fastest tier with room)"),
            std::move(mod));
  }
  std::stable_sort(
      r->suggestions.begin(), r->suggestions.end(),
      [](const Suggestion& a, const Suggestion& b) { return a.gain > b.gain; });
}

// What does not depend on the step: graph context, the workload's prefill
// and decode graphs, footprint and placement. Analyze and StepEvaluator
// both start here.
struct Prepared {
  // The model one device holds (its tensor-parallel shard); g.model points
  // here, so a Prepared is built in place and never copied.
  ModelConfig shard;
  GraphContext g;
  OpList prefill;
  OpList dec0;   // decode at batch, no keys read
  OpList slope;  // per key read (KV-dependent ops)
  PlacementInfo place;
  MemoryFootprint memory;
};

absl::Status Prepare(const Scenario& s, Prepared* p) {
  const int64_t tp = s.parallelism.tensor_parallel;
  if (tp > 1) p->shard = internal::TensorParallelShard(s.model, tp);
  ASSIGN_OR_RETURN(p->g,
                   internal::MakeGraphContext(s, tp > 1 ? p->shard : s.model));
  const GraphContext& g = p->g;
  const int64_t batch = s.workload.batch;
  const int64_t prompt = s.workload.prompt_tokens;
  const int64_t decode_steps =
      std::max<int64_t>(s.workload.generated_tokens - 1, 0);

  // Graphs: the prefill step, and decode as base + per-key slope.
  internal::BuildStepOps(g, StepShape{batch, prompt, prompt, -1}, &p->prefill);
  BuildDecode(g, batch, prompt + 1, &p->dec0, &p->slope);

  // Footprint: weights, KV at the longest context, peak activations (the
  // largest single op's inputs and outputs plus the residual stream).
  std::array<double, kOperandClassCount> need{};
  need[kWeights] = CountParameters(*g.model).total * g.weight_bytes;
  need[kKv] = static_cast<double>(batch) *
              internal::KvBytesPerSequence(
                  g, static_cast<double>(prompt + decode_steps));
  auto peak_acts = [&](const OpList& ops, double tokens) {
    double peak = 0;
    for (const OpCost& op : ops) {
      peak = std::max(peak, (op.read[kAct] + op.write[kAct]) /
                                static_cast<double>(op.layers));
    }
    return peak + tokens * s.model.hidden_size * g.act_bytes;
  };
  need[kAct] = peak_acts(p->prefill, static_cast<double>(batch * prompt));
  if (decode_steps > 0) {
    // Decode activations at the longest context (unfused scores grow with
    // it): base + x * slope at the last step.
    OpList last = p->dec0;
    for (size_t i = 0; i < last.size(); ++i) {
      if (!last[i].kv_dependent) continue;
      OpAt(p->dec0[i], p->slope[i], KeysRead(p->dec0[i], prompt + decode_steps),
           &last[i]);
    }
    need[kAct] =
        std::max(need[kAct], peak_acts(last, static_cast<double>(batch)));
  }
  p->memory = Place(s.hardware, s.pins, need, &p->place);
  return absl::OkStatus();
}

// `full`: everything; otherwise only what a suggestion compares (fit,
// TTFT, TPOT and throughput): no per-op results, first/last steps,
// bottleneck, economy or suggestions.
absl::StatusOr<AnalysisResult> AnalyzeValidated(const Scenario& s, bool full) {
  Prepared prep;
  RETURN_IF_ERROR(Prepare(s, &prep));
  const GraphContext& g = prep.g;
  const PlacementInfo& place = prep.place;
  const OpList& dec0 = prep.dec0;
  const OpList& slope = prep.slope;
  const Hardware& hw = s.hardware;
  const int tiers = static_cast<int>(hw.tiers.size());
  const int64_t batch = s.workload.batch;
  const int64_t prompt = s.workload.prompt_tokens;
  const int64_t generated = s.workload.generated_tokens;
  const int64_t decode_steps = std::max<int64_t>(generated - 1, 0);

  AnalysisResult r;
  r.model_id = s.model.id;
  r.hardware_id = hw.id;
  r.matmul_math = g.matmul_math;
  r.memory = std::move(prep.memory);
  if (s.parallelism.tensor_parallel > 1 &&
      !hw.interconnect_bytes_per_second.has_value()) {
    r.warnings.push_back(
        "tensor parallelism on hardware without a published interconnect "
        "bandwidth: all-reduce traffic is not timed, so the result is an "
        "upper bound on speed that ignores communication");
  }
  if (s.model.max_context > 0 && prompt + generated > s.model.max_context) {
    r.warnings.push_back(absl::StrFormat(
        "prompt + generated tokens (%d) exceed the model's max_context (%d, "
        "max_position_embeddings): the timing is computed, but the model "
        "may not support this length without RoPE scaling",
        prompt + generated, s.model.max_context));
  }
  // MakeGraphContext only lets a matmul type without an executing peak
  // through when the hardware has no peak at all.
  r.compute_roof_known =
      ExecutedMathType(hw.peak_ops_per_second, g.matmul_math).has_value();
  const double matmul_peak =
      hw.peak_ops_per_second[static_cast<int>(g.matmul_math)].value_or(0);
  r.ridge_point =
      matmul_peak / hw.tiers[place.weight_tier].read_bandwidth_bytes_per_second;

  const Evaluator ev(s, place);
  r.pure_roofline = ev.pure();

  // Prefill: one step over batch x prompt tokens.
  if (full) {
    r.prefill = EvaluateStep(Phase::kPrefill, batch * prompt, prompt,
                             prep.prefill, nullptr, ev, place, tiers);
  } else {
    r.prefill.phase = Phase::kPrefill;
    r.prefill.tokens = batch * prompt;
    r.prefill.kv_length = prompt;
    r.prefill.totals = TimeStep(prep.prefill, nullptr, prompt,
                                ev.prefill_fixed(), ev, place, tiers, nullptr,
                                nullptr);
  }
  r.ttft_seconds = r.prefill.totals.seconds;
  r.prefill_tokens_per_second =
      r.ttft_seconds > 0 ? static_cast<double>(batch * prompt) / r.ttft_seconds
                         : 0;

  // Decode: ops that do not depend on the KV length are timed once; the
  // KV-dependent ones at every step's own context length.
  r.decode.phase = r.decode_first_step.phase = r.decode_last_step.phase =
      Phase::kDecode;
  r.decode.tokens = r.decode_first_step.tokens = r.decode_last_step.tokens =
      batch;
  r.decode.steps = decode_steps;
  absl::InlinedVector<int, internal::kInlineOps> linear;  // op indices
  absl::InlinedVector<int, internal::kInlineOps> linear_index(dec0.size(), -1);
  absl::InlinedVector<Timing, internal::kInlineOps> const_timing(dec0.size());
  double const_seconds = ev.per_step();
  for (size_t i = 0; i < dec0.size(); ++i) {
    if (dec0[i].kv_dependent) {
      linear_index[i] = static_cast<int>(linear.size());
      linear.push_back(static_cast<int>(i));
    } else {
      const_timing[i] = ev.Time(dec0[i]);
      const_seconds += const_timing[i].seconds;
    }
  }
  if (decode_steps > 0) {
    absl::InlinedVector<OpAccumulator, internal::kInlineOps> acc(linear.size());
    OpList scratch;
    for (int i : linear) scratch.push_back(dec0[i]);
    // Raw pointers: the inline/heap branch of InlinedVector's operator[]
    // stays out of the per-step loop.
    const OpCost* base_ops = dec0.data();
    const OpCost* slope_ops = slope.data();
    const int* lin = linear.data();
    OpCost* step_ops = scratch.data();
    OpAccumulator* sums = acc.data();
    const size_t n_linear = linear.size();
    double total = 0;
    for (int64_t i = 1; i <= decode_steps; ++i) {
      const int64_t kv = prompt + i;
      double step = const_seconds;
      for (size_t j = 0; j < n_linear; ++j) {
        OpCost& op = step_ops[j];
        OpAt(base_ops[lin[j]], slope_ops[lin[j]], KeysRead(op, kv), &op);
        const Timing t = ev.Time(op);
        OpAccumulator& a = sums[j];
        a.flops += op.flops;
        for (int c = 0; c < kOperandClassCount; ++c) {
          a.read[c] += op.read[c];
          a.write[c] += op.write[c];
        }
        a.compute += t.compute;
        a.memory += t.memory;
        a.overhead += t.overhead;
        a.seconds += t.seconds;
        a.last = t;
        step += t.seconds;
      }
      if (i == 1) r.tpot_first_seconds = step;
      if (i == decode_steps) r.tpot_last_seconds = step;
      total += step;
    }
    const double steps = static_cast<double>(decode_steps);
    r.decode.kv_length = prompt + decode_steps;
    if (full) {
      // Per-op sums over all steps.
      r.decode.ops.reserve(dec0.size());
      for (size_t i = 0; i < dec0.size(); ++i) {
        if (linear_index[i] < 0) {
          r.decode.ops.push_back(
              MakeOpResult(dec0[i], const_timing[i], place, tiers, steps));
        } else {
          const OpAccumulator& a = acc[linear_index[i]];
          OpCost sum = dec0[i];
          sum.flops = a.flops;
          sum.read = a.read;
          sum.write = a.write;
          Timing t = a.last;
          t.compute = a.compute;
          t.memory = a.memory;
          t.overhead = a.overhead;
          t.seconds = a.seconds;
          t.bound = DominantBound(t.compute, t.memory, 0, t.overhead);
          r.decode.ops.push_back(MakeOpResult(sum, t, place, tiers, 1));
        }
        AddTotals(r.decode.ops.back(), &r.decode.totals);
      }

      // The first and last steps in full (the same step when there is one).
      r.decode_first_step = EvaluateStep(Phase::kDecode, batch, prompt + 1,
                                         dec0, &slope, ev, place, tiers);
      r.decode_last_step =
          decode_steps == 1
              ? r.decode_first_step
              : EvaluateStep(Phase::kDecode, batch, prompt + decode_steps, dec0,
                             &slope, ev, place, tiers);
    }
    r.decode.totals.seconds = total;  // includes the per-step overheads
    r.tpot_mean_seconds = total / steps;
    r.decode_tokens_per_second_per_sequence = 1 / r.tpot_mean_seconds;
    r.decode_tokens_per_second_total =
        static_cast<double>(batch) / r.tpot_mean_seconds;
  }
  r.e2e_seconds = r.ttft_seconds + r.decode.totals.seconds;
  if (!full) return r;

  ComputeBottleneck(&r, decode_steps > 0);
  ComputeEconomy(s, &r);
  if (s.options.suggestions) ComputeSuggestions(s, &r);
  return r;
}

}  // namespace

absl::StatusOr<AnalysisResult> Analyze(const Scenario& scenario) {
  RETURN_IF_ERROR(ValidateScenario(scenario));
  return AnalyzeValidated(scenario, true);
}

// The scenario (owned: the graph context and evaluator point into it), what
// Prepare built from it, and the evaluator. Immutable once built.
struct StepEvaluator::Impl {
  explicit Impl(const Scenario& scenario) : s(scenario) {}
  Scenario s;
  Prepared prep;
  std::optional<Evaluator> ev;
  int tiers = 0;

  StepTiming Finish(Phase phase, int64_t batch, int64_t tokens, int64_t kv,
                    const OpList& ops, const OpList* slope) const {
    StepTiming st;
    st.phase = phase;
    st.batch = batch;
    st.tokens = tokens;
    st.kv_length = kv;
    // A scheduler's step: the per-request cost is the scheduler's to add
    // once per admitted request (chunked prefill would pay it per chunk).
    const StepTotals tot = TimeStep(ops, slope, kv, ev->per_step(), *ev,
                                    prep.place, tiers, nullptr,
                                    &st.overhead_seconds);
    st.flops = tot.flops;
    st.bytes = tot.bytes;
    st.compute_seconds = tot.compute_seconds;
    st.memory_seconds = tot.memory_seconds;
    st.interconnect_seconds = tot.interconnect_seconds;
    st.seconds = tot.seconds;
    st.bound = DominantBound(st.compute_seconds, st.memory_seconds,
                             st.interconnect_seconds, st.overhead_seconds);
    return st;
  }
};

absl::StatusOr<StepEvaluator> StepEvaluator::Create(const Scenario& scenario) {
  RETURN_IF_ERROR(ValidateScenario(scenario));
  auto impl = std::make_shared<Impl>(scenario);
  RETURN_IF_ERROR(Prepare(impl->s, &impl->prep));
  impl->ev.emplace(impl->s, impl->prep.place);
  impl->tiers = static_cast<int>(impl->s.hardware.tiers.size());
  return StepEvaluator(std::move(impl));
}

absl::StatusOr<StepTiming> StepEvaluator::Decode(int64_t batch,
                                                 int64_t kv_length) const {
  RETURN_IF_ERROR(internal::CheckIntRange("batch", batch, 1, 65536));
  RETURN_IF_ERROR(
      internal::CheckIntRange("kv_length", kv_length, 1, 10'000'000));
  OpList base, slope;
  BuildDecode(impl_->prep.g, batch, kv_length, &base, &slope);
  return impl_->Finish(Phase::kDecode, batch, batch, kv_length, base, &slope);
}

absl::StatusOr<StepTiming> StepEvaluator::Prefill(int64_t batch,
                                                  int64_t prompt_tokens) const {
  RETURN_IF_ERROR(internal::CheckIntRange("batch", batch, 1, 65536));
  RETURN_IF_ERROR(
      internal::CheckIntRange("prompt_tokens", prompt_tokens, 1, 10'000'000));
  OpList ops;
  internal::BuildStepOps(
      impl_->prep.g, StepShape{batch, prompt_tokens, prompt_tokens, -1}, &ops);
  return impl_->Finish(Phase::kPrefill, batch, batch * prompt_tokens,
                       prompt_tokens, ops, nullptr);
}

const MemoryFootprint& StepEvaluator::memory() const {
  return impl_->prep.memory;
}

}  // namespace ridgeline::engine
