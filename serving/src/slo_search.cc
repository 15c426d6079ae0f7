#include "ridgeline/serving/slo_search.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/status_macros.h"

namespace ridgeline::serving {

absl::Status ValidateSlo(const Slo& slo) {
  auto check = [](const char* field, double v) -> absl::Status {
    if (v > 0 && v <= 3600) return absl::OkStatus();
    return engine::WithFieldPath(
        absl::InvalidArgumentError(absl::StrCat(
            "slo.", field, ": must be in (0, 3600] seconds; got ", v)),
        absl::StrCat("slo.", field));
  };
  RETURN_IF_ERROR(check("ttft_p90_seconds", slo.ttft_p90_seconds));
  return check("tpot_p90_seconds", slo.tpot_p90_seconds);
}

int SloSearchSimulations(double relative_tolerance) {
  return 2 + static_cast<int>(std::ceil(std::log2(1 / relative_tolerance)));
}

int64_t SteadyStateRequests(int64_t requests, int64_t max_concurrency) {
  const int64_t turnovers =
      std::min(max_concurrency, kMaxRequests / kSteadyStateTurnovers) *
      kSteadyStateTurnovers;
  return std::clamp<int64_t>(std::max(requests, turnovers), 1, kMaxRequests);
}

std::string StabilityNote(double max_utilization) {
  return absl::StrFormat(
      "stability: each replica is loaded to at most %.0f%% of its offline "
      "maximum rate; every run simulates at least %d turnovers of the "
      "running batch, and a run whose waiting backlog grows (second half of "
      "the arrivals > %.1f x the first + %.0f requests) does not meet the SLO",
      100 * max_utilization, static_cast<int>(kSteadyStateTurnovers),
      kBacklogGrowthFactor, kBacklogSlackRequests);
}

bool MeetsSlo(const SimulationResult& r, const Slo& slo) {
  return r.stable && r.ttft.p90 <= slo.ttft_p90_seconds &&
         r.tpot.p90 <= slo.tpot_p90_seconds;
}

absl::StatusOr<MaxRate> MaxRateAtSlo(const StepCost& cost,
                                     const SimulationConfig& base,
                                     const Slo& slo, double rate_ceiling,
                                     double relative_tolerance,
                                     double max_utilization) {
  RETURN_IF_ERROR(ValidateSlo(slo));
  if (!(rate_ceiling > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("rate_ceiling: must be > 0; got ", rate_ceiling));
  }
  if (!(max_utilization > 0 && max_utilization <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_utilization: must be in (0, 1]; got ", max_utilization));
  }
  MaxRate out;
  // The lightest load: one request at a time.
  // Requests of their own (a trace's) are kept, in order, re-timed.
  auto retimed = [&](Arrivals::Kind kind, size_t n) {
    Arrivals a = FirstRequests(base.arrivals, n);
    a.kind = kind;
    a.times.clear();
    return a;
  };
  SimulationConfig c = base;
  c.requests = std::min<int64_t>(base.requests, 64);
  c.arrivals = retimed(Arrivals::Kind::kConcurrency, 64);
  c.arrivals.concurrency = 1;
  ASSIGN_OR_RETURN(out.best, Simulate(cost, c));
  ++out.simulations;
  if (!MeetsSlo(out.best, slo)) {
    out.why = absl::StrFormat(
        "SLO unreachable even at concurrency 1: best p90 TTFT %.1f ms "
        "(target %.1f), p90 TPOT %.2f ms (target %.2f)",
        out.best.ttft.p90 * 1e3, slo.ttft_p90_seconds * 1e3,
        out.best.tpot.p90 * 1e3, slo.tpot_p90_seconds * 1e3);
    return out;
  }
  c = base;
  c.arrivals = retimed(Arrivals::Kind::kPoisson, SIZE_MAX);
  auto run = [&](double rate) -> absl::StatusOr<SimulationResult> {
    c.arrivals.rate = rate;
    ++out.simulations;
    absl::StatusOr<SimulationResult> r = Simulate(cost, c);
    if (r.ok() && !r->stable) ++out.unstable_runs;
    return r;
  };
  double lo = 0, hi = std::max(max_utilization * rate_ceiling, kMinRate);
  // The margin's ceiling itself may meet the SLO.
  ASSIGN_OR_RETURN(SimulationResult top, run(hi));
  if (MeetsSlo(top, slo)) {
    out.reachable = true;
    out.max_rate = hi;
    out.at_max = top;
    return out;
  }
  SimulationResult at_lo;
  bool have_lo = false;
  // Never below the lowest rate a simulation takes.
  while (hi - lo > relative_tolerance * hi && 0.5 * (lo + hi) >= kMinRate) {
    const double mid = 0.5 * (lo + hi);
    ASSIGN_OR_RETURN(SimulationResult r, run(mid));
    if (MeetsSlo(r, slo)) {
      lo = mid;
      at_lo = r;
      have_lo = true;
    } else {
      hi = mid;
    }
  }
  if (!have_lo) {
    // Rates down to the tolerance fail while one client passes: serve at
    // the lowest probed rate's neighbourhood, reported as the best.
    ASSIGN_OR_RETURN(at_lo,
                     run(std::max({lo, relative_tolerance * hi, kMinRate})));
    if (!MeetsSlo(at_lo, slo)) {
      out.why = absl::StrCat(
          "SLO met by one client at a time but by no Poisson rate",
          out.unstable_runs > 0
              ? absl::StrCat(" (", out.unstable_runs,
                             " rates had a growing backlog)")
              : "");
      return out;
    }
    lo = c.arrivals.rate;
  }
  out.reachable = true;
  out.max_rate = lo;
  out.at_max = at_lo;
  return out;
}

}  // namespace ridgeline::serving
