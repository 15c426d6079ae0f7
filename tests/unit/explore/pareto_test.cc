// Exact fronts against the O(n^2) definition on random sets of many sizes
// and dimensions, with and without ties; shard fronts merge exactly;
// hypervolume on hand-computed cases.
#include "ridgeline/explore/pareto.h"

#include <gtest/gtest.h>

#include <random>

#include "ridgeline/explore/hypervolume.h"

namespace ridgeline::explore {
namespace {

PointSet Random(int dims, size_t n, int levels, std::mt19937_64* rng) {
  PointSet p;
  p.dims = dims;
  std::uniform_int_distribution<int> li(0, levels - 1);
  std::uniform_real_distribution<double> u(0, 1);
  for (size_t i = 0; i < n * dims; ++i) {
    // levels > 0: few distinct values (ties and duplicates); else real.
    p.values.push_back(levels > 0 ? li(*rng) : u(*rng));
  }
  return p;
}

TEST(ParetoTest, MatchesBruteForceOnRandomSets) {
  std::mt19937_64 rng(7);
  for (int dims = 1; dims <= 6; ++dims) {
    for (size_t n : {0, 1, 2, 3, 10, 100, 1000, 2500}) {
      for (int levels : {0, 2, 3, 10}) {
        const PointSet p = Random(dims, n, levels, &rng);
        EXPECT_EQ(ParetoFront(p), ParetoFrontBruteForce(p))
            << "dims " << dims << " n " << n << " levels " << levels;
      }
    }
  }
}

TEST(ParetoTest, AntiCorrelatedSetsWithLargeFronts) {
  // Points on the simplex sum(x) = 1 are mutually non-dominated: every one
  // is on the front (the worst case of the sort-filter method).
  std::mt19937_64 rng(11);
  for (int dims = 2; dims <= 6; ++dims) {
    PointSet p;
    p.dims = dims;
    std::exponential_distribution<double> e(1);
    for (int i = 0; i < 800; ++i) {
      std::vector<double> x(dims);
      double s = 0;
      for (double& v : x) s += (v = e(rng));
      for (double& v : x) v /= s;
      p.Add(x.data());
    }
    EXPECT_EQ(ParetoFront(p), ParetoFrontBruteForce(p)) << dims;
  }
}

TEST(ParetoTest, DuplicatesAreAllKept) {
  // (1,1) twice and (2,0): none dominates another; (2,2) is dominated.
  PointSet p;
  p.dims = 2;
  p.values = {1, 1, 2, 2, 1, 1, 2, 0};
  EXPECT_EQ(ParetoFront(p), (std::vector<size_t>{0, 2, 3}));
}

TEST(ParetoTest, HandComputedThreeByThreeGrid) {
  // Grid x in {1,2,3} x y in {1,2,3} with objectives f1 = x (min) and
  // f2 = 4 - x + y (min): for a given x the least y = 1 wins, so the
  // front is a subset of {(1,4), (2,3), (3,2)}; these trade f1 against f2
  // (f1 up by 1, f2 down by 1), so all three are on it. Grid order is
  // x-major: (x,y) is index 3(x-1) + (y-1): indices 0, 3, 6.
  PointSet p;
  p.dims = 2;
  for (int x = 1; x <= 3; ++x) {
    for (int y = 1; y <= 3; ++y) {
      const double v[2] = {static_cast<double>(x),
                           static_cast<double>(4 - x + y)};
      p.Add(v);
    }
  }
  EXPECT_EQ(ParetoFront(p), (std::vector<size_t>{0, 3, 6}));
}

TEST(ParetoTest, ShardFrontsMergeExactly) {
  std::mt19937_64 rng(3);
  for (int dims = 2; dims <= 6; ++dims) {
    const PointSet p = Random(dims, 3000, dims == 4 ? 6 : 0, &rng);
    const std::vector<size_t> want = ParetoFront(p);
    for (int shards : {1, 2, 7}) {
      FrontAccumulator merged(dims);
      for (int s = 0; s < shards; ++s) {
        FrontAccumulator acc(dims);
        for (size_t i = s; i < p.size(); i += shards) acc.Add(p.row(i), i);
        for (const auto& e : acc.Front()) merged.Add(e.values.data(), e.id);
      }
      std::vector<size_t> got;
      for (const auto& e : merged.Front()) got.push_back(e.id);
      EXPECT_EQ(got, want) << dims << " " << shards;
    }
  }
}

TEST(HypervolumeTest, TwoAndThreeDimensionsByHand) {
  // 2-D: points (1,3), (2,2), (3,1), reference (4,4): a staircase of
  // 3 + 2 + 1 unit squares = 6.
  PointSet p2;
  p2.dims = 2;
  p2.values = {1, 3, 2, 2, 3, 1};
  EXPECT_DOUBLE_EQ(ComputeHypervolume(p2, {4, 4}).value, 6);
  // 3-D: one point (1,1,1), reference (2,3,4): box 1 x 2 x 3 = 6; adding
  // (0,2,2) adds the box [0,2]x[2,3]x[2,4] = 2 x 1 x 2 = 4, minus the
  // overlap with the first ([1,2]x[2,3]x[2,4] = 2): 6 + 4 - 2 = 8.
  PointSet p3;
  p3.dims = 3;
  p3.values = {1, 1, 1, 0, 2, 2};
  const Hypervolume h = ComputeHypervolume(p3, {2, 3, 4});
  EXPECT_TRUE(h.exact);
  EXPECT_DOUBLE_EQ(h.value, 8);
  // 4-D Monte-Carlo on the unit cube corner: the point 0 dominates the
  // whole box [0,1]^4: 1, exactly (every sample hits).
  PointSet p4;
  p4.dims = 4;
  p4.values = {0, 0, 0, 0, 0.5, 0.5, 0.5, 0.5};
  const Hypervolume m = ComputeHypervolume(p4, {1, 1, 1, 1});
  EXPECT_FALSE(m.exact);
  EXPECT_DOUBLE_EQ(m.value, 1);
}

}  // namespace
}  // namespace ridgeline::explore
