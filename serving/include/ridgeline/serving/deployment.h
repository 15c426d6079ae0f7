// A deployment: one or more pools of replicas, each pool on its own part
// and parallelism (its StepCost and limits), behind a router per pool.
// Aggregated: one pool does the whole request. Disaggregated: a prefill
// pool computes the prompt and the first token, the request's KV goes over
// the link to a decode replica (kv_transfer.h) and the decode pool makes
// the other tokens. One event loop interleaves every replica's iterations
// (replica.h) and the arrivals in time order; deterministic for a seed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ridgeline/serving/capacity.h"
#include "ridgeline/serving/kv_transfer.h"
#include "ridgeline/serving/scheduler.h"
#include "ridgeline/serving/simulate.h"
#include "ridgeline/serving/step_cost.h"

namespace ridgeline::serving {

inline constexpr int64_t kMaxReplicasPerPool = 4096;

struct PoolSpec {
  std::string name;                      // "aggregated", "prefill", "decode"
  const StepCost* cost = nullptr;        // not owned; one replica's steps
  ServingLimits limits;                  // one replica's (attention_ranks 1)
  int64_t replicas = 1;                  // 1..kMaxReplicasPerPool
  std::string router = "round-robin";    // router.h
  const Scheduler* scheduler = nullptr;  // not owned; null: decode-first
};

// The KV hand-off of a disaggregated deployment.
struct KvHandoff {
  KvLink link;  // known
  // A request's KV per prompt token on each sending and receiving device
  // (KvBytesPerDevice / tokens).
  double prefill_bytes_per_token = 0;
  double decode_bytes_per_token = 0;
  KvOverlap overlap = KvOverlap::kAfterPrefill;
  int64_t layers = 1;  // the model's (kLayerwise)
};

struct DeploymentSpec {
  // One pool (aggregated) or two: prefill, then decode, with `handoff`.
  std::vector<PoolSpec> pools;
  std::optional<KvHandoff> handoff;
};

struct PoolResult {
  std::string name;
  int64_t replicas = 0;
  int64_t steps = 0;
  // Mean over its replicas of the share of the run a step is in flight.
  double utilization = 0;
  double kv_usage_mean = 0;  // used / capacity over the pool, time-weighted
  double mean_running = 0;   // sequences per step, time-weighted
};

struct DeploymentResult {
  // Over the whole deployment: latencies per request (TTFT at the prefill
  // replica's first token; TPOT and ITL include the KV transfer), KV and
  // running means over every replica.
  SimulationResult overall;
  std::vector<PoolResult> pools;
  // Prefill end -> KV on the decode replica (link queueing included);
  // zeros when aggregated.
  Percentiles kv_transfer_seconds;
};

// `config.limits` is not used (each pool has its own); its traffic, run
// length, seed, caps and timeline are. Errors: INVALID_ARGUMENT (config,
// pools: "replicas", "router"); FAILED_PRECONDITION when a request can
// never be admitted on a pool; as Simulate otherwise.
absl::StatusOr<DeploymentResult> SimulateDeployment(
    const DeploymentSpec& deployment, const SimulationConfig& config);

}  // namespace ridgeline::serving
