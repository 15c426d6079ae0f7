// `ridgeline plan --emit vllm|sglang|kubernetes` as a real binary (issue 27):
// the emitted command is the plan's row (its parallelism, formats and
// scheduler), in-process and over a real server alike; usage and field
// errors. The manifest's schema check is tests/unit/deploy/emit_test.py.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "cli_process.h"
#include "server_process.h"

namespace ridgeline::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Llama-3-8B on one H100: bf16 and fp8 at TP 1 and 2 (4 rows), a loose SLO
// every row meets.
std::vector<std::string> PlanArgs(std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {
      "plan",          "--model",          "llama-3-8b",
      "--hardware",    "nvidia-h100-sxm-80gb",
      "--prompt",      "512",              "--gen",
      "128",           "--rate",           "2",
      "--ttft-p90-ms", "2000",             "--tpot-p90-ms",
      "100",           "--tensor-parallel", "1,2",
      "--formats",     "bf16,fp8",         "--requests",
      "200",           "--disaggregated",  "off"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

std::vector<std::string> InProcess(std::vector<std::string> a) {
  a.push_back(std::string("--plugin-dir=") + RIDGELINE_TEST_PLUGIN_DIR);
  a.push_back(std::string("--profile-dir=") + RIDGELINE_TEST_PROFILE_DIR);
  return a;
}

// The CSV's data rows as cells.
std::vector<std::vector<std::string>> CsvRows() {
  CliRun r = RunCliBinary(InProcess(PlanArgs({"--format", "csv"})));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::vector<std::string>> rows;
  for (absl::string_view line :
       absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
    rows.push_back(absl::StrSplit(line, ','));
  }
  if (!rows.empty()) rows.erase(rows.begin());  // the header
  return rows;
}

// A disaggregated row is two pools: a vllm serve command each, with its
// KV connector role, and its own TP and replica count from the plan.
TEST(PlanEmitCli, DisaggregatedRowEmitsAPrefillAndADecodePool) {
  std::vector<std::string> args = PlanArgs();
  *std::find(args.begin(), args.end(), "off") = "on";
  CliRun csv = RunCliBinary(InProcess(
      [&] { auto a = args; a.insert(a.end(), {"--format", "csv"}); return a; }()));
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  ASSERT_THAT(csv.out, HasSubstr(",disaggregated,"));
  args.insert(args.end(), {"--emit", "vllm"});
  const CliRun r = RunCliBinary(InProcess(args));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("prefill"));
  EXPECT_THAT(r.out, HasSubstr("decode"));
  EXPECT_THAT(r.out, HasSubstr("--kv-transfer-config"));
  EXPECT_EQ(std::count(r.out.begin() , r.out.end(), '\n') > 2, true);
  // Two `vllm serve` commands, one per pool.
  size_t serves = 0;
  for (size_t at = r.out.find("vllm serve"); at != std::string::npos;
       at = r.out.find("vllm serve", at + 1)) {
    ++serves;
  }
  EXPECT_EQ(serves, 2u) << r.out;
}

TEST(PlanEmitCli, VllmServesTheCheapestRowAndAnyRowAsked) {
  const auto rows = CsvRows();
  ASSERT_EQ(rows.size(), 4u);
  for (size_t i = 0; i < rows.size(); ++i) {
    // Without --emit-row: row 1, the cheapest meeting the SLO.
    std::vector<std::string> extra = {"--emit", "vllm"};
    if (i > 0) {
      extra.push_back("--emit-row");
      extra.push_back(std::to_string(i + 1));
    }
    CliRun r = RunCliBinary(InProcess(PlanArgs(extra)));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Columns: hardware, tensor_parallel, formats, replicas.
    const std::string& tp = rows[i][1];
    const std::string& formats = rows[i][2];
    EXPECT_THAT(r.out, HasSubstr("vllm serve meta-llama/Meta-Llama-3-8B"));
    EXPECT_THAT(r.out, HasSubstr("# ridgeline plan: row " +
                                 std::to_string(i + 1) + " ("));
    EXPECT_THAT(r.out, HasSubstr("--tensor-parallel-size " + tp + " "));
    if (formats == "fp8/fp8/fp8") {
      EXPECT_THAT(r.out, HasSubstr("--quantization fp8"));
      EXPECT_THAT(r.out, HasSubstr("--kv-cache-dtype fp8"));
    } else {
      EXPECT_EQ(formats, "bf16/bf16/bf16");
      EXPECT_THAT(r.out, Not(HasSubstr("--quantization")));
    }
    // The scheduler the plan simulated (the vLLM defaults it assumes).
    EXPECT_THAT(r.out, HasSubstr("--gpu-memory-utilization 0.9 "));
    EXPECT_THAT(r.out, HasSubstr("--max-num-seqs 256 "));
    EXPECT_THAT(r.out, HasSubstr("--max-num-batched-tokens 8192 "));
  }
}

TEST(PlanEmitCli, SchedulerFlagsFollowThePlanAndSglangSpellsThem) {
  CliRun r = RunCliBinary(InProcess(PlanArgs(
      {"--max-num-seqs", "64", "--max-num-batched-tokens", "2048",
       "--memory-fraction", "0.85", "--emit", "sglang"})));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("python3 -m sglang.launch_server"));
  EXPECT_THAT(r.out, HasSubstr("--model-path meta-llama/Meta-Llama-3-8B"));
  EXPECT_THAT(r.out, HasSubstr("--max-running-requests 64 "));
  EXPECT_THAT(r.out, HasSubstr("--chunked-prefill-size 2048 "));
  EXPECT_THAT(r.out, HasSubstr("--mem-fraction-static 0.85 "));
}

