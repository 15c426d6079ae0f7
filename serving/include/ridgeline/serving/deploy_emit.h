// What a platform team runs for a planned deployment: a `vllm serve`
// command, an SGLang `launch_server` command, or a Kubernetes manifest
// (Deployment, or LeaderWorkerSet when a replica spans nodes). A pure
// function of a DeployPlan: plain data in, text out, no I/O.
//
// A deployment is a list of pools: one for an aggregated plan, a prefill and
// a decode pool for a disaggregated one. Every engine flag written here is
// in tests/fixtures/engine-flags/ with the engine source it was read from
// (a test fails on any other). Thread-safe (no state).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ridgeline::serving {

enum class ServingEngine { kVllm, kSglang };

// One pool of identical replicas.
struct DeployPool {
  // "" (aggregated: prefill and decode on the same replicas), "prefill" or
  // "decode" (disaggregated pools; the KV cache moves between them).
  std::string role;
  std::string hardware_id;
  // The Kubernetes extended resource of one device ("nvidia.com/gpu",
  // "amd.com/gpu"); "" when no device plugin is known for the vendor.
  std::string device_resource;
  int64_t replicas = 1;
  int64_t tensor_parallel = 1;
  int64_t pipeline_parallel = 1;
  // > 1: attention data-parallel over this many devices, the routed experts
  // spread over them (tensor_parallel is then 1).
  int64_t expert_parallel = 1;
  // Devices one node holds; nullopt = unknown (a replica is then assumed to
  // fit one node, and the output says so).
  std::optional<int64_t> devices_per_node;
  // Format names as the plan prints them ("bf16", "fp8", "int4", ...).
  std::string weights = "bf16";
  std::string activations = "bf16";
  std::string kv_cache = "bf16";
  // The scheduler the plan simulated (ServingConfig's values).
  double memory_fraction = 0.9;
  int64_t max_num_seqs = 256;
  int64_t max_num_batched_tokens = 8192;
  int64_t block_size = 16;
  // Automatic prefix caching; both engines cache by default, so only off
  // is written.
  bool prefix_caching = true;
};

// Speculative decoding as the plan timed it (docs/speculative.md), written
// on the replicas that decode (not on a prefill pool).
struct DeploySpeculation {
  // "draft" (a draft model), "eagle" (an EAGLE-3 head) or "mtp" (the
  // model's own multi-token-prediction layers).
  std::string method;
  int64_t tokens = 1;  // k draft tokens per step, 1..16
  // What the engine loads as the draft or head: a Hugging Face id or a
  // path; required for draft and eagle, unused for mtp.
  std::string draft_model;
};

struct DeployPlan {
  // What the engine loads: a Hugging Face repository id or a local path.
  std::string model;
  std::optional<DeploySpeculation> speculative;
  std::vector<DeployPool> pools;  // 1..2
  // Comment lines printed first (what was planned, caveats); no '#'.
  std::vector<std::string> notes;
  // kubernetes: the container image; "" = the engine's official image.
  std::string image;
};

// Devices of one replica: pipeline stages x max(tensor, expert parallel).
int64_t ReplicaDevices(const DeployPool& pool);
// Nodes of one replica (1 when devices_per_node is unknown or enough).
int64_t ReplicaNodes(const DeployPool& pool);

// Where a node of a multi-node replica is: the leader's address and this
// node's rank, as text (shell variables or Kubernetes $(VAR) references).
struct NodePlace {
  std::string leader_address = "$LEADER_ADDRESS";
  std::string rank = "0";
};

// The engine's argument list for node `place` of one replica of `pool` (no
// program name): ["MODEL", "--tensor-parallel-size", "2", ...] for vLLM,
// ["--model-path", "MODEL", "--tp-size", "2", ...] for SGLang. A vLLM
// multi-node replica runs on a Ray cluster: these are the leader's (the
// workers only join the cluster). INVALID_ARGUMENT naming the pool field
// when the engine cannot run what the plan asks.
absl::StatusOr<std::vector<std::string>> EngineArgs(
    ServingEngine engine, const DeployPlan& plan, size_t pool_index,
    const NodePlace& place = {});

// A shell script: the notes as comments, then per pool the command of one
// replica (for a multi-node replica: the leader's and a worker's).
absl::StatusOr<std::string> EmitCommands(ServingEngine engine,
                                         const DeployPlan& plan);

// A multi-document YAML manifest: per pool a Deployment (one node per
// replica) or a LeaderWorkerSet (several), and a Service.
absl::StatusOr<std::string> EmitKubernetes(ServingEngine engine,
                                           const DeployPlan& plan);

// The shell-quoted form of one argument ('...' when it needs quoting).
std::string ShellQuote(const std::string& arg);

}  // namespace ridgeline::serving
