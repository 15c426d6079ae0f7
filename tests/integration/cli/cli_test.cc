// The `ridgeline` binary against a real ridgeline-server on 127.0.0.1:0 and
// in-process: same arguments must print byte-identical results; errors are
// one line naming the flag or field, with a non-zero exit.
#include "ridgeline/cli/cli.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server_process.h"
#include "table.h"

namespace ridgeline::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> With(std::vector<std::string> a,
                              const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The plugin host logs each plugin it loads on stderr; errors are the lines
// that start with "ridgeline <command>:".
std::vector<std::string> ErrorLines(const std::string& err,
                                    const std::string& prefix) {
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(err, '\n')) {
    if (absl::StartsWith(line, prefix)) lines.emplace_back(line);
  }
  return lines;
}

class CliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess();
    ASSERT_TRUE(server_->ok()) << server_->error();
    ASSERT_TRUE(WaitServing(server_->Channel(), std::chrono::seconds(30)));
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  // Same command both ways.
  static std::vector<std::string> Local(const std::vector<std::string>& args) {
    return With({std::string("--plugin-dir=") + RIDGELINE_TEST_PLUGIN_DIR,
                 std::string("--profile-dir=") + RIDGELINE_TEST_PROFILE_DIR},
                args);
  }
  static std::vector<std::string> Remote(const std::vector<std::string>& args) {
    return With({"--server", server_->address()}, args);
  }

  static ServerProcess* server_;
};
ServerProcess* CliTest::server_ = nullptr;

const std::vector<std::string> kAnalyze = {
    "analyze", "--model", "llama-3-8b", "--hardware", "nvidia-h100-sxm-80gb",
    "--batch", "16",      "--prompt",   "1024",       "--gen",
    "128"};

TEST_F(CliTest, AnalyzeJsonIsIdenticalInProcessAndOverGrpc) {
  CliRun local = RunCliBinary(Local(With(kAnalyze, {"--format", "json"})));
  CliRun remote = RunCliBinary(Remote(With(kAnalyze, {"--format", "json"})));
  ASSERT_EQ(local.exit_code, 0) << local.err;
  ASSERT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_EQ(local.out, remote.out);

  nlohmann::json j = nlohmann::json::parse(local.out);
  const auto& r = j["result"];
  EXPECT_EQ(r["modelId"], "llama-3-8b");
  // Llama-3-8B (meta-llama/Meta-Llama-3-8B config.json): vocab 128256,
  // hidden 4096, 32 layers, 32 heads, 8 KV heads, head_dim 128, FFN 14336,
  // untied LM head.
  //   per layer: q 4096^2 = 16,777,216; k+v 2*4096*1024 = 8,388,608;
  //   o 16,777,216; gated FFN 3*4096*14336 = 176,160,768; 2 norms 8,192
  //   = 218,112,000; x32 = 6,979,584,000
  //   embedding + LM head 2*128256*4096 = 1,050,673,152; final norm 4,096
  //   total 8,030,261,248 parameters x 2 bytes (bf16) = 16,060,522,496 B.
  EXPECT_NEAR(r["memory"]["requiredWeightsBytes"].get<double>(), 16060522496.0,
              16060522496.0 * 1e-6);
  // KV cache at the longest context: 2 (K,V) x 32 layers x 8 heads x 128
  // = 65,536 elements/token x 2 B x 16 sequences x (1024 + 128) tokens
  // = 2,415,919,104 B (the last step may not store its own token: allow 0.1%).
  EXPECT_NEAR(r["memory"]["requiredKvCacheBytes"].get<double>(), 2415919104.0,
              2415919104.0 * 1e-3);
}

// Issue 20 item 3: Analyze prices a part as Plan does (engine/prices.h)
// and says on which basis, in Plan's words. Before: the H100 was priced by
// energy only ("price unknown", ~$0.013/Mtoken) while Plan charged the
// dated $2.99/h. The RTX 4090 has a launch price and no rental quote
// (purchase); the Gaudi 2 neither (energy only).
TEST_F(CliTest, AnalyzeCarriesPlansCostBasisBothWays) {
  struct Case {
    const char* hardware;
    const char* basis;
  };
  for (const Case& c : {Case{"nvidia-h100-sxm-80gb", "rental"},
                        Case{"amd-mi300x", "rental"},
                        Case{"nvidia-rtx-4090", "purchase"},
                        Case{"intel-gaudi2", "energy-only"}}) {
    const std::vector<std::string> args = {
        "analyze", "--model", "llama-3-8b", "--hardware", c.hardware,
        "--batch", "16", "--prompt", "1024", "--gen", "128"};
    CliRun local = RunCliBinary(Local(With(args, {"--format", "json"})));
    CliRun remote = RunCliBinary(Remote(With(args, {"--format", "json"})));
    ASSERT_EQ(local.exit_code, 0) << local.err;
    ASSERT_EQ(local.out, remote.out);
    const nlohmann::json j = nlohmann::json::parse(local.out);
    const auto& e = j["result"]["economy"];
    EXPECT_EQ(e["costBasis"], c.basis) << c.hardware;
    if (std::string(c.basis) == "rental") {
      // $/h / 3600 x e2e x 1 device, per 16 x 128 output tokens, x 1e6;
      // power is in the rental price.
      const double rate =
          std::string(c.hardware) == "amd-mi300x" ? 1.85 : 2.99;
      EXPECT_NEAR(e["usdPerMillionOutputTokens"].get<double>(),
                  rate / 3600 * j["result"]["e2eSeconds"].get<double>() /
                      (16 * 128) * 1e6,
                  1e-9)
          << c.hardware;
      EXPECT_EQ(e["note"].get<std::string>().find("price unknown"),
                std::string::npos);
    }
    CliRun table = RunCliBinary(Local(args));
    ASSERT_EQ(table.exit_code, 0) << table.err;
    EXPECT_THAT(table.out,
                HasSubstr(std::string(" per million output tokens (") +
                          c.basis + ")"))
        << c.hardware;
    // A sweep point (what the web Compare view plots) is priced alike.
    std::vector<std::string> sweep = args;
    sweep[0] = "sweep";
    CliRun point = RunCliBinary(Remote(With(sweep, {"--format", "json"})));
    ASSERT_EQ(point.exit_code, 0) << point.err;
    const nlohmann::json p = nlohmann::json::parse(point.out);
    EXPECT_EQ(p["summary"]["costBasis"], c.basis) << c.hardware;
    const double usd = e["usdPerMillionOutputTokens"].get<double>();
    EXPECT_NEAR(p["summary"]["usdPerMillionOutputTokens"].get<double>(), usd,
                1e-9 * usd);
  }
}

TEST_F(CliTest, Fp16AccumulationUsesTheGeForceRateBothWays) {
  // RTX 4090 (plugins/nvidia): fp16 165.2 TFLOPS with FP32 accumulation,
  // 330.3 with FP16 accumulation (hardware_specs.csv notes).
  const std::vector<std::string> args = {
      "analyze", "--model", "llama-3-8b", "--hardware", "nvidia-rtx-4090", "--weights", "fp16",
      "--activations", "fp16", "--kv", "fp16", "--view", "basic", "--no-suggestions",
      "--format", "json"};
  CliRun plain = RunCliBinary(Local(args));
  CliRun local = RunCliBinary(Local(With(args, {"--fp16-accumulation"})));
  CliRun remote = RunCliBinary(Remote(With(args, {"--fp16-accumulation"})));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(local.exit_code, 0) << local.err;
  EXPECT_EQ(local.out, remote.out);
  nlohmann::json p = nlohmann::json::parse(plain.out)["result"];
  nlohmann::json a = nlohmann::json::parse(local.out)["result"];
  EXPECT_EQ(p["matmulMath"], "fp16");
  EXPECT_EQ(a["matmulMath"], "fp16-acc16");
  // The ridge point is matmul peak / bandwidth: 330.3e12 / 1008e9 = 327.7
  // FLOP/B with it, 165.2e12 / 1008e9 = 163.9 without.
  EXPECT_NEAR(a["ridgePointFlopsPerByte"].get<double>(), 327.678571, 1e-3);
  EXPECT_NEAR(p["ridgePointFlopsPerByte"].get<double>(), 163.888889, 1e-3);

  // The llama.cpp-cuda profiles were fitted with fp16 accumulation, so
  // choosing one turns it on; --no-fp16-accumulation still wins.
  CliRun framework = RunCliBinary(Remote(With(args, {"--framework", "llama.cpp-cuda"})));
  ASSERT_EQ(framework.exit_code, 0) << framework.err;
  nlohmann::json f = nlohmann::json::parse(framework.out);
  EXPECT_EQ(f["calibration"]["profileName"], "nvidia-rtx-4090.llama.cpp-cuda");
  EXPECT_EQ(f["result"]["matmulMath"], "fp16-acc16");
  CliRun off = RunCliBinary(
      Remote(With(args, {"--framework", "llama.cpp-cuda", "--no-fp16-accumulation"})));
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_EQ(nlohmann::json::parse(off.out)["result"]["matmulMath"], "fp16");
}

