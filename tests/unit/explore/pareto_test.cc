// Exact fronts against the O(n^2) definition on random sets of many sizes
// and dimensions, with and without ties; shard fronts merge exactly;
// hypervolume on hand-computed cases.
#include "ridgeline/explore/pareto.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
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
        for (const auto& e : acc.Front()) merged.Add(e);
      }
      // Every tie group here is under kMaxListedTies: all its ids listed.
      std::vector<size_t> got;
      for (const auto& e : merged.Front()) {
        got.insert(got.end(), e.ids.begin(), e.ids.end());
      }
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, want) << dims << " " << shards;
    }
  }
}

// The tie rule (pareto.h): the reference is the brute-force front grouped
// by objective vector: per group its size and its `listed` lowest indices.
struct Group {
  std::vector<double> values;
  uint64_t ties = 0;
  std::vector<uint64_t> ids;
};
std::vector<Group> GroupedFront(const PointSet& p, size_t listed) {
  std::map<std::vector<double>, Group> by;
  for (size_t i : ParetoFrontBruteForce(p)) {
    Group& g = by[std::vector<double>(p.row(i), p.row(i) + p.dims)];
    g.values.assign(p.row(i), p.row(i) + p.dims);
    ++g.ties;
    if (g.ids.size() < listed) g.ids.push_back(i);  // i ascends
  }
  std::vector<Group> out;
  for (auto& [v, g] : by) out.push_back(g);
  std::sort(out.begin(), out.end(),
            [](const Group& a, const Group& b) { return a.ids[0] < b.ids[0]; });
  return out;
}

void ExpectGroups(const std::vector<FrontAccumulator::Entry>& got,
                  const std::vector<Group>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].values, want[i].values) << what << " entry " << i;
    EXPECT_EQ(got[i].ties, want[i].ties) << what << " entry " << i;
    EXPECT_EQ(got[i].ids, want[i].ids) << what << " entry " << i;
    EXPECT_EQ(got[i].id, want[i].ids[0]) << what << " entry " << i;
  }
}

TEST(TieRuleTest, AnAllTiedSetIsOneEntryWithItsCount) {
  // 100,000 copies of (1, 2) (a grid no axis of which changes the
  // objectives, issue 26): one entry, ties 100,000, the 16 lowest ids
  // 0..15 listed, and never more than one compaction's worth held (the
  // prefilter folds every copy into the held entry once compacted).
  FrontAccumulator acc(2);
  const double v[2] = {1, 2};
  size_t most_held = 0;
  for (uint64_t i = 0; i < 100000; ++i) {
    acc.Add(v, 99999 - i);  // ids arrive descending: the lowest still win
    most_held = std::max(most_held, acc.held());
  }
  EXPECT_LE(most_held, 4096u);
  const std::vector<FrontAccumulator::Entry> f = acc.Front();
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].ties, 100000u);
  std::vector<uint64_t> first16(16);
  std::iota(first16.begin(), first16.end(), uint64_t{0});
  EXPECT_EQ(f[0].ids, first16);
  EXPECT_EQ(f[0].id, 0u);
  EXPECT_EQ(acc.held(), 1u);
}

TEST(TieRuleTest, GroupsMatchTheDefinitionAndMergeExactlyOverShards) {
  // Few levels per objective: big tie groups, on and off the front. Every
  // way of splitting the points (1, 2, 7 shards, round robin; each shard's
  // entries merged with Add(Entry)) gives the groups of the whole set.
  std::mt19937_64 rng(5);
  for (int dims = 1; dims <= 5; ++dims) {
    const PointSet p = Random(dims, 6000, 3, &rng);
    for (size_t listed : {size_t{1}, size_t{4}, kMaxListedTies}) {
      const std::vector<Group> want = GroupedFront(p, listed);
      for (int shards : {1, 2, 7}) {
        FrontAccumulator merged(dims, 0, listed);
        for (int s = 0; s < shards; ++s) {
          FrontAccumulator acc(dims, 0, listed);
          for (size_t i = s; i < p.size(); i += shards) acc.Add(p.row(i), i);
          for (const auto& e : acc.Front()) merged.Add(e);
        }
        ExpectGroups(merged.Front(), want,
                     absl::StrCat(dims, " dims, ", listed, " listed, ", shards,
                                  " shards"));
      }
    }
  }
}

TEST(TieRuleTest, MaxEntriesStopsAFrontOfDistinctVectors) {
  // (i, -i) for i = 0..9999: every point is on the front, all distinct.
  // With max_entries 1000 the first compaction past 1000 entries (at
  // 4096 held) sets exceeded(), and later points are ignored: held stays
  // at that compaction's 4096 entries, not 10,000.
  FrontAccumulator acc(2, 1000);
  for (int i = 0; i < 10000; ++i) {
    const double v[2] = {static_cast<double>(i), static_cast<double>(-i)};
    acc.Add(v, i);
  }
  EXPECT_TRUE(acc.exceeded());
  EXPECT_EQ(acc.held(), 4096u);
  FrontAccumulator roomy(2, 10000);
  for (int i = 0; i < 10000; ++i) {
    const double v[2] = {static_cast<double>(i), static_cast<double>(-i)};
    roomy.Add(v, i);
  }
  EXPECT_EQ(roomy.Front().size(), 10000u);
  EXPECT_FALSE(roomy.exceeded());
}

TEST(TieRuleTest, MergeListedIdsKeepsTheLowest) {
  EXPECT_EQ(MergeListedIds({1, 5, 9}, {2, 5, 7}, 4),
            (std::vector<uint64_t>{1, 2, 5, 7}));
  EXPECT_EQ(MergeListedIds({}, {3}, 2), (std::vector<uint64_t>{3}));
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
