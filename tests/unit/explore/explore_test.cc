// Exhaustive exploration on the real engine: a 3x3 grid whose front is
// derived by hand, monotonicity in bandwidth, infeasible points never on
// the front, shards equal one run, and the axis / objective parsers.
#include "ridgeline/explore/explore.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "ridgeline/engine/analyze.h"
#include "ridgeline/explore/grid.h"
#include "ridgeline/explore/pareto.h"
#include "test_hardware.h"

namespace ridgeline::explore {
namespace {

using engine::testing::A100Like;
using engine::testing::MakeScenario;

Axis Parse(const std::string& spec) {
  absl::StatusOr<Axis> a = ParseAxis(spec, "vary");
  EXPECT_TRUE(a.ok()) << a.status();
  return *a;
}

std::vector<Objective> Objectives(std::vector<std::string> specs) {
  std::vector<Objective> out;
  for (const auto& s : specs) out.push_back(*ParseObjective(s, "objective"));
  return out;
}

ExploreSpec Llama8B(std::vector<std::string> axes, std::vector<std::string> obj) {
  ExploreSpec spec;
  spec.space.base = MakeScenario("llama-3-8b", A100Like());
  spec.space.base.hardware.price_usd = 10000;
  spec.space.base.hardware.tdp_watts = 400;
  spec.space.base.workload = {1, 1024, 64};
  for (const auto& a : axes) spec.space.axes.push_back(Parse(a));
  spec.objectives = Objectives(obj);
  return spec;
}

TEST(GridTest, MixedRadixRoundTripsAndShards) {
  const MixedRadix g({3, 1, 4});
  EXPECT_EQ(g.total(), 12u);
  uint64_t d[3];
  g.Decode(7, d);  // 7 = 1*4 + 3: digits (1, 0, 3), last axis fastest
  EXPECT_EQ(d[0], 1u);
  EXPECT_EQ(d[1], 0u);
  EXPECT_EQ(d[2], 3u);
  EXPECT_EQ(g.Encode(d), 7u);
  // Shard 1/3 of 10 points owns 1, 4, 7; resuming from 5 visits 7 only.
  std::vector<uint64_t> seen;
  ForEachInShard(10, Shard{1, 3}, 5, [&](uint64_t i) {
    seen.push_back(i);
    return true;
  });
  EXPECT_EQ(seen, (std::vector<uint64_t>{7}));
  EXPECT_EQ(ShardSize(10, Shard{1, 3}), 3u);
  EXPECT_TRUE(ParseShard("2/5").ok());
  for (const char* bad : {"5/5", "1", "a/2", "0/0", "-1/3", "1/70000"}) {
    absl::StatusOr<Shard> s = ParseShard(bad);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.status().message().find("shard"), std::string::npos);
  }
}

// lo:hi:n values are rounded to the precision the axis was given in: at
// least the end points' decimal places and 3 significant digits, more only
// where that keeps the values distinct (issue 20, item 10: they printed as
// 707.1067811865476 and 399.99999999999994).
TEST(SpaceTest, LogSpacedValuesKeepThePrecisionTheyWereGivenIn) {
  auto labels = [](const std::string& spec) {
    const Axis a = Parse(spec);
    std::vector<std::string> out;
    for (size_t k = 0; k < a.size(); ++k) out.push_back(a.Label(k));
    return out;
  };
  // 500 x 16^(k/8) = 500 x sqrt(2)^k: 707.107, 1414.21, 2828.43, 5656.85
  // between the powers of two; integers given, >= 3 digits: integers.
  EXPECT_EQ(labels("bandwidth_gbs=500:8000:9"),
            (std::vector<std::string>{"500", "707", "1000", "1414", "2000",
                                      "2828", "4000", "5657", "8000"}));
  // 100 x 16^(k/4) = 100 x 2^k; pow gives 399.99999999999994 for k = 2.
  EXPECT_EQ(labels("tdp_w=100:1600:5"),
            (std::vector<std::string>{"100", "200", "400", "800", "1600"}));
  // 100 x 20^(k/6), 20^(1/6) = 1.647548: 164.755, 271.442, 447.214,
  // 736.806, 1213.93.
  EXPECT_EQ(labels("peak_tflops=100:2000:7"),
            (std::vector<std::string>{"100", "165", "271", "447", "737", "1214",
                                      "2000"}));
  // 1 x 2^(1/2) = 1.41421: integers given, but 3 significant digits.
  EXPECT_EQ(labels("bandwidth_x=1:2:3"),
            (std::vector<std::string>{"1", "1.41", "2"}));
  // Two decimals given: 0.25 x 4^(k/3), 4^(1/3) = 1.587401: 0.39685,
  // 0.629961 -> 0.397 and 0.63 (3 significant digits beat 2 places).
  EXPECT_EQ(labels("peak_x=0.25:1.00:4"),
            (std::vector<std::string>{"0.25", "0.397", "0.63", "1"}));
  // 1.01^(k/4): 1.002491, 1.004988, 1.007491 all round to 1.00 or 1.01 at
  // 3 digits; 4 keep them distinct: 1.002, 1.005, 1.007.
  EXPECT_EQ(labels("capacity_x=1:1.01:5"),
            (std::vector<std::string>{"1", "1.002", "1.005", "1.007", "1.01"}));
  // Exponent notation: 1e-3 has 3 places; 1e-3 x 10^(1/2) = 0.00316228.
  EXPECT_EQ(labels("sram_x=1e-3:1e-2:3"),
            (std::vector<std::string>{"0.001", "0.00316", "0.01"}));
}

TEST(SpaceTest, ParsesListsRangesAndNamesErrors) {
  // 500:8000:9 is 500 x 16^(k/8): 500, 707.1..., 1000, ..., 8000.
  const Axis bw = Parse("bandwidth_gbs=500:8000:9");
  ASSERT_EQ(bw.values.size(), 9u);
  EXPECT_DOUBLE_EQ(bw.values[0], 500);
  EXPECT_NEAR(bw.values[2], 1000, 1e-9);
  EXPECT_DOUBLE_EQ(bw.values[8], 8000);
  // Lists are sorted and de-duplicated.
  EXPECT_EQ(Parse("capacity_gb=96,24,48,24").values,
            (std::vector<double>{24, 48, 96}));
  EXPECT_TRUE(Parse("peak_tflops.fp8=100,200").math.has_value());
  EXPECT_TRUE(Parse("bandwidth_x=0.5,2").multiplier);
  EXPECT_EQ(Parse("weights=int4-g128,bf16").formats[0].name, "bf16");
  struct Bad {
    const char* spec;
    const char* says;
  };
  for (const Bad& b : std::vector<Bad>{
           {"bandwidth_gbs", "NAME=VALUES"},
           {"warp_gbs=1", "unknown axis \"warp_gbs\""},
           {"bandwidth_gbs=-5", "out of range"},
           {"batch=0", "value 0 out of range: want an integer >= 1"},
           {"batch=1.5", "integer"},
           {"tdp_w=1:100:0", "lo:hi:n"},
           {"weights=int99", "weights"},
           {"peak_tflops.fp9=1", "peak_tflops.<type>"}}) {
    absl::StatusOr<Axis> a = ParseAxis(b.spec, "vary[2]");
    ASSERT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument) << b.spec;
    EXPECT_NE(a.status().message().find("vary[2]"), std::string::npos);
    EXPECT_NE(a.status().message().find(b.says), std::string::npos)
        << a.status().message();
  }
  EXPECT_FALSE(ParseObjective("decode_tok_s:up", "objective[0]").ok());
  EXPECT_FALSE(ParseConstraint("tpot_ms<50", "constraint[0]").ok());
  const Constraint c = *ParseConstraint("tpot_ms<=50", "constraint[0]");
  EXPECT_EQ(c.metric, Metric::kTpotMs);
  EXPECT_TRUE(c.upper);
  EXPECT_EQ(c.bound, 50);
}