TEST_F(CliTest, GemmKernelFp16AccumulationOnGeForce) {
  // RTX 4090, 8192^3 fp16 GEMM: 2 x 8192^3 = 1.0995e12 FLOP.
  //   FP32 accumulate: / 165.2e12 = 6.6556 ms; FP16 accumulate: / 330.3e12
  //   = 3.3288 ms. Bytes: 3 x 8192^2 x 2 = 402.7 MB / 1008e9 = 0.40 ms, so
  //   compute-bound either way.
  const std::vector<std::string> args = {"kernel", "gemm", "--hardware", "nvidia-rtx-4090",
                                         "--m", "8192", "--n", "8192", "--k", "8192",
                                         "--format", "json"};
  CliRun plain = RunCliBinary(Remote(args));
  CliRun acc = RunCliBinary(Remote(With(args, {"--fp16-accumulation"})));
  CliRun local = RunCliBinary(Local(With(args, {"--fp16-accumulation"})));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(acc.exit_code, 0) << acc.err;
  EXPECT_EQ(acc.out, local.out);
  nlohmann::json p = nlohmann::json::parse(plain.out)["bound"];
  nlohmann::json a = nlohmann::json::parse(acc.out)["bound"];
  EXPECT_EQ(a["math"], "fp16-acc16");
  EXPECT_NEAR(p["seconds"].get<double>(), 2.0 * 8192.0 * 8192.0 * 8192.0 / 165.2e12, 1e-9);
  EXPECT_NEAR(a["seconds"].get<double>(), 2.0 * 8192.0 * 8192.0 * 8192.0 / 330.3e12, 1e-9);
}

TEST_F(CliTest, TensorParallelBothWaysAndInSweeps) {
  const std::vector<std::string> args = {"analyze", "--model", "llama-2-70b", "--hardware",
                                         "nvidia-h100-sxm-80gb", "--tensor-parallel", "4",
                                         "--view", "basic", "--no-suggestions",
                                         "--format", "json"};
  CliRun local = RunCliBinary(Local(args));
  CliRun remote = RunCliBinary(Remote(args));
  ASSERT_EQ(local.exit_code, 0) << local.err;
  EXPECT_EQ(local.out, remote.out);
  nlohmann::json r = nlohmann::json::parse(local.out)["result"];
  // Llama-2-70B (vocab 32000, hidden 8192, 80 layers, 64 heads, 8 KV heads,
  // head_dim 128, FFN 28672), bf16, one device of four:
  //   embedding and LM head 32000 x 8192 / 4 = 65,536,000 each;
  //   per layer q 8192 x 2048 = 16,777,216, k+v 2 x 8192 x 256 = 4,194,304,
  //   o 2048 x 8192 = 16,777,216, FFN 3 x 8192 x 7168 = 176,160,768, norms
  //   2 x 8192 = 16,384 -> 213,925,888, x 80 = 17,114,071,040; final norm
  //   8,192. 17,245,151,232 params x 2 B = 34,490,302,464 B.
  EXPECT_DOUBLE_EQ(r["memory"]["requiredWeightsBytes"].get<double>(), 34490302464.0);
  // The H100 SXM plugin publishes NVLink (900 GB/s): no warning (the empty
  // list is printed: JSON shows fields at their default).
  EXPECT_TRUE(r["warnings"].empty());
  // A sweep point with the same flag is the same analysis.
  CliRun sweep = RunCliBinary(Remote({"sweep", "--model", "llama-2-70b", "--hardware",
                                   "nvidia-h100-sxm-80gb", "--tensor-parallel", "4",
                                   "--format", "json"}));
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  nlohmann::json point = nlohmann::json::parse(sweep.out.substr(0, sweep.out.find('\n')));
  EXPECT_DOUBLE_EQ(point["summary"]["tpotMeanSeconds"].get<double>(),
                   r["tpotMeanSeconds"].get<double>());
  // 3 does not divide 64 heads: the engine's message, with the flag.
  CliRun bad = RunCliBinary(Remote({"analyze", "--model", "llama-2-70b", "--hardware",
                                 "nvidia-h100-sxm-80gb", "--tensor-parallel", "3"}));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("parallelism.tensor_parallel must divide "
                                 "model.num_attention_heads (64), got 3 (flag "
                                 "--tensor-parallel)"));
}

// JSON prints every field, at its default too, so scripts need not know
// proto3's omission rules; and `hardware show --format json` is accepted as
// is by --hardware-file.
TEST_F(CliTest, JsonPrintsDefaultsAndHardwareShowFeedsHardwareFile) {
  // Llama-3-70B bf16 weights: 70.6e9 params x 2 B = 141 GB > 24 GB of the
  // RTX 4090's GDDR6X: placement spills, "fits" is false and printed.
  const std::vector<std::string> big = {
      "analyze", "--model", "llama-3-70b", "--hardware", "nvidia-rtx-4090",
      "--view", "basic", "--no-suggestions", "--format", "json"};
  CliRun local = RunCliBinary(Local(big));
  CliRun remote = RunCliBinary(Remote(big));
  ASSERT_EQ(local.exit_code, 0) << local.err;
  EXPECT_EQ(local.out, remote.out);
  nlohmann::json j = nlohmann::json::parse(local.out);
  ASSERT_TRUE(j["result"]["memory"].contains("fits"));
  EXPECT_EQ(j["result"]["memory"]["fits"], false);
  // Tier 0 (GDDR6X) is printed as "tier": 0, not omitted.
  EXPECT_EQ(j["result"]["memory"]["tiers"][0]["tier"], 0);
  EXPECT_EQ(j["upperBound"], true);

  char path[] = "/tmp/ridgeline-hw-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  CliRun show = RunCliBinary(Remote({"hardware", "show", "nvidia-h100-sxm-80gb",
                                  "--format", "json"}));
  ASSERT_EQ(show.exit_code, 0) << show.err;
  ASSERT_EQ(write(fd, show.out.data(), show.out.size()),
            static_cast<ssize_t>(show.out.size()));
  close(fd);
  const std::vector<std::string> inline_hw = {
      "analyze", "--model", "llama-3-8b", "--hardware-file", path,
      "--view", "basic", "--pure-roofline", "--format", "json"};
  CliRun a = RunCliBinary(Local(inline_hw));
  CliRun b = RunCliBinary(Remote(inline_hw));
  unlink(path);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  // The same numbers as the catalog part under the pure roofline (no hook
  // or profile on either side).
  CliRun by_id = RunCliBinary(Local({"analyze", "--model", "llama-3-8b", "--hardware",
                                  "nvidia-h100-sxm-80gb", "--view", "basic",
                                  "--pure-roofline", "--format", "json"}));
  ASSERT_EQ(by_id.exit_code, 0) << by_id.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(a.out)["result"]["tpotMeanSeconds"].get<double>(),
                   nlohmann::json::parse(by_id.out)["result"]["tpotMeanSeconds"].get<double>());
}

