#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "ridgeline/calibration/commands.h"
#include "ridgeline/calibration/measurements.h"
#include "ridgeline/calibration/profiles.h"
#include "ridgeline/calibration/validation.h"
#include "test_hardware.h"

namespace ridgeline::calibration {
namespace {

absl::StatusOr<engine::Hardware> Lookup(std::string_view id) {
  if (id != "test-gpu")
    return absl::NotFoundError("no platform \"" + std::string(id) + "\"");
  return testing::RoundGpu();
}

MeasurementRow Decode(std::string id, double tok_s) {
  MeasurementRow r;
  r.id = std::move(id);
  r.hardware_id = "test-gpu";
  r.model_id = "llama-2-7b";
  r.weight_format = "fp16";
  r.kv_format = "fp16";
  r.batch = 1;
  r.prompt_len = 0;
  r.gen_len = 128;
  r.framework = "llama.cpp-cuda";
  r.metric = "decode_tok_s";
  r.unit = "tok/s";
  r.value = tok_s;
  r.usable = true;
  return r;
}

TEST(Validate, BoundAndSkipReasons) {
  std::vector<MeasurementRow> rows = {Decode("a", 50), Decode("b", 500),
                                      Decode("c", 50), Decode("d", 50)};
  rows[2].usable = false;
  rows[2].note = "UNUSABLE: variant not stated; more";
  rows[3].hardware_id = "nope";
  std::vector<RowResult> res = EvaluateRows(rows, Lookup, nullptr);
  ASSERT_EQ(res.size(), 4u);
  ASSERT_TRUE(res[0].evaluated) << res[0].status;
  // Llama-2-7B: 6.74e9 params x 2 B = ~13.5 GB per token at 1e12 B/s ->
  // bound ~74 tok/s. 50 tok/s is sound; 500 tok/s beats it.
  EXPECT_GT(*res[0].bound, 70);
  EXPECT_LT(*res[0].bound, 76);
  EXPECT_EQ(*res[0].predicted, *res[0].bound);  // no profile: predicted = bound
  EXPECT_FALSE(res[0].beats_bound);
  EXPECT_TRUE(res[1].beats_bound);
  EXPECT_EQ(res[2].status, "usable=0: UNUSABLE: variant not stated");
  EXPECT_NE(res[3].status.find("hardware"), std::string::npos) << res[3].status;
  Summary s = Summarize(res);
  EXPECT_EQ(s.evaluated, 2);
  EXPECT_EQ(s.skipped, 2);
  EXPECT_DOUBLE_EQ(s.overall.soundness, 0.5);
  ASSERT_EQ(s.beats_bound.size(), 1u);
  EXPECT_EQ(s.beats_bound[0].id, "b");
}

// RoundGpu without any peak: "compute roof unknown" (like a phone SoC whose
// sheet publishes memory but no compute rate).
absl::StatusOr<engine::Hardware> NoRoofLookup(std::string_view id) {
  engine::Hardware hw = testing::RoundGpu();
  hw.id = "test-no-roof";
  hw.peak_ops_per_second = {};
  if (id == hw.id) return hw;
  return Lookup(id);
}

TEST(Validate, ComputeRoofUnknownEvaluatesOnlyMemoryBoundRows) {
  MeasurementRow decode = Decode("dec", 50);
  decode.hardware_id = "test-no-roof";
  MeasurementRow same_on_gpu = Decode("gpu", 50);
  MeasurementRow prefill = decode;
  prefill.id = "pre";
  prefill.metric = "prefill_tok_s";
  prefill.prompt_len = 512;
  prefill.gen_len = 0;
  MeasurementRow ttft = prefill;
  ttft.id = "ttft";
  ttft.metric = "ttft_ms";
  ttft.unit = "ms";
  MeasurementRow attention = decode;
  attention.id = "attn";
  attention.model_id = "attention-decode-kernel";
  attention.metric = "kernel_us";
  attention.unit = "us";
  attention.note = "32 heads, head_dim 128";
  attention.prompt_len = 2048;
  attention.batch = 1;
  attention.value = 40;
  MeasurementRow gemm = attention;
  gemm.id = "gemm";
  gemm.model_id = "gemm-kernel";
  gemm.note = "M=4096 N=4096 K=4096";
  std::vector<RowResult> res =
      EvaluateRows({decode, same_on_gpu, prefill, ttft, attention, gemm},
                   NoRoofLookup, nullptr);
  ASSERT_EQ(res.size(), 6u);
  // Decode at batch 1 is memory-bound on RoundGpu too (~13.5 GB read per
  // token at 1e12 B/s, ~27 GFLOP at 100e12 FLOP/s: 13.5 ms vs 0.27 ms), so
  // dropping the compute roof leaves the bound unchanged: ~74 tok/s.
  ASSERT_TRUE(res[0].evaluated) << res[0].status;
  ASSERT_TRUE(res[1].evaluated) << res[1].status;
  EXPECT_NEAR(*res[0].bound, *res[1].bound, 1e-9 * *res[1].bound);
  EXPECT_GT(*res[0].bound, 70);
  EXPECT_LT(*res[0].bound, 76);
  // Compute-bound metrics cannot be bounded without a compute roof.
  EXPECT_FALSE(res[2].evaluated);
  EXPECT_EQ(res[2].status, "compute roof unknown for test-no-roof");
  EXPECT_FALSE(res[3].evaluated);
  EXPECT_EQ(res[3].status, "compute roof unknown for test-no-roof");
  // Decode attention reads K and V once: 2 x 32 heads x 2048 x 128 x 2 B =
  // 33,554,432 B, plus q in and out 2 x 32 x 128 x 2 B = 16,384 B:
  // 33,570,816 B / 1e12 B/s = 33.57 us.
  ASSERT_TRUE(res[4].evaluated) << res[4].status;
  EXPECT_NEAR(*res[4].bound, 33.570816, 1e-6);
  // A GEMM kernel's bound needs the compute roof.
  EXPECT_FALSE(res[5].evaluated);
  EXPECT_EQ(res[5].status, "compute roof unknown for test-no-roof");
}

// Rows exactly as bench/gpu/membw.cu writes them (CsvWriter::Write), on the
// inline RoundGpu (1e12 B/s read and write, data in test_hardware.h).
constexpr char kMembwCsv[] =
    "id,hardware_id,device_count,tensor_parallel,model_id,weight_format,"
    "weight_bits_effective,kv_format,batch,prompt_len,gen_len,framework,"
    "metric,value,unit,usable,source,note\n"
    "bw1,test-gpu,1,1,memory-read-kernel,n/a,,n/a,1,0,1,ridgeline-gpu-bench,"
    "kernel_us,300,us,1,\"ridgeline bench/gpu on Test GPU, CUDA runtime 12.4\","
    "\"device: Test GPU; bytes moved (read + written)=268435456; GB/s=894.784853; "
    "inputs rotated (cold cache); CUDA events, median of 50 after 5 warm-up calls\"\n"
    "bw2,test-gpu,1,1,memory-copy-kernel,n/a,,n/a,1,0,1,ridgeline-gpu-bench,"
    "kernel_us,600,us,1,\"ridgeline bench/gpu on Test GPU, CUDA runtime 12.4\","
    "\"device: Test GPU; bytes moved (read + written)=536870912; GB/s=894.784853; "
    "inputs rotated (cold cache); CUDA events, median of 50 after 5 warm-up calls\"\n"
    "bw3,test-gpu,1,1,memory-read-kernel,n/a,,n/a,1,0,1,ridgeline-gpu-bench,"
    "kernel_us,1200,us,1,\"ridgeline bench/gpu on Test GPU, CUDA runtime 12.4\","
    "\"device: Test GPU; bytes moved (read + written)=1073741824; GB/s=894.784853; "
    "inputs rotated (cold cache); CUDA events, median of 50 after 5 warm-up calls\"\n";

TEST(Validate, MembwRowsAreEvaluatedByTheMemoryKernel) {
  auto rows = ParseMeasurementsCsv(kMembwCsv, "membw.csv");
  ASSERT_TRUE(rows.ok()) << rows.status();
  std::vector<RowResult> res = EvaluateRows(*rows, Lookup, nullptr);
  ASSERT_EQ(res.size(), 3u);
  for (const RowResult& r : res) {
    ASSERT_TRUE(r.evaluated) << r.id << ": " << r.status;
    EXPECT_EQ(r.status, "ok");
    EXPECT_EQ(r.unit, "us");
    EXPECT_EQ(*r.predicted, *r.bound);  // no profile: predicted = bound
    EXPECT_FALSE(r.beats_bound) << r.id;
  }
  // Read 256 MiB: 268,435,456 B / 1e12 B/s = 268.435456 us.
  EXPECT_NEAR(*res[0].bound, 268.435456, 1e-6);
  // Copy: "bytes moved" 536,870,912 counts the 256 MiB buffer read and
  // written: 268,435,456 / 1e12 + 268,435,456 / 1e12 s = 536.870912 us.
  EXPECT_NEAR(*res[1].bound, 536.870912, 1e-6);
  // Read 1 GiB: 1,073,741,824 / 1e12 s = 1073.741824 us.
  EXPECT_NEAR(*res[2].bound, 1073.741824, 1e-6);
}

TEST(Validate, MembwRowWithoutBytesIsSkippedWithTheReason) {
  MeasurementRow r = Decode("bw", 300);
  r.model_id = "memory-read-kernel";
  r.metric = "kernel_us";
  r.unit = "us";
  r.note = "device: Test GPU; inputs rotated";
  std::vector<RowResult> res = EvaluateRows({r}, Lookup, nullptr);
  ASSERT_EQ(res.size(), 1u);
  EXPECT_FALSE(res[0].evaluated);
  EXPECT_EQ(res[0].status,
            "memory kernel: no \"bytes moved (read + written)=\" in note");
}

TEST(Validate, LlamaCppCudaRowsAccumulateInFp16) {
  // llama.cpp's CUDA backend: cuBLAS with CUBLAS_COMPUTE_16F; Metal and the
  // other runtimes are not assumed to.
  MeasurementRow r = Decode("d", 50);
  auto cuda = PrepareRow(r, Lookup);
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  EXPECT_TRUE(cuda->scenario.options.fp16_accumulation);
  r.framework = "llama.cpp-metal";
  auto metal = PrepareRow(r, Lookup);
  ASSERT_TRUE(metal.ok()) << metal.status();
  EXPECT_FALSE(metal->scenario.options.fp16_accumulation);
}

TEST(Validate, WeightBitsEffectiveIsUsedForEveryFormat) {
  // A w4a16 row at 4.5 effective bits (int4 + one fp16 scale per 32
  // weights: 4 + 16/32 = 4.5) reads 4.5 bits, not w4a16's default 4.125
  // (int4-g128: 4 + 16/128); the weights still dequantise (no native math).
  MeasurementRow r = Decode("w", 50);
  r.weight_format = "w4a16";
  r.weight_bits_effective = 4.5;
  auto p = PrepareRow(r, Lookup);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->scenario.precision.weights.bits, 4.5);
  EXPECT_FALSE(p->scenario.precision.weights.native_math.has_value());
  // Without the column the format's own bits apply.
  r.weight_bits_effective.reset();
  p = PrepareRow(r, Lookup);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->scenario.precision.weights.bits, 4.125);
  // fp8 stated at 8 bits keeps its native fp8 math.
  r.weight_format = "fp8";
  r.weight_bits_effective = 8;
  p = PrepareRow(r, Lookup);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->scenario.precision.weights.bits, 8);
  EXPECT_EQ(p->scenario.precision.weights.native_math, engine::MathType::kFp8);
}

