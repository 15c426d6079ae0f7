// Roofline timing of ops and steps: an op takes
//   max(FLOPs / (peak x eta_c), sum over tiers of bytes / (bandwidth x eta_m),
//       link bytes / (link bandwidth x eta_link)) + kernel overheads,
// with near-memory execution where a PIM tier is faster, and a step is the
// sum of its ops plus its fixed costs. The one timing rule of the engine.
//
// A profile's compute etas can follow the part's power per unit of peak
// (Efficiency::compute_power_exponent) and be lower for matmuls that
// dequantise their weights (Efficiency::dequantized_compute_share), and its
// memory traffic can carry inline ECC's check bits (Efficiency::inline_ecc).
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
// time, so every time is the memory-roof time, still an upper bound on speed.
// Internal to the engine.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/base/attributes.h"
#include "operators.h"
#include "placement.h"
#include "ridgeline/engine/power_limit.h"
#include "ridgeline/engine/result.h"
#include "ridgeline/engine/scenario.h"
#include "ridgeline/engine/work.h"

namespace ridgeline::engine::internal {

struct EnergyTally;  // economy.h

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
      : Evaluator(s.hardware, s.efficiency, s.options, p) {
    if (!s.options.pure_roofline) {
      dequantized_share_ =
          s.efficiency.DequantizedComputeShare(s.precision.weights.name);
    }
  }
  // The same for `hw` in place of s.hardware (design points: the hardware
  // changes, the rest of the scenario does not). Keeps references.
  Evaluator(const Hardware& hw, const Efficiency& e,
            const AnalysisOptions& options, const PlacementInfo& p)
      : hw_(hw), p_(p), inv_read_(p.inv_read), inv_write_(p.inv_write) {
    if (options.pure_roofline) return;
    if (e.inline_ecc) ApplyInlineEcc();
    eta_c_ = e.compute;
    eta_m_ = e.memory;
    // A fitted kernel model is measured shape by shape: it wins over the
    // plugin's hook.
    if (e.kernel.present) kernel_ = e.kernel;
    use_hook_ = !kernel_.has_value() && UsesEfficiencyHook(hw, e, options);
    per_kernel_ = e.per_kernel_overhead_seconds;
    if (!e.profile_name.empty() && per_kernel_ == 0) {
      per_kernel_ = hw.kernel_launch_seconds;
    }
    per_step_ = e.per_step_overhead_seconds;
    per_request_ = e.per_request_overhead_seconds;
    link_eta_ = e.link;
    collective_call_ = e.collective_call_seconds;
    dequantized_share_ = e.dequantized_compute_share;
    if (e.compute_power_exponent > 0 && hw.tdp_watts.has_value()) {
      power_ = true;
      for (int m = 0; m < kMathTypeCount; ++m) {
        const std::optional<double> x =
            WattsPerPeakTflops(hw, static_cast<MathType>(m));
        power_scale_[m] =
            x ? PowerLimitedScale(*x, e.compute_power_exponent) : 1;
      }
    }
  }

  // A plugin hook makes the efficiency depend on each op's shape, so times
  // are not affine in the KV length (the closed-form decode sum needs it).
  bool uses_hook() const { return use_hook_; }

  double per_step() const { return per_step_; }
  // What the prefill of a request batch pays on top of its ops.
  double prefill_fixed() const { return per_step_ + per_request_; }
  bool pure() const {
    if (use_hook_ || kernel_.has_value() || per_kernel_ > 0 || per_step_ > 0 ||
        per_request_ > 0 || link_eta_ != 1 || collective_call_ > 0 || power_ ||
        dequantized_share_ != 1 || ecc_)
      return false;
    for (int i = 0; i < kOpClassCount; ++i) {
      if (eta_c_[i] != 1 || eta_m_[i] != 1) return false;
    }
    return true;
  }

