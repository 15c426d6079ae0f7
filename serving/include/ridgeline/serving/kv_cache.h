// The KV block manager of one replica (vLLM's KVCacheManager): paged blocks
// over the KV capacity the memory tiers leave (capacity.h), allocated per
// request and freed when it leaves, with the usage integral the results
// report. Today a request reserves its whole life (prompt + generated - 1
// tokens, in blocks) at admission, so nothing is ever preempted; prefix
// reuse and offload tiers belong here next. Thread-compatible.
#pragma once

#include <cstdint>

namespace ridgeline::serving {

class KvBlockCache {
 public:
  // capacity_tokens and block_size >= 1 (ValidateSimulationConfig).
  KvBlockCache(int64_t capacity_tokens, int64_t block_size)
      : capacity_(capacity_tokens), block_(block_size) {}

  // `tokens` rounded up to whole blocks: the slots they take.
  int64_t SlotsFor(int64_t tokens) const {
    return (tokens + block_ - 1) / block_ * block_;
  }
  bool CanAllocate(int64_t slots) const { return used_ + slots <= capacity_; }
  // `slots` from SlotsFor; `now` advances the usage integral.
  void Allocate(int64_t slots, double now) {
    Advance(now);
    used_ += slots;
  }
  void Free(int64_t slots, double now) {
    Advance(now);
    used_ -= slots;
  }

  int64_t capacity_tokens() const { return capacity_; }
  int64_t used_tokens() const { return used_; }
  double usage() const {
    return static_cast<double>(used_) / static_cast<double>(capacity_);
  }
  // Integral of used slots over time, up to the last Allocate or Free.
  double used_token_seconds() const { return used_time_; }

 private:
  void Advance(double now) {
    used_time_ += static_cast<double>(used_) * (now - clock_);
    clock_ = now;
  }
  int64_t capacity_;
  int64_t block_;
  int64_t used_ = 0;
  double used_time_ = 0, clock_ = 0;
};

}  // namespace ridgeline::serving
