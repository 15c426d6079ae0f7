// Which calibration `ridgeline simulate` and `ridgeline plan` apply for
// --framework, run as the real binary (in-process and against a real
// server): vLLM gets its serving profile (fitted in-sample on one platform,
// and the output says so); SGLang has no profile anywhere, so naming it is
// a usage error; a plan gives every candidate one runtime's profile, or
// the pure roofline where asked for (--profile-fallback roofline).
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "cli_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server_process.h"

namespace ridgeline::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> InProcess(std::vector<std::string> a) {
  a.push_back(std::string("--plugin-dir=") + RIDGELINE_TEST_PLUGIN_DIR);
  a.push_back(std::string("--profile-dir=") + RIDGELINE_TEST_PROFILE_DIR);
  return a;
}

std::vector<std::string> Simulate(const std::string& hardware,
                                  const std::string& framework,
                                  const std::string& format) {
  return {"simulate", "--model",    "llama-3.1-8b", "--hardware", hardware,
          "--prompt", "1024",       "--gen",        "128",        "--formats",
          "fp8",      "--requests", "100",          "--rate",     "2",
          "--framework", framework, "--format",     format};
}

// The CSV's `profile` cell (the last column) of its one data row.
// The first row's `profile` cell, found by the header's name (columns are
// appended after it: stable, backlog halves).
std::string ProfileCell(const std::string& csv) {
  const size_t row = csv.find('\n');
  const size_t end = csv.find('\n', row + 1);
  const std::vector<std::string> header =
      absl::StrSplit(csv.substr(0, row), ',');
  const std::vector<std::string> cells =
      absl::StrSplit(csv.substr(row + 1, end - row - 1), ',');
  for (size_t i = 0; i < header.size() && i < cells.size(); ++i) {
    if (header[i] == "profile") return cells[i];
  }
  return "";
}

TEST(ServingProfileCli, VllmUsesItsServingProfileAndSaysItIsInSample) {
  // An H100: the vLLM serving profile is keyed by framework alone, so the
  // same runtime fitted on MI300X rows wins over the H100's kernel profiles
  // of another runtime (issue 13: same framework, other hardware first).
  CliRun r = RunCliBinary(
      InProcess(Simulate("nvidia-h100-sxm-80gb", "vllm", "table")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("profile serving.vllm"));
  EXPECT_THAT(r.out, HasSubstr("calibration: serving profile serving.vllm: "
                               "any hardware + framework \"vllm\""));
  EXPECT_THAT(r.out, HasSubstr("IN-SAMPLE ONLY"));
  EXPECT_THAT(r.out, HasSubstr("amd-mi300x"));
  // Issue 21: the only warning is that it extrapolates (fitted on MI300X
  // at TP 8), not that the profile is another runtime's.
  EXPECT_THAT(r.err, HasSubstr("warning: serving.vllm was fitted on "
                               "amd-mi300x at TP 8 only: TP 1 on "
                               "nvidia-h100-sxm-80gb is an EXTRAPOLATION"));
  EXPECT_THAT(r.err, Not(HasSubstr("another runtime")));
  // A versioned ROCm build name is the same runtime.
  r = RunCliBinary(
      InProcess(Simulate("amd-mi300x", "vllm-rocm-0.8.5", "csv")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ProfileCell(r.out), "serving.vllm") << r.out;
}

// Issue 20 item 4: a framework no profile is fitted with ("sglang": no
// usable row; "vllmm": a typo) used to get another runtime's profile by
// hardware alone, with a warning. Now a usage error naming the flag and
// listing the frameworks there are.
TEST(ServingProfileCli, UnknownFrameworkIsAUsageErrorListingTheKnownOnes) {
  for (const char* framework : {"sglang", "vllmm"}) {
    CliRun r = RunCliBinary(
        InProcess(Simulate("amd-mi300x", framework, "table")));
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_THAT(r.err, HasSubstr("calibration.framework: must be a framework "
                                 "some calibration profile is fitted with ("));
    EXPECT_THAT(r.err, HasSubstr("llama.cpp-cuda"));
    EXPECT_THAT(r.err, HasSubstr("tensorrt-llm"));
    EXPECT_THAT(r.err, HasSubstr(", vllm"));
    EXPECT_THAT(r.err, HasSubstr(std::string("got \"") + framework + "\""));
    EXPECT_THAT(r.err, HasSubstr("(flag --framework)"));
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(ServingProfileCli, PlanOverGrpcRejectsUnknownFrameworksAndMatchesVllm) {
  ServerProcess server;
  ASSERT_TRUE(server.ok()) << server.error();
  ASSERT_TRUE(WaitServing(server.Channel(), std::chrono::seconds(20)));
  std::vector<std::string> plan = {"plan",
                                   "--model",
                                   "llama-3.1-8b",
                                   "--hardware",
                                   "nvidia-h100-sxm-80gb,amd-mi300x",
                                   "--prompt",
                                   "1024",
                                   "--gen",
                                   "256",
                                   "--rate",
                                   "10",
                                   "--ttft-p90-ms",
                                   "1000",
                                   "--tpot-p90-ms",
                                   "50",
                                   "--tensor-parallel",
                                   "1",
                                   "--formats",
                                   "fp8",
                                   "--requests",
                                   "100",
                                   "--server",
                                   server.address(),
                                   "--disaggregated",
                                   "off"};
  std::vector<std::string> typo = plan;
  typo.insert(typo.end(), {"--framework", "vllmm"});
  CliRun r = RunCliBinary(typo);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT: candidates: "
                               "calibration.framework: must be a framework "
                               "some calibration profile is fitted with ("));
  EXPECT_THAT(r.err, HasSubstr("got \"vllmm\""));
  EXPECT_THAT(r.err, HasSubstr("(flag --framework)"));

  std::vector<std::string> vllm = plan;
  vllm.insert(vllm.end(), {"--framework", "vllm", "--format", "csv"});
  r = RunCliBinary(vllm);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("is an EXTRAPOLATION"));  // TP 1 (issue 21)
  EXPECT_THAT(r.err, Not(HasSubstr("another runtime")));
  EXPECT_THAT(r.out, HasSubstr(",serving.vllm,"));
  EXPECT_THAT(r.out, Not(HasSubstr("tensorrt-llm")));
}

}  // namespace
}  // namespace ridgeline::testing
