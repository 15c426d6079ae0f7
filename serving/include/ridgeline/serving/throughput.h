// Offline maximum throughput: the steady state of continuous batching at
// full concurrency (the load at which benchmarks such as trtllm-bench and
// vLLM's offline throughput run), prefill and decode sharing each step.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "ridgeline/serving/capacity.h"
#include "ridgeline/serving/step_cost.h"

namespace ridgeline::serving {

struct OfflineThroughput {
  // Sequences decoding together in the steady-state step (one micro-batch
  // of one attention rank), and the prefill tokens that keep them fed (each
  // finished request is replaced by one that needs its prompt prefilled:
  // P / (G - 1) prompt tokens per decode token).
  int64_t decode_sequences = 0;
  int64_t prefill_tokens = 0;
  // Micro-batches in flight: min(pipeline stages, max_concurrency); 1
  // without pipeline parallelism.
  int64_t micro_batches = 1;
  // How often each micro-batch comes round: max(micro_batches x interval,
  // step_seconds); step_seconds without pipeline parallelism.
  double cycle_seconds = 0;
  // "kv_capacity", "max_num_seqs" or "max_num_batched_tokens".
  std::string concurrency_limited_by;
  double step_seconds = 0;
  engine::Bound step_bound = engine::Bound::kMemory;
  // "kv_capacity" when the KV cache caps the batch, else the step's roof
  // ("compute", "memory", "interconnect", "overhead").
  std::string limiting_resource;
  double requests_per_second = 0;
  double output_tokens_per_second = 0;             // the replica
  double output_tokens_per_second_per_device = 0;  // / devices
};

// `max_concurrency` is what the KV cache holds (KvCapacity::max_concurrency,
// already capped at max_num_seqs); `devices` the replica's devices
// (engine::ReplicaDevices: stages x max(TP, EP)).
// Steady state, per step of time T with d decode sequences:
//   d = min(max_concurrency, B (G - 1) / (P + G - 1))   (B: token budget)
//   c = d P / (G - 1) prefill tokens,
//   requests/s = d / ((G - 1) T), output tokens/s = G x requests/s.
// G = 1 (prefill only): c = min(B, concurrency x P), requests/s = c / (P T).
// Pipeline (limits.pipeline_stages = S): m = min(S, N) micro-batches of
// floor(N / m) sequences each circulate (d and c per micro-batch, N / m in
// place of N); with L the micro-batch's latency (StepTime::seconds) and I
// its interval, each comes round every T = max(m I, L), so requests/s =
// m d / ((G - 1) T). Attention ranks (e): max_concurrency and the step are
// one rank's; requests/s are multiplied by e.
// Prefix caching: the first `cached_prompt_tokens` (h, 0 <= h < P) of every
// prompt are found cached, so only P - h are computed, at contexts h..P:
// P - h replaces P in d, c and the prefill-only rate; the decode context
// stays P + (G - 1) / 2.
// Errors: INVALID_ARGUMENT for lengths < 1, max_concurrency < 1 or h
// outside [0, P).
absl::StatusOr<OfflineThroughput> MaxThroughput(
    const StepCost& cost, const ServingLimits& limits, int64_t max_concurrency,
    int64_t prompt_tokens, int64_t generated_tokens, int64_t devices,
    int64_t cached_prompt_tokens = 0);

// The prompt tokens a shared prefix of `shared_prefix_tokens` saves every
// request of `prompt_tokens` once cached (kv_cache.h): whole blocks of
// `block_size`, at least one prompt token still computed.
int64_t CachedSharedPrefixTokens(int64_t shared_prefix_tokens,
                                 int64_t prompt_tokens, int64_t block_size);

}  // namespace ridgeline::serving
