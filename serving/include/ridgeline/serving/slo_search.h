// The highest Poisson request rate one replica serves within p90 TTFT and
// p90 TPOT targets, by bisection on the simulation.
//
// Stability before percentiles (docs/serving.md "Stability"): a rate meets
// the SLO only when
//   1. it is at most kMaxUtilization of the replica's offline maximum rate
//      (the margin keeps the queue away from saturation, where a run's
//      percentiles depend on its length: at 99 % of the maximum a queue
//      grows for thousands of requests before it settles, if it does);
//   2. its run is long enough to reach steady state: every search run
//      simulates at least SteadyStateRequests(max concurrency) requests
//      (kSteadyStateTurnovers times the running batch turned over);
//   3. that run's backlog does not grow (SimulationResult::stable,
//      stability.h), and its p90 TTFT and TPOT meet the targets.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "ridgeline/serving/simulate.h"

namespace ridgeline::serving {

struct Slo {
  double ttft_p90_seconds = 1;  // > 0
  double tpot_p90_seconds = 0.05;
};
// INVALID_ARGUMENT naming "slo.ttft_p90_seconds" / "slo.tpot_p90_seconds".
absl::Status ValidateSlo(const Slo& slo);

// The margin against the offline maximum rate: a replica is loaded to at
// most 90 % of it.
inline constexpr double kMaxUtilization = 0.9;
// Runs simulate at least this many turnovers of the running batch.
inline constexpr int64_t kSteadyStateTurnovers = 16;

// max(requests, kSteadyStateTurnovers x max_concurrency), at most
// kMaxRequests: the request count of a run that reaches steady state on a
// replica (one attention rank) running up to `max_concurrency` sequences.
int64_t SteadyStateRequests(int64_t requests, int64_t max_concurrency);

// One sentence on how stability is decided, for a plan's notes.
std::string StabilityNote(double max_utilization);

// Stable, and both p90 targets met.
bool MeetsSlo(const SimulationResult& r, const Slo& slo);

struct MaxRate {
  // False when even one request at a time misses the SLO; `best` then holds
  // that lightest load's latencies (the best achievable).
  bool reachable = false;
  double max_rate = 0;       // requests/s per replica (0 when unreachable)
  SimulationResult at_max;   // the simulation at max_rate
  SimulationResult best;     // one client at a time (concurrency 1)
  int simulations = 0;
  std::string why;           // when !reachable: which target, by how much
  int unstable_runs = 0;     // search runs rejected for a growing backlog
};

// `base` supplies limits, lengths, request count, seed, caps and `stop`;
// its arrivals are replaced (callers size base.requests with
// SteadyStateRequests). `rate_ceiling` is the replica's offline maximum
// request rate; the search never goes above max_utilization x rate_ceiling.
// Bisection stops at `relative_tolerance` of the bracket's upper end.
inline constexpr double kSloSearchTolerance = 0.02;
absl::StatusOr<MaxRate> MaxRateAtSlo(
    const StepCost& cost, const SimulationConfig& base, const Slo& slo,
    double rate_ceiling, double relative_tolerance = kSloSearchTolerance,
    double max_utilization = kMaxUtilization);

// The simulations of `base.requests` requests MaxRateAtSlo runs when the
// max rate lies within a factor 2 of the ceiling (a lower max rate adds one
// per halving; an SLO missed by one client stops after one): the one at
// the ceiling, ceil(log2(1 / tolerance)) bisections, and one more counted
// for the concurrency-1 probe (at most 64 requests). The estimate of a
// Plan's cost (service/) counts these plus the sizing run.
int SloSearchSimulations(double relative_tolerance = kSloSearchTolerance);

}  // namespace ridgeline::serving
