// Bounds on Sweep streams (issue 14, defect 3): how many run at once, in
// total and per client address, and how long one may wait for a client that
// stopped reading. A stalled write is cancelled by a watchdog thread, which
// frees the handler's thread within the timeout instead of pinning it until
// the client goes away. Thread-safe.
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

struct SweepStreamLimits {
  int64_t max_streams = 64;             // in total
  int64_t max_streams_per_client = 8;   // per client IP address
  double write_timeout_seconds = 30;    // one point's write may block this long
};

class SweepStreams {
 public:
  // `on_timeout` (may be empty) is called once per stream the watchdog
  // cancels, with the client's address.
  SweepStreams(SweepStreamLimits limits,
               std::function<void(const std::string& client)> on_timeout);
  ~SweepStreams();  // stops the watchdog

  // One admitted stream; releases its slot when destroyed.
  class Stream {
   public:
    Stream(Stream&& other) noexcept;
    Stream& operator=(Stream&&) = delete;
    ~Stream();
    // Bracket each blocking write, so the watchdog can time it out.
    void BeginWrite();
    void EndWrite();

   private:
    friend class SweepStreams;
    Stream(SweepStreams* owner, uint64_t id) : owner_(owner), id_(id) {}
    SweepStreams* owner_;
    uint64_t id_;
  };

  // RESOURCE_EXHAUSTED naming the limit (and its flag) when full.
  absl::StatusOr<Stream> Admit(grpc::ServerContext* ctx);

  int64_t active() const;

  // "ipv4:127.0.0.1:5000" -> "ipv4:127.0.0.1"; "ipv6:[::1]:5000" ->
  // "ipv6:[::1]".
  static std::string ClientOf(const std::string& peer);

 private:
  struct Entry {
    grpc::ServerContext* ctx;
    std::string client;
    std::chrono::steady_clock::time_point write_since;
    bool writing = false;
    bool cancelled = false;
  };
  void Release(uint64_t id);
  void Watch();

  const SweepStreamLimits limits_;
  const std::function<void(const std::string&)> on_timeout_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, Entry> streams_;          // guarded by mu_
  std::map<std::string, int64_t> per_client_;  // guarded by mu_
  uint64_t next_id_ = 1;                       // guarded by mu_
  bool stopping_ = false;                      // guarded by mu_
  std::thread watchdog_;
};

}  // namespace ridgeline::service
