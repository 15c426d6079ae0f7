#include "ridgeline/calibration/fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ridgeline/engine/power_limit.h"

namespace ridgeline::calibration {
namespace {

void SetAll(std::array<double, engine::kOpClassCount>& a, double v) {
  a.fill(v);
}

struct Sample {
  const PreparedRow* row;
  double bound_seconds;  // RoofRow
  double measured_seconds;
  RowRoofs roofs;  // where the row sits at the bound
};

bool HasInlineEcc(const engine::Hardware& hw) {
  return std::any_of(hw.tiers.begin(), hw.tiers.end(),
                     [](const engine::MemoryTier& t) { return t.inline_ecc_share > 0; });
}

// A row's time at eta 1 without overheads, what its etas are measured
// against: the bound, except that a model row on a part shipping with inline
// ECC moves its check bits too (the fitted profile says Efficiency::
// inline_ecc). A part with a plugin hook keeps the bound: an analysis
// without a profile would ask the hook.
absl::StatusOr<double> RoofRow(const PreparedRow& r) {
  const engine::Hardware& hw = r.scenario.hardware;
  if (IsKernel(r.regime) || hw.efficiency_hook || !HasInlineEcc(hw)) {
    return PredictRow(r, engine::Efficiency{}, true);
  }
  engine::Efficiency ecc;
  ecc.inline_ecc = true;
  return PredictRow(r, ecc, false);
}

std::vector<Sample> Samples(const std::vector<const PreparedRow*>& rows,
                            std::initializer_list<Regime> regimes) {
  std::vector<Sample> out;
  for (const PreparedRow* r : rows) {
    if (std::find(regimes.begin(), regimes.end(), r->regime) == regimes.end())
      continue;
    absl::StatusOr<double> bound = RoofRow(*r);
    absl::StatusOr<RowRoofs> roofs = PureRoofs(*r);
    if (!bound.ok() || !roofs.ok()) continue;
    out.push_back({r, ToSeconds(*r, *bound), ToSeconds(*r, r->row.value), *roofs});
  }
  return out;
}

// (eta, overhead) of the samples' measured vs bound seconds
// (FitOverheadAndEta).
std::pair<double, double> FitLinear(const std::vector<Sample>& s, double min_eta) {
  std::vector<double> x, y;
  for (const Sample& v : s) {
    x.push_back(v.bound_seconds);
    y.push_back(v.measured_seconds);
  }
  const LinearFit fit = FitOverheadAndEta(x, y, min_eta);
  return {fit.eta, fit.overhead_seconds};
}

// The eta in [min, 1] at which the prediction's time matches the row, for an
// efficiency that `set` fills in. Monotone: larger eta, less time.
template <typename Set>
std::optional<double> SolveEta(const PreparedRow& row, engine::Efficiency eff,
                               Set set, double min_eta) {
  const double target = ToSeconds(row, row.row.value);
  auto time_at = [&](double eta) -> std::optional<double> {
    set(eff, eta);
    absl::StatusOr<double> v = PredictRow(row, eff, false);
    if (!v.ok()) return std::nullopt;
    return ToSeconds(row, *v);
  };
  std::optional<double> fast = time_at(1.0);
  if (!fast) return std::nullopt;
  if (*fast >= target) return 1.0;
  std::optional<double> slow = time_at(min_eta);
  if (!slow) return std::nullopt;
  if (*slow <= target) return min_eta;
  double lo = std::log(min_eta), hi = 0;  // log eta
  for (int i = 0; i < 18; ++i) {
    const double mid = 0.5 * (lo + hi);
    std::optional<double> t = time_at(std::exp(mid));
    if (!t) return std::nullopt;
    (*t > target ? lo : hi) = mid;
  }
  return std::exp(0.5 * (lo + hi));
}

template <typename Set>
std::optional<double> MedianEta(const std::vector<Sample>& s,
                                const engine::Efficiency& eff, Set set,
                                double min_eta) {
  std::vector<double> etas;
  for (const Sample& v : s) {
    if (auto e = SolveEta(*v.row, eff, set, min_eta)) etas.push_back(*e);
  }
  if (etas.empty()) return std::nullopt;
  return Median(etas);
}

// A prefill whose compute-roof time is at least half its memory-roof time
// can be compute-bound at a plausible eta_c; below that it is memory-bound
// even at eta_c = 1/2.
constexpr double kComputeMattersRatio = 0.5;

// Kernel rows, grouped by op class (attention, gemm, gemv, elementwise =
// memory streaming) and by the roof they sit on. Launch overhead: the median
// of the groups' Theil-Sen intercepts (one line per group, since groups
// differ in eta). Then per group eta = median of bound / (measured -
// overhead): compute-bound groups give their class's eta_c, memory-bound ones
// its eta_m; classes without rows of their own take the median of all rows
// on that roof.
void FitKernels(const std::vector<Sample>& kernels, double min_eta,
                engine::Efficiency* eff) {
  std::map<std::pair<bool, engine::OpClass>, std::vector<Sample>> groups;
  for (const Sample& v : kernels) {
    groups[{v.roofs.compute_to_memory > 1, v.roofs.op_class}].push_back(v);
  }
  std::vector<double> intercepts;
  for (const auto& [key, members] : groups) {
    if (members.size() >= 2) intercepts.push_back(FitLinear(members, min_eta).second);
  }
  const double overhead = intercepts.empty() ? FitLinear(kernels, min_eta).second
                                             : Median(intercepts);
  eff->per_kernel_overhead_seconds = overhead;
  auto eta_of = [&](const Sample& v) {
    const double busy = v.measured_seconds - overhead;
    return busy > v.bound_seconds ? std::max(v.bound_seconds / busy, min_eta) : 1.0;
  };
  for (const bool compute_side : {true, false}) {
    std::vector<double> side_etas;
    for (const Sample& v : kernels) {
      if ((v.roofs.compute_to_memory > 1) == compute_side) side_etas.push_back(eta_of(v));
    }
    if (side_etas.empty()) continue;
    auto& side = compute_side ? eff->compute : eff->memory;
    SetAll(side, Median(side_etas));
    for (const auto& [key, members] : groups) {
      if (key.first != compute_side) continue;
      std::vector<double> etas;
      for (const Sample& v : members) etas.push_back(eta_of(v));
      side[static_cast<int>(key.second)] = Median(etas);
    }
  }
}

bool Dequantized(const Sample& v) {
  return v.row->scenario.precision.weights.dequantized();
}

auto SetCompute() {
  return [](engine::Efficiency& e, double eta) { SetAll(e.compute, eta); };
}

// Parts a power exponent is fitted over, and the least spread of their
// watts per peak TFLOP/s (largest over smallest): fewer or closer parts
// cannot tell a trend from the parts' own quirks.
constexpr size_t kMinPartsForPowerExponent = 3;
constexpr double kMinPowerSpread = 1.5;

// Efficiency::compute_power_exponent (power_limit.h) from compute-bound
// prefill rows: the Theil-Sen slope of log(the row's own eta_c) over log(W
// per peak TFLOP/s of its part), each log eta centred on the median of its
// weight group (dequantised or native, whose gap is the dequantised share's).
// Only rows on parts with a published TDP count; with fewer than
// kMinPartsForPowerExponent such parts, or a spread under kMinPowerSpread,
// the exponent stays as it was.
void FitPowerExponent(const std::vector<Sample>& rows, double min_eta,
                      engine::Efficiency* eff) {
  engine::Efficiency plain = *eff;
  plain.compute_power_exponent = 0;
  plain.dequantized_compute_share = 1;
  std::vector<double> log_x, log_eta;
  std::vector<bool> dequantized;
  std::set<std::string> parts;
  for (const Sample& v : rows) {
    const std::optional<double> x =
        engine::MatmulWattsPerPeakTflops(v.row->scenario);
    if (!x.has_value()) continue;
    const std::optional<double> eta = SolveEta(*v.row, plain, SetCompute(), min_eta);
    if (!eta.has_value()) continue;
    log_x.push_back(std::log(*x));
    log_eta.push_back(std::log(*eta));
    dequantized.push_back(Dequantized(v));
    parts.insert(v.row->row.hardware_id);
  }
  if (parts.size() < kMinPartsForPowerExponent) return;
  for (const bool group : {false, true}) {
    std::vector<double> members;
    for (size_t i = 0; i < log_eta.size(); ++i) {
      if (dequantized[i] == group) members.push_back(log_eta[i]);
    }
    if (members.empty()) continue;
    const double centre = Median(members);
    for (size_t i = 0; i < log_eta.size(); ++i) {
      if (dequantized[i] == group) log_eta[i] -= centre;
    }
  }
  // TheilSen skips pairs closer than 5 % of the largest x: shifted to start
  // at 0, that is 5 % of the span of log(W per TFLOP/s), so rows of one part
  // never pair.
  const auto [lowest, highest] = std::minmax_element(log_x.begin(), log_x.end());
  if (*highest - *lowest < std::log(kMinPowerSpread)) return;
  const double shift = *lowest;
  for (double& x : log_x) x -= shift;
  const double slope = TheilSen(log_x, log_eta).slope;
  if (std::isfinite(slope)) eff->compute_power_exponent = std::clamp(slope, 0.0, 1.0);
}

// Rows per dequantised weight format a share of its own is fitted from.
constexpr size_t kMinRowsForFormatShare = 2;

// eta_c of compute-bound prefill rows (median of per-row solutions), and
// Efficiency::dequantized_compute_share where rows of both kinds of weights
// fix it: the median eta of dequantised-weight rows over that of native
// ones, over all such rows and per format with kMinRowsForFormatShare rows.
// Rows of one kind keep the shares as they were.
void FitComputeEta(const std::vector<Sample>& rows, double min_eta,
                   engine::Efficiency* eff) {
  std::vector<Sample> native, dequantized;
  std::map<std::string, std::vector<Sample>> by_format;
  for (const Sample& v : rows) {
    if (!Dequantized(v)) {
      native.push_back(v);
      continue;
    }
    dequantized.push_back(v);
    by_format[v.row->scenario.precision.weights.name].push_back(v);
  }
  const std::optional<double> native_eta =
      MedianEta(native, *eff, SetCompute(), min_eta);
  if (native_eta.has_value() && !dequantized.empty()) {
    engine::Efficiency whole = *eff;
    whole.dequantized_compute_share = 1;
    whole.dequantized_compute_share_by_format.clear();
    auto share_of = [&](const std::vector<Sample>& members) -> std::optional<double> {
      std::optional<double> eta = MedianEta(members, whole, SetCompute(), min_eta);
      if (!eta.has_value()) return std::nullopt;
      return std::clamp(*eta / *native_eta, min_eta, 1.0);
    };
    if (auto share = share_of(dequantized)) eff->dequantized_compute_share = *share;
    for (const auto& [format, members] : by_format) {
      if (members.size() < kMinRowsForFormatShare) continue;
      if (auto share = share_of(members)) {
        eff->dequantized_compute_share_by_format[format] = *share;
      }
    }
  }
  if (native_eta.has_value()) {
    SetAll(eff->compute, *native_eta);
  } else if (auto eta = MedianEta(dequantized, *eff, SetCompute(), min_eta)) {
    SetAll(eff->compute, *eta);
  }
}

// Prefill rows (prefill_tok_s, ttft_ms). Those the memory roof bounds even at
// eta_c = 1/2 cannot measure compute efficiency: what the memory roof and the
// per-step overhead leave of them is the fixed cost before the first token
// (median, clamped to [0, 0.9 x the shortest row]). The others fix the power
// exponent, then eta_c and the dequantised share (median of per-row
// solutions, that cost included).
void FitPrefill(const std::vector<Sample>& prefill, double min_eta,
                engine::Efficiency* eff) {
  std::vector<Sample> compute_rows;
  std::vector<double> unexplained;
  double min_measured = prefill.front().measured_seconds;
  engine::Efficiency without = *eff;
  without.per_request_overhead_seconds = 0;
  for (const Sample& v : prefill) {
    min_measured = std::min(min_measured, v.measured_seconds);
    if (v.roofs.compute_to_memory >= kComputeMattersRatio) {
      compute_rows.push_back(v);
      continue;
    }
    absl::StatusOr<double> t = PredictRow(*v.row, without, false);
    if (t.ok()) unexplained.push_back(v.measured_seconds - ToSeconds(*v.row, *t));
  }
  if (!unexplained.empty()) {
    eff->per_request_overhead_seconds =
        std::clamp(Median(unexplained), 0.0, 0.9 * min_measured);
  }
  if (compute_rows.empty()) return;
  FitPowerExponent(compute_rows, min_eta, eff);
  FitComputeEta(compute_rows, min_eta, eff);
}

std::string Describe(const std::vector<const PreparedRow*>& rows) {
  std::string ids;
  for (const PreparedRow* r : rows) absl::StrAppend(&ids, ids.empty() ? "" : " ", r->row.id);
  return ids;
}

}  // namespace

Line TheilSen(const std::vector<double>& x, const std::vector<double>& y) {
  Line line;
  const size_t n = std::min(x.size(), y.size());
  if (n == 0) return line;
  double max_x = *std::max_element(x.begin(), x.begin() + n);
  // All pairs up to 2,000 points; beyond, every stride-th point (a fixed,
  // evenly spread subsample: 12,000 kernel rows would be 72 M pairs).
  constexpr size_t kMaxPoints = 2000;
  const size_t stride = n > kMaxPoints ? (n + kMaxPoints - 1) / kMaxPoints : 1;
  std::vector<double> slopes;
  for (size_t i = 0; i < n; i += stride) {
    for (size_t j = i + stride; j < n; j += stride) {
      // Pairs with nearly equal x say nothing about the slope.
      if (std::abs(x[j] - x[i]) > 0.05 * max_x) {
        slopes.push_back((y[j] - y[i]) / (x[j] - x[i]));
      }
    }
  }
  if (slopes.empty()) {
    std::vector<double> ratios;
    for (size_t i = 0; i < n; ++i) ratios.push_back(y[i] / x[i]);
    line.slope = Median(ratios);
    line.intercept = 0;
    return line;
  }
  line.slope = Median(slopes);
  std::vector<double> residual;
  for (size_t i = 0; i < n; ++i) residual.push_back(y[i] - line.slope * x[i]);
  line.intercept = Median(residual);
  return line;
}

LinearFit FitOverheadAndEta(const std::vector<double>& x,
                            const std::vector<double>& y, double min_eta) {
  LinearFit out;
  const size_t n = std::min(x.size(), y.size());
  if (n == 0) return out;
  const double min_y = *std::min_element(y.begin(), y.begin() + n);
  Line line = TheilSen(x, y);
  // Rows on the fixed-cost floor put the intercept near the shortest
  // measurement: that is the cost to keep, so the intercept is clamped into
  // [0, shortest measurement], never thrown away.
  const double intercept = std::clamp(line.intercept, 0.0, min_y);
  if (intercept != line.intercept || line.slope <= 0) {
    // The slope that goes with the clamped intercept: median of the per-row
    // slopes through it.
    std::vector<double> slopes;
    for (size_t i = 0; i < n; ++i) {
      if (x[i] > 0) slopes.push_back((y[i] - intercept) / x[i]);
    }
    line.slope = slopes.empty() ? 1 : Median(slopes);
    line.intercept = intercept;
  }
  double eta = line.slope > 0 ? 1.0 / line.slope : 1.0;
  double overhead = line.intercept;
  if (eta > 1) {
    // Faster than the bound allows: eta 1, and the overhead is what the
    // bound leaves (median), still inside [0, shortest measurement].
    eta = 1;
    std::vector<double> residual;
    for (size_t i = 0; i < n; ++i) residual.push_back(y[i] - x[i]);
    overhead = std::clamp(Median(residual), 0.0, min_y);
  }
  out.eta = std::clamp(eta, min_eta, 1.0);
  out.overhead_seconds = overhead;
  return out;
}

std::optional<std::vector<double>> WeightedLeastSquares(
    const std::vector<std::vector<double>>& features,
    const std::vector<double>& y, const std::vector<double>& w) {
  if (features.empty()) return std::nullopt;
  const size_t k = features.front().size();
  // The normal equations [A | b], A = X^T W X, b = X^T W y.
  std::vector<std::vector<double>> a(k, std::vector<double>(k + 1, 0));
  for (size_t i = 0; i < features.size() && i < y.size() && i < w.size();
       ++i) {
    for (size_t r = 0; r < k; ++r) {
      for (size_t c = 0; c < k; ++c) {
        a[r][c] += w[i] * features[i][r] * features[i][c];
      }
      a[r][k] += w[i] * features[i][r] * y[i];
    }
  }
  // Gauss-Jordan with partial pivoting.
  for (size_t col = 0; col < k; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < k; ++r) {
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    }
    if (!(std::abs(a[pivot][col]) > 1e-300)) return std::nullopt;
    std::swap(a[col], a[pivot]);
    for (size_t r = 0; r < k; ++r) {
      if (r == col) continue;
      const double f = a[r][col] / a[col][col];
      for (size_t c = col; c <= k; ++c) a[r][c] -= f * a[col][c];
    }
  }
  std::vector<double> out(k);
  for (size_t r = 0; r < k; ++r) out[r] = a[r][k] / a[r][r];
  return out;
}

