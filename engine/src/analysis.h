// The analysis of one validated scenario, in full or reduced to what a
// what-if comparison needs. Internal to the engine; Analyze() is the public
// entry point.
#pragma once

#include "absl/status/statusor.h"
#include "ridgeline/engine/result.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::engine::internal {

// `full`: everything; otherwise only what a suggestion compares (fit,
// TTFT, TPOT and throughput): no per-op results, first/last steps,
// bottleneck, economy or suggestions. `s` must be valid.
absl::StatusOr<AnalysisResult> AnalyzeValidated(const Scenario& s, bool full);

}  // namespace ridgeline::engine::internal
