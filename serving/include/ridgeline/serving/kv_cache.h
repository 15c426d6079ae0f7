// The KV block manager of one replica (vLLM's KVCacheManager): paged blocks
// over the KV capacity the memory tiers leave (capacity.h). A request
// reserves its whole life (prompt + generated - 1 tokens, in blocks) at
// admission, so nothing is preempted, and frees it when it leaves; with
// preemption (scheduler.h) it grows its reserve as tokens come (Grow).
//
// Prefix caching (vLLM's automatic prefix caching): a full prompt block is
// named by its content (BlockKey over the run's PromptContent). Once a
// request has computed it, it is registered; a later request whose prompt
// starts with the same blocks takes them (a reference each) and skips
// their prefill, though attention still reads them. A block no request
// holds stays cached, taking its slots until it is evicted, least recently
// released first (a request releases its blocks last to first, so a
// prefix's tail goes before its head). At least one prompt token is always
// computed (the first token's logits), as in vLLM. Blocks two requests
// computed at once are kept once: the later registration takes the cached
// block and frees its own copy. When a request ends, its generated tokens'
// full blocks are registered too (a later turn's prompt repeats them).
//
// Offload (kv_offload.h): a block evicted from device memory moves to the
// first offload tier, and a tier's least recently used block to the next
// one when the tier is full (off the last one it is dropped). An admission
// finds an offloaded block like a device one and reloads it when the rule
// of kv_offload.h says so, the reload time added to the step that admits
// it. Preemption by swap (SwapOut) keeps a preempted request's KV in the
// first tier, ahead of cached blocks, until it is admitted again.
// Thread-compatible.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "ridgeline/serving/kv_offload.h"
#include "ridgeline/serving/prompt_content.h"
#include "ridgeline/serving/request_state.h"
#include "ridgeline/serving/usage_history.h"

namespace ridgeline::serving {

class KvBlockCache {
 public:
  // capacity_tokens and block_size >= 1 (ValidateSimulationConfig);
  // `content` (may be null: nothing shared) outlives the cache and is
  // indexed by the request numbers passed below. Offload tiers hold
  // evicted cached blocks with prefix caching, and swapped-out KV.
  KvBlockCache(int64_t capacity_tokens, int64_t block_size,
               const PromptContent* content = nullptr,
               bool prefix_caching = false,
               std::vector<OffloadTier> offload_tiers = {},
               RecomputeCost recompute = {});

  // `tokens` rounded up to whole blocks: the slots they take.
  int64_t SlotsFor(int64_t tokens) const {
    return (tokens + block_ - 1) / block_ * block_;
  }

  // Admits request `i` (its `reserve` set) when its blocks fit, taking its
  // cached prefix first when its prefill has not started (then
  // r.prefilled, r.prefix_hit_tokens and r.offload_hit_tokens become the
  // hit). False: it does not fit now (nothing changed).
  bool TryAdmit(int64_t i, RequestState& r, double now);
  // The prompt tokens of request `i` this cache holds now, in whole blocks
  // from the start (what a prefix-aware router asks each replica).
  int64_t CachedPrefixTokens(int64_t i, const RequestState& r) const;
  // Registers the full blocks of the first `computed` tokens of request
  // `i` (its KV written: the prompt so far, or at its end also its
  // generated tokens, which a later turn's prompt repeats) that its
  // content names.
  void Register(int64_t i, RequestState& r, int64_t computed, double now);
  // Frees everything request `i` holds (its cached blocks stay cached).
  void Release(int64_t i, RequestState& r, double now);
  // Lazy allocation (preemption by recompute): grows r.reserve to hold
  // `tokens`, evicting idle cached blocks as needed. False: the blocks are
  // not there (nothing changed).
  bool Grow(RequestState& r, int64_t tokens, double now);
  // Preemption by swap: moves the KV request r has written to the first
  // offload tier (its cached blocks there make way, passed down), counted
  // in r.swapped_tokens and r.swaps; TryAdmit brings it back. False: no
  // such tier with a write bandwidth, or no room (nothing changed). The
  // caller still releases the request's device blocks.
  bool SwapOut(RequestState& r, double now);
  // The time of the transfers since the last call: offloaded blocks
  // reloaded and swapped KV written out or read back (the step being built
  // pays it).
  double TakeTransferSeconds() {
    const double s = transfer_seconds_;
    transfer_seconds_ = 0;
    return s;
  }