engine::Efficiency FitEfficiency(const std::vector<const PreparedRow*>& rows,
                                 const engine::Efficiency& base,
                                 const FitOptions& options) {
  engine::Efficiency eff = base;
  // Named like a profile so the engine applies overheads exactly as it will
  // when the fitted profile is used.
  eff.profile_name = "fit";
  const double min_eta = options.min_efficiency;
  // Etas of model rows are fitted net of inline ECC's check bits (RoofRow);
  // kernel rows keep the raw rate.
  eff.inline_ecc = std::any_of(rows.begin(), rows.end(), [](const PreparedRow* r) {
    return !IsKernel(r->regime);
  });

  std::vector<Sample> kernels =
      Samples(rows, {Regime::kAttentionKernel, Regime::kGemmKernel,
                     Regime::kMemoryKernel});
  if (!kernels.empty()) FitKernels(kernels, min_eta, &eff);
  if (!kernels.empty() && options.kernel_model) {
    eff.kernel = FitKernelModel(rows, min_eta);
  }
  std::vector<Sample> decode = Samples(rows, {Regime::kDecode});
  if (!decode.empty()) {
    auto [eta, overhead] = FitLinear(decode, min_eta);
    SetAll(eff.memory, eta);
    eff.per_step_overhead_seconds = overhead;
  }
  auto set_memory = [](engine::Efficiency& e, double eta) { SetAll(e.memory, eta); };
  auto set_both = [](engine::Efficiency& e, double eta) {
    SetAll(e.compute, eta);
    SetAll(e.memory, eta);
  };
  std::vector<Sample> prefill = Samples(rows, {Regime::kPrefill});
  std::vector<Sample> mixed = Samples(rows, {Regime::kMixed});
  if (!prefill.empty()) FitPrefill(prefill, min_eta, &eff);
  if (!mixed.empty() && decode.empty()) {
    if (prefill.empty()) {
      if (auto eta = MedianEta(mixed, eff, set_both, min_eta)) set_both(eff, *eta);
    } else {
      // eta_m from the mixed rows changes what the prefill rows leave
      // unexplained and vice versa: alternate until both settle (a few
      // rounds; each is a median, so it converges quickly).
      for (int round = 0; round < 4; ++round) {
        if (auto eta = MedianEta(mixed, eff, set_memory, min_eta)) SetAll(eff.memory, *eta);
        FitPrefill(prefill, min_eta, &eff);
      }
    }
  }
  return eff;
}