TEST(ExploreTest, HandDerivedThreeByThreeFront) {
  // Axes tensor_parallel {1,2,4} (slowest) x bandwidth_gbs {1000,2000,4000};
  // objectives decode_tok_s:max, price_usd:min. price_usd = 10,000 x
  // devices depends on tensor_parallel only, so within a row of equal
  // price the fastest point (4000 GB/s: batch-1 decode is memory-bound,
  // time ~ bytes / bandwidth) dominates the other two. Across rows a
  // cheaper point is never dominated by a dearer one, and the dearer
  // 4000 GB/s points are faster (each device reads 1/tp of the weights,
  // the interconnect is unpublished so all-reduces cost no time). Front:
  // (tp 1, 4000), (tp 2, 4000), (tp 4, 4000) = indices 2, 5, 8.
  ExploreSpec spec = Llama8B({"tensor_parallel=1,2,4", "bandwidth_gbs=1000,2000,4000"},
                             {"decode_tok_s:max", "price_usd:min"});
  absl::StatusOr<ExploreResult> r = Explore(spec);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 3u);
  EXPECT_EQ(r->rows[0].index, 2u);
  EXPECT_EQ(r->rows[1].index, 5u);
  EXPECT_EQ(r->rows[2].index, 8u);
  EXPECT_EQ(r->rows[0].objectives[1], 10000);
  EXPECT_EQ(r->rows[2].objectives[1], 40000);
  EXPECT_LT(r->rows[0].objectives[0], r->rows[1].objectives[0]);
  EXPECT_LT(r->rows[1].objectives[0], r->rows[2].objectives[0]);
  EXPECT_EQ(r->total_points, 9u);
  EXPECT_EQ(r->front_size, 3u);
  EXPECT_GT(r->hypervolume, 0);
}

