// LoRA adapters served beside the base model (multi-LoRA serving as in
// S-LoRA / Punica): plain data and module parsing. The graph adds the
// low-rank matmuls (operators.cc), the placement the adapters' memory,
// Analyze the cold loads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace ridgeline::engine {

// Target modules as bits: the attention projections and the FFN's.
enum LoraModule : uint32_t {
  kLoraQ = 1u << 0,
  kLoraK = 1u << 1,
  kLoraV = 1u << 2,
  kLoraO = 1u << 3,
  kLoraGate = 1u << 4,
  kLoraUp = 1u << 5,
  kLoraDown = 1u << 6,
};
inline constexpr uint32_t kAllLoraModules = 0x7f;

struct LoraAdapters {
  int64_t rank = 0;                    // 0: no LoRA; else ranges::kLoraRank
  uint32_t modules = kAllLoraModules;  // LoraModule bits, at least one
  // Adapters resident in device memory (ranges::kLoraAdapters); each
  // request uses one of them, uniformly.
  int64_t adapters = 1;
  // Share of requests whose adapter is not resident and is first loaded
  // from host memory over the hardware's host link (ranges::kLoraColdFraction).
  double cold_fraction = 0;
  bool enabled() const { return rank > 0; }
};

// "q,k,v,o,gate,up,down" (any non-empty subset, any order) or "all".
// INVALID_ARGUMENT names `field`, the allowed names and the bad one.
absl::StatusOr<uint32_t> ParseLoraModules(std::string_view text,
                                          std::string_view field);
// The inverse, in the order above: "q,k,v,o,gate,up,down".
std::string LoraModulesText(uint32_t modules);

}  // namespace ridgeline::engine
