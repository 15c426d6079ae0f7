// ValidateHardware: every field of the engine's hardware description.
#include "ridgeline/engine/hardware.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/formats.h"
#include "ridgeline/engine/ranges.h"
#include "ridgeline/engine/status_macros.h"
#include "validate_util.h"

namespace ridgeline::engine {
namespace {

using internal::Av;
using internal::CheckPositiveLazy;

// Field paths are built only when a check fails: valid hardware (the common
// case, once per analysis) allocates no strings here.
absl::Status CheckPerMathType(std::string_view prefix, std::string_view field,
                              const PerMathType& v, bool allow_zero) {
  for (int i = 0; i < kMathTypeCount; ++i) {
    if (!v[i].has_value()) continue;
    RETURN_IF_ERROR(CheckPositiveLazy(
        [&] {
          // Field names as the proto spells them ("fp16-acc16" ->
          // "fp16_acc16").
          std::string name(MathTypeName(static_cast<MathType>(i)));
          std::replace(name.begin(), name.end(), '-', '_');
          return absl::StrCat(Av(prefix), Av(field), ".", name);
        },
        *v[i], allow_zero));
  }
  return absl::OkStatus();
}

// Lower-case kebab: [a-z0-9]+(-[a-z0-9]+)*, the form plugin ids and the
// spec sheet's hardware_id take.
bool IsKebab(std::string_view s) {
  if (s.empty() || s.front() == '-' || s.back() == '-') return false;
  char prev = 0;
  for (char c : s) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && c != '-') return false;
    if (c == '-' && prev == '-') return false;
    prev = c;
  }
  return true;
}

// Below 1 B/s (or 1 op/s) a step's time can overflow to infinity; no real
// part is anywhere near, so such a value is a mistake, not a slow part.
absl::Status CheckAtLeastOne(const std::string& path, double v,
                             std::string_view unit) {
  if (v >= 1) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      path, " must be at least 1 ", Av(unit),
      " (a smaller one makes step times infinite), got ", v));
}

bool AnyPeak(const PerMathType& v) {
  for (const auto& p : v) {
    if (p.has_value()) return true;
  }
  return false;
}

}  // namespace