TEST(ExploreTest, MoreBandwidthNeverLowersMemoryBoundDecode) {
  ExploreSpec spec = Llama8B({"bandwidth_gbs=100:20000:60"},
                             {"decode_tok_s:max", "price_usd:min"});
  spec.keep_all = true;
  absl::StatusOr<ExploreResult> r = Explore(spec);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 60u);
  for (size_t i = 1; i < r->rows.size(); ++i) {
    EXPECT_GE(r->rows[i].objectives[0], r->rows[i - 1].objectives[0]) << i;
  }
  // Equal price everywhere: only the fastest point is on the front.
  EXPECT_EQ(r->front_size, 1u);
  EXPECT_TRUE(r->rows.back().pareto);
}

TEST(ExploreTest, InfeasiblePointsAreNeverOnTheFront) {
  // 8 GiB cannot hold Llama-3-8B's 16 GB of bf16 weights; with equal
  // bandwidth those points would tie the 80 GiB ones (the engine times
  // spilled bytes in the slowest tier, here the same HBM) and a cheaper
  // one would win. The TPOT constraint removes the 500 GB/s points
  // (16 GB / 500 GB/s = 32 ms > 20 ms).
  ExploreSpec spec = Llama8B(
      {"capacity_gb=8,80", "bandwidth_gbs=500,2000", "price_usd=1000,20000"},
      {"decode_tok_s:max", "price_usd:min"});
  spec.constraints.push_back(*ParseConstraint("tpot_ms<=20", "constraint[0]"));
  spec.keep_all = true;
  absl::StatusOr<ExploreResult> r = Explore(spec);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 8u);
  const MixedRadix g = spec.space.Grid();
  int on_front = 0;
  for (const PointRow& row : r->rows) {
    uint64_t d[3];
    g.Decode(row.index, d);
    EXPECT_EQ(row.fits, d[0] == 1) << row.index;
    if (d[0] == 0 || d[1] == 0) {
      EXPECT_FALSE(row.feasible);
      EXPECT_FALSE(row.pareto);
      EXPECT_GT(row.violation, 0);
    }
    on_front += row.pareto;
  }
  // Front: 80 GiB, 2000 GB/s, $1000 (index 1*4 + 1*2 + 0 = 6).
  EXPECT_EQ(on_front, 1);
  EXPECT_TRUE(r->rows[6].pareto);
  EXPECT_EQ(r->feasible, 2u);
}

