// Sizing disaggregated deployments (docs/serving.md "Disaggregated
// pools"): a prefill pool and a decode pool, each its own part and tensor
// parallelism, the KV cache of every request shipped from its prefill
// replica to a decode replica over the link between them.
//
// - Prefill replica: the serving simulation of prompts that generate one
//   token (its first), its max rate at the TTFT target less the KV
//   transfer (slo_search.h: the same utilisation margin and stability
//   rules as an aggregated replica).
// - Decode replica: the simulation of the remaining generated - 1 tokens of
//   requests whose prompt is already in the KV cache (every step sees each
//   sequence at prompt + its own context), admitted as its KV cache holds
//   whole requests; its max rate at the TPOT target.
// - KV transfer: KvElementsPerToken x kv-format bytes x the p90 prompt,
//   over the pools' scale-up link when both run on one part (in one node),
//   else their scale-out link; bytes / (min(TP_p, TP_d) x one direction of
//   the per-device bandwidth) + latency, sent after the prefill (no layer
//   overlap). An unknown bandwidth makes the pair infeasible.
// - P:D: P = ceil(rate / prefill max rate), D likewise; a deployment is k
//   copies of a P:D unit with P, D <= max_pool_replicas, the cheapest k, P, D
//   that cover both.
// The served-load runs (rate / P per prefill replica, rate / D per decode
// replica) give the p90s: TTFT = prefill p90 + transfer p90, TPOT = decode
// p90, e2e = their sum with the decode run's e2e (sums of p90s: an upper
// bound on the joint p90).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ridgeline/engine/scenario.h"
#include "ridgeline/serving/plan.h"

namespace ridgeline::serving {

// The link a request's KV cache crosses from a prefill replica to a decode
// replica. (Named Pool* so it does not collide with servecore's
// serving/kv_transfer.h, which should replace these four once both
// branches are merged: one place per formula.)
struct PoolKvLink {
  bool known = false;
  std::string why;   // when !known: which figure is missing, for which part
  std::string name;  // "scale-up" or "scale-out"
  // One direction, the min(TP_p, TP_d) device pairs together.
  double bytes_per_second = 0;
  double latency_seconds = 0;  // one-way; 0 when no source gives it
  bool latency_known = false;
};
PoolKvLink PoolKvLinkBetween(const engine::Scenario& prefill,
                             const engine::Scenario& decode);

// Bytes of `tokens` tokens of KV cache (the whole model, every layer) in
// the scenario's KV format.
double PoolKvBytes(const engine::Scenario& s, int64_t tokens);

// Seconds to ship `bytes` over `link` (known).
double PoolKvTransferSeconds(const PoolKvLink& link, double bytes);

// The p-quantile (0..1] of a length distribution (nearest rank).
int64_t LengthQuantile(const LengthDistribution& d, double p);

// Every prefill pool x decode pool of the same formats, sized as above;
// appended to `out`. `simulations` counts the runs; a DEADLINE_EXCEEDED
// from `in.stop` is returned, a pair's own failure is its row's why.
absl::Status PlanDisaggregated(const PlanInput& in,
                               std::atomic<int>* simulations,
                               std::vector<Deployment>* out);

}  // namespace ridgeline::serving
