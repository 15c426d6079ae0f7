// Placement of weights, KV cache and activations into memory tiers.
#include "placement.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "operators.h"
#include "validate_util.h"

namespace ridgeline::engine::internal {
namespace {

std::string Gb(double bytes) { return absl::StrFormat("%.1f GB", bytes / 1e9); }

}  // namespace

MemoryFootprint Place(const Hardware& hw, const PlacementPins& pins,
                      const std::array<double, kOperandClassCount>& need,
                      PlacementInfo* p) {
  MemoryFootprint fp;
  fp.required_bytes = need;
  const int n = static_cast<int>(hw.tiers.size());
  std::array<double, kMaxTiers> free{};
  fp.tiers.reserve(n);
  for (int t = 0; t < n; ++t) {
    free[t] = hw.tiers[t].capacity_bytes;
    TierUsage u;
    u.tier = t;
    u.name = hw.tiers[t].name;
    u.capacity_bytes = hw.tiers[t].capacity_bytes;
    fp.tiers.push_back(std::move(u));
  }
  auto fail = [&](std::string why) {
    fp.fits = false;
    if (!fp.not_fitting.empty()) absl::StrAppend(&fp.not_fitting, "; ");
    absl::StrAppend(&fp.not_fitting, why);
  };
  std::array<int, kOperandClassCount> order{};
  int next = 0;
  for (int c = 0; c < kOperandClassCount; ++c) {
    if (pins.tier[c].has_value()) order[next++] = c;
  }
  for (int c = 0; c < kOperandClassCount; ++c) {
    if (!pins.tier[c].has_value()) order[next++] = c;
  }
  for (const int c : order) {
    const auto cname = Av(OperandClassName(static_cast<OperandClass>(c)));
    const double bytes = need[c];
    const auto& pin = pins.tier[c];
    if (pin.has_value()) {
      const int t = *pin;
      if (bytes > free[t]) {
        fail(absl::StrCat(cname, " pinned to tier ", t, " (", hw.tiers[t].name,
                          ") need ", Gb(bytes), "; ", Gb(free[t]), " free"));
      }
      fp.tiers[t].bytes[c] += bytes;
      free[t] = std::max(0.0, free[t] - bytes);
      continue;
    }
    double rem = bytes;
    double free_total = 0;
    for (int t = 0; t < n; ++t) free_total += free[t];
    for (int t = 0; t < n && rem > 0; ++t) {
      const double take = std::min(rem, free[t]);
      if (take <= 0) continue;
      fp.tiers[t].bytes[c] += take;
      free[t] -= take;
      rem -= take;
    }
    if (rem > 0) {
      fail(absl::StrCat(cname, " need ", Gb(bytes), "; ", Gb(free_total),
                        " free in all tiers"));
      // Evaluate as if the rest sat in the slowest tier.
      fp.tiers[n - 1].bytes[c] += rem;
    }
  }
  for (int c = 0; c < kOperandClassCount; ++c) {
    const double bytes = need[c];
    int best = 0;
    for (int t = 0; t < n; ++t) {
      p->frac[c][t] = bytes > 0 ? fp.tiers[t].bytes[c] / bytes : 0;
      if (p->frac[c][t] > p->frac[c][best]) best = t;
    }
    if (bytes <= 0) {
      // Nothing to place: traffic (if any) goes to the pinned or first tier.
      best = pins.tier[c].value_or(0);
      p->frac[c][best] = 1;
    }
    if (c == kWeights) p->weight_tier = best;
    double pim_share = 0;
    for (int t = 0; t < n; ++t) {
      p->inv_read[c] +=
          p->frac[c][t] / hw.tiers[t].read_bandwidth_bytes_per_second;
      p->inv_write[c] +=
          p->frac[c][t] / hw.tiers[t].write_bandwidth_bytes_per_second;
      if (hw.tiers[t].near_memory_compute.has_value() &&
          p->frac[c][t] > pim_share) {
        pim_share = p->frac[c][t];
        p->pim_tier[c] = t;
      }
    }
  }
  for (TierUsage& u : fp.tiers) {
    u.used_bytes = u.bytes[0] + u.bytes[1] + u.bytes[2];
  }
  return fp;
}

}  // namespace ridgeline::engine::internal
