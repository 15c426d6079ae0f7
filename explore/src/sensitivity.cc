// Sensitivity (sensitivity.h): re-evaluates the point with each axis value
// nudged, through the same engine Analyze the exploration uses.
#include "ridgeline/explore/sensitivity.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "av.h"
#include "ridgeline/engine/analyze.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/explore/evaluate.h"

namespace ridgeline::explore {
namespace {

using internal::Av;

bool IntegerAxis(AxisKind k) {
  return k == AxisKind::kBatch || k == AxisKind::kPrompt ||
         k == AxisKind::kGen || k == AxisKind::kTensorParallel ||
         k == AxisKind::kSpeculativeTokens;
}

// The point as a one-value-per-axis space, with axis `k` set to `v`.
Space PointSpace(const Space& space, const uint64_t* digits, size_t k,
                 double v) {
  Space one;
  one.base = space.base;
  one.base.options.suggestions = false;
  for (size_t j = 0; j < space.axes.size(); ++j) {
    Axis a = space.axes[j];
    if (a.formats.empty()) {
      a.values = {j == k ? v : a.values[digits[j]]};
    } else {
      a.formats = {a.formats[digits[j]]};
    }
    one.axes.push_back(std::move(a));
  }
  return one;
}

absl::StatusOr<engine::AnalysisResult> AnalyzeAt(const Space& one,
                                                 PointOutcome* out) {
  engine::Scenario s = one.base;
  std::vector<uint64_t> zero(one.axes.size(), 0);
  ApplyHardwareAxes(one, zero.data(), &s.hardware);
  ApplyDeploymentAxes(one, zero.data(), &s);
  ASSIGN_OR_RETURN(engine::AnalysisResult r, engine::Analyze(s));
  MetricsFromAnalysis(r, s, out, DieAreaMm2(one, zero.data()));
  return r;
}

std::string PhaseLimit(const engine::StepResult& step) {
  const engine::OpResult* worst = nullptr;
  for (const auto& op : step.ops) {
    if (worst == nullptr || op.seconds > worst->seconds) worst = &op;
  }
  if (worst == nullptr || step.totals.seconds <= 0) return "";
  return absl::StrFormat("%s: %s-bound in %s (%.0f%% of %s time)",
                         Av(engine::PhaseName(step.phase)),
                         Av(engine::BoundName(worst->bound)),
                         Av(engine::OpKindName(worst->kind)),
                         100 * worst->seconds / step.totals.seconds,
                         Av(engine::PhaseName(step.phase)));
}

}  // namespace

absl::StatusOr<SensitivityReport> Sensitivity(const Space& space,
                                              const uint64_t* digits) {
  RETURN_IF_ERROR(ValidateSpace(space));
  SensitivityReport rep;
  PointOutcome at;
  ASSIGN_OR_RETURN(engine::AnalysisResult r,
                   AnalyzeAt(PointSpace(space, digits, space.axes.size(), 0), &at));
  rep.metrics = at.metrics;
  const std::string decode = PhaseLimit(r.decode), prefill = PhaseLimit(r.prefill);
  const std::string longer =
      r.decode.totals.seconds >= r.prefill.totals.seconds ? decode : prefill;
  for (int m = 0; m < kMetricCount; ++m) {
    switch (static_cast<Metric>(m)) {
      case Metric::kDecodeTokS:
      case Metric::kDecodeTokSTotal:
      case Metric::kTpotMs:
        rep.limited_by[m] = decode;
        break;
      case Metric::kPrefillTokS:
      case Metric::kTtftMs:
        rep.limited_by[m] = prefill;
        break;
      case Metric::kPriceUsd:
        rep.limited_by[m] = "fixed: the part's price x devices";
        break;
      case Metric::kGbsPerW:
      case Metric::kTflopsPerW:
      case Metric::kGbsPerMm2:
      case Metric::kTflopsPerMm2:
      case Metric::kUsdPerMm2:
        rep.limited_by[m] = "fixed: the part's figures";
        break;
      default:
        rep.limited_by[m] = absl::StrCat("time: ", longer);
        break;
    }
  }
  for (size_t k = 0; k < space.axes.size(); ++k) {
    const Axis& a = space.axes[k];
    AxisSensitivity s;
    s.axis = a.name;
    s.elasticity.fill(kUnknown);
    s.change_plus_10pct.fill(kUnknown);
    if (!a.formats.empty()) {
      rep.axes.push_back(std::move(s));
      continue;
    }
    const double v = a.values[digits[k]];
    s.value = v;
    double lo = v * 0.99, hi = v * 1.01, up = v * 1.1;
    if (IntegerAxis(a.kind)) {
      lo = std::max(a.kind == AxisKind::kGen ? 0.0 : 1.0, std::round(v * 0.99) == v ? v - 1 : std::round(v * 0.99));
      hi = std::round(v * 1.01) == v ? v + 1 : std::round(v * 1.01);
      up = std::max(v + 1, std::round(v * 1.1));
    }
    s.step_fraction = up / v - 1;
    PointOutcome o_lo, o_hi, o_up;
    // A nudged integer axis may leave the engine's range or the model's
    // divisibility (tensor_parallel): that axis then has no elasticity.
    const bool ok = AnalyzeAt(PointSpace(space, digits, k, lo), &o_lo).ok() &&
                    AnalyzeAt(PointSpace(space, digits, k, hi), &o_hi).ok();
    const bool ok_up = AnalyzeAt(PointSpace(space, digits, k, up), &o_up).ok();
    for (int m = 0; m < kMetricCount; ++m) {
      const double f = at.metrics[m];
      if (ok && lo > 0 && hi > lo && o_lo.metrics[m] > 0 && o_hi.metrics[m] > 0) {
        s.elasticity[m] =
            std::log(o_hi.metrics[m] / o_lo.metrics[m]) / std::log(hi / lo);
      }
      if (ok_up && f != 0 && std::isfinite(f)) {
        s.change_plus_10pct[m] = o_up.metrics[m] / f - 1;
      }
    }
    std::string line = absl::StrFormat("+%.0f%% %s:", 100 * (up / v - 1), a.name);
    bool first = true;
    for (int m = 0; m < kMetricCount; ++m) {
      const double c = s.change_plus_10pct[m];
      if (std::isnan(c) || std::abs(c) < 5e-4) continue;
      absl::StrAppend(&line, first ? " " : ", ",
                      absl::StrFormat("%+.1f%% %s", 100 * c,
                                      Av(MetricName(static_cast<Metric>(m)))));
      first = false;
    }
    if (first) absl::StrAppend(&line, " no metric changes");
    absl::StrAppend(&rep.summary, line, "\n");
    rep.axes.push_back(std::move(s));
  }
  absl::StrAppend(&rep.summary, "limits: ", decode.empty() ? prefill : decode,
                  decode.empty() || prefill.empty() ? "" : "; ", decode.empty() ? "" : prefill,
                  "\n");
  return rep;
}

}  // namespace ridgeline::explore
