#include "ridgeline/plugin_host/isolated_check.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ridgeline/engine/hardware.h"
#include "ridgeline/plugin_host/registry.h"

extern char** environ;

namespace ridgeline::plugin_host {

std::string CheckPluginInChild(const std::filesystem::path& plugin,
                               const ChildCheck& check) {
  const std::string exe = check.exe.string();
  const std::string flag = absl::StrCat(kCheckPluginFlag, plugin.string());
  std::vector<char*> argv = {const_cast<char*>(exe.c_str()),
                             const_cast<char*>(flag.c_str()), nullptr};
  // The child's own output would repeat what the parent logs.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null",
                                   O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null",
                                   O_WRONLY, 0);
  // The server blocks SIGTERM/SIGINT in every thread; the child must not
  // inherit that mask, or a kill at timeout could be delayed.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  const int err = posix_spawn(&pid, exe.c_str(), &actions, &attr, argv.data(),
                              environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (err != 0) {
    return absl::StrCat("could not start the isolated check (", exe,
                        "): ", std::strerror(err));
  }
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(check.timeout_seconds));
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0) return "";  // reaped elsewhere: nothing to report
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return absl::StrCat(
          "did not finish loading and checking within ", check.timeout_seconds,
          " s in an isolated child process (a hang in its entry point, init() "
          "or efficiency hook?); killed, not loaded");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return absl::StrCat("crashed with signal ", sig, " (", strsignal(sig),
                        ") while loading and checking it in an isolated child "
                        "process (entry point, init() or efficiency hook); "
                        "not loaded");
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    return absl::StrCat("the isolated check exited with code ",
                        WEXITSTATUS(status), "; not loaded");
  }
  return "";
}

int RunPluginCheckChild(const std::filesystem::path& plugin) {
  std::shared_ptr<const HardwareRegistry> registry =
      HardwareRegistry::LoadFiles({plugin}, LoadLog::kNone);
  // The hook on every op class and every math type the part executes, at a
  // few sizes: what analyses will ask of it.
  for (const engine::Hardware& hw : registry->platforms()) {
    if (!hw.efficiency_hook) continue;
    for (int m = 0; m < engine::kMathTypeCount; ++m) {
      if (!hw.peak_ops_per_second[m].has_value()) continue;
      for (engine::OpClass c :
           {engine::OpClass::kGemm, engine::OpClass::kGemv,
            engine::OpClass::kAttention, engine::OpClass::kElementwise}) {
        for (double tokens : {1.0, 128.0, 8192.0}) {
          engine::OpShape shape{c, static_cast<engine::MathType>(m),
                                static_cast<int64_t>(tokens), tokens * 1e9,
                                tokens * 1e6};
          (void)hw.efficiency_hook(shape);
        }
      }
    }
  }
  return 0;
}

}  // namespace ridgeline::plugin_host