namespace {

Profile MakeProfile(std::string name, std::string hardware_id, std::string family,
                    std::string framework, engine::Efficiency eff,
                    const std::vector<const PreparedRow*>& rows,
                    const FitOptions& options) {
  Profile p;
  p.name = std::move(name);
  p.hardware_id = std::move(hardware_id);
  p.family = std::move(family);
  p.framework = std::move(framework);
  eff.profile_name = p.name;
  p.efficiency = eff;
  // Rows of one framework share its numerics (validation sets them).
  p.fp16_accumulation = !rows.empty() && rows.front()->scenario.options.fp16_accumulation;
  p.fitted_from = absl::StrCat(
      options.provenance, options.provenance.empty() ? "" : "; ",
      "method: Theil-Sen (decode, kernels) + median per-row eta "
      "(prefill, mixed)",
      eff.compute_power_exponent > 0
          ? "; compute power exponent: Theil-Sen slope of log eta_c over "
            "log(W per peak TFLOP/s)"
          : "",
      eff.dequantized_compute_share != 1
          ? "; dequantised share: median eta_c of dequantised-weight rows "
            "over native ones"
          : "",
      eff.kernel.present ? absl::StrCat("; kernel model (FitKernelModel), "
                                        "residuals by regime: ",
                                        KernelModelResiduals(rows, eff.kernel))
                         : "",
      "; rows: ", Describe(rows));
  return p;
}

}  // namespace