TEST(ExploreTest, ShardsAndThreadsGiveTheSingleRunFront) {
  ExploreSpec spec = Llama8B(
      {"bandwidth_gbs=500:8000:5", "peak_tflops=50:1000:4", "tdp_w=200,400,800",
       "batch=1,8"},
      {"decode_tok_s:max", "j_per_token:min", "ttft_ms:min"});
  absl::StatusOr<ExploreResult> one = Explore(spec);
  ASSERT_TRUE(one.ok()) << one.status();
  MarkFront(spec.objectives, &one->rows);  // idempotent on a front
  std::vector<PointRow> merged;
  for (uint64_t s = 0; s < 3; ++s) {
    ExploreSpec sh = spec;
    sh.shard = Shard{s, 3};
    absl::StatusOr<ExploreResult> part = Explore(sh, {}, 2);
    ASSERT_TRUE(part.ok()) << part.status();
    for (auto& row : part->rows) merged.push_back(row);
  }
  MarkFront(spec.objectives, &merged);
  std::vector<uint64_t> want, got;
  for (const auto& row : one->rows) want.push_back(row.index);
  for (const auto& row : merged)
    if (row.pareto) got.push_back(row.index);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want);
  EXPECT_GT(want.size(), 1u);
}

TEST(ExploreTest, ATiedGridIsOneFrontEntryAndShardsMergeUnderTheTieRule) {
  // Neither tdp_w nor price_usd changes decode_tok_s or ttft_ms: all
  // 50 x 40 = 2000 points share one objective vector (issue 26's tied
  // front). The tie rule lists the 16 lowest indices, 0..15, each with
  // ties = 2000, and counts the other 1984 as unlisted.
  ExploreSpec spec = Llama8B({"tdp_w=100:1000:50", "price_usd=1000:50000:40"},
                             {"decode_tok_s:max", "ttft_ms:min"});
  absl::StatusOr<ExploreResult> one = Explore(spec, {}, 2);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->front_size, 2000u);
  EXPECT_EQ(one->front_unlisted, 1984u);
  ASSERT_EQ(one->rows.size(), kMaxListedTies);
  for (size_t i = 0; i < one->rows.size(); ++i) {
    EXPECT_EQ(one->rows[i].index, i);
    EXPECT_EQ(one->rows[i].ties, 2000u);
    EXPECT_TRUE(one->rows[i].pareto);
  }
  // Three shards merge into exactly those rows (counts add: 667 + 667 +
  // 666; the lowest 16 indices of the union).
  std::vector<std::vector<PointRow>> parts;
  for (uint64_t s = 0; s < 3; ++s) {
    ExploreSpec sh = spec;
    sh.shard = Shard{s, 3};
    absl::StatusOr<ExploreResult> part = Explore(sh);
    ASSERT_TRUE(part.ok()) << part.status();
    EXPECT_EQ(part->rows.size(), kMaxListedTies);
    parts.push_back(part->rows);
  }
  uint64_t unlisted = 0;
  const std::vector<PointRow> merged =
      MergeShardFronts(spec.objectives, parts, &unlisted);
  ASSERT_EQ(merged.size(), one->rows.size());
  for (size_t i = 0; i < merged.size(); ++i) {
    EXPECT_EQ(merged[i].index, one->rows[i].index);
    EXPECT_EQ(merged[i].ties, 2000u);
    EXPECT_EQ(merged[i].objectives, one->rows[i].objectives);
  }
  EXPECT_EQ(unlisted, 1984u);
  // include_all lists every point: all 2000 on the front, each ties 2000.
  spec.keep_all = true;
  absl::StatusOr<ExploreResult> all = Explore(spec);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->rows.size(), 2000u);
  for (const PointRow& r : all->rows) {
    EXPECT_TRUE(r.pareto);
    EXPECT_EQ(r.ties, 2000u);
  }
  EXPECT_EQ(all->front_unlisted, 0u);
}

