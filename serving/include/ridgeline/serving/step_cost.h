// What the serving model asks of a step model: the time of one forward pass
// over a real batch (sequences at their own context, decode tokens and
// prefill chunks mixed). The simulator and the throughput model only see
// this interface, so tests run them with hand-set step times and the
// service runs them on the engine (engine_step_cost.h).
#pragma once

#include <cstdint>
#include <span>

#include "absl/status/statusor.h"
#include "ridgeline/engine/result.h"

namespace ridgeline::serving {

// One sequence in a step.
struct SequenceInStep {
  int64_t context_tokens = 0;  // already in its KV cache before the step
  int64_t new_tokens = 1;      // 1: a decode token; N: a prefill chunk
};

struct StepTime {
  // Latency: from the step's start until its tokens exist (with pipeline
  // parallelism, through every stage in turn and their sends).
  double seconds = 0;
  engine::Bound bound = engine::Bound::kMemory;  // the roof that dominates
  // Pipeline parallelism: the interval at which a full pipeline takes the
  // next micro-batch (the slowest stage + its send + the per-step overhead,
  // engine::StepTiming::pipeline_interval_seconds); in (0, seconds].
  // 0 = `seconds` (one stage).
  double interval_seconds = 0;
};

// Decode sequences given by their count and summed context (a
// DecodeCohort's), besides those listed one by one.
struct FoldedDecodes {
  int64_t count = 0;
  int64_t context_sum = 0;  // their tokens already in the KV cache
};

// Implementations must be thread-compatible (one simulation at a time per
// object); they may cache.
class StepCost {
 public:
  virtual ~StepCost() = default;
  // `sequences` is non-empty. Errors: the step model's (INVALID_ARGUMENT
  // naming the field, UNIMPLEMENTED).
  virtual absl::StatusOr<StepTime> Time(
      std::span<const SequenceInStep> sequences) const = 0;

  // Whether the step time depends on the decode sequences (new_tokens 1)
  // only through their count and summed context, so that TimeFolded
  // takes decodes folded: the replica then steps its decoders as a cohort.
  virtual bool folds_decodes() const { return false; }
  // `sequences` plus `folded` decodes (non-empty together); only called
  // when folds_decodes(). The default: Time(sequences) when none is
  // folded, else FAILED_PRECONDITION.
  virtual absl::StatusOr<StepTime> TimeFolded(
      std::span<const SequenceInStep> sequences, FoldedDecodes folded) const;
};

}  // namespace ridgeline::serving
