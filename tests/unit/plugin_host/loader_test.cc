// HardwareRegistry / PluginLibrary against the fixture plugins in
// tests/fixtures/plugins (values in fixture_plugin.c).
#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ridgeline/plugin_host/plugin_library.h"
#include "ridgeline/plugin_host/registry.h"
#include "test_util.h"

namespace ridgeline::plugin_host {
namespace {

using ::ridgeline::plugin_host::testing::Fixture;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(RegistryTest, GoodPluginLoadsAndConvertsEveryField) {
  auto registry = HardwareRegistry::LoadFiles({Fixture("basic")});
  ASSERT_EQ(registry->outcomes().size(), 1u);
  const LoadOutcome& outcome = registry->outcomes()[0];
  EXPECT_TRUE(outcome.loaded) << outcome.reason;
  EXPECT_EQ(outcome.reason, "");
  EXPECT_EQ(outcome.family, "basic");
  EXPECT_EQ(outcome.plugin_version, "0.0.1-fixture");
  EXPECT_EQ(outcome.platforms, 2);
  ASSERT_EQ(registry->platforms().size(), 2u);

  auto a = registry->Find("fixture-basic-a");
  ASSERT_TRUE(a.ok()) << a.status();
  const engine::Hardware& hw = **a;
  EXPECT_EQ(hw.display_name, "Fixture part A (test only)");
  EXPECT_EQ(hw.vendor, "Ridgeline tests");
  EXPECT_EQ(hw.family, "basic");
  EXPECT_EQ(hw.plugin, "libridgeline-fixture-basic.so");
  EXPECT_THAT(hw.sources,
              ElementsAre("illustrative test values; not a real part"));
  // Peaks as written in fixture_plugin.c; 0 in the ABI becomes "unknown".
  using engine::MathType;
  EXPECT_EQ(hw.peak_ops_per_second[int(MathType::kFp32)], 1e13);
  EXPECT_EQ(hw.peak_ops_per_second[int(MathType::kBf16)], 1e14);
  EXPECT_EQ(hw.peak_ops_per_second[int(MathType::kInt8)], 2e14);
  EXPECT_FALSE(hw.peak_ops_per_second[int(MathType::kFp64)].has_value());
  EXPECT_FALSE(hw.peak_ops_per_second[int(MathType::kFp8)].has_value());
  EXPECT_FALSE(hw.energy_joules_per_op[int(MathType::kBf16)].has_value());
  EXPECT_EQ(hw.kernel_launch_seconds, 5e-6);
  ASSERT_EQ(hw.tiers.size(), 2u);
  EXPECT_EQ(hw.tiers[0].name, "fixture SRAM");
  EXPECT_EQ(hw.tiers[0].kind, engine::TierKind::kSram);
  EXPECT_EQ(hw.tiers[0].capacity_bytes, 33554432.0);  // 32 MiB = 32 * 2^20
  EXPECT_EQ(hw.tiers[0].latency_seconds, 10e-9);
  EXPECT_EQ(hw.tiers[1].kind, engine::TierKind::kHbm);
  EXPECT_EQ(hw.tiers[1].capacity_bytes, 17179869184.0);  // 16 GiB = 16 * 2^30
  EXPECT_EQ(hw.tiers[1].read_bandwidth_bytes_per_second, 1e12);
  // The fixture leaves write bandwidth 0 ("one figure"): read is used.
  EXPECT_EQ(hw.tiers[1].write_bandwidth_bytes_per_second, 1e12);
  EXPECT_FALSE(hw.tiers[1].energy_joules_per_byte.has_value());
  EXPECT_FALSE(hw.tiers[1].near_memory_compute.has_value());
  EXPECT_EQ(hw.tdp_watts, 300.0);
  EXPECT_EQ(hw.idle_watts, 50.0);
  EXPECT_FALSE(hw.price_usd.has_value());
  EXPECT_FALSE(hw.embodied_kg_co2e.has_value());
  EXPECT_FALSE(hw.interconnect_bytes_per_second.has_value());
  EXPECT_TRUE(static_cast<bool>(hw.efficiency_hook));

  auto b = registry->Find("fixture-basic-b");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_THAT((*b)->sources,
              ElementsAre("illustrative test values; not a real part",
                          "second citation line"));
  ASSERT_TRUE((*b)->tiers[0].near_memory_compute.has_value());
  const engine::NearMemoryCompute& pim = *(*b)->tiers[0].near_memory_compute;
  EXPECT_EQ(pim.internal_bandwidth_bytes_per_second, 4e12);
  EXPECT_EQ(pim.peak_ops_per_second[int(MathType::kFp16)], 1e12);
  EXPECT_FALSE(pim.peak_ops_per_second[int(MathType::kBf16)].has_value());
  EXPECT_EQ((*b)->tiers[1].kind, engine::TierKind::kHostLink);
  EXPECT_FALSE((*b)->tdp_watts.has_value());
}

TEST(RegistryTest, PlatformsAreSortedById) {
  auto registry = HardwareRegistry::LoadFiles({Fixture("basic")});
  std::vector<std::string> ids;
  for (const auto& hw : registry->platforms()) ids.push_back(hw.id);
  EXPECT_THAT(ids, ElementsAre("fixture-basic-a", "fixture-basic-b"));
}

TEST(RegistryTest, FindUnknownIdIsNotFoundNamingClosestIds) {
  auto registry = HardwareRegistry::LoadFiles({Fixture("basic")});
  auto missing = registry->Find("fixture-basic-c");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("\"fixture-basic-c\""));
  EXPECT_THAT(missing.status().message(), HasSubstr("fixture-basic-a"));
}

TEST(RegistryTest, FindInEmptyRegistryIsNotFound) {
  auto registry = HardwareRegistry::LoadFiles({});
  auto missing = registry->Find("nvidia-h100-sxm-80gb");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("no hardware plugins"));
}

