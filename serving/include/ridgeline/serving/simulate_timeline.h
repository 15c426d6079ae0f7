// A simulation run over time: its span (first arrival to last finish) cut
// into equal buckets, with per bucket the latencies of the requests that
// arrived in it and the time-weighted queue, running sequences and KV use.
// Built after the run from each request's event times, so it costs the
// event loop nothing; its size is bounded by the bucket count (at most
// kMaxTimelineBuckets), whatever the number of requests. Plain data; a
// pure function.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ridgeline::serving {

// The most buckets a timeline has (about 14 KB of doubles).
inline constexpr int kMaxTimelineBuckets = 200;

// One request's life, seconds from the simulation's clock zero.
struct RequestSpan {
  double arrival = 0;
  double admitted = 0;
  double first_token = 0;
  double finish = 0;
  int64_t kv_tokens = 0;  // reserved from admission to finish
  int64_t generated = 0;  // output tokens (TPOT needs >= 2)
};

struct Timeline {
  double start_seconds = 0;   // the first arrival
  double bucket_seconds = 0;  // width of each bucket; 0: no timeline
  // Per bucket, requests arriving in [start + k w, start + (k + 1) w) (the
  // last bucket includes its end) ...
  std::vector<int64_t> arrivals;
  // ... and their latencies (nearest rank); 0 where no request arrived.
  std::vector<double> ttft_p50_seconds, ttft_p90_seconds;
  std::vector<double> tpot_p90_seconds;  // requests with >= 2 tokens
  std::vector<double> e2e_p90_seconds;
  // Time-weighted means over the bucket: requests waiting (arrived, not
  // admitted), sequences running (admitted, not finished), and reserved
  // KV tokens / capacity (0..1).
  std::vector<double> queue_mean, running_mean, kv_usage_mean;
  // Each KV offload tier's tokens / capacity (0..1), time-weighted over the
  // bucket and all replicas that have it (SimulateDeployment adds them).
  struct TierSeries {
    std::string name;
    std::vector<double> usage_mean;
  };
  std::vector<TierSeries> kv_tiers;
};

// min(max_buckets, requests.size()) buckets (max_buckets in
// [1, kMaxTimelineBuckets]); an empty timeline for no requests or a run of
// zero length.
Timeline BuildTimeline(std::span<const RequestSpan> requests,
                       double kv_capacity_tokens, int max_buckets);

}  // namespace ridgeline::serving
