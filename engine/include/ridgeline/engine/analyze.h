// The entry point of the model.
#pragma once

#include "absl/status/statusor.h"
#include "ridgeline/engine/result.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::engine {

// Validates the scenario, builds the operator graph and evaluates prefill
// and every decode step. "Does not fit" is reported in result.memory, not as
// an error. Thread-safe; allocation-light.
//
// Errors: INVALID_ARGUMENT naming the field (ValidateScenario);
// UNIMPLEMENTED when the hardware has no peak for the math the formats need.
// Overheads: none under the pure roofline (options.pure_roofline, or a
// default Efficiency); otherwise per kernel efficiency.per_kernel_overhead_
// seconds (hardware.kernel_launch_seconds when a named calibration profile
// fitted none), per step efficiency.per_step_overhead_seconds, and once in
// the prefill (so in TTFT) efficiency.per_request_overhead_seconds.
// Cost: O(ops + KV-dependent ops x roof regimes): decode steps are summed
// in closed form. What-if suggestions are explorations and live in
// explore/ (explore::AddSuggestions); Analyze leaves result.suggestions
// empty whatever options.suggestions says.
absl::StatusOr<AnalysisResult> Analyze(const Scenario& scenario);

// The reduced analysis a what-if comparison needs: fit and footprint,
// TTFT, TPOT and throughput; no per-op results, first/last steps,
// bottleneck or economy. Validates like Analyze; same errors.
absl::StatusOr<AnalysisResult> AnalyzeForComparison(const Scenario& scenario);

}  // namespace ridgeline::engine