struct RefusalCase {
  std::string fixture;
  std::string family;  // "" when refused before the table could be read
  std::vector<std::string> reason_parts;
};

void PrintTo(const RefusalCase& c, std::ostream* os) { *os << c.fixture; }

class RefusalTest : public ::testing::TestWithParam<RefusalCase> {};

TEST_P(RefusalTest, BrokenPluginRefusedWithReasonWhileGoodOneLoads) {
  const RefusalCase& c = GetParam();
  auto registry =
      HardwareRegistry::LoadFiles({Fixture(c.fixture), Fixture("basic")});
  ASSERT_EQ(registry->outcomes().size(), 2u);
  const LoadOutcome& bad = registry->outcomes()[0];
  EXPECT_FALSE(bad.loaded);
  EXPECT_EQ(bad.platforms, 0);
  EXPECT_EQ(bad.family, c.family);
  EXPECT_EQ(bad.path, Fixture(c.fixture).string());
  for (const std::string& part : c.reason_parts) {
    EXPECT_THAT(bad.reason, HasSubstr(part));
  }
  const LoadOutcome& good = registry->outcomes()[1];
  EXPECT_TRUE(good.loaded) << good.reason;
  EXPECT_EQ(registry->platforms().size(), 2u);  // fixture-basic-a, -b only
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, RefusalTest,
    ::testing::Values(
        RefusalCase{"wrong-major",
                    "",
                    {"ABI major version mismatch", "plugin speaks 2.4",
                     "host speaks 1.4"}},
        RefusalCase{
            "newer-minor", "", {"plugin ABI 1.5 is newer than host ABI 1.4"}},
        RefusalCase{
            "no-entry", "", {"missing entry symbol 'ridgeline_plugin_entry'"}},
        RefusalCase{
            "null-entry", "", {"ridgeline_plugin_entry() returned NULL"}},
        RefusalCase{"init-error",
                    "",
                    {"init() failed: INTERNAL: fixture: simulated "
                     "initialisation failure"}},
        // Tier 1 is the fixture's HBM; the engine names the field path.
        RefusalCase{
            "zero-bandwidth",
            "zero-bandwidth",
            {"fixture-zero-bandwidth-a",
             "platforms[0].tiers[1].read_bandwidth_bytes_per_second", "got 0"}},
        RefusalCase{"negative-bandwidth",
                    "negative-bandwidth",
                    {"platforms[0].tiers[1].read_bandwidth_bytes_per_second",
                     "got -1e+12"}},
        RefusalCase{"nan-bandwidth",
                    "nan-bandwidth",
                    {"platforms[0].tiers[1].read_bandwidth_bytes_per_second",
                     "got nan"}},
        RefusalCase{"zero-capacity",
                    "zero-capacity",
                    {"platforms[0].tiers[1].capacity_bytes", "got 0"}},
        RefusalCase{
            "negative-capacity",
            "negative-capacity",
            {"platforms[0].tiers[1].capacity_bytes", "got -1.71799e+10"}},
        RefusalCase{"nan-capacity",
                    "nan-capacity",
                    {"platforms[0].tiers[1].capacity_bytes", "got nan"}},
        // Slot 9 (fp16-acc16) is defined from ABI 1.1 on; a plugin that
        // says it speaks 1.0 must leave it 0.
        RefusalCase{
            "old-minor-acc16",
            "old-minor-acc16",
            {"platforms[0].peak_ops_per_second[9] is reserved in ABI 1.0 "
             "and must be 0, got 2e+14"}},
        // In-memory compute without any rate stays invalid (only the
        // platform's own peaks may all be unknown).
        // Issue 14, defect 5: a size the plugin gives is bounded before it
        // is used as an array stride.
        RefusalCase{"huge-stride",
                    "huge-stride",
                    {"platforms[0].tiers[0].struct_size must be in [",
                     ", 4096]", "got 4294967280"}},
        // Defect 10: a name that is not UTF-8 would fail every ListHardware
        // (proto strings must be UTF-8); the plugin is refused instead.
        RefusalCase{"bad-utf8-name",
                    "bad-utf8-name",
                    {"platforms[0].display_name must be valid UTF-8; byte 15 "
                     "(0xff) is not"}},
        RefusalCase{"pim-no-peak",
                    "pim-no-peak",
                    {"fixture-pim-no-peak-b",
                     "platforms[1].tiers[0].near_memory_compute."
                     "peak_ops_per_second must give at least one math type"}}),
    [](const ::testing::TestParamInfo<RefusalCase>& info) {
      std::string name = info.param.fixture;
      for (char& ch : name) {
        if (ch == '-') ch = '_';
      }
      return name;
    });

