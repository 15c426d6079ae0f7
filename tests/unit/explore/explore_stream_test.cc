// Exploration details on the real engine: re-priced points equal fresh
// evaluations bit for bit, the running front's pre-filter stays exact, the
// per-mm2 envelope metrics by hand, provisional fronts are the fronts of
// what was evaluated, and sensitivity reports the step it took.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "ridgeline/explore/evaluate.h"
#include "ridgeline/explore/explore.h"
#include "ridgeline/explore/pareto.h"
#include "ridgeline/explore/sensitivity.h"
#include "test_hardware.h"

namespace ridgeline::explore {
namespace {

using engine::testing::A100Like;
using engine::testing::MakeScenario;

ExploreSpec Spec(std::vector<std::string> axes, std::vector<std::string> obj,
                 std::vector<std::string> constraints = {}) {
  ExploreSpec spec;
  spec.space.base = MakeScenario("llama-3-8b", A100Like());
  spec.space.base.hardware.price_usd = 10000;
  spec.space.base.hardware.tdp_watts = 400;
  spec.space.base.workload = {1, 512, 32};
  for (const auto& a : axes) spec.space.axes.push_back(*ParseAxis(a, "vary"));
  for (const auto& o : obj) spec.objectives.push_back(*ParseObjective(o, "objective"));
  for (const auto& c : constraints) {
    spec.constraints.push_back(*ParseConstraint(c, "constraint"));
  }
  return spec;
}

bool SameDouble(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

TEST(RepriceTest, RepricedPointsEqualFreshEvaluationsBitForBit) {
  // price and board power vary fastest, so most points only re-price the
  // previous point's timing; capacity 8 GiB does not fit the 16 GB model.
  ExploreSpec spec = Spec({"bandwidth_gbs=1000,3000", "capacity_gb=8,80",
                           "batch=1,8", "tdp_w=200,400,800",
                           "price_usd=1000,5000,20000"},
                          {"decode_tok_s:max", "usd_per_mtoken:min"});
  absl::StatusOr<SpaceEvaluator> shared = SpaceEvaluator::Create(spec.space);
  ASSERT_TRUE(shared.ok()) << shared.status();
  const uint64_t total = spec.space.Grid().total();
  ASSERT_EQ(total, 72u);
  for (uint64_t i = 0; i < total; ++i) {
    PointOutcome a, b;
    ASSERT_TRUE(shared->Evaluate(i, &a).ok());
    absl::StatusOr<SpaceEvaluator> fresh = SpaceEvaluator::Create(spec.space);
    ASSERT_TRUE(fresh->Evaluate(i, &b).ok());
    EXPECT_EQ(a.fits, b.fits) << i;
    EXPECT_EQ(a.memory_overflow, b.memory_overflow) << i;
    for (int m = 0; m < kMetricCount; ++m) {
      EXPECT_TRUE(SameDouble(a.metrics[m], b.metrics[m]))
          << "point " << i << " " << MetricName(static_cast<Metric>(m)) << ": "
          << a.metrics[m] << " vs " << b.metrics[m];
    }
  }
}

TEST(FrontAccumulatorTest, PrefilterKeepsTheExactFront) {
  // 20,000 points: the accumulator compacts at 4,096 and from then on
  // drops points its (small, in 2-3 dimensions) front dominates; in 5-6
  // dimensions the front exceeds 64 points and the pre-filter is off.
  // Values on a coarse lattice make ties and duplicates.
  std::mt19937_64 rng(11);
  for (int dims = 2; dims <= 6; ++dims) {
    PointSet p;
    p.dims = dims;
    std::uniform_int_distribution<int> v(0, 40);
    std::vector<double> row(dims);
    for (int i = 0; i < 20000; ++i) {
      for (int k = 0; k < dims; ++k) row[k] = v(rng);
      p.Add(row.data());
    }
    FrontAccumulator acc(dims);
    for (size_t i = 0; i < p.size(); ++i) acc.Add(p.row(i), i);
    // Tie groups (equal vectors) list their ids, all of them while a
    // group has at most kMaxListedTies.
    std::vector<size_t> got;
    for (const auto& e : acc.Front()) {
      got.insert(got.end(), e.ids.begin(), e.ids.end());
    }
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, ParetoFrontBruteForce(p)) << dims;
  }
}

TEST(EnvelopeTest, PerSquareMillimetreMetricsByHand) {
  // The area is the request's: die_area_mm2 = 800 (a stated figure).
  // gbs_per_mm2 = 2039 GB/s / 800 = 2.54875; tflops_per_mm2 = 312 / 800 =
  // 0.39; usd_per_mm2 = 10000 / 800 = 12.5.
  ExploreSpec spec = Spec({"die_area_mm2=800"},
                          {"decode_tok_s:max", "usd_per_mm2:min"});
  absl::StatusOr<SpaceEvaluator> ev = SpaceEvaluator::Create(spec.space);
  ASSERT_TRUE(ev.ok()) << ev.status();
  PointOutcome o;
  ASSERT_TRUE(ev->Evaluate(0, &o).ok());
  EXPECT_DOUBLE_EQ(o.metrics[static_cast<int>(Metric::kGbsPerMm2)], 2039.0 / 800);
  EXPECT_DOUBLE_EQ(o.metrics[static_cast<int>(Metric::kTflopsPerMm2)], 312.0 / 800);
  EXPECT_DOUBLE_EQ(o.metrics[static_cast<int>(Metric::kUsdPerMm2)], 12.5);
  // Without a stated area the per-mm2 metrics are unknown.
  ExploreSpec none = Spec({"tdp_w=400"}, {"decode_tok_s:max", "price_usd:min"});
  absl::StatusOr<SpaceEvaluator> ev2 = SpaceEvaluator::Create(none.space);
  ASSERT_TRUE(ev2->Evaluate(0, &o).ok());
  EXPECT_TRUE(std::isnan(o.metrics[static_cast<int>(Metric::kGbsPerMm2)]));
  // No multiplier form: no part publishes an area to multiply.
  EXPECT_FALSE(ParseAxis("die_area_x=2", "vary").ok());
}

TEST(EnvelopeTest, AreaEnvelopeMakesDensePointsInfeasible) {
  // bandwidth {1000, 4000} GB/s x area {200, 800} mm2 against
  // gbs_per_mm2 <= 10: 1000/200 = 5, 1000/800 = 1.25, 4000/800 = 5 hold;
  // 4000/200 = 20 does not (index 2 = bandwidth 4000, area 200).
  // Without a die area axis the constraint's metric is unknown: every
  // point is infeasible (never silently on the front).
  ExploreSpec spec = Spec({"bandwidth_gbs=1000,4000", "die_area_mm2=200,800"},
                          {"decode_tok_s:max", "price_usd:min"},
                          {"gbs_per_mm2<=10"});
  spec.keep_all = true;
  absl::StatusOr<ExploreResult> r = Explore(spec);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 4u);
  EXPECT_TRUE(r->rows[0].feasible);
  EXPECT_TRUE(r->rows[1].feasible);
  EXPECT_FALSE(r->rows[2].feasible);
  EXPECT_NEAR(r->rows[2].violation, (20.0 - 10) / 10, 1e-12);
  EXPECT_FALSE(r->rows[2].pareto);
  EXPECT_TRUE(r->rows[3].feasible);
  // Front: the 4000 GB/s feasible point (index 3) beats the 1000 GB/s ones
  // on tok/s at the same price.
  EXPECT_TRUE(r->rows[3].pareto);
  EXPECT_FALSE(r->rows[0].pareto);
  ExploreSpec no_area = Spec({"bandwidth_gbs=1000,4000"},
                             {"decode_tok_s:max", "price_usd:min"},
                             {"gbs_per_mm2<=10"});
  absl::StatusOr<ExploreResult> r2 = Explore(no_area);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->feasible, 0u);
  EXPECT_EQ(r2->front_size, 0u);
}

