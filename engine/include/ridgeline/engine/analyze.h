// The entry point of the model.
#pragma once

#include "absl/status/statusor.h"
#include "ridgeline/engine/result.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::engine {

// Validates the scenario, builds the operator graph and evaluates prefill
// and every decode step. "Does not fit" is reported in result.memory, not as
// an error. Thread-safe; allocation-light.
absl::StatusOr<AnalysisResult> Analyze(const Scenario& scenario);

}  // namespace ridgeline::engine
