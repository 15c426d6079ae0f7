// Stability before percentiles: the backlog detector (stability.h), the
// simulation's `stable`, and the SLO search's margin and rejection of
// growing queues (slo_search.h).
#include "ridgeline/serving/stability.h"

#include <span>
#include <vector>

#include "gtest/gtest.h"
#include "ridgeline/serving/simulate.h"
#include "ridgeline/serving/slo_search.h"

namespace ridgeline::serving {
namespace {

// Arrivals at t = 0, 1, ..., 100 s, each admitted at f(i).
template <typename F>
std::vector<Wait> Waits(F admitted) {
  std::vector<Wait> w;
  for (int i = 0; i <= 100; ++i) w.push_back({1.0 * i, admitted(i)});
  return w;
}

TEST(Backlog, AConstantWaitIsStable) {
  // Every request waits 2 s. Window [0, 100], middle 50. First half: the
  // waits of i = 0..48 lie inside (49 x 2 s), i = 49 half (1 s): 99 s of
  // waiting over 50 s = 1.98. Second half: i = 49 (1 s), i = 50..98
  // (49 x 2 s), i = 99 (1 s; clipped at 100): 100 s / 50 s = 2.0.
  const Backlog b = MeasureBacklog(Waits([](int i) { return i + 2.0; }));
  EXPECT_NEAR(b.first_half, 1.98, 1e-12);
  EXPECT_NEAR(b.second_half, 2.0, 1e-12);
  EXPECT_FALSE(b.growing);  // 2.0 <= 1.5 x 1.98 + 3
}

TEST(Backlog, AGrowingQueueIsRejected) {
  // Admitted at 1.5 i: request i waits [i, 1.5 i], the queue grows by one
  // request every 3 s. First half [0, 50]: i <= 33 waits 0.5 i wholly
  // inside (0.5 x 561 = 280.5 s), i = 34..50 until 50 (sum of 50 - i =
  // 136 s): 416.5 / 50 = 8.33. Second half [50, 100]: i = 34..49 from 50 to
  // 1.5 i (1.5 x 664 - 16 x 50 = 196 s), i = 50..66 wholly (0.5 x 986 =
  // 493 s), i = 67..100 until 100 (sum of 100 - i = 561 s): 1250 / 50 = 25.
  const Backlog b = MeasureBacklog(Waits([](int i) { return 1.5 * i; }));
  EXPECT_NEAR(b.first_half, 8.33, 1e-12);
  EXPECT_NEAR(b.second_half, 25.0, 1e-12);
  EXPECT_TRUE(b.growing);  // 25 > 1.5 x 8.33 + 3 = 15.5
  EXPECT_NE(UnstableWarning(b).find("8.3 requests waiting"), std::string::npos);
}

TEST(Backlog, NoWindowNoGrowth) {
  EXPECT_FALSE(MeasureBacklog({}).growing);
  const std::vector<Wait> same = {{1, 5}, {1, 9}};  // one arrival time
  EXPECT_FALSE(MeasureBacklog(same).growing);
}

// 10 ms + 1 ms per new token in the step.
class LinearStep final : public StepCost {
 public:
  absl::StatusOr<StepTime> Time(
      std::span<const SequenceInStep> seqs) const override {
    int64_t tokens = 0;
    for (const SequenceInStep& s : seqs) tokens += s.new_tokens;
    return StepTime{0.010 + 0.001 * static_cast<double>(tokens),
                    engine::Bound::kMemory};
  }
};

// 4 sequences at most, prompts of 8 and 8 generated tokens. At full load a
// step holds the 4 running sequences' tokens: a request takes a prefill
// step and 7 decode steps of about 10 + 4 ms (more with a prefill in it),
// so the replica finishes at most 4 requests per 8 x 14 ms = 35.7
// requests/s, and fewer with prefills mixed in.
SimulationConfig Small(double rate, int64_t requests) {
  SimulationConfig c;
  c.limits = {/*max_num_seqs=*/4, /*max_num_batched_tokens=*/64,
              /*kv_capacity_tokens=*/100000, /*block_size=*/1};
  c.arrivals.rate = rate;
  c.requests = requests;
  c.prompt = LengthDistribution::Fixed(8);
  c.generated = LengthDistribution::Fixed(8);
  return c;
}

TEST(SimulateStability, OverloadIsUnstableUnderloadStable) {
  LinearStep cost;
  absl::StatusOr<SimulationResult> over = Simulate(cost, Small(60, 2000));
  ASSERT_TRUE(over.ok()) << over.status();
  // 60 requests/s against at most 35.7 served: the queue grows by 24 a
  // second, so the second half holds about three times the first.
  EXPECT_FALSE(over->stable);
  EXPECT_GT(over->backlog.second_half, 2.5 * over->backlog.first_half);
  absl::StatusOr<SimulationResult> under = Simulate(cost, Small(10, 2000));
  ASSERT_TRUE(under.ok()) << under.status();
  EXPECT_TRUE(under->stable);
  EXPECT_LT(under->backlog.second_half, 1.0);
  // A closed loop holds at most its clients: always stable.
  SimulationConfig loop = Small(1, 500);
  loop.arrivals.kind = Arrivals::Kind::kConcurrency;
  loop.arrivals.concurrency = 64;
  absl::StatusOr<SimulationResult> closed = Simulate(cost, loop);
  ASSERT_TRUE(closed.ok()) << closed.status();
  EXPECT_TRUE(closed->stable);
}

TEST(SloSearch, AnOverloadedRunNeverMeetsTheSlo) {
  LinearStep cost;
  absl::StatusOr<SimulationResult> over = Simulate(cost, Small(60, 400));
  ASSERT_TRUE(over.ok());
  // A lax TTFT target that this short run's percentiles still meet: its
  // queue grows, so they are not a result.
  const Slo lax{3600, 1};
  ASSERT_LE(over->ttft.p90, lax.ttft_p90_seconds);
  EXPECT_FALSE(MeetsSlo(*over, lax));
}

TEST(SloSearch, KeepsTheMarginAndRejectsGrowingQueues) {
  LinearStep cost;
  const Slo lax{3600, 1};
  // Told the replica serves 100 requests/s (it serves at most 35.7): the
  // margin alone would allow 90; the backlog detector sends the search
  // below what the replica serves.
  absl::StatusOr<MaxRate> m = MaxRateAtSlo(cost, Small(1, 2000), lax, 100);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(m->reachable) << m->why;
  EXPECT_LT(m->max_rate, 35.7);
  EXPECT_TRUE(m->at_max.stable);
  EXPECT_GT(m->unstable_runs, 0);
  // Told the truth or less, it never loads past kMaxUtilization of it.
  absl::StatusOr<MaxRate> honest = MaxRateAtSlo(cost, Small(1, 2000), lax, 20);
  ASSERT_TRUE(honest.ok()) << honest.status();
  EXPECT_LE(honest->max_rate, kMaxUtilization * 20 + 1e-12);
  EXPECT_NEAR(honest->max_rate, 18, 1e-12);  // 0.9 x 20 meets the lax SLO
}

TEST(SloSearch, RunsReachSteadyState) {
  // 16 turnovers of a 256-sequence batch: 4096 requests, more than asked.
  EXPECT_EQ(SteadyStateRequests(600, 256), 4096);
  // A small batch turns over in few requests: the request count stands.
  EXPECT_EQ(SteadyStateRequests(600, 8), 600);
  EXPECT_EQ(SteadyStateRequests(600, 65536), 1'000'000);  // kMaxRequests
}

}  // namespace
}  // namespace ridgeline::serving