TEST(RegistryTest, DuplicatePlatformIdAcrossPluginsRefusesTheLaterPlugin) {
  auto registry = HardwareRegistry::LoadFiles(
      {Fixture("basic"), Fixture("duplicate-id")});
  ASSERT_EQ(registry->outcomes().size(), 2u);
  EXPECT_TRUE(registry->outcomes()[0].loaded);
  const LoadOutcome& dup = registry->outcomes()[1];
  EXPECT_FALSE(dup.loaded);
  EXPECT_EQ(dup.family, "duplicate-id");
  EXPECT_THAT(dup.reason, HasSubstr("duplicate platform id 'fixture-basic-a'"));
  EXPECT_THAT(dup.reason, HasSubstr("libridgeline-fixture-basic.so"));
  // Nothing of the refused plugin leaks in (its -b platform is unique).
  EXPECT_EQ(registry->platforms().size(), 2u);
  EXPECT_FALSE(registry->Find("fixture-duplicate-id-b").ok());
}

TEST(RegistryTest, Abi11Fp16Acc16PeakLoads) {
  // ABI 1.1 slot 9: fp16 with fp16 accumulation, 2e14 in the fixture.
  auto registry = HardwareRegistry::LoadFiles({Fixture("acc16")});
  ASSERT_TRUE(registry->outcomes()[0].loaded) << registry->outcomes()[0].reason;
  auto a = registry->Find("fixture-acc16-a");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->peak_ops_per_second[static_cast<int>(engine::MathType::kFp16Acc16)],
            2e14);
  EXPECT_EQ((*a)->peak_ops_per_second[static_cast<int>(engine::MathType::kFp16)], 1e14);
}