TEST(Validate, MedianAndNearestRankP90) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2, 10}), 2.5);
  // 10 values: rank ceil(0.9 x 10) = 9 -> the 9th smallest.
  EXPECT_DOUBLE_EQ(Percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.9), 9);
}

TEST(Validate, EndToEndRowsAreSummarisedWithoutTheKernelRows) {
  // Two decode rows (10 % and 30 % off) and one kernel row (90 %): all three
  // have median 30 %, the two end-to-end rows (10 + 30) / 2 = 20 %.
  auto row = [](const char* id, const char* metric, double ape) {
    RowResult r;
    r.id = id;
    r.metric = metric;
    r.evaluated = true;
    r.ape = ape;
    return r;
  };
  std::vector<RowResult> rows = {row("a", "decode_tok_s", 0.1),
                                 row("b", "decode_tok_s", 0.3),
                                 row("k", "kernel_us", 0.9)};
  Summary s = Summarize(rows);
  EXPECT_DOUBLE_EQ(s.overall.median_ape, 0.3);
  ASSERT_TRUE(s.end_to_end.has_value());
  EXPECT_EQ(s.end_to_end->evaluated, 2);
  EXPECT_DOUBLE_EQ(s.end_to_end->median_ape, 0.2);
  std::ostringstream table;
  WriteTable({}, s, table);
  EXPECT_NE(table.str().find("end-to-end (not kernel_us)"), std::string::npos)
      << table.str();
  // Without kernel rows the group would repeat "all": it is left out.
  rows.pop_back();
  EXPECT_FALSE(Summarize(rows).end_to_end.has_value());
}

