// Polling AnalysisOptions::should_stop from the engine's long loops, so an
// analysis that has become pointless (deadline passed, caller gone) frees
// its thread within a few steps. Internal to the engine.
#pragma once

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "ridgeline/engine/work.h"

namespace ridgeline::engine::internal {

// Asks `should_stop` on the first Tick and every kEvery-th after (one
// std::function call per kEvery steps keeps it off the per-step cost);
// once it said stop, every later Tick says so too. Not thread-safe: one per
// loop owner.
class StopPoll {
 public:
  static constexpr int64_t kEvery = 16;

  // Keeps a pointer to `should_stop` (empty: never stops).
  explicit StopPoll(const std::function<bool()>& should_stop)
      : fn_(should_stop ? &should_stop : nullptr) {}

  bool Tick() {
    if (fn_ == nullptr || stopped_) return stopped_;
    if (n_++ % kEvery == 0) stopped_ = (*fn_)();
    return stopped_;
  }
  bool stopped() const { return stopped_; }

 private:
  const std::function<bool()>* fn_;
  int64_t n_ = 0;
  bool stopped_ = false;
};

// What an analysis stopped by should_stop returns (public: work.h).
using ::ridgeline::engine::StoppedError;

// Asks once (between stages): true when should_stop says stop.
inline bool ShouldStopNow(const std::function<bool()>& should_stop) {
  return should_stop && should_stop();
}

}  // namespace ridgeline::engine::internal
