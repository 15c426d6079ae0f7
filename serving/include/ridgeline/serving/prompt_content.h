// What the prompts of a run share, for prefix caching (kv_cache.h). Each
// request's prompt starts with a chain of content units of `unit_tokens`
// tokens, each named by a hash of the whole prefix through it (equal
// hashes: equal prefixes; ChainHash). A prompt's tokens past its chain are
// its own. A KV block is named by the unit holding its last token and its
// index (BlockKey), so blocks of any size map onto units of any size: a
// Mooncake trace's 512-token blocks (trace.h), or one unit of N tokens for
// `--shared-prefix N`. Plain data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ridgeline::serving {

struct PromptContent {
  int64_t unit_tokens = 0;  // 0: nothing is shared
  // Every request's chain, back to back: request i's is
  // chains[begin[i], begin[i + 1]) (begin has one entry more than there are
  // requests; empty: nothing is shared).
  std::vector<uint64_t> chains;
  std::vector<int64_t> begin;

  bool empty() const { return unit_tokens <= 0 || begin.empty(); }
  size_t requests() const { return begin.empty() ? 0 : begin.size() - 1; }
  // Starts request i's chain (requests are added in order).
  void StartRequest() {
    if (begin.empty()) begin.push_back(0);
    begin.push_back(static_cast<int64_t>(chains.size()));
  }
  // Appends a unit to the last request's chain.
  void Append(uint64_t unit_hash) {
    chains.push_back(unit_hash);
    begin.back() = static_cast<int64_t>(chains.size());
  }
  // Requests 0, stride, 2 stride, ... (an attention rank's round robin).
  PromptContent Every(size_t stride) const;
  // Requests 0..n-1 (all when there are fewer).
  PromptContent First(size_t n) const;
};

// The hash of a prefix extended by the unit `id` (splitmix64 of both):
// a chain's hash names everything up to it.
uint64_t ChainHash(uint64_t prefix, uint64_t id);
// KV block `block` (0-based) of a prompt whose unit holding the block's last
// token has the chain hash `unit_hash`.
uint64_t BlockKey(uint64_t unit_hash, int64_t block);

}  // namespace ridgeline::serving
