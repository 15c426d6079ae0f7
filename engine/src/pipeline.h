// Pipeline parallelism within one step: which decoder layers each stage
// runs, and the steady-state interval between steps (the slowest stage plus
// its send), beside the latency through every stage that the step's summed
// ops give. Internal to the engine.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "operators.h"
#include "roofline.h"

namespace ridgeline::engine::internal {

// Decoder layers each stage runs, per layer group (index as
// GraphContext::groups). Stage s of p runs layers [floor(s L / p),
// floor((s + 1) L / p)): contiguous, sizes differ by at most one (32 layers
// in 3 stages: 10, 11, 11). The embedding runs on the first stage; the final
// norm and LM head on the last.
using StageLayers = std::vector<absl::InlinedVector<int64_t, 4>>;
StageLayers SplitStages(const GraphContext& g, int64_t stages);

struct PipelineInterval {
  double seconds = 0;  // slowest stage + its send + `fixed`
  int64_t stage = 0;   // the slowest stage, 0-based
};

// The interval at which a pipeline of `stages.size()` stages finishes steps
// of this shape once it is full: every stage works on another step, so a
// step leaves every max over stages of (the stage's ops + its send to the
// next stage). A stage's share of a layer group's op is its layers / the
// group's layers (an op's FLOPs, bytes, calls and kernels all scale with its
// layers). `ops`/`slope`/`kv_length` as for TimeStep; `fixed` is paid once
// per stage step (the per-step overhead).
PipelineInterval PipelineIntervalOf(const OpList& ops, const OpList* slope,
                                    int64_t kv_length, double fixed,
                                    const Evaluator& ev,
                                    const StageLayers& stages,
                                    const GraphContext& g);

}  // namespace ridgeline::engine::internal
