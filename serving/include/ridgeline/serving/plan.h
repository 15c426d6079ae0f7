// Capacity planning: for a traffic (rate, lengths) and SLOs, every
// candidate deployment (hardware x tensor / pipeline / expert parallelism x
// formats x calibration) is sized by the serving simulation: the max rate one
// replica serves at the SLO, the replicas the traffic needs, and what that
// costs in dollars, joules and carbon per output token.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ridgeline/engine/scenario.h"
#include "ridgeline/serving/candidates.h"
#include "ridgeline/serving/capacity.h"
#include "ridgeline/serving/simulate.h"
#include "ridgeline/serving/slo_search.h"

namespace ridgeline::serving {

struct Traffic {
  double rate = 1;  // requests/s over all replicas, > 0
  LengthDistribution prompt = LengthDistribution::Fixed(2048);
  LengthDistribution generated = LengthDistribution::Fixed(512);
  // Every prompt starts with the same this many tokens (a system prompt);
  // with prefix caching, computed once per replica (SimulationConfig's).
  int64_t shared_prefix_tokens = 0;
  // Multi-turn sessions (SimulationConfig's): `rate` then starts sessions,
  // each sending sessions.turns requests whose prompts carry the history;
  // a session stays on one replica.
  Sessions sessions;
  // A trace's requests with their own lengths (plan --trace, trace.h):
  // kept in order with their content and re-timed as Poisson arrivals at
  // the searched rate. Each run replays the first min(their number,
  // SteadyStateRequests) of them, and each replica is taken to see the
  // trace's reuse (requests sharing a prefix routed together). Set by
  // SetTraceRequests; none: trace.own_requests() == 0.
  Arrivals trace;
};
// `requests` (a trace's, with their lengths) as the traffic's: `prompt`
// and `generated` become the empirical distributions of their lengths (the
// plan's means, quantiles and costs use them), their times are dropped.
void SetTraceRequests(Arrivals requests, Traffic* traffic);
// Requests per second of the traffic: rate x turns.
inline double RequestRate(const Traffic& t) {
  return t.rate * static_cast<double>(t.sessions.turns);
}
// The mean prompt of a request and the mean of it a replica's prefix cache
// holds at its admission (caching off: 0): with sessions, turn k of n
// carries k x (prompt + generated) tokens of history, cached in whole
// blocks, on top of its new prompt; a trace's requests, what an infinite
// cache would hold of each (IdealHitTokens, whole blocks); otherwise the
// shared prefix (CachedSharedPrefixTokens). Taken to fit in the cache: an
// upper bound the simulation checks.
struct MeanPrompt {
  int64_t tokens = 0;
  int64_t cached = 0;
};
MeanPrompt MeanPromptOf(const Traffic& t, bool prefix_caching,
                        int64_t block_size);

// One deployment shape to size. The scenario holds model, hardware,
// precision, parallelism (one replica's: data_parallel is ignored),
// efficiency (calibration) and economics (with the part's price overrides:
// engine/prices.h); its workload is ignored.
struct Candidate {
  engine::Scenario scenario;
  std::string formats;  // label, "weights/activations/kv", e.g. "fp8/fp8/fp8"
  std::string profile_fallback;  // as Deployment::profile_fallback
};

struct PlanInput {
  Traffic traffic;
  Slo slo;
  ServingConfig serving;
  std::vector<Candidate> candidates;  // aggregated (one replica shape each)
  // Disaggregated pools (one replica shape each: TP, one stage): every
  // prefill pool is paired with every decode pool of the same formats.
  // candidates + prefill_pools + decode_pools: 1..kMaxPlanCandidates.
  std::vector<Candidate> prefill_pools;
  std::vector<Candidate> decode_pools;
  // The largest P and D of a P:D unit (candidates.h), 1..64.
  int64_t max_pool_replicas = kDefaultMaxPoolReplicas;
  // Per simulation, 1..100000: at least; runs are lengthened to reach
  // steady state (SteadyStateRequests).
  int64_t requests = 600;
  // The utilisation margin (slo_search.h): a replica is loaded to at most
  // this share of its offline maximum rate; [0.1, 1].
  double max_utilization = kMaxUtilization;
  uint64_t seed = 1;
  std::function<bool()> stop;  // deadline / cancellation; may be empty
  // Candidate-space warnings (a profile extrapolated to a shape it was not
  // fitted on), once each; the caller shows them with the plan.
  std::vector<std::string> warnings;
};
inline constexpr int64_t kMaxPlanRequests = 100000;

struct Deployment {
  std::string hardware_id;
  int64_t tensor_parallel = 1;
  int64_t pipeline_parallel = 1;
  // > 1: attention data-parallel over these devices, experts spread.
  int64_t expert_parallel = 1;
  std::string formats;
  std::string profile;  // calibration profile, "" = pure roofline
  // "roofline" when the framework asked for has no profile for this
  // hardware and the request asked for the pure roofline instead; "".
  std::string profile_fallback;
  bool feasible = false;  // fits and the SLO is reachable
  bool meets_slo = false;  // stable, and both p90 targets met
  std::string why;        // when infeasible (or unstable at the served load)
  // The served-load run's queue did not grow (SimulationResult::stable).
  bool stable = false;
  int64_t simulated_requests = 0;  // per run (SteadyStateRequests)
  int64_t replicas = 0;
  // replicas x engine::ReplicaDevices: pipeline_parallel x
  // max(tensor_parallel, expert_parallel).
  int64_t devices = 0;
  double max_rate_per_replica = 0;
  // At the served load (traffic.rate / replicas per replica); when
  // infeasible because of the SLO: the best achievable (one client).
  double ttft_p90_seconds = 0;
  double tpot_p90_seconds = 0;
  double e2e_p90_seconds = 0;
  double ttft_headroom = 0;  // 1 - p90 / target; >= 0 when met
  double tpot_headroom = 0;
  int64_t max_concurrency = 0;
  int64_t kv_capacity_tokens = 0;
  double offline_output_tokens_per_second = 0;  // one replica at full load
  std::string limiting_resource;                // of that steady state
  std::optional<double> usd_per_mtoken;
  // engine::CostBasisName: "rental" (per device-hour), "purchase" (price
  // amortised + electricity) or "energy-only" (no device price known).
  std::string cost_basis;
  std::string price_source;
  std::optional<double> joules_per_token;    // board power x time
  std::optional<double> g_co2e_per_mtoken;
  bool pareto = false;  // on the cost / e2e p90 front
  // Calibrated deployments: the devices the same deployment needs on the
  // pure roofline (the bound: a lower bound on devices), 0 when it is the
  // pure roofline itself or the bound does not meet the SLO either.
  int64_t bound_devices = 0;
  // Set when devices > kBoundDevicesWarnFactor x bound_devices: how far
  // from the bound and why (the profile's offline maximum and SLO rate
  // against the bound's).
  std::string bound_warning;

