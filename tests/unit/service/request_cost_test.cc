// The request-cost estimate (service/src/request_limits.cc) by hand: its
// size term, the steps the engine times one by one, and the refusal's
// message. Golden values are derived in the comments beside them.
#include <optional>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ridgeline/engine/scenario.h"
#include "ridgeline/engine/work.h"
#include "ridgeline/service/backend.h"

namespace ridgeline::service {
namespace {

using ::testing::HasSubstr;

// A 32-layer model (llama-2-7b's depth); hardware without a hook.
engine::Scenario ThirtyTwoLayers(int64_t batch, int64_t prompt, int64_t gen) {
  engine::Scenario s;
  s.model.num_layers = 32;
  s.workload = {batch, prompt, gen};
  s.options.suggestions = false;
  return s;
}

TEST(RequestCostTest, SizeOnlyWhenTheEngineTimesOnePrefillStep) {
  // Prompt 1024 <= the default chunk 2048: one prefill step; no hook: the
  // decode is summed in closed form. 64 x (1024 + 128) x 32 = 2,359,296,
  // with or without suggestions (they add analyses, not steps).
  engine::Scenario s = ThirtyTwoLayers(64, 1024, 128);
  const CostInputs in = CostInputsOf(s);
  EXPECT_EQ(in.steps.prefill_chunks, 1);
  EXPECT_EQ(in.steps.walked_decode_steps, 0);
  EXPECT_DOUBLE_EQ(EstimateRequestCost(in), 2'359'296);
  s.options.suggestions = true;
  EXPECT_EQ(CostInputsOf(s).analyses, 9);  // 1 + 8 what-ifs
  EXPECT_DOUBLE_EQ(EstimateRequestCost(CostInputsOf(s)), 2'359'296);
}

TEST(RequestCostTest, OneTokenChunksOfTheLongestPromptAreRefused) {
  // Issue 14 (production review, item 1): 10^7 prompt tokens in chunks of
  // 1. Size 1 x (1e7 + 0) x 32 = 3.2e8; 1e7 prefill steps, 9,999,999
  // beyond the first, x 1 analysis x 32 layers x 1e4 = 3,199,999,680,000;
  // total 3,200,319,680,000 > 1e12.
  engine::Scenario s = ThirtyTwoLayers(1, 10'000'000, 0);
  s.options.prefill_chunk_tokens = 1;
  const CostInputs in = CostInputsOf(s);
  EXPECT_EQ(in.steps.prefill_chunks, 10'000'000);
  EXPECT_DOUBLE_EQ(EstimateRequestCost(in), 3'200'319'680'000.0);
  Limits limits;  // max_request_cost 1e12
  const absl::Status st = CheckRequestCost(in, limits);
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(st.message(),
              HasSubstr("request cost: batch 1 x (prompt 10000000 + generated "
                        "0 tokens) x 32 layers + 1 analysis x 9999999 more "
                        "timed steps (10000000 prefill chunks of "
                        "options.prefill_chunk_tokens 1) x 32 layers x 10000 "
                        "per step-layer = 3.20032e+12 token-layers exceeds "
                        "the server's limit of 1e+12 (--max-request-cost); "
                        "ask for a larger options.prefill_chunk_tokens"));
}

TEST(RequestCostTest, DefaultChunksAndAHookWalkedDecodeCount) {
  // Prompt 4096 with the default chunk (2048): ceil(4096 / 2048) = 2
  // prefill steps (the default applies only when the prompt does not fit:
  // counted as an upper bound). A hook walks the decode: 1001 - 1 = 1000
  // steps. Suggestions on: 9 analyses. Size 2 x (4096 + 1001) x 32 =
  // 326,208; steps 9 x (1 + 1000) x 32 x 1e4 = 2,882,880,000; total
  // 2,883,206,208.
  engine::Scenario s = ThirtyTwoLayers(2, 4096, 1001);
  s.options.suggestions = true;
  s.hardware.efficiency_hook = [](const engine::OpShape&) {
    return std::optional<engine::OpEfficiency>();
  };
  const CostInputs in = CostInputsOf(s);
  EXPECT_EQ(in.steps.prefill_chunks, 2);
  EXPECT_EQ(in.steps.walked_decode_steps, 1000);
  EXPECT_DOUBLE_EQ(EstimateRequestCost(in), 2'883'206'208.0);
  Limits limits;
  limits.max_request_cost = 1e9;
  const absl::Status st = CheckRequestCost(in, limits);
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(st.message(),
              HasSubstr("9 analyses x 1001 more timed steps (2 prefill chunks "
                        "of the default 2048 tokens, 1000 decode steps walked "
                        "one by one under the plugin's efficiency hook)"));
  EXPECT_THAT(st.message(), HasSubstr("options.suggestions false"));
  // A calibration profile or pure_roofline replaces the hook: closed form.
  s.options.pure_roofline = true;
  EXPECT_EQ(CostInputsOf(s).steps.walked_decode_steps, 0);
  s.options.pure_roofline = false;
  s.efficiency.profile_name = "some-profile";
  EXPECT_EQ(CostInputsOf(s).steps.walked_decode_steps, 0);
}

TEST(RequestCostTest, StoppedErrorIsCancelledWithTheEnginesMessage) {
  const absl::Status st = engine::StoppedError();
  EXPECT_EQ(st.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(st.message(),
            "analysis stopped: the caller's deadline passed or it cancelled");
}

}  // namespace
}  // namespace ridgeline::service