// A plugin built against the released 1.0 header (tests/fixtures/abi/1.0):
// its RidgelinePlatform ends at interconnect_bytes_per_second (360 bytes on
// LP64), so struct_size = 360 < sizeof of today's struct. It must load,
// with the 1.2 link fields unknown.
TEST(AbiCompatibilityTest, PluginBuiltAgainst10HeaderLoads) {
  auto registry = HardwareRegistry::LoadFiles({Fixture("abi-1-0")});
  ASSERT_TRUE(registry->outcomes()[0].loaded) << registry->outcomes()[0].reason;
  auto a = registry->Find("fixture-abi-1-0-a");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->peak_ops_per_second[static_cast<int>(engine::MathType::kFp16)],
            1e14);
  EXPECT_FALSE((*a)->peak_ops_per_second[static_cast<int>(
                                             engine::MathType::kFp16Acc16)]
                   .has_value());
  EXPECT_EQ((*a)->interconnect_bytes_per_second, 400e9);
  EXPECT_FALSE((*a)->scale_up_latency_seconds.has_value());
  EXPECT_FALSE((*a)->scale_out_bytes_per_second.has_value());
  EXPECT_FALSE((*a)->scale_out_latency_seconds.has_value());
  EXPECT_FALSE((*a)->devices_per_node.has_value());
  EXPECT_TRUE(engine::ValidateHardware(**a).ok());
}

// 1.1 header: slot 9 (fp16-acc16) is defined and read; links unknown.
TEST(AbiCompatibilityTest, PluginBuiltAgainst11HeaderLoads) {
  auto registry = HardwareRegistry::LoadFiles({Fixture("abi-1-1")});
  ASSERT_TRUE(registry->outcomes()[0].loaded) << registry->outcomes()[0].reason;
  auto a = registry->Find("fixture-abi-1-1-a");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->peak_ops_per_second[static_cast<int>(
                engine::MathType::kFp16Acc16)],
            2e14);
  EXPECT_EQ((*a)->interconnect_bytes_per_second, 400e9);
  EXPECT_FALSE((*a)->scale_out_bytes_per_second.has_value());
  EXPECT_FALSE((*a)->devices_per_node.has_value());
}

// 1.2 header (struct ends at devices_per_node, 388 bytes on LP64): the
// link fields come through, the 1.3 kernel-model figures are unknown.
TEST(AbiCompatibilityTest, PluginBuiltAgainst12HeaderLoads) {
  auto registry = HardwareRegistry::LoadFiles({Fixture("abi-1-2")});
  ASSERT_TRUE(registry->outcomes()[0].loaded) << registry->outcomes()[0].reason;
  auto a = registry->Find("fixture-abi-1-2-a");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->devices_per_node, 4);
  EXPECT_FALSE((*a)->compute_units.has_value());
  EXPECT_FALSE((*a)->last_level_cache_bytes.has_value());
  EXPECT_TRUE(engine::ValidateHardware(**a).ok());
}

// 1.3 header: its tiers end at near_memory_compute (72 bytes on LP64, the
// array stride), so the 1.4 inline ECC share is 0 and the kernel-model
// figures come through.
TEST(AbiCompatibilityTest, PluginBuiltAgainst13HeaderLoads) {
  auto registry = HardwareRegistry::LoadFiles({Fixture("abi-1-3")});
  ASSERT_TRUE(registry->outcomes()[0].loaded) << registry->outcomes()[0].reason;
  auto a = registry->Find("fixture-abi-1-3-a");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->compute_units, 32);
  ASSERT_EQ((*a)->tiers.size(), 1u);
  EXPECT_EQ((*a)->tiers[0].read_bandwidth_bytes_per_second, 1e12);
  EXPECT_EQ((*a)->tiers[0].inline_ecc_share, 0);
  EXPECT_TRUE(engine::ValidateHardware(**a).ok());
}

// The current header: the 1.2 link fields, the 1.3 kernel-model figures
// and the 1.4 inline ECC share come through.
TEST(AbiCompatibilityTest, CurrentPluginCarriesBothLinkLevels) {
  auto registry = HardwareRegistry::LoadFiles({Fixture("abi-current")});
  ASSERT_TRUE(registry->outcomes()[0].loaded) << registry->outcomes()[0].reason;
  auto a = registry->Find("fixture-abi-current-a");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->interconnect_bytes_per_second, 400e9);
  EXPECT_EQ((*a)->scale_up_latency_seconds, 1e-6);
  EXPECT_EQ((*a)->scale_out_bytes_per_second, 50e9);
  EXPECT_EQ((*a)->scale_out_latency_seconds, 5e-6);
  EXPECT_EQ((*a)->devices_per_node, 4);
  EXPECT_EQ((*a)->compute_units, 32);
  EXPECT_EQ((*a)->last_level_cache_bytes, 8388608.0);
  EXPECT_EQ((*a)->tiers[0].inline_ecc_share, 0.0625);
}

