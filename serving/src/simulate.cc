#include "ridgeline/serving/simulate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/serving/deployment.h"
#include "rng.h"
#include "traffic.h"

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

// The requests' own lengths and content line up with the arrivals (a
// trace's times) or with each other.
absl::Status CheckTraceRequests(const Arrivals& a) {
  const size_t n =
      a.kind == Arrivals::Kind::kTrace ? a.times.size() : a.own_requests();
  if (!a.prompt_tokens.empty() || !a.generated_tokens.empty()) {
    if (a.prompt_tokens.size() != n || a.generated_tokens.size() != n) {
      return Bad("traffic.trace",
                 "one prompt and one generated length per "
                 "arrival",
                 absl::StrCat(a.prompt_tokens.size(), " prompt and ",
                              a.generated_tokens.size(),
                              " generated lengths for ", n, " arrivals"));
    }
    for (size_t i = 0; i < n; ++i) {
      for (const auto& [v, what] :
           {std::pair{a.prompt_tokens[i], "prompt_tokens"},
            std::pair{a.generated_tokens[i], "generated_tokens"}}) {
        if (v < 1 || v > kMaxTokens) {
          return Bad(absl::StrCat("traffic.trace.", what, "[", i, "]"),
                     "in [1, 10000000]", absl::StrCat(v));
        }
      }
    }
  }
  const PromptContent& c = a.content;
  if (!c.empty() && (c.requests() != n || c.begin.front() != 0 ||
                     c.begin.back() != static_cast<int64_t>(c.chains.size()) ||
                     !std::is_sorted(c.begin.begin(), c.begin.end()))) {
    return Bad("traffic.trace.block_hashes",
               "one chain of block hashes per "
               "arrival",
               absl::StrCat(c.requests(), " chains for ", n, " arrivals"));
  }
  return absl::OkStatus();
}

using internal::Rng;

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
  if (c.arrivals.kind == Arrivals::Kind::kTrace) {
    return static_cast<int64_t>(c.arrivals.times.size());
  }
  const size_t own = c.arrivals.own_requests();
  return own > 0 ? static_cast<int64_t>(own) : c.requests;
}

Arrivals EveryRequest(const Arrivals& a, size_t stride) {
  Arrivals out = a;
  out.times.clear();
  out.prompt_tokens.clear();
  out.generated_tokens.clear();
  stride = std::max<size_t>(stride, 1);
  for (size_t i = 0; i < a.times.size(); i += stride) {
    out.times.push_back(a.times[i]);
  }
  for (size_t i = 0; i < a.prompt_tokens.size(); i += stride) {
    out.prompt_tokens.push_back(a.prompt_tokens[i]);
    out.generated_tokens.push_back(a.generated_tokens[i]);
  }
  out.content = a.content.Every(stride);
  return out;
}

Arrivals FirstRequests(const Arrivals& a, size_t n) {
  Arrivals out = a;
  for (auto* v : {&out.prompt_tokens, &out.generated_tokens}) {
    if (v->size() > n) v->resize(n);
  }
  if (out.times.size() > n) out.times.resize(n);
  out.content = a.content.First(n);
  return out;
}

