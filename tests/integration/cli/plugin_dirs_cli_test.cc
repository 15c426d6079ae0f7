// Where plugins come from (issue 20, item 8): --plugin-dir replaces the
// installed plugins, --extra-plugin-dir (repeatable or a comma list) loads
// more beside them, in the CLI and in the server; a folder someone named
// that is not there is an error naming it, not an empty catalog.
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server_process.h"

namespace ridgeline::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// A private folder (0700) holding a copy of one fixture plugin (0755): the
// loader refuses folders and files others can write.
class PluginFolder {
 public:
  explicit PluginFolder(const char* plugin) {
    char tmpl[] = "/tmp/ridgeline-plugins-XXXXXX";
    path_ = mkdtemp(tmpl);
    const fs::path to = path_ / fs::path(plugin).filename();
    fs::copy_file(plugin, to);
    fs::permissions(to, fs::perms::owner_all | fs::perms::group_read |
                            fs::perms::group_exec | fs::perms::others_read |
                            fs::perms::others_exec);
  }
  ~PluginFolder() { fs::remove_all(path_); }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

// The ids of `hardware --format csv` (first column, header dropped).
std::vector<std::string> Ids(const std::string& csv) {
  std::vector<std::string> ids;
  size_t start = csv.find('\n') + 1;
  while (start < csv.size()) {
    const size_t end = csv.find('\n', start);
    const std::string line = csv.substr(start, end - start);
    ids.push_back(line.substr(0, line.find(',')));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return ids;
}

bool Has(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

TEST(PluginDirsCliTest, NamedFolderThatIsNotThereIsAnError) {
  // It printed an empty table and exited 0.
  CliRun r = RunCliBinary({"hardware", "--plugin-dir", "/nonexistent"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_THAT(r.err, HasSubstr("--plugin-dir: plugin folder '/nonexistent' "
                               "does not exist or is not a directory"));
  r = RunCliBinary({"hardware", "--plugin-dir", RIDGELINE_TEST_PLUGIN_DIR,
                    "--extra-plugin-dir", "/nonexistent"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--extra-plugin-dir: plugin folder "
                               "'/nonexistent' does not exist"));
  // Every command that loads plugins in-process, not only the catalog.
  r = RunCliBinary({"analyze", "--plugin-dir", "/nonexistent", "--model",
                    "llama-3-8b", "--hardware", "nvidia-h100-sxm-80gb"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("'/nonexistent'"));
}

TEST(PluginDirsCliTest, PluginDirReplacesExtraPluginDirAdds) {
  PluginFolder basic(RIDGELINE_FIXTURE_BASIC);  // fixture-basic-a, -b
  PluginFolder acc16(RIDGELINE_FIXTURE_ACC16);  // fixture-acc16-a, -b
  CliRun only = RunCliBinary(
      {"hardware", "--plugin-dir", basic.path(), "--format", "csv"});
  ASSERT_EQ(only.exit_code, 0) << only.err;
  EXPECT_EQ(Ids(only.out),
            (std::vector<std::string>{"fixture-basic-a", "fixture-basic-b"}));

  // Repeated, and as a comma list: the same four extra parts beside the
  // in-tree ones.
  for (const std::vector<std::string>& extra :
       std::vector<std::vector<std::string>>{
           {"--extra-plugin-dir", basic.path(), "--extra-plugin-dir",
            acc16.path()},
           {"--extra-plugin-dir=" + basic.path() + "," + acc16.path()}}) {
    std::vector<std::string> args = {"hardware", "--plugin-dir",
                                     RIDGELINE_TEST_PLUGIN_DIR, "--format",
                                     "csv"};
    args.insert(args.end(), extra.begin(), extra.end());
    CliRun both = RunCliBinary(args);
    ASSERT_EQ(both.exit_code, 0) << both.err;
    const std::vector<std::string> ids = Ids(both.out);
    for (const char* id :
         {"fixture-basic-a", "fixture-basic-b", "fixture-acc16-a",
          "fixture-acc16-b", "nvidia-h100-sxm-80gb"}) {
      EXPECT_TRUE(Has(ids, id)) << id << "\n" << both.out;
    }
    EXPECT_THAT(both.err, Not(HasSubstr("refused")));
  }

  // The same folder twice: the first load wins, the second plugin is
  // refused by name and the catalog is unchanged.
  CliRun twice =
      RunCliBinary({"hardware", "--plugin-dir", basic.path(),
                    "--extra-plugin-dir", basic.path(), "--format", "csv"});
  ASSERT_EQ(twice.exit_code, 0) << twice.err;
  EXPECT_EQ(Ids(twice.out), Ids(only.out));
  EXPECT_THAT(twice.err, HasSubstr("duplicate platform id 'fixture-basic-a': "
                                   "already provided by " +
                                   basic.path()));
}

TEST(PluginDirsCliTest, ServerLoadsExtraFoldersAndRefusesMissingOnes) {
  PluginFolder basic(RIDGELINE_FIXTURE_BASIC);
  {
    ServerProcess server({"--extra-plugin-dir=" + basic.path()});
    ASSERT_TRUE(server.ok()) << server.error();
    ASSERT_TRUE(WaitServing(server.Channel(), std::chrono::seconds(30)));
    CliRun r = RunCliBinary(
        {"--server", server.address(), "hardware", "--format", "csv"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::vector<std::string> ids = Ids(r.out);
    EXPECT_TRUE(Has(ids, "fixture-basic-a")) << r.out;
    EXPECT_TRUE(Has(ids, "nvidia-h100-sxm-80gb")) << r.out;
  }
  // It used to start, report SERVING and serve an empty catalog.
  for (const char* flag :
       {"--plugin-dir=/nonexistent", "--extra-plugin-dir=/nonexistent"}) {
    std::string output;
    const int code = RunServerBinary(
        {"--listen=127.0.0.1:0", "--metrics-listen=off", flag}, &output);
    EXPECT_EQ(code, 1) << flag << "\n" << output;
    EXPECT_THAT(output, HasSubstr("plugin folder '/nonexistent' does not "
                                  "exist or is not a directory"));
    EXPECT_THAT(output, Not(HasSubstr("listening on")));
  }
}

}  // namespace
}  // namespace ridgeline::testing