namespace {

using FamilyKey = std::pair<std::string, std::string>;  // family, framework
using MemoryKey = std::tuple<std::string, std::string, std::string>;  // + memory

// Decode rows of a family + framework split by device memory technology,
// only where they span more than one technology (an Apple family, all
// unified memory, gets no such level). Only decode rows: the technology
// decides how much of the peak bandwidth a memory-bound step reaches (eta_m
// and the per-step cost), not compute efficiency, so a level fitted on them
// keeps the family's eta_c and per-request overhead.
std::map<MemoryKey, std::vector<const PreparedRow*>> ByMemory(
    const std::vector<const PreparedRow*>& all) {
  std::vector<const PreparedRow*> rows;
  for (const PreparedRow* r : all) {
    if (r->regime == Regime::kDecode) rows.push_back(r);
  }
  std::map<FamilyKey, std::set<std::string>> kinds;
  for (const PreparedRow* r : rows) {
    if (!r->memory_technology.empty()) {
      kinds[{r->family, r->framework_key}].insert(r->memory_technology);
    }
  }
  std::map<MemoryKey, std::vector<const PreparedRow*>> out;
  for (const PreparedRow* r : rows) {
    if (r->memory_technology.empty() ||
        kinds[{r->family, r->framework_key}].size() < 2)
      continue;
    out[{r->family, r->memory_technology, r->framework_key}].push_back(r);
  }
  return out;
}

std::string MemoryProfileName(const MemoryKey& key) {
  const auto& [family, memory, fw] = key;
  return absl::StrCat(family, "-", memory, ".", fw);
}

}  // namespace

