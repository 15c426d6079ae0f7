// What-if suggestions: computed, not canned. Each re-runs the analysis with
// one change (weights int4 or fp8, KV fp8, a batch that reaches the ridge
// point, unpinning a slow tier) and keeps those that help. Internal.
#pragma once

#include "ridgeline/engine/result.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::engine::internal {

// Appends to r->suggestions, best gain first. `s` must be valid.
void ComputeSuggestions(const Scenario& s, AnalysisResult* r);

}  // namespace ridgeline::engine::internal
