// How many sequences a deployment can hold: the paged KV cache left after
// weights and activations, per device, and the runtime's step budgets.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "ridgeline/engine/scenario.h"
#include "ridgeline/serving/kv_offload.h"
#include "ridgeline/serving/preemption.h"

namespace ridgeline::serving {

// The runtime's scheduler knobs (one replica). Defaults follow vLLM:
// gpu_memory_utilization 0.9 (the share of device memory the runtime may
// use for weights, activations and KV cache), KV blocks of 16 tokens,
// max_num_seqs 256 and a chunked-prefill budget (max_num_batched_tokens) of
// 8192 tokens per step. TensorRT-LLM's in-flight batching has the same
// shape (kv_cache_free_gpu_mem_fraction, max_batch_size, max_num_tokens).
struct ServingConfig {
  double memory_fraction = 0.9;          // (0, 1]
  int64_t max_num_seqs = 256;            // 1..65536
  int64_t max_num_batched_tokens = 8192; // 1..10,000,000
  int64_t block_size = 16;               // tokens per KV block, 1..1024
  // Automatic prefix caching (kv_cache.h), on by default as in vLLM V1.
  bool prefix_caching = true;
  // Where evicted cached blocks go (kv_offload.h); off by default, as in
  // vLLM (offloading is a connector one adds).
  KvOffload kv_offload = KvOffload::kOff;
  // What the scheduler does when the KV cache runs out (scheduler.h): off
  // reserves each request's whole life at admission, so nothing is
  // preempted (TensorRT-LLM's default GUARANTEED_NO_EVICT); recompute
  // allocates blocks as tokens come and preempts by recompute (vLLM V1);
  // swap keeps the preempted KV in the first offload tier (vLLM V0), so it
  // needs kv_offload.
  Preemption preemption = Preemption::kOff;
};
// INVALID_ARGUMENT naming "serving.<field>", the range and the value.
absl::Status ValidateServingConfig(const ServingConfig& c);

// What the simulator and the throughput model need of one replica.
struct ServingLimits {
  int64_t max_num_seqs = 256;
  int64_t max_num_batched_tokens = 8192;
  int64_t kv_capacity_tokens = 0;  // KV slots of the replica (per device)
  int64_t block_size = 16;
  // Pipeline stages (parallelism.pipeline_parallel), 1..256: up to this
  // many micro-batches in flight, each with its own token budget; KV slots
  // and max_num_seqs are the replica's (every stage holds its layers' KV of
  // every running sequence).
  int64_t pipeline_stages = 1;
  // Attention data parallelism (parallelism.expert_parallel with
  // attention_data_parallel), 1..256: the replica runs this many attention
  // ranks alike, each with its own batch, scheduler and KV cache (the
  // limits above are one rank's); see Simulate.
  int64_t attention_ranks = 1;
  bool prefix_caching = true;  // ServingConfig::prefix_caching
  // KvCapacity::offload_tiers; the recompute cost is the replica's own
  // (SimulateDeployment estimates it from the pool's step cost).
  std::vector<OffloadTier> offload_tiers = {};
  RecomputeCost recompute = {};
  Preemption preemption = Preemption::kOff;  // ServingConfig's
};

// KV capacity of one replica (tensor-parallel group). Bytes are per device:
// each device holds its shard of weights and of every sequence's KV. With
// pipeline parallelism per stage (a stage's devices hold only its layers'
// weights and KV: the engine's footprint); with attention data parallelism
// per attention rank (one device: all of the attention and 1 / ep of the
// routed experts, the KV of its own batch only).
struct KvCapacity {
  // Device tiers (HBM/GDDR/LPDDR/DDR/unified), net of inline ECC unless the
  // scenario is the pure roofline.
  double device_memory_bytes = 0;
  double usable_bytes = 0;         // memory_fraction x device memory
  double weights_bytes = 0;
  // Speculative decoding: the draft's weights beside the target's (a
  // head's less what it shares with the target); its KV is in
  // kv_bytes_per_token and state_bytes_per_sequence. 0 without.
  double draft_weights_bytes = 0;
  double activations_bytes = 0;    // peak of a step of the token budget
  // Per device, averaged over the context (the target's and, with
  // speculation, the draft's: it keeps the same tokens).
  double kv_bytes_per_token = 0;
  // Recurrent state (Mamba-2, linear attention) per sequence and device,
  // constant whatever the context; 0 for attention-only models. With it,
  // the state of max_concurrency sequences is reserved before the KV
  // blocks (vLLM's hybrid allocator gives each sequence its state slot
  // next to its attention blocks). Prefix caching of recurrent state is not
  // modelled.
  double state_bytes_per_sequence = 0;
  int64_t kv_capacity_tokens = 0;  // whole blocks only
  int64_t tokens_per_sequence = 0; // prompt + generated - 1, in whole blocks
  int64_t max_concurrency = 0;     // min(KV-limited, max_num_seqs); 0: none fits
  // "kv_capacity" or "max_num_seqs": what bounds max_concurrency.
  std::string limited_by;
  bool fits = false;
  std::string not_fitting;  // why, when !fits
  // From the scenario's parallelism (ServingLimits has the meaning).
  int64_t pipeline_stages = 1;
  int64_t attention_ranks = 1;
  // config.kv_offload's tiers of the hardware, at kv_bytes_per_token.
  std::vector<OffloadTier> offload_tiers = {};
};

// Uses the engine's footprint of `scenario` (its model shard, formats and
// tensor parallelism; scenario.workload is ignored) at `prompt_tokens` +
// `generated_tokens` per sequence.
absl::StatusOr<KvCapacity> ComputeKvCapacity(const engine::Scenario& scenario,
                                             const ServingConfig& config,
                                             int64_t prompt_tokens,
                                             int64_t generated_tokens);

// The limits the simulator uses.
ServingLimits LimitsOf(const ServingConfig& config, const KvCapacity& kv);

}  // namespace ridgeline::serving
