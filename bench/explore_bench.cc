// Speed of design-space exploration: 1,000,000 design points of Llama-3-8B
// (batch 1, prompt 1024, 256 generated tokens) over 5 hardware axes,
// evaluated and reduced to the exact 4-objective Pareto front. items/s =
// design points per second. Must: <= 5 s (200 k points/s); aim >= 1 M/s.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "ridgeline/engine/model.h"
#include "ridgeline/explore/explore.h"

namespace ridgeline::explore {
namespace {

// NVIDIA H100 SXM5 80GB, dense rates from shared/data/hardware_specs.csv
// (row nvidia-h100-sxm-80gb: NVIDIA H100 whitepaper v1.04 Table 1 via the
// cited sources): 3352 GB/s HBM3, BF16/FP16 989.4 TFLOPS, FP8 and INT8
// 1978.9, FP32 67; 80 GiB; 700 W. Price: none published (the axis sets it).
engine::Hardware H100Like() {
  engine::Hardware hw;
  hw.id = "bench-h100-like";
  hw.family = hw.plugin = "inline";
  auto set = [&](engine::MathType t, double v) {
    hw.peak_ops_per_second[static_cast<int>(t)] = v;
  };
  set(engine::MathType::kFp32, 67e12);
  set(engine::MathType::kBf16, 989.4e12);
  set(engine::MathType::kFp16, 989.4e12);
  set(engine::MathType::kFp8, 1978.9e12);
  set(engine::MathType::kInt8, 1978.9e12);
  engine::MemoryTier hbm;
  hbm.name = "HBM3";
  hbm.kind = engine::TierKind::kHbm;
  hbm.capacity_bytes = 80.0 * (1 << 30);
  hbm.read_bandwidth_bytes_per_second = 3352e9;
  hbm.write_bandwidth_bytes_per_second = 3352e9;
  hw.tiers.push_back(hbm);
  hw.tdp_watts = 700;
  return hw;
}

ExploreSpec Spec() {
  ExploreSpec spec;
  absl::StatusOr<engine::ModelConfig> m = engine::FindModel("llama-3-8b");
  if (!m.ok()) std::abort();
  spec.space.base.model = *m;
  spec.space.base.hardware = H100Like();
  spec.space.base.workload = {1, 1024, 256};
  spec.space.base.options.suggestions = false;
  // 20 x 20 x 10 x 25 x 10 = 1,000,000 points.
  for (const char* a :
       {"bandwidth_gbs=500:8000:20", "peak_tflops=100:2000:20",
        "capacity_gb=16:192:10", "tdp_w=150:1200:25",
        "price_usd=5000:40000:10"}) {
    spec.space.axes.push_back(*ParseAxis(a, "vary"));
  }
  for (const char* o : {"decode_tok_s:max", "j_per_token:min",
                        "usd_per_mtoken:min", "gco2_per_mtoken:min"}) {
    spec.objectives.push_back(*ParseObjective(o, "objective"));
  }
  spec.constraints.push_back(*ParseConstraint("tpot_ms<=50", "constraint"));
  return spec;
}

void BM_Explore_1M_Llama3_8B_B1_P1024_G256_5Axes_4Objectives(
    benchmark::State& state) {
  const ExploreSpec spec = Spec();
  size_t front = 0;
  for (auto _ : state) {
    absl::StatusOr<ExploreResult> r =
        Explore(spec, {}, static_cast<int>(state.range(0)));
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    front = r->front_size;
    benchmark::DoNotOptimize(r->hypervolume);
  }
  state.SetItemsProcessed(state.iterations() * 1'000'000);
  state.counters["front"] = static_cast<double>(front);
}
BENCHMARK(BM_Explore_1M_Llama3_8B_B1_P1024_G256_5Axes_4Objectives)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace ridgeline::explore

BENCHMARK_MAIN();