TEST(Validate, FrameworkKeyDropsVersions) {
  EXPECT_EQ(FrameworkKey("tensorrt-llm-0.6.1"), "tensorrt-llm");
  EXPECT_EQ(FrameworkKey("flashinfer-sm70-experimental"), "flashinfer");
  EXPECT_EQ(FrameworkKey("llama.cpp-cpu-amx-pr7487"), "llama.cpp-cpu-amx");
  EXPECT_EQ(FrameworkKey("gaudi-sw-1.18.0"), "gaudi-sw");
  EXPECT_EQ(FrameworkKey("llama.cpp-metal"), "llama.cpp-metal");
}

TEST(Validate, AWarmKernelInAnL2OfUnpublishedBandwidthHasNoBound) {
  // RoundGpu with a 50 MiB L2 whose bandwidth no source gives. One GEMM
  // (M = 1, N = 256, K = 4096: 2,105,856 B, 2.1 us from device memory)
  // measured at 1 us, warm and rotated.
  auto lookup = [](std::string_view) -> absl::StatusOr<engine::Hardware> {
    engine::Hardware hw = testing::RoundGpu();
    hw.last_level_cache_bytes = 50.0 * (1 << 20);
    return hw;
  };
  MeasurementRow warm = Decode("warm", 1);
  warm.model_id = "gemm-kernel";
  warm.metric = "kernel_us";
  warm.unit = "us";
  warm.note = "kernel shape: GEMM M=1 N=256 K=4096; weights L2-resident (warm)";
  MeasurementRow cold = warm;
  cold.id = "cold";
  cold.note = "kernel shape: GEMM M=1 N=256 K=4096; weights rotated (cold)";
  std::vector<RowResult> res = EvaluateRows({warm, cold}, lookup, nullptr);
  ASSERT_EQ(res.size(), 2u);
  ASSERT_TRUE(res[0].evaluated) << res[0].status;
  ASSERT_TRUE(res[1].evaluated) << res[1].status;
  // Warm: the L2 may beat device memory, so there is no bound to beat.
  EXPECT_TRUE(res[0].bound_unknown);
  EXPECT_FALSE(res[0].bound.has_value());
  EXPECT_FALSE(res[0].beats_bound);
  ASSERT_TRUE(res[0].predicted.has_value());
  // Rotated: device memory bounds it, and 1 us beats 2.1 us.
  EXPECT_FALSE(res[1].bound_unknown);
  EXPECT_NEAR(*res[1].bound, 2.105856, 1e-9);
  EXPECT_TRUE(res[1].beats_bound);
  // Soundness counts only the row with a bound.
  const Summary s = Summarize(res);
  EXPECT_EQ(s.overall.evaluated, 2);
  EXPECT_EQ(s.overall.bound_known, 1);
  EXPECT_DOUBLE_EQ(s.overall.soundness, 0);
  std::ostringstream table;
  WriteTable(res, s, table);
  EXPECT_NE(table.str().find("bound unknown for 1 rows"), std::string::npos) << table.str();
}