  int64_t capacity_tokens() const { return capacity_; }
  // Slots held by requests (cached blocks no request holds not counted).
  int64_t used_tokens() const { return used_; }
  // Slots of cached blocks no request holds (evictable).
  int64_t idle_tokens() const { return idle() * block_; }
  double usage() const {
    return static_cast<double>(used_) / static_cast<double>(capacity_);
  }
  // Integral of used slots over time, up to the last change.
  double used_token_seconds() const { return used_time_; }
  // Prompt tokens admissions found cached (any tier), those of them
  // reloaded from an offload tier, and blocks evicted from device memory.
  int64_t hit_tokens() const { return hit_tokens_; }
  int64_t offload_hit_tokens() const { return offload_hit_tokens_; }
  int64_t evicted_blocks() const { return evicted_; }
  // Offload tier t (0-based, OffloadTiers order): its tiers, the tokens it
  // holds now, at most, and their integral over time (to the last change).
  const std::vector<OffloadTier>& offload_tiers() const { return tiers_; }
  // (Swapped-out KV counts in the first tier.)
  int64_t offload_tokens(size_t t) const { return TierBlocks(t + 1) * block_; }
  int64_t offload_peak_tokens(size_t t) const {
    return lists_[t + 1].peak * block_;
  }
  double offload_token_seconds(size_t t) const {
    return lists_[t + 1].block_seconds * static_cast<double>(block_);
  }
  // Its tokens over time (to the last change), for a timeline.
  const UsageHistory& offload_history(size_t t) const { return history_[t]; }

 private:
  // A block's cache entry. Entries come in slabs, one per content unit
  // (PromptContent) with a cached block: a unit's blocks are its slab's
  // entries in order, so a walk looks a unit up once, not each block.
  struct Entry {
    int32_t refs = 0;
    int32_t prev = -1, next = -1;  // its list (refs == 0), oldest first
    // -1: not cached; 0: device memory; t: offload tier t - 1.
    int32_t tier = -1;
  };
  // Blocks no request holds, least recently used first: lists_[0] in
  // device memory (idle), lists_[t] in offload tier t - 1.
  struct List {
    int32_t oldest = -1, newest = -1;
    int64_t count = 0, peak = 0;
    double block_seconds = 0;
  };
  struct Hits {
    int64_t device = 0, offload = 0;
    int64_t idle = 0;  // device hits no request holds
    double reload_seconds = 0;
  };
  void Advance(double now);
  bool caching() const { return content_ != nullptr; }
  int64_t idle() const { return lists_[0].count; }
  // Blocks of request i's first `tokens` tokens that can be shared: full
  // blocks within both those tokens and its content chain.
  int64_t ShareableBlocks(int64_t i, int64_t tokens) const;
  // Where block `block` of request i's content lives: its slab's name (its
  // unit's chain hash, or a hash of it and the slab's number past the
  // first of a long unit) and its place in the slab.
  static constexpr int64_t kMaxSlab = 64;
  struct Slot {
    uint64_t unit = 0;
    int32_t offset = 0;
  };
  Slot SlotOf(int64_t i, int64_t block) const;
  // The last unit a walk looked up (a walk stays in a unit for
  // unit / block blocks); slab -2: none yet, -1: not cached.
  struct UnitCursor {
    uint64_t unit = 0;
    int32_t slab = -2;
  };
  // The cached entry of that block, or -1.
  int32_t Find(int64_t i, int64_t block, UnitCursor& cursor) const;
  // The slab of `unit`, taken (its entries uncached) if it has none.
  int32_t SlabFor(uint64_t unit);
  // The cached prefix an admission of request i would take now, its
  // entries appended to `found` when given (TryAdmit takes them without a
  // second lookup).
  Hits Walk(int64_t i, const RequestState& r,
            std::vector<int32_t>* found = nullptr) const;
  void Acquire(int32_t e);  // one more reference (off the idle list at 0)
  void Link(int32_t e, int32_t tier);  // newest of that tier's list
  void Unlink(int32_t e);
  // Moves (or drops) an unlinked block to offload tier `tier` (1-based).
  void Demote(int32_t e, int32_t tier);
  void EvictUntilFits();
  // Blocks in lists_[tier] (1-based offload tier), swapped-out KV included.
  int64_t TierBlocks(size_t tier) const;
  // Passes tier's oldest cached blocks down until it is within capacity.
  void MakeRoom(int32_t tier);

  int64_t capacity_;
  int64_t block_;
  const PromptContent* content_;  // null: no prefix caching
  std::vector<OffloadTier> tiers_;
  RecomputeCost recompute_;
  std::vector<List> lists_;  // 1 + tiers_.size()
  std::vector<UsageHistory> history_;  // tiers_.size()
  int64_t used_ = 0;
  double used_time_ = 0, clock_ = 0;
  int64_t hit_tokens_ = 0, offload_hit_tokens_ = 0;
  int64_t evicted_ = 0;
  double transfer_seconds_ = 0;
  int64_t swapped_ = 0;  // slots of swapped-out KV in the first tier
  // The entries each request holds, in block order (Release walks them
  // back without a lookup), and emptied lists kept for reuse.
  std::vector<int32_t>& Held(int64_t i);
  absl::flat_hash_map<int64_t, std::vector<int32_t>> held_;
  std::vector<std::vector<int32_t>> spare_;
  std::vector<int32_t> walked_;  // TryAdmit's Walk, reused
  // Units with cached blocks -> their slab; per slab its unit and cached
  // blocks; entries_ holds slab_ entries a slab.
  int64_t slab_ = 1;
  absl::flat_hash_map<uint64_t, int32_t> units_;
  std::vector<uint64_t> slab_unit_;
  std::vector<int32_t> slab_blocks_;
  std::vector<int32_t> free_slabs_;
  std::vector<Entry> entries_;
};

}  // namespace ridgeline::serving
