// Online correction of predicted latencies by measured ones: per key (a
// pod type), the running median of measured / predicted over the last
// `window` samples, for TTFT and for TPOT apart. A median ignores the
// outliers a serving trace is full of (a request stuck behind a long
// prefill, a preempted one) that would drag a mean; until a key has
// `min_samples` ratios its factor is 1 (the model as it stands).
// Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>

namespace ridgeline::serving {

class LatencyCorrection {
 public:
  struct Options {
    int64_t window = 1000;     // ratios kept per key and quantity
    int64_t min_samples = 10;  // before the factor leaves 1
    // Keys come from clients: past this many (or longer than 64 bytes) a
    // new key's samples are dropped, so memory stays bounded.
    int64_t max_keys = 64;
  };

  struct Fit {
    int64_t ttft_samples = 0;  // ratios in the window
    int64_t tpot_samples = 0;
    int64_t ttft_seen = 0;  // every ratio ever added
    int64_t tpot_seen = 0;
    double ttft_factor = 1;  // multiply the model's TTFT by this
    double tpot_factor = 1;
  };

  LatencyCorrection() : LatencyCorrection(Options{}) {}
  explicit LatencyCorrection(Options options);

  // One training sample. A measured value <= 0 or a predicted one <= 0
  // (llm-d sends actual_tpot_ms 0 for a request that produced one token)
  // carries no ratio for that quantity; non-finite values are ignored.
  void Add(const std::string& key, double measured_ttft, double predicted_ttft,
           double measured_tpot, double predicted_tpot);

  Fit FitOf(const std::string& key) const;
  std::map<std::string, Fit> Fits() const;
  // Samples whose key was refused (max_keys).
  int64_t dropped() const;

 private:
  struct Series {
    std::deque<double> ratios;
    int64_t seen = 0;
    // The window's median, recomputed when read after an Add.
    mutable double median = 1;
    mutable bool stale = false;
  };
  struct Key {
    Series ttft, tpot;
  };
  void AddRatio(Series* s, double measured, double predicted);
  Fit FitLocked(const Key& k) const;
  static double Median(const Series& s);

  const Options options_;
  mutable std::mutex mu_;
  std::map<std::string, Key> keys_;
  int64_t dropped_ = 0;
};

}  // namespace ridgeline::serving
