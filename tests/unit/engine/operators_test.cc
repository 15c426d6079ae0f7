// The graph's closed forms: expected experts, causal pairs, KV bytes.
#include "operators.h"

#include <cmath>

#include "gtest/gtest.h"
#include "test_hardware.h"

namespace ridgeline::engine::internal {
namespace {

TEST(ExpectedExpertsTest, BatchOneIsTopK) {
  // One token picks exactly k distinct experts: E (1 - (1 - k/E)) = k.
  EXPECT_NEAR(ExpectedExpertsTouched(8, 2, 1), 2, 1e-12);    // Mixtral
  EXPECT_NEAR(ExpectedExpertsTouched(256, 8, 1), 8, 1e-12);  // DeepSeek-V3
  EXPECT_NEAR(ExpectedExpertsTouched(128, 8, 1), 8, 1e-12);  // Qwen3-30B-A3B
}

TEST(ExpectedExpertsTest, LargeBatchTouchesNearlyAll) {
  // 8 (1 - 0.75^2) = 3.5 at two tokens.
  EXPECT_NEAR(ExpectedExpertsTouched(8, 2, 2), 3.5, 1e-12);
  // 256 (1 - (1 - 8/256)^512) = 256 (1 - 8.6e-8): all but ~2e-5 experts.
  EXPECT_NEAR(ExpectedExpertsTouched(256, 8, 512), 256, 1e-4);
  EXPECT_LT(ExpectedExpertsTouched(256, 8, 16), 256 * 0.5);  // 101.6
  EXPECT_NEAR(ExpectedExpertsTouched(256, 8, 16),
              256 * (1 - std::pow(248.0 / 256, 16)), 1e-9);
  // k == E: every expert, from the first token.
  EXPECT_DOUBLE_EQ(ExpectedExpertsTouched(4, 4, 1), 4);
}

TEST(CausalPairsTest, PromptCountsHalfTheSquare) {
  // 1024 new tokens on an empty context: 1024 x 1025 / 2.
  EXPECT_DOUBLE_EQ(CausalPairs(1024, 1024, 0), 1024.0 * 1025 / 2);
  // Decode: one query sees the whole context.
  EXPECT_DOUBLE_EQ(CausalPairs(1, 5000, 0), 5000);
}

TEST(CausalPairsTest, WindowCapsEachQuery) {
  // Decode beyond the window sees the window.
  EXPECT_DOUBLE_EQ(CausalPairs(1, 5000, 4096), 4096);
  EXPECT_DOUBLE_EQ(CausalPairs(1, 100, 4096), 100);
  // Prompt of 10 with window 4: queries see 1, 2, 3, 4, 4, 4, 4, 4, 4, 4 = 34.
  EXPECT_DOUBLE_EQ(CausalPairs(10, 10, 4), 34);
  // Chunk of 3 after 5 tokens of context, window 6: contexts 6, 7, 8 -> 6 x 3.
  EXPECT_DOUBLE_EQ(CausalPairs(3, 8, 6), 18);
}

TEST(GraphTest, GroupsIdenticalLayers) {
  Scenario s = testing::MakeScenario("llama-3-8b", testing::A100Like());
  absl::StatusOr<GraphContext> g = MakeGraphContext(s, s.model);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->groups.size(), 1u);
  EXPECT_EQ(g->groups[0].layers, 32);
  EXPECT_EQ(g->groups[0].name, "");
  std::vector<OpCost> ops;
  BuildStepOps(*g, StepShape{1, 1, 100, -1}, &ops);
  // embedding, norm, q, k, v, rope, flash, out, up+gate, act, down,
  // residual, final norm, LM head: independent of the layer count.
  EXPECT_EQ(ops.size(), 14u);
  // KV per sequence at 1000 tokens: 131072 B/token (GQA 8 of 32 heads).
  EXPECT_DOUBLE_EQ(KvBytesPerSequence(*g, 1000), 1000 * 131072.0);
}

TEST(GraphTest, GemvBelowTheTokenThreshold) {
  Scenario s = testing::MakeScenario("llama-3-8b", testing::A100Like());
  absl::StatusOr<GraphContext> g = MakeGraphContext(s, s.model);
  ASSERT_TRUE(g.ok());
  std::vector<OpCost> decode, prefill;
  BuildStepOps(*g, StepShape{64, 1, 100, -1}, &decode);  // 64 rows: GEMV
  BuildStepOps(*g, StepShape{1, 65, 65, -1}, &prefill);  // 65 rows: GEMM
  EXPECT_EQ(decode[2].kind, OpKind::kQProjection);
  EXPECT_EQ(decode[2].op_class, OpClass::kGemv);
  EXPECT_EQ(prefill[2].op_class, OpClass::kGemm);
}

TEST(GraphTest, W4A16RunsIn16BitMath) {
  Scenario s = testing::MakeScenario("llama-3-8b", testing::A100Like());
  s.precision.weights = ParseNumberFormat("int4-g128").value();
  absl::StatusOr<GraphContext> g = MakeGraphContext(s, s.model);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->matmul_math, MathType::kBf16);
  // 4 + 16 / 128 = 4.125 bits.
  EXPECT_DOUBLE_EQ(g->weight_bytes, 4.125 / 8);
}

TEST(GraphTest, Fp16AccumulationUsesItsPeakWhenThePartHasOne) {
  Scenario s = testing::MakeScenario("llama-3-8b", testing::A100Like());
  s.precision = {ParseNumberFormat("fp16").value(), ParseNumberFormat("fp16").value(),
                 ParseNumberFormat("fp16").value()};
  // Not asked for: fp16 (the FP32-accumulate rate).
  EXPECT_EQ(MakeGraphContext(s, s.model)->matmul_math, MathType::kFp16);
  // Asked for, but the part publishes no fp16-acc16 rate (datacenter parts
  // accumulate in FP32 at full rate): still fp16.
  s.options.fp16_accumulation = true;
  EXPECT_EQ(MakeGraphContext(s, s.model)->matmul_math, MathType::kFp16);
  // With a rate of its own (GeForce: twice fp16): fp16-acc16.
  s.hardware.peak_ops_per_second[static_cast<int>(MathType::kFp16Acc16)] = 624e12;
  EXPECT_EQ(MakeGraphContext(s, s.model)->matmul_math, MathType::kFp16Acc16);
  // bf16 matmuls are not fp16: unchanged.
  s.precision.weights = s.precision.activations = ParseNumberFormat("bf16").value();
  EXPECT_EQ(MakeGraphContext(s, s.model)->matmul_math, MathType::kBf16);
}

TEST(MathTypeTest, Fp16Acc16FallsBackToTheFp16Chain) {
  PerMathType peaks;
  peaks[static_cast<int>(MathType::kFp32)] = 1e12;
  EXPECT_EQ(ExecutedMathType(peaks, MathType::kFp16Acc16), MathType::kFp32);
  peaks[static_cast<int>(MathType::kFp16)] = 2e12;
  EXPECT_EQ(ExecutedMathType(peaks, MathType::kFp16Acc16), MathType::kFp16);
  peaks[static_cast<int>(MathType::kFp16Acc16)] = 4e12;
  EXPECT_EQ(ExecutedMathType(peaks, MathType::kFp16Acc16), MathType::kFp16Acc16);
  EXPECT_EQ(MathTypeName(MathType::kFp16Acc16), "fp16-acc16");
  EXPECT_EQ(ParseMathType("fp16-acc16"), MathType::kFp16Acc16);
}

}  // namespace
}  // namespace ridgeline::engine::internal
