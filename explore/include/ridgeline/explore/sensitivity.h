// Sensitivity at one point of a space: the elasticity of every metric to
// every numeric axis (d ln metric / d ln axis, by a central difference of
// +-1 % on the axis value), the change a +10 % step makes, and the roof
// that limits each metric there ("+10 % bandwidth_gbs: +9.3 % decode_tok_s,
// -0.4 % j_per_token; decode is memory-bound in ffn_down").
// Integer axes (batch, prompt, gen, tensor_parallel) step to the nearest
// integers (at least +-1, within range), and the elasticity uses the values
// actually taken; format axes are categorical and have none (NaN).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ridgeline/explore/objectives.h"
#include "ridgeline/explore/space.h"

namespace ridgeline::explore {

struct AxisSensitivity {
  std::string axis;         // the axis name as given
  double value = 0;         // at the point
  MetricValues elasticity;  // NaN: unknown metric or categorical axis
  MetricValues change_plus_10pct;  // relative change, 0.093 = +9.3 %
  // The step change_plus_10pct took: 0.1, or more where an integer axis
  // rounds (batch 4 -> 5: 0.25); NaN for format axes.
  double step_fraction = kUnknown;
};

struct SensitivityReport {
  MetricValues metrics;  // at the point
  std::vector<AxisSensitivity> axes;
  // Per metric, what limits it at the point: "decode: memory-bound in
  // ffn_down (62 % of decode time)", "fixed: the part's price", ...
  std::array<std::string, kMetricCount> limited_by;
  std::string summary;  // one line per axis, as in the header comment
};

// `digits`: the point's axis digits in space.Grid().
absl::StatusOr<SensitivityReport> Sensitivity(const Space& space,
                                              const uint64_t* digits);

}  // namespace ridgeline::explore
