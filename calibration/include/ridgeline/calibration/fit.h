// Fitting calibration profiles from measurement rows, and leave-one-platform-
// out cross-validation. Pure functions of their inputs; they call
// engine::Analyze many times (seconds, not minutes, for a few hundred rows).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ridgeline/calibration/profiles.h"
#include "ridgeline/calibration/validation.h"

namespace ridgeline::calibration {

struct FitOptions {
  double min_efficiency = 0.01;   // eta is clamped to [min_efficiency, 1]
  std::string provenance;         // copied into Profile::fitted_from
  // Kernel tables (every row a kernel row): also fit the kernel model
  // (FitKernelModel) into Efficiency::kernel.
  bool kernel_model = false;
};

// The kernel model of kernel rows (engine/kernel_model.h), per class:
//   per-call cost  = the Theil-Sen intercept of measured vs bound seconds of
//                    the rows whose bound is under a tenth of the shortest
//                    measurement (they sit on the floor), clamped into
//                    [0, shortest]; fp8 GEMMs: their floor minus the 16-bit
//                    one is the activation quantisation;
//   efficiencies   = per GEMM regime (M <= 16, <= 128, > 128) and for
//                    attention / memory streams: median of roof / (measured -
//                    floor) over the rows that roof dominates above the floor;
//   attention      = its per-call costs (16-bit and 8-bit KV), memory
//                    efficiency and costs per CTA and per query head
//                    together, by WeightedLeastSquares for relative error
//                    on the memory-bound rows (floors clamped into [0,
//                    shortest call of their KV format]);
//   shape          = the wave tail share (0, .25, .5, .75, 1) and the CTA
//                    bandwidth share (off, .5, 1, 2, 4) with the smallest
//                    median error.
engine::KernelModel FitKernelModel(const std::vector<const PreparedRow*>& rows,
                                   double min_eta);
// "gemm m<=16: n=.. median ..%; ...": the model's error on the rows by
// class and regime (the fit's residuals by regime).
std::string KernelModelResiduals(const std::vector<const PreparedRow*>& rows,
                                 const engine::KernelModel& model);

// A line y = intercept + slope * x through (x, y) by Theil-Sen (median of
// pairwise slopes, then median residual): robust to a few wild rows.
struct Line {
  double slope = 1;
  double intercept = 0;
};
Line TheilSen(const std::vector<double>& x, const std::vector<double>& y);

// (eta, overhead) from measured = overhead + bound / eta: the Theil-Sen line
// of measured (y) against bound (x) seconds, its intercept clamped into
// [0, min y] (rows on a fixed-cost floor have an intercept close to their
// shortest time: that floor is the fit's result, not noise), eta = 1 / slope
// clamped into [min_eta, 1]. A slope below 1 (faster than the bound) gives
// eta 1 and the median of measured - bound as the overhead.
struct LinearFit {
  double eta = 1;
  double overhead_seconds = 0;
};
LinearFit FitOverheadAndEta(const std::vector<double>& x,
                            const std::vector<double>& y, double min_eta);

// Weighted least squares: the coefficients c minimising
// sum_i w_i (features_i . c - y_i)^2, by the normal equations (a few
// unknowns). With w = 1 / measured^2 the residuals count relative to each
// row's own time, so a 10 us call off by 3 us weighs as much as a 1 ms call
// off by 0.3 ms. nullopt when the rows do not pin every coefficient.
std::optional<std::vector<double>> WeightedLeastSquares(
    const std::vector<std::vector<double>>& features,
    const std::vector<double>& y, const std::vector<double>& w);

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
