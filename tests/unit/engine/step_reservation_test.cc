// StepEvaluator::Create(scenario, capacity): a scheduler's reservation
// holds the activations of one step on the device, ahead of the KV cache;
// steps that touch spilled bytes say how many (issue 20, item 2).
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ridgeline/engine/step.h"
#include "test_hardware.h"

namespace ridgeline::engine {
namespace {

using testing::A100Like;
using ::testing::HasSubstr;
using testing::MakeScenario;

// The A100-like part with host memory behind a link (PCIe 4.0 x16, 32 GB/s
// per direction: PCI-SIG PCIe 4.0 base specification, 16 GT/s x 16 lanes).
Hardware WithHost() {
  Hardware hw = A100Like();
  MemoryTier host;
  host.name = "host DRAM";
  host.kind = TierKind::kHostLink;
  host.capacity_bytes = 1e12;
  host.read_bandwidth_bytes_per_second = 32e9;
  host.write_bandwidth_bytes_per_second = 32e9;
  hw.tiers.push_back(host);
  return hw;
}

TEST(StepReservation, WorkloadIsTheKvCacheAndOneStep) {
  // 256 sequences: 2048 / 256 = 8 prompt tokens each (a step of 2048), and
  // 2304 + 1 - 8 = 2297 generated, so prompt + generated - 1 = 2304 of KV.
  const Workload w = StepEvaluator::ReservationWorkload({256, 2304, 2048});
  EXPECT_EQ(w.batch, 256);
  EXPECT_EQ(w.prompt_tokens, 8);
  EXPECT_EQ(w.generated_tokens, 2297);
  // One sequence: the step's tokens up to its whole context.
  const Workload one = StepEvaluator::ReservationWorkload({1, 4096, 8192});
  EXPECT_EQ(one.prompt_tokens, 4096);
  EXPECT_EQ(one.generated_tokens, 1);
}

TEST(StepReservation, ActivationsStayOnTheDeviceWhenTheKvCacheSpills) {
  // Llama-3-8B bf16: 16.1 GB of weights, 131,072 B of KV per token. 256 x
  // 2304 tokens of KV are 77.3 GB: with the weights more than the 80 GB.
  const Scenario s = MakeScenario("llama-3-8b", WithHost());
  absl::StatusOr<StepEvaluator> big =
      StepEvaluator::Create(s, {256, 2304, 2048});
  ASSERT_TRUE(big.ok()) << big.status();
  const MemoryFootprint& m = big->memory();
  EXPECT_THAT(m.spilled, HasSubstr("kv_cache"));
  EXPECT_THAT(m.spilled, ::testing::Not(HasSubstr("activations")));
  EXPECT_EQ(m.tiers[1].bytes[static_cast<int>(OperandClass::kActivations)], 0);
  // A 512-token chunk over an empty cache touches only its own KV rows
  // off the device; a decode step at 2,000 tokens of context reads some.
  absl::StatusOr<StepTiming> chunk = big->Step({{0, 512}});
  ASSERT_TRUE(chunk.ok());
  EXPECT_GT(chunk->off_device_bytes, 0);
  EXPECT_LT(chunk->off_device_bytes, 512 * 131072.0);
  EXPECT_FALSE(chunk->beyond_step_reservation);
  // The same chunk with a reservation that fits (64 x 2304 x 131,072 B =
  // 19.3 GB): nothing off the device, and a time close to the big one (the
  // activations are on the device in both).
  absl::StatusOr<StepEvaluator> fits =
      StepEvaluator::Create(s, {64, 2304, 2048});
  ASSERT_TRUE(fits.ok());
  EXPECT_EQ(fits->memory().spilled, "");
  absl::StatusOr<StepTiming> c2 = fits->Step({{0, 512}});
  ASSERT_TRUE(c2.ok());
  EXPECT_EQ(c2->off_device_bytes, 0);
  EXPECT_LT(chunk->seconds, 1.05 * c2->seconds);
  // The old reservation: a prefill of every sequence at its whole context
  // (Create(scenario) with batch 256, prompt 2304) puts activations off the
  // device and the chunk is many times slower.
  Scenario whole = s;
  whole.workload = {256, 2304, 0};
  absl::StatusOr<StepEvaluator> old = StepEvaluator::Create(whole);
  ASSERT_TRUE(old.ok());
  EXPECT_THAT(old->memory().spilled, HasSubstr("activations"));
  absl::StatusOr<StepTiming> c3 = old->Step({{0, 512}});
  ASSERT_TRUE(c3.ok());
  EXPECT_GT(c3->seconds, 3 * c2->seconds);
}

TEST(StepReservation, StepsBeyondTheReservedTokensAreFlagged) {
  const Scenario s = MakeScenario("llama-3-8b", A100Like());
  absl::StatusOr<StepEvaluator> ev = StepEvaluator::Create(s, {4, 4096, 256});
  ASSERT_TRUE(ev.ok());
  EXPECT_TRUE(ev->Step({{0, 512}})->beyond_step_reservation);
  EXPECT_FALSE(ev->Step({{0, 256}})->beyond_step_reservation);
}

TEST(StepReservation, BadCapacityNamesTheField) {
  const Scenario s = MakeScenario("llama-3-8b", A100Like());
  absl::StatusOr<StepEvaluator> ev = StepEvaluator::Create(s, {1, 4096, 0});
  EXPECT_EQ(ev.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ev.status().message(), HasSubstr("capacity.max_step_tokens"));
}

}  // namespace
}  // namespace ridgeline::engine
