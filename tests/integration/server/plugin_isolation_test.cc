// Issue 26, defects 7 and 8, against the real ridgeline-server on
// 127.0.0.1: plugins that pass the turn-2 isolated check (they detect it
// from /proc/self/cmdline) and then crash or hang anywhere else, and plugin
// folders with bad entries. Each evading plugin has its own folder beside a
// good "neighbour" plugin. What must hold: the server keeps serving the
// neighbour, the evader is refused at load with a reason or its platforms
// answer UNAVAILABLE naming it, and SIGTERM ends the server within the grace
// period.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ridgeline/v1/ridgeline.grpc.pb.h"
#include "server_fixture.h"
#include "server_process.h"

namespace ridgeline::testing {
namespace {

namespace fs = std::filesystem;
using ::grpc::StatusCode;
using ::testing::HasSubstr;

constexpr int kGraceSeconds = 2;

std::string EvadeDir(const std::string& fault) {
  return absl::StrCat(RIDGELINE_EVADE_PLUGIN_ROOT, "/", fault, "-plugins");
}

std::string PluginFile(const std::string& family) {
  return absl::StrCat("libridgeline-fixture-", family, ".so");
}

class PluginIsolationTest : public ServingTest {
 protected:
  // ListHardware's plugin outcomes: file name -> reason ("" when loaded).
  std::map<std::string, std::string> Outcomes() {
    grpc::ClientContext ctx;
    ctx.set_deadline(In(std::chrono::seconds(10)));
    v1::ListHardwareResponse resp;
    grpc::Status s = stub_->ListHardware(&ctx, {}, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    std::map<std::string, std::string> out;
    for (const v1::PluginInfo& p : resp.plugins()) {
      out[p.path()] = p.loaded() ? "" : p.reason();
      if (!p.loaded()) {
        EXPECT_FALSE(p.reason().empty()) << p.path();
      }
    }
    return out;
  }

  grpc::Status AnalyzeOn(const std::string& platform_id) {
    return Analyze(Llama2(platform_id), std::chrono::seconds(30));
  }

  // SIGTERM must end the server within the grace period (plus scheduling
  // slack, scaled under sanitizers).
  // The test's own channel is closed first: an idle client connection
  // delaying exit is issue 26's defect 9, not this one.
  void ExpectSigtermExitsWithinGrace() {
    stub_.reset();
    channel_.reset();
    const auto start = std::chrono::steady_clock::now();
    server_->Signal(SIGTERM);
    std::optional<int> code = server_->WaitExit(
        std::chrono::seconds(kGraceSeconds) + Scaled(std::chrono::seconds(1)));
    ASSERT_TRUE(code.has_value())
        << "still running " << kGraceSeconds << " s after SIGTERM";
    EXPECT_EQ(*code, 0);
    EXPECT_LT(
        std::chrono::steady_clock::now() - start,
        std::chrono::seconds(kGraceSeconds) + Scaled(std::chrono::seconds(1)));
  }

  // The neighbour in every folder: served, with its hook, by its own host.
  void ExpectNeighbourServes(const std::string& fault) {
    EXPECT_EQ(Outcomes()[PluginFile(fault + "-neighbour")], "");
    grpc::Status s = AnalyzeOn(absl::StrCat("fixture-", fault, "-neighbour-a"));
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_TRUE(HealthCheck(channel_, std::chrono::seconds(5)).ok());
  }
};

// Before: the evader passed the check, then segfaulted in init() inside the
// server, which died with it.
TEST_F(PluginIsolationTest, EvaderCrashingInInitIsRefusedAtLoad) {
  StartServing({"--plugin-dir=" + EvadeDir("evade-segv-init"),
                absl::StrCat("--shutdown-grace-seconds=", kGraceSeconds)});
  EXPECT_THAT(Outcomes()[PluginFile("evade-segv-init")],
              HasSubstr("crashed with signal 11"));
  grpc::Status s = AnalyzeOn("fixture-evade-segv-init-a");
  EXPECT_EQ(s.error_code(), StatusCode::NOT_FOUND) << s.error_message();
  ExpectNeighbourServes("evade-segv-init");
  ExpectSigtermExitsWithinGrace();
}

// Before: the first analysis on the evader's platform killed the server.
// Its host exercises the hook at load, so it is refused there.
TEST_F(PluginIsolationTest, EvaderCrashingInItsHookIsRefusedAtLoad) {
  StartServing({"--plugin-dir=" + EvadeDir("evade-segv-hook"),
                absl::StrCat("--shutdown-grace-seconds=", kGraceSeconds)});
  EXPECT_THAT(Outcomes()[PluginFile("evade-segv-hook")],
              HasSubstr("crashed with signal 11"));
  ExpectNeighbourServes("evade-segv-hook");
  ExpectSigtermExitsWithinGrace();
}

// A hook that also passes the load-time exercise and crashes only on an
// analysis' shapes: its host is restarted, fails again, and the plugin is
// marked failed. Its platforms then answer UNAVAILABLE naming it; the
// server and the neighbour keep serving.
TEST_F(PluginIsolationTest, EvaderCrashingLateInItsHookIsMarkedFailed) {
  StartServing({"--plugin-dir=" + EvadeDir("evade-segv-late-hook"),
                absl::StrCat("--shutdown-grace-seconds=", kGraceSeconds)});
  const std::string plugin = PluginFile("evade-segv-late-hook");
  EXPECT_EQ(Outcomes()[plugin], "");
  // The analysis during which the host dies finishes on engine defaults
  // (counted as host_failed hook faults); from then on the plugin is failed.
  (void)AnalyzeOn("fixture-evade-segv-late-hook-a");
  EXPECT_GE(Metric(*server_, "ridgeline_plugin_hook_faults_total",
                   {"plugin=\"" + plugin + "\"", "kind=\"host_failed\""}),
            1);
  for (const char* id :
       {"fixture-evade-segv-late-hook-a", "fixture-evade-segv-late-hook-b"}) {
    grpc::Status s = AnalyzeOn(id);
    EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << id;
    EXPECT_THAT(s.error_message(), HasSubstr(plugin));
    EXPECT_THAT(s.error_message(), HasSubstr("crashed with signal 11"));
  }
  ExpectNeighbourServes("evade-segv-late-hook");
  ExpectSigtermExitsWithinGrace();
}

// Before: the evader hung in init() inside the server, which stayed
// NOT_SERVING. Now its host is killed at the load timeout.
TEST_F(PluginIsolationTest, EvaderHangingInInitIsRefusedAtTheTimeout) {
  StartServing({"--plugin-dir=" + EvadeDir("evade-hang-init"),
                "--plugin-check-timeout-seconds=1",
                absl::StrCat("--shutdown-grace-seconds=", kGraceSeconds)});
  EXPECT_THAT(Outcomes()[PluginFile("evade-hang-init")],
              HasSubstr("did not finish loading and checking within 1 s"));
  ExpectNeighbourServes("evade-hang-init");
  ExpectSigtermExitsWithinGrace();
}

// Before: SIGTERM during that hang never ended the process (alive at 90 s).
// Now the load is cancelled and the server exits within the grace period,
// even with a load timeout far beyond it.
TEST_F(PluginIsolationTest, SigtermEndsAServerWhosePluginHangsInInit) {
  server_ = std::make_unique<ServerProcess>(std::vector<std::string>{
      "--plugin-dir=" + EvadeDir("evade-hang-init"),
      "--plugin-check-timeout-seconds=600",
      absl::StrCat("--shutdown-grace-seconds=", kGraceSeconds)});
  ASSERT_TRUE(server_->ok()) << server_->error();
  channel_ = server_->Channel();
  // The hosts are started right after the ports are printed; give them a
  // moment to be inside init().
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(HealthCheck(channel_, std::chrono::seconds(2)).ok());
  ExpectSigtermExitsWithinGrace();
}

// Defect 8: a folder of its own (mode 0755) holding `entries`.
class PluginFolderTest : public PluginIsolationTest {
 protected:
  void SetUp() override {
    dir_ = fs::path(RIDGELINE_TEST_TMP_DIR) /
           absl::StrCat(
               ::testing::UnitTest::GetInstance()->current_test_info()->name(),
               "-", ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::permissions(dir_, fs::perms(0755));
  }
  void TearDown() override {
    server_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // The good fixture plugin, copied in.
  void AddBasic() {
    fs::copy_file(fs::path(RIDGELINE_FIXTURE_PLUGIN_DIR) / PluginFile("basic"),
                  dir_ / PluginFile("basic"));
  }
  fs::path dir_;
};

// Before: one dangling and one looping *.so link made the folder unreadable
// ("cannot list plugin directory"): 0 plugins, yet SERVING.
TEST_F(PluginFolderTest, DanglingAndLoopingLinksAreSkippedAndTheRestLoad) {
  AddBasic();
  fs::create_symlink(dir_ / "gone.so", dir_ / "dangling.so");
  fs::create_symlink(dir_ / "loop.so", dir_ / "loop.so");
  StartServing({"--plugin-dir=" + dir_.string()});
  std::map<std::string, std::string> outcomes = Outcomes();
  EXPECT_EQ(outcomes[PluginFile("basic")], "");
  EXPECT_THAT(outcomes["dangling.so"], HasSubstr("dangling symbolic link"));
  EXPECT_THAT(outcomes["loop.so"], HasSubstr("symbolic link that loops"));
  grpc::Status s = AnalyzeOn("fixture-basic-a");
  EXPECT_TRUE(s.ok()) << s.error_message();
}

// Readiness needs a platform: a folder whose only entries are bad links
// loads nothing, so health stays NOT_SERVING and /readyz answers 503 (the
// body says why), while ListHardware reports the refusals.
TEST_F(PluginFolderTest, NoLoadedPlatformMeansNotReady) {
  fs::create_symlink(dir_ / "gone.so", dir_ / "dangling.so");
  fs::create_symlink(dir_ / "loop.so", dir_ / "loop.so");
  server_ = std::make_unique<ServerProcess>(std::vector<std::string>{
      "--plugin-dir=" + dir_.string(), "--http-listen=127.0.0.1:0"});
  ASSERT_TRUE(server_->ok()) << server_->error();
  channel_ = server_->Channel();
  stub_ = v1::RidgelineService::NewStub(channel_);
  // Loading is done once ListHardware answers (it needs the registry).
  bool listed = false;
  for (int i = 0; i < 200 && !listed; ++i) {
    grpc::ClientContext ctx;
    ctx.set_deadline(In(std::chrono::seconds(2)));
    v1::ListHardwareResponse resp;
    listed = stub_->ListHardware(&ctx, {}, &resp).ok();
    if (listed) {
      EXPECT_EQ(resp.plugins_size(), 2);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ASSERT_TRUE(listed);
  EXPECT_FALSE(HealthCheck(channel_, std::chrono::seconds(2)).ok());
  EXPECT_THAT(HttpGet(server_->http_port(), "/readyz"),
              HasSubstr("not ready: no hardware platform"));
}

}  // namespace
}  // namespace ridgeline::testing
