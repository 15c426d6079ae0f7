// Step counts for the service's cost cap and the stop error (work.h).
#include "ridgeline/engine/work.h"

#include <algorithm>

namespace ridgeline::engine {

absl::Status StoppedError() {
  return absl::CancelledError(
      "analysis stopped: the caller's deadline passed or it cancelled");
}

bool UsesEfficiencyHook(const Hardware& hw, const Efficiency& efficiency,
                        const AnalysisOptions& options) {
  return !options.pure_roofline && efficiency.profile_name.empty() &&
         static_cast<bool>(hw.efficiency_hook);
}

TimedSteps CountTimedSteps(const Workload& workload, const Hardware& hw,
                           const Efficiency& efficiency,
                           const AnalysisOptions& options) {
  TimedSteps t;
  const int64_t prompt = workload.prompt_tokens;
  // As Prepare chooses (prepare.cc): the asked chunk, else the default
  // one when the prompt is longer (whether it fits is not known here).
  const int64_t chunk = options.prefill_chunk_tokens > 0
                            ? options.prefill_chunk_tokens
                            : kDefaultPrefillChunkTokens;
  if (chunk > 0 && chunk < prompt) t.prefill_chunks = (prompt + chunk - 1) / chunk;
  if (UsesEfficiencyHook(hw, efficiency, options)) {
    t.walked_decode_steps = std::max<int64_t>(workload.generated_tokens - 1, 0);
  }
  return t;
}

}  // namespace ridgeline::engine
