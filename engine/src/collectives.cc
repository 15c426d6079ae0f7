// Collective times by link level; the formulas are stated in collectives.h.
#include "collectives.h"

#include <algorithm>
#include <cmath>

namespace ridgeline::engine::internal {

Link LinkFor(const Hardware& hw, int64_t group) {
  Link l;
  const bool spans_nodes =
      hw.devices_per_node.has_value() && group > *hw.devices_per_node;
  if (spans_nodes) {
    l.scale_out = true;
    l.bytes_per_second = hw.scale_out_bytes_per_second.value_or(0);
    l.latency_seconds = hw.scale_out_latency_seconds.value_or(0);
  } else {
    l.bytes_per_second = hw.interconnect_bytes_per_second.value_or(0);
    l.latency_seconds = hw.scale_up_latency_seconds.value_or(0);
  }
  return l;
}

namespace {
// One direction of the link; 0 when unknown.
double PerDirection(const Link& l) { return l.bytes_per_second / 2; }
}  // namespace

double RingAllReduceSeconds(double bytes, int64_t group, const Link& link) {
  const double b = PerDirection(link);
  if (group <= 1 || b <= 0) return 0;
  const double g = static_cast<double>(group);
  return 2 * (g - 1) / g * bytes / b + 2 * (g - 1) * link.latency_seconds;
}

double TreeAllReduceSeconds(double bytes, int64_t group, const Link& link) {
  const double b = PerDirection(link);
  if (group <= 1 || b <= 0) return 0;
  const double depth = std::ceil(std::log2(static_cast<double>(group)));
  return 2 * bytes / b + 2 * depth * link.latency_seconds;
}

double AllReduceSeconds(double bytes, int64_t group, const Link& link) {
  return std::min(RingAllReduceSeconds(bytes, group, link),
                  TreeAllReduceSeconds(bytes, group, link));
}

double AllToAllSeconds(double bytes_sent, int64_t group, const Link& link) {
  const double b = PerDirection(link);
  if (group <= 1 || b <= 0) return 0;
  return bytes_sent / b +
         static_cast<double>(group - 1) * link.latency_seconds;
}

double SendSeconds(double bytes, const Link& link) {
  const double b = PerDirection(link);
  if (b <= 0) return 0;
  return bytes / b + link.latency_seconds;
}

double CollectiveSeconds(Collective kind, double bytes, int64_t group,
                         const Link& link) {
  switch (kind) {
    case Collective::kNone:
      return 0;
    case Collective::kAllReduce:
      return AllReduceSeconds(bytes, group, link);
    case Collective::kAllToAll:
      return AllToAllSeconds(bytes, group, link);
    case Collective::kSend:
      return SendSeconds(bytes, link);
  }
  return 0;
}

}  // namespace ridgeline::engine::internal
