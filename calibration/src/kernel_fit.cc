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
  m.gemm = engine::GemmEfficiency{};
  m.gemm_fp8 = engine::GemmEfficiency{};
  m.attention_compute = m.attention_memory = m.elementwise_memory = 1;
  m.attention_seconds_per_cta = m.attention_seconds_per_query_head = 0;
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

// The floor: the clamped Theil-Sen intercept of the rows whose bound is far
// under the shortest measurement (they sit on the per-call cost), or of all
// rows when fewer than three do.
double Floor(const std::vector<const Row*>& rows, double min_eta) {
  double min_y = rows.front()->measured;
  for (const Row* r : rows) min_y = std::min(min_y, r->measured);
  std::vector<double> x, y, ax, ay;
  for (const Row* r : rows) {
    ax.push_back(r->bound);
    ay.push_back(r->measured);
    if (r->bound < 0.1 * min_y) {
      x.push_back(r->bound);
      y.push_back(r->measured);
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
    const double busy = r->measured - floor;
    if (!u || busy <= 0) continue;
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

void FitGemm(const std::vector<const Row*>& rows, double floor, double min_eta,
             engine::GemmEfficiency* eff, engine::KernelModel* m) {
  for (int g = 0; g < engine::kGemmRegimeCount; ++g) {
    std::vector<const Row*> in;
    for (const Row* r : rows) {
      if (r->regime == g) in.push_back(r);
    }
    if (in.empty()) continue;
    std::tie(eff->compute[g], eff->memory[g]) = Etas(in, floor, *m, min_eta);
  }
}

// Decode attention, for relative error (WeightedLeastSquares, weights 1 /
// measured^2) over the memory-bound rows, in microseconds:
//   measured = floor(KV bits) + memory roof / eta_m
//              + per_cta x batch x KV heads + per_query_head x batch x heads.
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
    double memory, ctas, query_heads, measured;  // us, counts, us
  };
  std::vector<Sample> samples;
  double shortest[2] = {INFINITY, INFINITY};  // 16-bit, 8-bit KV
  for (const Row* r : rows) {
    std::optional<engine::KernelCost> u = UnitCost(*r, *m);
    if (!u || u->memory_seconds < u->compute_seconds) continue;
    const engine::DecodeAttentionShape& a = r->p->attention;
    const bool kv8 = a.dtype.bits <= 8;
    samples.push_back({kv8, u->memory_seconds * 1e6,
                       static_cast<double>(a.batch * a.num_kv_heads),
                       static_cast<double>(a.batch * a.num_q_heads),
                       r->measured * 1e6});
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
  // Unknowns: [floor16?, floor8?, slope, per_cta, per_query_head].
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
          ToSeconds(*p, p->row.value), b->seconds};
    all.push_back(r);
  }
  return all;
}

}  // namespace

engine::KernelModel FitKernelModel(const std::vector<const PreparedRow*>& rows,
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

  // GEMM: 16-bit rows fix the per-call cost; fp8 rows add their activation
  // quantisation on top (or carry the whole floor when alone).
  const bool has16 = groups.contains(Group::kGemm16);
  const bool has8 = groups.contains(Group::kGemmFp8);
  if (has16)
    m.per_call_seconds[at(KernelClass::kGemm)] = floors[Group::kGemm16];
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
    // 0: CTAs not bandwidth-limited; else the multiple of the fair share.
    for (double share : {0.0, 0.5, 1.0, 2.0, 4.0}) {
      engine::KernelModel trial = m;
      trial.attention_cta_bandwidth_share = share;
      FitAttention(att, floors[Group::kAttention], min_eta, &trial);
      const double err = MedianApe(att, trial);
      if (err < best) {
        best = err;
        best_model = trial;
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
