#include "ridgeline/serving/plan.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/prices.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/explore/pareto.h"
#include "ridgeline/serving/disaggregated_plan.h"
#include "ridgeline/serving/engine_step_cost.h"
#include "ridgeline/serving/throughput.h"
#include "ridgeline/serving/trace.h"

namespace ridgeline::serving {
namespace {

constexpr double kSecondsPerYear = 365.25 * 24 * 3600;
constexpr double kJoulesPerKwh = 3.6e6;

absl::Status Bad(absl::string_view field, absl::string_view range,
                 absl::string_view got) {
  return engine::WithFieldPath(
      absl::InvalidArgumentError(
          absl::StrCat(field, ": must be ", range, "; got ", got)),
      std::string_view(field.data(), field.size()));
}

absl::Status CheckInput(const PlanInput& in) {
  if (!(in.traffic.rate >= kMinRate && in.traffic.rate <= kMaxRate)) {
    return Bad("traffic.rate", kRateRange,
               absl::StrCat(in.traffic.rate));
  }
  RETURN_IF_ERROR(ValidateSlo(in.slo));
  RETURN_IF_ERROR(ValidateServingConfig(in.serving));
  const size_t n =
      in.candidates.size() + in.prefill_pools.size() + in.decode_pools.size();
  if (n == 0 || n > static_cast<size_t>(kMaxPlanCandidates)) {
    return Bad("candidates",
               absl::StrCat("1..", kMaxPlanCandidates,
                            " deployments and pools (hardware x "
                            "tensor_parallel x pipeline_parallel x "
                            "expert_parallel x formats, plus prefill and "
                            "decode pools)"),
               absl::StrCat(n));
  }
  if (in.prefill_pools.empty() != in.decode_pools.empty()) {
    return Bad("candidates", "prefill pools and decode pools, both or neither",
               absl::StrCat(in.prefill_pools.size(), " prefill and ",
                            in.decode_pools.size(), " decode pools"));
  }
  if (in.max_pool_replicas < 1 ||
      in.max_pool_replicas > kMaxPoolReplicasLimit) {
    return Bad("candidates.max_pool_replicas",
               absl::StrCat("in [1, ", kMaxPoolReplicasLimit, "]"),
               absl::StrCat(in.max_pool_replicas));
  }
  if (in.requests < 1 || in.requests > kMaxPlanRequests) {
    return Bad("simulation.requests", "in [1, 100000]",
               absl::StrCat(in.requests));
  }
  if (!(in.max_utilization >= 0.1 && in.max_utilization <= 1)) {
    return Bad("max_utilization", "in [0.1, 1]",
               absl::StrCat(in.max_utilization));
  }
  // Lengths are checked by the simulation's own rules (same field names).
  SimulationConfig probe;
  probe.limits.kv_capacity_tokens = 1;
  probe.arrivals.rate = in.traffic.rate;
  probe.prompt = in.traffic.prompt;
  probe.generated = in.traffic.generated;
  probe.shared_prefix_tokens = in.traffic.shared_prefix_tokens;
  probe.sessions = in.traffic.sessions;
  probe.arrivals.prompt_tokens = in.traffic.trace.prompt_tokens;
  probe.arrivals.generated_tokens = in.traffic.trace.generated_tokens;
  probe.arrivals.content = in.traffic.trace.content;
  return ValidateSimulationConfig(probe);
}

// A sample's lengths, each distinct value weighted by its count.
LengthDistribution SampleDistribution(std::vector<int64_t> sample) {
  std::sort(sample.begin(), sample.end());
  std::vector<int64_t> values;
  std::vector<double> weights;
  for (int64_t v : sample) {
    if (values.empty() || values.back() != v) {
      values.push_back(v);
      weights.push_back(0);
    }
    ++weights.back();
  }
  return LengthDistribution::Empirical(std::move(values), std::move(weights));
}

int64_t RoundedMean(const LengthDistribution& d) {
  return std::max<int64_t>(1, std::llround(d.Mean()));
}

Deployment Evaluate(const PlanInput& in, const MeanPrompt& mean,
                    const Candidate& c, std::atomic<int>* simulations,
                    absl::Status* fatal) {
  const engine::Scenario& base = c.scenario;
  Deployment d;
  d.hardware_id = base.hardware.id;
  d.tensor_parallel = base.parallelism.tensor_parallel;
  d.pipeline_parallel = base.parallelism.pipeline_parallel;
  d.expert_parallel = base.parallelism.expert_parallel;
  d.formats = c.formats;
  engine::Parallelism one = base.parallelism;
  one.data_parallel = 1;
  const int64_t replica_devices = engine::ReplicaDevices(one);
  d.profile = base.efficiency.profile_name;
  d.profile_fallback = c.profile_fallback;
  const int64_t gen = RoundedMean(in.traffic.generated);
  const int64_t prompt = mean.tokens;
  absl::StatusOr<KvCapacity> kv =
      ComputeKvCapacity(base, in.serving, prompt, gen);
  if (!kv.ok()) {
    d.why = std::string(kv.status().message());
    return d;
  }
  d.kv_capacity_tokens = kv->kv_capacity_tokens;
  d.max_concurrency = kv->max_concurrency;
  if (!kv->fits) {
    d.why = kv->not_fitting;
    return d;
  }
  engine::Scenario s = base;
  s.workload = EngineStepCost::ServingWorkload(
      kv->max_concurrency, prompt, gen, in.serving.max_num_batched_tokens);
  absl::StatusOr<std::unique_ptr<EngineStepCost>> cost =
      EngineStepCost::Create(s);
  if (!cost.ok()) {
    d.why = std::string(cost.status().message());
    return d;
  }
  const ServingLimits limits = LimitsOf(in.serving, *kv);
  absl::StatusOr<OfflineThroughput> off =
      MaxThroughput(**cost, limits, kv->max_concurrency, prompt, gen,
                    replica_devices, mean.cached);
  if (!off.ok()) {
    d.why = std::string(off.status().message());
    return d;
  }
  d.offline_output_tokens_per_second = off->output_tokens_per_second;
  d.limiting_resource = off->limiting_resource;

  SimulationConfig sim;
  sim.limits = limits;
  sim.prompt = in.traffic.prompt;
  sim.generated = in.traffic.generated;
  sim.shared_prefix_tokens = in.traffic.shared_prefix_tokens;
  sim.sessions = in.traffic.sessions;
  // Long enough to reach steady state, whatever was asked (slo_search.h).
  sim.requests = SteadyStateRequests(in.requests, kv->max_concurrency);
  // A trace's requests, re-timed by the search (the first sim.requests).
  sim.arrivals =
      FirstRequests(in.traffic.trace, static_cast<size_t>(sim.requests));
  sim.seed = in.seed;
  sim.stop = in.stop;
  // The search runs in the traffic's unit: sessions per second with them.
  const double turns = static_cast<double>(in.traffic.sessions.turns);
  absl::StatusOr<MaxRate> mr =
      MaxRateAtSlo(**cost, sim, in.slo, off->requests_per_second / turns, 0.02,
                   in.max_utilization);
  if (!mr.ok()) {
    if (mr.status().code() == absl::StatusCode::kDeadlineExceeded) {
      *fatal = mr.status();
    }
    d.why = std::string(mr.status().message());
    return d;
  }
  *simulations += mr->simulations;
  auto set_latency = [&](const SimulationResult& r) {
    d.ttft_p90_seconds = r.ttft.p90;
    d.tpot_p90_seconds = r.tpot.p90;
    d.e2e_p90_seconds = r.e2e.p90;
    d.ttft_headroom = 1 - r.ttft.p90 / in.slo.ttft_p90_seconds;
    d.tpot_headroom = 1 - r.tpot.p90 / in.slo.tpot_p90_seconds;
  };
  if (!mr->reachable) {
    d.why = mr->why;
    set_latency(mr->best);
    return d;
  }
  d.feasible = true;
  d.max_rate_per_replica = mr->max_rate;
  d.replicas = static_cast<int64_t>(
      std::ceil(in.traffic.rate / mr->max_rate - 1e-9));
  d.replicas = std::max<int64_t>(d.replicas, 1);
  d.devices = d.replicas * replica_devices;
  // Latency at the load each replica actually gets.
  sim.arrivals.kind = Arrivals::Kind::kPoisson;
  sim.arrivals.rate = in.traffic.rate / static_cast<double>(d.replicas);
  absl::StatusOr<SimulationResult> served = Simulate(**cost, sim);
  ++*simulations;
  if (!served.ok()) {
    if (served.status().code() == absl::StatusCode::kDeadlineExceeded) {
      *fatal = served.status();
    }
    d.feasible = false;
    d.why = std::string(served.status().message());
    return d;
  }
  set_latency(*served);
  d.meets_slo = MeetsSlo(*served, in.slo);
  d.stable = served->stable;
  d.simulated_requests = SimulatedRequests(sim);
  if (!served->stable) d.why = UnstableWarning(served->backlog);
  const Costs costs =
      CostOf(base.hardware, base.economics, d.devices,
             RequestRate(in.traffic) * in.traffic.generated.Mean());
  d.usd_per_mtoken = costs.usd_per_mtoken;
  d.cost_basis = costs.cost_basis;
  d.price_source = costs.price_source;
  d.joules_per_token = costs.joules_per_token;
  d.g_co2e_per_mtoken = costs.g_co2e_per_mtoken;
  return d;
}

// "TP 4", "TP 4 PP 2", "EP 8" (attention data-parallel), "EP 8 PP 2";
// disaggregated: "prefill 2 x TP 4 + decode 3 x TP 8".
std::string ParallelismLabel(const Deployment& d) {
  if (d.disaggregated) {
    return absl::StrCat("prefill ", d.prefill_replicas, " x TP ",
                        d.prefill_tensor_parallel, " + decode ",
                        d.decode_replicas, " x TP ", d.decode_tensor_parallel);
  }
  std::string s = d.expert_parallel > 1
                      ? absl::StrCat("EP ", d.expert_parallel)
                      : absl::StrCat("TP ", d.tensor_parallel);
  if (d.pipeline_parallel > 1) absl::StrAppend(&s, " PP ", d.pipeline_parallel);
  return s;
}

// "" when every priced deployment that meets the SLO is priced on one
// basis; else what the ranking mixes, hardware by basis: $/Mtoken from a
// rental price and from an amortised purchase price are not the same
// money.
std::string MixedBases(const std::vector<Deployment>& ranked) {
  std::vector<std::pair<std::string, std::vector<std::string>>> bases;
  for (const Deployment& d : ranked) {
    if (!d.feasible || !d.meets_slo || !d.usd_per_mtoken) continue;
    auto b = std::find_if(bases.begin(), bases.end(), [&](const auto& x) {
      return x.first == d.cost_basis;
    });
    if (b == bases.end()) {
      bases.push_back({d.cost_basis, {}});
      b = bases.end() - 1;
    }
    if (std::find(b->second.begin(), b->second.end(), d.hardware_id) ==
        b->second.end()) {
      b->second.push_back(d.hardware_id);
    }
  }
  if (bases.size() < 2) return "";
  std::string s = "; MIXED COST BASES, not comparable:";
  for (size_t i = 0; i < bases.size(); ++i) {
    absl::StrAppend(&s, i == 0 ? " " : ", ", bases[i].first, " (",
                    absl::StrJoin(bases[i].second, ", "), ")");
  }
  absl::StrAppend(&s, " (per-part rental or purchase prices price them "
                      "alike)");
  return s;
}

double CostKey(const Deployment& d) {
  return d.usd_per_mtoken.value_or(std::numeric_limits<double>::infinity());
}

}  // namespace

void SetTraceRequests(Arrivals requests, Traffic* traffic) {
  requests.kind = Arrivals::Kind::kPoisson;
  requests.times.clear();
  if (!requests.prompt_tokens.empty()) {
    traffic->prompt = SampleDistribution(requests.prompt_tokens);
    traffic->generated = SampleDistribution(requests.generated_tokens);
  }
  traffic->trace = std::move(requests);
}

MeanPrompt MeanPromptOf(const Traffic& t, bool prefix_caching,
                        int64_t block_size) {
  const std::vector<int64_t>& own = t.trace.prompt_tokens;
  if (!own.empty()) {
    const std::vector<int64_t> hits = IdealHitTokens(t.trace);
    double tokens = 0, cached = 0;
    for (size_t i = 0; i < own.size(); ++i) {
      tokens += static_cast<double>(own[i]);
      if (prefix_caching) {
        cached += static_cast<double>(
            CachedSharedPrefixTokens(hits[i], own[i], block_size));
      }
    }
    const double n = static_cast<double>(own.size());
    MeanPrompt m;
    m.tokens = std::max<int64_t>(1, std::llround(tokens / n));
    m.cached =
        std::min<int64_t>(static_cast<int64_t>(cached / n), m.tokens - 1);
    return m;
  }
  const int64_t prompt = RoundedMean(t.prompt);
  const int64_t turn = prompt + RoundedMean(t.generated);
  const int64_t n = t.sessions.turns;
  MeanPrompt m;
  // Turn k's prompt: k x turn of history + prompt; its cached part (at
  // least one token is computed, whole blocks) the history or the shared
  // prefix, whichever is longer.
  int64_t tokens = 0, cached = 0;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t length = k * turn + prompt;
    tokens += length;
    if (prefix_caching) {
      cached += std::max(
          CachedSharedPrefixTokens(k * turn, length, block_size),
          CachedSharedPrefixTokens(t.shared_prefix_tokens, length, block_size));
    }
  }
  m.tokens = std::max<int64_t>(1, (tokens + n / 2) / n);
  m.cached = std::min(cached / n, m.tokens - 1);
  return m;
}

