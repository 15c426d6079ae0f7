// Internal to serving/: the requests of a run, drawn from the config, and
// the weighted percentiles of inter-token gaps (simulate.cc).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "ridgeline/serving/request_state.h"
#include "ridgeline/serving/simulate.h"

namespace ridgeline::serving::internal {

// Lengths first, then arrival gaps, from one stream: the same requests for
// every rate at a seed (common random numbers for the rate search). A
// closed loop's arrivals are all 0 (a finish sets the next one's).
std::vector<RequestState> DrawRequests(const SimulationConfig& config);
// The content of config.shared_prefix_tokens (empty when 0), one chain per
// request of the run.
PromptContent SharedPrefix(const SimulationConfig& config);
// Sessions (config.sessions.turns > 1): every turn's chain over its whole
// sequence (prompt and generated tokens), one unit a KV block, the shared
// prefix first; empty otherwise.
PromptContent SessionContent(const SimulationConfig& config,
                             const std::vector<RequestState>& reqs);

// Values with integer weights (step time x decode tokens in it).
Percentiles SummarizeWeighted(std::vector<std::pair<double, int64_t>>& v);

}  // namespace ridgeline::serving::internal
