#include "hook_cache.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include "absl/hash/hash.h"

namespace ridgeline::plugin_host {
namespace {

uint64_t ToBits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}
double FromBits(uint64_t u) {
  double d;
  std::memcpy(&d, &u, 8);
  return d;
}

// Zero pages from the kernel; null when the mapping fails (the cache then
// stores nothing).
void* MapZeros(size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

}  // namespace

HookCache::HookCache(size_t entries) {
  entries = std::min<size_t>(std::max<size_t>(entries, 1024), kNoEntry - 1);
  // At most a quarter full: with 16 probes an insert then practically never
  // finds its window full (half full, a quarter of 1,024-entry fills lost
  // one; simulated).
  size_t slots = 4096;
  while (slots < 4 * entries) slots <<= 1;
  void* e = MapZeros(entries * sizeof(Entry));
  void* i = MapZeros(slots * sizeof(std::atomic<uint64_t>));
  static_assert(std::atomic<uint64_t>::is_always_lock_free);
  if (e == nullptr || i == nullptr) {
    if (e != nullptr) ::munmap(e, entries * sizeof(Entry));
    if (i != nullptr) ::munmap(i, slots * sizeof(std::atomic<uint64_t>));
    return;
  }
  entries_ = static_cast<Entry*>(e);
  capacity_ = static_cast<uint32_t>(entries);
  index_ = static_cast<std::atomic<uint64_t>*>(i);
  mask_ = slots - 1;
}

HookCache::~HookCache() {
  if (entries_ == nullptr) return;
  ::munmap(entries_, size_t{capacity_} * sizeof(Entry));
  ::munmap(index_, (mask_ + 1) * sizeof(std::atomic<uint64_t>));
}

HookCache::Key HookCache::KeyOf(uint32_t platform,
                                const engine::OpShape& shape) {
  return {uint64_t{platform} << 16 |
              uint64_t{static_cast<uint8_t>(shape.op_class)} << 8 |
              static_cast<uint8_t>(shape.math),
          static_cast<uint64_t>(shape.tokens), ToBits(shape.flops),
          ToBits(shape.bytes)};
}

uint64_t HookCache::Hash(const Key& k) {
  return absl::HashOf(k[0], k[1], k[2], k[3]);
}

void HookCache::Read(const Entry& e, HookAnswer* out) const {
  if (e.flags & kHasValue) {
    out->value =
        engine::OpEfficiency{FromBits(e.compute), FromBits(e.memory)};
  } else {
    out->value = std::nullopt;
  }
  out->fault = absl::OkStatus();
  if (const uint64_t fault = e.flags >> 1; fault != 0) {
    std::lock_guard<std::mutex> lock(faults_mu_);
    out->fault = faults_[fault - 1];
  }
}

bool HookCache::Find(uint32_t platform, const engine::OpShape& shape,
                     HookAnswer* out, uint32_t* near) const {
  if (entries_ == nullptr) return false;
  const Key k = KeyOf(platform, shape);
  // Entries below the published count are complete (its release store).
  const uint32_t published = size_.load(std::memory_order_acquire);
  if (near != nullptr && *near != kNoEntry) {
    const uint32_t end = static_cast<uint32_t>(std::min<uint64_t>(
        uint64_t{*near} + kNearEntries + 1, published));
    for (uint32_t e = *near + 1; e < end; ++e) {
      if (entries_[e].key == k) {
        Read(entries_[e], out);
        *near = e;
        return true;
      }
    }
  }
  const uint64_t h = Hash(k);
  const uint64_t tag = h >> 32 << 32;
  for (size_t probe = 0; probe < kProbes; ++probe) {
    const uint64_t v =
        index_[(h + probe) & mask_].load(std::memory_order_acquire);
    if (v == 0) return false;  // empty: the shape was never stored
    if ((v >> 32 << 32) != tag) continue;
    const uint32_t e = static_cast<uint32_t>(v) - 1;
    if (entries_[e].key != k) continue;
    Read(entries_[e], out);
    if (near != nullptr) *near = e;
    return true;
  }
  return false;
}

uint32_t HookCache::Insert(uint32_t platform, const engine::OpShape& shape,
                           const HookAnswer& answer) {
  if (entries_ == nullptr) return kNoEntry;
  const uint32_t e = size_.load(std::memory_order_relaxed);
  if (e >= capacity_) return kNoEntry;
  const Key k = KeyOf(platform, shape);
  const uint64_t h = Hash(k);
  std::atomic<uint64_t>* slot = nullptr;
  for (size_t probe = 0; probe < kProbes && slot == nullptr; ++probe) {
    std::atomic<uint64_t>& s = index_[(h + probe) & mask_];
    if (s.load(std::memory_order_relaxed) == 0) slot = &s;
  }
  if (slot == nullptr) return kNoEntry;
  Entry& entry = entries_[e];
  entry.key = k;
  const engine::OpEfficiency v =
      answer.value.value_or(engine::OpEfficiency{0, 0});
  entry.compute = ToBits(v.compute);
  entry.memory = ToBits(v.memory);
  entry.flags = answer.value.has_value() ? kHasValue : 0;
  if (!answer.fault.ok()) {
    std::lock_guard<std::mutex> lock(faults_mu_);
    faults_.push_back(answer.fault);
    entry.flags |= uint64_t{faults_.size()} << 1;
  }
  size_.store(e + 1, std::memory_order_release);
  slot->store((h >> 32 << 32) | (uint64_t{e} + 1), std::memory_order_release);
  return e;
}

}  // namespace ridgeline::plugin_host