absl::Status ValidatePlanInput(const PlanInput& input) {
  return CheckInput(input);
}

int64_t PlanThreads(size_t candidates) {
  return static_cast<int64_t>(std::min<size_t>(
      candidates, std::max<unsigned>(1, std::thread::hardware_concurrency())));
}

Costs CostOf(const engine::Hardware& hw, const engine::Economics& econ,
             int64_t devices, double output_tokens_per_second) {
  Costs c;
  const double n = static_cast<double>(devices);
  const double tokens = output_tokens_per_second;
  if (hw.tdp_watts) c.joules_per_token = n * *hw.tdp_watts / tokens;
  // Per served second.
  const double life_seconds =
      econ.amortization_years * kSecondsPerYear * econ.utilization;
  std::optional<double> electricity_usd;
  if (hw.tdp_watts) {
    electricity_usd = n * *hw.tdp_watts / kJoulesPerKwh * econ.pue *
                      econ.electricity_usd_per_kwh;
  }
  std::optional<double> usd_per_second;
  const engine::DevicePrice price = engine::DevicePriceOf(hw, econ);
  switch (price.basis) {
    case engine::CostBasis::kRental:
      c.price_source =
          price.source == "request"
              ? absl::StrCat("request: $", price.usd_per_device_hour,
                             "/device-hour")
              : std::string(price.source);
      usd_per_second = n * price.usd_per_served_second;
      break;
    case engine::CostBasis::kPurchase:
      c.price_source = absl::StrCat(
          std::string(price.source), ": $", price.price_usd, " per device over ",
          econ.amortization_years, " years at utilization ", econ.utilization);
      usd_per_second =
          n * price.usd_per_served_second + electricity_usd.value_or(0);
      if (!electricity_usd) absl::StrAppend(&c.price_source, "; power unknown");
      break;
    case engine::CostBasis::kEnergyOnly:
    case engine::CostBasis::kNone:
      if (electricity_usd) {
        c.price_source =
            "no device price known: electricity at board power only";
        usd_per_second = electricity_usd;
      }
      break;
  }
  if (usd_per_second) {
    c.usd_per_mtoken = *usd_per_second / tokens * 1e6;
    c.cost_basis = std::string(engine::CostBasisName(price.basis));
  }
  if (c.joules_per_token) {
    double g = *c.joules_per_token / kJoulesPerKwh * econ.pue *
               econ.grid_g_co2e_per_kwh * 1e6;
    if (hw.embodied_kg_co2e) {
      g += n * *hw.embodied_kg_co2e * 1000 / life_seconds / tokens * 1e6;
    }
    c.g_co2e_per_mtoken = g;
  }
  return c;
}

