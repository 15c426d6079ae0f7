// Preemption (scheduler.h, ServingLimits::preemption): lazy KV allocation,
// the last admitted request preempted when a decode finds no block, and on
// readmission its prompt and tokens recomputed, or its KV swapped back in
// from the offload tier; by hand against whole-life reservation, with a
// 10 ms + 1 ms-a-token step.
#include <string>

#include "gtest/gtest.h"
#include "linear_step.h"
#include "ridgeline/serving/simulate.h"

namespace ridgeline::serving {
namespace {

// Two requests at 0 of 8 prompt and 10 generated tokens; blocks of 4 and
// 24 KV slots: a whole life is 8 + 10 - 1 = 17 tokens, 20 slots, so whole-
// life reservation runs them one after the other.
SimulationConfig TwoRequests(Preemption preemption) {
  SimulationConfig c;
  c.limits = {4, 8192, 24, 4};
  c.limits.preemption = preemption;
  c.arrivals.kind = Arrivals::Kind::kTrace;
  c.arrivals.times = {0, 0};
  c.prompt = LengthDistribution::Fixed(8);
  c.generated = LengthDistribution::Fixed(10);
  return c;
}

TEST(Preemption, WholeLifeReservationNeverPreempts) {
  testing::LinearStep cost;
  absl::StatusOr<SimulationResult> r =
      Simulate(cost, TwoRequests(Preemption::kOff));
  ASSERT_TRUE(r.ok()) << r.status();
  // A: prefill 18 ms, 9 decodes of 11 ms: ends at 0.117. B is admitted
  // then (20 + 20 > 24 before): 0.117 + 0.018 + 0.099 = 0.234.
  EXPECT_EQ(r->preemptions, 0);
  EXPECT_NEAR(r->duration_seconds, 0.234, 1e-12);
  EXPECT_NEAR(r->ttft.p99, 0.135, 1e-12);  // B's: 117 + 18 ms
}

TEST(Preemption, ALazyCacheRunsBothAndPreemptsTheLastAdmittedByHand) {
  testing::LinearStep cost;
  absl::StatusOr<SimulationResult> r =
      Simulate(cost, TwoRequests(Preemption::kRecompute));
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

// A swap tier of 1,000 tokens written at 0.5 ms and read at 0.25 ms a token.
OffloadTier SwapTier(int64_t capacity_tokens) {
  OffloadTier t;
  t.name = "host";
  t.capacity_tokens = capacity_tokens;
  t.seconds_per_token = 0.25e-3;
  t.write_seconds_per_token = 0.5e-3;
  return t;
}

TEST(Preemption, SwapKeepsTheKvInTheOffloadTierByHand) {
  testing::LinearStep cost;
  SimulationConfig c = TwoRequests(Preemption::kSwap);
  c.limits.offload_tiers = {SwapTier(1000)};
  absl::StatusOr<SimulationResult> r = Simulate(cost, c);
  ASSERT_TRUE(r.ok()) << r.status();
  // As by recompute up to step 6 (t = 0.074): B is preempted with 5 tokens
  // generated, so 8 + 5 - 1 = 12 tokens of KV written; they go to the tier
  // in 12 x 0.5 = 6 ms, paid by that step: 11 + 6 = 17 ms, to 0.091. A's
  // 4 more decodes end it at 0.135 (B's 16 slots do not fit before). B's
  // KV comes back in 12 x 0.25 = 3 ms with its next decode: 11 + 3 ms, its
  // 6th token at 0.149, 75 ms after its 5th; 4 more decodes: 0.193.
  EXPECT_EQ(r->preemptions, 1);
  EXPECT_EQ(r->swapped_preemptions, 1);
  EXPECT_NEAR(r->duration_seconds, 0.193, 1e-12);
  EXPECT_NEAR(r->ttft.p99, 0.026, 1e-12);
  // TPOT: A (0.135 - 0.026) / 9, B (0.193 - 0.026) / 9.
  EXPECT_NEAR(r->tpot.p99, 0.167 / 9, 1e-12);
  EXPECT_NEAR(r->tpot.p50, 0.109 / 9, 1e-12);
  EXPECT_NEAR(r->itl.p99, 0.075, 1e-12);
  // 3 ms sooner than recomputing B's 13 tokens (0.196 s): the tier moves
  // 12 tokens in 9 ms where the step computes 13 in 13 ms.
  ASSERT_EQ(r->kv_tiers.size(), 1u);
  // B's 12 slots held from its preemption (0.074) to its readmission
  // (0.135) of the 0.193 s run, per 1,000.
  EXPECT_NEAR(r->kv_tiers[0].usage_peak, 0.012, 1e-12);
  EXPECT_NEAR(r->kv_tiers[0].usage_mean, 12 * 0.061 / 1000 / 0.193, 1e-12);
}

TEST(Preemption, SwapWithoutRoomRecomputes) {
  testing::LinearStep cost;
  SimulationConfig c = TwoRequests(Preemption::kSwap);
  c.limits.offload_tiers = {SwapTier(8)};  // B's 12 tokens do not fit
  absl::StatusOr<SimulationResult> r = Simulate(cost, c);
  ASSERT_TRUE(r.ok()) << r.status();
  // Exactly the recompute run above.
  EXPECT_EQ(r->preemptions, 1);
  EXPECT_EQ(r->swapped_preemptions, 0);
  EXPECT_NEAR(r->duration_seconds, 0.196, 1e-12);
}

}  // namespace
}  // namespace ridgeline::serving
