// Backend::ExploreSensitivity: the Explore space of the request, the point
// at `index`, explore::Sensitivity there, and the report back as proto. No
// math here.
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "explore_spec.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/explore/sensitivity.h"
#include "ridgeline/service/backend.h"

namespace ridgeline::service {

absl::StatusOr<v1::ExploreSensitivityResponse> Backend::ExploreSensitivity(
    const v1::ExploreSensitivityRequest& req) const {
  explore::ExploreSpec spec;
  if (absl::Status st = ExploreSpaceFromRequest(*this, req.space(), &spec);
      !st.ok()) {
    return engine::PrefixFieldPath("space", st);
  }
  const size_t n = spec.objectives.size();
  if (n > static_cast<size_t>(explore::kMaxObjectives)) {
    return engine::WithFieldPath(
        absl::InvalidArgumentError(absl::StrCat(
            "space.objectives: want 0..", explore::kMaxObjectives,
            " objectives (none: every metric), got ", n)),
        "space.objectives");
  }
  if (absl::Status st = explore::ValidateSpace(spec.space); !st.ok()) {
    return engine::PrefixFieldPath("space", st);
  }
  const explore::MixedRadix grid = spec.space.Grid();
  if (req.index() >= grid.total()) {
    return engine::WithFieldPath(
        absl::InvalidArgumentError(absl::StrCat(
            "index: want 0..", grid.total() - 1, " (a grid index of the ",
            grid.total(), "-point space), got ", req.index())),
        "index");
  }
  std::vector<uint64_t> digits(grid.size());
  grid.Decode(req.index(), digits.data());
  ASSIGN_OR_RETURN(ExpensiveCallGate::Slot slot,
                   gate_->Enter("explore sensitivity"));
  ASSIGN_OR_RETURN(explore::SensitivityReport rep,
                   explore::Sensitivity(spec.space, digits.data()));

  // The metrics reported: the objectives as given, or every metric.
  std::vector<std::pair<std::string, int>> metrics;
  for (const explore::Objective& o : spec.objectives) {
    metrics.emplace_back(o.name, static_cast<int>(o.metric));
  }
  if (metrics.empty()) {
    for (int m = 0; m < explore::kMetricCount; ++m) {
      metrics.emplace_back(
          std::string(explore::MetricName(static_cast<explore::Metric>(m))), m);
    }
  }
  v1::ExploreSensitivityResponse out;
  out.set_index(req.index());
  for (size_t k = 0; k < spec.space.axes.size(); ++k) {
    out.add_axis_names(spec.space.axes[k].name);
    out.add_axis_values(spec.space.axes[k].Label(digits[k]));
  }
  for (const auto& [name, m] : metrics) {
    out.add_metric_names(name);
    out.add_metrics(rep.metrics[m]);
    out.add_limited_by(rep.limited_by[m]);
  }
  for (size_t k = 0; k < rep.axes.size(); ++k) {
    const explore::AxisSensitivity& a = rep.axes[k];
    v1::AxisSensitivity* p = out.add_axes();
    p->set_axis(a.axis);
    p->set_value(spec.space.axes[k].Label(digits[k]));
    for (const auto& [name, m] : metrics) {
      p->add_elasticity(a.elasticity[m]);
      p->add_change_plus_10pct(a.change_plus_10pct[m]);
    }
    p->set_step_fraction(a.step_fraction);
  }
  out.set_summary(rep.summary);
  return out;
}

}  // namespace ridgeline::service
