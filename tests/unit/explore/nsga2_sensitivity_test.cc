// NSGA-II: reproducible, never returns an infeasible point, and on a space
// small enough to be covered finds exactly the exhaustive front.
// Sensitivity: elasticities that follow from the roofline by hand.
#include <gtest/gtest.h>

#include "ridgeline/explore/explore.h"
#include "ridgeline/explore/nsga2.h"
#include "ridgeline/explore/pareto.h"
#include "ridgeline/explore/sensitivity.h"
#include "test_hardware.h"

namespace ridgeline::explore {
namespace {

using engine::testing::A100Like;
using engine::testing::MakeScenario;

ExploreSpec Spec() {
  ExploreSpec spec;
  spec.space.base = MakeScenario("llama-3-8b", A100Like());
  spec.space.base.hardware.price_usd = 10000;
  spec.space.base.hardware.tdp_watts = 400;
  spec.space.base.workload = {1, 512, 32};
  for (const char* a : {"bandwidth_gbs=500:8000:6", "tdp_w=100:1000:6",
                        "capacity_gb=8,16,24,48,80,160"}) {
    spec.space.axes.push_back(*ParseAxis(a, "vary"));
  }
  for (const char* o : {"decode_tok_s:max", "j_per_token:min"}) {
    spec.objectives.push_back(*ParseObjective(o, "objective"));
  }
  spec.constraints.push_back(*ParseConstraint("tpot_ms<=20", "constraint"));
  return spec;
}

TEST(Nsga2Test, ReproducibleFeasibleAndExactWhenCovered) {
  const ExploreSpec spec = Spec();
  Nsga2Options opt;
  opt.population = 64;
  opt.generations = 40;
  opt.seed = 42;
  absl::StatusOr<Nsga2Result> a = RunNsga2(spec, opt);
  absl::StatusOr<Nsga2Result> b = RunNsga2(spec, opt);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(a->front.size(), b->front.size());
  for (size_t i = 0; i < a->front.size(); ++i) {
    EXPECT_EQ(a->front[i].index, b->front[i].index);
  }
  ASSERT_EQ(a->generations.size(), 41u);
  EXPECT_EQ(a->generations.back().hypervolume, b->generations.back().hypervolume);
  EXPECT_TRUE(a->generations.back().hypervolume_exact);  // 2 objectives

  absl::StatusOr<ExploreResult> all = Explore(spec);
  ASSERT_TRUE(all.ok()) << all.status();
  // 6 x 6 x 6 = 216 points; the search evaluates a part of them and still
  // finds the exhaustive front (its points lie at the top bandwidth and
  // bottom TDP edges, which the mutation reaches).
  EXPECT_LT(a->evaluations, 216u);
  ASSERT_EQ(a->front.size(), all->rows.size());
  for (size_t i = 0; i < a->front.size(); ++i) {
    EXPECT_EQ(a->front[i].index, all->rows[i].index);
    // 8 GiB (8.6e9 B) cannot hold 8.03e9 x 2 B = 16.1e9 B of bf16 weights
    // (16 GiB = 17.2e9 B can): capacity digit 0 is never on the front.
    EXPECT_GE(a->front[i].index % 6, 1u);
  }
}

TEST(Nsga2Test, CountsFeasiblePointsAndTime) {
  // Issue 20, item 7: the summary said "0 feasible ... in 0.000 s". 3 x 2
  // points, a population of 64 covers them all. 8 GiB cannot hold the
  // 16.1e9 B of weights (infeasible); at 16 GiB decode streams them once
  // per token: 16.1e9 / 500e9 = 32 ms > 20 ms (infeasible), / 2000e9 = 8 ms
  // and / 8000e9 = 2 ms (feasible): 2 feasible of 6.
  ExploreSpec spec = Spec();
  spec.space.axes = {*ParseAxis("bandwidth_gbs=500:8000:3", "vary"),
                     *ParseAxis("capacity_gb=8,16", "vary")};
  Nsga2Options opt;
  opt.population = 64;
  opt.generations = 2;
  absl::StatusOr<Nsga2Result> r = RunNsga2(spec, opt);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->evaluations, 6u);
  EXPECT_EQ(r->feasible, 2u);
  absl::StatusOr<ExploreResult> all = Explore(spec);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(r->feasible, all->feasible);
  EXPECT_GT(r->seconds, 0);
  for (const PointRow& p : r->front) EXPECT_FALSE(p.spilled);  // no host tier
}

TEST(Nsga2Test, FrontSoFarOnlyImprovesAndEndsAsTheResult) {
  // Each generation's front_so_far is a front (no point dominates another),
  // every point of an earlier one is still on a later one or dominated by
  // one of its points (nothing found is lost), and the last one is the
  // result's front.
  const ExploreSpec spec = Spec();
  Nsga2Options opt;
  opt.population = 16;
  opt.generations = 12;
  opt.seed = 3;
  std::vector<std::vector<PointRow>> seen;
  absl::StatusOr<Nsga2Result> r = RunNsga2(
      spec, opt, [&](const Nsga2Generation&, const std::vector<PointRow>& f) {
        seen.push_back(f);
        return true;
      });
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(seen.size(), 13u);  // generation 0 and 12 more
  // Minimised copies: decode_tok_s is maximised.
  auto min = [](const PointRow& p) {
    return std::vector<double>{-p.objectives[0], p.objectives[1]};
  };
  for (size_t g = 0; g < seen.size(); ++g) {
    for (const PointRow& a : seen[g]) {
      EXPECT_TRUE(a.feasible && a.pareto);
      for (const PointRow& b : seen[g]) {
        EXPECT_FALSE(Dominates(min(b).data(), min(a).data(), 2));
      }
      if (g + 1 == seen.size()) continue;
      bool kept = false;
      for (const PointRow& b : seen[g + 1]) {
        kept = kept || b.index == a.index ||
               Dominates(min(b).data(), min(a).data(), 2);
      }
      EXPECT_TRUE(kept) << "generation " << g << " point " << a.index;
    }
  }
  ASSERT_EQ(seen.back().size(), r->front.size());
  for (size_t i = 0; i < r->front.size(); ++i) {
    EXPECT_EQ(seen.back()[i].index, r->front[i].index);
    EXPECT_EQ(seen.back()[i].objectives, r->front[i].objectives);
  }
}

TEST(Nsga2Test, RejectsBadOptions) {
  Nsga2Options opt;
  opt.population = 5;
  absl::Status st = RunNsga2(Spec(), opt).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("population"), std::string::npos);
}

