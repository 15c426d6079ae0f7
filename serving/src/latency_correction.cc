#include "ridgeline/serving/latency_correction.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ridgeline::serving {

LatencyCorrection::LatencyCorrection(Options options) : options_(options) {}

void LatencyCorrection::AddRatio(Series* s, double measured, double predicted) {
  if (!(std::isfinite(measured) && std::isfinite(predicted) && measured > 0 &&
        predicted > 0)) {
    return;
  }
  const double r = measured / predicted;
  if (!std::isfinite(r)) return;
  s->ratios.push_back(r);
  ++s->seen;
  while (static_cast<int64_t>(s->ratios.size()) > options_.window) {
    s->ratios.pop_front();
  }
  s->stale = true;
}

double LatencyCorrection::Median(const Series& s) {
  if (s.stale) {
    // The median of the window (the mean of the two middle ones when even).
    std::vector<double> v(s.ratios.begin(), s.ratios.end());
    const size_t n = v.size();
    std::nth_element(v.begin(), v.begin() + n / 2, v.end());
    double m = v[n / 2];
    if (n % 2 == 0) {
      m = (m + *std::max_element(v.begin(), v.begin() + n / 2)) / 2;
    }
    s.median = m;
    s.stale = false;
  }
  return s.median;
}

void LatencyCorrection::Add(const std::string& key, double measured_ttft,
                            double predicted_ttft, double measured_tpot,
                            double predicted_tpot) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = keys_.find(key);
  if (it == keys_.end()) {
    if (static_cast<int64_t>(keys_.size()) >= options_.max_keys ||
        key.size() > 64) {
      ++dropped_;
      return;
    }
    it = keys_.emplace(key, Key{}).first;
  }
  Key& k = it->second;
  AddRatio(&k.ttft, measured_ttft, predicted_ttft);
  AddRatio(&k.tpot, measured_tpot, predicted_tpot);
}

LatencyCorrection::Fit LatencyCorrection::FitLocked(const Key& k) const {
  Fit f;
  f.ttft_samples = static_cast<int64_t>(k.ttft.ratios.size());
  f.tpot_samples = static_cast<int64_t>(k.tpot.ratios.size());
  f.ttft_seen = k.ttft.seen;
  f.tpot_seen = k.tpot.seen;
  f.ttft_factor = f.ttft_samples >= options_.min_samples ? Median(k.ttft) : 1;
  f.tpot_factor = f.tpot_samples >= options_.min_samples ? Median(k.tpot) : 1;
  return f;
}

LatencyCorrection::Fit LatencyCorrection::FitOf(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = keys_.find(key);
  return it == keys_.end() ? Fit{} : FitLocked(it->second);
}

std::map<std::string, LatencyCorrection::Fit> LatencyCorrection::Fits() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, Fit> out;
  for (const auto& [key, k] : keys_) out[key] = FitLocked(k);
  return out;
}

int64_t LatencyCorrection::dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

}  // namespace ridgeline::serving
