// Fitting calibration profiles from measurement rows, and leave-one-platform-
// out cross-validation. Pure functions of their inputs; they call
// engine::Analyze many times (seconds, not minutes, for a few hundred rows).
#pragma once

#include <string>
#include <vector>

#include "ridgeline/calibration/profiles.h"
#include "ridgeline/calibration/validation.h"

namespace ridgeline::calibration {

struct FitOptions {
  double min_efficiency = 0.01;   // eta is clamped to [min_efficiency, 1]
  std::string provenance;         // copied into Profile::fitted_from
};

// A line y = intercept + slope * x through (x, y) by Theil-Sen (median of
// pairwise slopes, then median residual): robust to a few wild rows.
struct Line {
  double slope = 1;
  double intercept = 0;
};
Line TheilSen(const std::vector<double>& x, const std::vector<double>& y);

// Fits one efficiency to rows that share hardware (or family) and framework.
// Parameters the rows cannot pin down keep their value from `base`:
//   kernel rows  -> per-kernel overhead (median of Theil-Sen intercepts of
//                   measured vs bound seconds, one line per op class and
//                   roof); eta_c of each class from its compute-bound rows,
//                   eta_m from its memory-bound rows (membw streams:
//                   elementwise), median of bound / (measured - overhead);
//   decode rows  -> memory eta (all classes) and per-step overhead:
//                   Theil-Sen of measured vs bound seconds;
//   prefill rows -> per-request overhead from the memory-bound ones (what
//                   the memory roof and per-step overhead leave, median);
//                   compute eta (all classes) from the others: per row the
//                   eta at which the engine matches it (bisection), median;
//   mixed rows   -> memory eta the same way, only when no decode rows
//                   (alternated with the prefill fit until both settle).
engine::Efficiency FitEfficiency(const std::vector<const PreparedRow*>& rows,
                                 const engine::Efficiency& base,
                                 const FitOptions& options);

// Profiles at three levels: per framework ("any.<fw>"), per family and
// framework ("<family>.<fw>"), per hardware id and framework
// ("<hardware_id>.<fw>"); each level starts from the one above.
std::vector<Profile> FitProfiles(const std::vector<PreparedRow>& rows,
                                 const FitOptions& options);

// For each platform (hardware id): fit without its rows, predict them.
std::vector<RowResult> CrossValidate(const std::vector<PreparedRow>& rows,
                                     const FitOptions& options);

}  // namespace ridgeline::calibration
