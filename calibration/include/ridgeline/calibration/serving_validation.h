// Validation on serving measurements (data/measurements/serving.csv: the
// calibration.csv columns plus `concurrency`): published throughput and
// latency at the load where the runtime picks the batch, checked against
// the serving model (ridgeline::serving) with its pure-roofline bound.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "ridgeline/calibration/commands.h"
#include "ridgeline/calibration/measurements.h"
#include "ridgeline/calibration/profiles.h"
#include "ridgeline/calibration/validation.h"

namespace ridgeline::calibration {

// True when the CSV header has a `concurrency` column.
bool IsServingMeasurements(const std::filesystem::path& path);
// True when any of the files has one: the set is then serving data, and the
// rows of a file without the column are static batches.
bool IsServingMeasurements(const std::filesystem::path& first,
                           const std::vector<std::filesystem::path>& more);

// The runtime a serving profile is for: FrameworkKey() without a platform
// build suffix ("vllm-rocm-0.8.5" -> "vllm", "tensorrt-llm-0.14-triton" ->
// "tensorrt-llm"). vLLM built for ROCm is still vLLM; the platform is the
// hardware, which leave-one-platform-out holds out.
std::string ServingFrameworkKey(std::string_view framework);

struct ServingRowResult {
  RowResult row;      // predicted = leave-one-platform-out fit, when any
  std::string mode;   // "offline-max", "poisson 2/s", "static batch", ...
  int64_t replicas = 1;  // device_count / tensor_parallel (data parallel)
};

struct ServingSummary {
  int rows = 0;
  int evaluated = 0;
  int inside_bound = 0;  // not beating the bound by > kSoundnessTolerance
  int max_rows_cv = 0;   // max-throughput rows with a LOPO prediction
  std::optional<double> max_cv_median_ape;
  // Per framework key: rows, LOPO median APE, efficiencies fitted on all.
  struct Framework {
    std::string key;
    int rows = 0;  // max-throughput rows with a LOPO prediction
    std::optional<double> median_ape;  // LOPO, max-throughput rows
    double eta_all = 0;         // compute efficiency fitted on all rows
    double eta_memory_all = 0;  // memory efficiency fitted on all rows
    // Share of the link bandwidth its collectives reach, fitted on all rows.
    double eta_link_all = 1;
    // Seconds per collective call, fitted on all rows
    // (Efficiency::collective_call_seconds).
    double collective_call_all = 0;
    // Per-step overhead fitted on all rows, seconds: the runtime's fixed
    // cost per forward pass (scheduling, sampling, launches, the
    // collectives' latency), fitted beside the efficiencies so a
    // small-batch row's fixed cost is not read as low bandwidth.
    double step_overhead_all = 0;
    // Tensor-parallel degrees of the fit rows, ascending.
    std::vector<int64_t> tensor_parallel;
    // The slowest share of the bound's speed any fit row measured
    // (measured / bound for tok/s, bound / measured for times): the floor
    // applied where the profile extrapolates.
    double min_speed_fraction = 1;
    int max_rows = 0;           // max-throughput rows in the fit
    int static_rows = 0;        // static-batch rows in the fit
    std::vector<std::string> platforms;  // hardware ids of the fit rows
    // Median error of the fit rows at the all-rows fit: in-sample.
    std::optional<double> in_sample_median_ape;
    std::optional<double> in_sample_max_median_ape;  // its max rows only
  };
  std::vector<Framework> frameworks;
};

// The per-step overheads (seconds) the serving fit tries beside the
// efficiencies, ascending from 0.
const std::vector<double>& ServingStepOverheadGrid();
// The costs per collective call (seconds, Efficiency::
// collective_call_seconds) it tries beside the link share, ascending from 0.
const std::vector<double>& ServingCollectiveCallGrid();

// Evaluates every row: blank batch with concurrency "max" through the
// offline maximum-throughput model; "rate=R/s" through the Poisson
// simulation at R / replicas per replica; "N" through N clients; a stated
// batch with blank concurrency as a static batch (the calibration.csv
// path). Replicas = device_count / tensor_parallel.
std::vector<ServingRowResult> EvaluateServingRows(
    const std::vector<MeasurementRow>& rows,
    const std::vector<std::string>& concurrency, const HardwareLookup& lookup,
    const ProfileStore* profiles, ServingSummary* summary);

// The serving profiles of a fit: one per framework key with at least one
// max-throughput row and two fit rows (two efficiencies), named
// "serving.<key>", keyed by framework alone, with the efficiencies fitted on
// all its rows. Its fitted_from gives the leave-one-platform-out error when
// the rows span several platforms, and says "in-sample" (no cross-
// validation) when they come from one.
// `source` names the measurements in fitted_from.
std::vector<Profile> ServingProfiles(const ServingSummary& summary,
                                     const std::string& source);

// `ridgeline calibrate --measurements serving.csv --out DIR`: writes
// DIR/serving/serving.<framework>.json (ProfileStore::serving() loads them).
int CalibrateServing(const CalibrateOptions& options, std::ostream& out,
                     std::ostream& err);

// `ridgeline validate --measurements serving.csv`.
int ValidateServing(const ValidateOptions& options, std::ostream& out,
                    std::ostream& err);

}  // namespace ridgeline::calibration
