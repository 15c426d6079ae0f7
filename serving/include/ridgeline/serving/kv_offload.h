// KV offload tiers (issue 23): where a replica's evicted prefix-cache
// blocks go instead of being dropped, and the rule that brings one back.
//
// The tiers are the ones the hardware plugin describes below device memory,
// in its order: `host` takes the host-link tiers (host DRAM over PCIe or
// C2C, CXL), `all` also flash. Each holds capacity / KV bytes per token per
// device tokens, in whole blocks (each device of the replica keeps its own
// KV shard in its own share of the tier, as in device memory). A block comes
// back at the tier's read bandwidth; writes of evicted blocks are taken to
// overlap the steps (vLLM's and LMCache's offload is asynchronous) and cost
// nothing. A swap-out (preemption by swap, scheduler.h) is synchronous, as
// in vLLM V0: it is written at the write bandwidth in the step that
// preempts.
//
// The rule, per block: a block found in a lower tier is reloaded when its
// reload time (latency + block tokens x KV bytes per token / read
// bandwidth) is below the time to recompute it where it sits in the prompt
// (RecomputeCost at its context). The first block that is not ends the
// hit, so the cached prefix stays contiguous and the rest is recomputed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ridgeline/engine/hardware.h"
#include "ridgeline/serving/step_cost.h"

namespace ridgeline::serving {

enum class KvOffload { kOff, kHost, kAll };
// "off", "host", "all"; INVALID_ARGUMENT naming serving.kv_offload.
absl::StatusOr<KvOffload> ParseKvOffload(std::string_view name);
std::string_view KvOffloadName(KvOffload mode);

struct OffloadTier {
  std::string name;  // the plugin's, e.g. "host DRAM over PCIe 5.0 x16"
  int64_t capacity_tokens = 0;  // whole blocks
  // KV bytes per token per device / the read bandwidth, and / the write
  // bandwidth (0: the plugin gives none; only a swap writes synchronously).
  double seconds_per_token = 0;
  double write_seconds_per_token = 0;
  double latency_seconds = 0;  // the tier's access latency, once a transfer
};

// The offload tiers of `hw` for `mode`, tiers without a capacity or a read
// bandwidth left out (never guessed); empty for kOff.
std::vector<OffloadTier> OffloadTiers(const engine::Hardware& hw,
                                      KvOffload mode, double kv_bytes_per_token,
                                      int64_t block_size);

// The time to recompute n prompt tokens at context c, linear in both:
// n (per_token + per_token_per_context x c).
struct RecomputeCost {
  double per_token = 0;
  double per_token_per_context = 0;
  double Seconds(int64_t tokens, int64_t context) const {
    return static_cast<double>(tokens) *
           (per_token + per_token_per_context * static_cast<double>(context));
  }
};
// From the step model, at a busy replica's margin: a full chunk of `chunk`
// tokens costs per_token each beyond a one-token step, and the same chunk
// after `context` more tokens adds per_token_per_context per token and
// context token.
absl::StatusOr<RecomputeCost> EstimateRecomputeCost(const StepCost& cost,
                                                    int64_t chunk,
                                                    int64_t context);

// The rule above, for one block of `block_tokens` at `context`.
inline double ReloadSeconds(const OffloadTier& tier, int64_t block_tokens) {
  return tier.latency_seconds +
         static_cast<double>(block_tokens) * tier.seconds_per_token;
}
inline bool ReloadBeatsRecompute(const OffloadTier& tier,
                                 const RecomputeCost& recompute,
                                 int64_t block_tokens, int64_t context) {
  return ReloadSeconds(tier, block_tokens) <
         recompute.Seconds(block_tokens, context);
}

}  // namespace ridgeline::serving