  // The roofs of one op before the choice of where it runs: compute and
  // memory time on the compute unit, and (pim) in its PIM tier. With the
  // efficiency fixed (no hook) each is affine in the op's FLOPs and bytes.
  struct Lines {
    double compute = 0, memory = 0;
    bool pim = false;  // a PIM tier could run it
    double pim_compute = 0, pim_memory = 0;
    int pim_tier = -1;
    MathType pim_math = MathType::kBf16;
    double overhead = 0, link = 0;
  };
  // Always inlined: returned through memory, its two last fields (written
  // one by one) were read back as one 16-byte load by Choose, a store
  // forwarding stall that was a third of timing a step.
  ABSL_ATTRIBUTE_ALWAYS_INLINE Lines RoofLines(const OpCost& op) const {
    const int cls = static_cast<int>(op.op_class);
    double eta_c = eta_c_[cls], eta_m = eta_m_[cls];
    if (power_) {
      eta_c = std::min(1.0, eta_c * power_scale_[static_cast<int>(op.math)]);
    }
    if (op.dequantized) eta_c *= dequantized_share_;
    double mem_raw = 0;
    for (int c = 0; c < kOperandClassCount; ++c) {
      mem_raw += op.read[c] * inv_read_[c] + op.write[c] * inv_write_[c];
    }
    if (use_hook_) {
      const double bytes = Sum(op.read) + Sum(op.write);
      std::optional<OpEfficiency> h = hw_.efficiency_hook(
          OpShape{op.op_class, op.math, op.rows, op.flops, bytes});
      // A hook answer outside (0, 1] is ignored (engine defaults apply).
      if (h.has_value() && h->compute > 0 && h->compute <= 1 && h->memory > 0 &&
          h->memory <= 1) {
        eta_c = h->compute;
        eta_m = h->memory;
      }
    }
    double per_kernel = per_kernel_;
    if (kernel_.has_value()) KernelModelEtas(op, &eta_c, &eta_m, &per_kernel);
    Lines l;
    const double peak =
        hw_.peak_ops_per_second[static_cast<int>(op.math)].value_or(0);
    l.compute = peak > 0 ? op.flops / (peak * eta_c) : 0;
    // A divide per op is a step's critical path; at eta 1 (the bound) it
    // is skipped, exactly.
    l.memory = eta_m == 1 ? mem_raw : mem_raw / eta_m;
    if (op.pim_candidate) PimLines(op, eta_c, eta_m, mem_raw, &l);
    l.overhead =
        per_kernel * op.kernels_per_layer * static_cast<double>(op.layers);
    // Collectives on the link level their group crosses (collectives.h).
    // An unpublished link costs no time, so the result stays an upper
    // bound on speed (and the analysis says so in a warning).
    if (op.collective != Collective::kNone) {
      l.link = op.calls * CollectiveSeconds(op.collective, op.call_bytes,
                                            op.group, LinkFor(hw_, op.group)) /
               link_eta_;
      l.overhead += op.calls * collective_call_;
    }
    return l;
  }

  // The choice: in memory when faster there, memory- or compute-bound alike
  // (a PIM unit may out-compute the host for the ops whose operands it
  // holds); then max of the roofs plus overheads. The choice changes only
  // where two of the lines cross, which the closed-form decode sum uses.
  static Timing Choose(const Lines& l, MathType math) {
    Timing t;
    t.math = math;
    t.compute = l.compute;
    t.memory = l.memory;
    if (l.pim &&
        std::max(l.pim_compute, l.pim_memory) < std::max(t.compute, t.memory)) {
      t.compute = l.pim_compute;
      t.memory = l.pim_memory;
      t.tier = l.pim_tier;
      t.math = l.pim_math;
    }
    t.overhead = l.overhead;
    t.link = l.link;
    const double local = std::max(t.compute, t.memory);
    t.seconds = (t.link > local ? t.link : local) + t.overhead;
    t.bound = DominantBound(t.compute, t.memory, t.link, t.overhead);
    return t;
  }

  Timing Time(const OpCost& op) const { return Choose(RoofLines(op), op.math); }

 private:
  static double Sum(const std::array<double, kOperandClassCount>& a) {
    return a[0] + a[1] + a[2];
  }

  // The kernel model's efficiency of the op's class and GEMM regime (by its
  // rows) and its per-call cost. Tiles, waves and split-KV need shapes the
  // graph does not keep per op (N, KV heads): the graph takes the regime
  // efficiencies only, and stays affine in the KV length.
  void KernelModelEtas(const OpCost& op, double* eta_c, double* eta_m,
                       double* per_kernel) const {
    const KernelModel& km = *kernel_;
    switch (op.op_class) {
      case OpClass::kGemm:
      case OpClass::kGemv: {
        const bool fp8 = op.math == MathType::kFp8;
        const GemmEfficiency& g =
            fp8 && km.gemm_fp8_fitted ? km.gemm_fp8 : km.gemm;
        const int r = static_cast<int>(GemmRegimeOf(op.rows));
        *eta_c = g.compute[r];
        *eta_m = g.memory[r];
        *per_kernel =
            km.per_call_seconds[static_cast<int>(KernelClass::kGemm)] +
            (fp8 ? km.fp8_quantization_seconds : 0);
        break;
      }
      case OpClass::kAttention:
        *eta_c = km.attention_compute;
        *eta_m = km.attention_memory;
        *per_kernel =
            km.per_call_seconds[static_cast<int>(KernelClass::kAttention)];
        break;
      case OpClass::kElementwise:
        *eta_m = km.elementwise_memory;
        *per_kernel = km.per_call_seconds[static_cast<int>(
            op.collective != Collective::kNone ? KernelClass::kCollective
                                               : KernelClass::kElementwise)];
        break;
    }
  }

