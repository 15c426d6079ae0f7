// Bounds on the streaming RPCs (Sweep, Explore, StepTimeStream; issue 14
// defect 3, issue 26 defect 2): how many of one method run at once, in total
// and per client address, and how long one may wait on a client that
// neither reads nor writes. Each stream's handler holds one of gRPC's
// synchronous threads (at most 256 in all), so the totals keep streams from
// taking every thread, and the per-client limit keeps one client from taking
// every slot. A Read or Write blocked past the idle timeout is cancelled by a
// watchdog thread, which frees the handler's thread instead of pinning it
// until the client goes away. One StreamLimiter per method. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/server_context.h"

namespace ridgeline::service {

struct StreamLimits {
  std::string method = "Sweep";        // names the streams in messages
  int64_t max_streams = 64;            // in total
  int64_t max_streams_per_client = 8;  // per client IP address
  double idle_timeout_seconds = 30;    // one Read or Write may block this long
  // The flags that set the three numbers, named in RESOURCE_EXHAUSTED and
  // in the log.
  std::string max_streams_flag = "--max-sweep-streams";
  std::string per_client_flag = "--max-sweep-streams-per-client";
  std::string idle_timeout_flag = "--sweep-write-timeout-seconds";
};

class StreamLimiter {
 public:
  // `on_timeout` (may be empty) is called once per stream the watchdog
  // cancels, with the client's address.
  StreamLimiter(StreamLimits limits,
                std::function<void(const std::string& client)> on_timeout);
  ~StreamLimiter();  // stops the watchdog

  // One admitted stream; releases its slot when destroyed.
  class Stream {
   public:
    Stream(Stream&& other) noexcept;
    Stream& operator=(Stream&&) = delete;
    ~Stream();
    // Bracket each blocking Read or Write, so the watchdog can time it out.
    void BeginWait();
    void EndWait();

   private:
    friend class StreamLimiter;
    Stream(StreamLimiter* owner, uint64_t id) : owner_(owner), id_(id) {}
    StreamLimiter* owner_;
    uint64_t id_;
  };

  // RESOURCE_EXHAUSTED naming the limit (and its flag) when full.
  absl::StatusOr<Stream> Admit(grpc::ServerContextBase* ctx);

  const StreamLimits& limits() const { return limits_; }
  int64_t active() const;

  // "ipv4:127.0.0.1:5000" -> "ipv4:127.0.0.1"; "ipv6:[::1]:5000" ->
  // "ipv6:[::1]".
  static std::string ClientOf(const std::string& peer);

 private:
  struct Entry {
    grpc::ServerContextBase* ctx;
    std::string client;
    std::chrono::steady_clock::time_point wait_since;
    bool waiting = false;
    bool cancelled = false;
  };
  void Release(uint64_t id);
  void Watch();

  const StreamLimits limits_;
  const std::function<void(const std::string&)> on_timeout_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, Entry> streams_;          // guarded by mu_
  std::map<std::string, int64_t> per_client_;  // guarded by mu_
  uint64_t next_id_ = 1;                       // guarded by mu_
  bool stopping_ = false;                      // guarded by mu_
  std::thread watchdog_;
};

// Brackets one blocking Read or Write of `stream` (which may be null: no
// limiter) with BeginWait/EndWait.
template <typename Op>
auto Waiting(StreamLimiter::Stream* stream, Op op) {
  if (stream != nullptr) stream->BeginWait();
  auto result = op();
  if (stream != nullptr) stream->EndWait();
  return result;
}

}  // namespace ridgeline::service
