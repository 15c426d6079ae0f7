// Point evaluation (evaluate.h).
#include "ridgeline/explore/evaluate.h"

#include <cmath>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ridgeline/engine/analyze.h"
#include "ridgeline/engine/design_point.h"
#include "ridgeline/engine/status_macros.h"

namespace ridgeline::explore {

void MetricsFromAnalysis(const engine::AnalysisResult& r,
                         const engine::Scenario& s, PointOutcome* out,
                         double die_area_mm2) {
  MetricValues& m = out->metrics;
  m.fill(kUnknown);
  auto set = [&](Metric k, double v) { m[static_cast<int>(k)] = v; };
  const engine::Hardware& hw = s.hardware;
  const double devices = static_cast<double>(s.parallelism.tensor_parallel);
  out->fits = r.memory.fits;
  out->spilled = false;
  for (bool off : r.memory.off_device) out->spilled = out->spilled || off;
  double need = 0, have = 0;
  for (double b : r.memory.required_bytes) need += b;
  for (const auto& t : hw.tiers) have += t.capacity_bytes;
  out->memory_overflow = have > 0 && need > have ? (need - have) / have : 0;
  if (s.workload.generated_tokens > 1) {
    set(Metric::kDecodeTokS, r.decode_tokens_per_second_per_sequence);
    set(Metric::kDecodeTokSTotal, r.decode_tokens_per_second_total);
    set(Metric::kTpotMs, r.tpot_mean_seconds * 1e3);
  }
  set(Metric::kPrefillTokS, r.prefill_tokens_per_second);
  set(Metric::kTtftMs, r.ttft_seconds * 1e3);
  set(Metric::kE2eMs, r.e2e_seconds * 1e3);
  const engine::Economy& e = r.economy;
  if (e.joules_per_output_token.has_value())
    set(Metric::kJPerToken, *e.joules_per_output_token);
  if (e.usd_per_million_output_tokens.has_value())
    set(Metric::kUsdPerMtoken, *e.usd_per_million_output_tokens);
  if (e.g_co2e_per_million_output_tokens.has_value())
    set(Metric::kGco2PerMtoken, *e.g_co2e_per_million_output_tokens);
  if (hw.price_usd.has_value()) set(Metric::kPriceUsd, *hw.price_usd * devices);
  if (e.prefill_joules.has_value() && e.decode_joules.has_value() &&
      r.e2e_seconds > 0) {
    set(Metric::kPowerW,
        (*e.prefill_joules + *e.decode_joules) / r.e2e_seconds);
  }
  if (hw.tdp_watts.has_value() && *hw.tdp_watts > 0) {
    const int t = DeviceMemoryTier(hw);
    if (t >= 0) {
      set(Metric::kGbsPerW,
          hw.tiers[t].read_bandwidth_bytes_per_second / 1e9 / *hw.tdp_watts);
    }
    const double peak = ReferencePeak(hw.peak_ops_per_second);
    if (peak > 0) set(Metric::kTflopsPerW, peak / 1e12 / *hw.tdp_watts);
  }
  if (die_area_mm2 > 0) {  // false for NaN: no stated area
    const int t = DeviceMemoryTier(hw);
    if (t >= 0) {
      set(Metric::kGbsPerMm2,
          hw.tiers[t].read_bandwidth_bytes_per_second / 1e9 / die_area_mm2);
    }
    const double peak = ReferencePeak(hw.peak_ops_per_second);
    if (peak > 0) set(Metric::kTflopsPerMm2, peak / 1e12 / die_area_mm2);
    if (hw.price_usd.has_value()) {
      set(Metric::kUsdPerMm2, *hw.price_usd / die_area_mm2);
    }
  }
}

struct SpaceEvaluator::Impl {
  const Space* space = nullptr;
  MixedRadix grid;
  std::vector<uint64_t> digits;
  // Deployment axes (they change the graph) and the model per combination:
  // the graph is built once per combination, then every hardware point
  // only re-places and re-times it (engine::DesignPointModel).
  std::vector<size_t> deployment_axes;
  std::unordered_map<uint64_t, std::unique_ptr<engine::DesignPointModel>>
      models;
  engine::AnalysisResult result;
  // Axes that enter the timing (all but price, board power and die area):
  // a point whose timing digits equal the last evaluated point's (same
  // model) only re-prices that result (DesignPointModel::Reprice, equal bit
  // for bit). Grid order makes neighbours share them when such axes vary
  // fastest.
  std::vector<size_t> timing_axes;
  std::vector<uint64_t> last_timing;
  engine::DesignPointModel* last_model = nullptr;
  bool last_valid = false;

