#include "ridgeline/serving/simulate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/status_macros.h"

namespace ridgeline::serving {
namespace {

constexpr int64_t kMaxTokens = 10'000'000;
constexpr size_t kMaxBins = 4096;

absl::Status Bad(absl::string_view field, absl::string_view range,
                 absl::string_view got) {
  return engine::WithFieldPath(
      absl::InvalidArgumentError(
          absl::StrCat(field, ": must be ", range, "; got ", got)),
      std::string_view(field.data(), field.size()));
}

absl::Status CheckLengths(const LengthDistribution& d,
                          absl::string_view field) {
  auto in = [](int64_t v) { return v >= 1 && v <= kMaxTokens; };
  switch (d.kind) {
    case LengthDistribution::Kind::kFixed:
      if (!in(d.value)) return Bad(field, "in [1, 10000000]", absl::StrCat(d.value));
      return absl::OkStatus();
    case LengthDistribution::Kind::kUniform:
      if (!in(d.min) || !in(d.max) || d.min > d.max) {
        return Bad(absl::StrCat(field, ".uniform"),
                   "1 <= min <= max <= 10000000",
                   absl::StrCat("[", d.min, ", ", d.max, "]"));
      }
      return absl::OkStatus();
    case LengthDistribution::Kind::kEmpirical: {
      if (d.values.empty() || d.values.size() > kMaxBins ||
          d.values.size() != d.weights.size()) {
        return Bad(absl::StrCat(field, ".histogram"),
                   "1..4096 bins with one weight per value",
                   absl::StrCat(d.values.size(), " values, ", d.weights.size(),
                                " weights"));
      }
      for (size_t i = 0; i < d.values.size(); ++i) {
        if (!in(d.values[i])) {
          return Bad(absl::StrCat(field, ".histogram.values[", i, "]"),
                     "in [1, 10000000]", absl::StrCat(d.values[i]));
        }
        if (!(d.weights[i] > 0) || !std::isfinite(d.weights[i])) {
          return Bad(absl::StrCat(field, ".histogram.weights[", i, "]"),
                     "finite and > 0", absl::StrCat(d.weights[i]));
        }
      }
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

// splitmix64-seeded xorshift: the same sequence on every platform (the
// standard library's distributions are implementation-defined).
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed + 0x9E3779B97F4A7C15ull) {}
  uint64_t Next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double Uniform01() {  // [0, 1)
    return static_cast<double>(Next() >> 11) * 0x1.0p-53;
  }

 private:
  uint64_t s_;
};

int64_t Draw(const LengthDistribution& d, const std::vector<double>& cdf,
             Rng& rng) {
  switch (d.kind) {
    case LengthDistribution::Kind::kFixed:
      return d.value;
    case LengthDistribution::Kind::kUniform:
      return d.min + static_cast<int64_t>(
                         rng.Next() % static_cast<uint64_t>(d.max - d.min + 1));
    case LengthDistribution::Kind::kEmpirical: {
      const double u = rng.Uniform01() * cdf.back();
      const size_t i = static_cast<size_t>(
          std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
      return d.values[std::min(i, d.values.size() - 1)];
    }
  }
  return d.value;
}

std::vector<double> Cdf(const LengthDistribution& d) {
  std::vector<double> cdf(d.weights.size());
  std::partial_sum(d.weights.begin(), d.weights.end(), cdf.begin());
  return cdf;
}

// Nearest rank on a sorted sample.
double Rank(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double n = static_cast<double>(sorted.size());
  const size_t i = static_cast<size_t>(std::max(std::ceil(p * n) - 1, 0.0));
  return sorted[std::min(i, sorted.size() - 1)];
}

}  // namespace

Percentiles Summarize(std::vector<double>& v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  p.p50 = Rank(v, 0.5);
  p.p90 = Rank(v, 0.9);
  p.p99 = Rank(v, 0.99);
  p.mean = std::accumulate(v.begin(), v.end(), 0.0) /
           static_cast<double>(v.size());
  return p;
}

namespace {

// Values with integer weights (step time x decode tokens in it).
Percentiles SummarizeWeighted(std::vector<std::pair<double, int64_t>>& v) {
  Percentiles p;
  double total = 0;
  double sum = 0;
  for (const auto& [x, w] : v) {
    total += static_cast<double>(w);
    sum += x * static_cast<double>(w);
  }
  if (total <= 0) return p;
  std::sort(v.begin(), v.end());
  p.mean = sum / total;
  double* out[] = {&p.p50, &p.p90, &p.p99};
  const double ps[] = {0.5, 0.9, 0.99};
  double cum = 0;
  size_t k = 0;
  for (const auto& [x, w] : v) {
    cum += static_cast<double>(w);
    while (k < 3 && cum >= std::ceil(ps[k] * total)) *out[k++] = x;
    if (k == 3) break;
  }
  return p;
}

struct Request {
  double arrival = 0;
  double admitted = -1;
  double first = -1;
  double finish = -1;
  int64_t prompt = 0;
  int64_t generated_target = 0;
  int64_t prefilled = 0;
  int64_t generated = 0;
  int64_t reserve = 0;  // KV tokens held from admission to finish
  double last_token = -1;  // when its latest token appeared
};

}  // namespace

LengthDistribution LengthDistribution::Fixed(int64_t v) {
  LengthDistribution d;
  d.value = v;
  return d;
}
LengthDistribution LengthDistribution::Uniform(int64_t lo, int64_t hi) {
  LengthDistribution d;
  d.kind = Kind::kUniform;
  d.min = lo;
  d.max = hi;
  return d;
}
LengthDistribution LengthDistribution::Empirical(std::vector<int64_t> values,
                                                 std::vector<double> weights) {
  LengthDistribution d;
  d.kind = Kind::kEmpirical;
  d.values = std::move(values);
  d.weights = std::move(weights);
  return d;
}
double LengthDistribution::Mean() const {
  switch (kind) {
    case Kind::kFixed:
      return static_cast<double>(value);
    case Kind::kUniform:
      return 0.5 * static_cast<double>(min + max);
    case Kind::kEmpirical: {
      double w = 0, s = 0;
      for (size_t i = 0; i < values.size() && i < weights.size(); ++i) {
        w += weights[i];
        s += weights[i] * static_cast<double>(values[i]);
      }
      return w > 0 ? s / w : 0;
    }
  }
  return 0;
}
int64_t LengthDistribution::Max() const {
  switch (kind) {
    case Kind::kFixed:
      return value;
    case Kind::kUniform:
      return max;
    case Kind::kEmpirical:
      return values.empty() ? 0
                            : *std::max_element(values.begin(), values.end());
  }
  return 0;
}

int64_t SimulatedRequests(const SimulationConfig& c) {
  return c.arrivals.kind == Arrivals::Kind::kTrace
             ? static_cast<int64_t>(c.arrivals.times.size())
             : c.requests;
}

double SequenceStepsPerRequest(double mean_prompt, double mean_generated,
                               int64_t max_num_batched_tokens) {
  const double chunks =
      std::ceil(mean_prompt / static_cast<double>(std::max<int64_t>(
                                  1, max_num_batched_tokens)));
  return std::max(1.0, mean_generated + chunks - 1);
}

absl::Status ValidateSimulationConfig(const SimulationConfig& c) {
  const Arrivals& a = c.arrivals;
  switch (a.kind) {
    case Arrivals::Kind::kPoisson:
      if (!(a.rate >= kMinRate && a.rate <= kMaxRate)) {
        return Bad("traffic.rate", kRateRange,
                   absl::StrCat(a.rate));
      }
      break;
    case Arrivals::Kind::kConcurrency:
      if (a.concurrency < 1 || a.concurrency > 65536) {
        return Bad("traffic.concurrency", "in [1, 65536]",
                   absl::StrCat(a.concurrency));
      }
      break;
    case Arrivals::Kind::kTrace:
      if (a.times.empty() ||
          a.times.size() > static_cast<size_t>(kMaxRequests)) {
        return Bad("traffic.arrival_times", "1..1000000 times",
                   absl::StrCat(a.times.size()));
      }
      for (size_t i = 0; i < a.times.size(); ++i) {
        const bool ok = std::isfinite(a.times[i]) && a.times[i] >= 0 &&
                        (i == 0 || a.times[i] >= a.times[i - 1]);
        if (!ok) {
          return Bad(absl::StrCat("traffic.arrival_times[", i, "]"),
                     "finite, >= 0 and non-decreasing", absl::StrCat(a.times[i]));
        }
      }
      break;
  }
  if (a.kind != Arrivals::Kind::kTrace &&
      (c.requests < 1 || c.requests > kMaxRequests)) {
    return Bad("simulation.requests", "in [1, 1000000]",
               absl::StrCat(c.requests));
  }
  RETURN_IF_ERROR(CheckLengths(c.prompt, "traffic.prompt_tokens"));
  RETURN_IF_ERROR(CheckLengths(c.generated, "traffic.generated_tokens"));
  if (c.timeline_buckets < 0 || c.timeline_buckets > kMaxTimelineBuckets) {
    return Bad("simulation.timeline_buckets",
               absl::StrCat("in [0, ", kMaxTimelineBuckets, "]"),
               absl::StrCat(c.timeline_buckets));
  }
  if (c.max_steps < 1) {
    return Bad(c.max_steps_name, ">= 1", absl::StrCat(c.max_steps));
  }
  const ServingLimits& l = c.limits;
  if (l.pipeline_stages < 1 || l.pipeline_stages > 256) {
    return Bad("parallelism.pipeline_parallel", "in [1, 256]",
               absl::StrCat(l.pipeline_stages));
  }
  if (l.attention_ranks < 1 || l.attention_ranks > 256) {
    return Bad("parallelism.expert_parallel", "in [1, 256]",
               absl::StrCat(l.attention_ranks));
  }
  if (l.max_num_seqs < 1 || l.max_num_batched_tokens < 1 ||
      l.kv_capacity_tokens < 1 || l.block_size < 1) {
    return Bad("serving", "max_num_seqs, max_num_batched_tokens, KV capacity "
               "and block_size >= 1",
               absl::StrCat(l.max_num_seqs, ", ", l.max_num_batched_tokens,
                            ", ", l.kv_capacity_tokens, ", ", l.block_size));
  }
  return absl::OkStatus();
}

namespace {

// One replica (or one attention rank of one, see Simulate). With S
// pipeline stages the replica keeps up to S micro-batches in flight, one
// per slot (vLLM's virtual engines): a request is bound to the slot that
// admits it, a slot launches its next micro-batch once its previous one
// has left the last stage, and launches are at least one pipeline interval
// apart (the slowest stage + its send). Each micro-batch's tokens appear
// when it leaves the last stage: StepTime::seconds after its launch. S = 1
// is plain continuous batching: launch, wait one step, launch.
absl::StatusOr<SimulationResult> SimulateReplica(const StepCost& cost,
                                                 const SimulationConfig& config) {
  const Arrivals& arrivals = config.arrivals;
  const ServingLimits& limits = config.limits;
  const int64_t n = SimulatedRequests(config);

  // Lengths first, then arrival gaps, from one stream: the same requests
  // for every rate at a seed (common random numbers for the rate search).
  Rng rng(config.seed);
  const std::vector<double> prompt_cdf = Cdf(config.prompt);
  const std::vector<double> gen_cdf = Cdf(config.generated);
  std::vector<Request> reqs(static_cast<size_t>(n));
  const int64_t block = limits.block_size;
  for (Request& r : reqs) {
    r.prompt = Draw(config.prompt, prompt_cdf, rng);
    r.generated_target = Draw(config.generated, gen_cdf, rng);
    r.reserve =
        (r.prompt + r.generated_target - 1 + block - 1) / block * block;
    if (r.reserve > limits.kv_capacity_tokens) {
      return absl::FailedPreconditionError(absl::StrCat(
          "a request of ", r.prompt, " + ", r.generated_target,
          " tokens needs ", r.reserve, " KV slots; the replica holds ",
          limits.kv_capacity_tokens));
    }
  }
  // Released requests enter `waiting` in arrival order.
  std::vector<int64_t> waiting;
  waiting.reserve(static_cast<size_t>(n));
  size_t head = 0;
  int64_t released = 0;  // requests whose arrival time is set and passed
  switch (arrivals.kind) {
    case Arrivals::Kind::kPoisson: {
      double t = 0;
      for (Request& r : reqs) {
        r.arrival = t;
        t += -std::log(1 - rng.Uniform01()) / arrivals.rate;
      }
      break;
    }
    case Arrivals::Kind::kTrace:
      for (int64_t i = 0; i < n; ++i) reqs[i].arrival = arrivals.times[i];
      break;
    case Arrivals::Kind::kConcurrency:
      // The first `concurrency` requests arrive at 0; each finish releases
      // the next (its arrival is set then).
      for (Request& r : reqs) r.arrival = 0;
      break;
  }
  const bool closed_loop = arrivals.kind == Arrivals::Kind::kConcurrency;
  // In the closed loop only these are released up front.
  int64_t releasable =
      closed_loop ? std::min<int64_t>(arrivals.concurrency, n) : n;

  struct Member {
    int64_t req;
    int64_t tokens;
    bool decode;
  };
  // Per slot: its running requests, its micro-batch in flight (members and
  // the time it leaves the last stage; < 0: none in flight).
  const size_t slots = static_cast<size_t>(limits.pipeline_stages);
  std::vector<std::vector<int64_t>> running(slots);
  std::vector<std::vector<Member>> members(slots);
  std::vector<double> done_at(slots, -1);
  int64_t running_total = 0;
  std::vector<SequenceInStep> seqs;
  // (inter-token gap, decode tokens with it), folded by gap whenever it
  // doubles: a run of 2e7 steps held 320 MB of gaps (issue 26) while the
  // step times, cached by shape, take few distinct values.
  std::vector<std::pair<double, int64_t>> step_itl;
  size_t itl_fold_at = 1 << 16;
  auto fold_itl = [&] {
    std::sort(step_itl.begin(), step_itl.end());
    size_t w = 0;
    for (size_t r = 0; r < step_itl.size(); ++r) {
      if (w > 0 && step_itl[w - 1].first == step_itl[r].first) {
        step_itl[w - 1].second += step_itl[r].second;
      } else {
        step_itl[w++] = step_itl[r];
      }
    }
    step_itl.resize(w);
    step_itl.shrink_to_fit();
    itl_fold_at = std::max<size_t>(1 << 16, 2 * w);
  };
  SimulationResult out;
  double now = 0;
  double next_launch = 0;  // the first stage takes a micro-batch again
  size_t next_slot = 0;    // round robin
  int64_t done = 0;
  int64_t reserved = 0;
  double kv_time = 0, kv_clock = 0;  // integral of reserved KV over time
  double running_time = 0;
  double busy_time = 0, busy_until = 0;  // union of in-flight spans
  const double capacity = static_cast<double>(limits.kv_capacity_tokens);
  auto advance_kv = [&](double t) {
    kv_time += static_cast<double>(reserved) * (t - kv_clock);
    kv_clock = t;
  };

  // The micro-batch of slot k leaves the last stage at done_at[k].
  auto retire = [&](size_t k) {
    const double t = done_at[k];
    done_at[k] = -1;
    int64_t decoded = 0;
    double gap = 0;
    bool any_finished = false;
    for (const Member& m : members[k]) {
      Request& r = reqs[m.req];
      if (m.decode) {
        const double g = t - r.last_token;
        if (decoded > 0 && g != gap) {
          step_itl.emplace_back(gap, decoded);
          decoded = 0;
        }
        gap = g;
        ++decoded;
        ++r.generated;
        r.last_token = t;
      } else {
        r.prefilled += m.tokens;
        if (r.prefilled == r.prompt) {
          r.generated = 1;
          r.first = r.last_token = t;
        }
      }
      if (r.generated == r.generated_target && r.finish < 0 &&
          r.prefilled == r.prompt) {
        r.finish = t;
        advance_kv(t);
        reserved -= r.reserve;
        ++done;
        --running_total;
        any_finished = true;
        if (closed_loop && releasable < n) reqs[releasable++].arrival = t;
      }
    }
    if (decoded > 0) step_itl.emplace_back(gap, decoded);
    if (step_itl.size() >= itl_fold_at) fold_itl();
    if (any_finished) {
      std::erase_if(running[k], [&](int64_t i) { return reqs[i].finish >= 0; });
    }
  };
  // Retires, in order of leaving, every micro-batch out by `t`.
  auto retire_until = [&](double t) {
    for (;;) {
      size_t first = slots;
      for (size_t k = 0; k < slots; ++k) {
        if (done_at[k] >= 0 && done_at[k] <= t &&
            (first == slots || done_at[k] < done_at[first])) {
          first = k;
        }
      }
      if (first == slots) return;
      retire(first);
    }
  };
  // Builds slot k's micro-batch at `now`: its decode tokens (one each)
  // first, then chunks of its started prefills, then new admissions: vLLM's
  // order, so a running request is never starved. Empty: nothing to run.
  auto build = [&](size_t k) {
    members[k].clear();
    seqs.clear();
    int64_t budget = limits.max_num_batched_tokens;
    for (const int64_t i : running[k]) {
      const Request& r = reqs[i];
      if (r.prefilled < r.prompt || budget == 0) continue;
      seqs.push_back({r.prompt + r.generated - 1, 1});
      members[k].push_back({i, 1, true});
      --budget;
    }
    for (const int64_t i : running[k]) {
      const Request& r = reqs[i];
      if (r.prefilled >= r.prompt || budget == 0) continue;
      const int64_t chunk = std::min(r.prompt - r.prefilled, budget);
      seqs.push_back({r.prefilled, chunk});
      members[k].push_back({i, chunk, false});
      budget -= chunk;
    }
    while (head < waiting.size() && budget > 0 &&
           running_total < limits.max_num_seqs) {
      Request& r = reqs[waiting[head]];
      if (reserved + r.reserve > limits.kv_capacity_tokens) break;  // FIFO
      advance_kv(now);
      reserved += r.reserve;
      r.admitted = now;
      running[k].push_back(waiting[head]);
      ++running_total;
      const int64_t chunk = std::min(r.prompt, budget);
      seqs.push_back({0, chunk});
      members[k].push_back({waiting[head], chunk, false});
      budget -= chunk;
      ++head;
    }
  };

  while (done < n) {
    now = std::max(now, next_launch);
    retire_until(now);
    if (done >= n) break;
    while (released < releasable && reqs[released].arrival <= now) {
      waiting.push_back(released++);
    }
    out.max_waiting = std::max<int64_t>(
        out.max_waiting, static_cast<int64_t>(waiting.size() - head));
    size_t launched = slots;
    bool any_free = false;
    for (size_t j = 0; j < slots && launched == slots; ++j) {
      const size_t k = (next_slot + j) % slots;
      if (done_at[k] >= 0) continue;  // its micro-batch is in flight
      any_free = true;
      build(k);
      if (!seqs.empty()) launched = k;
    }
    if (launched == slots) {
      // Nothing to launch now: wait for a micro-batch to leave the last
      // stage or, with a slot free, the next arrival.
      double next = std::numeric_limits<double>::infinity();
      for (size_t k = 0; k < slots; ++k) {
        if (done_at[k] >= 0) next = std::min(next, done_at[k]);
      }
      if (any_free && released < releasable) {
        next = std::min(next, reqs[released].arrival);
      }
      if (!std::isfinite(next)) {
        return absl::InternalError("simulation: idle with nothing to arrive");
      }
      now = std::max(now, next);
      continue;
    }
    if (++out.steps > config.max_steps) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "simulation stopped after ", config.max_steps, " steps (the limit, ",
          config.max_steps_name, ") with ", done, " of ", n,
          " requests finished; simulate fewer requests"));
    }
    if ((out.steps & 1023) == 0 && config.stop && config.stop()) {
      return absl::DeadlineExceededError(absl::StrCat(
          "simulation stopped at step ", out.steps, " (", done, " of ", n,
          " requests finished): deadline exceeded or cancelled"));
    }
    ASSIGN_OR_RETURN(StepTime t, cost.Time(seqs));
    if (!(t.seconds > 0) || !std::isfinite(t.seconds) ||
        !std::isfinite(t.interval_seconds)) {
      return absl::InternalError(absl::StrCat("simulation: step time ",
                                              t.seconds, " s, interval ",
                                              t.interval_seconds, " s"));
    }
    // A stage never takes longer than the whole traversal.
    const double interval = t.interval_seconds > 0
                                ? std::min(t.interval_seconds, t.seconds)
                                : t.seconds;
    done_at[launched] = now + t.seconds;
    next_launch = now + interval;
    next_slot = (launched + 1) % slots;
    busy_time += done_at[launched] - std::max(now, busy_until);
    busy_until = std::max(busy_until, done_at[launched]);
    running_time += static_cast<double>(seqs.size()) * t.seconds;
    out.kv_usage_peak =
        std::max(out.kv_usage_peak, static_cast<double>(reserved) / capacity);
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
  for (const Request& r : reqs) {
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
  out.itl = SummarizeWeighted(step_itl);
  out.backlog = MeasureBacklog(waits);
  out.stable = closed_loop || !out.backlog.growing;
  if (out.duration_seconds > 0) {
    out.requests_per_second = static_cast<double>(n) / out.duration_seconds;
    out.output_tokens_per_second = out_tokens / out.duration_seconds;
    out.input_tokens_per_second = in_tokens / out.duration_seconds;
    out.kv_usage_mean = kv_time / capacity / out.duration_seconds;
  }
  if (busy_time > 0) out.mean_running = running_time / busy_time;
  if (config.timeline_buckets > 0) {
    std::vector<RequestSpan> spans;
    spans.reserve(reqs.size());
    for (const Request& r : reqs) {
      spans.push_back({r.arrival, r.admitted, r.first, r.finish, r.reserve,
                       r.generated_target});
    }
    out.timeline = BuildTimeline(spans, capacity, config.timeline_buckets);
  }
  return out;
}

}  // namespace

SimulationConfig RankConfig(const SimulationConfig& config) {
  const int64_t e = config.limits.attention_ranks;
  if (e <= 1) return config;
  SimulationConfig rank = config;
  rank.limits.attention_ranks = 1;
  Arrivals& a = rank.arrivals;
  switch (a.kind) {
    // Rank 0 runs `requests` requests of its share, as a replica without
    // ranks would (the same queueing statistics for the rate search).
    case Arrivals::Kind::kPoisson:
      // A random split of a Poisson stream is Poisson at rate / e.
      a.rate = config.arrivals.rate / static_cast<double>(e);
      break;
    case Arrivals::Kind::kConcurrency:
      a.concurrency = (config.arrivals.concurrency + e - 1) / e;
      break;
    case Arrivals::Kind::kTrace:
      // Round robin: rank 0 takes arrivals 0, e, 2e, ...
      a.times.clear();
      for (size_t i = 0; i < config.arrivals.times.size();
           i += static_cast<size_t>(e)) {
        a.times.push_back(config.arrivals.times[i]);
      }
      break;
  }
  return rank;
}

absl::StatusOr<SimulationResult> Simulate(const StepCost& cost,
                                          const SimulationConfig& config) {
  RETURN_IF_ERROR(ValidateSimulationConfig(config));
  const int64_t e = config.limits.attention_ranks;
  if (e <= 1) return SimulateReplica(cost, config);
  // Attention data parallelism: the replica's e ranks run alike in lock
  // step (the engine's step is one rank's batch, the others' tokens in its
  // experts); rank 0 stands for all, the replica serves e times its rate.
  ASSIGN_OR_RETURN(SimulationResult r, SimulateReplica(cost, RankConfig(config)));
  const double ranks = static_cast<double>(e);
  r.requests_per_second *= ranks;
  r.output_tokens_per_second *= ranks;
  r.input_tokens_per_second *= ranks;
  return r;
}

}  // namespace ridgeline::serving