std::vector<Profile> FitProfiles(const std::vector<PreparedRow>& rows,
                                 const FitOptions& options) {
  std::map<std::string, std::vector<const PreparedRow*>> by_fw;
  std::map<FamilyKey, std::vector<const PreparedRow*>> by_family;
  std::map<std::pair<std::string, std::string>, std::vector<const PreparedRow*>> by_id;
  std::vector<const PreparedRow*> all;
  for (const PreparedRow& r : rows) {
    by_fw[r.framework_key].push_back(&r);
    by_family[{r.family, r.framework_key}].push_back(&r);
    by_id[{r.row.hardware_id, r.framework_key}].push_back(&r);
    all.push_back(&r);
  }
  std::vector<Profile> out;
  std::map<std::string, engine::Efficiency> fw_eff;
  std::map<FamilyKey, engine::Efficiency> family_eff;
  std::map<MemoryKey, engine::Efficiency> memory_eff;
  for (const auto& [fw, members] : by_fw) {
    fw_eff[fw] = FitEfficiency(members, engine::Efficiency{}, options);
    out.push_back(MakeProfile(absl::StrCat("any.", fw), "", "", fw, fw_eff[fw],
                              members, options));
  }
  for (const auto& [key, members] : by_family) {
    const auto& [family, fw] = key;
    family_eff[key] = FitEfficiency(members, fw_eff[fw], options);
    out.push_back(MakeProfile(absl::StrCat(family, ".", fw), "", family, fw,
                              family_eff[key], members, options));
  }
  for (const auto& [key, members] : ByMemory(all)) {
    const auto& [family, memory, fw] = key;
    memory_eff[key] = FitEfficiency(members, family_eff[{family, fw}], options);
    out.push_back(MakeProfile(MemoryProfileName(key), "", family, fw,
                              memory_eff[key], members, options));
    out.back().memory = memory;
  }
  for (const auto& [key, members] : by_id) {
    const auto& [id, fw] = key;
    const PreparedRow& first = *members.front();
    const MemoryKey mkey{first.family, first.memory_technology, fw};
    const engine::Efficiency& base = memory_eff.contains(mkey)
                                         ? memory_eff[mkey]
                                         : family_eff[{first.family, fw}];
    out.push_back(MakeProfile(absl::StrCat(id, ".", fw), id, "", fw,
                              FitEfficiency(members, base, options), members,
                              options));
  }
  return out;
}

