// Hosted plugins (issue 26, defect 7): plugins read in a plugin-host child
// process (plugin_host_child, what ridgeline-server runs with
// --plugin-host=), against the in-process reading of the same fixtures
// (values in tests/fixtures/plugins/fixture_plugin.c).
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ridgeline/plugin_host/hosted_plugin.h"
#include "ridgeline/plugin_host/plugin_library.h"
#include "test_util.h"

namespace ridgeline::plugin_host {
namespace {

using ::ridgeline::plugin_host::testing::Fixture;
using ::testing::HasSubstr;

HostOptions Options() {
  HostOptions o;
  o.exe = RIDGELINE_PLUGIN_HOST_CHILD;
  o.load_timeout_seconds = 10;
  return o;
}

std::filesystem::path Evader(const std::string& fault) {
  return std::filesystem::path(RIDGELINE_EVADE_PLUGIN_ROOT) /
         (fault + "-plugins") / ("libridgeline-fixture-" + fault + ".so");
}

engine::OpShape Shape(engine::OpClass c, int64_t tokens) {
  return engine::OpShape{c, engine::MathType::kBf16, tokens, tokens * 1e9,
                         tokens * 1e6};
}

// Every field the server uses arrives as the in-process loader reads it.
TEST(HostedPluginTest, PlatformDataMatchesTheInProcessReading) {
  PluginContents local, hosted;
  ASSERT_TRUE(ReadPluginInProcess(Fixture("basic"), &local).ok());
  absl::Status s = ReadPluginHosted(Fixture("basic"), Options(), &hosted);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(hosted.family, "basic");
  EXPECT_EQ(hosted.plugin_version, "0.0.1-fixture");
  ASSERT_EQ(hosted.platforms.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const engine::Hardware& a = local.platforms[i];
    const engine::Hardware& b = hosted.platforms[i];
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.display_name, b.display_name);
    EXPECT_EQ(a.vendor, b.vendor);
    EXPECT_EQ(a.family, b.family);
    EXPECT_EQ(a.sources, b.sources);
    EXPECT_EQ(a.peak_ops_per_second, b.peak_ops_per_second);
    EXPECT_EQ(a.energy_joules_per_op, b.energy_joules_per_op);
    EXPECT_EQ(a.kernel_launch_seconds, b.kernel_launch_seconds);
    ASSERT_EQ(a.tiers.size(), b.tiers.size());
    for (size_t t = 0; t < a.tiers.size(); ++t) {
      EXPECT_EQ(a.tiers[t].name, b.tiers[t].name);
      EXPECT_EQ(a.tiers[t].kind, b.tiers[t].kind);
      EXPECT_EQ(a.tiers[t].capacity_bytes, b.tiers[t].capacity_bytes);
      EXPECT_EQ(a.tiers[t].read_bandwidth_bytes_per_second,
                b.tiers[t].read_bandwidth_bytes_per_second);
      EXPECT_EQ(a.tiers[t].write_bandwidth_bytes_per_second,
                b.tiers[t].write_bandwidth_bytes_per_second);
      EXPECT_EQ(a.tiers[t].latency_seconds, b.tiers[t].latency_seconds);
      EXPECT_EQ(a.tiers[t].inline_ecc_share, b.tiers[t].inline_ecc_share);
      EXPECT_EQ(a.tiers[t].near_memory_compute.has_value(),
                b.tiers[t].near_memory_compute.has_value());
    }
    EXPECT_EQ(a.tdp_watts, b.tdp_watts);
    EXPECT_EQ(a.idle_watts, b.idle_watts);
    EXPECT_EQ(a.devices_per_node, b.devices_per_node);
    ASSERT_TRUE(b.efficiency_hook);
  }
  // Part B's HBM-PIM tier: 4e12 B/s internal, fp16 1e12 ops/s.
  const auto& pim = hosted.platforms[1].tiers[0].near_memory_compute;
  ASSERT_TRUE(pim.has_value());
  EXPECT_EQ(pim->internal_bandwidth_bytes_per_second, 4e12);
  EXPECT_EQ(pim->peak_ops_per_second[static_cast<int>(engine::MathType::kFp16)],
            1e12);
  EXPECT_TRUE(hosted.health().ok());
}

// ABI 1.4's tier field crosses the host's wire: the fixture built against
// the current header gives its tier an inline ECC share of 1/16.
TEST(HostedPluginTest, InlineEccShareCrossesTheWire) {
  PluginContents hosted;
  absl::Status s = ReadPluginHosted(Fixture("abi-current"), Options(), &hosted);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(hosted.platforms.size(), 1u);
  ASSERT_EQ(hosted.platforms[0].tiers.size(), 1u);
  EXPECT_EQ(hosted.platforms[0].tiers[0].inline_ecc_share, 0.0625);
}

// The fixture's hook: gemm 0.5 of peak, attention 0.25, memory 0.8 for
// both; elementwise leaves both 0 (no opinion). Asked twice, the second
// answer comes from the cache and is the same.
TEST(HostedPluginTest, HookAnswersComeFromTheHost) {
  PluginContents hosted;
  ASSERT_TRUE(ReadPluginHosted(Fixture("basic"), Options(), &hosted).ok());
  const engine::EfficiencyHook& hook = hosted.platforms[0].efficiency_hook;
  for (int round = 0; round < 2; ++round) {
    std::optional<engine::OpEfficiency> gemm =
        hook(Shape(engine::OpClass::kGemm, 512));
    ASSERT_TRUE(gemm.has_value());
    EXPECT_EQ(gemm->compute, 0.5);
    EXPECT_EQ(gemm->memory, 0.8);
    std::optional<engine::OpEfficiency> attention =
        hook(Shape(engine::OpClass::kAttention, 512));
    ASSERT_TRUE(attention.has_value());
    EXPECT_EQ(attention->compute, 0.25);
    EXPECT_FALSE(hook(Shape(engine::OpClass::kElementwise, 512)).has_value());
  }
}

// A plugin whose entry point segfaults is refused at load naming the
// signal; this process is untouched.
TEST(HostedPluginTest, CrashWhileLoadingIsRefusedNamingTheSignal) {
  PluginContents out;
  absl::Status s =
      ReadPluginHosted(std::filesystem::path(RIDGELINE_CRASH_PLUGIN_DIR) /
                           "libridgeline-fixture-segv-entry.so",
                       Options(), &out);
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("crashed with signal 11"));
  EXPECT_THAT(s.message(), HasSubstr("not loaded"));
}

