// Relays a streaming Backend call to an HTTP response: the call runs once,
// on a thread of its own, and its items (already serialized lines) wait in a
// small bounded queue for the writer. The frontend waits for the first item
// or the end before sending headers, so a request that fails validation
// still gets its HTTP status, without computing any item twice.
// The consumer may block (Next) or poll (TryNext, with a wakeup callback for
// an event-driven writer). Thread-safe: one producer (the call), one
// consumer (the HTTP writer).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"

namespace ridgeline::service {

class StreamRelay {
 public:
  // Emits one line; false means stop (the consumer cancelled).
  using Emit = std::function<bool(std::string line)>;
  // Starts `produce` on a new thread. Its emit blocks while `capacity`
  // lines wait, so a slow client holds back the computation instead of
  // memory growing.
  StreamRelay(size_t capacity,
              std::function<absl::Status(const Emit&)> produce);
  // Cancels and joins the call (returns once it has seen the cancellation,
  // within one item).
  ~StreamRelay();
  StreamRelay(const StreamRelay&) = delete;
  StreamRelay& operator=(const StreamRelay&) = delete;

  // Blocks until the first line is queued or the call has ended. Returns
  // the call's status when it ended before emitting anything, else OK.
  absl::Status WaitFirst();
  // The next line (blocking); false once the call has ended and every line
  // was taken: status() is then final.
  bool Next(std::string* line);
  // Non-blocking Next: true with a line; false when none is queued, with
  // *ended true once the call has ended and every line was taken.
  bool TryNext(std::string* line, bool* ended);
  // `wake` runs on the producer's thread (no lock held) after each queued
  // line and when the call ends; set it before polling.
  void SetWakeup(std::function<void()> wake);
  // The call's status; meaningful after Next returned false.
  absl::Status status();
  // Every later emit returns false; a blocked emit wakes.
  void Cancel();

 private:
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> lines_;  // guarded by mu_
  bool done_ = false;              // guarded by mu_
  bool cancelled_ = false;         // guarded by mu_
  absl::Status status_;            // guarded by mu_; set with done_
  std::function<void()> wake_;     // guarded by mu_
  std::thread thread_;
};

}  // namespace ridgeline::service
