// StepCost on the engine's mixed-step evaluator (StepEvaluator::Step): one
// forward pass over the step's real mix of decode tokens and prefill chunks,
// each sequence at its own context.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ridgeline/engine/scenario.h"
#include "ridgeline/engine/step.h"
#include "ridgeline/serving/step_cost.h"

namespace ridgeline::serving {

// Caches step times by the step's shape: decode sequences are folded to
// their count at their mean context (rounded to kContextQuantum; the
// engine's attention sums keys over sequences, so the fold is exact for
// full attention and, min(c, window) being concave, no faster for sliding
// layers), each prefill chunk by its context (rounded) and new tokens
// (rounded up to kContextQuantum). A simulation revisits the same shapes
// many times. Thread-compatible.
class EngineStepCost final : public StepCost {
 public:
  static constexpr int64_t kContextQuantum = 16;

  // `scenario.workload` sets the placement (the KV cache at its longest
  // context); pass the serving batch and lengths. With
  // scenario.efficiency.min_speed_fraction f > 0 each step takes at most
  // the pure roofline's step / f (a calibrated profile's floor).
  static absl::StatusOr<std::unique_ptr<EngineStepCost>> Create(
      const engine::Scenario& scenario);

  absl::StatusOr<StepTime> Time(
      std::span<const SequenceInStep> sequences) const override {
    return TimeFolded(sequences, {});
  }
  bool folds_decodes() const override { return true; }
  absl::StatusOr<StepTime> TimeFolded(std::span<const SequenceInStep> sequences,
                                      FoldedDecodes folded) const override;

  // The workload whose placement matches a serving replica: the KV cache of
  // `sequences` sequences at prompt + generated - 1 tokens, and activations
  // of one step of about `step_tokens` tokens (chunked prefill), not of a
  // whole-batch prefill (which would spill activations off the device).
  static engine::Workload ServingWorkload(int64_t sequences,
                                          int64_t prompt_tokens,
                                          int64_t generated_tokens,
                                          int64_t step_tokens);

  int64_t cache_size() const { return static_cast<int64_t>(cache_.size()); }

 private:
  EngineStepCost(engine::StepEvaluator evaluator,
                 std::optional<engine::StepEvaluator> bound,
                 double min_speed_fraction)
      : evaluator_(std::move(evaluator)),
        bound_(std::move(bound)),
        min_speed_fraction_(min_speed_fraction) {}
  engine::StepEvaluator evaluator_;
  // The pure roofline, when a floor applies.
  std::optional<engine::StepEvaluator> bound_;
  double min_speed_fraction_ = 0;
  // Key: {decode count, decode context, then (context, new tokens) per
  // prefill chunk, sorted}.
  mutable absl::flat_hash_map<std::vector<int64_t>, StepTime> cache_;
  mutable std::vector<int64_t> key_;                 // reused per call
  // The last decode-only step: its count, the summed contexts
  // [from, to) that share its key, and its time.
  struct LastDecode {
    int64_t count = -1;
    int64_t context_sum_from = 0, context_sum_to = 0;
    StepTime time;
  };
  mutable LastDecode last_decode_;
  mutable std::vector<engine::StepSequence> batch_;  // reused per miss
};

}  // namespace ridgeline::serving