// Sweep CSV carries J/token, gCO2e/Mtoken and whether an operand lives
// outside device memory.
TEST_F(CliTest, SweepCsvHasEnergyCarbonAndSpilled) {
  const std::vector<std::string> args = {
      "sweep", "--model", "llama-3-8b,llama-2-13b", "--hardware",
      "nvidia-rtx-4090", "--batch", "1", "--prompt", "512", "--gen", "16",
      "--format", "csv"};
  CliRun local = RunCliBinary(Local(args));
  CliRun remote = RunCliBinary(Remote(args));
  ASSERT_EQ(local.exit_code, 0) << local.err;
  EXPECT_EQ(local.out, remote.out);
  std::vector<std::string> lines = absl::StrSplit(local.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u);
  std::vector<std::string> header = absl::StrSplit(lines[0], ',');
  auto col = [&](const std::string& name) {
    return std::find(header.begin(), header.end(), name) - header.begin();
  };
  ASSERT_LT(col("joules_per_output_token"), static_cast<long>(header.size()));
  ASSERT_LT(col("g_co2e_per_million_output_tokens"), static_cast<long>(header.size()));
  ASSERT_LT(col("spilled"), static_cast<long>(header.size()));
  std::vector<std::string> small = absl::StrSplit(lines[1], ',');
  std::vector<std::string> big = absl::StrSplit(lines[2], ',');
  ASSERT_EQ(small.size(), header.size());
  ASSERT_EQ(big.size(), header.size());
  // Llama-3-8B bf16: 16.06 GB of weights < 24 GB of GDDR6X: all on device.
  EXPECT_EQ(small[col("spilled")], "false");
  // Llama-2-13B bf16: 13.0e9 params x 2 B = 26.0 GB > 24 GB of GDDR6X: the
  // rest goes to host DRAM over PCIe (tier kind host-link); it still fits.
  EXPECT_EQ(big[col("spilled")], "true");
  EXPECT_EQ(big[col("fits")], "true");
  double joules = 0;
  EXPECT_TRUE(absl::SimpleAtod(small[col("joules_per_output_token")], &joules));
  EXPECT_GT(joules, 0);
}

TEST_F(CliTest, MaxContextWarningShownBothWays) {
  // Llama-2-7B allows 4096 positions; 8000 + 128 = 8128 is beyond it.
  const std::vector<std::string> args = {"analyze", "--model", "llama-2-7b", "--hardware",
                                         "nvidia-h100-sxm-80gb", "--prompt", "8000",
                                         "--view", "basic", "--no-suggestions"};
  CliRun local = RunCliBinary(Local(args));
  CliRun remote = RunCliBinary(Remote(args));
  ASSERT_EQ(local.exit_code, 0) << local.err;
  EXPECT_EQ(local.out, remote.out);
  EXPECT_THAT(local.out, HasSubstr("Warning: prompt + generated tokens (8128) exceed the "
                                   "model's max_context (4096"));
  CliRun json = RunCliBinary(Remote(With(args, {"--format", "json"})));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j["result"]["warnings"].size(), 1u);
}

TEST_F(CliTest, PinsAndEconomicsFlagsReachTheEngineBothWays) {
  // Llama-3-8B bf16 weights pinned to tier 1 of the RTX 4090 (host DRAM over
  // PCIe 4.0 x16) instead of GDDR6X (tier 0), and economics overridden.
  const std::vector<std::string> args = {
      "analyze", "--model", "llama-3-8b", "--hardware", "nvidia-rtx-4090",
      "--prompt", "512", "--gen", "2", "--no-suggestions", "--view", "basic",
      "--weights-tier", "1", "--pue", "1.2", "--electricity-usd-per-kwh",
      "0.1", "--grid-g-co2e-per-kwh", "100", "--format", "json"};
  CliRun local = RunCliBinary(Local(args));
  CliRun remote = RunCliBinary(Remote(args));
  ASSERT_EQ(local.exit_code, 0) << local.err;
  ASSERT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_EQ(local.out, remote.out);
  const auto r = nlohmann::json::parse(local.out)["result"];
  // All 16,060,522,496 weight bytes (see AnalyzeJsonIsIdentical...) sit in
  // tier 1; tier 0 holds none.
  const auto& tiers = r["memory"]["tiers"];
  EXPECT_EQ(tiers[0].value("weightsBytes", 0.0), 0.0);
  EXPECT_NEAR(tiers[1]["weightsBytes"].get<double>(), 16060522496.0, 1.0);
  // ... and the result says so: 16,060,522,496 B = 16.1 GB, all of it, over
  // the 32 GB/s link, in the memory section and as a warning.
  EXPECT_THAT(r["memory"]["spilled"].get<std::string>(),
              HasSubstr("weights 16.1 GB of 16.1 GB (100.0%) in host DRAM over "
                        "PCIe 4.0 x16 (32.0 GB/s)"));
  ASSERT_TRUE(r.contains("warnings"));
  EXPECT_THAT(r["warnings"][0].get<std::string>(),
              HasSubstr("fits, but off the device: weights 16.1 GB"));
  // A batch-1 decode step then streams the ~15.01 GB of non-embedding weights
  // over 32 GB/s (16 GT/s x 16 lanes / 8): >= 0.46 s per token, against
  // ~15 ms from GDDR6X at 1008 GB/s.
  EXPECT_GT(r["tpotMeanSeconds"].get<double>(), 0.46);
  // gCO2e per kWh at PUE 1.2 and 100 g/kWh: g/token = J/token / 3.6e6 x 1.2
  // x 100 (no embodied carbon published for this part).
  const double j_per_token = r["economy"]["joulesPerOutputToken"];
  EXPECT_NEAR(r["economy"]["gCo2ePerMillionOutputTokens"].get<double>(),
              j_per_token / 3.6e6 * 1.2 * 100 * 1e6, 1e-6 * j_per_token * 1e6);

  CliRun bad = RunCliBinary(Local({"analyze", "--model", "llama-3-8b",
                                "--hardware", "nvidia-rtx-4090", "--pue",
                                "abc"}));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--pue must be a finite number, got \"abc\""));
  CliRun range = RunCliBinary(Remote({"analyze", "--model", "llama-3-8b",
                                   "--hardware", "nvidia-rtx-4090",
                                   "--kv-tier", "5"}));
  EXPECT_EQ(range.exit_code, 1);
  EXPECT_THAT(range.err, HasSubstr("placement.kv_cache_tier"));
}

TEST_F(CliTest, AnalyzeTableAndCsvAreIdenticalInProcessAndOverGrpc) {
  for (const char* format : {"table", "csv"}) {
    CliRun local = RunCliBinary(Local(With(kAnalyze, {"--format", format})));
    CliRun remote = RunCliBinary(Remote(With(kAnalyze, {"--format", format})));
    ASSERT_EQ(local.exit_code, 0) << local.err;
    ASSERT_EQ(remote.exit_code, 0) << remote.err;
    EXPECT_EQ(local.out, remote.out) << format;
  }
  CliRun table = RunCliBinary(Local(kAnalyze));
  EXPECT_THAT(table.out, HasSubstr("TTFT"));
  EXPECT_THAT(table.out, HasSubstr("TPOT mean"));
  EXPECT_THAT(table.out, HasSubstr("Memory: fits"));
  EXPECT_THAT(table.out, HasSubstr("Prefill (1 step"));
  EXPECT_THAT(table.out, HasSubstr("ffn_down"));
  EXPECT_THAT(table.out, HasSubstr("Bottleneck: "));
  CliRun csv = RunCliBinary(Local(With(kAnalyze, {"--format", "csv"})));
  EXPECT_THAT(csv.out, ::testing::StartsWith(
                           "phase,op,layer_group,layers,math,flops,bytes,"));
  EXPECT_THAT(csv.out, HasSubstr("\ndecode,lm_head,,1,bf16,"));
}

