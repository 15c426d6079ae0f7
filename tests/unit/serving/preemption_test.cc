// Preemption by recompute (scheduler.h, ServingLimits::preempt_by_recompute):
// lazy KV allocation, the last admitted request preempted when a decode
// finds no block, and its prompt and tokens recomputed on readmission; by
// hand against whole-life reservation, with a 10 ms + 1 ms-a-token step.
#include <string>

#include "gtest/gtest.h"
#include "linear_step.h"
#include "ridgeline/serving/simulate.h"

namespace ridgeline::serving {
namespace {

// Two requests at 0 of 8 prompt and 10 generated tokens; blocks of 4 and
// 24 KV slots: a whole life is 8 + 10 - 1 = 17 tokens, 20 slots, so whole-
// life reservation runs them one after the other.
SimulationConfig TwoRequests(bool preempt) {
  SimulationConfig c;
  c.limits = {4, 8192, 24, 4};
  c.limits.preempt_by_recompute = preempt;
  c.arrivals.kind = Arrivals::Kind::kTrace;
  c.arrivals.times = {0, 0};
  c.prompt = LengthDistribution::Fixed(8);
  c.generated = LengthDistribution::Fixed(10);
  return c;
}

TEST(Preemption, WholeLifeReservationNeverPreempts) {
  testing::LinearStep cost;
  absl::StatusOr<SimulationResult> r = Simulate(cost, TwoRequests(false));
  ASSERT_TRUE(r.ok()) << r.status();
  // A: prefill 18 ms, 9 decodes of 11 ms: ends at 0.117. B is admitted
  // then (20 + 20 > 24 before): 0.117 + 0.018 + 0.099 = 0.234.
  EXPECT_EQ(r->preemptions, 0);
  EXPECT_NEAR(r->duration_seconds, 0.234, 1e-12);
  EXPECT_NEAR(r->ttft.p99, 0.135, 1e-12);  // B's: 117 + 18 ms
}

TEST(Preemption, ALazyCacheRunsBothAndPreemptsTheLastAdmittedByHand) {
  testing::LinearStep cost;
  absl::StatusOr<SimulationResult> r = Simulate(cost, TwoRequests(true));
  ASSERT_TRUE(r.ok()) << r.status();
  // Both admitted with their prompts' 8 slots; one step prefills both (16
  // tokens, 26 ms). Decodes take a block when their token crosses into
  // one: steps 2-5 (12 ms each) hold 12 slots each (24). Step 6 (t = 0.074)
  // A needs 16: no block, so B, admitted last, is preempted (its 12 slots
  // freed, 5 tokens generated) and nothing is admitted that step; A goes on
  // alone in 11 ms steps, taking its 20th slot at step 10, and ends at
  // 0.129. B needs 8 + 5 = 13 tokens' 16 slots: 16 + 16 > 24 until then.
  // At 0.129 it prefills 13 tokens (23 ms): its 6th token at 0.152, 78 ms
  // after its 5th; 4 more decodes of 11 ms end it at 0.196.
  EXPECT_EQ(r->preemptions, 1);
  EXPECT_NEAR(r->duration_seconds, 0.196, 1e-12);
  EXPECT_NEAR(r->ttft.p99, 0.026, 1e-12);
  // TPOT: A (0.129 - 0.026) / 9, B (0.196 - 0.026) / 9.
  EXPECT_NEAR(r->tpot.p99, 0.170 / 9, 1e-12);
  EXPECT_NEAR(r->tpot.p50, 0.103 / 9, 1e-12);
  // The preemption's gap is the longest of the 18 inter-token gaps.
  EXPECT_NEAR(r->itl.p99, 0.078, 1e-12);
  // Sooner than whole-life reservation (0.234 s) all the same.
}

}  // namespace
}  // namespace ridgeline::serving