TEST(SensitivityTest, MemoryBoundDecodeFollowsBandwidth) {
  // Batch-1 decode of an 8B model reads ~16 GB of weights per token with
  // 2 FLOPs per weight: intensity ~1 FLOP/byte, far below the A100-like
  // ridge (312e12 / 2039e9 = 153): decode time = bytes / bandwidth, so
  // d ln(tok/s) / d ln(bandwidth) = 1 and the compute peak does not matter
  // (elasticity 0). price_usd = price: elasticity 1 to the price axis.
  ExploreSpec spec = Spec();
  spec.space.axes = {*ParseAxis("bandwidth_gbs=2000", "vary"),
                     *ParseAxis("peak_tflops=312", "vary"),
                     *ParseAxis("price_usd=10000", "vary")};
  const uint64_t digits[3] = {0, 0, 0};
  absl::StatusOr<SensitivityReport> r = Sensitivity(spec.space, digits);
  ASSERT_TRUE(r.ok()) << r.status();
  const int tok = static_cast<int>(Metric::kDecodeTokS);
  const int price = static_cast<int>(Metric::kPriceUsd);
  EXPECT_NEAR(r->axes[0].elasticity[tok], 1, 0.02);
  EXPECT_NEAR(r->axes[1].elasticity[tok], 0, 0.02);
  EXPECT_NEAR(r->axes[2].elasticity[price], 1, 1e-9);
  EXPECT_NEAR(r->axes[0].change_plus_10pct[tok], 0.1, 0.005);
  EXPECT_NE(r->limited_by[tok].find("memory-bound"), std::string::npos)
      << r->limited_by[tok];
  EXPECT_NE(r->summary.find("+10% bandwidth_gbs: +"), std::string::npos)
      << r->summary;
}

}  // namespace
}  // namespace ridgeline::explore