TEST_F(CliTest, SweepJsonLinesAreIdenticalAndInStableOrder) {
  const std::vector<std::string> sweep = {"sweep",
                                          "--model",
                                          "llama-3-8b,mistral-7b",
                                          "--hardware",
                                          "nvidia-h100-sxm-80gb,amd-mi300x",
                                          "--batch",
                                          "1,8",
                                          "--format",
                                          "json"};
  CliRun local = RunCliBinary(Local(sweep));
  CliRun remote = RunCliBinary(Remote(sweep));
  ASSERT_EQ(local.exit_code, 0) << local.err;
  ASSERT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_EQ(local.out, remote.out);
  std::vector<std::string> lines =
      absl::StrSplit(local.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 8u);  // 2 models x 2 hardware x 2 batch sizes
  for (size_t i = 0; i < lines.size(); ++i) {
    nlohmann::json p = nlohmann::json::parse(lines[i]);
    // i = (m * 2 + h) * 2 + b; proto3 JSON omits a zero index.
    EXPECT_EQ(p.value("index", std::string("0")), std::to_string(i));
    EXPECT_EQ(p["summary"]["modelId"], i < 4 ? "llama-3-8b" : "mistral-7b");
    EXPECT_EQ(p["summary"]["hardwareId"],
              (i / 2) % 2 == 0 ? "nvidia-h100-sxm-80gb" : "amd-mi300x");
    EXPECT_EQ(p["summary"]["batch"], i % 2 == 0 ? "1" : "8");
  }
}

TEST_F(CliTest, CatalogCommandsAreIdenticalInProcessAndOverGrpc) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {"hardware", "--format", "json"},
           {"hardware", "show", "nvidia-h100-sxm-80gb"},
           {"models"},
           {"models", "show", "llama-3-8b", "--format", "json"}}) {
    CliRun local = RunCliBinary(Local(args));
    CliRun remote = RunCliBinary(Remote(args));
    ASSERT_EQ(local.exit_code, 0) << local.err;
    ASSERT_EQ(remote.exit_code, 0) << remote.err;
    EXPECT_EQ(local.out, remote.out) << args[0];
    EXPECT_FALSE(local.out.empty());
  }
  CliRun show = RunCliBinary(Local({"hardware", "show", "nvidia-h100-sxm-80gb"}));
  EXPECT_THAT(show.out, HasSubstr("Memory tiers"));
  EXPECT_THAT(show.out, HasSubstr("Sources"));
}

TEST_F(CliTest, ServerErrorsNameTheFieldAndFlagTheSameBothWays) {
  std::vector<std::string> bad = kAnalyze;
  bad[6] = "0";  // --batch 0; allowed 1..65536
  CliRun local = RunCliBinary(Local(bad));
  CliRun remote = RunCliBinary(Remote(bad));
  EXPECT_EQ(local.exit_code, 1);
  EXPECT_EQ(remote.exit_code, 1);
  std::vector<std::string> l = ErrorLines(local.err, "ridgeline analyze:");
  std::vector<std::string> r = ErrorLines(remote.err, "ridgeline analyze:");
  ASSERT_EQ(l.size(), 1u) << local.err;
  EXPECT_EQ(l, r);
  EXPECT_THAT(l[0], HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(l[0], HasSubstr("workload.batch"));
  EXPECT_THAT(l[0], HasSubstr("(flag --batch)"));

  CliRun unknown = RunCliBinary(Remote({"analyze", "--model", "llama-3-8b",
                                     "--hardware", "nvidia-h100-sxm-80g"}));
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("NOT_FOUND"));
  EXPECT_THAT(unknown.err, HasSubstr("nvidia-h100-sxm-80gb"));  // closest id

  // A mistyped --family used to print an empty table and exit 0.
  for (const auto& args : {Local({"hardware", "--family", "nvidiaa"}),
                           Remote({"hardware", "--family", "nvidiaa"})}) {
    CliRun typo = RunCliBinary(args);
    EXPECT_EQ(typo.exit_code, 1) << typo.out;
    EXPECT_THAT(typo.err, HasSubstr("INVALID_ARGUMENT"));
    EXPECT_THAT(typo.err, HasSubstr("family: "));
    EXPECT_THAT(typo.err, HasSubstr("\"nvidiaa\""));
    // The loaded families are listed ("nvidiaa" itself is not one).
    EXPECT_THAT(typo.err, ::testing::ContainsRegex("[(, ]nvidia[,)]"));
  }
}

