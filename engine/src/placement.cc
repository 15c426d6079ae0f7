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

// Bytes in a unit that shows them: a 5.6 MB KV cache is not "0.0 GB".
std::string Size(double bytes) {
  if (bytes >= 1e8) return Gb(bytes);
  if (bytes >= 1e5) return absl::StrFormat("%.1f MB", bytes / 1e6);
  if (bytes >= 1e2) return absl::StrFormat("%.1f kB", bytes / 1e3);
  return absl::StrFormat("%.0f B", bytes);
}

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
      // The tier holds what fits; the rest is missing (and timed as if it
      // were there).
      const double fitted = std::min(bytes, free[t]);
      if (bytes > free[t]) {
        fail(absl::StrCat(cname, " pinned to tier ", t, " (", hw.tiers[t].name,
                          ") need ", Gb(bytes), "; ", Gb(free[t]), " free: ",
                          Gb(bytes - fitted), " missing"));
        fp.tiers[t].missing_bytes[c] += bytes - fitted;
      }
      fp.tiers[t].bytes[c] += fitted;
      free[t] -= fitted;
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
                        " free in all tiers: ", Gb(rem), " missing"));
      // Evaluate as if the rest sat in the slowest tier; the tier shows it
      // as missing, not as held.
      fp.tiers[n - 1].missing_bytes[c] += rem;
    }
  }
  for (int c = 0; c < kOperandClassCount; ++c) {
    const double bytes = need[c];
    int best = 0;
    for (int t = 0; t < n; ++t) {
      p->frac[c][t] =
          bytes > 0
              ? (fp.tiers[t].bytes[c] + fp.tiers[t].missing_bytes[c]) / bytes
              : 0;
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
      if (hw.tiers[t].near_memory_compute.has_value() &&
          p->frac[c][t] > pim_share) {
        pim_share = p->frac[c][t];
        p->pim_tier[c] = t;
      }
    }
  }
  SetInverseBandwidths(hw, kUnscaled, *p, &p->inv_read, &p->inv_write);
  for (TierUsage& u : fp.tiers) {
    u.used_bytes = u.bytes[0] + u.bytes[1] + u.bytes[2];
  }
  // Off the device: bytes held in host memory over a link or in flash.
  for (int c = 0; c < kOperandClassCount; ++c) {
    for (int t = 0; t < n; ++t) {
      const TierKind kind = hw.tiers[t].kind;
      const double held = fp.tiers[t].bytes[c];
      if ((kind != TierKind::kHostLink && kind != TierKind::kFlash) ||
          held <= 0) {
        continue;
      }
      fp.off_device[c] = true;
      if (!fp.spilled.empty()) absl::StrAppend(&fp.spilled, "; ");
      absl::StrAppend(
          &fp.spilled,
          absl::StrFormat("%s %s of %s (%.1f%%) in %s (%.1f GB/s)",
                          OperandClassName(static_cast<OperandClass>(c)),
                          Size(held), Size(need[c]), 100 * held / need[c],
                          hw.tiers[t].name,
                          hw.tiers[t].read_bandwidth_bytes_per_second / 1e9));
    }
  }
  return fp;
}

void SetInverseBandwidths(const Hardware& hw, const TierScale& scale,
                          const PlacementInfo& p,
                          std::array<double, kOperandClassCount>* inv_read,
                          std::array<double, kOperandClassCount>* inv_write) {
  const size_t n = std::min(hw.tiers.size(), scale.size());
  for (int c = 0; c < kOperandClassCount; ++c) {
    double read = 0, write = 0;
    for (size_t t = 0; t < n; ++t) {
      if (p.frac[c][t] == 0) continue;
      const MemoryTier& mt = hw.tiers[t];
      const double write_bw = mt.write_bandwidth_bytes_per_second > 0
                                  ? mt.write_bandwidth_bytes_per_second
                                  : mt.read_bandwidth_bytes_per_second;
      read += p.frac[c][t] * scale[t] / mt.read_bandwidth_bytes_per_second;
      write += p.frac[c][t] * scale[t] / write_bw;
    }
    (*inv_read)[c] = read;
    (*inv_write)[c] = write;
  }
}

PlacementInfo AllInTier(const Hardware& hw, int tier) {
  PlacementInfo p;
  for (int c = 0; c < kOperandClassCount; ++c) p.frac[c][tier] = 1;
  SetInverseBandwidths(hw, kUnscaled, p, &p.inv_read, &p.inv_write);
  p.weight_tier = tier;
  return p;
}

}  // namespace ridgeline::engine::internal