absl::Status ValidateHardware(const Hardware& hw, std::string_view prefix) {
  const absl::string_view p = Av(prefix);
  if (hw.id.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(p, ".id must not be empty, got \"\""));
  }
  if (!IsKebab(hw.id)) {
    return absl::InvalidArgumentError(absl::StrCat(
        p, ".id must be lower-case kebab ([a-z0-9]+(-[a-z0-9]+)*), got \"",
        Av(std::string_view(hw.id).substr(0, 64)), "\""));
  }
  auto at = [p](absl::string_view field) {
    return [p, field] { return absl::StrCat(p, field); };
  };
  // No peak at all is valid: "compute roof unknown" (no source publishes
  // one). Analyze then bounds time by the memory roofs alone.
  RETURN_IF_ERROR(CheckPerMathType(prefix, ".peak_ops_per_second",
                                   hw.peak_ops_per_second, false));
  for (int i = 0; i < kMathTypeCount; ++i) {
    const auto& peak = hw.peak_ops_per_second[i];
    if (peak.has_value() && *peak < 1) {
      std::string name(MathTypeName(static_cast<MathType>(i)));
      std::replace(name.begin(), name.end(), '-', '_');
      RETURN_IF_ERROR(CheckAtLeastOne(
          absl::StrCat(p, ".peak_ops_per_second.", name), *peak, "op/s"));
    }
  }
  RETURN_IF_ERROR(CheckPerMathType(prefix, ".energy_joules_per_op",
                                   hw.energy_joules_per_op, true));
  RETURN_IF_ERROR(CheckPositiveLazy(at(".kernel_launch_seconds"),
                                    hw.kernel_launch_seconds, true));
  if (hw.compute_units.has_value() &&
      (*hw.compute_units < 1 || *hw.compute_units > 1'000'000)) {
    const std::string path = absl::StrCat(p, ".compute_units");
    return WithFieldPath(
        absl::InvalidArgumentError(absl::StrCat(
            path, ": must be in [1, 1000000], got ", *hw.compute_units)),
        path);
  }
  if (hw.last_level_cache_bytes.has_value()) {
    RETURN_IF_ERROR(CheckPositiveLazy(at(".last_level_cache_bytes"),
                                      *hw.last_level_cache_bytes, false));
  }
  if (hw.tiers.empty() || hw.tiers.size() > static_cast<size_t>(kMaxTiers)) {
    return absl::InvalidArgumentError(
        absl::StrCat(p, ".tiers must have between 1 and ", kMaxTiers,
                     " entries, got ", hw.tiers.size()));
  }
  for (size_t i = 0; i < hw.tiers.size(); ++i) {
    const MemoryTier& t = hw.tiers[i];
    auto tier_at = [p, i](absl::string_view field) {
      return
          [p, i, field] { return absl::StrCat(p, ".tiers[", i, "]", field); };
    };
    RETURN_IF_ERROR(
        CheckPositiveLazy(tier_at(".capacity_bytes"), t.capacity_bytes));
    RETURN_IF_ERROR(
        CheckPositiveLazy(tier_at(".read_bandwidth_bytes_per_second"),
                          t.read_bandwidth_bytes_per_second));
    RETURN_IF_ERROR(
        CheckPositiveLazy(tier_at(".write_bandwidth_bytes_per_second"),
                          t.write_bandwidth_bytes_per_second));
    RETURN_IF_ERROR(CheckPositiveLazy(tier_at(".latency_seconds"),
                                      t.latency_seconds, true));
    if (t.read_bandwidth_bytes_per_second < 1) {
      RETURN_IF_ERROR(CheckAtLeastOne(tier_at(".read_bandwidth_bytes_per_second")(),
                                      t.read_bandwidth_bytes_per_second, "B/s"));
    }
    if (t.write_bandwidth_bytes_per_second < 1) {
      RETURN_IF_ERROR(CheckAtLeastOne(tier_at(".write_bandwidth_bytes_per_second")(),
                                      t.write_bandwidth_bytes_per_second, "B/s"));
    }
    // Placement tries tiers in order: a slower tier before a faster one
    // would put operands in the wrong place.
    if (i > 0 && t.read_bandwidth_bytes_per_second >
                     hw.tiers[i - 1].read_bandwidth_bytes_per_second) {
      return absl::InvalidArgumentError(absl::StrCat(
          p, ".tiers[", i, "].read_bandwidth_bytes_per_second (",
          t.read_bandwidth_bytes_per_second, " B/s) must be <= tiers[", i - 1,
          "]'s (", hw.tiers[i - 1].read_bandwidth_bytes_per_second,
          " B/s): tiers are ordered fastest first"));
    }
    if (static_cast<int>(t.kind) >= kTierKindCount) {
      return absl::InvalidArgumentError(absl::StrCat(
          p, ".tiers[", i, "].kind must be in [0, ", kTierKindCount - 1,
          "], got ", static_cast<int>(t.kind)));
    }
    if (t.inline_ecc_share != 0) {
      RETURN_IF_ERROR(internal::CheckRange(tier_at(".inline_ecc_share")(),
                                 t.inline_ecc_share, ranges::kInlineEccShare));
    }
    if (t.energy_joules_per_byte.has_value()) {
      RETURN_IF_ERROR(CheckPositiveLazy(tier_at(".energy_joules_per_byte"),
                                        *t.energy_joules_per_byte, true));
    }
    if (t.near_memory_compute.has_value()) {
      const NearMemoryCompute& n = *t.near_memory_compute;
      RETURN_IF_ERROR(CheckPositiveLazy(
          tier_at(".near_memory_compute.internal_bandwidth_bytes_per_second"),
          n.internal_bandwidth_bytes_per_second));
      // Compute inside the memory sees at least the bandwidth the tier
      // offers outside it; less is a unit mistake.
      if (n.internal_bandwidth_bytes_per_second <
          t.read_bandwidth_bytes_per_second) {
        return absl::InvalidArgumentError(absl::StrCat(
            p, ".tiers[", i,
            "].near_memory_compute.internal_bandwidth_bytes_per_second must be "
            ">= the tier's read_bandwidth_bytes_per_second (",
            t.read_bandwidth_bytes_per_second, "), got ",
            n.internal_bandwidth_bytes_per_second));
      }
      // Rare (PIM tiers only): the prefix string is built here.
      const std::string np =
          absl::StrCat(p, ".tiers[", i, "].near_memory_compute");
      RETURN_IF_ERROR(CheckPerMathType(np, ".peak_ops_per_second",
                                       n.peak_ops_per_second, false));
      if (!AnyPeak(n.peak_ops_per_second)) {
        return absl::InvalidArgumentError(absl::StrCat(
            np,
            ".peak_ops_per_second must give at least one math type, got "
            "none"));
      }
      if (n.energy_joules_per_op.has_value()) {
        RETURN_IF_ERROR(CheckPositiveLazy(
            tier_at(".near_memory_compute.energy_joules_per_op"),
            *n.energy_joules_per_op, true));
      }
    }
  }
  if (hw.tdp_watts.has_value()) {
    RETURN_IF_ERROR(CheckPositiveLazy(at(".tdp_watts"), *hw.tdp_watts));
  }
  if (hw.idle_watts.has_value()) {
    RETURN_IF_ERROR(CheckPositiveLazy(at(".idle_watts"), *hw.idle_watts, true));
  }
  if (hw.price_usd.has_value()) {
    RETURN_IF_ERROR(CheckPositiveLazy(at(".price_usd"), *hw.price_usd, true));
  }
  if (hw.embodied_kg_co2e.has_value()) {
    RETURN_IF_ERROR(
        CheckPositiveLazy(at(".embodied_kg_co2e"), *hw.embodied_kg_co2e, true));
  }
  if (hw.interconnect_bytes_per_second.has_value()) {
    RETURN_IF_ERROR(CheckPositiveLazy(at(".interconnect_bytes_per_second"),
                                      *hw.interconnect_bytes_per_second));
  }
  if (hw.scale_up_latency_seconds.has_value()) {
    RETURN_IF_ERROR(CheckPositiveLazy(at(".scale_up_latency_seconds"),
                                      *hw.scale_up_latency_seconds));
  }
  if (hw.scale_out_bytes_per_second.has_value()) {
    RETURN_IF_ERROR(CheckPositiveLazy(at(".scale_out_bytes_per_second"),
                                      *hw.scale_out_bytes_per_second));
  }
  if (hw.scale_out_latency_seconds.has_value()) {
    RETURN_IF_ERROR(CheckPositiveLazy(at(".scale_out_latency_seconds"),
                                      *hw.scale_out_latency_seconds));
  }
  if (hw.devices_per_node.has_value()) {
    RETURN_IF_ERROR(internal::CheckIntRange(
        absl::StrCat(p, ".devices_per_node"), *hw.devices_per_node, 1,
        1048576));
  }
  return absl::OkStatus();
}

}  // namespace ridgeline::engine