  // Inline ECC: a tier whose part ships with it on moves 1 / (1 - share)
  // raw bytes per byte of data, reads and writes alike.
  void ApplyInlineEcc() {
    for (size_t t = 0; t < hw_.tiers.size() && t < ecc_scale_.size(); ++t) {
      const double share = hw_.tiers[t].inline_ecc_share;
      if (share <= 0) continue;
      ecc_scale_[t] = 1 / (1 - share);
      ecc_ = true;
    }
    if (ecc_) {
      SetInverseBandwidths(hw_, ecc_scale_, p_, &inv_read_, &inv_write_);
    }
  }

  // In-memory execution: the dominant operand's share in the PIM tier moves
  // at the internal bandwidth; everything else as before.
  void PimLines(const OpCost& op, double eta_c, double eta_m, double mem_raw,
                Lines* l) const {
    const int d = static_cast<int>(op.dominant);
    const int tier = p_.pim_tier[d];
    if (tier < 0) return;
    const MemoryTier& mt = hw_.tiers[tier];
    const NearMemoryCompute& nmc = *mt.near_memory_compute;
    const std::optional<MathType> math =
        ExecutedMathType(nmc.peak_ops_per_second, op.math);
    if (!math.has_value()) return;
    const double peak = *nmc.peak_ops_per_second[static_cast<int>(*math)];
    const double share = op.read[d] * p_.frac[d][tier];
    l->pim = true;
    l->pim_tier = tier;
    l->pim_math = *math;
    l->pim_compute = op.flops / (peak * eta_c);
    l->pim_memory = (mem_raw -
                     share * ecc_scale_[tier] / mt.read_bandwidth_bytes_per_second +
                     share / nmc.internal_bandwidth_bytes_per_second) /
                    eta_m;
  }

  const Hardware& hw_;
  const PlacementInfo& p_;
  // p_'s bandwidth-weighted inverses, with inline ECC's check bits where
  // they apply (ApplyInlineEcc).
  std::array<double, kOperandClassCount> inv_read_, inv_write_;
  TierScale ecc_scale_ = kUnscaled;
  bool ecc_ = false;
  std::array<double, kOpClassCount> eta_c_{1, 1, 1, 1};
  std::array<double, kOpClassCount> eta_m_{1, 1, 1, 1};
  bool use_hook_ = false;
  std::optional<KernelModel> kernel_;  // the scenario's, when fitted
  double per_kernel_ = 0;
  double per_step_ = 0;
  double per_request_ = 0;
  double link_eta_ = 1;  // share of the link bandwidth collectives reach
  double collective_call_ = 0;  // seconds per collective call
  // Efficiency::compute_power_exponent: PowerLimitedScale per math type.
  bool power_ = false;
  std::array<double, kMathTypeCount> power_scale_{};
  double dequantized_share_ = 1;  // Efficiency::dequantized_compute_share
};

// Bytes one op moves over all tiers: the sum MakeOpResult reports and
// TimeStep totals, in one place so both agree to the bit.
double OpBytes(const OpCost& op, const PlacementInfo& p, int tiers,
               double scale);

// Fills the result fields of one op from its cost, timing and placement;
// `scale` multiplies the amounts (identical decode steps).
OpResult MakeOpResult(const OpCost& op, const Timing& t, const PlacementInfo& p,
                      int tiers, double scale);

// What one op adds to its step's totals.
struct OpAmounts {
  double flops = 0, bytes = 0, compute = 0, memory = 0, link = 0, seconds = 0;
};
OpAmounts AmountsOf(const OpResult& r);
// The one place step totals are summed.
inline void AddTotals(const OpAmounts& a, StepTotals* tot) {
  tot->flops += a.flops;
  tot->bytes += a.bytes;
  tot->compute_seconds += a.compute;
  tot->memory_seconds += a.memory;
  tot->interconnect_seconds += a.link;
  tot->seconds += a.seconds;
}

// Times one step's ops in order and returns its totals; with `slope`, the
// KV-dependent ops are taken at `kv_length`. With `ops_out`, also the
// per-op results (whose sums are the totals). `fixed` is the step's fixed
// cost (per step, plus per request for a prefill); `overhead` (optional)
// gets the kernel plus fixed overheads; `energy` (optional) the step's
// energy tally (economy.h).
StepTotals TimeStep(const OpList& ops, const OpList* slope, int64_t kv_length,
                    double fixed, const Evaluator& ev, const PlacementInfo& p,
                    int tiers, std::vector<OpResult>* ops_out,
                    double* overhead, EnergyTally* energy = nullptr);

// One step in full (per-op results and totals).
StepResult EvaluateStep(Phase phase, int64_t tokens, int64_t kv_length,
                        const OpList& ops, const OpList* slope,
                        const Evaluator& ev, const PlacementInfo& p, int tiers);

}  // namespace ridgeline::engine::internal
