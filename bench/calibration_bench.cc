// `ridgeline validate` on a kernel table of 20,000 rows (issue 21: under
// 2 s). The rows are generated here in the measurement format of
// kernels-aic.csv (GEMM and decode-attention calls on the H100 SXM of the
// nvidia plugin; shapes swept, values arbitrary: the benchmark times the
// validation, not its accuracy), written once to a temporary CSV, then
// validated with the shipped profiles (profiles/, kernels/ included) and the
// built plugins, as the command does.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "ridgeline/calibration/commands.h"

namespace ridgeline::calibration {
namespace {

constexpr int kRows = 20000;

std::filesystem::path WriteRows() {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("ridgeline-validate-bench-" + std::to_string(::getpid()) + ".csv");
  std::ofstream out(path);
  out << "id,hardware_id,device_count,tensor_parallel,model_id,weight_format,"
         "weight_bits_effective,kv_format,batch,prompt_len,gen_len,framework,"
         "metric,value,unit,usable,source,note\n";
  for (int i = 0; i < kRows; ++i) {
    // Appended, not `"b" + std::to_string(i)`: GCC 12 at -O3 reports a
    // false -Wrestrict on that operator+ (as in calibration/kernel_fit.cc).
    std::string id = "b";
    id += std::to_string(i);
    if (i % 2 == 0) {
      const int m = 1 << (i / 2 % 16), n = 256 << (i / 32 % 8),
                k = 256 << (i / 256 % 8);
      out << id << ",nvidia-h100-sxm-80gb,1,1,gemm-kernel,"
          << (i % 4 ? "bf16" : "fp8") << ",16,n/a," << m
          << ",,,tensorrt-llm-1.3.0rc20,kernel_us," << 5 + i % 97
          << ",us,1,generated,\"kernel shape: GEMM M=" << m << " N=" << n
          << " K=" << k << "; rotated\"\n";
    } else {
      const int batch = 1 << (i / 2 % 10), kv = 64 << (i / 20 % 10);
      out << id
          << ",nvidia-h100-sxm-80gb,1,1,attention-decode-kernel,bf16,,bf16,"
          << batch << "," << kv << ",1,tensorrt-llm-1.3.0rc20,kernel_us,"
          << 8 + i % 89
          << ",us,1,generated,\"kernel shape: attention op only: 32 q heads = "
             "8 kv heads, "
             "head_dim 128\"\n";
    }
  }
  return path;
}

void BM_ValidateKernelRows20k(benchmark::State& state) {
  static const std::filesystem::path rows = WriteRows();
  ValidateOptions options;
  options.measurements = rows;
  options.profiles = RIDGELINE_BENCH_PROFILES;
  options.plugin_dir = RIDGELINE_BENCH_PLUGIN_DIR;
  options.format = ReportFormat::kCsv;
  for (auto _ : state) {
    std::ostringstream out, err;
    if (Validate(options, out, err) != 0) {
      state.SkipWithError(err.str().c_str());
      break;
    }
    benchmark::DoNotOptimize(out.str().size());
  }
  state.counters["rows"] = kRows;
}
BENCHMARK(BM_ValidateKernelRows20k)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

}  // namespace
}  // namespace ridgeline::calibration

BENCHMARK_MAIN();