TEST(ExploreTest, AFrontOfMoreDistinctVectorsThanTheCapIsRefused) {
  // Batch trades per-sequence speed against total throughput: G > 2
  // distinct front vectors; tdp_w changes neither, so each is a tie group
  // of 50 (16 listed). A cap of G - 1 refuses the run, a cap of G not.
  ExploreSpec spec = Llama8B({"tdp_w=100:1000:50", "batch=1,2,4,8,16,32"},
                             {"decode_tok_s:max", "decode_tok_s_total:max"});
  absl::StatusOr<ExploreResult> r = Explore(spec, {}, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  const size_t groups = r->rows.size() / kMaxListedTies;
  ASSERT_GT(groups, 2u);
  EXPECT_EQ(r->rows.size(), groups * kMaxListedTies);
  EXPECT_EQ(r->front_size, groups * 50);
  EXPECT_EQ(r->front_unlisted, groups * (50 - kMaxListedTies));
  spec.max_front_points = groups - 1;
  r = Explore(spec, {}, 2);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find(
                absl::StrCat("more than ", groups - 1, " distinct")),
            std::string::npos)
      << r.status();
  spec.max_front_points = groups;
  r = Explore(spec, {}, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->front_size, groups * 50);
}

TEST(ExploreTest, ProgressCanStopTheRun) {
  // 1000 x 1000 points: the first report (within ~20 ms) stops the run
  // long before its end; stopping at any report, even the last, is
  // CANCELLED.
  ExploreSpec spec = Llama8B({"bandwidth_gbs=100:20000:1000", "price_usd=1:1000:1000"},
                             {"decode_tok_s:max", "price_usd:min"});
  ExploreCallbacks cb;
  cb.progress_every = 1;
  int calls = 0;
  cb.progress = [&](uint64_t, uint64_t total) {
    EXPECT_EQ(total, 1000000u);
    ++calls;
    return false;
  };
  absl::StatusOr<ExploreResult> r = Explore(spec, cb);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(calls, 1);
}

// A part with host memory behind a 32 GB/s link: what does not fit the
// HBM spills there and still "fits" (issue 20, item 5: the point must say
// it spilled, in every row, front-only or not).
ExploreSpec SpillSpec(std::vector<std::string> axes) {
  ExploreSpec spec =
      Llama8B(std::move(axes), {"decode_tok_s:max", "j_per_token:min"});
  engine::MemoryTier host;
  host.name = "host DRAM";
  host.kind = engine::TierKind::kHostLink;
  host.capacity_bytes = 512e9;
  host.read_bandwidth_bytes_per_second = 32e9;
  host.write_bandwidth_bytes_per_second = 32e9;
  spec.space.base.hardware.tiers.push_back(host);
  return spec;
}

TEST(ExploreTest, PointsSayWhetherTheySpilled) {
  // 8.03e9 parameters x 2 B = 16.1e9 B of bf16 weights: 8 GiB (8.59e9 B)
  // of HBM holds about half, the rest sits in host memory (fits, spilled);
  // 24 GiB (25.8e9 B) holds them and the 1088 x 131,072 B = 0.14 GB KV
  // cache (not spilled).
  ExploreSpec spec = SpillSpec({"capacity_gb=8,24"});
  spec.keep_all = true;
  absl::StatusOr<ExploreResult> all = Explore(spec);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->rows.size(), 2u);
  EXPECT_TRUE(all->rows[0].fits);
  EXPECT_TRUE(all->rows[0].spilled);
  EXPECT_TRUE(all->rows[1].fits);
  EXPECT_FALSE(all->rows[1].spilled);
  // Front only: the rows come from the front's objective values, and still
  // say it (8 GiB everywhere: every point spills).
  ExploreSpec front_only =
      SpillSpec({"capacity_gb=8", "bandwidth_gbs=1000,2000"});
  absl::StatusOr<ExploreResult> front = Explore(front_only);
  ASSERT_TRUE(front.ok()) << front.status();
  ASSERT_FALSE(front->rows.empty());
  for (const PointRow& r : front->rows) EXPECT_TRUE(r.spilled) << r.index;
  absl::StatusOr<ExploreResult> roomy =
      Explore(SpillSpec({"capacity_gb=24", "bandwidth_gbs=1000,2000"}));
  ASSERT_TRUE(roomy.ok()) << roomy.status();
  for (const PointRow& r : roomy->rows) EXPECT_FALSE(r.spilled) << r.index;
}