TEST(RegistryTest, PlatformWithoutAnyPeakLoads) {
  // ABI 1.0 (clarified): all peaks 0 = "compute roof unknown", not an error.
  auto registry = HardwareRegistry::LoadFiles({Fixture("no-peak")});
  ASSERT_EQ(registry->outcomes().size(), 1u);
  EXPECT_TRUE(registry->outcomes()[0].loaded) << registry->outcomes()[0].reason;
  EXPECT_EQ(registry->outcomes()[0].platforms, 2);
  auto a = registry->Find("fixture-no-peak-a");
  ASSERT_TRUE(a.ok()) << a.status();
  for (const auto& peak : (*a)->peak_ops_per_second) {
    EXPECT_FALSE(peak.has_value());
  }
  // Its tiers come through unchanged: 32 MiB SRAM at 4e12 B/s, 16 GiB HBM
  // at 1e12 B/s (write 0 in the ABI = same as read).
  ASSERT_EQ((*a)->tiers.size(), 2u);
  EXPECT_EQ((*a)->tiers[1].capacity_bytes, 17179869184.0);
  EXPECT_EQ((*a)->tiers[1].write_bandwidth_bytes_per_second, 1e12);
  EXPECT_TRUE(engine::ValidateHardware(**a).ok());
  // Part B of the same plugin keeps its fp16 peak.
  auto b = registry->Find("fixture-no-peak-b");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)->peak_ops_per_second[static_cast<int>(engine::MathType::kFp16)],
            5e13);
}

// Runs a registry load with stderr captured.
std::string LoadLogOutput(LoadLog log) {
  ::testing::internal::CaptureStderr();
  auto registry =
      HardwareRegistry::LoadFiles({Fixture("basic"), Fixture("init-error")}, log);
  std::string printed = ::testing::internal::GetCapturedStderr();
  // Outcomes are recorded whatever is printed.
  EXPECT_EQ(registry->outcomes().size(), 2u);
  return printed;
}

TEST(RegistryTest, LoadLogChoosesWhatIsPrinted) {
  const std::string all = LoadLogOutput(LoadLog::kAll);
  EXPECT_THAT(all, HasSubstr("ridgeline plugin: loaded family=basic"));
  EXPECT_THAT(all, HasSubstr("ridgeline plugin: refused"));
  const std::string refusals = LoadLogOutput(LoadLog::kRefusalsOnly);
  EXPECT_THAT(refusals, ::testing::Not(HasSubstr("loaded")));
  EXPECT_THAT(refusals, HasSubstr("ridgeline plugin: refused"));
  EXPECT_THAT(refusals, HasSubstr("init() failed"));
  EXPECT_EQ(LoadLogOutput(LoadLog::kNone), "");
  // The default stays "every outcome" (what the server relies on).
  ::testing::internal::CaptureStderr();
  HardwareRegistry::LoadFiles({Fixture("basic")});
  EXPECT_THAT(::testing::internal::GetCapturedStderr(),
              HasSubstr("ridgeline plugin: loaded family=basic"));
}

TEST(RegistryTest, LoadDirectoryTriesEverySoSortedByName) {
  auto registry =
      HardwareRegistry::LoadDirectory(RIDGELINE_FIXTURE_PLUGIN_DIR);
  // 28 fixture plugins: abi-1.0, 1.1, 1.2, 1.3, abi-current (one each),
  // basic, no-peak, acc16, slow-acc16 (loads; only the checker fails it),
  // hook-code-zero, tiny-efficiency, nan-efficiency (load; their hooks
  // fault at analysis time) + 16 refused ones (see tests/fixtures).
  ASSERT_EQ(registry->outcomes().size(), 28u);
  std::vector<std::string> loaded;
  for (const LoadOutcome& o : registry->outcomes()) {
    if (o.loaded) {
      loaded.push_back(o.family);
    } else {
      EXPECT_NE(o.reason, "") << o.path;
    }
  }
  // "basic" sorts before "duplicate-id", so the duplicate is the one refused.
  EXPECT_THAT(loaded,
              ElementsAre("abi-1-0", "abi-1-1", "abi-1-2", "abi-1-3", "abi-current",
                          "acc16", "basic", "hook-code-zero", "nan-efficiency",
                          "no-peak", "slow-acc16", "tiny-efficiency"));
  // 2 platforms per older fixture plugin x 7 + 1 per ABI fixture x 5.
  EXPECT_EQ(registry->platforms().size(), 19u);
  EXPECT_EQ(std::filesystem::path(registry->outcomes()[0].path).filename(),
            "libridgeline-fixture-abi-1-0.so");
}

