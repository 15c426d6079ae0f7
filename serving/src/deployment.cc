#include "ridgeline/serving/deployment.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <queue>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/serving/replica.h"
#include "ridgeline/serving/router.h"
#include "traffic.h"

namespace ridgeline::serving {
namespace {

absl::Status Bad(const std::string& field, const std::string& range,
                 const std::string& got) {
  return engine::WithFieldPath(absl::InvalidArgumentError(absl::StrCat(
                                   field, ": must be ", range, "; got ", got)),
                               field);
}

absl::Status CheckDeployment(const DeploymentSpec& d) {
  if (d.pools.empty() || d.pools.size() > 2) {
    return Bad("pools", "1 (aggregated) or 2 (prefill, decode)",
               absl::StrCat(d.pools.size()));
  }
  if ((d.pools.size() == 2) != d.handoff.has_value()) {
    return absl::InvalidArgumentError(
        "pools: a KV hand-off goes with exactly two pools (prefill, decode)");
  }
  if (d.handoff.has_value() && !d.handoff->link.known) {
    return absl::InvalidArgumentError(
        absl::StrCat("kv_transfer: ", d.handoff->link.unknown_reason));
  }
  for (const PoolSpec& p : d.pools) {
    const std::string at =
        p.name.empty() ? std::string("") : absl::StrCat(p.name, "_");
    if (p.replicas < 1 || p.replicas > kMaxReplicasPerPool) {
      return Bad(absl::StrCat(at, "replicas"),
                 absl::StrCat("in [1, ", kMaxReplicasPerPool, "]"),
                 absl::StrCat(p.replicas));
    }
    if (p.limits.attention_ranks != 1) {
      return Bad("parallelism.expert_parallel",
                 "1 (attention data parallelism) in a pool of replicas",
                 absl::StrCat(p.limits.attention_ranks));
    }
    if (p.limits.pipeline_stages < 1 || p.limits.pipeline_stages > 256) {
      return Bad("parallelism.pipeline_parallel", "in [1, 256]",
                 absl::StrCat(p.limits.pipeline_stages));
    }
    if (p.limits.max_num_seqs < 1 || p.limits.max_num_batched_tokens < 1 ||
        p.limits.kv_capacity_tokens < 1 || p.limits.block_size < 1) {
      return Bad(
          "serving",
          "max_num_seqs, max_num_batched_tokens, KV capacity and "
          "block_size >= 1",
          absl::StrCat(p.limits.max_num_seqs, ", ",
                       p.limits.max_num_batched_tokens, ", ",
                       p.limits.kv_capacity_tokens, ", ", p.limits.block_size));
    }
  }
  return absl::OkStatus();
}

// The KV slots a request holds on a pool up to its stage target there,
// reserved whole (the scheduler's rule without preemption): what must fit.
int64_t Reserve(const ServingLimits& l, int64_t prompt, int64_t stage_target) {
  return (prompt + stage_target - 1 + l.block_size - 1) / l.block_size *
         l.block_size;
}

struct Pool {
  const PoolSpec* spec;
  std::unique_ptr<Router> router;
  std::vector<std::unique_ptr<Replica>> replicas;
  std::vector<int64_t> loads;     // scratch for the router
  std::vector<int64_t> cached;    // scratch for a prefix-aware router
  std::vector<int64_t> inflight;  // tokens of KV on its way (decode pool)
};

// Offload tiers, over every replica that has them (tier t of each, by
// position): time-weighted use over the run and, with a timeline, per
// bucket; the fullest replica's peak. Shares of the capacity.
void SummarizeTiers(const std::vector<Pool>& pools, SimulationResult& out) {
  Timeline& tl = out.timeline;
  const size_t buckets = tl.bucket_seconds > 0 ? tl.arrivals.size() : 0;
  int64_t with_tiers = 0;
  for (const Pool& pool : pools) {
    for (const auto& rep : pool.replicas) {
      const KvBlockCache& kv = rep->kv();
      if (!kv.offload_tiers().empty()) ++with_tiers;
      for (size_t t = 0; t < kv.offload_tiers().size(); ++t) {
        const OffloadTier& tier = kv.offload_tiers()[t];
        if (out.kv_tiers.size() <= t) {
          out.kv_tiers.push_back({tier.name, tier.capacity_tokens});
          tl.kv_tiers.push_back({tier.name, std::vector<double>(buckets, 0)});
        }
        const auto cap = static_cast<double>(tier.capacity_tokens);
        SimulationResult::TierUse& u = out.kv_tiers[t];
        u.usage_mean += kv.offload_token_seconds(t) / cap;
        u.usage_peak = std::max(
            u.usage_peak, static_cast<double>(kv.offload_peak_tokens(t)) / cap);
        for (size_t k = 0; k < buckets; ++k) {
          const double from =
              tl.start_seconds + static_cast<double>(k) * tl.bucket_seconds;
          tl.kv_tiers[t].usage_mean[k] +=
              kv.offload_history(t).Integral(from, from + tl.bucket_seconds) /
              cap;
        }
      }
    }
  }
  // Sums of replicas' shares x seconds: means over replicas and time.
  const auto n = static_cast<double>(with_tiers);
  for (SimulationResult::TierUse& u : out.kv_tiers) {
    u.usage_mean =
        out.duration_seconds > 0 ? u.usage_mean / n / out.duration_seconds : 0;
  }
  for (Timeline::TierSeries& series : tl.kv_tiers) {
    for (double& v : series.usage_mean) v /= n * tl.bucket_seconds;
  }
}

}  // namespace

absl::StatusOr<DeploymentResult> SimulateDeployment(
    const DeploymentSpec& deployment, const SimulationConfig& config) {
  RETURN_IF_ERROR(CheckDeployment(deployment));
  {
    SimulationConfig traffic = config;  // its traffic, with a pool's limits
    traffic.limits = deployment.pools.front().limits;
    RETURN_IF_ERROR(ValidateSimulationConfig(traffic));
  }
  const bool split = deployment.pools.size() == 2;
  std::vector<RequestState> reqs = internal::DrawRequests(config);
  const int64_t n = static_cast<int64_t>(reqs.size());
  // Every request must fit on each pool it visits.
  for (const RequestState& r : reqs) {
    for (size_t p = 0; p < deployment.pools.size(); ++p) {
      const ServingLimits& l = deployment.pools[p].limits;
      const int64_t slots =
          Reserve(l, r.prompt, split && p == 0 ? 1 : r.generated_target);
      if (slots > l.kv_capacity_tokens) {
        return absl::FailedPreconditionError(absl::StrCat(
            "a request of ", r.prompt, " + ", r.generated_target,
            " tokens needs ", slots, " KV slots; ",
            split ? absl::StrCat("a ", deployment.pools[p].name, " replica")
                  : std::string("the replica"),
            " holds ", l.kv_capacity_tokens));
      }
    }
  }

  RunControl control;
  control.max_steps = config.max_steps;
  control.max_steps_name = config.max_steps_name;
  control.stop = config.stop;
  control.total = n;
  // What the prompts share: the sessions', the trace's, or the shared
  // prefix's.
  const int64_t turns = config.sessions.turns;
  const PromptContent shared = turns > 1
                                   ? internal::SessionContent(config, reqs)
                                   : internal::SharedPrefix(config);
  control.content = shared.empty() ? &config.arrivals.content : &shared;
  const bool closed_loop = config.arrivals.kind == Arrivals::Kind::kConcurrency;
  // Sessions: turns s x turns ... (s + 1) x turns - 1 (the last may be
  // shorter); a session's first turn arrives by the traffic, a later one
  // think_seconds after the turn before it finished.
  const int64_t sessions = (n + turns - 1) / turns;
  int64_t releasable =
      closed_loop ? std::min<int64_t>(config.arrivals.concurrency, sessions)
                  : sessions;
  using FollowUp = std::pair<double, int64_t>;  // (arrival, request)
  std::priority_queue<FollowUp, std::vector<FollowUp>, std::greater<>>
      follow_ups;

  DecodeFirstScheduler default_scheduler;
  std::vector<Pool> pools(deployment.pools.size());
  // (prefill pool replica, request, step seconds, prefill end): a prefill
  // stage done, its hand-off made after the iteration that ended it.
  struct Done {
    size_t replica;
    int64_t request;
    double t, step_seconds;
  };
  std::vector<Done> handoffs;
  // Route request i to the first pool at `t` (its arrival).
  auto route = [&](int64_t i, double t) {
    Pool& pool = pools[0];
    RequestState& r = reqs[i];
    r.stage_target = split ? 1 : r.generated_target;
    for (size_t k = 0; k < pool.replicas.size(); ++k) {
      pool.loads[k] = pool.replicas[k]->outstanding_tokens();
    }
    size_t to = 0;
    if (pool.router->reads_prefix_cache()) {
      for (size_t k = 0; k < pool.replicas.size(); ++k) {
        pool.cached[k] = pool.replicas[k]->kv().CachedPrefixTokens(i, r);
      }
      to = pool.router->PickFor(pool.loads, pool.cached,
                                r.prompt + r.stage_target);
    } else {
      to = pool.router->Pick(pool.loads);
    }
    pool.replicas[to]->Enqueue(i, t);
  };
  // A request's end: its session's next turn after the think time, else a
  // closed loop's client starts its next session.
  auto finished = [&](int64_t i, double t) {
    ++control.done;
    if (turns > 1 && (i + 1) % turns != 0 && i + 1 < n) {
      const double at = t + config.sessions.think_seconds;
      reqs[i + 1].arrival = at;
      follow_ups.emplace(at, i + 1);
    } else if (closed_loop && releasable < sessions) {
      const int64_t first = releasable++ * turns;
      reqs[first].arrival = t;
      route(first, t);
    }
  };
  for (size_t p = 0; p < pools.size(); ++p) {
    Pool& pool = pools[p];
    pool.spec = &deployment.pools[p];
    ASSIGN_OR_RETURN(pool.router, MakeRouter(pool.spec->router, config.seed + p,
                                             pool.spec->name.empty()
                                                 ? "router"
                                                 : absl::StrCat(pool.spec->name,
                                                                "_router")));
    const Scheduler& scheduler =
        pool.spec->scheduler ? *pool.spec->scheduler : default_scheduler;
    const size_t replicas = static_cast<size_t>(pool.spec->replicas);
    pool.loads.assign(replicas, 0);
    pool.cached.assign(replicas, 0);
    pool.inflight.assign(replicas, 0);
    // Offload tiers: the reload-or-recompute rule needs the pool's cost of
    // recomputing a prompt (kv_offload.h).
    ServingLimits limits = pool.spec->limits;
    if (!limits.offload_tiers.empty() && limits.prefix_caching) {
      ASSIGN_OR_RETURN(
          limits.recompute,
          EstimateRecomputeCost(*pool.spec->cost, limits.max_num_batched_tokens,
                                limits.max_num_batched_tokens));
    }
    for (size_t k = 0; k < replicas; ++k) {
      Replica::StageDone done;
      if (split && p == 0) {
        done = [&, k](int64_t i, double t, double step) {
          if (reqs[i].generated_target > 1) {
            handoffs.push_back({k, i, t, step});
          } else {
            finished(i, t);  // one token: the prefill was all of it
          }
        };
      } else {
        done = [&](int64_t i, double t, double) { finished(i, t); };
      }
      pool.replicas.push_back(std::make_unique<Replica>(
          *pool.spec->cost, limits, scheduler, reqs, control, std::move(done)));
    }
  }

  // KV hand-offs in flight: (arrival at the decode replica, request,
  // decode replica), earliest first.
  using Landing = std::tuple<double, int64_t, size_t>;
  std::priority_queue<Landing, std::vector<Landing>, std::greater<>> landing;
  std::vector<double> transfer_seconds;
  std::vector<double> send_free, receive_free;  // per replica, the wire
  if (split) {
    send_free.assign(pools[0].replicas.size(), 0);
    receive_free.assign(pools[1].replicas.size(), 0);
    transfer_seconds.reserve(static_cast<size_t>(n));
  }
  auto hand_off = [&](const Done& d) {
    const KvHandoff& h = *deployment.handoff;
    Pool& decode = pools[1];
    RequestState& r = reqs[d.request];
    r.finish = -1;
    r.stage_target = r.generated_target;
    for (size_t k = 0; k < decode.replicas.size(); ++k) {
      decode.loads[k] =
          decode.replicas[k]->outstanding_tokens() + decode.inflight[k];
    }
    const size_t to = decode.router->Pick(decode.loads);
    const int64_t left = r.generated_target - r.generated;
    decode.inflight[to] += left;
    KvTransferWork work;
    const double tokens = static_cast<double>(r.prompt);
    work.bytes_per_prefill_device = tokens * h.prefill_bytes_per_token;
    work.bytes_per_decode_device = tokens * h.decode_bytes_per_token;
    work.prefill_seconds = d.step_seconds;
    work.layers = h.layers;
    work.overlap = h.overlap;
    const double seconds = KvTransferSeconds(h.link, work);
    // One transfer at a time on a sender's and a receiver's links; the
    // latency overlaps the next one's wire.
    const double start =
        std::max({d.t, send_free[d.replica], receive_free[to]});
    const double end = start + seconds;
    send_free[d.replica] = receive_free[to] = end - h.link.latency_seconds;
    transfer_seconds.push_back(end - d.t);
    landing.emplace(end, d.request, to);
  };

  // Open loop: sessions' first turns in order (non-decreasing); closed
  // loop: the first `releasable` sessions at 0, then one per session's end
  // (routed at that end). Later turns: follow_ups.
  int64_t next_arrival = 0;  // a session's first turn
  if (closed_loop) {
    for (; next_arrival < releasable * turns; next_arrival += turns) {
      route(next_arrival, 0);
    }
  }
  constexpr double kNever = std::numeric_limits<double>::infinity();
  // The next arrival (time, request); a later turn goes before a first
  // turn at the same time.
  auto next_arrival_of = [&] {
    std::pair<double, int64_t> a{
        !closed_loop && next_arrival < n ? reqs[next_arrival].arrival : kNever,
        next_arrival};
    if (!follow_ups.empty() && follow_ups.top().first <= a.first) {
      a = follow_ups.top();
    }
    return a;
  };
  auto landing_of = [&] {
    return landing.empty() ? kNever : std::get<0>(landing.top());
  };
  while (control.done < n) {
    const auto [arrival_at, arriving] = next_arrival_of();
    const double landing_at = landing_of();
    Replica* next = nullptr;
    double next_at = kNever;
    for (Pool& pool : pools) {
      for (auto& rep : pool.replicas) {
        if (rep->NextEventTime() < next_at) {
          next_at = rep->NextEventTime();
          next = rep.get();
        }
      }
    }
    // Arrivals at a time go before the iterations at it.
    if (arrival_at <= landing_at && arrival_at <= next_at &&
        arrival_at < kNever) {
      route(arriving, arrival_at);
      if (arriving == next_arrival) {
        next_arrival += turns;
      } else {
        follow_ups.pop();
      }
      continue;
    }
    if (landing_at <= next_at && landing_at < kNever) {
      const auto [t, i, to] = landing.top();
      landing.pop();
      pools[1].inflight[to] -= reqs[i].generated_target - reqs[i].generated;
      pools[1].replicas[to]->Enqueue(i, t);
      continue;
    }
    if (next == nullptr) {
      return absl::InternalError("simulation: idle with nothing to arrive");
    }
    RETURN_IF_ERROR(next->Iterate());
    for (const Done& d : handoffs) hand_off(d);
    handoffs.clear();
    // Its lone cohort steps on until anything else would happen first.
    if (next->Coasts()) {
      double horizon = std::min(next_arrival_of().first, landing_of());
      for (Pool& pool : pools) {
        for (auto& rep : pool.replicas) {
          if (rep.get() != next) {
            horizon = std::min(horizon, rep->NextEventTime());
          }
        }
      }
      RETURN_IF_ERROR(next->Coast(horizon));
    }
  }

  // Results.
  DeploymentResult result;
  SimulationResult& out = result.overall;
  out.steps = control.steps;
  std::vector<std::pair<double, int64_t>> itl;
  double kv_token_seconds = 0, capacity = 0;
  double running = 0, busy = 0;
  for (Pool& pool : pools) {
    for (auto& rep : pool.replicas) {
      const ReplicaStats& s = rep->stats();
      out.max_waiting = std::max(out.max_waiting, s.max_waiting);
      out.kv_usage_peak = std::max(out.kv_usage_peak, s.kv_usage_peak);
      kv_token_seconds += rep->kv().used_token_seconds();
      capacity += static_cast<double>(rep->kv().capacity_tokens());
      running += s.running_seconds;
      busy += s.busy_seconds;
      if (itl.empty()) {
        itl.swap(rep->itl());
      } else {
        itl.insert(itl.end(), rep->itl().begin(), rep->itl().end());
      }
    }
  }
  std::vector<double> ttft, tpot, e2e, queue;
  std::vector<Wait> waits;
  waits.reserve(reqs.size());
  ttft.reserve(reqs.size());
  e2e.reserve(reqs.size());
  queue.reserve(reqs.size());
  double first_arrival = reqs.front().arrival;
  double last_finish = 0;
  double out_tokens = 0, in_tokens = 0;
  for (const RequestState& r : reqs) {
    out.prefill_tokens_saved += r.prefix_hit_tokens;
    out.offload_hit_tokens += r.offload_hit_tokens;
    out.preemptions += r.preemptions;
    out.swapped_preemptions += r.swaps;
    first_arrival = std::min(first_arrival, r.arrival);
    last_finish = std::max(last_finish, r.finish);
    ttft.push_back(r.first - r.arrival);
    e2e.push_back(r.finish - r.arrival);
    queue.push_back(r.admitted - r.arrival);
    waits.push_back({r.arrival, r.admitted});
    if (r.generated_target >= 2) {
      tpot.push_back((r.finish - r.first) /
                     static_cast<double>(r.generated_target - 1));
    }
    out_tokens += static_cast<double>(r.generated_target);
    in_tokens += static_cast<double>(r.prompt);
  }
  out.requests = n;
  out.duration_seconds = last_finish - first_arrival;
  out.ttft = Summarize(ttft);
  out.tpot = Summarize(tpot);
  out.e2e = Summarize(e2e);
  out.queue = Summarize(queue);
  out.itl = internal::SummarizeWeighted(itl);
  out.backlog = MeasureBacklog(waits);
  out.stable = closed_loop || !out.backlog.growing;
  if (out.duration_seconds > 0) {
    out.requests_per_second = static_cast<double>(n) / out.duration_seconds;
    out.output_tokens_per_second = out_tokens / out.duration_seconds;
    out.input_tokens_per_second = in_tokens / out.duration_seconds;
    out.kv_usage_mean = kv_token_seconds / capacity / out.duration_seconds;
  }
  if (busy > 0) out.mean_running = running / busy;
  if (in_tokens > 0) {
    out.prefix_hit_rate =
        static_cast<double>(out.prefill_tokens_saved) / in_tokens;
    out.kv_offload_hit_rate =
        static_cast<double>(out.offload_hit_tokens) / in_tokens;
  }
  if (config.timeline_buckets > 0) {
    std::vector<RequestSpan> spans;
    spans.reserve(reqs.size());
    for (const RequestState& r : reqs) {
      spans.push_back({r.arrival, r.admitted, r.first, r.finish, r.reserve,
                       r.generated_target});
    }
    // KV use against the pool that holds a request to its end.
    const Pool& last = pools.back();
    double last_capacity = 0;
    for (const auto& rep : last.replicas) {
      last_capacity += static_cast<double>(rep->kv().capacity_tokens());
    }
    out.timeline = BuildTimeline(spans, last_capacity, config.timeline_buckets);
  }
  SummarizeTiers(pools, out);
  for (const Pool& pool : pools) {
    PoolResult p;
    p.name = pool.spec->name;
    p.replicas = pool.spec->replicas;
    double pool_kv = 0, pool_capacity = 0, pool_running = 0, pool_busy = 0;
    for (const auto& rep : pool.replicas) {
      const ReplicaStats& s = rep->stats();
      p.steps += s.steps;
      pool_kv += rep->kv().used_token_seconds();
      pool_capacity += static_cast<double>(rep->kv().capacity_tokens());
      pool_running += s.running_seconds;
      pool_busy += s.busy_seconds;
    }
    if (out.duration_seconds > 0) {
      p.utilization = pool_busy / static_cast<double>(pool.replicas.size()) /
                      out.duration_seconds;
      p.kv_usage_mean = pool_kv / pool_capacity / out.duration_seconds;
    }
    if (pool_busy > 0) p.mean_running = pool_running / pool_busy;
    result.pools.push_back(std::move(p));
  }
  result.kv_transfer_seconds = Summarize(transfer_seconds);
  return result;
}

}  // namespace ridgeline::serving
