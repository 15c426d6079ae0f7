// Every plugin .so (in-tree plugins and fixtures) exports exactly one
// dynamic symbol: ridgeline_plugin_entry. Reads the dynamic symbol table
// with `nm -D --defined-only`.
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace ridgeline::plugin_host {
namespace {

using ::ridgeline::plugin_host::testing::Quote;
using ::ridgeline::plugin_host::testing::RunCommand;

std::vector<std::filesystem::path> SharedObjects(const std::string& dir) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return out;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".so") out.push_back(entry.path());
  }
  return out;
}

// Names of the defined dynamic symbols ("addr type name" per line).
std::set<std::string> ExportedSymbols(const std::filesystem::path& so) {
  auto result = RunCommand(std::string(RIDGELINE_NM) + " -D --defined-only " +
                    Quote(so.string()));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  std::set<std::string> names;
  std::istringstream lines(result.output);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string addr, type, name;
    if (fields >> addr >> type >> name) names.insert(name);
  }
  return names;
}

TEST(ExportedSymbolsTest, FixturePluginsExportOnlyTheEntrySymbol) {
  const auto files = SharedObjects(RIDGELINE_FIXTURE_PLUGIN_DIR);
  ASSERT_EQ(files.size(), 28u);  // all fixtures built (tests/fixtures)
  for (const auto& so : files) {
    const std::set<std::string> symbols = ExportedSymbols(so);
    if (so.filename() == "libridgeline-fixture-no-entry.so") {
      // Its misspelt entry point is hidden by the version script too.
      EXPECT_TRUE(symbols.empty()) << so;
    } else {
      EXPECT_EQ(symbols, std::set<std::string>{"ridgeline_plugin_entry"}) << so;
    }
  }
}

TEST(ExportedSymbolsTest, InTreePluginsExportOnlyTheEntrySymbol) {
  const auto files = SharedObjects(RIDGELINE_BUILD_PLUGIN_DIR);
  if (files.empty()) {
    GTEST_SKIP() << "no in-tree plugins built in " << RIDGELINE_BUILD_PLUGIN_DIR;
  }
  for (const auto& so : files) {
    EXPECT_EQ(ExportedSymbols(so),
              std::set<std::string>{"ridgeline_plugin_entry"})
        << so;
  }
}

}  // namespace
}  // namespace ridgeline::plugin_host
