// What-if suggestions for one analysis: explorations of its neighbourhood,
// computed, not canned. Each re-runs the engine's comparison analysis
// (engine::AnalyzeForComparison) with one change (weights int4 or fp8, KV
// fp8, a batch that reaches the ridge point, unpinning a slow tier) and
// keeps those that help by more than 1 % (or make the model fit), best
// gain first. Thread-safe (no shared state).
#pragma once

#include "ridgeline/engine/result.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::explore {

// The most analyses AddSuggestions runs: 3 formats (int4 weights, fp8
// weights and activations, fp8 KV), 2 batch sizes, 3 unpinned tiers. The
// service's cost cap counts them (service/src/request_limits.cc).
inline constexpr int kMaxSuggestionAnalyses = 8;

// Appends to r->suggestions, best gain first. `r` is the full
// engine::Analyze result of `s` (it reads the bottleneck, the first decode
// step's ops, the ridge point and the fit).
void AddSuggestions(const engine::Scenario& s, engine::AnalysisResult* r);

}  // namespace ridgeline::explore
