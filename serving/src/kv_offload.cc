#include "ridgeline/serving/kv_offload.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/status_macros.h"

namespace ridgeline::serving {

absl::StatusOr<KvOffload> ParseKvOffload(std::string_view name) {
  if (name == "off") return KvOffload::kOff;
  if (name == "host") return KvOffload::kHost;
  if (name == "all") return KvOffload::kAll;
  return engine::WithFieldPath(
      absl::InvalidArgumentError(
          absl::StrCat("serving.kv_offload: must be off, host or all; got \"",
                       std::string(name), "\"")),
      "serving.kv_offload");
}

std::string_view KvOffloadName(KvOffload mode) {
  switch (mode) {
    case KvOffload::kOff:
      return "off";
    case KvOffload::kHost:
      return "host";
    case KvOffload::kAll:
      return "all";
  }
  return "off";
}

std::vector<OffloadTier> OffloadTiers(const engine::Hardware& hw,
                                      KvOffload mode, double kv_bytes_per_token,
                                      int64_t block_size) {
  std::vector<OffloadTier> out;
  if (mode == KvOffload::kOff || !(kv_bytes_per_token > 0)) return out;
  for (const engine::MemoryTier& t : hw.tiers) {
    const bool host = t.kind == engine::TierKind::kHostLink;
    const bool flash = t.kind == engine::TierKind::kFlash;
    if (!host && !(flash && mode == KvOffload::kAll)) continue;
    if (!(t.capacity_bytes > 0) || !(t.read_bandwidth_bytes_per_second > 0)) {
      continue;
    }
    OffloadTier o;
    o.name = t.name;
    const auto blocks =
        static_cast<int64_t>(t.capacity_bytes / kv_bytes_per_token /
                             static_cast<double>(block_size));
    o.capacity_tokens = blocks * block_size;
    o.seconds_per_token =
        kv_bytes_per_token / t.read_bandwidth_bytes_per_second;
    if (t.write_bandwidth_bytes_per_second > 0) {
      o.write_seconds_per_token =
          kv_bytes_per_token / t.write_bandwidth_bytes_per_second;
    }
    o.latency_seconds = t.latency_seconds;
    if (o.capacity_tokens > 0) out.push_back(std::move(o));
  }
  return out;
}

absl::StatusOr<RecomputeCost> EstimateRecomputeCost(const StepCost& cost,
                                                    int64_t chunk,
                                                    int64_t context) {
  chunk = std::max<int64_t>(chunk, 2);
  context = std::max<int64_t>(context, 1);
  auto time = [&](int64_t ctx, int64_t tokens) -> absl::StatusOr<double> {
    const std::array<SequenceInStep, 1> step{SequenceInStep{ctx, tokens}};
    ASSIGN_OR_RETURN(StepTime t, cost.Time(step));
    return t.seconds;
  };
  ASSIGN_OR_RETURN(const double one, time(0, 1));
  ASSIGN_OR_RETURN(const double full, time(0, chunk));
  ASSIGN_OR_RETURN(const double later, time(context, chunk));
  RecomputeCost r;
  const double n = static_cast<double>(chunk);
  r.per_token = std::max(0.0, (full - one) / (n - 1));
  r.per_token_per_context =
      std::max(0.0, (later - full) / (n * static_cast<double>(context)));
  return r;
}

}  // namespace ridgeline::serving
