// The operator graph of per-layer models (ModelConfig::layers): skipped
// attention, per-layer KV heads and FFN widths, alternating windows,
// interleaved MoE. Each expected number is derived in the comment beside it.
#include <string>

#include "gtest/gtest.h"
#include "ridgeline/engine/analyze.h"
#include "ridgeline/engine/model.h"
#include "test_hardware.h"

namespace ridgeline::engine {
namespace {

using testing::A100Like;
using testing::MakeScenario;

constexpr int kKv = static_cast<int>(OperandClass::kKvCache);
constexpr int kW = static_cast<int>(OperandClass::kWeights);

double Sum(const StepResult& s, OpKind kind, int cls, bool read) {
  double total = 0;
  for (const OpResult& op : s.ops) {
    if (op.kind != kind) continue;
    for (const Traffic& t : op.traffic[cls]) total += read ? t.read : t.write;
  }
  return total;
}

int64_t Layers(const StepResult& s, OpKind kind) {
  int64_t n = 0;
  for (const OpResult& op : s.ops) n += op.kind == kind ? op.layers : 0;
  return n;
}

TEST(LayerShapesTest, NemotronSkipsAttentionWhereBlockConfigsSayNoOp) {
  // Llama-3.3-Nemotron-Super-49B, bf16, batch 1, prompt 1000 + 1 generated:
  // 49 of 80 layers attend with 8 KV heads of 128:
  // 49 x 2 x 8 x 128 x 2 B = 200,704 B per token; x 1001 tokens held
  // (prompt 1000 + 2 generated - 1) = 200,904,704 B.
  Scenario s = MakeScenario("llama-3.3-nemotron-super-49b", A100Like());
  s.hardware.tiers[0].capacity_bytes = 2e12;
  s.workload = {1, 1000, 2};
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_DOUBLE_EQ(r->memory.required_bytes[kKv], 1001 * 200704.0);
  // Every FFN runs (80 layers); attention in 49: the decode step attends
  // only there, and reads K and V of 1001 tokens (KV 1001 after the first
  // decode token): 49 x 1001 x 2 x 8 x 128 x 2 B = 200,904,704 B.
  const StepResult& d = r->decode_first_step;
  EXPECT_EQ(Layers(d, OpKind::kFfnDown), 80);
  EXPECT_EQ(Layers(d, OpKind::kOutProjection), 49);
  EXPECT_EQ(Layers(d, OpKind::kFlashAttention), 49);
  EXPECT_DOUBLE_EQ(Sum(d, OpKind::kFlashAttention, kKv, true), 200904704.0);
  // Norms: one per attention (49) and FFN (80) sub-block: 129 x 8192 x 2 B.
  EXPECT_DOUBLE_EQ(Sum(d, OpKind::kNorm, kW, true), 129 * 8192 * 2.0);
}

TEST(LayerShapesTest, GptOssAlternatesWindowAndFullAttention) {
  // gpt-oss-20b at 4096 tokens of context: 12 full layers keep 4096 tokens,
  // 12 sliding layers 128; 2 x 8 x 64 x 2 B = 2,048 B per layer and token:
  // (12 x 4096 + 12 x 128) x 2,048 = 103,809,024 B.
  Scenario s = MakeScenario("gpt-oss-20b", A100Like());
  s.hardware.tiers[0].capacity_bytes = 2e12;
  s.workload = {1, 4096, 1};
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_DOUBLE_EQ(r->memory.required_bytes[kKv], 103809024.0);
  int groups = 0;
  for (const OpResult& op : r->prefill.ops) {
    if (op.kind == OpKind::kMoeRoutedExperts) {
      ++groups;
      EXPECT_EQ(op.layers, 12);
    }
  }
  EXPECT_EQ(groups, 2);  // "sliding moe" and "global moe"
}

TEST(LayerShapesTest, MaverickInterleavesDenseAndMoeLayers) {
  // Llama-4-Maverick: odd layers MoE (24), even layers dense (24); one
  // shared expert in each MoE layer.
  Scenario s = MakeScenario("llama-4-maverick", A100Like());
  s.hardware.tiers[0].capacity_bytes = 2e12;
  s.workload = {1, 100, 2};
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  const StepResult& d = r->decode_first_step;
  EXPECT_EQ(Layers(d, OpKind::kFfnDown), 24);
  EXPECT_EQ(Layers(d, OpKind::kMoeRoutedExperts), 24);
  EXPECT_EQ(Layers(d, OpKind::kMoeSharedExperts), 24);
  // Dense layers read 3 x 5120 x 16384 x 2 B each: up+gate 2/3 of it on
  // kFfnUpGate and 1/3 on kFfnDown: 24 x 5120 x 16384 x 2 B = 4,026,531,840.
  EXPECT_DOUBLE_EQ(Sum(d, OpKind::kFfnDown, kW, true), 4026531840.0);
}

TEST(LayerShapesTest, TensorParallelShardsPerLayerKvHeads) {
  // Each device holds 1/8 of every layer's KV heads: Nemotron's 8 per
  // attention layer become 1, so the KV cache per device is 1/8 of the
  // single-device 1001 x 200,704 B = 25,113,088 B.
  Scenario s = MakeScenario("llama-3.3-nemotron-super-49b", A100Like());
  s.hardware.tiers[0].capacity_bytes = 2e12;
  s.workload = {1, 1000, 2};
  s.parallelism.tensor_parallel = 8;
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_DOUBLE_EQ(r->memory.required_bytes[kKv], 1001 * 200704.0 / 8);
  for (const char* id : {"gpt-oss-120b", "llama-4-scout", "llama-4-maverick",
                         "kimi-k2", "gpt-j-6b"}) {
    Scenario t = MakeScenario(id, A100Like());
    t.hardware.tiers[0].capacity_bytes = 2e12;
    t.workload = {4, 512, 8};
    t.parallelism.tensor_parallel = 8;
    EXPECT_TRUE(Analyze(t).ok()) << id;
  }
}

}  // namespace
}  // namespace ridgeline::engine
