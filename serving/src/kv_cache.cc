#include "ridgeline/serving/kv_cache.h"

#include <algorithm>
#include <utility>

namespace ridgeline::serving {

KvBlockCache::KvBlockCache(int64_t capacity_tokens, int64_t block_size,
                           const PromptContent* content, bool prefix_caching,
                           std::vector<OffloadTier> offload_tiers,
                           RecomputeCost recompute)
    : capacity_(capacity_tokens),
      block_(block_size),
      content_(prefix_caching && content != nullptr && !content->empty()
                   ? content
                   : nullptr),
      recompute_(recompute) {
  // Without prefix caching the tiers only take swapped-out requests.
  tiers_ = std::move(offload_tiers);
  lists_.resize(1 + tiers_.size());
  history_.resize(tiers_.size());
  if (caching()) {
    // A unit names at most ceil(unit / block) blocks (those whose last
    // token it holds); a longer unit (a long shared prefix) is cut into
    // slabs of kMaxSlab, so a slab never outgrows what it caches.
    slab_ = std::min((content_->unit_tokens + block_ - 1) / block_, kMaxSlab);
    // Every unit of the capacity may be cached: no rehash while it fills.
    units_.reserve(static_cast<size_t>(std::min<int64_t>(
        capacity_tokens / content_->unit_tokens + 1, int64_t{1} << 22)));
  }
}

void KvBlockCache::Advance(double now) {
  const double dt = now - clock_;
  used_time_ += static_cast<double>(used_) * dt;
  for (size_t t = 1; t < lists_.size(); ++t) {
    const auto blocks = static_cast<double>(TierBlocks(t));
    lists_[t].block_seconds += blocks * dt;
    history_[t - 1].Add(clock_, now, blocks * static_cast<double>(block_));
  }
  clock_ = now;
}

int64_t KvBlockCache::TierBlocks(size_t tier) const {
  return lists_[tier].count + (tier == 1 ? swapped_ / block_ : 0);
}

int64_t KvBlockCache::ShareableBlocks(int64_t i, int64_t tokens) const {
  if (!caching() || i < 0 || static_cast<size_t>(i) >= content_->requests()) {
    return 0;
  }
  const int64_t units = content_->begin[i + 1] - content_->begin[i];
  return std::min(tokens, units * content_->unit_tokens) / block_;
}

KvBlockCache::Slot KvBlockCache::SlotOf(int64_t i, int64_t block) const {
  // The unit holding the block's last token names all of the block; the
  // unit's first block is the one holding its first token.
  const int64_t unit_tokens = content_->unit_tokens;
  const int64_t unit = ((block + 1) * block_ - 1) / unit_tokens;
  const uint64_t chain = content_->chains[content_->begin[i] + unit];
  const int64_t in_unit = block - unit * unit_tokens / block_;
  // The unit's first slab is named by the unit itself, later ones by it
  // and their number.
  const int64_t part = in_unit / slab_;
  return {part == 0 ? chain : BlockKey(chain, part),
          static_cast<int32_t>(in_unit % slab_)};
}

int32_t KvBlockCache::Find(int64_t i, int64_t block, UnitCursor& c) const {
  const Slot s = SlotOf(i, block);
  if (s.unit != c.unit || c.slab < -1) {
    const auto it = units_.find(s.unit);
    c = {s.unit, it == units_.end() ? -1 : it->second};
  }
  if (c.slab < 0) return -1;
  const int32_t e = c.slab * slab_ + s.offset;
  return entries_[e].tier >= 0 ? e : -1;
}

int32_t KvBlockCache::SlabFor(uint64_t unit) {
  const auto [it, fresh] = units_.try_emplace(unit, 0);
  if (!fresh) return it->second;
  if (!free_slabs_.empty()) {
    it->second = free_slabs_.back();
    free_slabs_.pop_back();
  } else {
    it->second = static_cast<int32_t>(slab_unit_.size());
    slab_unit_.push_back(0);
    slab_blocks_.push_back(0);
    entries_.resize(entries_.size() + static_cast<size_t>(slab_));
  }
  slab_unit_[it->second] = unit;
  return it->second;
}

void KvBlockCache::Link(int32_t e, int32_t tier) {
  Entry& x = entries_[e];
  List& l = lists_[tier];
  x.tier = tier;
  x.prev = l.newest;
  x.next = -1;
  (l.newest >= 0 ? entries_[l.newest].next : l.oldest) = e;
  l.newest = e;
  ++l.count;
  l.peak = std::max(l.peak, TierBlocks(static_cast<size_t>(tier)));
}

void KvBlockCache::Unlink(int32_t e) {
  Entry& x = entries_[e];
  List& l = lists_[x.tier];
  (x.prev >= 0 ? entries_[x.prev].next : l.oldest) = x.next;
  (x.next >= 0 ? entries_[x.next].prev : l.newest) = x.prev;
  x.prev = x.next = -1;
  --l.count;
}

void KvBlockCache::Acquire(int32_t e) {
  if (entries_[e].refs++ == 0) {
    Unlink(e);
    used_ += block_;
  }
}

void KvBlockCache::Demote(int32_t e, int32_t tier) {
  if (static_cast<size_t>(tier) >= lists_.size()) {
    // Off the last tier: dropped, and its unit with its last block.
    entries_[e].tier = -1;
    const int32_t slab = e / slab_;
    if (--slab_blocks_[slab] == 0) {
      units_.erase(slab_unit_[slab]);
      free_slabs_.push_back(slab);
    }
    return;
  }
  Link(e, tier);
  MakeRoom(tier);
}

void KvBlockCache::MakeRoom(int32_t tier) {
  // A full tier passes its least recently used blocks down.
  while (TierBlocks(static_cast<size_t>(tier)) * block_ >
             tiers_[tier - 1].capacity_tokens &&
         lists_[tier].oldest >= 0) {
    const int32_t out = lists_[tier].oldest;
    Unlink(out);
    Demote(out, tier + 1);
  }
}

bool KvBlockCache::SwapOut(RequestState& r, double now) {
  if (tiers_.empty() || !(tiers_[0].write_seconds_per_token > 0)) return false;
  // The KV written so far: its prefill's, or all but the newest token's.
  const int64_t tokens =
      InPrefill(r) ? r.prefilled : r.prompt + r.generated - 1;
  const int64_t slots = SlotsFor(tokens);
  if (tokens <= 0 || swapped_ + slots > tiers_[0].capacity_tokens) {
    return false;
  }
  Advance(now);
  swapped_ += slots;
  MakeRoom(1);  // cached blocks make way for it
  lists_[1].peak = std::max(lists_[1].peak, TierBlocks(1));
  r.swapped_tokens = tokens;
  ++r.swaps;
  // Written before the step that preempted it runs on.
  transfer_seconds_ +=
      tiers_[0].latency_seconds +
      static_cast<double>(tokens) * tiers_[0].write_seconds_per_token;
  return true;
}

void KvBlockCache::EvictUntilFits() {
  while (used_ + idle() * block_ > capacity_ && lists_[0].oldest >= 0) {
    const int32_t e = lists_[0].oldest;
    Unlink(e);
    Demote(e, 1);
    ++evicted_;
  }
}

KvBlockCache::Hits KvBlockCache::Walk(int64_t i, const RequestState& r,
                                      std::vector<int32_t>* found) const {
  Hits h;
  // At least the last prefill token is computed: its logits are the next
  // output token's.
  const int64_t tokens = PrefillTarget(r);
  const int64_t limit =
      std::min(ShareableBlocks(i, tokens), (tokens - 1) / block_);
  UnitCursor cursor;
  for (int64_t j = 0; j < limit; ++j) {
    const int32_t e = Find(i, j, cursor);
    if (e < 0) break;
    const Entry& x = entries_[e];
    if (x.tier == 0) {
      if (found != nullptr) found->push_back(e);
      ++h.device;
      if (x.refs == 0) ++h.idle;
      continue;
    }
    // kv_offload.h's rule: reload only what is cheaper than recomputing.
    const OffloadTier& tier = tiers_[x.tier - 1];
    if (!ReloadBeatsRecompute(tier, recompute_, block_, j * block_)) break;
    if (found != nullptr) found->push_back(e);
    ++h.offload;
    h.reload_seconds += ReloadSeconds(tier, block_);
  }
  return h;
}

int64_t KvBlockCache::CachedPrefixTokens(int64_t i,
                                         const RequestState& r) const {
  if (!caching()) return 0;
  const Hits h = Walk(i, r);
  return (h.device + h.offload) * block_;
}

std::vector<int32_t>& KvBlockCache::Held(int64_t i) {
  auto [it, fresh] = held_.try_emplace(i);
  if (fresh && !spare_.empty()) {
    it->second = std::move(spare_.back());
    spare_.pop_back();
  }
  return it->second;
}

bool KvBlockCache::TryAdmit(int64_t i, RequestState& r, double now) {
  Hits h;
  walked_.clear();
  if (r.swapped_tokens > 0) {
    // Swapped out: its KV comes back into the slots it reserves now.
    if (used_ + r.reserve > capacity_) return false;
    Advance(now);
    used_ += r.reserve;
    EvictUntilFits();
    swapped_ -= SlotsFor(r.swapped_tokens);
    transfer_seconds_ += ReloadSeconds(tiers_[0], r.swapped_tokens);
    r.swapped_tokens = 0;
    return true;
  }
  if (caching() && r.prefilled == 0) h = Walk(i, r, &walked_);
  // Reloaded blocks take fresh device slots, as computed ones do.
  const int64_t need = r.reserve - h.device * block_;
  // Idle cached blocks make way; the hit ones among them are taken.
  if (used_ + need + h.idle * block_ > capacity_) return false;
  Advance(now);
  const int64_t hits = h.device + h.offload;
  if (hits > 0) {
    std::vector<int32_t>& held = Held(i);
    for (const int32_t e : walked_) {
      Entry& x = entries_[e];
      if (x.tier == 0) {
        Acquire(e);
      } else {
        Unlink(e);  // back in device memory, in a slot of `need`
        x.tier = 0;
        x.refs = 1;
      }
      held.push_back(e);
    }
  }
  used_ += need;
  EvictUntilFits();
  r.cached_blocks = hits;
  if (hits > 0) {
    r.prefilled = r.prefix_hit_tokens = hits * block_;
    r.offload_hit_tokens = h.offload * block_;
    hit_tokens_ += r.prefix_hit_tokens;
    offload_hit_tokens_ += r.offload_hit_tokens;
    transfer_seconds_ += h.reload_seconds;
  }
  return true;
}

void KvBlockCache::Register(int64_t i, RequestState& r, int64_t computed,
                            double now) {
  const int64_t full = ShareableBlocks(i, computed);
  if (r.cached_blocks >= full) return;
  Advance(now);
  std::vector<int32_t>& held = Held(i);
  uint64_t unit = 0;
  int32_t slab = -1;
  for (int64_t j = r.cached_blocks; j < full; ++j) {
    const Slot s = SlotOf(i, j);
    if (slab < 0 || s.unit != unit) {
      unit = s.unit;
      slab = SlabFor(unit);
    }
    const int32_t e = slab * slab_ + s.offset;
    Entry& x = entries_[e];
    if (x.tier < 0) {
      // Its own block becomes the cached one: the slots stay in use.
      x = Entry{1, -1, -1, 0};
      ++slab_blocks_[slab];
    } else if (x.tier > 0) {
      // Offloaded meanwhile: the fresh device copy is the cached one now.
      Unlink(e);
      x.tier = 0;
      x.refs = 1;
    } else {
      // Computed twice at once: keep the cached block, free its copy.
      Acquire(e);
      used_ -= block_;
    }
    held.push_back(e);
  }
  r.cached_blocks = full;
}

bool KvBlockCache::Grow(RequestState& r, int64_t tokens, double now) {
  const int64_t need = SlotsFor(tokens) - r.reserve;
  if (need <= 0) return true;
  if (used_ + need > capacity_) return false;  // idle blocks can make way
  Advance(now);
  used_ += need;
  r.reserve += need;
  EvictUntilFits();
  return true;
}

void KvBlockCache::Release(int64_t i, RequestState& r, double now) {
  Advance(now);
  used_ -= r.reserve - r.cached_blocks * block_;
  r.cached_blocks = 0;
  const auto held = held_.find(i);
  if (held == held_.end()) return;
  // Last to first: a prefix's tail is evicted before its head.
  for (auto e = held->second.rbegin(); e != held->second.rend(); ++e) {
    if (--entries_[*e].refs > 0) continue;
    Link(*e, 0);
    used_ -= block_;
  }
  held->second.clear();
  spare_.push_back(std::move(held->second));
  held_.erase(held);
}

}  // namespace ridgeline::serving