namespace {

double MeanOf(const std::vector<int64_t>& v) {
  double s = 0;
  for (int64_t x : v) s += static_cast<double>(x);
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

bool TraceLengths(const SimulationConfig& c) {
  return !c.arrivals.prompt_tokens.empty();
}

absl::Status CheckSessions(const SimulationConfig& c) {
  const Sessions& s = c.sessions;
  if (s.turns < 1 || s.turns > kMaxTurns) {
    return Bad("traffic.sessions.turns", "in [1, 1000]", absl::StrCat(s.turns));
  }
  if (!(s.think_seconds >= 0 && s.think_seconds <= kMaxThinkSeconds)) {
    return Bad("traffic.sessions.think_time_seconds", "in [0, 86400] s",
               absl::StrCat(s.think_seconds));
  }
  if (s.turns == 1) return absl::OkStatus();
  if (c.arrivals.kind == Arrivals::Kind::kTrace ||
      c.arrivals.own_requests() > 0) {
    return Bad("traffic.sessions.turns",
               "1 with a trace (its requests are their own turns)",
               absl::StrCat(s.turns));
  }
  // The last turn holds the whole conversation.
  const double last = static_cast<double>(s.turns) *
                      static_cast<double>(c.prompt.Max() + c.generated.Max());
  if (last > static_cast<double>(kMaxTokens)) {
    return Bad("traffic.sessions.turns",
               absl::StrCat("at most ", kMaxTokens,
                            " tokens in the last turn's prompt (turns x "
                            "(longest prompt + longest generated))"),
               absl::StrCat(s.turns, " (", last, " tokens)"));
  }
  return absl::OkStatus();
}

}  // namespace

double MeanPromptTokens(const SimulationConfig& c) {
  if (TraceLengths(c)) return MeanOf(c.arrivals.prompt_tokens);
  // Turn k's prompt: k earlier turns' prompts and outputs, and its own.
  const double turns_before = static_cast<double>(c.sessions.turns - 1) / 2;
  return c.prompt.Mean() +
         turns_before * (c.prompt.Mean() + c.generated.Mean());
}

int64_t MaxPromptTokens(const SimulationConfig& c) {
  if (TraceLengths(c)) {
    return *std::max_element(c.arrivals.prompt_tokens.begin(),
                             c.arrivals.prompt_tokens.end());
  }
  return c.sessions.turns * c.prompt.Max() +
         (c.sessions.turns - 1) * c.generated.Max();
}

int64_t MaxGeneratedTokens(const SimulationConfig& c) {
  if (TraceLengths(c)) {
    return *std::max_element(c.arrivals.generated_tokens.begin(),
                             c.arrivals.generated_tokens.end());
  }
  return c.generated.Max();
}

double PromptContentBytes(const SimulationConfig& c) {
  // A chain hash or an index: 8 bytes each.
  const PromptContent& t = c.arrivals.content;
  double hashes = static_cast<double>(t.chains.size() + t.begin.size());
  const double n = static_cast<double>(SimulatedRequests(c));
  if (c.sessions.turns > 1) {
    // One hash per block of every turn's conversation so far, and an index.
    hashes +=
        n *
        ((MeanPromptTokens(c) + MeanGeneratedTokens(c)) /
             static_cast<double>(std::max<int64_t>(1, c.limits.block_size)) +
         1);
  } else if (c.shared_prefix_tokens > 0) {
    hashes += 2 * n;  // one unit and an index a request
  }
  return 8 * hashes;
}
double MeanGeneratedTokens(const SimulationConfig& c) {
  return TraceLengths(c) ? MeanOf(c.arrivals.generated_tokens)
                         : c.generated.Mean();
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
      RETURN_IF_ERROR(CheckTraceRequests(a));
      break;
  }
  if (a.kind != Arrivals::Kind::kTrace) {
    if (a.own_requests() > static_cast<size_t>(kMaxRequests)) {
      return Bad("traffic.trace", "1..1000000 requests",
                 absl::StrCat(a.own_requests()));
    }
    RETURN_IF_ERROR(CheckTraceRequests(a));
  }
  if (a.kind != Arrivals::Kind::kTrace && a.own_requests() == 0 &&
      (c.requests < 1 || c.requests > kMaxRequests)) {
    return Bad("simulation.requests", "in [1, 1000000]",
               absl::StrCat(c.requests));
  }
  if (c.shared_prefix_tokens < 0 || c.shared_prefix_tokens > kMaxTokens) {
    return Bad("traffic.shared_prefix_tokens", "in [0, 10000000]",
               absl::StrCat(c.shared_prefix_tokens));
  }
  if (c.shared_prefix_tokens > 0 && !a.content.empty()) {
    return Bad("traffic.shared_prefix_tokens",
               "0 with a trace that names its own prompt content",
               absl::StrCat(c.shared_prefix_tokens));
  }
  RETURN_IF_ERROR(CheckLengths(c.prompt, "traffic.prompt_tokens"));
  RETURN_IF_ERROR(CheckLengths(c.generated, "traffic.generated_tokens"));
  RETURN_IF_ERROR(CheckSessions(c));
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

namespace internal {

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

std::vector<RequestState> DrawRequests(const SimulationConfig& config) {
  const Arrivals& arrivals = config.arrivals;
  const int64_t n = SimulatedRequests(config);
  Rng rng(config.seed);
  const std::vector<double> prompt_cdf = Cdf(config.prompt);
  const std::vector<double> gen_cdf = Cdf(config.generated);
  std::vector<RequestState> reqs(static_cast<size_t>(n));
  if (TraceLengths(config)) {
    for (int64_t i = 0; i < n; ++i) {
      reqs[i].prompt = arrivals.prompt_tokens[i];
      reqs[i].generated_target = arrivals.generated_tokens[i];
    }
  } else {
    const int64_t turns = config.sessions.turns;
    for (int64_t i = 0; i < n; ++i) {
      RequestState& r = reqs[i];
      r.prompt = Draw(config.prompt, prompt_cdf, rng);
      r.generated_target = Draw(config.generated, gen_cdf, rng);
      // A later turn's prompt carries the conversation before its own.
      if (i % turns != 0) {
        r.prompt += reqs[i - 1].prompt + reqs[i - 1].generated_target;
      }
    }
  }
  switch (arrivals.kind) {
    case Arrivals::Kind::kPoisson: {
      // Sessions start at the rate (a session's later turns arrive after
      // the turn before them: the deployment sets them).
      double t = 0;
      const auto turns = static_cast<size_t>(config.sessions.turns);
      for (size_t i = 0; i < reqs.size(); i += turns) {
        reqs[i].arrival = t;
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
      for (RequestState& r : reqs) r.arrival = 0;
      break;
  }
  return reqs;
}

PromptContent SessionContent(const SimulationConfig& config,
                             const std::vector<RequestState>& reqs) {
  PromptContent c;
  const int64_t turns = config.sessions.turns;
  if (turns <= 1) return c;
  // One unit a KV block; a session's units name its tokens in order, so
  // every turn's chain is a prefix of the next one's. The shared prefix's
  // units are every session's.
  constexpr uint64_t kSystemPrompt = 0x53595354454D5052ull;
  const int64_t unit = config.limits.block_size;
  const int64_t shared_units = config.shared_prefix_tokens / unit;
  c.unit_tokens = unit;
  c.begin.reserve(reqs.size() + 1);
  for (size_t i = 0; i < reqs.size(); ++i) {
    const auto session = static_cast<uint64_t>(i / static_cast<size_t>(turns));
    const RequestState& r = reqs[i];
    c.StartRequest();
    uint64_t chain = 0;
    // The whole sequence: its generated tokens are the next turn's prompt.
    const int64_t units = (r.prompt + r.generated_target) / unit;
    for (int64_t j = 0; j < units; ++j) {
      const auto u = static_cast<uint64_t>(j);
      chain = j < shared_units ? ChainHash(chain, kSystemPrompt ^ u)
                               : ChainHash(chain, ChainHash(session + 1, u));
      c.Append(chain);
    }
  }
  return c;
}

PromptContent SharedPrefix(const SimulationConfig& config) {
  PromptContent c;
  if (config.shared_prefix_tokens <= 0) return c;
  // One unit of N tokens, the same for every request.
  constexpr uint64_t kSystemPrompt = 0x53595354454D5052ull;
  c.unit_tokens = config.shared_prefix_tokens;
  const int64_t n = SimulatedRequests(config);
  c.chains.assign(static_cast<size_t>(n), ChainHash(0, kSystemPrompt));
  c.begin.resize(static_cast<size_t>(n) + 1);
  for (int64_t i = 0; i <= n; ++i) c.begin[i] = i;
  return c;
}

}  // namespace internal

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
      break;
  }
  // Requests of their own go round robin: rank 0 takes 0, e, 2e, ...
  if (a.kind == Arrivals::Kind::kTrace || a.own_requests() > 0) {
    a = EveryRequest(a, static_cast<size_t>(e));
  }
  return rank;
}

namespace {

// One aggregated replica: a deployment of one pool of one.
absl::StatusOr<SimulationResult> SimulateOneReplica(
    const StepCost& cost, const SimulationConfig& config) {
  DeploymentSpec d;
  PoolSpec pool;
  pool.cost = &cost;
  pool.limits = config.limits;
  d.pools.push_back(pool);
  ASSIGN_OR_RETURN(DeploymentResult r, SimulateDeployment(d, config));
  return std::move(r.overall);
}

}  // namespace

absl::StatusOr<SimulationResult> Simulate(const StepCost& cost,
                                          const SimulationConfig& config) {
  RETURN_IF_ERROR(ValidateSimulationConfig(config));
  const int64_t e = config.limits.attention_ranks;
  if (e <= 1) return SimulateOneReplica(cost, config);
  // Attention data parallelism: the replica's e ranks run alike in lock
  // step (the engine's step is one rank's batch, the others' tokens in its
  // experts); rank 0 stands for all, the replica serves e times its rate.
  ASSIGN_OR_RETURN(SimulationResult r,
                   SimulateOneReplica(cost, RankConfig(config)));
  const double ranks = static_cast<double>(e);
  r.requests_per_second *= ranks;
  r.output_tokens_per_second *= ranks;
  r.input_tokens_per_second *= ranks;
  return r;
}

}  // namespace ridgeline::serving
