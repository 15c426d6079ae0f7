#include "ridgeline/serving/prompt_content.h"

namespace ridgeline::serving {
namespace {

uint64_t Mix(uint64_t z) {  // splitmix64's finaliser
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

PromptContent PromptContent::Every(size_t stride) const {
  PromptContent out;
  out.unit_tokens = unit_tokens;
  if (empty() || stride == 0) return out;
  for (size_t i = 0; i < requests(); i += stride) {
    out.StartRequest();
    for (int64_t k = begin[i]; k < begin[i + 1]; ++k) out.Append(chains[k]);
  }
  return out;
}

PromptContent PromptContent::First(size_t n) const {
  if (n >= requests()) return *this;
  PromptContent out;
  out.unit_tokens = unit_tokens;
  if (n == 0) return out;
  out.begin.assign(begin.begin(),
                   begin.begin() + static_cast<ptrdiff_t>(n) + 1);
  out.chains.assign(chains.begin(), chains.begin() + begin[n]);
  return out;
}

uint64_t ChainHash(uint64_t prefix, uint64_t id) {
  return Mix(Mix(prefix + 0x9E3779B97F4A7C15ull) ^ id);
}

uint64_t BlockKey(uint64_t unit_hash, int64_t block) {
  return Mix(unit_hash ^
             (static_cast<uint64_t>(block) + 1) * 0x9E3779B97F4A7C15ull);
}

}  // namespace ridgeline::serving