TEST(ExploreTest, BadSpecsNameTheField) {
  ExploreSpec spec = Llama8B({"sram_mb=10,20"}, {"decode_tok_s", "price_usd"});
  absl::Status st = Explore(spec).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("vary[0]: axis sram_mb"), std::string::npos) << st;
  spec = Llama8B({"bandwidth_gbs=10"}, {"decode_tok_s"});
  st = Explore(spec).status();
  EXPECT_NE(st.message().find("objectives: want 2..6"), std::string::npos) << st;
}

// The speculative axes set k and the acceptance rate of the base scenario's
// draft: every point is what Analyze gives for those settings, and at
// acceptance 0 more draft tokens only add draft work (each step still
// yields one token, ExpectedTokensPerStep = 1), so decode never gets faster
// as k grows.
TEST(ExploreTest, SpeculativeAxesSetTheBaseScenariosDraft) {
  ExploreSpec spec =
      Llama8B({"speculative_tokens=1,3", "acceptance_rate=0,0.8"},
              {"decode_tok_s:max", "price_usd:min"});
  spec.space.base.options.speculative = {
      engine::DraftMethod::kEagle, "", 1, 0.5, {}};
  spec.keep_all = true;
  absl::StatusOr<ExploreResult> r = Explore(spec);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 4u);
  // Index = 2 x (k digit) + (acceptance digit), the last axis fastest.
  const int64_t ks[] = {1, 3};
  const double alphas[] = {0, 0.8};
  for (const PointRow& row : r->rows) {
    engine::Scenario s = spec.space.base;
    s.options.speculative.tokens = ks[row.index / 2];
    s.options.speculative.acceptance_rate = alphas[row.index % 2];
    absl::StatusOr<engine::AnalysisResult> a = engine::Analyze(s);
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_DOUBLE_EQ(row.objectives[0],
                     a->decode_tokens_per_second_per_sequence)
        << row.index;
  }
  EXPECT_LT(r->rows[2].objectives[0], r->rows[0].objectives[0]);  // alpha 0
  EXPECT_GT(r->rows[1].objectives[0], r->rows[0].objectives[0]);  // 0.8 > 0
}

TEST(ExploreTest, SpeculativeAxesNeedASingleRateDraftAndTheirRanges) {
  ExploreSpec plain = Llama8B({"speculative_tokens=1,2"},
                              {"decode_tok_s:max", "price_usd:min"});
  absl::Status st = Explore(plain).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("vary[0]: axis speculative_tokens: the base "
                              "scenario has no speculative decoding"),
            std::string::npos)
      << st;
  ExploreSpec by_position = Llama8B({"acceptance_rate=0.5,0.9"},
                                    {"decode_tok_s:max", "price_usd:min"});
  by_position.space.base.options.speculative = {
      engine::DraftMethod::kEagle, "", 2, 0, {0.8, 0.6}};
  st = Explore(by_position).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("acceptance_by_position"), std::string::npos)
      << st;
  // k in 1..16 (integers), a rate in [0, 1] (0 allowed: no draft token
  // accepted).
  EXPECT_TRUE(ParseAxis("acceptance_rate=0,1", "vary").ok());
  for (const char* bad : {"speculative_tokens=0", "speculative_tokens=17",
                          "speculative_tokens=1.5", "acceptance_rate=1.01",
                          "acceptance_rate=-0.1"}) {
    absl::Status e = ParseAxis(bad, "vary").status();
    EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(e.message().find("out of range"), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace ridgeline::explore