TEST(ValidateCommand, CsvHasExactlyTheColumns) {
  std::ostringstream out, err;
  ValidateOptions options;
  options.measurements = RIDGELINE_TEST_MEASUREMENTS;
  options.plugin_dir = RIDGELINE_TEST_PLUGIN_DIR;
  options.format = ReportFormat::kCsv;
  int rc = Validate(options, out, err);
  ASSERT_EQ(rc, 0) << err.str();
  std::vector<std::string> lines =
      absl::StrSplit(out.str(), '\n', absl::SkipEmpty());
  ASSERT_GT(lines.size(), 100u);
  EXPECT_EQ(lines[0], "id,metric,unit,measured,predicted,bound,ape,status");
  int ok = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    // Statuses may hold quoted commas; the first seven fields never do.
    std::vector<std::string> f =
        absl::StrSplit(lines[i], absl::MaxSplits(',', 7));
    ASSERT_EQ(f.size(), 8u) << lines[i];
    if (f[7] == "ok") {
      ++ok;
      EXPECT_FALSE(f[4].empty()) << lines[i];
      // No bound: a warm kernel row resident in an L2 of unpublished
      // bandwidth (RowResult::bound_unknown).
      if (f[1] != "kernel_us") {
        EXPECT_FALSE(f[5].empty()) << lines[i];
      }
      EXPECT_FALSE(f[6].empty()) << lines[i];
    } else {
      EXPECT_TRUE(f[4].empty()) << lines[i];
    }
  }
  // Single-device rows of known models on plugin hardware: well over 100.
  EXPECT_GT(ok, 100) << out.str();
}

