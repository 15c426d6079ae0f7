#include "ridgeline/plugin_host/hosted_plugin.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hook_cache.h"
#include "host_wire.h"

extern char** environ;

namespace ridgeline::plugin_host {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

Clock::time_point After(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(seconds));
}

// One plugin's host process and the parent's side of its socket. The
// mutex serialises calls on the socket (and restarts); cache hits never
// take it.
class PluginHost {
 public:
  PluginHost(fs::path plugin, HostOptions options)
      : plugin_(std::move(plugin)),
        name_(plugin_.filename().string()),
        options_(std::move(options)),
        cache_(options_.cache_entries) {}
  ~PluginHost() {
    std::lock_guard<std::mutex> lock(mu_);
    StopLocked();
  }
  PluginHost(const PluginHost&) = delete;
  PluginHost& operator=(const PluginHost&) = delete;

  // The first load; the host then keeps running only if the plugin has a
  // hook.
  absl::StatusOr<wire::LoadReply> Start() {
    std::lock_guard<std::mutex> lock(mu_);
    absl::StatusOr<wire::LoadReply> reply = LoadLocked();
    if (reply.ok()) {
      platform_count_ = reply->platforms.size();
      if (!reply->ok || !reply->has_hook) StopLocked();
    }
    return reply;
  }

