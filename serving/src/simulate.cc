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
  for (RequestState& r : reqs) {
    r.prompt = Draw(config.prompt, prompt_cdf, rng);
    r.generated_target = Draw(config.generated, gen_cdf, rng);
  }
  switch (arrivals.kind) {
    case Arrivals::Kind::kPoisson: {
      double t = 0;
      for (RequestState& r : reqs) {
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
      for (RequestState& r : reqs) r.arrival = 0;
      break;
  }
  return reqs;
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
