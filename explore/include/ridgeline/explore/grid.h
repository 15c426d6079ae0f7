// Stable enumeration of a grid (mixed radix, first axis slowest) and its
// sharding. Every multi-scenario request (Sweep, Explore) numbers its points
// this way, so a point's index names it across processes and shards.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace ridgeline::explore {

// Index <-> digits of a grid whose axes have `radices` values (the first
// axis varies slowest, the last fastest). Plain data; thread-safe.
class MixedRadix {
 public:
  MixedRadix() = default;
  // Every radix >= 1; their product must fit in 63 bits (callers cap sizes).
  explicit MixedRadix(std::vector<uint64_t> radices);

  uint64_t total() const { return total_; }
  size_t size() const { return radices_.size(); }
  uint64_t radix(size_t axis) const { return radices_[axis]; }
  // digits[k] in [0, radix(k)); `digits` has size() entries.
  void Decode(uint64_t index, uint64_t* digits) const;
  uint64_t Encode(const uint64_t* digits) const;

 private:
  std::vector<uint64_t> radices_;
  uint64_t total_ = 1;
};

// Shard `index` of `count` owns the points i with i % count == index (so
// shards are balanced to one point and a prefix of every shard is a
// prefix of the grid's order). count >= 1, index < count.
struct Shard {
  uint64_t index = 0;
  uint64_t count = 1;
};
inline constexpr uint64_t kMaxShards = 65536;

// "i/n" with 0 <= i < n <= kMaxShards. Errors are INVALID_ARGUMENT naming
// `field`, the allowed form and range, and the text.
absl::StatusOr<Shard> ParseShard(std::string_view text,
                                 std::string_view field = "shard");

// Points of a `total`-point grid that shard `s` owns.
inline uint64_t ShardSize(uint64_t total, Shard s) {
  return total / s.count + (s.index < total % s.count ? 1 : 0);
}

// Calls f(index) for the shard's points in increasing order, starting at
// the first owned index >= `resume_from` (resumable by index); stops early
// when f returns false. Returns the number of points visited.
template <typename F>
uint64_t ForEachInShard(uint64_t total, Shard s, uint64_t resume_from, F&& f) {
  uint64_t i = s.index;
  if (resume_from > i) i += (resume_from - i + s.count - 1) / s.count * s.count;
  uint64_t n = 0;
  for (; i < total; i += s.count) {
    ++n;
    if (!f(i)) break;
  }
  return n;
}

}  // namespace ridgeline::explore
