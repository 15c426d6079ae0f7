// ridgeline-plugin-check, run as vendors run it: exit status and report.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace ridgeline::plugin_host {
namespace {

using ::ridgeline::plugin_host::testing::Fixture;
using ::ridgeline::plugin_host::testing::Quote;
using ::ridgeline::plugin_host::testing::RunCommand;
using ::testing::HasSubstr;

testing::CommandResult Check(const std::string& args) {
  return RunCommand(std::string(RIDGELINE_PLUGIN_CHECK) + " --threads 8 --iterations 5 " + args);
}

TEST(PluginCheckTest, GoodPluginPasses) {
  auto r = Check(Quote(Fixture("basic").string()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("PASS load: family=basic"));
  EXPECT_THAT(r.output, HasSubstr("efficiency hook: answers supported types"));
  EXPECT_THAT(r.output, HasSubstr("concurrency: 8 threads x 5 rounds"));
  EXPECT_THAT(r.output, HasSubstr("RESULT: PASS"));
  EXPECT_THAT(r.output, ::testing::Not(HasSubstr("FAIL")));
}

TEST(PluginCheckTest, PlatformWithoutPeakPassesWithANote) {
  auto r = Check(Quote(Fixture("no-peak").string()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr("NOTE platforms[0] 'fixture-no-peak-a': compute roof "
                        "unknown: only memory-bound estimates are bounded"));
  // The hook answers UNIMPLEMENTED for every type of part A, as required.
  EXPECT_THAT(r.output, HasSubstr("efficiency hook: answers supported types"));
  EXPECT_THAT(r.output, HasSubstr("RESULT: PASS"));
  EXPECT_THAT(r.output, HasSubstr("1 notes"));
  EXPECT_THAT(r.output, ::testing::Not(HasSubstr("FAIL")));
}

struct CheckCase {
  std::string fixture;
  std::string expected;
};
void PrintTo(const CheckCase& c, std::ostream* os) { *os << c.fixture; }
class PluginCheckFailureTest : public ::testing::TestWithParam<CheckCase> {};

TEST_P(PluginCheckFailureTest, BrokenPluginFailsWithReason) {
  auto r = Check(Quote(Fixture(GetParam().fixture).string()));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr(GetParam().expected));
  EXPECT_THAT(r.output, HasSubstr("RESULT: FAIL"));
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, PluginCheckFailureTest,
    ::testing::Values(
        CheckCase{"wrong-major", "FAIL load: ABI major version mismatch"},
        CheckCase{"newer-minor", "FAIL load: plugin ABI 1.5 is newer"},
        CheckCase{"no-entry", "FAIL load: missing entry symbol"},
        CheckCase{"null-entry",
                  "FAIL load: ridgeline_plugin_entry() returned NULL"},
        CheckCase{"init-error", "FAIL load: init() failed"},
        CheckCase{"zero-bandwidth",
                  "tiers[1].read_bandwidth_bytes_per_second must be finite and "
                  "> 0, got 0"},
        CheckCase{"negative-bandwidth",
                  "tiers[1].read_bandwidth_bytes_per_second"},
        CheckCase{"nan-bandwidth", "got nan"},
        CheckCase{"zero-capacity",
                  "tiers[1].capacity_bytes must be finite and > 0, got 0"},
        CheckCase{"negative-capacity", "tiers[1].capacity_bytes"},
        CheckCase{"nan-capacity", "tiers[1].capacity_bytes"},
        CheckCase{"old-minor-acc16",
                  "peak_ops_per_second[9] is reserved in ABI 1.0"},
        CheckCase{"slow-acc16",
                  "peak_ops_per_second[fp16-acc16] (50000000000000) must "
                  "exceed the fp16 peak (100000000000000)"},
        CheckCase{"pim-no-peak",
                  "near_memory_compute.peak_ops_per_second must give at least "
                  "one math type"}),
    [](const ::testing::TestParamInfo<CheckCase>& info) {
      std::string name = info.param.fixture;
      for (char& ch : name) {
        if (ch == '-') ch = '_';
      }
      return name;
    });

TEST(PluginCheckTest, DuplicateIdAcrossFilesFails) {
  auto r = Check(Quote(Fixture("basic").string()) + " " +
                 Quote(Fixture("duplicate-id").string()));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("duplicate platform id 'fixture-basic-a'"));
}

TEST(PluginCheckTest, UsageErrorsExitTwo) {
  EXPECT_EQ(RunCommand(RIDGELINE_PLUGIN_CHECK).exit_code, 2);
  auto r = Check("--threads 0 x.so");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("--threads must be in [1, 1024], got 0"));
}

TEST(PluginCheckTest, MissingFileFails) {
  auto r = Check("/nonexistent/libnothing.so");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("FAIL load: cannot load shared library"));
}

}  // namespace
}  // namespace ridgeline::plugin_host
