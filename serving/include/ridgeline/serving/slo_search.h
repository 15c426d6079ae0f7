// The highest Poisson request rate one replica serves within p90 TTFT and
// p90 TPOT targets, by bisection on the simulation.
#pragma once

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
};

// `base` supplies limits, lengths, request count, seed, caps and `stop`;
// its arrivals are replaced. `rate_ceiling` is an upper bound on the
// sustainable rate (the offline maximum request rate). Bisection stops at
// `relative_tolerance` of the bracket's upper end.
inline constexpr double kSloSearchTolerance = 0.02;
absl::StatusOr<MaxRate> MaxRateAtSlo(
    const StepCost& cost, const SimulationConfig& base, const Slo& slo,
    double rate_ceiling, double relative_tolerance = kSloSearchTolerance);

// The simulations of `base.requests` requests MaxRateAtSlo runs when the
// max rate lies within a factor 2 of the ceiling (a lower max rate adds one
// per halving; an SLO missed by one client stops after one): the one at
// the ceiling, ceil(log2(1 / tolerance)) bisections, and one more counted
// for the concurrency-1 probe (at most 64 requests). The estimate of a
// Plan's cost (service/) counts these plus the sizing run.
int SloSearchSimulations(double relative_tolerance = kSloSearchTolerance);

}  // namespace ridgeline::serving
