// Power-limited compute: a part whose TDP is small next to its peak rate runs
// its math units below the clock the peak assumes (dynamic power ~ f V^2 with
// V rising with f, so at the power limit the clock goes as P^(1/3)). A
// calibration profile's compute etas hold at kReferenceWattsPerPeakTflops;
// Efficiency::compute_power_exponent scales them by (W per peak TFLOP/s /
// that)^exponent, the one place this formula lives (roofline.h applies it,
// calibration fits the exponent on the same quantity).
//
// Pure functions; thread-safe.
#pragma once

#include <optional>

#include "ridgeline/engine/formats.h"
#include "ridgeline/engine/hardware.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::engine {

inline constexpr double kReferenceWattsPerPeakTflops = 1;

// The part's TDP over its dense peak in `math`, in W per TFLOP/s; nullopt
// when either is unpublished.
std::optional<double> WattsPerPeakTflops(const Hardware& hw, MathType math);

// The same for the math the scenario's weight-bearing matmuls execute in
// (weights, activations, fp16 accumulation and the part's peaks decide it).
std::optional<double> MatmulWattsPerPeakTflops(const Scenario& s);

// The factor on the compute etas: (watts_per_peak_tflops /
// kReferenceWattsPerPeakTflops)^exponent; 1 at exponent 0.
double PowerLimitedScale(double watts_per_peak_tflops, double exponent);

}  // namespace ridgeline::engine