  // Disaggregated deployments (disaggregated_plan.h); aggregated ones leave
  // these empty. hardware_id is "<prefill>+<decode>" (one id when both
  // pools run on one part), tensor_parallel 0, replicas and devices the
  // totals, max_rate_per_replica 0.
  bool disaggregated = false;
  std::string prefill_hardware_id;
  int64_t prefill_tensor_parallel = 0;
  int64_t prefill_replicas = 0;
  std::string decode_hardware_id;
  int64_t decode_tensor_parallel = 0;
  int64_t decode_replicas = 0;
  std::optional<double> kv_transfer_p90_seconds;  // in ttft_p90_seconds
  std::string kv_link;                            // "scale-up" or "scale-out"
  double prefill_max_rate_per_replica = 0;
  double decode_max_rate_per_replica = 0;
};
// A calibrated answer further than this from the bound's device count says
// why (issue 21).
inline constexpr double kBoundDevicesWarnFactor = 3;

struct PlanResult {
  // Feasible first, by $/Mtoken (unknown last); then the infeasible ones.
  std::vector<Deployment> deployments;
  std::vector<int> pareto;  // indices into deployments, by cost
  // The cheapest, with its cost basis spelled out; says when the ranked
  // deployments are priced on different bases, and when the cheapest is a
  // pure-roofline bound.
  std::string headline;
  int simulations = 0;
  // One per deployment meeting the SLO with a bound_warning, cheapest first
  // ("<hardware> <shape> <formats>: <bound_warning>").
  std::vector<std::string> warnings;
};

// INVALID_ARGUMENT naming the field (traffic.rate, slo.*, candidates,
// simulation.requests, serving.*); DEADLINE_EXCEEDED when `stop`
// says so. A candidate's own failure (does not fit, engine UNIMPLEMENTED)
// is reported in its Deployment, not as an error.
// Plan's checks of `input` alone (the same errors), for callers that check
// before estimating its cost.
absl::Status ValidatePlanInput(const PlanInput& input);

absl::StatusOr<PlanResult> Plan(const PlanInput& input);

// Candidates Plan sizes at once (one thread each): min(candidates, cores).
int64_t PlanThreads(size_t candidates);

// The economics of `devices` devices serving `output_tokens_per_second`
// at the device price engine::DevicePriceOf gives (Plan uses it).
struct Costs {
  std::optional<double> usd_per_mtoken;
  std::string cost_basis;
  std::string price_source;
  std::optional<double> joules_per_token;
  std::optional<double> g_co2e_per_mtoken;
};
Costs CostOf(const engine::Hardware& hw, const engine::Economics& econ,
             int64_t devices, double output_tokens_per_second);

}  // namespace ridgeline::serving
