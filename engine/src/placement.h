// Placement: which memory tier holds each operand class (weights, KV
// cache, activations): pinned classes where pinned, the others in the
// fastest tiers with room, spilling into slower ones. Internal to the engine.
#pragma once

#include <array>

#include "ridgeline/engine/hardware.h"
#include "ridgeline/engine/result.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::engine::internal {

// Where each operand class lives: fraction of its bytes per tier, and the
// bandwidth-weighted inverse used to time its traffic.
struct PlacementInfo {
  std::array<std::array<double, kMaxTiers>, kOperandClassCount> frac{};
  std::array<double, kOperandClassCount> inv_read{};   // sum frac / read bw
  std::array<double, kOperandClassCount> inv_write{};  // sum frac / write bw
  std::array<int, kOperandClassCount> pim_tier{-1, -1, -1};
  int weight_tier = 0;  // tier holding the largest share of the weights
};

// Seconds per byte of each operand class's traffic: Σ over tiers of
// frac[c][t] × scale[t] / bandwidth_t, read and written (`scale` stretches a
// tier's time, 1 / (1 − share) under inline ECC, else 1). A write bandwidth
// of 0 means the tier's read bandwidth. The one place this sum is formed.
using TierScale = std::array<double, kMaxTiers>;
inline constexpr TierScale kUnscaled{1, 1, 1, 1, 1, 1, 1, 1};
void SetInverseBandwidths(const Hardware& hw, const TierScale& scale,
                          const PlacementInfo& p,
                          std::array<double, kOperandClassCount>* inv_read,
                          std::array<double, kOperandClassCount>* inv_write);

// Pinned classes first (a pin is a constraint: it must not find its tier
// already filled by an unpinned class that could have spilled), then the
// unpinned ones in the order weights, KV cache, activations, each to the
// fastest tiers with room, spilling the remainder into the next tier.
// `need`: bytes per operand class. Fills `p` (fractions per tier and the
// bandwidth-weighted inverses the roofline times traffic with).
MemoryFootprint Place(const Hardware& hw, const PlacementPins& pins,
                      const std::array<double, kOperandClassCount>& need,
                      PlacementInfo* p);

// Every operand class wholly in `tier` (the kernel models: one call's
// operands read from and written to one tier). A write bandwidth of 0 means
// the tier's read bandwidth.
PlacementInfo AllInTier(const Hardware& hw, int tier);

}  // namespace ridgeline::engine::internal
