// Collectives between devices: which link level a group crosses and how
// long a collective takes on it. One place for these formulas; the
// roofline times interconnect ops with them. Internal to the engine.
//
// Conventions (stated once):
// - A link's bandwidth is per device, both directions together (as NVLink's
//   900 GB/s on H100), so one direction carries B = bandwidth / 2.
// - A group of g devices stays on the scale-up link (NVLink, Infinity
//   Fabric) when it fits in one node (g <= devices_per_node, or the node
//   size is unknown); otherwise it spans nodes and runs at the scale-out
//   link (InfiniBand, RoCE, Ethernet): a ring or tree over several nodes
//   is as fast as its slowest hop.
// - alpha is the link's one-way latency per step (0 when unknown).
// - Ring all-reduce of N bytes: reduce-scatter then all-gather, 2 (g - 1)
//   steps each moving N / g: 2 (g - 1) / g * N / B + 2 (g - 1) alpha.
// - Tree all-reduce (double binary tree, pipelined): every byte goes up
//   and down a tree once: 2 N / B + 2 ceil(log2 g) alpha.
// - An all-reduce takes the faster of the two (as NCCL picks its
//   algorithm): ring for large buffers, tree when latency dominates.
// - All-to-all where each device sends S bytes in all to the others and
//   receives as much: pairwise exchange in g - 1 steps, S / B +
//   (g - 1) alpha.
// - Point-to-point send of N bytes (pipeline stages): N / B + alpha.
// An unknown bandwidth makes every collective on that link cost 0 (the
// result stays an upper bound on speed; the analysis warns).
#pragma once

#include <cstdint>

#include "ridgeline/engine/hardware.h"

namespace ridgeline::engine::internal {

enum class Collective : uint8_t { kNone = 0, kAllReduce, kAllToAll, kSend };

struct Link {
  double bytes_per_second = 0;  // both directions; 0 = unknown
  double latency_seconds = 0;   // one-way per step; 0 = unknown
  bool scale_out = false;
};

// The link a group of `group` devices crosses.
Link LinkFor(const Hardware& hw, int64_t group);

double RingAllReduceSeconds(double bytes, int64_t group, const Link& link);
double TreeAllReduceSeconds(double bytes, int64_t group, const Link& link);
// min(ring, tree).
double AllReduceSeconds(double bytes, int64_t group, const Link& link);
// `bytes_sent`: what one device sends to all the others together.
double AllToAllSeconds(double bytes_sent, int64_t group, const Link& link);
double SendSeconds(double bytes, const Link& link);
// One call of `kind` with `bytes` (all-reduce: the buffer; all-to-all: what
// one device sends; send: the message) over `group` devices.
double CollectiveSeconds(Collective kind, double bytes, int64_t group,
                         const Link& link);

}  // namespace ridgeline::engine::internal