std::vector<RowResult> CrossValidate(const std::vector<PreparedRow>& rows,
                                     const FitOptions& options) {
  std::set<std::string> platforms;
  for (const PreparedRow& r : rows) platforms.insert(r.row.hardware_id);
  std::vector<RowResult> out;
  for (const std::string& platform : platforms) {
    std::vector<const PreparedRow*> held;
    std::set<std::string> frameworks;
    std::set<std::pair<std::string, std::string>> family_fw;
    for (const PreparedRow& r : rows) {
      if (r.row.hardware_id == platform) {
        held.push_back(&r);
        frameworks.insert(r.framework_key);
        family_fw.insert({r.family, r.framework_key});
      }
    }
    // Only the profiles that could match the held-out rows, fitted without them.
    std::vector<Profile> profiles;
    std::map<std::string, engine::Efficiency> fw_eff;
    for (const std::string& fw : frameworks) {
      std::vector<const PreparedRow*> train;
      for (const PreparedRow& r : rows) {
        if (r.row.hardware_id != platform && r.framework_key == fw) train.push_back(&r);
      }
      if (train.empty()) continue;
      fw_eff[fw] = FitEfficiency(train, engine::Efficiency{}, options);
      profiles.push_back(MakeProfile(absl::StrCat("any.", fw), "", "", fw,
                                     fw_eff[fw], train, options));
    }
    std::map<FamilyKey, engine::Efficiency> family_eff;
    std::vector<const PreparedRow*> others;
    for (const PreparedRow& r : rows) {
      if (r.row.hardware_id != platform) others.push_back(&r);
    }
    for (const auto& [family, fw] : family_fw) {
      std::vector<const PreparedRow*> train;
      for (const PreparedRow* r : others) {
        if (r->framework_key == fw && r->family == family) train.push_back(r);
      }
      if (train.empty()) continue;
      family_eff[{family, fw}] = FitEfficiency(
          train, fw_eff.contains(fw) ? fw_eff[fw] : engine::Efficiency{}, options);
      profiles.push_back(MakeProfile(absl::StrCat(family, ".", fw), "", family,
                                     fw, family_eff[{family, fw}], train, options));
    }
    // The held-out platform's memory technology level, from the other
    // platforms of that technology (decided on the training rows alone).
    const std::map<MemoryKey, std::vector<const PreparedRow*>> by_memory =
        ByMemory(others);
    std::set<MemoryKey> wanted;
    for (const PreparedRow* r : held) {
      wanted.insert({r->family, r->memory_technology, r->framework_key});
    }
    for (const MemoryKey& key : wanted) {
      auto it = by_memory.find(key);
      if (it == by_memory.end()) continue;
      const auto& [family, memory, fw] = key;
      auto base = family_eff.find({family, fw});
      profiles.push_back(MakeProfile(
          MemoryProfileName(key), "", family, fw,
          FitEfficiency(it->second,
                        base != family_eff.end() ? base->second : engine::Efficiency{},
                        options),
          it->second, options));
      profiles.back().memory = memory;
    }
    std::shared_ptr<const ProfileStore> store = ProfileStore::FromProfiles(profiles);
    for (const PreparedRow* r : held) out.push_back(EvaluatePrepared(*r, store.get()));
  }
  // Back to file order.
  std::map<std::string, size_t> order;
  for (size_t i = 0; i < rows.size(); ++i) order[rows[i].row.id] = i;
  std::sort(out.begin(), out.end(), [&](const RowResult& a, const RowResult& b) {
    return order[a.id] < order[b.id];
  });
  return out;
}

}  // namespace ridgeline::calibration
