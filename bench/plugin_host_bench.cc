// What plugin isolation costs an analysis (issue 26, defect 7): the same
// Llama-2-7B analysis (batch 1, 512 prompt + 128 generated tokens) on the
// fixture plugin's part A (tests/fixtures/plugins/fixture_plugin.c, which
// has an efficiency hook), with the hook called in process (as before) and
// in a plugin-host child process (as the server now does), cold (a fresh
// host, every shape a round trip) and warm (every shape cached). Plus one
// uncached hook round trip. The program is its own plugin host: started
// with --plugin-host= it serves as one.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "ridgeline/engine/analyze.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/plugin_host/hosted_plugin.h"
#include "ridgeline/plugin_host/plugin_library.h"

namespace ridgeline::plugin_host {
namespace {

std::filesystem::path Plugin() { return RIDGELINE_BENCH_HOOK_PLUGIN; }

HostOptions Hosted() {
  HostOptions o;
  o.exe = std::filesystem::read_symlink("/proc/self/exe");
  return o;
}

engine::Hardware PartA(bool hosted) {
  PluginContents c;
  absl::Status s = hosted ? ReadPluginHosted(Plugin(), Hosted(), &c)
                          : ReadPluginInProcess(Plugin(), &c);
  if (!s.ok() || c.platforms.empty() || !c.platforms[0].efficiency_hook) {
    std::abort();
  }
  return c.platforms[0];
}

engine::Scenario Llama2(const engine::Hardware& hw, int64_t generated = 128) {
  engine::Scenario s;
  absl::StatusOr<engine::ModelConfig> m = engine::FindModel("llama-2-7b");
  if (!m.ok()) std::abort();
  s.model = *m;
  s.hardware = hw;
  s.workload = {1, 512, generated};
  return s;
}

void Analyze(benchmark::State& state, const engine::Scenario& s) {
  absl::StatusOr<engine::AnalysisResult> r = engine::Analyze(s);
  if (!r.ok()) state.SkipWithError(std::string(r.status().message()).c_str());
  benchmark::DoNotOptimize(r);
}

void BM_AnalyzeHookInProcess(benchmark::State& state) {
  const engine::Scenario s = Llama2(PartA(false), state.range(0));
  for (auto _ : state) Analyze(state, s);
}
BENCHMARK(BM_AnalyzeHookInProcess)
    ->Arg(128)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

// Steady state of a server: the shapes of this analysis were seen before.
void BM_AnalyzeHookHostedWarm(benchmark::State& state) {
  const engine::Scenario s = Llama2(PartA(true), state.range(0));
  (void)engine::Analyze(s);  // fills the cache
  for (auto _ : state) Analyze(state, s);
}
BENCHMARK(BM_AnalyzeHookHostedWarm)
    ->Arg(128)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

// A fresh host (not timed) per analysis: every distinct shape is a round
// trip.
void BM_AnalyzeHookHostedCold(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    const engine::Scenario s = Llama2(PartA(true), state.range(0));
    state.ResumeTiming();
    Analyze(state, s);
  }
}
BENCHMARK(BM_AnalyzeHookHostedCold)
    ->Arg(128)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

// One hook call that misses the cache (a new token count each time).
void BM_HookRoundTrip(benchmark::State& state) {
  const engine::Hardware hw = PartA(true);
  int64_t tokens = 1;
  for (auto _ : state) {
    ++tokens;
    benchmark::DoNotOptimize(hw.efficiency_hook(engine::OpShape{
        engine::OpClass::kGemm, engine::MathType::kBf16, tokens,
        static_cast<double>(tokens) * 1e9, static_cast<double>(tokens) * 1e6}));
  }
}
BENCHMARK(BM_HookRoundTrip)->Unit(benchmark::kMicrosecond);

// One hook call answered by the cache.
void BM_HookCached(benchmark::State& state) {
  const engine::Hardware hw = PartA(true);
  const engine::OpShape shape{engine::OpClass::kGemm, engine::MathType::kBf16,
                              512, 512e9, 512e6};
  (void)hw.efficiency_hook(shape);
  for (auto _ : state) benchmark::DoNotOptimize(hw.efficiency_hook(shape));
}
BENCHMARK(BM_HookCached);

}  // namespace
}  // namespace ridgeline::plugin_host

int main(int argc, char** argv) {
  const std::string_view flag = ridgeline::plugin_host::kPluginHostFlag;
  if (argc == 2 && std::string_view(argv[1]).substr(0, flag.size()) == flag) {
    return ridgeline::plugin_host::RunPluginHostChild(argv[1] + flag.size());
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