TEST(PlanEmitCli, SameTextInProcessAndOverGrpc) {
  ServerProcess server;
  ASSERT_TRUE(server.ok()) << server.error();
  ASSERT_TRUE(WaitServing(server.Channel(), std::chrono::seconds(20)));
  for (const char* emit : {"vllm", "kubernetes"}) {
    CliRun local = RunCliBinary(InProcess(PlanArgs({"--emit", emit})));
    CliRun remote = RunCliBinary(
        PlanArgs({"--emit", emit, "--server", server.address()}));
    ASSERT_EQ(local.exit_code, 0) << local.err;
    ASSERT_EQ(remote.exit_code, 0) << remote.err;
    EXPECT_EQ(local.out, remote.out);
  }
}

// A plan timed with speculative decoding runs with it: the draft model's
// repository (or the EAGLE-3 head named by --emit-draft-model) in vLLM's
// --speculative-config and SGLang's --speculative-* flags.
TEST(PlanEmitCli, SpeculationIsEmittedAsThePlanTimedIt) {
  CliRun r = RunCliBinary(
      InProcess(PlanArgs({"--speculative", "draft:llama-3.2-1b:4",
                          "--acceptance", "0.7", "--emit", "vllm"})));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out,
              HasSubstr("--speculative-config '{\"method\":\"draft_model\","
                        "\"model\":\"meta-llama/Llama-3.2-1B\","
                        "\"num_speculative_tokens\":4}'"));
  r = RunCliBinary(InProcess(
      PlanArgs({"--speculative", "eagle:3", "--acceptance", "0.7", "--emit",
                "sglang", "--emit-draft-model", "org/eagle3-head"})));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("--speculative-algorithm EAGLE3"));
  EXPECT_THAT(r.out,
              HasSubstr("--speculative-draft-model-path org/eagle3-head"));
  EXPECT_THAT(r.out, HasSubstr("--speculative-num-draft-tokens 4"));
  // An EAGLE head is a checkpoint of its own: it must be named.
  r = RunCliBinary(InProcess(PlanArgs(
      {"--speculative", "eagle:3", "--acceptance", "0.7", "--emit", "vllm"})));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("emit_draft_model"));
  EXPECT_THAT(r.err, HasSubstr("(flag --emit-draft-model)"));
  r = RunCliBinary(InProcess(PlanArgs({"--emit-draft-model", "x"})));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--emit-draft-model needs --emit"));
}

TEST(PlanEmitCli, UsageAndFieldErrors) {
  CliRun r = RunCliBinary(InProcess(PlanArgs({"--emit", "helm"})));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--emit: expected one of vllm, sglang, "
                               "kubernetes; got 'helm'"));
  r = RunCliBinary(InProcess(PlanArgs({"--emit-row", "2"})));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--emit-row needs --emit"));
  r = RunCliBinary(InProcess(
      PlanArgs({"--emit", "kubernetes", "--emit-engine", "tgi"})));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--emit-engine: expected one of vllm, sglang"));
  r = RunCliBinary(InProcess(PlanArgs({"--emit", "vllm", "--emit-row", "9"})));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("emit_row: must be in [1, 4]; got 9"));
  // No deployment meets a 1 ms TPOT: the default row does not exist.
  std::vector<std::string> tight = PlanArgs({"--emit", "vllm"});
  std::replace(tight.begin(), tight.end(), std::string("100"),
               std::string("0.001"));
  r = RunCliBinary(InProcess(tight));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("no deployment meets the SLO"));
  // An inline config names no weights to load.
  r = RunCliBinary(InProcess(
      {"plan", "--model-config",
       std::string(RIDGELINE_TEST_CONFIG_DIR) + "/qwen3-30b-a3b.json",
       "--hardware", "nvidia-h100-sxm-80gb", "--prompt", "512", "--gen",
       "128", "--rate", "1", "--ttft-p90-ms", "2000", "--tpot-p90-ms", "100",
       "--tensor-parallel", "1", "--formats", "fp8", "--requests", "200",
       "--emit", "vllm"}));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("emit_model"));
}

}  // namespace
}  // namespace ridgeline::testing
