// What does not depend on the step: graph context (formats, executed math
// types, layer groups, the tensor-parallel shard), the workload's prefill
// and decode graphs, the memory footprint and its placement. Analyze and
// StepEvaluator both start here. Internal to the engine.
#pragma once

#include <array>

#include "absl/status/status.h"
#include "operators.h"
#include "placement.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/engine/result.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::engine::internal {

struct Prepared {
  // The model one device holds (its tensor-parallel shard); g.model points
  // here, so a Prepared is built in place and never copied.
  ModelConfig shard;
  GraphContext g;
  OpList prefill;
  OpList dec0;   // decode at batch, no keys read
  OpList slope;  // per key read (KV-dependent ops)
  // Bytes per operand class the footprint needs (what Place placed).
  std::array<double, kOperandClassCount> need{};
  // The same with the whole prompt's prefill activations (no chunking).
  std::array<double, kOperandClassCount> need_whole_prompt{};
  PlacementInfo place;
  MemoryFootprint memory;
  int64_t prefill_chunks = 1;  // prefill steps (chunked prefill)
};

// Builds *p in place for a validated scenario. Footprint: weights, KV at
// the longest context, peak activations (the largest single op's inputs and
// outputs plus the residual stream). Errors: UNIMPLEMENTED when the
// hardware has no peak for the math the formats need.
absl::Status Prepare(const Scenario& s, Prepared* p);

}  // namespace ridgeline::engine::internal
