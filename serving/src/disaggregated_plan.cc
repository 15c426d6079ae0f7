#include "ridgeline/serving/disaggregated_plan.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/serving/engine_step_cost.h"
#include "ridgeline/serving/throughput.h"

namespace ridgeline::serving {
namespace {

// The decode pool's step model: every sequence is `offset` tokens further
// on than the simulation says (its prompt was prefilled elsewhere and
// arrived with the request).
class PrefilledStepCost final : public StepCost {
 public:
  PrefilledStepCost(const StepCost& inner, int64_t offset)
      : inner_(inner), offset_(offset) {}
  absl::StatusOr<StepTime> Time(
      std::span<const SequenceInStep> sequences) const override {
    return TimeFolded(sequences, {});
  }
  bool folds_decodes() const override { return inner_.folds_decodes(); }
  absl::StatusOr<StepTime> TimeFolded(std::span<const SequenceInStep> sequences,
                                      FoldedDecodes folded) const override {
    shifted_.assign(sequences.begin(), sequences.end());
    for (SequenceInStep& s : shifted_) s.context_tokens += offset_;
    folded.context_sum += folded.count * offset_;
    return inner_.TimeFolded(shifted_, folded);
  }

 private:
  const StepCost& inner_;
  int64_t offset_;
  mutable std::vector<SequenceInStep> shifted_;  // reused per call
};

// `d` less `by` tokens (at least one).
LengthDistribution Shortened(const LengthDistribution& d, int64_t by) {
  LengthDistribution s = d;
  s.value = std::max<int64_t>(1, s.value - by);
  s.min = std::max<int64_t>(1, s.min - by);
  s.max = std::max<int64_t>(1, s.max - by);
  for (int64_t& v : s.values) v = std::max<int64_t>(1, v - by);
  return s;
}

int64_t MeanTokens(const LengthDistribution& d) {
  return std::max<int64_t>(1, std::llround(d.Mean()));
}

std::string PoolLabel(const Candidate& c) {
  return absl::StrCat(c.scenario.hardware.id, " TP ",
                      c.scenario.parallelism.tensor_parallel, " ", c.formats);
}

// One pool's replica, prepared once: its KV capacity, step model, offline
// maximum and the simulation its runs start from. Runs on one Pool are
// sequential (EngineStepCost is thread-compatible).
struct Pool {
  const Candidate* candidate = nullptr;
  bool decode = false;
  std::string why;  // set when the pool cannot serve at all
  KvCapacity kv;
  std::unique_ptr<EngineStepCost> engine_cost;
  std::unique_ptr<PrefilledStepCost> prefilled;  // decode pools
  const StepCost* cost = nullptr;
  OfflineThroughput offline;
  SimulationConfig sim;
  int64_t devices = 1;
  // Filled by the searches: max rate per TTFT budget (prefill) or at the
  // TPOT target (decode, key 0); served-load runs per replica count.
  std::map<double, absl::StatusOr<MaxRate>> max_rate;
  std::map<int64_t, absl::StatusOr<SimulationResult>> served;
};

void Prepare(const PlanInput& in, Pool* pool) {
  const engine::Scenario& base = pool->candidate->scenario;
  const int64_t prompt = MeanTokens(in.traffic.prompt);
  const int64_t gen = MeanTokens(in.traffic.generated);
  engine::Parallelism one = base.parallelism;
  one.data_parallel = 1;
  pool->devices = engine::ReplicaDevices(one);
  // A prefill replica holds a prompt until it is sent; a decode replica the
  // whole request.
  const int64_t held_gen = pool->decode ? gen : 1;
  absl::StatusOr<KvCapacity> kv =
      ComputeKvCapacity(base, in.serving, prompt, held_gen);
  if (!kv.ok()) {
    pool->why = std::string(kv.status().message());
    return;
  }
  pool->kv = *kv;
  if (!kv->fits) {
    pool->why = kv->not_fitting;
    return;
  }
  engine::Scenario s = base;
  s.workload = EngineStepCost::ServingWorkload(
      kv->max_concurrency, prompt, held_gen, in.serving.max_num_batched_tokens);
  absl::StatusOr<std::unique_ptr<EngineStepCost>> cost =
      EngineStepCost::Create(s);
  if (!cost.ok()) {
    pool->why = std::string(cost.status().message());
    return;
  }
  pool->engine_cost = std::move(*cost);
  pool->cost = pool->engine_cost.get();
  ServingLimits limits = LimitsOf(in.serving, *kv);
  SimulationConfig& sim = pool->sim;
  sim.seed = in.seed;
  sim.stop = in.stop;
  sim.requests = SteadyStateRequests(in.requests, kv->max_concurrency);
  int64_t sim_prompt = prompt, sim_gen = 1;
  if (pool->decode) {
    // The first token came from the prefill replica: the decode replica
    // makes the other generated - 1, its first step (a one-token "prompt"
    // at the prefilled context) making the second. Admission by whole
    // requests: the KV cache holds max_concurrency of them.
    pool->prefilled =
        std::make_unique<PrefilledStepCost>(*pool->engine_cost, prompt);
    pool->cost = pool->prefilled.get();
    limits.max_num_seqs = kv->max_concurrency;
    sim.prompt = LengthDistribution::Fixed(1);
    sim.generated = Shortened(in.traffic.generated, 1);
    sim_prompt = 1;
    sim_gen = std::max<int64_t>(1, gen - 1);
  } else {
    sim.prompt = in.traffic.prompt;
    sim.generated = LengthDistribution::Fixed(1);
    sim.shared_prefix_tokens = in.traffic.shared_prefix_tokens;
  }
  sim.limits = limits;
  // The prefill pool's prefix cache holds the shared prefix.
  const int64_t cached =
      !pool->decode && in.serving.prefix_caching
          ? CachedSharedPrefixTokens(in.traffic.shared_prefix_tokens,
                                     sim_prompt, limits.block_size)
          : 0;
  absl::StatusOr<OfflineThroughput> off =
      MaxThroughput(*pool->cost, limits, kv->max_concurrency, sim_prompt,
                    sim_gen, pool->devices, cached);
  if (!off.ok()) {
    pool->why = std::string(off.status().message());
    pool->cost = nullptr;
    return;
  }
  pool->offline = *off;
}

bool IsDeadline(const absl::Status& s) {
  return s.code() == absl::StatusCode::kDeadlineExceeded;
}

// Runs `task(i)` for i in [0, n) on PlanThreads(n) threads; the first
// DEADLINE_EXCEEDED a task returns stops the rest and is returned.
absl::Status ForEach(size_t n,
                     const std::function<absl::Status(size_t)>& task) {
  std::atomic<size_t> next{0};
  std::mutex mu;
  absl::Status fatal;
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) {
      absl::Status s = task(i);
      if (IsDeadline(s)) {
        std::lock_guard<std::mutex> lock(mu);
        fatal = s;
        next = n;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int64_t t = 1; t < PlanThreads(n); ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  return fatal;
}

// The TTFT left to the prefill replica once the transfer is paid, rounded
// down to whole milliseconds so pairs with nearly the same transfer share
// one search (conservative: the budget only shrinks).
double PrefillBudget(double ttft_target, double transfer_seconds) {
  return std::floor((ttft_target - transfer_seconds) * 1e3) / 1e3;
}

struct Pair {
  size_t prefill = 0, decode = 0;
  PoolKvLink link;
  double transfer_p90 = 0;
  double budget = 0;
  std::string why;  // infeasible before any search
  int64_t prefill_replicas = 0, decode_replicas = 0;
};

std::optional<double> SumOf(const std::optional<double>& a,
                            const std::optional<double>& b) {
  if (!a || !b) return std::nullopt;
  return *a + *b;
}

// The cheapest k copies of a P:D unit (P, D <= max) covering `need_p`
// prefill and `need_d` decode replicas, a device of each pool weighing
// `weight_p` / `weight_d`: {k P, k D}.
std::pair<int64_t, int64_t> CheapestUnits(int64_t need_p, int64_t need_d,
                                          int64_t max, double weight_p,
                                          double weight_d) {
  std::pair<int64_t, int64_t> best{need_p, need_d};
  double best_cost = std::numeric_limits<double>::infinity();
  for (int64_t p = 1; p <= max; ++p) {
    for (int64_t d = 1; d <= max; ++d) {
      const int64_t k = std::max((need_p + p - 1) / p, (need_d + d - 1) / d);
      const double cost =
          static_cast<double>(k) * (static_cast<double>(p) * weight_p +
                                    static_cast<double>(d) * weight_d);
      if (cost < best_cost - 1e-12) {
        best_cost = cost;
        best = {k * p, k * d};
      }
    }
  }
  return best;
}

}  // namespace

PoolKvLink PoolKvLinkBetween(const engine::Scenario& prefill,
                             const engine::Scenario& decode) {
  const engine::Hardware& p = prefill.hardware;
  const engine::Hardware& d = decode.hardware;
  const int64_t tp_p = prefill.parallelism.tensor_parallel;
  const int64_t tp_d = decode.parallelism.tensor_parallel;
  const double pairs = static_cast<double>(std::min(tp_p, tp_d));
  PoolKvLink link;
  // One node: one part, both replicas inside its scale-up domain (an
  // unknown node size takes every group to fit, as the engine does).
  const bool one_node = p.id == d.id && (!p.devices_per_node ||
                                         tp_p + tp_d <= *p.devices_per_node);
  if (one_node) {
    link.name = "scale-up";
    if (!p.interconnect_bytes_per_second) {
      link.why = absl::StrCat("no known link between the pools: ", p.id,
                              " has no scale-up bandwidth "
                              "(interconnect_bytes_per_second unknown)");
      return link;
    }
    // Bandwidths are both directions together: the KV goes one way.
    link.bytes_per_second = pairs * *p.interconnect_bytes_per_second / 2;
    link.latency_known = p.scale_up_latency_seconds.has_value();
    link.latency_seconds = p.scale_up_latency_seconds.value_or(0);
  } else {
    link.name = "scale-out";
    std::vector<std::string> unknown;
    if (!p.scale_out_bytes_per_second) unknown.push_back(p.id);
    if (!d.scale_out_bytes_per_second && d.id != p.id) unknown.push_back(d.id);
    if (!unknown.empty()) {
      link.why = absl::StrCat(
          "no known link between ", p.id, " and ", d.id,
          ": scale_out_bytes_per_second unknown for ",
          absl::StrJoin(unknown, " and "),
          " (no source gives it; set it on an inline hardware description)");
      return link;
    }
    link.bytes_per_second =
        pairs *
        std::min(*p.scale_out_bytes_per_second, *d.scale_out_bytes_per_second) /
        2;
    link.latency_known = p.scale_out_latency_seconds.has_value() &&
                         d.scale_out_latency_seconds.has_value();
    link.latency_seconds = std::max(p.scale_out_latency_seconds.value_or(0),
                                    d.scale_out_latency_seconds.value_or(0));
  }
  link.known = true;
  return link;
}

double PoolKvBytes(const engine::Scenario& s, int64_t tokens) {
  return engine::KvElementsPerToken(s.model) * s.precision.kv_cache.bits / 8 *
         static_cast<double>(tokens);
}

double PoolKvTransferSeconds(const PoolKvLink& link, double bytes) {
  return bytes / link.bytes_per_second + link.latency_seconds;
}

int64_t LengthQuantile(const LengthDistribution& d, double p) {
  switch (d.kind) {
    case LengthDistribution::Kind::kFixed:
      return d.value;
    case LengthDistribution::Kind::kUniform: {
      const int64_t n = d.max - d.min + 1;
      const auto rank =
          static_cast<int64_t>(std::ceil(p * static_cast<double>(n)));
      return d.min + std::clamp<int64_t>(rank, 1, n) - 1;
    }
    case LengthDistribution::Kind::kEmpirical: {
      std::vector<std::pair<int64_t, double>> bins;
      double total = 0;
      for (size_t i = 0; i < d.values.size() && i < d.weights.size(); ++i) {
        bins.push_back({d.values[i], d.weights[i]});
        total += d.weights[i];
      }
      std::sort(bins.begin(), bins.end());
      double seen = 0;
      for (const auto& [v, w] : bins) {
        seen += w;
        if (seen >= p * total - 1e-12) return v;
      }
      return bins.empty() ? 0 : bins.back().first;
    }
  }
  return 0;
}

absl::Status PlanDisaggregated(const PlanInput& in,
                               std::atomic<int>* simulations,
                               std::vector<Deployment>* out) {
  if (in.prefill_pools.empty() || in.decode_pools.empty()) {
    return absl::OkStatus();
  }
  std::vector<Pool> pools(in.prefill_pools.size() + in.decode_pools.size());
  const size_t first_decode = in.prefill_pools.size();
  for (size_t i = 0; i < pools.size(); ++i) {
    pools[i].decode = i >= first_decode;
    pools[i].candidate = pools[i].decode ? &in.decode_pools[i - first_decode]
                                         : &in.prefill_pools[i];
  }
  const bool decodes = LengthQuantile(in.traffic.generated, 0) >= 2;
  // Sessions and a trace's prefix reuse are not planned split (the pairs
  // say why): no pool searched. (A trace's lengths alone are: the pools
  // take their distributions.)
  const bool sessions = in.traffic.sessions.turns > 1;
  const bool trace_reuse =
      in.serving.prefix_caching && !in.traffic.trace.content.empty();
  // 1. Every pool's replica; the decode pools' max rate at the TPOT target
  // (their admission wait held to the TTFT target).
  absl::Status fatal = ForEach(pools.size(), [&](size_t i) -> absl::Status {
    Pool& pool = pools[i];
    Prepare(in, &pool);
    if (!pool.decode || pool.cost == nullptr || !decodes || sessions ||
        trace_reuse) {
      return absl::OkStatus();
    }
    absl::StatusOr<MaxRate> mr = MaxRateAtSlo(
        *pool.cost, pool.sim, in.slo, pool.offline.requests_per_second,
        kSloSearchTolerance, in.max_utilization);
    if (mr.ok()) *simulations += mr->simulations;
    pool.max_rate.emplace(0.0, mr);
    return mr.ok() ? absl::OkStatus() : mr.status();
  });
  if (!fatal.ok()) return fatal;

  // 2. The pairs of one format set, their link and transfer; the prefill
  // budgets each prefill pool is searched at.
  const int64_t prompt_p90 = LengthQuantile(in.traffic.prompt, 0.9);
  std::vector<Pair> pairs;
  std::vector<std::vector<double>> budgets(first_decode);
  for (size_t i = 0; i < first_decode; ++i) {
    for (size_t j = first_decode; j < pools.size(); ++j) {
      if (pools[i].candidate->formats != pools[j].candidate->formats) continue;
      Pair pair;
      pair.prefill = i;
      pair.decode = j;
      pair.link = PoolKvLinkBetween(pools[i].candidate->scenario,
                                    pools[j].candidate->scenario);
      if (!decodes) {
        pair.why =
            "disaggregated: every request must generate at least 2 tokens "
            "(the decode pool makes all but the first)";
      } else if (sessions) {
        pair.why =
            "disaggregated: multi-turn sessions are planned for aggregated "
            "replicas only (a turn's history would have to come back from "
            "the decode pool to a prefill replica)";
      } else if (trace_reuse) {
        pair.why =
            "disaggregated: a trace's prefix reuse is planned for "
            "aggregated replicas only (which prefill replica holds which "
            "prefix is not modelled for pools)";
      } else if (!pair.link.known) {
        pair.why = pair.link.why;
      } else {
        pair.transfer_p90 = PoolKvTransferSeconds(
            pair.link, PoolKvBytes(pools[i].candidate->scenario, prompt_p90));
        pair.budget = PrefillBudget(in.slo.ttft_p90_seconds, pair.transfer_p90);
        if (pair.budget <= 0) {
          pair.why = absl::StrFormat(
              "the KV transfer alone (%.1f ms over %s) takes the TTFT "
              "target (%.1f ms)",
              pair.transfer_p90 * 1e3, pair.link.name,
              in.slo.ttft_p90_seconds * 1e3);
        } else if (std::find(budgets[i].begin(), budgets[i].end(),
                             pair.budget) == budgets[i].end()) {
          budgets[i].push_back(pair.budget);
        }
      }
      pairs.push_back(std::move(pair));
    }
  }
  fatal = ForEach(first_decode, [&](size_t i) -> absl::Status {
    Pool& pool = pools[i];
    if (pool.cost == nullptr) return absl::OkStatus();
    for (const double budget : budgets[i]) {
      absl::StatusOr<MaxRate> mr = MaxRateAtSlo(
          *pool.cost, pool.sim, Slo{budget, in.slo.tpot_p90_seconds},
          pool.offline.requests_per_second, kSloSearchTolerance,
          in.max_utilization);
      if (mr.ok()) *simulations += mr->simulations;
      if (IsDeadline(mr.status())) return mr.status();
      pool.max_rate.emplace(budget, std::move(mr));
    }
    return absl::OkStatus();
  });
  if (!fatal.ok()) return fatal;

  // 3. Replicas per pool (the cheapest P:D units), then one served-load
  // run per pool and replica count.
  const double tokens_per_second =
      in.traffic.rate * in.traffic.generated.Mean();
  auto weight = [&](const Pool& p) {
    return CostOf(p.candidate->scenario.hardware,
                  p.candidate->scenario.economics, p.devices, tokens_per_second)
        .usd_per_mtoken;
  };
  std::vector<std::vector<int64_t>> counts(pools.size());
  auto reached = [&](const Pool& pool, double key) -> const MaxRate* {
    auto it = pool.max_rate.find(key);
    if (it == pool.max_rate.end() || !it->second.ok() ||
        !it->second->reachable) {
      return nullptr;
    }
    return &*it->second;
  };
  for (Pair& pair : pairs) {
    if (!pair.why.empty()) continue;
    const MaxRate* p = reached(pools[pair.prefill], pair.budget);
    const MaxRate* d = reached(pools[pair.decode], 0.0);
    if (p == nullptr || d == nullptr) continue;  // its why comes in step 4
    const int64_t need_p = std::max<int64_t>(
        1,
        static_cast<int64_t>(std::ceil(in.traffic.rate / p->max_rate - 1e-9)));
    const int64_t need_d = std::max<int64_t>(
        1,
        static_cast<int64_t>(std::ceil(in.traffic.rate / d->max_rate - 1e-9)));
    const std::optional<double> wp = weight(pools[pair.prefill]);
    const std::optional<double> wd = weight(pools[pair.decode]);
    const bool priced = wp && wd;
    std::tie(pair.prefill_replicas, pair.decode_replicas) = CheapestUnits(
        need_p, need_d, in.max_pool_replicas,
        priced ? *wp : static_cast<double>(pools[pair.prefill].devices),
        priced ? *wd : static_cast<double>(pools[pair.decode].devices));
    for (const auto& [pool, n] :
         {std::pair{pair.prefill, pair.prefill_replicas},
          std::pair{pair.decode, pair.decode_replicas}}) {
      if (std::find(counts[pool].begin(), counts[pool].end(), n) ==
          counts[pool].end()) {
        counts[pool].push_back(n);
      }
    }
  }
  fatal = ForEach(pools.size(), [&](size_t i) -> absl::Status {
    Pool& pool = pools[i];
    for (const int64_t n : counts[i]) {
      SimulationConfig sim = pool.sim;
      sim.arrivals.kind = Arrivals::Kind::kPoisson;
      sim.arrivals.rate = in.traffic.rate / static_cast<double>(n);
      absl::StatusOr<SimulationResult> r = Simulate(*pool.cost, sim);
      ++*simulations;
      if (IsDeadline(r.status())) return r.status();
      pool.served.emplace(n, std::move(r));
    }
    return absl::OkStatus();
  });
  if (!fatal.ok()) return fatal;

  // 4. The rows.
  for (const Pair& pair : pairs) {
    const Pool& pp = pools[pair.prefill];
    const Pool& dp = pools[pair.decode];
    const engine::Scenario& ps = pp.candidate->scenario;
    const engine::Scenario& ds = dp.candidate->scenario;
    Deployment d;
    d.disaggregated = true;
    d.hardware_id = ps.hardware.id == ds.hardware.id
                        ? ps.hardware.id
                        : absl::StrCat(ps.hardware.id, "+", ds.hardware.id);
    d.tensor_parallel = 0;
    d.formats = pp.candidate->formats;
    d.profile = ps.efficiency.profile_name == ds.efficiency.profile_name
                    ? ps.efficiency.profile_name
                    : absl::StrCat(ps.efficiency.profile_name, "+",
                                   ds.efficiency.profile_name);
    d.profile_fallback = pp.candidate->profile_fallback.empty()
                             ? dp.candidate->profile_fallback
                             : pp.candidate->profile_fallback;
    d.prefill_hardware_id = ps.hardware.id;
    d.prefill_tensor_parallel = ps.parallelism.tensor_parallel;
    d.decode_hardware_id = ds.hardware.id;
    d.decode_tensor_parallel = ds.parallelism.tensor_parallel;
    d.kv_link = pair.link.name;
    d.kv_capacity_tokens = dp.kv.kv_capacity_tokens;
    d.max_concurrency = dp.kv.max_concurrency;
    d.offline_output_tokens_per_second = dp.offline.output_tokens_per_second;
    d.limiting_resource = dp.offline.limiting_resource;
    auto fail = [&](const std::string& why) {
      d.why = why;
      out->push_back(d);
    };
    if (!pp.why.empty()) {
      fail(absl::StrCat("prefill pool (", PoolLabel(*pp.candidate),
                        "): ", pp.why));
      continue;
    }
    if (!dp.why.empty()) {
      fail(absl::StrCat("decode pool (", PoolLabel(*dp.candidate),
                        "): ", dp.why));
      continue;
    }
    if (!pair.why.empty()) {
      fail(pair.why);
      continue;
    }
    d.kv_transfer_p90_seconds = pair.transfer_p90;
    const auto& pm = pp.max_rate.at(pair.budget);
    const auto& dm = dp.max_rate.at(0.0);
    if (!pm.ok() || !dm.ok()) {
      fail(std::string((pm.ok() ? dm : pm).status().message()));
      continue;
    }
    if (!pm->reachable || !dm->reachable) {
      d.ttft_p90_seconds = pm->best.ttft.p90 + pair.transfer_p90;
      d.tpot_p90_seconds = dm->best.tpot.p90;
      fail(!pm->reachable
               ? absl::StrCat("prefill pool, at the TTFT target less the KV "
                              "transfer (",
                              absl::StrFormat("%.1f ms", pair.budget * 1e3),
                              "): ", pm->why)
               : absl::StrCat("decode pool: ", dm->why));
      continue;
    }
    d.prefill_max_rate_per_replica = pm->max_rate;
    d.decode_max_rate_per_replica = dm->max_rate;
    d.prefill_replicas = pair.prefill_replicas;
    d.decode_replicas = pair.decode_replicas;
    d.replicas = d.prefill_replicas + d.decode_replicas;
    const int64_t devices_p = d.prefill_replicas * pp.devices;
    const int64_t devices_d = d.decode_replicas * dp.devices;
    d.devices = devices_p + devices_d;
    const auto& pr = pp.served.at(d.prefill_replicas);
    const auto& dr = dp.served.at(d.decode_replicas);
    if (!pr.ok() || !dr.ok()) {
      fail(std::string((pr.ok() ? dr : pr).status().message()));
      continue;
    }
    d.feasible = true;
    d.ttft_p90_seconds = pr->ttft.p90 + pair.transfer_p90;
    d.tpot_p90_seconds = dr->tpot.p90;
    d.e2e_p90_seconds = d.ttft_p90_seconds + dr->e2e.p90;
    d.ttft_headroom = 1 - d.ttft_p90_seconds / in.slo.ttft_p90_seconds;
    d.tpot_headroom = 1 - d.tpot_p90_seconds / in.slo.tpot_p90_seconds;
    d.stable = pr->stable && dr->stable;
    d.meets_slo = d.stable && d.ttft_p90_seconds <= in.slo.ttft_p90_seconds &&
                  MeetsSlo(*dr, in.slo);
    d.simulated_requests = std::max(pp.sim.requests, dp.sim.requests);
    if (!pr->stable)
      d.why = absl::StrCat("prefill pool ", UnstableWarning(pr->backlog));
    if (!dr->stable)
      d.why = absl::StrCat("decode pool ", UnstableWarning(dr->backlog));
    const Costs cp =
        CostOf(ps.hardware, ps.economics, devices_p, tokens_per_second);
    const Costs cd =
        CostOf(ds.hardware, ds.economics, devices_d, tokens_per_second);
    d.usd_per_mtoken = SumOf(cp.usd_per_mtoken, cd.usd_per_mtoken);
    if (d.usd_per_mtoken) {
      d.cost_basis = cp.cost_basis == cd.cost_basis
                         ? cp.cost_basis
                         : absl::StrCat(cp.cost_basis, "+", cd.cost_basis);
    }
    d.price_source = cp.price_source == cd.price_source
                         ? cp.price_source
                         : absl::StrCat("prefill: ", cp.price_source,
                                        "; decode: ", cd.price_source);
    d.joules_per_token = SumOf(cp.joules_per_token, cd.joules_per_token);
    d.g_co2e_per_mtoken = SumOf(cp.g_co2e_per_mtoken, cd.g_co2e_per_mtoken);
    out->push_back(std::move(d));
  }
  return absl::OkStatus();
}

}  // namespace ridgeline::serving
