// The server's cache of a hosted plugin's efficiency-hook answers (issue 26,
// defect 7), by (platform, op shape), the doubles compared by their bits.
// Plugins answer deterministically (the conformance checker tests that), so
// the cache never changes a result.
//
// An analysis asks the hook once per op per decode step, and an in-process
// hook costs nanoseconds, so a hit must cost about as much: readers take no
// lock. Answers are entries appended in the order they were first stored;
// an entry never changes or leaves, so publishing it (the entry count, and
// its number in an open-addressing index, both with release stores) is all
// the synchronisation there is. Once the entries or an index probe window
// are full, new shapes are not stored (they go to the host every time).
//
// Why entries in order: a long decode asks, step after step, for one op's
// shape with its FLOPs and bytes grown, each a new shape; a repeated
// analysis asks them again in the order they were stored. A reader that
// remembers where its last answer of that op was (`near`) finds the next
// one a few entries on, in memory it streams through, instead of at random
// in megabytes of index (a cache miss per step: 2.9x the in-process hook
// before this).
//
// Thread-safe: any number of readers; one writer at a time (the caller's
// lock). Faults (rare) live in a side list behind a mutex.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "ridgeline/engine/hardware.h"

namespace ridgeline::plugin_host {

// What the hook answered: a value (nullopt: no opinion) or a fault, which is
// reported again on every hit so the fault counter still counts uses.
struct HookAnswer {
  std::optional<engine::OpEfficiency> value;
  absl::Status fault;
};

class HookCache {
 public:
  static constexpr uint32_t kNoEntry = std::numeric_limits<uint32_t>::max();
  // How far past `near` Find looks: ops interleaved in one decode step.
  static constexpr uint32_t kNearEntries = 4;

  // Room for `entries` answers (64 B each, plus 32 B of index), mapped from
  // zero pages: only the pages used become resident.
  explicit HookCache(size_t entries);
  ~HookCache();
  HookCache(const HookCache&) = delete;
  HookCache& operator=(const HookCache&) = delete;

  // The stored answer for `platform`'s `shape`, into *out. `near` (may be
  // null) is kNoEntry or the entry of this op's previous answer: the
  // entries just after it are tried before the index; it is set to the
  // entry found.
  bool Find(uint32_t platform, const engine::OpShape& shape, HookAnswer* out,
            uint32_t* near) const;

  // Stores an answer not yet stored; one caller at a time. Returns its
  // entry, or kNoEntry when there is no room.
  uint32_t Insert(uint32_t platform, const engine::OpShape& shape,
                  const HookAnswer& answer);

  size_t size() const { return size_.load(std::memory_order_acquire); }

 private:
  using Key = std::array<uint64_t, 4>;
  static constexpr size_t kProbes = 16;
  static constexpr uint64_t kHasValue = 1;
  struct alignas(64) Entry {
    Key key;
    uint64_t compute, memory;  // the value's bits
    uint64_t flags;            // kHasValue | (1 + fault index) << 1
  };
  static_assert(sizeof(Entry) == 64);

  static Key KeyOf(uint32_t platform, const engine::OpShape& shape);
  static uint64_t Hash(const Key& k);
  void Read(const Entry& e, HookAnswer* out) const;

  Entry* entries_ = nullptr;  // capacity_ of them, mmap'ed
  uint32_t capacity_ = 0;
  std::atomic<uint32_t> size_{0};  // published entries
  // Open addressing: 0 empty, else the hash's high half << 32 | entry + 1.
  std::atomic<uint64_t>* index_ = nullptr;
  size_t mask_ = 0;  // index slots - 1
  mutable std::mutex faults_mu_;
  std::vector<absl::Status> faults_;
};

}  // namespace ridgeline::plugin_host
