#include "ridgeline/serving/simulate_timeline.h"

#include <algorithm>
#include <cmath>

#include "ridgeline/serving/simulate.h"

namespace ridgeline::serving {
namespace {

// Integrals of step functions over equal buckets: each interval [a, b)
// with height v adds its overlap x v to the buckets it touches. The whole
// buckets strictly inside go through a difference array, so n intervals
// cost O(n + buckets), not O(n x buckets).
class BucketIntegral {
 public:
  BucketIntegral(double start, double width, size_t buckets)
      : start_(start),
        width_(width),
        partial_(buckets, 0),
        whole_(buckets + 1, 0) {}

  void Add(double a, double b, double v) {
    if (!(b > a)) return;
    const size_t ka = Bucket(a), kb = Bucket(b);
    if (ka == kb) {
      partial_[ka] += (b - a) * v;
      return;
    }
    partial_[ka] += (Start(ka + 1) - a) * v;
    partial_[kb] += (b - Start(kb)) * v;
    whole_[ka + 1] += v;  // buckets ka+1 .. kb-1 are covered whole
    whole_[kb] -= v;
  }

  // Per bucket: the integral / width (the time-weighted mean).
  std::vector<double> Means() const {
    std::vector<double> out(partial_.size());
    double covering = 0;
    for (size_t k = 0; k < out.size(); ++k) {
      covering += whole_[k];
      out[k] = partial_[k] / width_ + covering;
    }
    return out;
  }

  size_t Bucket(double t) const {
    const double k = std::floor((t - start_) / width_);
    if (!(k > 0)) return 0;
    return std::min(static_cast<size_t>(k), partial_.size() - 1);
  }

 private:
  double Start(size_t k) const {
    return start_ + static_cast<double>(k) * width_;
  }

  double start_, width_;
  std::vector<double> partial_;
  std::vector<double> whole_;
};

}  // namespace

Timeline BuildTimeline(std::span<const RequestSpan> requests,
                       double kv_capacity_tokens, int max_buckets) {
  Timeline t;
  if (requests.empty() || max_buckets < 1) return t;
  double start = requests.front().arrival, end = requests.front().finish;
  for (const RequestSpan& r : requests) {
    start = std::min(start, r.arrival);
    end = std::max(end, r.finish);
  }
  const size_t n =
      std::min(requests.size(),
               static_cast<size_t>(std::min(max_buckets, kMaxTimelineBuckets)));
  if (!(end > start)) return t;
  t.start_seconds = start;
  t.bucket_seconds = (end - start) / static_cast<double>(n);
  BucketIntegral queue(start, t.bucket_seconds, n);
  BucketIntegral running(start, t.bucket_seconds, n);
  BucketIntegral kv(start, t.bucket_seconds, n);
  std::vector<std::vector<double>> ttft(n), tpot(n), e2e(n);
  t.arrivals.assign(n, 0);
  for (const RequestSpan& r : requests) {
    queue.Add(r.arrival, r.admitted, 1);
    running.Add(r.admitted, r.finish, 1);
    kv.Add(r.admitted, r.finish,
           static_cast<double>(r.kv_tokens) / kv_capacity_tokens);
    const size_t k = queue.Bucket(r.arrival);
    ++t.arrivals[k];
    ttft[k].push_back(r.first_token - r.arrival);
    e2e[k].push_back(r.finish - r.arrival);
    if (r.generated >= 2) {
      tpot[k].push_back((r.finish - r.first_token) /
                        static_cast<double>(r.generated - 1));
    }
  }
  t.queue_mean = queue.Means();
  t.running_mean = running.Means();
  t.kv_usage_mean = kv.Means();
  for (size_t k = 0; k < n; ++k) {
    const Percentiles first = Summarize(ttft[k]);
    t.ttft_p50_seconds.push_back(first.p50);
    t.ttft_p90_seconds.push_back(first.p90);
    t.tpot_p90_seconds.push_back(Summarize(tpot[k]).p90);
    t.e2e_p90_seconds.push_back(Summarize(e2e[k]).p90);
  }
  return t;
}

}  // namespace ridgeline::serving
