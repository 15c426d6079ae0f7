// What an analysis costs the engine, counted before it runs, and what it
// returns when AnalysisOptions::should_stop stopped it. The service's
// request-cost cap (service/src/request_limits.cc) reads the counts; its
// frontends recognise the stop by its code. Plain functions; thread-safe.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "ridgeline/engine/hardware.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::engine {

// CANCELLED, "analysis stopped: the caller's deadline passed or it
// cancelled": what every analysis, step evaluation or suggestion pass
// stopped by should_stop returns (the caller knows which of the two).
absl::Status StoppedError();

// Whether the plugin's efficiency hook times the ops: not pure_roofline,
// no calibration profile applied, and the hardware has a hook. The hook
// makes an op's time depend on its shape, so the decode is then walked
// step by step instead of summed in closed form.
bool UsesEfficiencyHook(const Hardware& hw, const Efficiency& efficiency,
                        const AnalysisOptions& options);

// The steps one analysis times one graph at a time; the engine's work per
// analysis grows with these (each builds or times every layer group's
// ops), not with the tokens in a step.
struct TimedSteps {
  // Prefill steps: ceil(prompt / chunk) with options.prefill_chunk_tokens
  // = chunk; with 0 (the default) the default chunking's count, which
  // applies only when the prompt's activations do not fit (so an upper
  // bound before placement); 1 unchunked.
  int64_t prefill_chunks = 1;
  // Decode steps walked one by one: generated - 1 under an efficiency hook
  // (UsesEfficiencyHook), else 0 (closed form).
  int64_t walked_decode_steps = 0;
};
// For a validated workload and options on `hw` with `efficiency` applied.
TimedSteps CountTimedSteps(const Workload& workload, const Hardware& hw,
                           const Efficiency& efficiency,
                           const AnalysisOptions& options);

}  // namespace ridgeline::engine