TEST(ProvisionalFrontTest, EachIsTheFrontOfThePointsEvaluatedSoFar) {
  // 400 x 250 = 100,000 points on one thread, every one timed afresh
  // (about a tenth of a second or more): the reporter sees several chunks of 4,096 finish. With one
  // thread a provisional front covering n points is the front of grid
  // indices 0..n-1, which the keep_all run lets us compute independently.
  ExploreSpec spec = Spec({"bandwidth_gbs=500:8000:400", "peak_tflops=50:2000:250"},
                          {"decode_tok_s:max", "j_per_token:min"});
  ExploreSpec all = spec;
  all.keep_all = true;
  absl::StatusOr<ExploreResult> every = Explore(all);
  ASSERT_TRUE(every.ok()) << every.status();
  ExploreCallbacks cb;
  cb.progress_every = 1;
  cb.progress = [](uint64_t, uint64_t) { return true; };
  std::vector<std::pair<uint64_t, std::vector<PointRow>>> seen;
  cb.provisional_front = [&](uint64_t covered, const std::vector<PointRow>& f) {
    seen.emplace_back(covered, f);
    return true;
  };
  absl::StatusOr<ExploreResult> r = Explore(spec, cb, 1);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(seen.empty());
  for (const auto& [covered, front] : seen) {
    ASSERT_LE(covered, r->shard_points);
    EXPECT_EQ(covered % 4096, 0u);
    std::vector<PointRow> prefix(every->rows.begin(),
                                 every->rows.begin() + covered);
    MarkFront(spec.objectives, &prefix);
    // Under the tie rule: per objective vector, the kMaxListedTies lowest
    // indices (peak_tflops ties many memory-bound points here).
    std::map<std::vector<double>, int> listed;
    std::vector<uint64_t> want, got;
    for (const PointRow& p : prefix) {
      if (p.pareto &&
          listed[p.objectives]++ < static_cast<int>(kMaxListedTies)) {
        want.push_back(p.index);
      }
    }
    for (const PointRow& p : front) got.push_back(p.index);
    EXPECT_EQ(got, want) << "covering " << covered;
  }
}

TEST(SensitivityTest, IntegerAxesReportTheStepTaken) {
  // batch 4: +10 % rounds to 4.4 -> at least +1: batch 5, a +25 % step.
  ExploreSpec spec = Spec({"batch=4", "bandwidth_gbs=2000"},
                          {"decode_tok_s:max", "price_usd:min"});
  const uint64_t digits[2] = {0, 0};
  absl::StatusOr<SensitivityReport> r = Sensitivity(spec.space, digits);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_DOUBLE_EQ(r->axes[0].step_fraction, 0.25);
  EXPECT_NEAR(r->axes[1].step_fraction, 0.1, 1e-12);
}

}  // namespace
}  // namespace ridgeline::explore
