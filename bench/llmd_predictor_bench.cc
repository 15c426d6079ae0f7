// Google Benchmark of the llm-d latency-predictor API (issue 27): one
// POST /predict/bulk/strict of 10,000 pod states (llm-d's largest bulk
// call) through the handler the server runs, JSON in and out, on the pod
// model of llama-3.1-8b on an H100 SXM with the vLLM serving profile.
// Target: <= 2 s per call on this machine. The states are random (seeded),
// so the step cache sees the spread of shapes a busy gateway sends.
// Also PodLatencyModel::PredictMany alone (the model without the JSON).
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "benchmark/benchmark.h"
#include "llmd_predictor.h"
#include "nlohmann/json.hpp"
#include "ridgeline/calibration/profiles.h"
#include "ridgeline/plugin_host/registry.h"

namespace {

using ridgeline::service::Backend;

const Backend& TheBackend() {
  static const Backend* backend = [] {
    auto registry = ridgeline::plugin_host::HardwareRegistry::LoadDirectory(
        RIDGELINE_BENCH_PLUGIN_DIR, ridgeline::plugin_host::LoadLog::kNone);
    auto profiles = ridgeline::calibration::ProfileStore::LoadDirectory(
        RIDGELINE_BENCH_PROFILE_DIR);
    if (registry->platforms().empty() || !profiles.ok()) {
      std::fprintf(stderr, "bench: no plugins or profiles\n");
      std::abort();
    }
    return new Backend(std::move(registry), *std::move(profiles),
                       ridgeline::service::Limits{});
  }();
  return *backend;
}

Backend::PodModel Model() {
  auto model = TheBackend().PodLatencyModelFor(
      "llama-3.1-8b", "nvidia-h100-sxm-80gb", 1, "vllm");
  if (!model.ok()) {
    std::fprintf(stderr, "bench: %s\n",
                 std::string(model.status().message()).c_str());
    std::abort();
  }
  return *std::move(model);
}

std::vector<ridgeline::serving::PodState> States(size_t n) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<ridgeline::serving::PodState> out;
  for (size_t i = 0; i < n; ++i) {
    ridgeline::serving::PodState s;
    s.kv_cache_fraction = unit(rng);
    s.input_tokens = 1 + static_cast<int64_t>(unit(rng) * 8000);
    s.waiting = static_cast<int64_t>(unit(rng) * 20);
    s.running = static_cast<int64_t>(unit(rng) * 200);
    s.tokens_generated = static_cast<int64_t>(unit(rng) * 500);
    s.prefix_cache_score = unit(rng);
    out.push_back(s);
  }
  return out;
}

std::string BulkBody(size_t n) {
  nlohmann::json reqs = nlohmann::json::array();
  for (const auto& s : States(n)) {
    reqs.push_back({{"kv_cache_percentage", s.kv_cache_fraction},
                    {"input_token_length", s.input_tokens},
                    {"num_request_waiting", s.waiting},
                    {"num_request_running", s.running},
                    {"num_tokens_generated", s.tokens_generated},
                    {"prefix_cache_score", s.prefix_cache_score},
                    {"pod_type", ""}});
  }
  return nlohmann::json{{"requests", reqs}}.dump();
}

// A fresh predictor per run (an empty step cache): the first call's cost.
void BM_LlmdBulkStrict10000(benchmark::State& state) {
  ridgeline::service::HttpRequest req;
  req.method = "POST";
  req.target = "/predict/bulk/strict";
  req.body = BulkBody(10000);
  for (auto _ : state) {
    state.PauseTiming();
    ridgeline::service::LlmdPredictor predictor(
        {"llama-3.1-8b", "nvidia-h100-sxm-80gb", 1, "vllm"});
    predictor.SetModel(Model());
    state.ResumeTiming();
    ridgeline::service::HttpResponse r = predictor.Handle(req);
    if (r.status != 200) state.SkipWithError("bulk call failed");
    benchmark::DoNotOptimize(r.body.data());
  }
  state.SetItemsProcessed(state.iterations() * 10000);
  state.counters["body_bytes"] = static_cast<double>(req.body.size());
}
BENCHMARK(BM_LlmdBulkStrict10000)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_PodModelPredictMany10000(benchmark::State& state) {
  const auto states = States(10000);
  std::vector<ridgeline::serving::PodLatency> out;
  for (auto _ : state) {
    state.PauseTiming();
    Backend::PodModel model = Model();
    state.ResumeTiming();
    if (!model.model->PredictMany(states, &out).ok()) {
      state.SkipWithError("predict failed");
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * 10000);
}
BENCHMARK(BM_PodModelPredictMany10000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