// Usage errors and --help are the CLI's (tests/integration/cli); what is
// left here is input that cannot be read.
TEST(ValidateCommand, UnreadableInputsFailNamingThePath) {
  std::ostringstream out, err;
  ValidateOptions validate;
  validate.measurements = "/nonexistent.csv";
  EXPECT_EQ(Validate(validate, out, err), 1);
  EXPECT_NE(err.str().find("/nonexistent.csv"), std::string::npos) << err.str();

  std::ostringstream out2, err2;
  CalibrateOptions calibrate;
  calibrate.measurements = "/nonexistent.csv";
  calibrate.out = "/nonexistent-out";
  EXPECT_EQ(Calibrate(calibrate, out2, err2), 1);
  EXPECT_NE(err2.str().find("/nonexistent.csv"), std::string::npos)
      << err2.str();
  EXPECT_EQ(out2.str(), "");
}

TEST(CalibrateCommand, MembwRowsFitTheMemoryStreamEfficiency) {
  // membw-format rows for the real H200 plugin (device memory 4800 GB/s,
  // plugins/nvidia). Fixture values, not measurements: every call moves its
  // bytes at 4000 GB/s with no launch cost, so the fit must give
  // eta_m[elementwise] = 4000 / 4800 = 0.8333 and overhead 0.
  //   read 256 MiB:  268,435,456 B / 4000e9 B/s          =  67.108864 us
  //   read 1 GiB:  1,073,741,824 B / 4000e9 B/s          = 268.435456 us
  //   copy 256 MiB: 2 x 268,435,456 B / 4000e9 B/s       = 134.217728 us
  //   copy 1 GiB:   2 x 1,073,741,824 B / 4000e9 B/s     = 536.870912 us
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("ridgeline-membw-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string csv =
      "id,hardware_id,device_count,tensor_parallel,model_id,weight_format,"
      "weight_bits_effective,kv_format,batch,prompt_len,gen_len,framework,"
      "metric,value,unit,usable,source,note\n";
  struct Call { const char* kind; int64_t moved; const char* us; };
  int n = 0;
  for (const Call& c : {Call{"memory-read-kernel", 268435456, "67.108864"},
                        Call{"memory-read-kernel", 1073741824, "268.435456"},
                        Call{"memory-copy-kernel", 536870912, "134.217728"},
                        Call{"memory-copy-kernel", 2147483648, "536.870912"}}) {
    csv += "bw" + std::to_string(++n) + ",nvidia-h200-sxm-141gb,1,1," + c.kind +
           ",n/a,,n/a,1,0,1,ridgeline-gpu-bench,kernel_us," + c.us +
           ",us,1,fixture,\"bytes moved (read + written)=" + std::to_string(c.moved) +
           "; inputs rotated (cold cache)\"\n";
  }
  std::ofstream(dir / "membw.csv") << csv;
  CalibrateOptions options;
  options.measurements = dir / "membw.csv";
  options.out = dir / "profiles";
  options.plugin_dir = RIDGELINE_TEST_PLUGIN_DIR;
  std::ostringstream out, err;
  ASSERT_EQ(Calibrate(options, out, err), 0) << err.str();
  // A kernel table: kernel-model profiles go to profiles/kernels/.
  std::ifstream in(dir / "profiles" / "kernels" /
                   "nvidia-h200-sxm-141gb.ridgeline-gpu-bench.json");
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<Profile> p = ParseProfileJson(text.str(), "h200.json");
  ASSERT_TRUE(p.ok()) << p.status() << "\n" << out.str();
  EXPECT_NEAR(p->efficiency.memory[static_cast<int>(engine::OpClass::kElementwise)],
              4000.0 / 4800.0, 1e-6);
  EXPECT_NEAR(p->efficiency.per_kernel_overhead_seconds, 0, 1e-9);
  // The kernel model: every call moves bytes at 4000 GB/s of 4800 with no
  // floor (the rows lie on a line through 0), so the stream efficiency is
  // 4000 / 4800 and the elementwise per-call cost 0.
  ASSERT_TRUE(p->efficiency.kernel.present);
  EXPECT_NEAR(p->efficiency.kernel.elementwise_memory, 4000.0 / 4800.0, 1e-6);
  EXPECT_NEAR(p->efficiency.kernel.per_call_seconds[static_cast<int>(
                  engine::KernelClass::kElementwise)],
              0, 1e-9);
  std::filesystem::remove_all(dir);
}

std::string ReadAll(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(CalibrateCommand, ShippedProfilesAreReproducible) {
  // profiles/ must be exactly what `ridgeline calibrate` fits from
  // data/measurements/calibration.csv with the in-tree plugins: same files,
  // same keys and provenance, numbers equal to 1e-9 (relative).
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("ridgeline-refit-" + std::to_string(::getpid()));
  CalibrateOptions options;
  options.measurements = RIDGELINE_TEST_MEASUREMENTS;
  options.out = dir;
  options.plugin_dir = RIDGELINE_TEST_PLUGIN_DIR;
  std::ostringstream out, err;
  ASSERT_EQ(Calibrate(options, out, err), 0) << err.str();
  auto files = [](const std::filesystem::path& d) {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(d)) {
      if (e.path().extension() == ".json") names.push_back(e.path().filename());
    }
    std::sort(names.begin(), names.end());
    return names;
  };
  const std::filesystem::path shipped = RIDGELINE_TEST_PROFILES;
  ASSERT_EQ(files(dir), files(shipped));
  auto near = [](double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); };
  for (const std::string& name : files(dir)) {
    absl::StatusOr<Profile> fresh = ParseProfileJson(ReadAll(dir / name), name);
    absl::StatusOr<Profile> old = ParseProfileJson(ReadAll(shipped / name), name);
    ASSERT_TRUE(fresh.ok() && old.ok()) << name;
    EXPECT_EQ(fresh->hardware_id, old->hardware_id) << name;
    EXPECT_EQ(fresh->family, old->family) << name;
    EXPECT_EQ(fresh->framework, old->framework) << name;
    EXPECT_EQ(fresh->fitted_from, old->fitted_from) << name;
    EXPECT_EQ(fresh->fp16_accumulation, old->fp16_accumulation) << name;
    const engine::Efficiency& a = fresh->efficiency;
    const engine::Efficiency& b = old->efficiency;
    for (int c = 0; c < engine::kOpClassCount; ++c) {
      EXPECT_TRUE(near(a.compute[c], b.compute[c])) << name << " compute " << c;
      EXPECT_TRUE(near(a.memory[c], b.memory[c])) << name << " memory " << c;
    }
    EXPECT_TRUE(near(a.per_step_overhead_seconds, b.per_step_overhead_seconds)) << name;
    EXPECT_TRUE(near(a.per_request_overhead_seconds, b.per_request_overhead_seconds)) << name;
    EXPECT_TRUE(near(a.per_kernel_overhead_seconds, b.per_kernel_overhead_seconds)) << name;
  }
  // The per-row cross-validation: same rows and statuses, same numbers
  // (printed with 6 significant digits, so compared to 1e-5).
  std::vector<std::string> fresh_rows =
      absl::StrSplit(ReadAll(dir / "cross_validation.csv"), '\n');
  std::vector<std::string> old_rows =
      absl::StrSplit(ReadAll(shipped / "cross_validation.csv"), '\n');
  ASSERT_EQ(fresh_rows.size(), old_rows.size());
  for (size_t i = 0; i < fresh_rows.size(); ++i) {
    std::vector<std::string> f = absl::StrSplit(fresh_rows[i], ',');
    std::vector<std::string> o = absl::StrSplit(old_rows[i], ',');
    ASSERT_EQ(f.size(), o.size()) << fresh_rows[i];
    for (size_t k = 0; k < f.size(); ++k) {
      double x = 0, y = 0;
      if (absl::SimpleAtod(f[k], &x) && absl::SimpleAtod(o[k], &y)) {
        EXPECT_NEAR(x, y, 1e-5 * std::max(1.0, std::abs(y))) << fresh_rows[i];
      } else {
        EXPECT_EQ(f[k], o[k]) << fresh_rows[i];
      }
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ridgeline::calibration

namespace ridgeline::calibration {
namespace {

// RoundGpu with a compute peak so high that every pass is memory-bound: the
// weights' stream is then what a pass costs.
absl::StatusOr<engine::Hardware> FastMathLookup(std::string_view id) {
  absl::StatusOr<engine::Hardware> hw = Lookup(id);
  if (hw.ok()) {
    hw->peak_ops_per_second[static_cast<int>(engine::MathType::kFp16)] = 1e16;
    hw->peak_ops_per_second[static_cast<int>(engine::MathType::kBf16)] = 1e16;
  }
  return hw;
}

TEST(Validate, GenieTtftIsOnePassPer128PromptTokens) {
  // Llama-2-7B w4a16 at 4 bits, TTFT of a 1024-token prompt under Genie:
  // 8 passes of its 128-token prompt processor, each streaming the weights
  // but the embedding table (6,738,415,616 - 32000 x 4096 = 6,607,343,616
  // parameters x 0.5 B = 3,303,671,808 B; 3.30 ms at 1 TB/s), so at least
  // 8 x 3.30 = 26.43 ms. Each pass costs at least what a 128-token prompt
  // alone does (T128), and at most that plus the KV the earlier passes
  // wrote: passes 2..8 read 128 x (1 + ... + 7) = 3,584 tokens more of K and
  // V, 32 layers x 2 x 4096 x 2 B = 524,288 B per token: 1.879 GB, 1.88 ms.
  MeasurementRow r = Decode("g", 0);
  r.weight_format = "w4a16";
  r.weight_bits_effective = 4;
  r.framework = "qualcomm-genie-qnn";
  r.metric = "ttft_ms";
  r.unit = "ms";
  r.prompt_len = 128;
  r.gen_len = 1;
  r.value = 100;
  auto one = PrepareRow(r, FastMathLookup);
  ASSERT_TRUE(one.ok()) << one.status();
  absl::StatusOr<double> t128 = PredictRow(*one, engine::Efficiency{}, true);
  ASSERT_TRUE(t128.ok()) << t128.status();
  r.prompt_len = 1024;
  auto genie = PrepareRow(r, FastMathLookup);
  ASSERT_TRUE(genie.ok()) << genie.status();
  EXPECT_EQ(genie->prompt_iteration_tokens, 128);
  absl::StatusOr<double> bound = PredictRow(*genie, engine::Efficiency{}, true);
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_GE(*bound, 8 * 3.303671808);
  EXPECT_GE(*bound, 8 * *t128);
  EXPECT_LE(*bound, 8 * *t128 + 1.879 * 1.01);
  // QNN's one-pass context binary (framework qualcomm-qnn) streams the
  // weights once for the whole prompt: under two 128-token passes' worth
  // (it holds 1024 tokens' activations in one pass instead of 128).
  r.framework = "qualcomm-qnn";
  auto qnn = PrepareRow(r, FastMathLookup);
  ASSERT_TRUE(qnn.ok()) << qnn.status();
  EXPECT_EQ(qnn->prompt_iteration_tokens, 0);
  absl::StatusOr<double> single = PredictRow(*qnn, engine::Efficiency{}, true);
  ASSERT_TRUE(single.ok()) << single.status();
  EXPECT_GE(*single, 3.303671808);
  EXPECT_LT(*single, *bound / 2);
}

TEST(Validate, LlamaBenchRowsRunUnfusedAttentionIn512TokenBatches) {
  // llama-bench's -fa 0 default and n_ubatch 512, for CUDA and Metal alike.
  for (const char* fw : {"llama.cpp-cuda", "llama.cpp-metal"}) {
    MeasurementRow r = Decode("p", 0);
    r.framework = fw;
    r.metric = "prefill_tok_s";
    r.prompt_len = 4096;
    r.gen_len = 0;
    r.value = 1000;
    auto p = PrepareRow(r, Lookup);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_FALSE(p->scenario.options.flash_attention) << fw;
    EXPECT_EQ(p->prompt_iteration_tokens, 512) << fw;
  }
  MeasurementRow r = Decode("t", 0);
  r.framework = "tensorrt-llm-0.5";
  r.metric = "ttft_ms";
  r.unit = "ms";
  r.prompt_len = 2048;
  r.gen_len = 1;
  r.value = 30;
  auto p = PrepareRow(r, Lookup);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->scenario.options.flash_attention);
  EXPECT_EQ(p->prompt_iteration_tokens, 0);
}

}  // namespace
}  // namespace ridgeline::calibration
