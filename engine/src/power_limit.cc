#include "ridgeline/engine/power_limit.h"

#include <cmath>

namespace ridgeline::engine {

std::optional<double> WattsPerPeakTflops(const Hardware& hw, MathType math) {
  const std::optional<double>& peak =
      hw.peak_ops_per_second[static_cast<int>(math)];
  if (!hw.tdp_watts.has_value() || !peak.has_value() || !(*peak > 0)) {
    return std::nullopt;
  }
  return *hw.tdp_watts / (*peak / 1e12);
}

std::optional<double> MatmulWattsPerPeakTflops(const Scenario& s) {
  absl::StatusOr<MathType> wanted =
      MatmulMathType(s.precision.weights, s.precision.activations);
  if (!wanted.ok()) return std::nullopt;
  const std::optional<MathType> executed = ExecutedMathType(
      s.hardware.peak_ops_per_second,
      WithAccumulation(*wanted, s.options.fp16_accumulation));
  if (!executed.has_value()) return std::nullopt;
  return WattsPerPeakTflops(s.hardware, *executed);
}

double PowerLimitedScale(double watts_per_peak_tflops, double exponent) {
  if (exponent == 0) return 1;
  return std::pow(watts_per_peak_tflops / kReferenceWattsPerPeakTflops,
                  exponent);
}

}  // namespace ridgeline::engine
