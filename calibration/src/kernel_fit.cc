// Fitting the kernel model (engine/kernel_model.h) to measured kernel rows:
// per kernel class its per-call floor, per GEMM regime its efficiencies,
// and the shape constants (wave tail share, CTA bandwidth share) by a small
// grid search on the rows' median error. Decode attention's floor and
// memory efficiency are fitted together for relative error.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ridgeline/calibration/fit.h"

namespace ridgeline::calibration {
namespace {

enum class Group { kGemm16, kGemmFp8, kAttention, kElementwise };

struct Row {
  const PreparedRow* p;
  Group group;
  int regime;       // GemmRegime, GEMM rows only
  double measured;  // seconds
  double bound;     // pure roofline seconds
  // The operands sit in an L2 that publishes no bandwidth (the bound's
  // KernelCost::onchip_bandwidth_unknown).
  bool l2_resident;
};

Group GroupOf(const PreparedRow& p) {
  switch (p.regime) {
    case Regime::kGemmKernel:
      return p.gemm.a.native_math == engine::MathType::kFp8 ||
                     p.gemm.b.native_math == engine::MathType::kFp8
                 ? Group::kGemmFp8
                 : Group::kGemm16;
    case Regime::kAttentionKernel:
      return Group::kAttention;
    default:
      return Group::kElementwise;
  }
}

// The model's roofs at efficiency 1 and no per-call cost (shape effects
// included), so that measured - floor = max(compute / eta_c, memory / eta_m).
std::optional<engine::KernelCost> UnitCost(const Row& r,
                                           engine::KernelModel m) {
  m.per_call_seconds.fill(0);
  m.fp8_quantization_seconds = 0;
  m.gemm_seconds_per_k_step = 0;  // the split depth stays: it sets k_steps
  m.l2_resident_speedup = 1;
  m.gemm = engine::GemmEfficiency{};
  m.gemm_fp8 = engine::GemmEfficiency{};
  m.attention_compute = m.attention_memory = m.elementwise_memory = 1;
  m.attention_seconds_per_cta = m.attention_seconds_per_query_head = 0;
  m.attention_split_merge_seconds = 0;
  m.attention_8bit_kv_per_call_seconds = 0;
  engine::Efficiency e;
  e.kernel = m;
  e.kernel.present = true;
  absl::StatusOr<engine::KernelCost> c = KernelCostOf(*r.p, e, false);
  if (!c.ok()) return std::nullopt;
  return *c;
}

double Predict(const Row& r, const engine::KernelModel& m) {
  engine::Efficiency e;
  e.kernel = m;
  absl::StatusOr<engine::KernelCost> c = KernelCostOf(*r.p, e, false);
  return c.ok() ? c->seconds : r.bound;
}

double MedianApe(const std::vector<const Row*>& rows,
                 const engine::KernelModel& m) {
  std::vector<double> e;
  for (const Row* r : rows)
    e.push_back(std::abs(Predict(*r, m) - r->measured) / r->measured);
  return Median(e);
}

// Mean |log(predicted / measured)|: unlike the median it sees a minority of
// shapes (large head groups) that the model misses by several times.
double MeanLogError(const std::vector<const Row*>& rows,
                    const engine::KernelModel& m) {
  double sum = 0;
  for (const Row* r : rows) sum += std::abs(std::log(Predict(*r, m) / r->measured));
  return rows.empty() ? 0 : sum / static_cast<double>(rows.size());
}

// What a call pays for its serial K loop under model m, from its unit cost
// under m (k_steps is 0 for other kernels and when the tiles fill the units).
double SerialK(const engine::KernelCost& unit, const engine::KernelModel& m) {
  return m.gemm_seconds_per_k_step * static_cast<double>(unit.k_steps);
}
double SerialK(const Row& r, const engine::KernelModel& m) {
  if (m.gemm_seconds_per_k_step == 0) return 0;
  std::optional<engine::KernelCost> u = UnitCost(r, m);
  return u ? SerialK(*u, m) : 0;
}

// A bound this far under the shortest measurement puts a row on the
// per-call cost.
double FloorThreshold(const std::vector<const Row*>& rows) {
  double min_y = rows.front()->measured;
  for (const Row* r : rows) min_y = std::min(min_y, r->measured);
  return 0.1 * min_y;
}

std::vector<const Row*> FloorRows(const std::vector<const Row*>& rows) {
  const double threshold = FloorThreshold(rows);
  std::vector<const Row*> out;
  for (const Row* r : rows) {
    if (r->bound < threshold) out.push_back(r);
  }
  return out;
}

// The floor: the clamped Theil-Sen intercept of the floor rows (of all rows
// when fewer than three are), after what model m charges for the serial K
// loop.
double Floor(const std::vector<const Row*>& rows, double min_eta,
             const engine::KernelModel& m = {}) {
  const double threshold = FloorThreshold(rows);
  std::vector<double> x, y, ax, ay;
  for (const Row* r : rows) {
    const double serial = SerialK(*r, m);
    ax.push_back(r->bound);
    ay.push_back(r->measured - serial);
    if (r->bound < threshold) {
      x.push_back(r->bound);
      y.push_back(r->measured - serial);
    }
  }
  return x.size() >= 3 ? FitOverheadAndEta(x, y, min_eta).overhead_seconds
                       : FitOverheadAndEta(ax, ay, min_eta).overhead_seconds;
}

// eta_c, eta_m of rows on one floor: median of roof / (measured - floor)
// over the rows each roof dominates clearly above the floor.
std::pair<double, double> Etas(const std::vector<const Row*>& rows,
                               double floor, const engine::KernelModel& shape,
                               double min_eta) {
  std::vector<double> ec, em;
  for (const Row* r : rows) {
    std::optional<engine::KernelCost> u = UnitCost(*r, shape);
    if (!u) continue;
    const double busy = r->measured - floor - SerialK(*u, shape);
    if (busy <= 0) continue;
    if (u->compute_seconds > u->memory_seconds) {
      if (u->compute_seconds > floor) ec.push_back(u->compute_seconds / busy);
    } else if (u->memory_seconds > floor) {
      em.push_back(u->memory_seconds / busy);
    }
  }
  auto pick = [&](std::vector<double>& v) {
    return v.empty() ? 1.0 : std::clamp(Median(v), min_eta, 1.0);
  };
  return {pick(ec), pick(em)};
}

// The GEMM per-call floor and the serial K loop (kernel_model.h), for
// relative error (weights 1 / measured^2) over the floor rows:
//   measured - bound = floor + seconds_per_k_step x GemmSerialKSteps(depth),
// the split depth the grid value (bytes; 0 = never split) with the smallest
// median error. Small-tile calls grow with K (H100 bf16, M <= 16, N <= 256:
// 2.8 us at K 128, 5.7 us from K 2048 on, where split-K caps the loop)
// while the memory roof stays under 0.3 us. The floor is clamped into [0,
// the shortest call]; a negative step cost leaves the plain floor.
void FitGemmFloor(const std::vector<const Row*>& rows, double min_eta,
                  engine::KernelModel* m) {
  const std::vector<const Row*> low = FloorRows(rows);
  m->per_call_seconds[static_cast<int>(engine::KernelClass::kGemm)] =
      Floor(rows, min_eta);
  m->gemm_seconds_per_k_step = m->gemm_split_k_depth_bytes = 0;
  if (low.size() < 5) return;
  double min_y = INFINITY;
  for (const Row* r : low) min_y = std::min(min_y, r->measured);
  double best = MedianApe(low, *m);
  const engine::KernelModel plain = *m;
  for (double depth : {0.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0}) {
    engine::KernelModel trial = plain;
    trial.gemm_split_k_depth_bytes = depth;
    std::vector<std::vector<double>> x;
    std::vector<double> y, w;
    for (const Row* r : low) {
      std::optional<engine::KernelCost> u = UnitCost(*r, trial);
      if (!u) continue;
      x.push_back({1.0, static_cast<double>(u->k_steps)});
      y.push_back((r->measured - r->bound) * 1e6);
      w.push_back(1 / (r->measured * r->measured));
    }
    std::optional<std::vector<double>> c = WeightedLeastSquares(x, y, w);
    if (!c || (*c)[1] <= 0) continue;
    trial.per_call_seconds[static_cast<int>(engine::KernelClass::kGemm)] =
        std::clamp((*c)[0] * 1e-6, 0.0, min_y);
    trial.gemm_seconds_per_k_step = (*c)[1] * 1e-6;
    const double err = MedianApe(low, trial);
    if (err < best) {
      best = err;
      *m = trial;
    }
  }
}

// Per regime, eta from the rows streamed from device memory (all rows when
// fewer than five are): L2-resident rows measure another tier.
void FitGemm(const std::vector<const Row*>& rows, double floor, double min_eta,
             engine::GemmEfficiency* eff, engine::KernelModel* m) {
  for (int g = 0; g < engine::kGemmRegimeCount; ++g) {
    std::vector<const Row*> in, cold;
    for (const Row* r : rows) {
      if (r->regime != g) continue;
      in.push_back(r);
      if (!r->l2_resident) cold.push_back(r);
    }
    if (in.empty()) continue;
    std::tie(eff->compute[g], eff->memory[g]) =
        Etas(cold.size() >= 5 ? cold : in, floor, *m, min_eta);
  }
}

// KernelModel::l2_resident_speedup: median over the L2-resident GEMMs that
// the memory roof dominates clearly above the floor of (memory roof / eta_m)
// / (measured - floor - serial K loop), at least 1.
double FitL2Speedup(const std::vector<const Row*>& rows,
                    const std::map<Group, double>& floors,
                    const engine::KernelModel& m) {
  std::vector<double> s;
  for (const Row* r : rows) {
    if (!r->l2_resident) continue;
    std::optional<engine::KernelCost> u = UnitCost(*r, m);
    if (!u) continue;
    const engine::GemmEfficiency& eff =
        r->group == Group::kGemmFp8 && m.gemm_fp8_fitted ? m.gemm_fp8 : m.gemm;
    const double floor = floors.at(r->group);
    const double memory = u->memory_seconds / eff.memory[r->regime];
    const double compute = u->compute_seconds / eff.compute[r->regime];
    const double busy = r->measured - floor - SerialK(*u, m);
    if (memory > compute && memory > floor && busy > 0) s.push_back(memory / busy);
  }
  return s.empty() ? 1.0 : std::clamp(Median(s), 1.0, 1000.0);
}

// Decode attention, for relative error (WeightedLeastSquares, weights 1 /
// measured^2) over the memory-bound rows, in microseconds:
//   measured = floor(KV bits) + memory roof / eta_m
//              + per_cta x batch x KV heads + per_query_head x batch x heads
//              + split_merge x [the KV is split].
// The short calls spread from 1x to 7x the floor as batch x heads grows
// (the fused RoPE and KV append, each CTA's setup): a floor alone, fitted
// by Theil-Sen on the short rows, sat under every one of them (28 %
// median error on H100's rows). 16-bit and 8-bit KV caches are different
// kernels with floors of their own (7.5 and 5.6 us on H100), each clamped
// into [0, its shortest call]; the other terms refitted then; negative
// costs are 0, eta in [min_eta, 1]. Compute-bound rows are left out.
void FitAttention(const std::vector<const Row*>& rows, double theil_sen_floor,
                  double min_eta, engine::KernelModel* m) {
  struct Sample {
    bool kv8;
    double memory, ctas, query_heads, split, measured;  // us, counts, 0/1, us
  };
  std::vector<Sample> samples;
  double shortest[2] = {INFINITY, INFINITY};  // 16-bit, 8-bit KV
  for (const Row* r : rows) {
    std::optional<engine::KernelCost> u = UnitCost(*r, *m);
    if (!u || u->memory_seconds < u->compute_seconds) continue;
    const engine::DecodeAttentionShape& a = r->p->attention;
    const bool kv8 = a.dtype.bits <= 8;
    const double speedup = u->onchip_bandwidth_unknown ? m->l2_resident_speedup : 1;
    samples.push_back({kv8, u->memory_seconds / speedup * 1e6,
                       static_cast<double>(a.batch * a.num_kv_heads),
                       static_cast<double>(a.batch * a.num_q_heads),
                       u->splits > 1 ? 1.0 : 0.0, r->measured * 1e6});
    shortest[kv8] = std::min(shortest[kv8], r->measured * 1e6);
  }
  const bool has16 = shortest[0] < INFINITY, has8 = shortest[1] < INFINITY;
  // Too few rows, or rows that do not pin every term (one shape): the
  // Theil-Sen floor alone.
  auto floor_only = [&] {
    m->per_call_seconds[static_cast<int>(engine::KernelClass::kAttention)] =
        theil_sen_floor;
  };
  if (samples.size() < 5) return floor_only();
  // The merge term only where some calls split and some do not (otherwise
  // it cannot be told from the floor).
  size_t split_calls = 0;
  for (const Sample& s : samples) split_calls += s.split > 0;
  const bool fit_merge = split_calls > 0 && split_calls < samples.size();
  // Unknowns: [floor16?, floor8?, slope, per_cta, per_query_head, merge?].
  auto solve = [&](const std::optional<std::array<double, 2>>& floors)
      -> std::optional<std::vector<double>> {
    std::vector<std::vector<double>> x;
    std::vector<double> y, w;
    for (const Sample& s : samples) {
      std::vector<double> f;
      double target = s.measured;
      if (floors) {
        target -= (*floors)[s.kv8];
      } else {
        if (has16) f.push_back(s.kv8 ? 0 : 1);
        if (has8) f.push_back(s.kv8 ? 1 : 0);
      }
      // One at a time: GCC 12 at -O3 reports a false -Warray-bounds on an
      // initializer-list insert here (the image build is -Werror).
      f.push_back(s.memory);
      f.push_back(s.ctas);
      f.push_back(s.query_heads);
      if (fit_merge) f.push_back(s.split);
      x.push_back(std::move(f));
      y.push_back(target);
      w.push_back(1 / (s.measured * s.measured));
    }
    return WeightedLeastSquares(x, y, w);
  };
  std::optional<std::vector<double>> c = solve(std::nullopt);
  if (!c) return floor_only();
  std::array<double, 2> floors = {0, 0};
  size_t i = 0;
  if (has16) floors[0] = (*c)[i++];
  if (has8) floors[1] = (*c)[i++];
  const std::array<double, 2> clamped = {
      has16 ? std::clamp(floors[0], 0.0, shortest[0]) : 0,
      has8 ? std::clamp(floors[1], 0.0, shortest[1]) : 0};
  if (clamped != floors) {
    floors = clamped;
    c = solve(floors);
    if (!c) return floor_only();
    i = 0;
  }
  const double slope = (*c)[i], per_cta = (*c)[i + 1], per_head = (*c)[i + 2];
  using engine::KernelClass;
  m->per_call_seconds[static_cast<int>(KernelClass::kAttention)] =
      (has16 ? floors[0] : floors[1]) * 1e-6;
  m->attention_8bit_kv_fitted = has16 && has8;
  m->attention_8bit_kv_per_call_seconds =
      m->attention_8bit_kv_fitted ? floors[1] * 1e-6 : 0;
  m->attention_memory = slope > 0 ? std::clamp(1 / slope, min_eta, 1.0) : 1;
  m->attention_seconds_per_cta = std::max(per_cta, 0.0) * 1e-6;
  m->attention_seconds_per_query_head = std::max(per_head, 0.0) * 1e-6;
  m->attention_split_merge_seconds =
      fit_merge ? std::max((*c)[i + 3], 0.0) * 1e-6 : 0;
  // Compute-bound calls (rare in decode): median roof / (measured - floor).
  m->attention_compute =
      Etas(rows, m->per_call_seconds[static_cast<int>(KernelClass::kAttention)],
           *m, min_eta)
          .first;
}

}  // namespace

namespace {

std::vector<Row> KernelRows(const std::vector<const PreparedRow*>& rows) {
  std::vector<Row> all;
  for (const PreparedRow* p : rows) {
    if (!IsKernel(p->regime)) continue;
    absl::StatusOr<engine::KernelCost> b =
        KernelCostOf(*p, engine::Efficiency{}, true);
    if (!b.ok() || b->seconds <= 0) continue;
    Row r{p, GroupOf(*p), static_cast<int>(engine::GemmRegimeOf(p->gemm.m)),
          ToSeconds(*p, p->row.value), b->seconds, b->onchip_bandwidth_unknown};
    all.push_back(r);
  }
  return all;
}

}  // namespace

namespace {

// One platform's rows (or rows whose platforms are fitted together).
engine::KernelModel FitOnePlatform(const std::vector<const PreparedRow*>& rows,
                                   double min_eta) {
  engine::KernelModel m;
  m.present = true;
  const std::vector<Row> all = KernelRows(rows);
  std::map<Group, std::vector<const Row*>> groups;
  for (const Row& r : all) groups[r.group].push_back(&r);
  std::map<Group, double> floors;
  for (const auto& [g, members] : groups) floors[g] = Floor(members, min_eta);
  using engine::KernelClass;
  auto at = [](KernelClass c) { return static_cast<int>(c); };

  // GEMM: 16-bit rows fix the per-call cost and the serial K loop; fp8 rows
  // add their activation quantisation on top (or carry both when alone).
  const bool has16 = groups.contains(Group::kGemm16);
  const bool has8 = groups.contains(Group::kGemmFp8);
  if (has16 || has8) {
    const Group base = has16 ? Group::kGemm16 : Group::kGemmFp8;
    FitGemmFloor(groups[base], min_eta, &m);
    floors[base] = m.per_call_seconds[at(KernelClass::kGemm)];
    if (has16 && has8) floors[Group::kGemmFp8] = Floor(groups[Group::kGemmFp8], min_eta, m);
  }
  if (has8) {
    if (has16) {
      m.fp8_quantization_seconds =
          std::max(0.0, floors[Group::kGemmFp8] - floors[Group::kGemm16]);
    } else {
      m.per_call_seconds[at(KernelClass::kGemm)] = floors[Group::kGemmFp8];
    }
  }
  if (has16 || has8) {
    // The wave tail share: the grid value with the smallest median error
    // over all GEMM rows (each value refits the regime efficiencies).
    std::vector<const Row*> gemms;
    for (Group g : {Group::kGemm16, Group::kGemmFp8}) {
      if (groups.contains(g))
        gemms.insert(gemms.end(), groups[g].begin(), groups[g].end());
    }
    double best = INFINITY;
    engine::KernelModel best_model = m;
    for (double w : {0.0, 0.25, 0.5, 0.75, 1.0}) {
      engine::KernelModel trial = m;
      trial.wave_quantization = w;
      if (has16) {
        FitGemm(groups[Group::kGemm16], floors[Group::kGemm16], min_eta,
                &trial.gemm, &trial);
      }
      if (has8) {
        trial.gemm_fp8_fitted = true;
        FitGemm(groups[Group::kGemmFp8], floors[Group::kGemmFp8], min_eta,
                &trial.gemm_fp8, &trial);
        if (!has16) trial.gemm = trial.gemm_fp8;
      }
      trial.l2_resident_speedup = FitL2Speedup(gemms, floors, trial);
      const double err = MedianApe(gemms, trial);
      if (err < best) {
        best = err;
        best_model = trial;
      }
    }
    m = best_model;
  }
  if (groups.contains(Group::kAttention)) {
    const std::vector<const Row*>& att = groups[Group::kAttention];
    double best = INFINITY;
    engine::KernelModel best_model = m;
    // Shape constants by grid: the CTA bandwidth share (0: not limited;
    // else the multiple of the fair share), the largest head group one KV
    // read serves (0: any) and the share of re-reads above it.
    std::vector<std::pair<double, double>> groups_grid = {{0, 0}};
    for (double g : {16.0, 32.0, 64.0}) {
      for (double reread : {0.1, 0.2, 0.4, 1.0}) groups_grid.push_back({g, reread});
    }
    for (double share : {0.0, 0.5, 1.0, 2.0, 4.0}) {
      for (const auto& [group, reread] : groups_grid) {
        engine::KernelModel trial = m;
        trial.attention_cta_bandwidth_share = share;
        trial.attention_max_shared_group = group;
        trial.attention_group_reread_share = reread;
        FitAttention(att, floors[Group::kAttention], min_eta, &trial);
        const double err = MeanLogError(att, trial);
        if (err < best) {
          best = err;
          best_model = trial;
        }
      }
    }
    m = best_model;
  }
  if (groups.contains(Group::kElementwise)) {
    const double floor = floors[Group::kElementwise];
    m.per_call_seconds[at(KernelClass::kElementwise)] = floor;
    m.elementwise_memory =
        Etas(groups[Group::kElementwise], floor, m, min_eta).second;
  }

  return m;
}

// Which parts of the model one platform's rows can fix.
struct Covered {
  bool gemm16 = false, gemm8 = false, attention = false, kv8 = false,
       elementwise = false, l2_resident = false;
  std::array<bool, engine::kGemmRegimeCount> regime16{}, regime8{};
};

Covered CoveredBy(const std::vector<const PreparedRow*>& rows) {
  Covered c;
  for (const Row& r : KernelRows(rows)) {
    c.l2_resident = c.l2_resident || r.l2_resident;
    switch (r.group) {
      case Group::kGemm16:
        c.gemm16 = c.regime16[r.regime] = true;
        break;
      case Group::kGemmFp8:
        c.gemm8 = c.regime8[r.regime] = true;
        break;
      case Group::kAttention:
        c.attention = true;
        c.kv8 = c.kv8 || r.p->attention.dtype.bits <= 8;
        break;
      case Group::kElementwise:
        c.elementwise = true;
        break;
    }
  }
  return c;
}

// Parameter by parameter, the median over the platforms whose rows fixed it
// (the default where none did). A head-group limit of 0 means none, so it
// counts as the largest.
engine::KernelModel MedianModel(
    const std::vector<std::pair<engine::KernelModel, Covered>>& fits) {
  using engine::KernelClass;
  using engine::KernelModel;
  KernelModel out;
  out.present = true;
  auto median = [&](auto covers, auto get, double fallback) {
    std::vector<double> v;
    for (const auto& [m, c] : fits) {
      if (covers(c)) v.push_back(get(m));
    }
    return v.empty() ? fallback : Median(v);
  };
  auto set = [&](double* field, auto covers, auto get) {
    *field = median(covers, get, *field);
  };
  const bool any16 = std::any_of(fits.begin(), fits.end(),
                                 [](const auto& f) { return f.second.gemm16; });
  auto gemm = [&](const Covered& c) { return any16 ? c.gemm16 : c.gemm8; };
  auto both = [](const Covered& c) { return c.gemm16 && c.gemm8; };
  auto att = [](const Covered& c) { return c.attention; };
  auto elem = [](const Covered& c) { return c.elementwise; };
  for (KernelClass k : {KernelClass::kGemm, KernelClass::kAttention,
                        KernelClass::kElementwise, KernelClass::kCollective}) {
    const int i = static_cast<int>(k);
    auto covers = [&](const Covered& c) {
      return k == KernelClass::kGemm        ? gemm(c)
             : k == KernelClass::kAttention ? c.attention
                                            : c.elementwise;
    };
    set(&out.per_call_seconds[i], covers,
        [i](const KernelModel& m) { return m.per_call_seconds[i]; });
  }
  for (int r = 0; r < engine::kGemmRegimeCount; ++r) {
    auto c16 = [&](const Covered& c) { return any16 ? c.regime16[r] : c.regime8[r]; };
    auto c8 = [&](const Covered& c) { return c.regime8[r]; };
    set(&out.gemm.compute[r], c16, [r](const KernelModel& m) { return m.gemm.compute[r]; });
    set(&out.gemm.memory[r], c16, [r](const KernelModel& m) { return m.gemm.memory[r]; });
    set(&out.gemm_fp8.compute[r], c8,
        [r](const KernelModel& m) { return m.gemm_fp8.compute[r]; });
    set(&out.gemm_fp8.memory[r], c8,
        [r](const KernelModel& m) { return m.gemm_fp8.memory[r]; });
  }
  out.gemm_fp8_fitted = any16 && std::any_of(fits.begin(), fits.end(),
                                             [](const auto& f) { return f.second.gemm8; });
  set(&out.fp8_quantization_seconds, both,
      [](const KernelModel& m) { return m.fp8_quantization_seconds; });
  set(&out.wave_quantization, gemm, [](const KernelModel& m) { return m.wave_quantization; });
  set(&out.gemm_seconds_per_k_step, gemm,
      [](const KernelModel& m) { return m.gemm_seconds_per_k_step; });
  set(&out.gemm_split_k_depth_bytes, gemm,
      [](const KernelModel& m) { return m.gemm_split_k_depth_bytes; });
  set(&out.attention_compute, att, [](const KernelModel& m) { return m.attention_compute; });
  set(&out.attention_memory, att, [](const KernelModel& m) { return m.attention_memory; });
  set(&out.attention_cta_bandwidth_share, att,
      [](const KernelModel& m) { return m.attention_cta_bandwidth_share; });
  set(&out.attention_seconds_per_cta, att,
      [](const KernelModel& m) { return m.attention_seconds_per_cta; });
  set(&out.attention_seconds_per_query_head, att,
      [](const KernelModel& m) { return m.attention_seconds_per_query_head; });
  set(&out.attention_split_merge_seconds, att,
      [](const KernelModel& m) { return m.attention_split_merge_seconds; });
  constexpr double kNoLimit = 1e9;
  out.attention_max_shared_group = median(att, [&](const KernelModel& m) {
    return m.attention_max_shared_group > 0 ? m.attention_max_shared_group : kNoLimit;
  }, 0);
  if (out.attention_max_shared_group >= kNoLimit) out.attention_max_shared_group = 0;
  set(&out.attention_group_reread_share, att,
      [](const KernelModel& m) { return m.attention_group_reread_share; });
  auto fitted8 = [&](const Covered& c) { return c.kv8; };
  out.attention_8bit_kv_fitted = std::any_of(fits.begin(), fits.end(), [](const auto& f) {
    return f.first.attention_8bit_kv_fitted;
  });
  set(&out.attention_8bit_kv_per_call_seconds, fitted8,
      [](const KernelModel& m) { return m.attention_8bit_kv_per_call_seconds; });
  set(&out.elementwise_memory, elem, [](const KernelModel& m) { return m.elementwise_memory; });
  set(&out.l2_resident_speedup, [](const Covered& c) { return c.l2_resident; },
      [](const KernelModel& m) { return m.l2_resident_speedup; });
  return out;
}

}  // namespace

engine::KernelModel FitKernelModel(const std::vector<const PreparedRow*>& rows,
                                   double min_eta) {
  // Several platforms: each is fitted alone and each parameter is the median
  // over them, so every GPU counts once. Pooled, the median efficiencies
  // followed whichever GPU had most rows (A100's 6,000 bf16 GEMMs), and the
  // floor and shape fits mixed GPUs whose floors differ.
  std::map<std::string, std::vector<const PreparedRow*>> by_platform;
  for (const PreparedRow* p : rows) {
    if (IsKernel(p->regime)) by_platform[p->row.hardware_id].push_back(p);
  }
  if (by_platform.size() <= 1) return FitOnePlatform(rows, min_eta);
  std::vector<std::pair<engine::KernelModel, Covered>> fits;
  for (const auto& [platform, members] : by_platform) {
    fits.emplace_back(FitOnePlatform(members, min_eta), CoveredBy(members));
  }
  return MedianModel(fits);
}

std::string KernelModelResiduals(const std::vector<const PreparedRow*>& rows,
                                 const engine::KernelModel& m) {
  const std::vector<Row> all = KernelRows(rows);
  std::string residuals;
  {
    std::map<std::string, std::vector<const Row*>> by;
    for (const Row& r : all) {
      std::string name = r.group == Group::kGemm16      ? "gemm"
                         : r.group == Group::kGemmFp8   ? "gemm-fp8"
                         : r.group == Group::kAttention ? "attention"
                                                        : "elementwise";
      if (r.group == Group::kGemm16 || r.group == Group::kGemmFp8) {
        // StrAppend, not `" " + std::string(...)`: GCC 12 at -O3 reports a
        // false -Wrestrict on the operator+ form (the image build failed on
        // it).
        absl::StrAppend(&name, " ",
                        std::string(engine::GemmRegimeName(
                            static_cast<engine::GemmRegime>(r.regime))));
      }
      by[name].push_back(&r);
    }
    for (const auto& [name, members] : by) {
      absl::StrAppendFormat(&residuals, "%s%s: n=%d median %.1f%%",
                            residuals.empty() ? "" : "; ", name, members.size(),
                            100 * MedianApe(members, m));
    }
  }
  return residuals;
}

}  // namespace ridgeline::calibration