TEST(RegistryTest, MissingDirectoryIsOneRefusedOutcome) {
  const std::string dir = std::string(RIDGELINE_FIXTURE_PLUGIN_DIR) + "/absent";
  auto registry = HardwareRegistry::LoadDirectory(dir);
  ASSERT_EQ(registry->outcomes().size(), 1u);
  EXPECT_FALSE(registry->outcomes()[0].loaded);
  EXPECT_EQ(registry->outcomes()[0].path, dir);
  EXPECT_THAT(registry->outcomes()[0].reason, HasSubstr(dir));
  EXPECT_TRUE(registry->platforms().empty());
}

TEST(PluginLibraryTest, LoadedOncePerProcess) {
  auto first = PluginLibrary::Open(Fixture("basic"));
  auto second = PluginLibrary::Open(Fixture("basic"));
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(&first->table(), &second->table());
  // A refusal is remembered too (init is not retried).
  auto bad1 = PluginLibrary::Open(Fixture("init-error"));
  auto bad2 = PluginLibrary::Open(Fixture("init-error"));
  EXPECT_EQ(bad1.status(), bad2.status());
}

TEST(PluginLibraryTest, OutOfRangeIndexIsAnError) {
  auto lib = PluginLibrary::Open(Fixture("basic"));
  ASSERT_TRUE(lib.ok());
  auto p = lib->Platform(2);  // the fixture has platforms 0 and 1
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(p.status().message(), HasSubstr("get_platform(2)"));
}