  std::optional<engine::OpEfficiency> Efficiency(uint32_t index,
                                                 const engine::OpShape& shape) {
    uint32_t& near = NearFor(index, shape);
    HookAnswer answer;
    if (!cache_.Find(index, shape, &answer, &near)) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!cache_.Find(index, shape, &answer, &near)) {
        absl::StatusOr<HookAnswer> fresh = CallLocked(index, shape);
        if (!fresh.ok()) {
          ReportHookFault(name_, "host_failed", fresh.status().message());
          return std::nullopt;
        }
        answer = *std::move(fresh);
        if (const uint32_t e = cache_.Insert(index, shape, answer);
            e != HookCache::kNoEntry) {
          near = e;
        }
      }
    }
    if (!answer.fault.ok()) ReportHookFault(name_, answer.fault);
    return answer.value;
  }

  // Where this thread's last answer of this op (same platform, class, math
  // and tokens: its FLOPs and bytes grow step after step) was in the cache
  // (HookCache::Find's `near`). A hint only: a stale one is a miss there.
  uint32_t& NearFor(uint32_t index, const engine::OpShape& shape) {
    struct Stream {
      const PluginHost* host = nullptr;
      uint64_t key = 0;  // platform, class, math
      int64_t tokens = -1;
      uint32_t near = HookCache::kNoEntry;
    };
    static thread_local std::array<Stream, 8> streams;
    const uint64_t key = uint64_t{index} << 16 |
                         uint64_t{static_cast<uint8_t>(shape.op_class)} << 8 |
                         static_cast<uint8_t>(shape.math);
    Stream& st = streams[(key ^ static_cast<uint64_t>(shape.tokens)) & 7];
    if (st.host != this || st.key != key || st.tokens != shape.tokens) {
      st = Stream{this, key, shape.tokens, HookCache::kNoEntry};
    }
    return st.near;
  }

  absl::Status Health() const {
    if (!failed_.load(std::memory_order_acquire)) return absl::OkStatus();
    return absl::UnavailableError(absl::StrCat(
        "plugin ", name_, " failed: its plugin-host process failed ",
        options_.max_failures, " times in a row (last: ", failure_,
        "); its platforms stay unavailable until the server restarts"));
  }

 private:
  // Starts the host and reads its load reply (within the load timeout).
  absl::StatusOr<wire::LoadReply> LoadLocked() {
    StopLocked();
    if (absl::Status s = SpawnLocked(); !s.ok()) return s;
    absl::StatusOr<std::string> frame = wire::ReadFrame(
        fd_, After(options_.load_timeout_seconds), options_.cancelled);
    if (!frame.ok()) {
      return absl::FailedPreconditionError(
          DescribeLocked(frame.status(), /*loading=*/true));
    }
    absl::StatusOr<wire::LoadReply> reply = wire::DecodeLoadReply(*frame);
    if (!reply.ok()) {
      StopLocked();
      return absl::FailedPreconditionError(reply.status().message());
    }
    return reply;
  }

  // One hook call: on the running host, restarting it after a crash or a
  // timeout, until it answers or has failed max_failures times in a row.
  absl::StatusOr<HookAnswer> CallLocked(uint32_t index,
                                    const engine::OpShape& shape) {
    for (;;) {
      if (failed_.load(std::memory_order_relaxed)) return Health();
      if (fd_ < 0) {
        absl::StatusOr<wire::LoadReply> reply = LoadLocked();
        if (reply.ok() && (!reply->ok || !reply->has_hook ||
                           reply->platforms.size() != platform_count_)) {
          reply = absl::FailedPreconditionError(
              reply->ok ? "the restarted plugin describes other platforms"
                        : reply->reason);
        }
        if (!reply.ok()) {
          FailLocked(absl::StrCat("restart: ", reply.status().message()));
          continue;
        }
      }
      wire::HookRequest request{index, shape};
      absl::Status sent =
          wire::WriteFrame(fd_, wire::EncodeHookRequest(request));
      absl::StatusOr<std::string> frame =
          sent.ok() ? wire::ReadFrame(fd_, After(options_.call_timeout_seconds))
                    : absl::StatusOr<std::string>(sent);
      absl::StatusOr<wire::HookReply> reply =
          frame.ok() ? wire::DecodeHookReply(*frame)
                     : absl::StatusOr<wire::HookReply>(frame.status());
      if (!reply.ok()) {
        FailLocked(frame.ok() ? std::string(reply.status().message())
                              : DescribeLocked(frame.status(), false));
        StopLocked();
        continue;
      }
      failures_ = 0;
      HookAnswer answer;
      if (reply->code != 0) {
        answer.fault =
            reply->code > 0 && reply->code <= 16
                ? absl::Status(static_cast<absl::StatusCode>(reply->code),
                               reply->message)
                : absl::InternalError(
                      absl::StrCat("plugin returned an error object with code ",
                                   reply->code, ": ", reply->message));
        return answer;
      }
      absl::StatusOr<std::optional<engine::OpEfficiency>> checked =
          CheckHookAnswer(reply->compute, reply->memory);
      if (checked.ok()) {
        answer.value = *checked;
      } else {
        answer.fault = checked.status();
      }
      return answer;
    }
  }

  void FailLocked(const std::string& reason) {
    ++failures_;
    const bool last = failures_ >= options_.max_failures;
    std::fprintf(
        stderr, "ridgeline plugin: host of %s failed (%d of %d): %s; %s\n",
        name_.c_str(), failures_, options_.max_failures, reason.c_str(),
        last ? "plugin marked failed, its platforms answer "
               "UNAVAILABLE"
             : "restarting it");
    if (last) {
      failure_ = reason;  // written once, before failed_ is published
      failed_.store(true, std::memory_order_release);
    }
  }

  absl::Status SpawnLocked() {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("could not start the plugin-host process: socketpair: ",
                       std::strerror(errno)));
    }
    const std::string exe = options_.exe.string();
    const std::string flag = absl::StrCat(kPluginHostFlag, plugin_.string());
    std::vector<char*> argv = {const_cast<char*>(exe.c_str()),
                               const_cast<char*>(flag.c_str()), nullptr};
    // The child talks on fd 0; its stdout is not the server's (tests and
    // scripts parse that), its stderr is, for the plugin's own messages.
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, sv[1], STDIN_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null",
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
    const int err =
        posix_spawn(&pid, exe.c_str(), &actions, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(sv[1]);
    if (err != 0) {
      ::close(sv[0]);
      return absl::FailedPreconditionError(
          absl::StrCat("could not start the plugin-host process (", exe,
                       "): ", std::strerror(err)));
    }
    pid_ = pid;
    fd_ = sv[0];
    return absl::OkStatus();
  }

  // Why the host stopped answering; the host is gone afterwards.
  std::string DescribeLocked(const absl::Status& why, bool loading) {
    const std::string during =
        loading ? "while loading and checking it in its plugin-host process "
                  "(entry point, init() or efficiency hook)"
                : "in its efficiency hook, in its plugin-host process";
    std::string what;
    if (absl::IsDeadlineExceeded(why)) {
      what = loading
                 ? absl::StrCat("did not finish loading and checking within ",
                                options_.load_timeout_seconds,
                                " s in its plugin-host process (a hang in its "
                                "entry point, init() or efficiency hook?); "
                                "killed")
                 : absl::StrCat("its efficiency hook did not answer within ",
                                options_.call_timeout_seconds,
                                " s; its plugin-host process was killed");
    } else if (absl::IsCancelled(why)) {
      what = "the server is stopping; its plugin-host process was killed";
    } else if (absl::IsUnavailable(why)) {
      // The socket closed: the host died or is dying; give it a moment to
      // be reaped so the signal can be named.
      int status = 0;
      pid_t r = 0;
      for (int i = 0; i < 200 && r == 0; ++i) {
        r = ::waitpid(pid_, &status, WNOHANG);
        if (r == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      if (r == pid_) {
        pid_ = -1;
        if (WIFSIGNALED(status)) {
          const int sig = WTERMSIG(status);
          what = absl::StrCat("crashed with signal ", sig, " (", strsignal(sig),
                              ") ", during);
        } else {
          what = absl::StrCat("its plugin-host process exited with code ",
                              WEXITSTATUS(status), " ", during);
        }
      } else {
        what = absl::StrCat("its plugin-host process closed its channel ",
                            during, "; killed");
      }
    } else {
      what = absl::StrCat("its plugin-host process failed: ", why.message());
    }
    StopLocked();
    return loading ? absl::StrCat(what, "; not loaded") : what;
  }

  // Closes the socket (a healthy host exits on that) and reaps the host,
  // killing it if it does not exit at once.
  void StopLocked() {
    if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
    if (pid_ > 0) {
      int status = 0;
      pid_t r = 0;
      for (int i = 0; i < 20 && r == 0; ++i) {
        r = ::waitpid(pid_, &status, WNOHANG);
        if (r == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      if (r == 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
      }
      pid_ = -1;
    }
  }

  const fs::path plugin_;
  const std::string name_;  // file name: what logs and metrics show
  const HostOptions options_;
  HookCache cache_;
  std::mutex mu_;
  pid_t pid_ = -1;             // guarded by mu_
  int fd_ = -1;                // guarded by mu_
  int failures_ = 0;           // in a row; guarded by mu_
  size_t platform_count_ = 0;  // from the first load
  std::atomic<bool> failed_{false};
  std::string failure_;  // set once before failed_ turns true
};

// The plugin-host child must not hold the server's sockets or files (a
// listening port would outlive a crashed server).
void CloseInheritedFds() {
  std::vector<int> fds;
  if (DIR* d = ::opendir("/proc/self/fd"); d != nullptr) {
    while (dirent* e = ::readdir(d)) {
      const int fd = std::atoi(e->d_name);
      if (fd > STDERR_FILENO && fd != ::dirfd(d)) fds.push_back(fd);
    }
    ::closedir(d);
  }
  for (int fd : fds) ::close(fd);
}

// What analyses will ask of the hook: every op class and every math type
// the part executes, at a few sizes. A hook that crashes or hangs here
// refuses the plugin at load.
void ExerciseHook(const PluginLibrary& lib, size_t index,
                  const engine::Hardware& hw) {
  for (int m = 0; m < engine::kMathTypeCount; ++m) {
    if (!hw.peak_ops_per_second[m].has_value()) continue;
    for (engine::OpClass c :
         {engine::OpClass::kGemm, engine::OpClass::kGemv,
          engine::OpClass::kAttention, engine::OpClass::kElementwise}) {
      for (double tokens : {1.0, 128.0, 8192.0}) {
        engine::OpShape shape{c, static_cast<engine::MathType>(m),
                              static_cast<int64_t>(tokens), tokens * 1e9,
                              tokens * 1e6};
        (void)lib.CallEfficiency(index, shape);
      }
    }
  }
}

}  // namespace

absl::Status ReadPluginHosted(const fs::path& plugin,
                              const HostOptions& options, PluginContents* out) {
  auto host = std::make_shared<PluginHost>(plugin, options);
  absl::StatusOr<wire::LoadReply> reply = host->Start();
  if (!reply.ok()) return reply.status();
  out->family = reply->family;
  out->plugin_version = reply->plugin_version;
  if (!reply->ok) return absl::FailedPreconditionError(reply->reason);
  out->platforms = std::move(reply->platforms);
  if (reply->has_hook) {
    for (size_t i = 0; i < out->platforms.size(); ++i) {
      out->platforms[i].efficiency_hook =
          [host, i = static_cast<uint32_t>(i)](const engine::OpShape& shape) {
            return host->Efficiency(i, shape);
          };
    }
    out->health = [host] { return host->Health(); };
  }
  return absl::OkStatus();
}

int RunPluginHostChild(const fs::path& plugin) {
  CloseInheritedFds();
  constexpr int kFd = STDIN_FILENO;
  PluginContents contents;
  const absl::Status read = ReadPluginInProcess(plugin, &contents);
  wire::LoadReply reply;
  reply.ok = read.ok();
  reply.family = contents.family;
  reply.plugin_version = contents.plugin_version;
  reply.reason = std::string(read.message());
  absl::StatusOr<PluginLibrary> lib = absl::UnknownError("not opened");
  if (read.ok()) {
    lib = PluginLibrary::Open(plugin);  // cached: the same table
    reply.has_hook = lib.ok() && lib->table().efficiency != nullptr;
    if (reply.has_hook) {
      for (size_t i = 0; i < contents.platforms.size(); ++i) {
        ExerciseHook(*lib, i, contents.platforms[i]);
      }
    }
    reply.platforms = std::move(contents.platforms);
  }
  if (!wire::WriteFrame(kFd, wire::EncodeLoadReply(reply)).ok()) return 1;
  if (!reply.ok || !reply.has_hook) return 0;
  const size_t count = reply.platforms.size();
  for (;;) {
    absl::StatusOr<std::string> frame = wire::ReadFrame(kFd, std::nullopt);
    if (!frame.ok()) return 0;  // the server closed the socket
    absl::StatusOr<wire::HookRequest> request = wire::DecodeHookRequest(*frame);
    if (!request.ok()) return 3;
    wire::HookReply answer;
    if (request->index >= count) {
      answer.code = static_cast<int32_t>(absl::StatusCode::kOutOfRange);
      answer.message = absl::StrCat("platform index ", request->index,
                                    " out of range [0, ", count, ")");
    } else {
      absl::StatusOr<std::optional<engine::OpEfficiency>> r =
          lib->CallEfficiency(request->index, request->shape);
      if (!r.ok()) {
        answer.code = static_cast<int32_t>(r.status().code());
        answer.message = std::string(r.status().message());
      } else if (r->has_value()) {
        answer.compute = (*r)->compute;
        answer.memory = (*r)->memory;
      }
    }
    if (!wire::WriteFrame(kFd, wire::EncodeHookReply(answer)).ok()) return 0;
  }
}

}  // namespace ridgeline::plugin_host
