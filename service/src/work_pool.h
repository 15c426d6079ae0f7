// A fixed set of worker threads with a bounded queue, for the unary calls
// that run the engine. gRPC's callback threads only admit a call and hand it
// here, so they stay free for health checks and cheap calls however long an
// analysis takes (issue 14, defect 2). Thread-safe.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ridgeline::service {

class WorkPool {
 public:
  // `threads` >= 1 workers; at most `max_queued` tasks wait for one.
  WorkPool(int threads, size_t max_queued);
  // Runs every queued task, then joins the workers.
  ~WorkPool();
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  // Queues `task`; false (and `task` is not run) when the queue is full.
  bool TrySubmit(std::function<void()> task);

  int threads() const { return static_cast<int>(workers_.size()); }
  size_t max_queued() const { return max_queued_; }

 private:
  void Run();

  const size_t max_queued_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  std::vector<std::thread> workers_;
};

}  // namespace ridgeline::service