absl::StatusOr<PlanResult> Plan(const PlanInput& input) {
  RETURN_IF_ERROR(CheckInput(input));
  PlanResult out;
  // Every calibrated candidate is also sized on the pure roofline (its
  // bound), so an answer far from the bound can say so.
  std::vector<Candidate> jobs = input.candidates;
  std::vector<size_t> bound_of(input.candidates.size(), 0);  // index in jobs
  for (size_t i = 0; i < input.candidates.size(); ++i) {
    const engine::Scenario& s = input.candidates[i].scenario;
    if (s.efficiency.profile_name.empty() || s.options.pure_roofline) continue;
    Candidate pure = input.candidates[i];
    pure.scenario.efficiency = engine::Efficiency{};
    pure.scenario.options.pure_roofline = true;
    bound_of[i] = jobs.size();
    jobs.push_back(std::move(pure));
  }
  // Once for every candidate (a trace's ideal reuse walks all of it).
  const MeanPrompt mean = MeanPromptOf(
      input.traffic, input.serving.prefix_caching, input.serving.block_size);
  std::vector<Deployment> all(jobs.size());
  std::atomic<size_t> next{0};
  std::atomic<int> simulations{0};
  std::mutex mu;
  absl::Status fatal;
  auto worker = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++) {
      absl::Status f;
      all[i] = Evaluate(input, mean, jobs[i], &simulations, &f);
      if (!f.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        fatal = f;
        next = jobs.size();
      }
    }
  };
  const size_t threads = static_cast<size_t>(PlanThreads(jobs.size()));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (!fatal.ok()) return fatal;
  std::vector<Deployment> results(all.begin(),
                                  all.begin() + input.candidates.size());
  for (size_t i = 0; i < results.size(); ++i) {
    if (bound_of[i] == 0) continue;
    const Deployment& b = all[bound_of[i]];
    Deployment& d = results[i];
    if (!b.feasible || !b.meets_slo || b.devices <= 0) continue;
    d.bound_devices = b.devices;
    if (!d.feasible || !d.meets_slo) continue;
    const double factor =
        static_cast<double>(d.devices) / static_cast<double>(b.devices);
    if (factor <= kBoundDevicesWarnFactor) continue;
    // No commas: it is also a CSV cell.
    d.bound_warning = absl::StrFormat(
        "%d devices = %.1fx the pure roofline's %d for this deployment: "
        "under profile %s one replica's offline maximum is %.4g output tok/s "
        "against the bound's %.4g (%.1fx slower steps); at the SLO it serves "
        "%.3g req/s against the bound's %.3g (p90 TPOT %.1f ms and TTFT "
        "%.0f ms at that load: the targets bind at a smaller batch)",
        d.devices, factor, b.devices, d.profile,
        d.offline_output_tokens_per_second, b.offline_output_tokens_per_second,
        d.offline_output_tokens_per_second > 0
            ? b.offline_output_tokens_per_second /
                  d.offline_output_tokens_per_second
            : 0.0,
        d.max_rate_per_replica, b.max_rate_per_replica,
        d.tpot_p90_seconds * 1e3, d.ttft_p90_seconds * 1e3);
  }
  // Disaggregated pools (pure roofline or calibrated alike; no bound
  // comparison for them yet).
  RETURN_IF_ERROR(PlanDisaggregated(input, &simulations, &results));
  out.simulations = simulations;

  std::stable_sort(results.begin(), results.end(),
                   [](const Deployment& a, const Deployment& b) {
                     const bool ga = a.feasible && a.meets_slo;
                     const bool gb = b.feasible && b.meets_slo;
                     if (ga != gb) return ga;
                     if (a.feasible != b.feasible) return a.feasible;
                     return CostKey(a) < CostKey(b);
                   });
  // The exact front of (cost, e2e p90) over priced deployments that meet
  // the SLO (explore/pareto.h: ties stay together, a dearer deployment as
  // fast as a cheaper one is dominated).
  explore::PointSet points;
  points.dims = 2;
  std::vector<size_t> eligible;
  for (size_t i = 0; i < results.size(); ++i) {
    const Deployment& d = results[i];
    if (!d.feasible || !d.meets_slo || !d.usd_per_mtoken) continue;
    const double v[2] = {*d.usd_per_mtoken, d.e2e_p90_seconds};
    if (std::isnan(v[0]) || std::isnan(v[1])) continue;
    points.Add(v);
    eligible.push_back(i);
  }
  for (const size_t k : explore::ParetoFront(points)) {
    results[eligible[k]].pareto = true;
    out.pareto.push_back(static_cast<int>(eligible[k]));  // by cost: sorted
  }
  out.deployments = std::move(results);
  const Deployment* best = nullptr;
  for (const Deployment& d : out.deployments) {
    if (d.feasible && d.meets_slo && d.usd_per_mtoken) {
      best = &d;
      break;
    }
  }
  if (best == nullptr) {
    out.headline = "no candidate meets the SLO at this traffic (see why)";
  } else {
    std::string basis = best->cost_basis == "rental"
                            ? "rental price per device-hour"
                        : best->cost_basis == "purchase"
                            ? "purchase price amortised + electricity"
                            : "ENERGY ONLY: no device price known";
    if (best->cost_basis.find('+') != std::string::npos) {
      basis = "MIXED: the pools are priced on different bases";
    }
    if (best->disaggregated) {
      out.headline = absl::StrFormat(
          "cheapest: %d x %s disaggregated (%s, %s), $%.3f/Mtoken (%s), "
          "p90 TTFT %.0f ms (KV transfer %.1f ms), p90 TPOT %.1f ms",
          best->devices, best->hardware_id, ParallelismLabel(*best),
          best->formats, *best->usd_per_mtoken, basis,
          best->ttft_p90_seconds * 1e3,
          best->kv_transfer_p90_seconds.value_or(0) * 1e3,
          best->tpot_p90_seconds * 1e3);
    } else {
      out.headline = absl::StrFormat(
          "cheapest: %d x %s (%s, %s; %d replica%s), $%.3f/Mtoken (%s), "
          "p90 TTFT %.0f ms, p90 TPOT %.1f ms",
          best->devices, best->hardware_id, ParallelismLabel(*best),
          best->formats, best->replicas, best->replicas == 1 ? "" : "s",
          *best->usd_per_mtoken, basis, best->ttft_p90_seconds * 1e3,
          best->tpot_p90_seconds * 1e3);
    }
  }
  absl::StrAppend(&out.headline, MixedBases(out.deployments));
  for (const Deployment& d : out.deployments) {
    if (d.bound_warning.empty()) continue;
    out.warnings.push_back(absl::StrCat(d.hardware_id, " ", ParallelismLabel(d),
                                        " ", d.formats, ": ", d.bound_warning));
  }
  if (best == nullptr ? std::all_of(out.deployments.begin(),
                                    out.deployments.end(),
                                    [](const Deployment& d) {
                                      return d.profile.empty();
                                    })
                      : best->profile.empty()) {
    absl::StrAppend(&out.headline,
                    "; pure-roofline bound: an upper bound on speed, so a "
                    "lower bound on devices and cost");
  }
  return out;
}

}  // namespace ridgeline::serving