TEST(EfficiencyHookTest, WrappedHookAndRawCalls) {
  auto registry = HardwareRegistry::LoadFiles({Fixture("basic")});
  auto a = registry->Find("fixture-basic-a");
  ASSERT_TRUE(a.ok());
  const engine::EfficiencyHook& hook = (*a)->efficiency_hook;
  ASSERT_TRUE(static_cast<bool>(hook));
  using engine::MathType;
  using engine::OpClass;
  // Fixture: gemm -> compute 0.5, memory 0.8; gemv/attention -> 0.25, 0.8.
  auto gemm = hook({OpClass::kGemm, MathType::kBf16, 128, 1e9, 1e6});
  ASSERT_TRUE(gemm.has_value());
  EXPECT_EQ(gemm->compute, 0.5);
  EXPECT_EQ(gemm->memory, 0.8);
  auto gemv = hook({OpClass::kGemv, MathType::kInt8, 1, 1e6, 1e6});
  ASSERT_TRUE(gemv.has_value());
  EXPECT_EQ(gemv->compute, 0.25);
  // Elementwise: the fixture leaves both 0 = engine defaults.
  EXPECT_FALSE(hook({OpClass::kElementwise, MathType::kBf16, 1, 1, 1}));
  // fp64 has no peak on part A: the plugin says UNIMPLEMENTED, which the
  // wrapped hook turns into "engine defaults".
  EXPECT_FALSE(hook({OpClass::kGemm, MathType::kFp64, 1, 1, 1}));

  auto lib = PluginLibrary::Open(Fixture("basic"));
  ASSERT_TRUE(lib.ok());
  auto raw = lib->CallEfficiency(0, {OpClass::kGemm, MathType::kFp64, 1, 1, 1});
  ASSERT_FALSE(raw.ok());
  EXPECT_EQ(raw.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(raw.status().message(), HasSubstr("fixture-basic-a"));
}

// This test binary runs from the build tree, not an installed prefix, so
// the build tree's folder wins, whether or not the configured install
// prefix exists too (the README's quickstart installs to ./install first:
// issue 14's first-run path).
TEST(DefaultPluginDirTest, BuildTreeBinaryUsesBuildDirEvenWhenInstalled) {
  std::error_code ec;
  ASSERT_TRUE(std::filesystem::is_directory(RIDGELINE_BUILD_PLUGIN_DIR, ec));
  // No plugin folder next to this executable's prefix: that case is the
  // installed server's (tested by the quickstart-then-test CI step).
  ASSERT_FALSE(std::filesystem::is_directory(
      InstallPrefixPath(RIDGELINE_PLUGIN_INSTALL_DIR), ec));
  EXPECT_EQ(DefaultPluginDir(),
            std::filesystem::path(RIDGELINE_BUILD_PLUGIN_DIR));
}

// Issue 14, defect 5: an efficiency hook returning an error object with
// code 0 used to build a StatusOr from OK and abort the process.
TEST(EfficiencyHookTest, ErrorWithCodeZeroIsInternalNotAnAbort) {
  auto lib = PluginLibrary::Open(Fixture("hook-code-zero"));
  ASSERT_TRUE(lib.ok()) << lib.status();
  using engine::MathType;
  using engine::OpClass;
  auto raw = lib->CallEfficiency(0, {OpClass::kGemm, MathType::kBf16, 1, 1, 1});
  ASSERT_FALSE(raw.ok());
  EXPECT_EQ(raw.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(raw.status().message(),
              HasSubstr("error object with code 0 (OK): fixture: error with "
                        "code 0"));
}

// Hook answers that are not used are logged naming the plugin and counted
// through the observer; the engine's defaults (nullopt) are used instead.
TEST(EfficiencyHookTest, FaultyAnswersAreLoggedCountedAndIgnored) {
  std::vector<std::pair<std::string, std::string>> seen;
  std::mutex mu;
  SetHookFaultObserver([&](const std::string& plugin, const char* kind) {
    std::lock_guard<std::mutex> lock(mu);
    seen.emplace_back(plugin, kind);
  });
  auto registry = HardwareRegistry::LoadFiles(
      {Fixture("hook-code-zero"), Fixture("tiny-efficiency"),
       Fixture("nan-efficiency")},
      LoadLog::kNone);
  using engine::MathType;
  using engine::OpClass;
  const engine::OpShape gemm{OpClass::kGemm, MathType::kBf16, 128, 1e9, 1e6};
  ::testing::internal::CaptureStderr();
  for (const char* id : {"fixture-hook-code-zero-a", "fixture-tiny-efficiency-a",
                         "fixture-nan-efficiency-a"}) {
    auto hw = registry->Find(id);
    ASSERT_TRUE(hw.ok()) << hw.status();
    EXPECT_FALSE((*hw)->efficiency_hook(gemm).has_value()) << id;
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  SetHookFaultObserver(nullptr);
  EXPECT_THAT(log, HasSubstr("efficiency hook of "
                             "libridgeline-fixture-hook-code-zero.so ignored "
                             "(error"));
  EXPECT_THAT(log, HasSubstr("efficiency hook of "
                             "libridgeline-fixture-tiny-efficiency.so ignored "
                             "(out_of_range"));
  EXPECT_THAT(log, HasSubstr("compute=1e-300"));
  EXPECT_THAT(log, HasSubstr("efficiency hook of "
                             "libridgeline-fixture-nan-efficiency.so ignored "
                             "(not_finite"));
  EXPECT_THAT(seen,
              ElementsAre(std::pair<std::string, std::string>(
                              "libridgeline-fixture-hook-code-zero.so", "error"),
                          std::pair<std::string, std::string>(
                              "libridgeline-fixture-tiny-efficiency.so",
                              "out_of_range"),
                          std::pair<std::string, std::string>(
                              "libridgeline-fixture-nan-efficiency.so",
                              "not_finite")));
}

// A fresh folder under the test's tmp dir with mode `mode`.
std::filesystem::path MakeDir(const std::string& name, std::filesystem::perms mode) {
  const std::filesystem::path dir =
      std::filesystem::path(RIDGELINE_TEST_TMP_DIR) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, mode);
  return dir;
}

constexpr auto kOwnerOnly = std::filesystem::perms::owner_all |
                            std::filesystem::perms::group_read |
                            std::filesystem::perms::group_exec |
                            std::filesystem::perms::others_read |
                            std::filesystem::perms::others_exec;  // 0755

// Issue 14, Security: the server runs code from its plugin folder, so a
// folder others can write is refused as a whole, with a reason.
TEST(PluginFolderSafetyTest, FolderWritableByOthersIsRefused) {
  const auto dir = MakeDir("writable", std::filesystem::perms::all);  // 0777
  std::filesystem::copy_file(Fixture("basic"), dir / "libbasic.so");
  auto registry = HardwareRegistry::LoadDirectory(dir, LoadLog::kNone);
  ASSERT_EQ(registry->outcomes().size(), 1u);
  EXPECT_FALSE(registry->outcomes()[0].loaded);
  EXPECT_THAT(registry->outcomes()[0].reason,
              HasSubstr("is writable by group or others (mode 0777)"));
  EXPECT_TRUE(registry->platforms().empty());
  // The same folder at 0755 loads.
  std::filesystem::permissions(dir, kOwnerOnly);
  registry = HardwareRegistry::LoadDirectory(dir, LoadLog::kNone);
  ASSERT_EQ(registry->outcomes().size(), 1u);
  EXPECT_TRUE(registry->outcomes()[0].loaded) << registry->outcomes()[0].reason;
}

// A plugin that is a symlink out of the folder, or a file others can write,
// is refused naming why; the safe plugin beside it still loads.
TEST(PluginFolderSafetyTest, SymlinkOutOfTheFolderAndWritableFileAreRefused) {
  const auto dir = MakeDir("links", kOwnerOnly);
  std::filesystem::create_symlink(Fixture("acc16"), dir / "libacc16.so");
  std::filesystem::copy_file(Fixture("no-peak"), dir / "libnopeak.so");
  std::filesystem::permissions(dir / "libnopeak.so",
                               std::filesystem::perms::others_write,
                               std::filesystem::perm_options::add);
  std::filesystem::copy_file(Fixture("basic"), dir / "libbasic.so");
  // A link to a file inside the folder is fine.
  std::filesystem::create_symlink("libbasic.so", dir / "libbasic-link.so");
  auto registry = HardwareRegistry::LoadDirectory(dir, LoadLog::kNone);
  std::vector<std::string> loaded, refused;
  for (const LoadOutcome& o : registry->outcomes()) {
    const std::string name = std::filesystem::path(o.path).filename().string();
    (o.loaded ? loaded : refused).push_back(name + ": " + o.reason);
  }
  // basic and its in-folder link are the same file: one opens it, the other
  // then finds its ids taken.
  ASSERT_EQ(refused.size(), 3u) << ::testing::PrintToString(refused);
  EXPECT_THAT(refused, ::testing::Contains(HasSubstr(
                           "libacc16.so: refused before loading: libacc16.so "
                           "is a symbolic link to '")));
  EXPECT_THAT(refused, ::testing::Contains(HasSubstr(
                           "outside the plugin folder")));
  EXPECT_THAT(refused, ::testing::Contains(HasSubstr(
                           "libnopeak.so is writable by group or others "
                           "(mode 0757)")));
  ASSERT_EQ(loaded.size(), 1u);
  EXPECT_THAT(loaded[0], HasSubstr("libbasic"));
}

// Issue 26, defect 8: a dangling and a looping *.so link used to make the
// whole folder unreadable (0 plugins). Each is refused with its reason; the
// good plugin beside them loads.
TEST(PluginFolderSafetyTest, DanglingAndLoopingLinksAreSkippedWithAReason) {
  const auto dir = MakeDir("bad-links", kOwnerOnly);
  std::filesystem::copy_file(Fixture("basic"), dir / "libbasic.so");
  std::filesystem::create_symlink(dir / "gone.so", dir / "dangling.so");
  std::filesystem::create_symlink(dir / "loop.so", dir / "loop.so");
  auto registry = HardwareRegistry::LoadDirectory(dir, LoadLog::kNone);
  std::map<std::string, std::string> reasons;
  for (const LoadOutcome& o : registry->outcomes()) {
    reasons[std::filesystem::path(o.path).filename().string()] =
        o.loaded ? "loaded" : o.reason;
  }
  ASSERT_EQ(reasons.size(), 3u) << ::testing::PrintToString(reasons);
  EXPECT_EQ(reasons["libbasic.so"], "loaded");
  EXPECT_THAT(reasons["dangling.so"],
              HasSubstr("dangling.so is a dangling symbolic link (-> '"));
  EXPECT_THAT(reasons["loop.so"],
              HasSubstr("loop.so is a symbolic link that loops"));
  EXPECT_EQ(registry->platforms().size(), 2u);  // fixture-basic-a and -b
}

}  // namespace
}  // namespace ridgeline::plugin_host