  absl::StatusOr<engine::DesignPointModel*> ModelFor(const uint64_t* digits) {
    uint64_t key = 0;
    for (size_t k : deployment_axes) key = key * space->axes[k].size() + digits[k];
    auto it = models.find(key);
    if (it != models.end()) return it->second.get();
    if (models.size() >= 4096) {  // bounded memory
      models.clear();
      last_valid = false;
    }
    engine::Scenario s = space->base;
    s.options.suggestions = false;
    ApplyDeploymentAxes(*space, digits, &s);
    ASSIGN_OR_RETURN(engine::DesignPointModel m,
                     engine::DesignPointModel::Create(s));
    auto owned = std::make_unique<engine::DesignPointModel>(std::move(m));
    engine::DesignPointModel* raw = owned.get();
    models.emplace(key, std::move(owned));
    return raw;
  }
};

SpaceEvaluator::SpaceEvaluator(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
SpaceEvaluator::SpaceEvaluator(SpaceEvaluator&&) noexcept = default;
SpaceEvaluator& SpaceEvaluator::operator=(SpaceEvaluator&&) noexcept = default;
SpaceEvaluator::~SpaceEvaluator() = default;

absl::StatusOr<SpaceEvaluator> SpaceEvaluator::Create(const Space& space) {
  RETURN_IF_ERROR(ValidateSpace(space));
  auto impl = std::make_unique<Impl>();
  impl->space = &space;
  impl->grid = space.Grid();
  impl->digits.resize(space.axes.size());
  for (size_t k = 0; k < space.axes.size(); ++k) {
    const AxisKind kind = space.axes[k].kind;
    if (!space.axes[k].hardware()) impl->deployment_axes.push_back(k);
    if (kind != AxisKind::kTdp && kind != AxisKind::kPrice &&
        kind != AxisKind::kDieArea) {
      impl->timing_axes.push_back(k);
    }
  }
  impl->last_timing.resize(impl->timing_axes.size());
  return SpaceEvaluator(std::move(impl));
}

engine::Scenario SpaceEvaluator::ScenarioAt(const uint64_t* digits) const {
  engine::Scenario s = impl_->space->base;
  s.options.suggestions = false;
  ApplyHardwareAxes(*impl_->space, digits, &s.hardware);
  ApplyDeploymentAxes(*impl_->space, digits, &s);
  return s;
}

absl::Status SpaceEvaluator::Evaluate(uint64_t index, PointOutcome* out) {
  impl_->grid.Decode(index, impl_->digits.data());
  return EvaluateDigits(impl_->digits.data(), out);
}

absl::Status SpaceEvaluator::EvaluateDigits(const uint64_t* digits,
                                            PointOutcome* out) {
  Impl& im = *impl_;
  ASSIGN_OR_RETURN(engine::DesignPointModel * m, im.ModelFor(digits));
  ApplyHardwareAxes(*im.space, digits, &m->hardware());
  bool same = im.last_valid && m == im.last_model;
  for (size_t j = 0; same && j < im.timing_axes.size(); ++j) {
    same = im.last_timing[j] == digits[im.timing_axes[j]];
  }
  im.last_valid = false;
  RETURN_IF_ERROR(same ? m->Reprice(&im.result) : m->Evaluate(&im.result));
  for (size_t j = 0; j < im.timing_axes.size(); ++j) {
    im.last_timing[j] = digits[im.timing_axes[j]];
  }
  im.last_model = m;
  im.last_valid = true;
  MetricsFromAnalysis(im.result, m->scenario(), out,
                      DieAreaMm2(*im.space, digits));
  return absl::OkStatus();
}

}  // namespace ridgeline::explore
