// LatencyCorrection: the running median of measured / predicted per key.
#include "ridgeline/serving/latency_correction.h"

#include <cmath>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace ridgeline::serving {
namespace {

TEST(LatencyCorrection, FactorIsOneUntilMinSamplesThenTheMedian) {
  LatencyCorrection c({/*window=*/100, /*min_samples=*/3, /*max_keys=*/8});
  c.Add("decode", 20, 10, 6, 2);  // ratios 2 and 3
  c.Add("decode", 20, 10, 6, 2);
  EXPECT_EQ(c.FitOf("decode").ttft_factor, 1.0);  // 2 < min_samples 3
  c.Add("decode", 1000, 10, 600, 2);  // an outlier: ratios 100 and 300
  // Ratios {2, 2, 100}: median 2; TPOT {3, 3, 300}: median 3.
  EXPECT_EQ(c.FitOf("decode").ttft_factor, 2.0);
  EXPECT_EQ(c.FitOf("decode").tpot_factor, 3.0);
  c.Add("decode", 40, 10, 6, 2);  // {2, 2, 4, 100}: (2 + 4) / 2 = 3
  EXPECT_EQ(c.FitOf("decode").ttft_factor, 3.0);
  EXPECT_EQ(c.FitOf("decode").ttft_samples, 4);
  EXPECT_EQ(c.FitOf("prefill").ttft_factor, 1.0);  // another key, untouched
}

TEST(LatencyCorrection, WindowKeepsTheLastSamples) {
  LatencyCorrection c({/*window=*/3, /*min_samples=*/1, /*max_keys=*/8});
  for (double r : {10.0, 10.0, 10.0, 1.0, 1.0}) c.Add("", r, 1, 0, 1);
  // Window {10, 1, 1}: median 1; 5 seen.
  EXPECT_EQ(c.FitOf("").ttft_factor, 1.0);
  EXPECT_EQ(c.FitOf("").ttft_samples, 3);
  EXPECT_EQ(c.FitOf("").ttft_seen, 5);
}

TEST(LatencyCorrection, NonPositiveAndNonFiniteValuesCarryNoRatio) {
  LatencyCorrection c({/*window=*/10, /*min_samples=*/1, /*max_keys=*/8});
  const double inf = std::numeric_limits<double>::infinity();
  c.Add("", 0, 5, 0, 5);  // llm-d's 0 = not measured
  c.Add("", 5, 0, -1, 5);
  c.Add("", inf, 1, std::nan(""), 1);
  EXPECT_EQ(c.FitOf("").ttft_samples, 0);
  EXPECT_EQ(c.FitOf("").tpot_samples, 0);
  EXPECT_EQ(c.FitOf("").ttft_factor, 1.0);
}

TEST(LatencyCorrection, KeysAreBounded) {
  LatencyCorrection c({/*window=*/10, /*min_samples=*/1, /*max_keys=*/2});
  c.Add("a", 2, 1, 2, 1);
  c.Add("b", 2, 1, 2, 1);
  c.Add("c", 2, 1, 2, 1);                   // a third key: dropped
  c.Add(std::string(65, 'x'), 2, 1, 2, 1);  // too long: dropped
  EXPECT_EQ(c.Fits().size(), 2u);
  EXPECT_EQ(c.dropped(), 2);
  c.Add("a", 4, 1, 2, 1);  // an existing key still learns: {2, 4} -> 3
  EXPECT_EQ(c.FitOf("a").ttft_factor, 3.0);
}

}  // namespace
}  // namespace ridgeline::serving
