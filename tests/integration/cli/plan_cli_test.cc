// `ridgeline plan` as a real binary: the CSV the issue names, identical
// in-process and against a real server, usage and field errors.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
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

std::vector<std::string> PlanArgs(std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {
      "plan",          "--model",        "llama-3.1-8b",
      "--hardware",    "nvidia-h100-sxm-80gb,amd-mi300x",
      "--prompt",      "1024",           "--gen",
      "256",           "--rate",         "10",
      "--ttft-p90-ms", "1000",           "--tpot-p90-ms",
      "50",            "--tensor-parallel", "1",
      "--formats",     "fp8",            "--requests",
      "200"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

std::vector<std::string> InProcess(std::vector<std::string> a) {
  a.push_back(std::string("--plugin-dir=") + RIDGELINE_TEST_PLUGIN_DIR);
  a.push_back(std::string("--profile-dir=") + RIDGELINE_TEST_PROFILE_DIR);
  return a;
}

TEST(PlanCli, CsvHasTheNamedColumnsOneRowPerDeployment) {
  CliRun r = RunCliBinary(InProcess(PlanArgs({"--format", "csv"})));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines =
      absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << r.out;  // header + H100 + MI300X
  std::vector<std::string> header = absl::StrSplit(lines[0], ',');
  for (const char* col :
       {"hardware", "tensor_parallel", "formats", "replicas", "devices",
        "max_rate_per_replica", "ttft_p90_ms", "tpot_p90_ms",
        "usd_per_mtoken", "meets_slo"}) {
    EXPECT_NE(std::find(header.begin(), header.end(), col), header.end())
        << col;
  }
  const size_t meets =
      std::find(header.begin(), header.end(), "meets_slo") - header.begin();
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> cells = absl::StrSplit(lines[i], ',');
    ASSERT_GT(cells.size(), meets);
    EXPECT_TRUE(cells[meets] == "1" || cells[meets] == "0") << lines[i];
  }
}

TEST(PlanCli, SameAnswerInProcessAndOverGrpc) {
  ServerProcess server;
  ASSERT_TRUE(server.ok()) << server.error();
  ASSERT_TRUE(WaitServing(server.Channel(), std::chrono::seconds(20)));
  CliRun local = RunCliBinary(InProcess(PlanArgs({"--format", "csv"})));
  CliRun remote =
      RunCliBinary(PlanArgs({"--format", "csv", "--server", server.address()}));
  ASSERT_EQ(local.exit_code, 0) << local.err;
  ASSERT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_EQ(local.out, remote.out);
}

TEST(PlanCli, TableLeadsWithTheHeadline) {
  CliRun r = RunCliBinary(InProcess(PlanArgs()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::StartsWith("cheapest: "));
  EXPECT_THAT(r.out, HasSubstr("$/Mtoken"));
}

TEST(PlanCli, ErrorsNameTheFlag) {
  CliRun r = RunCliBinary(InProcess(PlanArgs({"--rate", "0"})));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("traffic.rate"));
  EXPECT_THAT(r.err, HasSubstr("(flag --rate)"));
  r = RunCliBinary(InProcess({"plan", "--model", "llama-3.1-8b"}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--hardware is required"));
  r = RunCliBinary(InProcess(PlanArgs({"--prompt", "abc"})));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--prompt"));
}

// Pipeline and expert parallelism: one row per stage count, the devices of
// every stage counted, the two new columns; bad lists name their flag.
TEST(PlanCli, PipelineCandidatesHaveTheirColumns) {
  CliRun r = RunCliBinary(InProcess(
      {"plan", "--model", "llama-3.1-8b", "--hardware",
       "nvidia-h100-sxm-80gb", "--prompt", "1024", "--gen", "256", "--rate",
       "10", "--ttft-p90-ms", "1000", "--tpot-p90-ms", "50",
       "--tensor-parallel", "1", "--pipeline-parallel", "1,2", "--formats",
       "fp8", "--requests", "200", "--format", "csv"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines =
      absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << r.out;  // header + PP 1 + PP 2
  std::vector<std::string> header = absl::StrSplit(lines[0], ',');
  auto col = [&](const char* name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) -
                               header.begin());
  };
  ASSERT_LT(col("pipeline_parallel"), header.size());
  ASSERT_LT(col("expert_parallel"), header.size());
  std::vector<std::string> pps;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> cells = absl::StrSplit(lines[i], ',');
    ASSERT_EQ(cells.size(), header.size()) << lines[i];
    pps.push_back(cells[col("pipeline_parallel")]);
    EXPECT_EQ(cells[col("expert_parallel")], "1");
    // devices = replicas x stages (TP 1).
    EXPECT_EQ(std::stoi(cells[col("devices")]),
              std::stoi(cells[col("replicas")]) *
                  std::stoi(cells[col("pipeline_parallel")]))
        << lines[i];
  }
  std::sort(pps.begin(), pps.end());
  EXPECT_EQ(pps, (std::vector<std::string>{"1", "2"}));
}

TEST(PlanCli, BadPipelineAndExpertListsNameTheirFlag) {
  // Llama-3.1-8B has 32 layers: 3 stages do not divide them.
  CliRun r = RunCliBinary(InProcess(PlanArgs({"--pipeline-parallel", "3"})));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("candidates.pipeline_parallel[0]"));
  EXPECT_THAT(r.err, HasSubstr("32 layers"));
  EXPECT_THAT(r.err, HasSubstr("got 3"));
  EXPECT_THAT(r.err, HasSubstr("(flag --pipeline-parallel)"));
  // A dense model has no experts to spread.
  r = RunCliBinary(InProcess(PlanArgs({"--expert-parallel", "1,2"})));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("candidates.expert_parallel[1]"));
  EXPECT_THAT(r.err, HasSubstr("dense model"));
  EXPECT_THAT(r.err, HasSubstr("(flag --expert-parallel)"));
  r = RunCliBinary(InProcess(PlanArgs({"--pipeline-parallel", "x"})));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--pipeline-parallel"));
}

}  // namespace
}  // namespace ridgeline::testing