TEST_F(CliTest, UsageErrorsExitTwoWithOneLineNamingTheFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"analyze", "--model", "llama-3-8b", "--hardware", "x", "--batch",
        "abc"},
       "--batch: expected an integer, got 'abc'"},
      {{"analyze", "--model", "llama-3-8b", "--hardware", "x", "--bogus"},
       "unknown flag --bogus"},
      {{"analyze", "--hardware", "x"},
       "give exactly one of --model ID or --model-config FILE.json"},
      {{"analyze", "--model", "m", "--hardware", "x", "--format", "xml"},
       "--format: expected table, json or csv, got 'xml'"},
      {{"analyze", "--model", "m", "--hardware-file", "/nonexistent.json"},
       "--hardware-file: cannot read file '/nonexistent.json'"},
      {{"sweep", "--model", "m", "--hardware", "x", "--shard", "2"},
       "--shard: expected I/N"},
      // Regression: sscanf("%u/%u") read "-1/4" as 4294967295/4 and took
      // "1/4x" as 1/4.
      {{"sweep", "--model", "m", "--hardware", "x", "--shard", "-1/4"},
       "--shard: expected I/N, two integers in [0, 4294967295] (e.g. 0/4), "
       "got '-1/4'"},
      {{"sweep", "--model", "m", "--hardware", "x", "--shard", "1/4x"},
       "got '1/4x'"},
      {{"sweep", "--model", "m", "--hardware", "x", "--shard", "1/99999999999"},
       "got '1/99999999999'"},
      // Regression: stray words were ignored ("--batch 8 16" ran batch 8).
      {{"analyze", "--model", "m", "--hardware", "x", "--batch", "8", "16"},
       "unexpected argument '16' (this command takes flags only"},
      {{"sweep", "--model", "m", "--hardware", "x", "extra"},
       "unexpected argument 'extra'"},
      // Regression: a directory read as "" and failed later as an empty
      // config.
      {{"analyze", "--model-config", "/tmp", "--hardware", "x"},
       "--model-config: cannot read file '/tmp' (must be a readable regular "
       "file)"},
      {{"models", "show"}, "usage: ridgeline models [list | show ID]"},
      {{"hardware", "show", "a", "b"},
       "usage: ridgeline hardware [list | show ID]"},
      // Regression: these printed the whole multi-line help.
      {{"--server"}, "ridgeline: --server needs a value (HOST:PORT)"},
      {{"--server", "127.0.0.1:1"},
       "ridgeline: missing command after flags (commands: analyze"},
      // Regression: --full was silently dropped from tables and CSV.
      {{"--server", "127.0.0.1:1", "sweep", "--model", "m", "--hardware", "x",
        "--full", "--format", "csv"},
       "--full applies to --format json only"},
      {{"frobnicate"}, "unknown command 'frobnicate'"},
  };
  for (const Case& c : cases) {
    CliRun run = RunCliBinary(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.message;
    EXPECT_THAT(run.err, HasSubstr(c.message));
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
}

// Regression: a sweep the server refuses (here an unknown model) used to
// print the table header on stdout before the error.
TEST_F(CliTest, FailedSweepPrintsNothingOnStdout) {
  for (const char* format : {"table", "csv", "json"}) {
    for (const auto& args :
         {Local({"sweep", "--model", "llama-3-8b,nosuch", "--hardware",
                 "nvidia-h100-sxm-80gb", "--format", format}),
          Remote({"sweep", "--model", "llama-3-8b,nosuch", "--hardware",
                  "nvidia-h100-sxm-80gb", "--format", format})}) {
      CliRun run = RunCliBinary(args);
      EXPECT_EQ(run.exit_code, 1) << format;
      EXPECT_EQ(run.out, "") << format;
      EXPECT_THAT(run.err, HasSubstr("NOT_FOUND: models[1].catalog_id"));
      // Regression: sweep list entries were not mapped to their flag.
      EXPECT_THAT(run.err, HasSubstr("(flag --model)"));
    }
  }
}

TEST_F(CliTest, UnreachableServerIsAnError) {
  // Port 1 on loopback: nothing listens there.
  CliRun run =
      RunCliBinary({"--server", "127.0.0.1:1", "--timeout", "5", "models"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, HasSubstr("UNAVAILABLE: server 127.0.0.1:1"));
}

// A script that starts the server and calls it at once (the quickstart
// does) must not fail while the plugins load: the CLI waits through the
// server's "still loading" UNAVAILABLE within --timeout, and no longer.
TEST(CliStartupTest, WaitsForAServerStillLoadingItsPluginsWithinTheTimeout) {
  ServerProcess starting({"--plugin-load-delay-ms=1500"});
  ASSERT_TRUE(starting.ok()) << starting.error();
  CliRun run = RunCliBinary({"--server", starting.address(), "--timeout", "30",
                             "hardware", "list"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("nvidia-h100-sxm-80gb"));

  ServerProcess slow({"--plugin-load-delay-ms=60000"});
  ASSERT_TRUE(slow.ok()) << slow.error();
  run = RunCliBinary(
      {"--server", slow.address(), "--timeout", "1", "hardware", "list"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err,
              HasSubstr("UNAVAILABLE: server " + slow.address() +
                        ": hardware plugins are still loading"));
}

TEST_F(CliTest, HelpListsEveryCommandAndFlag) {
  // The command table the dispatcher reads (issue 20, item 8: the help
  // listed neither explore nor merge): each command is a line of --help,
  // and answers `<command> --help` with its usage.
  const std::vector<cli::CommandSummary> commands = cli::Commands();
  std::vector<std::string> names;
  for (const cli::CommandSummary& c : commands) names.push_back(c.name);
  for (const char* cmd :
       {"analyze", "sweep", "step", "hardware", "models", "kernel", "explore",
        "merge", "plan", "simulate", "validate", "calibrate", "measurements"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), cmd), names.end()) << cmd;
  }
  CliRun top = RunCliBinary({"--help"});
  EXPECT_EQ(top.exit_code, 0);
  for (const cli::CommandSummary& c : commands) {
    EXPECT_THAT(top.out, HasSubstr("\n  " + c.name + " ")) << c.name;
    EXPECT_THAT(top.out, HasSubstr(c.summary)) << c.name;
    CliRun help = RunCliBinary({c.name, "--help"});
    EXPECT_EQ(help.exit_code, 0) << c.name << ": " << help.err;
    EXPECT_THAT(help.out, HasSubstr("usage: ridgeline " + c.name)) << c.name;
  }
  // An unknown command lists them all.
  CliRun unknown = RunCliBinary({"explor"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr(absl::StrJoin(names, ", ")));
  CliRun analyze = RunCliBinary({"analyze", "--help"});
  EXPECT_EQ(analyze.exit_code, 0);
  for (const char* flag :
       {"--model ID", "--model-config FILE.json", "--hardware-file FILE.json",
        "--batch N", "--kv FMT", "--framework NAME", "--no-flash-attention",
        "--mla-unabsorbed", "--no-suggestions", "--pure-roofline",
        "--server HOST:PORT", "--format"}) {
    EXPECT_THAT(analyze.out, HasSubstr(flag));
  }
  EXPECT_THAT(RunCliBinary({"sweep", "--help"}).out, HasSubstr("--batch N,..."));
}

// validate and calibrate parse with the CLI's parser but keep their own
// output: a usage error is the reason, then the usage line, exit 2; --help
// and -h print the usage line on stdout.
TEST_F(CliTest, ValidateAndCalibrateUsage) {
  const std::string validate_usage =
      "usage: ridgeline validate --measurements FILE.csv [--measurements "
      "MORE.csv ...] [--profiles DIR] [--plugin-dir DIR] "
      "[--format table|json|csv] [--cross-validate]\n";
  const std::string calibrate_usage =
      "usage: ridgeline calibrate --measurements FILE.csv [--measurements "
      "MORE.csv ...] --out DIR [--plugin-dir DIR]\n";
  for (const char* help : {"--help", "-h"}) {
    CliRun v = RunCliBinary({"validate", help});
    EXPECT_EQ(v.exit_code, 0);
    EXPECT_EQ(v.out, validate_usage);
    EXPECT_EQ(v.err, "");
    CliRun c = RunCliBinary({"calibrate", help});
    EXPECT_EQ(c.exit_code, 0);
    EXPECT_EQ(c.out, calibrate_usage);
    EXPECT_EQ(c.err, "");
  }
  // --help is a switch: "--format csv" after it is not its value.
  CliRun help_first = RunCliBinary({"validate", "--help", "--format", "csv"});
  EXPECT_EQ(help_first.exit_code, 0);
  EXPECT_EQ(help_first.out, validate_usage);

  struct Case {
    std::vector<std::string> args;
    std::string err;
  } cases[] = {
      {{"validate", "--format", "csv"},
       "--measurements is required\n" + validate_usage},
      {{"validate", "--measurements", "x.csv", "--format", "xml"},
       "--format: must be one of table, json, csv; got \"xml\"\n"},
      {{"validate", "stray"},
       "unexpected argument \"stray\"\n" + validate_usage},
      {{"validate", "--bogus", "1"},
       "unknown flag --bogus (see --help)\n" + validate_usage},
      {{"validate", "--measurements"},
       "--measurements needs a value (FILE.csv)\n" + validate_usage},
      {{"calibrate", "--measurements", "x.csv"},
       "--measurements and --out are required\n" + calibrate_usage},
      {{"calibrate", "--out", "x", "--format", "csv"},
       "unknown flag --format (see --help)\n" + calibrate_usage},
  };
  for (const Case& c : cases) {
    CliRun run = RunCliBinary(c.args);
    EXPECT_EQ(run.exit_code, 2) << absl::StrJoin(c.args, " ");
    EXPECT_EQ(run.err, c.err) << absl::StrJoin(c.args, " ");
    EXPECT_EQ(run.out, "") << absl::StrJoin(c.args, " ");
  }

  CliRun missing =
      RunCliBinary({"validate", "--measurements", "/nonexistent.csv"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent.csv"));
  // A profile folder that is not there is an error, not "no calibration".
  CliRun no_profiles = RunCliBinary({"validate", "--measurements", RIDGELINE_TEST_MEASUREMENTS,
                                  "--profiles", "/nonexistent-profiles"});
  EXPECT_EQ(no_profiles.exit_code, 1);
  EXPECT_THAT(no_profiles.err, HasSubstr("'/nonexistent-profiles' does not exist"));
  EXPECT_EQ(no_profiles.out, "");

  // --format reaches the report: CSV header, JSON object, table summary.
  const std::vector<std::string> ok = {
      "validate",
      "--measurements",
      RIDGELINE_TEST_MEASUREMENTS,
      std::string("--plugin-dir=") + RIDGELINE_TEST_PLUGIN_DIR,
      "--profiles",
      RIDGELINE_TEST_PROFILE_DIR};
  CliRun csv = RunCliBinary(With(ok, {"--format", "csv"}));
  EXPECT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(
      csv.out.rfind("id,metric,unit,measured,predicted,bound,ape,status\n", 0),
      0u);
  CliRun json = RunCliBinary(With(ok, {"--format=json"}));
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.out.rfind("{\n  \"rows\": [", 0), 0u)
      << json.out.substr(0, 80);
  CliRun table = RunCliBinary(ok);
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr(std::string("profiles: ") +
                                   RIDGELINE_TEST_PROFILE_DIR));
}

const std::vector<std::string> kAttention = {
    "kernel",     "attention", "--hardware", "nvidia-h100-sxm-80gb",
    "--batch",    "1",         "--q-heads",  "32",
    "--kv-heads", "32",        "--head-dim", "128",
    "--kv-len",   "4096",      "--dtype",    "fp16"};

TEST_F(CliTest, KernelIsIdenticalInProcessAndOverGrpc) {
  for (const char* format : {"json", "table", "csv"}) {
    CliRun local = RunCliBinary(Local(With(kAttention, {"--format", format})));
    CliRun remote = RunCliBinary(Remote(With(kAttention, {"--format", format})));
    ASSERT_EQ(local.exit_code, 0) << local.err;
    ASSERT_EQ(remote.exit_code, 0) << remote.err;
    EXPECT_EQ(local.out, remote.out) << format;
  }
  CliRun json = RunCliBinary(Local(With(kAttention, {"--format", "json"})));
  nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["kernel"], "decode_attention");
  // K and V: 2 x 32 heads x 128 x 4096 tokens x 2 B = 67,108,864 B, plus q
  // and output 32 x 128 x 2 B = 8,192 B each = 67,125,248 B; on the H100
  // SXM's 3.352 TB/s HBM3: 67,125,248 / 3.352e12 = 20.025 us.
  EXPECT_DOUBLE_EQ(j["bound"]["bytes"].get<double>(), 67125248.0);
  EXPECT_NEAR(j["bound"]["seconds"].get<double>(), 20.025e-6, 0.01e-6);
  EXPECT_EQ(j["bound"]["bound"], "memory");

  CliRun table = RunCliBinary(Local(kAttention));
  EXPECT_THAT(table.out, HasSubstr("decode attention on nvidia-h100-sxm-80gb"));
  EXPECT_THAT(table.out, HasSubstr("predicted"));
  EXPECT_THAT(table.out, HasSubstr("20.0 us"));
  CliRun csv = RunCliBinary(Local(With(kAttention, {"--format", "csv"})));
  EXPECT_THAT(csv.out, ::testing::StartsWith(
                           "kernel,hardware,variant,op_class,flops,bytes,"));
  // FLOPs 32 heads x 4096 keys x (4 x 128 + 5 softmax) = 67,764,224.
  EXPECT_THAT(csv.out,
              HasSubstr("\ndecode_attention,nvidia-h100-sxm-80gb,bound,"
                        "attention,67764224,67125248,"));

  // GEMM: m 1, n = k = 4096 fp16: 8,192 + 33,554,432 + 8,192 = 33,570,816 B
  // / 3.352e12 B/s = 10.015 us, a GEMV (m <= 64).
  const std::vector<std::string> gemm = {
      "kernel", "gemm", "--hardware", "nvidia-h100-sxm-80gb",
      "--m",    "1",    "--n",        "4096",
      "--k",    "4096", "--format",   "json"};
  CliRun local = RunCliBinary(Local(gemm));
  CliRun remote = RunCliBinary(Remote(gemm));
  ASSERT_EQ(local.exit_code, 0) << local.err;
  EXPECT_EQ(local.out, remote.out);
  nlohmann::json g = nlohmann::json::parse(local.out);
  EXPECT_EQ(g["opClass"], "gemv");
  EXPECT_DOUBLE_EQ(g["bound"]["bytes"].get<double>(), 33570816.0);
  EXPECT_NEAR(g["bound"]["seconds"].get<double>(), 10.015e-6, 0.01e-6);
}

TEST_F(CliTest, KernelErrorsNameTheFlag) {
  std::vector<std::string> bad = kAttention;
  bad[13] = "0";  // --kv-len 0; allowed 1..10,000,000
  CliRun local = RunCliBinary(Local(bad));
  CliRun remote = RunCliBinary(Remote(bad));
  EXPECT_EQ(local.exit_code, 1);
  std::vector<std::string> l = ErrorLines(local.err, "ridgeline kernel:");
  std::vector<std::string> r = ErrorLines(remote.err, "ridgeline kernel:");
  ASSERT_EQ(l.size(), 1u) << local.err;
  EXPECT_EQ(l, r);
  EXPECT_THAT(l[0], HasSubstr("decode_attention.kv_length"));
  EXPECT_THAT(l[0], HasSubstr("[1, 10000000]"));
  EXPECT_THAT(l[0], HasSubstr("(flag --kv-len)"));

  CliRun usage = RunCliBinary({"kernel", "gemm", "--hardware", "x", "--m", "1"});
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_THAT(usage.err, HasSubstr("give --m N --n N --k N"));
  usage = RunCliBinary({"kernel", "attention", "--hardware", "x", "--m", "1"});
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_THAT(usage.err, HasSubstr("--m does not apply to `kernel attention`"));
  usage = RunCliBinary({"kernel", "conv"});
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_THAT(usage.err, HasSubstr("ridgeline kernel attention|gemm"));
}

// A step's default capacity is the model's context, at most the longest
// prompt (10 M tokens): models whose context is longer (MiniMax-M1's
// 10.24 M, a state-space model's unlimited one) step without a capacity
// flag. A pure state-space step costs the same at any context.
TEST_F(CliTest, StepOfModelsWithContextsPastTheLongestPrompt) {
  auto seconds = [&](const std::string& model, const std::string& seq) {
    CliRun r = RunCliBinary(
        Local({"step", "--model", model, "--hardware", "nvidia-h200-sxm-141gb",
               "--weights", "fp8", "--seq", seq, "--format", "json"}));
    EXPECT_EQ(r.exit_code, 0) << model << ": " << r.err;
    if (r.exit_code != 0) return -1.0;
    return nlohmann::json::parse(r.out)["steps"][0]["seconds"].get<double>();
  };
  EXPECT_GT(seconds("minimax-m1", "4096:1"), 0);
  const double short_ctx = seconds("mamba-codestral-7b", "4096:1");
  EXPECT_GT(short_ctx, 0);
  EXPECT_DOUBLE_EQ(seconds("mamba-codestral-7b", "1000000:1"), short_ctx);
}

// `ridgeline step` (the issue's example: one step of three sequences) prints
// the same both ways; JSON is the proto3 JSON of StepTimeResponse with the
// step total in `seconds`; a pipelined step shows its latency and its
// interval, in the table and as CSV columns.
TEST_F(CliTest, StepIsIdenticalBothWaysAndShowsThePipelineInterval) {
  const std::vector<std::string> step = {
      "step", "--model", "llama-3-8b", "--hardware", "nvidia-h100-sxm-80gb",
      "--seq", "1024:1", "--seq", "37:1", "--seq", "0:512"};
  CliRun local = RunCliBinary(Local(With(step, {"--format", "json"})));
  CliRun remote = RunCliBinary(Remote(With(step, {"--format", "json"})));
  ASSERT_EQ(local.exit_code, 0) << local.err;
  ASSERT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_EQ(local.out, remote.out);
  nlohmann::json j = nlohmann::json::parse(local.out);
  ASSERT_EQ(j["steps"].size(), 1u);
  const auto& r = j["steps"][0];
  EXPECT_EQ(r["sequences"], "3");  // int64 is a string in proto3 JSON
  EXPECT_EQ(r["tokens"], "514");   // 1 + 1 + 512 new tokens
  EXPECT_GT(r["seconds"].get<double>(), 0);
  // Not pipelined: the interval is the step's own time.
  EXPECT_EQ(r["pipelineIntervalSeconds"], r["seconds"]);

  const std::vector<std::string> pp =
      With(step, {"--pipeline-parallel", "4"});
  CliRun table = RunCliBinary(Local(pp));
  CliRun table_remote = RunCliBinary(Remote(pp));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(table.out, table_remote.out);
  EXPECT_THAT(table.out, HasSubstr("time (latency through all stages)"));
  // 32 layers in 4 stages of 8; the last also runs the LM head.
  EXPECT_THAT(table.out, HasSubstr("(stage 3 + its send)"));
  CliRun csv = RunCliBinary(Local(With(pp, {"--format", "csv"})));
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_THAT(csv.out,
              ::testing::StartsWith(
                  "step,sequences,tokens,seconds,compute_seconds,"
                  "memory_seconds,interconnect_seconds,overhead_seconds,bound,"
                  "flops,bytes,pipeline_interval_seconds,pipeline_slowest_"
                  "stage,accepted_tokens_per_sequence,draft_seconds,"
                  "verify_seconds\n"));
  // The slowest stage, then (no speculation) 1 token per step, no draft.
  EXPECT_THAT(csv.out, HasSubstr(",3,1,0,"));
}

TEST_F(CliTest, BasicViewLeavesOutOpTablesBothWays) {
  for (const char* format : {"json", "table", "csv"}) {
    std::vector<std::string> args =
        With(kAnalyze, {"--view", "basic", "--format", format});
    CliRun local = RunCliBinary(Local(args));
    CliRun remote = RunCliBinary(Remote(args));
    ASSERT_EQ(local.exit_code, 0) << local.err;
    EXPECT_EQ(local.out, remote.out) << format;
    EXPECT_THAT(local.out, Not(HasSubstr("ffn_down"))) << format;
  }
  CliRun csv =
      RunCliBinary(Local(With(kAnalyze, {"--view", "basic", "--format", "csv"})));
  EXPECT_THAT(csv.out, ::testing::StartsWith("phase,steps,tokens,kv_length,"));
  // Prefill: 1 step of 16 x 1024 tokens, KV 1024. It yields the first of
  // the 128 generated tokens, so decode is 127 steps of 16 tokens, the last
  // at KV length 1024 + 127 = 1151.
  EXPECT_THAT(csv.out, HasSubstr("\nprefill,1,16384,1024,"));
  EXPECT_THAT(csv.out, HasSubstr("\ndecode,127,16,1151,"));
  CliRun usage = RunCliBinary(With(kAnalyze, {"--view", "tiny"}));
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_THAT(usage.err, HasSubstr("--view: expected full or basic"));
}

TEST_F(CliTest, ComputeRoofUnknownIsShownBothWays) {
  // The Snapdragon 8 Gen 2 row publishes no peak the plugin can cite: only
  // the memory roof bounds the analysis.
  const std::vector<std::string> args = {"analyze",
                                         "--model",
                                         "llama-3-8b",
                                         "--hardware",
                                         "qualcomm-snapdragon-8-gen-2",
                                         "--no-suggestions"};
  CliRun local = RunCliBinary(Local(args));
  CliRun remote = RunCliBinary(Remote(args));
  ASSERT_EQ(local.exit_code, 0) << local.err;
  EXPECT_EQ(local.out, remote.out);
  EXPECT_THAT(local.out, HasSubstr("unknown (compute roof unknown)"));
  // TTFT and prefill speed are not predictions without a compute roof:
  // labelled as the memory-roof bound they are.
  EXPECT_THAT(local.out, HasSubstr("unknown (>= "));
  EXPECT_THAT(local.out, HasSubstr(": memory roof only, compute roof unknown)"));
  CliRun json = RunCliBinary(Local(With(args, {"--format", "json"})));
  nlohmann::json j = nlohmann::json::parse(json.out);
  // proto3 JSON omits false.
  EXPECT_FALSE(j["result"].value("computeRoofKnown", false));
  CliRun h100 = RunCliBinary(Local(With(kAnalyze, {"--format", "json"})));
  EXPECT_TRUE(nlohmann::json::parse(h100.out)["result"]["computeRoofKnown"]);
}

// Issue 20, item 5: a 5.6 MB KV cache in host DRAM printed as "kv_cache
// 0.0 GB of 0.0 GB (100.0%)", and "fits" said nothing of the spill.
TEST_F(CliTest, MemoryLineSaysWhatSpilledInUnitsThatShowIt) {
  const std::vector<std::string> args = {"analyze",
                                         "--model",
                                         "llama-3.1-70b",
                                         "--hardware",
                                         "nvidia-h100-sxm-80gb",
                                         "--prompt",
                                         "16",
                                         "--gen",
                                         "2",
                                         "--no-suggestions"};
  CliRun r = RunCliBinary(Local(args));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string memory;
  for (absl::string_view line : absl::StrSplit(r.out, '\n')) {
    if (absl::StartsWith(line, "Memory: ")) memory = std::string(line);
  }
  // 70.6e9 x 2 B = 141.1 GB of bf16 weights; 80 GiB = 85.9 GB of HBM3 hold
  // 85.9 of them, 55.2 GB (39.1%) go to host DRAM. The HBM is then full, so
  // the KV cache goes there too, all of it: 80 layers x 8 KV heads x 128 x
  // 2 (K, V) x 2 B = 327,680 B per token x 17 tokens (16 + 2 - 1) =
  // 5,570,560 B = 5.6 MB.
  EXPECT_THAT(memory,
              HasSubstr("Memory: fits (spilled: weights, kv_cache, "
                        "activations); off the device: weights 55.2 GB of "
                        "141.1 GB (39.1%) in host DRAM over PCIe 5.0 x16 "
                        "(64.0 GB/s); kv_cache 5.6 MB of 5.6 MB (100.0%) in "
                        "host DRAM"))
      << r.out;
  EXPECT_THAT(memory, Not(HasSubstr("0.0 GB of 0.0 GB")));
  // The same classes as data, for the web UI and scripts.
  CliRun json = RunCliBinary(Local(With(args, {"--format", "json"})));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(
      nlohmann::json::parse(json.out)["result"]["memory"]["spilledOperands"],
      nlohmann::json::parse(R"(["weights", "kv_cache", "activations"])"));
  // On the device: plain "fits", no list.
  CliRun small = RunCliBinary(Local(kAnalyze));
  ASSERT_EQ(small.exit_code, 0) << small.err;
  EXPECT_THAT(small.out, HasSubstr("\nMemory: fits\n"));
}

TEST_F(CliTest, InProcessLogsOnlyRefusedPlugins) {
  CliRun run = RunCliBinary(Local({"models"}));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // Every in-tree plugin loads, so nothing is printed.
  EXPECT_THAT(run.err, Not(HasSubstr("ridgeline plugin: loaded")));
}

TEST(CliTable, AlignsTextAndQuotesCsv) {
  cli::Table t({"name", ">n"});
  t.rows = {{"a,b", "1"}, {"c\"d", "200"}};
  std::ostringstream text, csv;
  cli::PrintTable(t, cli::TableStyle::kText, text, 0);
  cli::PrintTable(t, cli::TableStyle::kCsv, csv);
  EXPECT_EQ(text.str(), "name    n\na,b     1\nc\"d   200\n");
  EXPECT_EQ(csv.str(), "name,n\n\"a,b\",1\n\"c\"\"d\",200\n");
}

// Regression: a bare CR (e.g. in an inline hardware name) was not quoted.
TEST(CliTable, QuotesCarriageReturnInCsv) {
  cli::Table t({"name"});
  t.rows = {{"a\rb"}, {"c\nd"}};
  std::ostringstream csv;
  cli::PrintTable(t, cli::TableStyle::kCsv, csv);
  EXPECT_EQ(csv.str(), "name\n\"a\rb\"\n\"c\nd\"\n");
}

TEST(CliTable, FormatsNumbersWithSiPrefixes) {
  EXPECT_EQ(cli::Si(989.4e12, "OPS"), "989 TOPS");
  // Sizes in binary units (docs/web.md "Units"): 16,060,522,496 B / 2^30 =
  // 14.957 GiB -> 3 significant digits "15.0"; 80 x 2^30 B = 80 GiB;
  // 1536 B = 1.5 KiB; below 1 KiB plain bytes.
  EXPECT_EQ(cli::Bytes(16060522496.0), "15.0 GiB");
  EXPECT_EQ(cli::Bytes(80.0 * (1ull << 30)), "80.0 GiB");
  EXPECT_EQ(cli::Bytes(1536), "1.50 KiB");
  EXPECT_EQ(cli::Bytes(512), "512 B");
  // Rates stay decimal: 3352 GB/s.
  EXPECT_EQ(cli::Si(3352e9, "B/s"), "3.35 TB/s");
  EXPECT_EQ(cli::Seconds(0.00522), "5.22 ms");
  EXPECT_EQ(cli::Seconds(812e-6), "812 us");
  EXPECT_EQ(cli::Si(192.0), "192");
  EXPECT_EQ(cli::Percent(0.432), "43.2%");
}

// Issue 21: an RTX 4080 running llama.cpp (Llama-3-8B fp16 weights and KV,
// batch 1, a 4,096-token prompt; llama-bench: fp16 accumulation, unfused
// attention, 512-token ubatches). `validate` timed the ubatches on a
// placement of the whole prompt's activations (half of them spilled to host
// memory over PCIe: bound 2.17 k tok/s, under the issue's 4.72 k tok/s
// measurement) where `analyze` of the same run gave 9.49 k. Both are now
// the engine's chunked prefill: the bound is the same number in both.
TEST(ValidateMatchesAnalyze, RtxFourThousandEightyLlamaCppPrefillBound) {
  char dir[] = "/tmp/ridgeline-4080-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string csv = std::string(dir) + "/row.csv";
  {
    std::ofstream out(csv);
    out << "id,hardware_id,device_count,tensor_parallel,model_id,"
           "weight_format,weight_bits_effective,kv_format,batch,prompt_len,"
           "gen_len,framework,metric,value,unit,usable,source,note\n"
           "x4080,nvidia-rtx-4080,1,1,llama-3-8b,fp16,16,fp16,1,4096,0,"
           "llama.cpp-cuda,prefill_tok_s,4720,tok/s,1,issue 21,pp4096\n";
  }
  const std::string plugins =
      std::string("--plugin-dir=") + RIDGELINE_TEST_PLUGIN_DIR;
  CliRun v =
      RunCliBinary({"validate", "--measurements", csv, plugins, "--profiles",
                    RIDGELINE_TEST_PROFILE_DIR, "--format", "csv"});
  ASSERT_EQ(v.exit_code, 0) << v.err;
  std::vector<std::string> lines = absl::StrSplit(v.out, '\n');
  ASSERT_GE(lines.size(), 2u) << v.out;
  // id,metric,unit,measured,predicted,bound,ape,status
  std::vector<std::string> cells = absl::StrSplit(lines[1], ',');
  ASSERT_GE(cells.size(), 8u) << lines[1];
  EXPECT_EQ(cells[7], "ok");
  double validate_bound = 0;
  ASSERT_TRUE(absl::SimpleAtod(cells[5], &validate_bound)) << cells[5];
  CliRun a = RunCliBinary({"analyze",
                           "--model",
                           "llama-3-8b",
                           "--hardware",
                           "nvidia-rtx-4080",
                           "--batch",
                           "1",
                           "--prompt",
                           "4096",
                           "--gen",
                           "1",
                           "--weights",
                           "fp16",
                           "--activations",
                           "fp16",
                           "--kv",
                           "fp16",
                           "--fp16-accumulation",
                           "--no-flash-attention",
                           "--prefill-chunk-tokens",
                           "512",
                           "--pure-roofline",
                           "--no-suggestions",
                           "--view",
                           "basic",
                           plugins,
                           "--format",
                           "json"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const nlohmann::json j = nlohmann::json::parse(a.out);
  const double analyze_bound =
      j["result"]["prefillTokensPerSecond"].get<double>();
  // validate prints 6 significant digits (%.6g).
  EXPECT_NEAR(validate_bound, analyze_bound, 1e-5 * analyze_bound);
  // Nothing of the run is placed off the device, and the measurement is
  // inside the bound.
  EXPECT_TRUE(j["result"]["memory"]["spilled"].get<std::string>().empty());
  EXPECT_GT(validate_bound, 4720 * 1.05);
  std::remove(csv.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace ridgeline::testing

namespace ridgeline::testing {
namespace {

// Issue 24: --speculative / --acceptance and --lora-* reach the engine the
// same way in process and over gRPC, and bad values name their flag.
TEST_F(CliTest, SpeculativeAndLoraBothWays) {
  const std::vector<std::string> args = {"analyze",
                                         "--model",
                                         "llama-3.1-8b",
                                         "--hardware",
                                         "nvidia-h100-sxm-80gb",
                                         "--batch",
                                         "1",
                                         "--prompt",
                                         "1024",
                                         "--gen",
                                         "128",
                                         "--speculative",
                                         "eagle:3",
                                         "--acceptance",
                                         "0.7",
                                         "--lora-rank",
                                         "16",
                                         "--format",
                                         "json"};
  CliRun local = RunCliBinary(Local(args));
  CliRun remote = RunCliBinary(Remote(args));
  ASSERT_EQ(local.exit_code, 0) << local.err;
  ASSERT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_EQ(local.out, remote.out);
  const nlohmann::json r = nlohmann::json::parse(local.out)["result"];
  // k = 3, alpha 0.7: 1 + 0.7 + 0.49 + 0.343 = 2.533 tokens per step.
  EXPECT_NEAR(r["speculative"]["acceptedTokensPerStep"].get<double>(), 2.533,
              1e-9);
  EXPECT_EQ(r["speculative"]["method"], "eagle:3");
  EXPECT_GT(r["speculative"]["speedup"].get<double>(), 1.0);
  // Llama-3.1-8B, in + out per layer over q,k,v,o,gate,up,down = 81,920
  // (speculative_test.cc) x rank 16 x 2 B x 32 layers = 83,886,080 B.
  EXPECT_DOUBLE_EQ(r["lora"]["adapterBytes"].get<double>(), 83886080.0);

  CliRun step = RunCliBinary(
      Remote({"step", "--model", "llama-3.1-8b", "--hardware",
              "nvidia-h100-sxm-80gb", "--seq", "1000:1", "--speculative",
              "mtp:1", "--acceptance", "0.8", "--format", "csv"}));
  EXPECT_EQ(step.exit_code, 1);  // llama has no MTP layers
  EXPECT_THAT(step.err, HasSubstr("options.speculative.method"));
  CliRun csv = RunCliBinary(Local(
      {"step", "--model", "llama-3.1-8b", "--hardware", "nvidia-h100-sxm-80gb",
       "--seq", "1000:1", "--speculative", "draft:llama-3.2-1b:4",
       "--acceptance", "0.7", "--format", "csv"}));
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_THAT(csv.out, HasSubstr("accepted_tokens_per_sequence,draft_seconds,"
                                 "verify_seconds"));
  CliRun bad_k =
      RunCliBinary(Remote({"analyze", "--model", "llama-3.1-8b", "--hardware",
                           "nvidia-h100-sxm-80gb", "--speculative", "eagle:17",
                           "--acceptance", "0.7"}));
  EXPECT_EQ(bad_k.exit_code, 1);
  EXPECT_THAT(
      bad_k.err,
      HasSubstr("options.speculative.tokens must be in [1, 16], got 17"));
  EXPECT_THAT(bad_k.err, HasSubstr("--speculative"));
  CliRun bad_a =
      RunCliBinary(Local({"analyze", "--model", "llama-3.1-8b", "--hardware",
                          "nvidia-h100-sxm-80gb", "--speculative", "eagle:2",
                          "--acceptance", "1.5"}));
  EXPECT_EQ(bad_a.exit_code, 1);
  EXPECT_THAT(bad_a.err, HasSubstr("[0, 1], got 1.5"));
  CliRun no_rate =
      RunCliBinary(Local({"analyze", "--model", "llama-3.1-8b", "--hardware",
                          "nvidia-h100-sxm-80gb", "--speculative", "eagle:2"}));
  EXPECT_EQ(no_rate.exit_code, 2);
  EXPECT_THAT(no_rate.err, HasSubstr("--acceptance"));
}

}  // namespace
}  // namespace ridgeline::testing
