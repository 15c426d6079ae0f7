// StepCost on the engine's StepEvaluator.
//
// INTERIM ADAPTER: the engine's step API times uniform steps only (a decode
// batch at one context, a prefill of equal prompts). Until the mixed-step
// API lands (issue 10), a mixed step is approximated as
//   max(decode(d, 1), prefill(1, c)) + (decode(d, ctx) - decode(d, 1))
// with d decode sequences at their mean context ctx and c prefill tokens in
// one chunk: the weight-bound part is shared (one pass reads the weights
// once, so the larger of the two), the decode sequences' context-dependent
// attention comes on top. Prefill chunks see no prior context. The weight
// part is no more than the real step's; the attention part is added where a
// fused mixed step could overlap it with the prefill's attention compute,
// so the approximation can exceed the real step by at most the smaller of
// the two (validation: the serving bound holds on every evaluated row).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ridgeline/engine/scenario.h"
#include "ridgeline/engine/step.h"
#include "ridgeline/serving/step_cost.h"

namespace ridgeline::serving {

// Caches step times by (decode sequences, mean context rounded to
// kContextQuantum, prefill tokens rounded up to kContextQuantum): a
// simulation revisits the same shapes many times. Thread-compatible.
class EngineStepCost final : public StepCost {
 public:
  static constexpr int64_t kContextQuantum = 16;

  // `scenario.workload` sets the placement (the KV cache at its longest
  // context); pass the serving batch and lengths.
  static absl::StatusOr<std::unique_ptr<EngineStepCost>> Create(
      const engine::Scenario& scenario);

  absl::StatusOr<StepTime> Time(
      std::span<const SequenceInStep> sequences) const override;

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
  explicit EngineStepCost(engine::StepEvaluator evaluator)
      : evaluator_(std::move(evaluator)) {}
  absl::StatusOr<StepTime> Compute(int64_t decode, int64_t context,
                                   int64_t prefill) const;

  engine::StepEvaluator evaluator_;
  mutable absl::flat_hash_map<std::tuple<int64_t, int64_t, int64_t>, StepTime>
      cache_;
};

}  // namespace ridgeline::serving
