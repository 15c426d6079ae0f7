// The latency a new request would see on one serving pod, given the pod's
// live state as a gateway scrapes it (llm-d's latency-predictor features:
// KV-cache use, queue and batch sizes, the request's input length and
// prefix-cache hit). Built on the step model (step_cost.h) of one replica,
// so the answer comes from the same physics as Simulate, not from a fit.
//
// The rules (one replica, vLLM's chunked-prefill scheduler):
//   KV in use      kv_cache_fraction x the replica's KV capacity (tokens),
//                  spread evenly over the running sequences: each decodes
//                  at context used / running.
//   TTFT           the prefill tokens ahead of this request's first token,
//                  waiting x input (a queued request is taken to be as long
//                  as this one: the features do not say) plus this
//                  request's input x (1 - prefix_cache_score), run in steps
//                  of max_num_batched_tokens that also carry one decode
//                  token per running sequence (vLLM counts those against
//                  the budget): full steps, then the remainder, each chunk
//                  at the mid-prompt context.
//   TPOT           the step this request's next token rides in: running + 1
//                  decodes (this one at input + tokens generated), plus one
//                  prefill chunk while requests wait.
// Thread-safe (the step cache is guarded).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "ridgeline/engine/scenario.h"
#include "ridgeline/serving/capacity.h"
#include "ridgeline/serving/step_cost.h"

namespace ridgeline::serving {

// One pod's state and the request asked about (llm-d's field names).
struct PodState {
  double kv_cache_fraction = 0;   // [0, 1]
  int64_t input_tokens = 0;       // >= 0
  int64_t waiting = 0;            // requests queued, >= 0
  int64_t running = 0;            // sequences decoding, >= 0
  int64_t tokens_generated = 0;   // by this request so far, >= 0
  double prefix_cache_score = 0;  // share of the input already cached, [0, 1]
};

struct PodLatency {
  double ttft_seconds = 0;
  double tpot_seconds = 0;
};

class PodLatencyModel {
 public:
  // `scenario` with model, hardware, formats, parallelism and efficiency
  // set (its workload is replaced); `config` the runtime's knobs.
  static absl::StatusOr<std::unique_ptr<PodLatencyModel>> Create(
      engine::Scenario scenario, const ServingConfig& config);

  // On any step model (tests: hand-set step times) with a KV capacity of
  // `kv_capacity_tokens`.
  static absl::StatusOr<std::unique_ptr<PodLatencyModel>> Create(
      std::unique_ptr<StepCost> cost, int64_t kv_capacity_tokens,
      const ServingConfig& config);

  // INVALID_ARGUMENT naming the PodState field out of range.
  absl::StatusOr<PodLatency> Predict(const PodState& state) const;
  // Many at once under one lock; `out` is resized to `states`' size.
  absl::Status PredictMany(std::span<const PodState> states,
                           std::vector<PodLatency>* out) const;

  int64_t kv_capacity_tokens() const { return kv_capacity_tokens_; }
  int64_t max_num_batched_tokens() const { return budget_; }
  int64_t max_num_seqs() const { return max_num_seqs_; }

 private:
  PodLatencyModel() = default;
  absl::StatusOr<PodLatency> PredictLocked(const PodState& state) const;

  std::unique_ptr<StepCost> cost_;
  int64_t kv_capacity_tokens_ = 0;
  int64_t budget_ = 8192;
  int64_t max_num_seqs_ = 256;
  mutable std::mutex mu_;
  mutable std::vector<SequenceInStep> step_;  // reused, under mu_
};

}  // namespace ridgeline::serving
