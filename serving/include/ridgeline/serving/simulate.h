// Online serving: a discrete-event simulation of one replica under
// continuous batching. Requests arrive (Poisson at a rate, a fixed number
// of clients each sending its next request when the last one finishes, or a
// trace of arrival times), wait FIFO, are admitted while a sequence slot,
// their whole KV reservation (prompt + generated - 1 tokens, in blocks; so
// nothing is ever preempted) and step budget are free, prefill in chunks
// and decode one token per step. Every step is timed by a StepCost over its
// real mix of sequences. Deterministic for a seed. The rooms: the traffic
// and results here, the scheduler (scheduler.h), the KV blocks
// (kv_cache.h), the event loop (replica.h); Simulate is a deployment of
// one replica (deployment.h, which also runs pools behind routers).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ridgeline/serving/capacity.h"
#include "ridgeline/serving/prompt_content.h"
#include "ridgeline/serving/simulate_timeline.h"
#include "ridgeline/serving/stability.h"
#include "ridgeline/serving/step_cost.h"

namespace ridgeline::serving {

// Token counts of requests.
struct LengthDistribution {
  enum class Kind { kFixed, kUniform, kEmpirical };
  Kind kind = Kind::kFixed;
  int64_t value = 0;          // kFixed
  int64_t min = 0, max = 0;   // kUniform, inclusive
  std::vector<int64_t> values;  // kEmpirical: histogram bins ...
  std::vector<double> weights;  // ... and their weights (> 0)

  static LengthDistribution Fixed(int64_t v);
  static LengthDistribution Uniform(int64_t lo, int64_t hi);
  static LengthDistribution Empirical(std::vector<int64_t> values,
                                      std::vector<double> weights);
  double Mean() const;
  int64_t Max() const;
};

struct Arrivals {
  enum class Kind { kPoisson, kConcurrency, kTrace };
  Kind kind = Kind::kPoisson;
  double rate = 1;             // kPoisson: requests per second, > 0
  int64_t concurrency = 1;     // kConcurrency: clients, 1..65536
  std::vector<double> times;   // kTrace: seconds, non-decreasing, >= 0
  // Optional, the requests' own (a Mooncake or Azure trace, trace.h): each
  // request's prompt and generated tokens (empty: drawn from the config's
  // distributions) and what the prompts share (Mooncake's hash_ids). With
  // kTrace one per time; with kPoisson or kConcurrency the same requests
  // in the same order, re-timed (a trace planned at another rate), and the
  // run is as long as they are.
  std::vector<int64_t> prompt_tokens, generated_tokens;
  PromptContent content;