// A hook that crashes on an analysis' shape: the host is restarted and
// retried max_failures times, then the plugin is failed and says so.
TEST(HostedPluginTest, HookCrashRestartsTheHostThenMarksThePluginFailed) {
  std::mutex mu;
  std::vector<std::string> kinds;
  SetHookFaultObserver([&](const std::string&, const char* kind) {
    std::lock_guard<std::mutex> lock(mu);
    kinds.push_back(kind);
  });
  PluginContents out;
  ASSERT_TRUE(
      ReadPluginHosted(Evader("evade-segv-late-hook"), Options(), &out).ok());
  ASSERT_TRUE(out.health().ok());
  EXPECT_FALSE(out.platforms[0]
                   .efficiency_hook(Shape(engine::OpClass::kGemm, 512))
                   .has_value());
  absl::Status health = out.health();
  EXPECT_TRUE(absl::IsUnavailable(health)) << health;
  EXPECT_THAT(health.message(),
              HasSubstr("plugin libridgeline-fixture-evade-segv-late-hook.so "
                        "failed: its plugin-host process failed 3 times"));
  EXPECT_THAT(health.message(), HasSubstr("crashed with signal 11"));
  // Failed for good: no more restarts, every call is a counted fault.
  EXPECT_FALSE(out.platforms[1]
                   .efficiency_hook(Shape(engine::OpClass::kGemm, 1))
                   .has_value());
  SetHookFaultObserver(nullptr);
  EXPECT_EQ(kinds, std::vector<std::string>({"host_failed", "host_failed"}));
}

// A load that hangs ends at the load timeout, or at once when cancelled
// (SIGTERM while loading), whatever the timeout.
TEST(HostedPluginTest, HangWhileLoadingEndsAtTheTimeoutOrWhenCancelled) {
  HostOptions o = Options();
  o.load_timeout_seconds = 0.5;
  PluginContents out;
  absl::Status s = ReadPluginHosted(Evader("evade-hang-init"), o, &out);
  EXPECT_THAT(s.message(),
              HasSubstr("did not finish loading and checking within 0.5 s"));

  o.load_timeout_seconds = 600;
  std::atomic<bool> stop{false};
  o.cancelled = [&stop] { return stop.load(); };
  std::thread stopper([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop = true;
  });
  const auto start = std::chrono::steady_clock::now();
  s = ReadPluginHosted(Evader("evade-hang-init"), o, &out);
  stopper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_THAT(s.message(), HasSubstr("the server is stopping"));
}

}  // namespace
}  // namespace ridgeline::plugin_host
