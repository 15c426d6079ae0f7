// The vendor SDK round trip: `cmake --install` this build's sdk component
// into a temporary prefix, configure and build examples/vendor_plugin out of
// tree against it, then load the result with the registry and run the
// installed ridgeline-plugin-check on it.
#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ridgeline/plugin_host/registry.h"
#include "test_util.h"

namespace ridgeline::plugin_host {
namespace {

namespace fs = std::filesystem;
using ::ridgeline::plugin_host::testing::Quote;
using ::ridgeline::plugin_host::testing::RunCommand;
using ::testing::HasSubstr;

TEST(SdkTest, InstallBuildExampleOutOfTreeAndLoadIt) {
  const fs::path root = fs::path(RIDGELINE_TEST_TMP_DIR) / "sdk";
  fs::remove_all(root);
  fs::create_directories(root);
  const fs::path prefix = root / "prefix";
  const fs::path build = root / "example-build";
  const std::string cmake = Quote(RIDGELINE_CMAKE_COMMAND);

  auto install = RunCommand(cmake + " --install " + Quote(RIDGELINE_BINARY_DIR) +
                     " --component sdk --prefix " + Quote(prefix.string()));
  ASSERT_EQ(install.exit_code, 0) << install.output;
  EXPECT_TRUE(fs::exists(prefix / "include/ridgeline/plugin/ridgeline_plugin.h"));
  const fs::path checker = prefix / "bin/ridgeline-plugin-check";
  ASSERT_TRUE(fs::exists(checker)) << install.output;

  auto configure = RunCommand(cmake + " -S " + Quote(RIDGELINE_EXAMPLE_SOURCE_DIR) +
                       " -B " + Quote(build.string()) +
                       " -DCMAKE_PREFIX_PATH=" + Quote(prefix.string()));
  ASSERT_EQ(configure.exit_code, 0) << configure.output;
  auto compile = RunCommand(cmake + " --build " + Quote(build.string()));
  ASSERT_EQ(compile.exit_code, 0) << compile.output;
  const fs::path so = build / "libridgeline-example-vendor.so";
  ASSERT_TRUE(fs::exists(so)) << compile.output;

  auto check = RunCommand(Quote(checker.string()) + " " + Quote(so.string()));
  EXPECT_EQ(check.exit_code, 0) << check.output;
  EXPECT_THAT(check.output, HasSubstr("RESULT: PASS"));

  auto registry = HardwareRegistry::LoadFiles({so});
  ASSERT_EQ(registry->outcomes().size(), 1u);
  EXPECT_TRUE(registry->outcomes()[0].loaded) << registry->outcomes()[0].reason;
  EXPECT_EQ(registry->outcomes()[0].family, "example-vendor");
  auto ex1 = registry->Find("example-ex1-96gb");
  ASSERT_TRUE(ex1.ok()) << ex1.status();
  // 4 stacks x 1024 bit x 6.4 Gb/s / 8 = 3.2768e12 B/s (example_plugin.c).
  EXPECT_EQ((*ex1)->tiers[1].read_bandwidth_bytes_per_second, 3.2768e12);
  EXPECT_EQ((*ex1)->tiers.size(), 3u);
}

}  // namespace
}  // namespace ridgeline::plugin_host