  // How many requests come with their own lengths or content (0: none).
  size_t own_requests() const {
    return !prompt_tokens.empty() ? prompt_tokens.size() : content.requests();
  }
};
// Requests 0, stride, 2 stride, ... of `a`'s own (times, lengths, content:
// a round robin's share); its kind, rate and concurrency kept.
Arrivals EveryRequest(const Arrivals& a, size_t stride);
// The first n of `a`'s own requests (all when it has fewer).
Arrivals FirstRequests(const Arrivals& a, size_t n);

// Caps that keep one simulation bounded.
inline constexpr int64_t kMaxRequests = 1'000'000;
// Request rates, requests/s. The floor (one request in about 11.6 days)
// keeps every Poisson gap finite: a rate of 1e-308 overflowed them to inf.
inline constexpr double kMinRate = 1e-6;
inline constexpr double kMaxRate = 1e6;
// The range's message, for the errors that name traffic.rate.
inline constexpr const char* kRateRange = "in [0.000001, 1000000] requests/s";
inline constexpr int64_t kDefaultMaxSteps = 20'000'000;

// Multi-turn sessions: each conversation sends `turns` requests, one after
// another. Turn k + 1 arrives `think_seconds` after turn k finished; its
// prompt is the whole conversation so far (turn k's prompt and generated
// tokens) plus new tokens drawn from the prompt distribution, so the prefix
// cache finds the previous turns. Poisson arrivals start sessions (the rate
// is sessions per second); a closed loop's client runs one session after
// another. Not with a trace (its requests are their own turns).
struct Sessions {
  int64_t turns = 1;         // 1..1000 (1: independent requests)
  double think_seconds = 0;  // [0, 86400]
};
inline constexpr int64_t kMaxTurns = 1000;
inline constexpr double kMaxThinkSeconds = 86400;

struct SimulationConfig {
  ServingLimits limits;
  Arrivals arrivals;
  Sessions sessions;  // requests counts turns: ceil(requests / turns) sessions
  LengthDistribution prompt = LengthDistribution::Fixed(512);
  LengthDistribution generated = LengthDistribution::Fixed(128);
  int64_t requests = 1000;  // 1..kMaxRequests (a trace: its length)
  // Every prompt starts with the same this many tokens (capped at its
  // length), 0..10,000,000: a system prompt the prefix cache can share.
  // Not with a trace's own content.
  int64_t shared_prefix_tokens = 0;
  uint64_t seed = 1;
  int64_t max_steps = kDefaultMaxSteps;  // RESOURCE_EXHAUSTED beyond
  // Names max_steps in that error (the caller's name for it: a server
  // flag, a field).
  std::string max_steps_name = "SimulationConfig.max_steps";
  // Polled every 1024 steps; true stops the run with DEADLINE_EXCEEDED
  // (a deadline passed or the client went away). May be empty.
  std::function<bool()> stop;
  // 0: no timeline (the rate search); 1..kMaxTimelineBuckets: the result's
  // timeline has at most this many buckets.
  int timeline_buckets = 0;
};
// INVALID_ARGUMENT naming the field ("simulation.requests", "traffic.rate",
// ...), the range and the value.
absl::Status ValidateSimulationConfig(const SimulationConfig& c);

// The run length: how many requests Simulate(config) simulates (a trace:
// its arrivals; requests of their own: their number; else
// config.requests). The one formula, shared by the
// simulation and the cost estimates made before one (service/).
int64_t SimulatedRequests(const SimulationConfig& c);
// The mean prompt and generated tokens of a run: the requests' own lengths,
// or the distributions' means.
double MeanPromptTokens(const SimulationConfig& c);
double MeanGeneratedTokens(const SimulationConfig& c);
// The longest prompt and output of a run: a trace's, a session's last
// turn's (every turn's new tokens and outputs at their longest), or the
// distributions'.
int64_t MaxPromptTokens(const SimulationConfig& c);
int64_t MaxGeneratedTokens(const SimulationConfig& c);
// The memory of what the prompts share, known before a run: a trace's
// chains, or the sessions' (one 8-byte hash per KV block of every turn).
double PromptContentBytes(const SimulationConfig& c);

// What a simulation costs, known before it runs: every request is one
// sequence in (generated - 1) decode steps plus at least
// ceil(prompt / max_num_batched_tokens) prefill chunks, so a request takes
// at least generated + ceil(prompt / budget) - 1 sequence-steps (one
// sequence in one step: the unit of the simulation's CPU time), with the
// distributions' means. Memory: kBytesPerSimulatedRequest a request (its
// state and four latency samples); the inter-token gaps are kept folded
// by value, bounded by the distinct step times.
double SequenceStepsPerRequest(double mean_prompt, double mean_generated,
                               int64_t max_num_batched_tokens);
inline constexpr double kBytesPerSimulatedRequest = 160;

struct Percentiles {
  double p50 = 0, p90 = 0, p99 = 0, mean = 0;
};
// Nearest-rank p50, p90, p99 and the mean of a sample (sorted in place);
// all 0 for an empty one.
Percentiles Summarize(std::vector<double>& sample);

struct SimulationResult {
  int64_t requests = 0;
  int64_t steps = 0;
  double duration_seconds = 0;  // first arrival to last finish
  Percentiles ttft;  // arrival -> first token (queueing included)
  // (finish - first token) / (generated - 1), requests with >= 2 tokens.
  Percentiles tpot;
  // Gaps between consecutive tokens of a request, over all tokens.
  Percentiles itl;
  Percentiles e2e;    // arrival -> last token
  Percentiles queue;  // arrival -> admission
  double requests_per_second = 0;
  double output_tokens_per_second = 0;
  double input_tokens_per_second = 0;
  double mean_running = 0;     // sequences per step, time-weighted
  double kv_usage_mean = 0;    // reserved / capacity, time-weighted, 0..1
  double kv_usage_peak = 0;
  int64_t max_waiting = 0;     // longest queue seen
  // Prefix caching: prompt tokens admissions found cached (not computed)
  // and their share of all prompt tokens.
  int64_t prefill_tokens_saved = 0;
  double prefix_hit_rate = 0;
  // KV offload (kv_offload.h): the saved tokens reloaded from an offload
  // tier, their share of all prompt tokens, and each tier's use over the
  // run (all replicas: time-weighted mean and the peak of the fullest
  // replica, shares of the capacity).
  int64_t offload_hit_tokens = 0;
  double kv_offload_hit_rate = 0;
  // Preemption (scheduler.h): how often a running request was preempted
  // (its latencies include the wait and the recompute or the swap), and of
  // those the preemptions whose KV was swapped out and back.
  int64_t preemptions = 0;
  int64_t swapped_preemptions = 0;
  struct TierUse {
    std::string name;
    int64_t capacity_tokens = 0;  // per replica
    double usage_mean = 0, usage_peak = 0;
  };
  std::vector<TierUse> kv_tiers;
  Timeline timeline;  // with config.timeline_buckets > 0
  // Stability (stability.h): the waiting backlog over the two halves of
  // the arrival window. `stable` is false when it grows (a percentile of
  // such a run grows with the run's length); a closed loop of N clients
  // never holds more than N, so it is always stable.
  Backlog backlog;
  bool stable = true;
};

// Pipeline stages (limits.pipeline_stages = S): up to S micro-batches in
// flight, one per slot (vLLM's virtual engines); a request stays in the slot
// that admitted it; a slot launches its next micro-batch when the previous
// one has left the last stage, launches are StepTime::interval_seconds
// apart, and a micro-batch's tokens appear StepTime::seconds after its
// launch (the traversal of every stage). S = 1: one step at a time.
//
// Attention ranks (limits.attention_ranks = e > 1): the replica's e ranks
// run alike in lock step, so rank 0 is simulated with its share of the
// traffic (RankConfig) and throughputs (requests, input and output tokens
// per second) are multiplied by e; latencies, KV use, steps and `requests`
// are rank 0's.
//
// Errors: INVALID_ARGUMENT (config); FAILED_PRECONDITION when a request can
// never be admitted (its KV reservation exceeds the capacity);
// RESOURCE_EXHAUSTED past max_steps; DEADLINE_EXCEEDED when `stop` says so;
// the StepCost's errors.
absl::StatusOr<SimulationResult> Simulate(const StepCost& cost,
                                          const SimulationConfig& config);

// Rank 0's share of `config` when limits.attention_ranks = e > 1: Poisson
// at rate / e (a random split) or ceil(clients / e) clients, each for
// `requests` requests of rank 0 (the queueing statistics of a replica
// without ranks), or a trace's arrivals 0, e, 2e, ... (round robin).
SimulationConfig RankConfig(const SimulationConfig& config);

}  // namespace ridgeline::serving
