// Prints the Kubernetes manifest of a hand-built deployment the planner
// cannot produce yet, for the schema check (tests/unit/deploy/emit_test.py):
//   deploy_emit_manifests two-pool vllm|sglang    prefill + decode pools
//   deploy_emit_manifests multi-node vllm|sglang  TP 8 x PP 2 on 8-device
//                                                 nodes (a LeaderWorkerSet)
#include <iostream>
#include <string>

#include "ridgeline/serving/deploy_emit.h"

int main(int argc, char** argv) {
  using namespace ridgeline::serving;
  const std::string shape = argc == 3 ? argv[1] : "";
  const ServingEngine engine = argc == 3 && std::string(argv[2]) == "sglang"
                                   ? ServingEngine::kSglang
                                   : ServingEngine::kVllm;
  DeployPool pool;
  pool.hardware_id = "nvidia-h100-sxm-80gb";
  pool.device_resource = "nvidia.com/gpu";
  pool.replicas = 2;
  pool.tensor_parallel = 4;
  DeployPlan plan;
  plan.model = "meta-llama/Meta-Llama-3-70B";
  if (shape == "two-pool") {
    DeployPool prefill = pool, decode = pool;
    prefill.role = "prefill";
    decode.role = "decode";
    decode.replicas = 3;
    decode.weights = decode.activations = decode.kv_cache = "fp8";
    plan.pools = {prefill, decode};
  } else if (shape == "multi-node") {
    pool.tensor_parallel = 8;
    pool.pipeline_parallel = 2;
    pool.devices_per_node = 8;
    plan.pools = {pool};
  } else {
    std::cerr << "usage: deploy_emit_manifests two-pool|multi-node "
                 "vllm|sglang\n";
    return 2;
  }
  auto text = EmitKubernetes(engine, plan);
  if (!text.ok()) {
    std::cerr << text.status() << "\n";
    return 1;
  }
  std::cout << *text;
  return 0;
}
