// Serving simulation speed: 10,000 requests through one replica (target:
// <= 0.2 s on the project's 2-core build machine), and 100,000 over eight
// replicas behind a router (target <= 2 s). Two step models: a
// constant-cost one (the simulator's own overhead) and the engine's mixed step
// for Llama-3.1-8B fp8 on an H100-like part (cache misses included: each
// iteration builds a fresh EngineStepCost). The *Pipelined variants run
// the same traffic through a replica of 2 or 4 pipeline stages.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ridgeline/engine/model.h"
#include "ridgeline/serving/candidates.h"
#include "ridgeline/serving/capacity.h"
#include "ridgeline/serving/deployment.h"
#include "ridgeline/serving/engine_step_cost.h"
#include "ridgeline/serving/plan.h"
#include "ridgeline/serving/simulate.h"
#include "ridgeline/serving/trace.h"

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

// Issue 23's target: a 20,000-request trace in Mooncake's format (hash_ids
// of 512-token blocks) simulated with prefix caching in <= 2 s. Synthetic,
// seeded: 2,000 chat sessions of 10 turns, each prompt the session's
// previous prompt plus 1-4 new blocks after a shared 512-token system
// prompt (block 0), outputs of 100-400 tokens; sessions start 0.4 s apart
// (Poisson), turns 30 s apart. Eight replicas of the engine's Llama-3.1-8B
// fp8 step. Args: (0) prefix caching off, (1) on, (2) on with host
// offload (the nvidia plugin's H100 host tier: 256 GiB over PCIe 5.0 x16,
// 64 GB/s a direction, plugins/common/ridgeline_platform_common.h);
// (router) 0 least-loaded, 1 prefix-affinity.
std::vector<serving::TraceRequest> ChatSessions() {
  std::vector<serving::TraceRequest> trace;
  uint64_t state = 1, next_id = 1;
  auto rand = [&]() {  // splitmix64
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  double start = 0;
  for (int s = 0; s < 2000; ++s) {
    start += -std::log(1 - static_cast<double>(rand() >> 11) * 0x1.0p-53) * 0.4;
    std::vector<uint64_t> ids = {0};
    for (int turn = 0; turn < 10; ++turn) {
      for (uint64_t k = 1 + rand() % 4; k > 0; --k) ids.push_back(next_id++);
      serving::TraceRequest r;
      r.arrival_seconds = start + 30.0 * turn;
      r.prompt_tokens = static_cast<int64_t>(ids.size()) * 512 - 256;
      r.generated_tokens = 100 + static_cast<int64_t>(rand() % 301);
      r.block_hashes = ids;
      trace.push_back(std::move(r));
    }
  }
  std::stable_sort(
      trace.begin(), trace.end(),
      [](const serving::TraceRequest& a, const serving::TraceRequest& b) {
        return a.arrival_seconds < b.arrival_seconds;
      });
  return trace;
}

void BM_Simulate_MooncakeTrace(benchmark::State& state) {
  static const std::vector<serving::TraceRequest> trace = ChatSessions();
  engine::Scenario s = Llama8bFp8H100();
  s.workload = serving::EngineStepCost::ServingWorkload(256, 3072, 128, 8192);
  serving::SimulationConfig c = TenThousand(128);
  c.arrivals = serving::TraceArrivals(trace);
  c.limits.prefix_caching = state.range(0) != 0;
  if (state.range(0) == 2) {
    engine::Hardware hw = s.hardware;
    engine::MemoryTier host;
    host.name = "host DRAM over PCIe 5.0 x16";
    host.kind = engine::TierKind::kHostLink;
    host.capacity_bytes = 256.0 * (int64_t{1} << 30);
    host.read_bandwidth_bytes_per_second = 64e9;
    hw.tiers.push_back(host);
    // Llama-3.1-8B fp8: 32 layers x (K + V) x 8 heads x 128 x 1 B.
    c.limits.offload_tiers =
        serving::OffloadTiers(hw, serving::KvOffload::kHost, 65536, 16);
  }
  const char* router = state.range(1) == 0 ? "least-loaded" : "prefix-affinity";
  for (auto _ : state) {
    auto cost = serving::EngineStepCost::Create(s);
    serving::DeploymentSpec d;
    d.pools.push_back({"", cost->get(), c.limits, 8, router});
    auto r = serving::SimulateDeployment(d, c);
    if (!r.ok()) state.SkipWithError(std::string(r.status().message()).c_str());
    benchmark::DoNotOptimize(r);
    if (r.ok()) {
      state.counters["stable"] = r->overall.stable ? 1 : 0;
      state.counters["prefix_hit_rate"] = r->overall.prefix_hit_rate;
      state.counters["offload_hit_rate"] = r->overall.kv_offload_hit_rate;
      state.counters["ideal_hit_rate"] =
          serving::IdealPrefixReuse(trace).hit_rate();
      state.counters["utilization"] = r->pools[0].utilization;
      state.counters["ttft_p90_ms"] = r->overall.ttft.p90 * 1e3;
    }
  }
  state.SetItemsProcessed(state.iterations() *
                          static_cast<int64_t>(trace.size()));
}
BENCHMARK(BM_Simulate_MooncakeTrace)
    ->Args({0, 0})
    ->Args({1, 0})
    ->Args({2, 0})
    ->Args({1, 1})
    ->Args({2, 1})
    ->Unit(benchmark::kMillisecond);

// Prefix caching's overhead (issue 23: <= 30 %): BM_Simulate_100k_8Replicas
// with every prompt sharing a 256-token prefix (16 blocks looked up, taken
// or registered, and released a request), against that run, where nothing
// is shared.
void BM_Simulate_100k_8Replicas_SharedPrefix(benchmark::State& state) {
  engine::Scenario s = Llama8bFp8H100();
  s.workload = serving::EngineStepCost::ServingWorkload(256, 3072, 128, 8192);
  serving::SimulationConfig c = TenThousand(128);
  c.requests = 100'000;
  c.arrivals.rate = 8 * 20;
  c.shared_prefix_tokens = 256;
  for (auto _ : state) {
    auto cost = serving::EngineStepCost::Create(s);
    serving::DeploymentSpec d;
    d.pools.push_back({"", cost->get(), c.limits, 8, "least-loaded"});
    auto r = serving::SimulateDeployment(d, c);
    if (!r.ok()) state.SkipWithError(std::string(r.status().message()).c_str());
    benchmark::DoNotOptimize(r);
    if (r.ok()) state.counters["prefix_hit_rate"] = r->overall.prefix_hit_rate;
  }
  state.SetItemsProcessed(state.iterations() * c.requests);
}
BENCHMARK(BM_Simulate_100k_8Replicas_SharedPrefix)
    ->Unit(benchmark::kMillisecond);
// --- Plan: the docs' 4-part question (docs/serving.md "The question users
// ask first": Llama-3.1-70B, 20 req/s, 2048 in / 512 out, p90 TTFT 1 s,
// TPOT 50 ms) on the pure roofline, TP 1, 2, 4, 8, bf16 and fp8.
// _Agg: aggregated candidates only (32); _Disagg: plus every prefill pool x
// decode pool of the same formats (TP 1-8 per pool, 4 x 4 parts; P:D up to
// 8:8), 32 + 32 + 32 sized pools and candidates, 512 pairs.
namespace plan_bench {

// Figures from ../shared/data/hardware_specs.csv (rows named by id): memory
// GB, memory GB/s, dense bf16 and fp8 TFLOP/s, scale-up link GB/s (both
// directions), TDP W. MI300X: 7 Infinity Fabric links x 128 GB/s = 896.
struct Part {
  const char* id;
  double gb, gbs, bf16, fp8, link_gbs, watts, usd_per_hour;
};
constexpr Part kParts[] = {
    {"nvidia-h100-sxm-80gb", 80, 3352, 989.4, 1978.9, 900, 700, 0},
    {"nvidia-h200-sxm-141gb", 141, 4800, 989.4, 1978.9, 900, 700, 0},
    {"amd-mi300x", 192, 5300, 1307.4, 2614.9, 896, 750, 0},
    {"nvidia-b200-180gb", 180, 7700, 2250, 4500, 1800, 1000, 0},
};

engine::Scenario Base(const Part& p) {
  engine::Scenario s;
  s.model = engine::FindModel("llama-3.1-70b").value();
  s.hardware.id = p.id;
  s.hardware.family = s.hardware.plugin = "inline";
  s.hardware.peak_ops_per_second[static_cast<int>(engine::MathType::kBf16)] =
      p.bf16 * 1e12;
  s.hardware.peak_ops_per_second[static_cast<int>(engine::MathType::kFp8)] =
      p.fp8 * 1e12;
  engine::MemoryTier hbm;
  hbm.name = "HBM";
  hbm.kind = engine::TierKind::kHbm;
  hbm.capacity_bytes = p.gb * 1e9;
  hbm.read_bandwidth_bytes_per_second = hbm.write_bandwidth_bytes_per_second =
      p.gbs * 1e9;
  s.hardware.tiers.push_back(hbm);
  s.hardware.interconnect_bytes_per_second = p.link_gbs * 1e9;
  s.hardware.tdp_watts = p.watts;
  s.options.suggestions = false;
  s.options.pure_roofline = true;
  s.economics = engine::DefaultEconomics();
  return s;
}

serving::PlanInput Question(serving::DisaggregatedMode mode) {
  serving::PlanInput in;
  in.traffic.rate = 20;
  in.traffic.prompt = serving::LengthDistribution::Fixed(2048);
  in.traffic.generated = serving::LengthDistribution::Fixed(512);
  in.slo = {1.0, 0.05};
  serving::CandidateAxes axes;
  axes.mode = mode;
  const engine::ModelConfig model = engine::FindModel("llama-3.1-70b").value();
  serving::CandidateSpace space =
      serving::CandidateSpace::Create(model, axes).value();
  std::vector<serving::PlanPart> parts;
  for (const Part& p : kParts) {
    serving::PlanPart part;
    part.hardware = Base(p).hardware;
    part.economics = engine::DefaultEconomics();
    parts.push_back(part);
  }
  space.Enumerate(Base(kParts[0]), parts, parts, parts, &in);
  return in;
}

void Run(benchmark::State& state, serving::DisaggregatedMode mode) {
  const serving::PlanInput in = Question(mode);
  int64_t rows = 0;
  for (auto _ : state) {
    absl::StatusOr<serving::PlanResult> r = serving::Plan(in);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    rows = static_cast<int64_t>(r->deployments.size());
    benchmark::DoNotOptimize(r->deployments.data());
  }
  state.counters["deployments"] = static_cast<double>(rows);
}

void BM_Plan_Llama70B_4Parts(benchmark::State& state) {
  Run(state, serving::DisaggregatedMode::kOff);
}
void BM_Plan_Llama70B_4Parts_Disagg(benchmark::State& state) {
  Run(state, serving::DisaggregatedMode::kAuto);
}
BENCHMARK(BM_Plan_Llama70B_4Parts)
    ->Unit(benchmark::kSecond)
    ->MeasureProcessCPUTime();
BENCHMARK(BM_Plan_Llama70B_4Parts_Disagg)
    ->Unit(benchmark::kSecond)
    ->MeasureProcessCPUTime();

}  // namespace plan_bench

}  // namespace

BENCHMARK_MAIN();
