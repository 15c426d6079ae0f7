// Serving simulation speed: 10,000 requests through one replica (target:
// <= 0.2 s on the project's 2-core build machine), and 100,000 over eight
// replicas behind a router (target <= 2 s). Two step models: a
// constant-cost one (the simulator's own overhead) and the engine's mixed step
// for Llama-3.1-8B fp8 on an H100-like part (cache misses included: each
// iteration builds a fresh EngineStepCost). The *Pipelined variants run
// the same traffic through a replica of 2 or 4 pipeline stages.
#include <benchmark/benchmark.h>

#include <memory>
#include <span>

#include "ridgeline/engine/model.h"
#include "ridgeline/serving/capacity.h"
#include "ridgeline/serving/deployment.h"
#include "ridgeline/serving/engine_step_cost.h"
#include "ridgeline/serving/simulate.h"

namespace {

using namespace ridgeline;

class ConstantStep final : public serving::StepCost {
 public:
  absl::StatusOr<serving::StepTime> Time(
      std::span<const serving::SequenceInStep> seqs) const override {
    return serving::StepTime{0.01 + 1e-6 * static_cast<double>(seqs.size()),
                             engine::Bound::kMemory};
  }
};

engine::Scenario Llama8bFp8H100() {
  engine::Scenario s;
  s.model = engine::FindModel("llama-3.1-8b").value();
  // NVIDIA H100 SXM5 80GB: 80 GB HBM3, 3352 GB/s, FP8 1978.9 TFLOP/s dense
  // (hardware_specs.csv row nvidia-h100-sxm-80gb).
  s.hardware.id = "bench-h100";
  s.hardware.family = "inline";
  s.hardware.plugin = "inline";
  s.hardware.peak_ops_per_second[static_cast<int>(engine::MathType::kFp8)] =
      1978.9e12;
  s.hardware.peak_ops_per_second[static_cast<int>(engine::MathType::kBf16)] =
      989.4e12;
  engine::MemoryTier hbm;
  hbm.name = "HBM3";
  hbm.capacity_bytes = 80e9;
  hbm.read_bandwidth_bytes_per_second = 3352e9;
  hbm.write_bandwidth_bytes_per_second = 3352e9;
  s.hardware.tiers.push_back(hbm);
  s.precision.weights = s.precision.activations = s.precision.kv_cache =
      engine::ParseNumberFormat("fp8").value();
  s.options.suggestions = false;
  return s;
}

serving::SimulationConfig TenThousand(int64_t gen) {
  serving::SimulationConfig c;
  c.limits = {256, 8192, 970'208, 16};  // the KV golden's capacity
  c.arrivals.rate = 20;
  c.requests = 10'000;
  c.prompt = serving::LengthDistribution::Uniform(1024, 3072);
  c.generated = serving::LengthDistribution::Fixed(gen);
  return c;
}

void BM_Simulate10kRequests_ConstantStep(benchmark::State& state) {
  ConstantStep cost;
  const serving::SimulationConfig c = TenThousand(state.range(0));
  for (auto _ : state) {
    auto r = serving::Simulate(cost, c);
    if (!r.ok()) state.SkipWithError(std::string(r.status().message()).c_str());
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations() * c.requests);
}
BENCHMARK(BM_Simulate10kRequests_ConstantStep)
    ->Arg(128)->Arg(512)->Unit(benchmark::kMillisecond);

void BM_Simulate10kRequests_Engine(benchmark::State& state) {
  engine::Scenario s = Llama8bFp8H100();
  s.workload =
      serving::EngineStepCost::ServingWorkload(256, 3072, state.range(0), 8192);
  const serving::SimulationConfig c = TenThousand(state.range(0));
  for (auto _ : state) {
    auto cost = serving::EngineStepCost::Create(s);
    auto r = serving::Simulate(**cost, c);
    if (!r.ok()) state.SkipWithError(std::string(r.status().message()).c_str());
    benchmark::DoNotOptimize(r);
    state.counters["step_shapes"] = static_cast<double>((*cost)->cache_size());
  }
  state.SetItemsProcessed(state.iterations() * c.requests);
}
BENCHMARK(BM_Simulate10kRequests_Engine)
    ->Arg(128)->Arg(512)->Unit(benchmark::kMillisecond);

// Pipelined replicas: Arg(0) = generated tokens, Arg(1) = stages. The
// constant step has an interval of latency / stages (balanced stages); the
// engine one is Llama-3.1-8B fp8 split over that many stages (2,062,944 KV
// tokens per stage at PP 2: the PP KV golden's capacity).
class ConstantPipelinedStep final : public serving::StepCost {
 public:
  explicit ConstantPipelinedStep(int64_t stages) : stages_(stages) {}
  absl::StatusOr<serving::StepTime> Time(
      std::span<const serving::SequenceInStep> seqs) const override {
    const double t = 0.01 + 1e-6 * static_cast<double>(seqs.size());
    return serving::StepTime{t, engine::Bound::kMemory,
                             t / static_cast<double>(stages_)};
  }

 private:
  int64_t stages_;
};

void BM_Simulate10kRequests_ConstantStepPipelined(benchmark::State& state) {
  ConstantPipelinedStep cost(state.range(1));
  serving::SimulationConfig c = TenThousand(state.range(0));
  c.limits.pipeline_stages = state.range(1);
  for (auto _ : state) {
    auto r = serving::Simulate(cost, c);
    if (!r.ok()) state.SkipWithError(std::string(r.status().message()).c_str());
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations() * c.requests);
}
BENCHMARK(BM_Simulate10kRequests_ConstantStepPipelined)
    ->Args({128, 2})->Args({512, 2})->Args({512, 4})
    ->Unit(benchmark::kMillisecond);

void BM_Simulate10kRequests_EnginePipelined(benchmark::State& state) {
  engine::Scenario s = Llama8bFp8H100();
  s.parallelism.pipeline_parallel = state.range(1);
  s.parallelism.pipeline_micro_batches = 1;
  s.workload =
      serving::EngineStepCost::ServingWorkload(256, 3072, state.range(0), 8192);
  serving::SimulationConfig c = TenThousand(state.range(0));
  c.limits.kv_capacity_tokens = 2'062'944;
  c.limits.pipeline_stages = state.range(1);
  for (auto _ : state) {
    auto cost = serving::EngineStepCost::Create(s);
    auto r = serving::Simulate(**cost, c);
    if (!r.ok()) state.SkipWithError(std::string(r.status().message()).c_str());
    benchmark::DoNotOptimize(r);
    state.counters["step_shapes"] = static_cast<double>((*cost)->cache_size());
  }
  state.SetItemsProcessed(state.iterations() * c.requests);
}
BENCHMARK(BM_Simulate10kRequests_EnginePipelined)
    ->Args({128, 2})->Args({512, 2})->Unit(benchmark::kMillisecond);

// Issue 22's target: 100,000 requests over 8 aggregated replicas behind
// least-loaded routing in <= 2 s. The engine's mixed step of Llama-3.1-8B
// fp8 on the H100-like part (one EngineStepCost shared by the replicas: the
// same part and parallelism), 8 x the 10k run's rate.
void BM_Simulate_100k_8Replicas(benchmark::State& state) {
  engine::Scenario s = Llama8bFp8H100();
  s.workload = serving::EngineStepCost::ServingWorkload(256, 3072, 128, 8192);
  serving::SimulationConfig c = TenThousand(128);
  c.requests = 100'000;
  c.arrivals.rate = 8 * 20;
  for (auto _ : state) {
    auto cost = serving::EngineStepCost::Create(s);
    serving::DeploymentSpec d;
    d.pools.push_back({"", cost->get(), c.limits, 8, "least-loaded"});
    auto r = serving::SimulateDeployment(d, c);
    if (!r.ok()) state.SkipWithError(std::string(r.status().message()).c_str());
    benchmark::DoNotOptimize(r);
    if (r.ok()) {
      state.counters["stable"] = r->overall.stable ? 1 : 0;
      state.counters["utilization"] = r->pools[0].utilization;
    }
  }
  state.SetItemsProcessed(state.iterations() * c.requests);
}
BENCHMARK(BM_Simulate_100k_8Replicas)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
