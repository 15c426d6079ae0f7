// The KV transfer of disaggregated serving: a request's KV cache goes from
// the prefill replica that computed it to the decode replica that continues
// it, over the link between the two (scale-up inside a node, scale-out
// between nodes), from the plugins' link figures (engine::Hardware, ABI
// 1.2). The rule (docs/serving.md, "KV transfer"):
//
//   link   same part and both replicas' devices inside one node -> scale-up
//          (interconnect_bytes_per_second, scale_up_latency_seconds); else
//          scale-out (scale_out_bytes_per_second, scale_out_latency_seconds).
//          Different parts never share a node. A node's size unknown
//          (devices_per_node unset) is the engine's convention: one node.
//   wire   every device sends its own KV shard and every receiving device
//          takes its own over its own link, one direction (half the
//          figure, which counts both directions together, as the engine's
//          collectives do): wire = max(sent per prefill device / (bw_p / 2),
//          received per decode device / (bw_d / 2)).
//   time   kAfterPrefill: latency + wire, after the prefill's last layer.
//          kLayerwise: layer l's KV leaves once layer l is computed, so only
//          max(wire / L, wire - prefill x (L - 1) / L) + latency shows.
//
// A bandwidth no source gives stays unknown: the pair is infeasible with
// the reason, never guessed. An unknown latency (no in-tree plugin states
// one) counts 0 and is flagged, so the time stays a lower bound, like every
// roofline figure. Plain functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "ridgeline/engine/hardware.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::serving {

// One side of the transfer: a replica's part and the devices that hold
// (prefill) or will hold (decode) shards of the request's KV.
struct KvEndpoint {
  const engine::Hardware* hardware = nullptr;  // not owned; non-null
  int64_t devices = 1;                         // >= 1
};

enum class KvLinkLevel { kScaleUp, kScaleOut };
std::string_view KvLinkLevelName(KvLinkLevel level);  // "scale-up", "scale-out"

// The link a prefill replica and a decode replica talk over.
struct KvLink {
  bool known = false;
  std::string unknown_reason;  // why not, when !known (names the field)
  KvLinkLevel level = KvLinkLevel::kScaleUp;
  // One direction, per device (half the plugin's both-directions figure).
  double prefill_device_bytes_per_second = 0;
  double decode_device_bytes_per_second = 0;
  // One-way; the larger of the two ends' figures. 0 with latency_known
  // false when neither end states it.
  double latency_seconds = 0;
  bool latency_known = false;
};

KvLink KvLinkBetween(const KvEndpoint& prefill, const KvEndpoint& decode);

enum class KvOverlap { kAfterPrefill, kLayerwise };
// "after-prefill" or "layerwise".
std::string_view KvOverlapName(KvOverlap overlap);
absl::StatusOr<KvOverlap> ParseKvOverlap(std::string_view name);

// One request's transfer.
struct KvTransferWork {
  double bytes_per_prefill_device = 0;  // the request's KV shard on each sender
  double bytes_per_decode_device = 0;   // ... on each receiver
  double prefill_seconds = 0;  // its prefill's compute (kLayerwise only)
  int64_t layers = 1;          // >= 1 (kLayerwise only)
  KvOverlap overlap = KvOverlap::kAfterPrefill;
};

// Seconds from the prefill's end until the KV is on the decode replica.
// `link.known` must be true.
double KvTransferSeconds(const KvLink& link, const KvTransferWork& work);

// The KV bytes each device of `scenario` (its model, KV format and
// parallelism) holds for one sequence of `tokens` tokens: the engine's
// footprint (sliding windows and replicated KV heads included).
absl::StatusOr<double> KvBytesPerDevice(const engine::Scenario& scenario,
                                        int64_t tokens);

}  // namespace ridgeline::serving
