// Hybrid recurrent / attention models and DSA: operator goldens, the
// recurrent state and the KV growth, and decode time against context.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "operators.h"
#include "ridgeline/engine/analyze.h"
#include "ridgeline/engine/formats.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/engine/step.h"
#include "test_hardware.h"

namespace ridgeline::engine {
namespace {

using internal::BuildStepOps;
using internal::GraphContext;
using internal::MakeGraphContext;
using internal::OpCost;
using internal::StepShape;

// NVIDIA H200 SXM 141GB (../shared/data/hardware_specs.csv row
// nvidia-h200-sxm-141gb: 4800 GB/s HBM3e, 989.4 TFLOP/s BF16 and 1978.9
// FP8 dense, 141 GiB usable: 143771 MiB per nvidia-smi = 150.76e9 B).
Hardware H200Like() {
  Hardware hw = testing::A100Like();
  hw.id = "test-h200-like";
  hw.peak_ops_per_second[static_cast<int>(MathType::kFp16)] = 989.4e12;
  hw.peak_ops_per_second[static_cast<int>(MathType::kBf16)] = 989.4e12;
  hw.peak_ops_per_second[static_cast<int>(MathType::kFp8)] = 1978.9e12;
  hw.tiers[0].name = "HBM3e";
  hw.tiers[0].capacity_bytes = 150.76e9;
  hw.tiers[0].read_bandwidth_bytes_per_second = 4800e9;
  hw.tiers[0].write_bandwidth_bytes_per_second = 4800e9;
  return hw;
}

// Two layers, one mixer each plus an MLP, small enough to derive by hand.
ModelConfig Tiny() {
  ModelConfig m;
  m.id = "tiny-hybrid";
  m.vocab_size = 100;
  m.hidden_size = 64;
  m.intermediate_size = 128;
  m.num_layers = 2;
  m.num_attention_heads = 4;
  m.num_kv_heads = 2;
  m.head_dim = 16;
  m.max_context = 1 << 20;
  return m;
}

ModelConfig TinyMamba() {
  ModelConfig m = Tiny();
  m.mamba = MambaDims{.num_heads = 4,
                      .head_dim = 8,
                      .state_size = 16,
                      .n_groups = 1,
                      .conv_kernel = 4,
                      .chunk_size = 8};
  // Nemotron-H style: a layer is the mixer alone (no FFN).
  m.layers.assign(2, LayerSpec{.attention = AttentionKind::kMamba2,
                               .ffn = FfnLayerKind::kNone});
  return m;
}

ModelConfig TinyMamba1() {
  ModelConfig m = Tiny();
  m.mamba1 = Mamba1Dims{.inner = 128,
                        .state_size = 4,
                        .dt_rank = 4,
                        .conv_kernel = 4,
                        .conv_bias = true,
                        .inner_norms = true};
  m.layers.assign(2, LayerSpec{.attention = AttentionKind::kMamba1,
                               .ffn = FfnLayerKind::kNone});
  return m;
}

ModelConfig TinyDeltaNet() {
  ModelConfig m = Tiny();
  m.linear_attention = LinearAttentionDims{.num_key_heads = 2,
                                           .key_head_dim = 8,
                                           .num_value_heads = 4,
                                           .value_head_dim = 8,
                                           .conv_kernel = 4,
                                           .chunk_size = 8};
  m.layers.assign(2, LayerSpec{.attention = AttentionKind::kLinearAttention});
  return m;
}

// Kimi Delta Attention: 2 heads, dk = dv = 8 (heads = key heads = value
// heads), the low-rank gates of rank dk.
ModelConfig TinyKda() {
  ModelConfig m = Tiny();
  m.linear_attention =
      LinearAttentionDims{.kind = LinearAttentionKind::kKimiDelta,
                          .num_key_heads = 2,
                          .key_head_dim = 8,
                          .num_value_heads = 2,
                          .value_head_dim = 8,
                          .conv_kernel = 4,
                          .chunk_size = 8};
  m.layers.assign(2, LayerSpec{.attention = AttentionKind::kLinearAttention});
  return m;
}

const OpCost& Find(const std::vector<OpCost>& ops, OpKind kind) {
  for (const OpCost& op : ops) {
    if (op.kind == kind) return op;
  }
  ADD_FAILURE() << "no op " << OpKindName(kind);
  return ops.front();
}

// One op kind summed over the layer groups it occurs in.
OpCost Sum(const std::vector<OpCost>& ops, OpKind kind) {
  OpCost sum = Find(ops, kind);
  sum.flops = 0;
  sum.read = sum.write = {};
  for (const OpCost& op : ops) {
    if (op.kind != kind) continue;
    sum.flops += op.flops;
    for (int c = 0; c < kOperandClassCount; ++c) {
      sum.read[c] += op.read[c];
      sum.write[c] += op.write[c];
    }
  }
  return sum;
}

std::vector<OpCost> Ops(const Scenario& s, const StepShape& shape) {
  absl::StatusOr<GraphContext> g = MakeGraphContext(s, s.model);
  EXPECT_TRUE(g.ok()) << g.status();
  std::vector<OpCost> ops;
  BuildStepOps(*g, shape, &ops);
  return ops;
}

Scenario With(const ModelConfig& m) {
  Scenario s;
  s.model = m;
  s.hardware = testing::A100Like();
  s.options.suggestions = false;
  return s;
}

TEST(Mamba2Test, ScanAndStateUpdateGoldens) {
  const Scenario s = With(TinyMamba());
  ASSERT_TRUE(ValidateModel(s.model).ok()) << ValidateModel(s.model);
  // Decode, 2 sequences: per token and head 5 N P = 5 x 16 x 8 = 640;
  // x 4 heads x 2 tokens x 2 layers = 10,240.
  const std::vector<OpCost> dec = Ops(s, StepShape{2, 1, 100, -1});
  const OpCost& step = Find(dec, OpKind::kSsmScan);
  EXPECT_DOUBLE_EQ(step.flops, 10240);
  // Each sequence reads and writes its state H P N = 4 x 8 x 16 = 512
  // elements x 2 B per layer: 2 x 1024 x 2 layers = 4096 B.
  EXPECT_DOUBLE_EQ(step.read[internal::kKv], 4096);
  EXPECT_DOUBLE_EQ(step.write[internal::kKv], 4096);
  EXPECT_FALSE(step.kv_dependent);
  // The same step at a 100x longer context costs the same: no KV read grows.
  const std::vector<OpCost> far = Ops(s, StepShape{2, 1, 10000, -1});
  EXPECT_DOUBLE_EQ(Find(far, OpKind::kSsmScan).flops, step.flops);
  // Prefill of 16 tokens, chunk Q = 8: per token and head 2Q(N + P) + 4NP
  // = 16 x 24 + 512 = 896; x 4 heads x 16 tokens x 2 layers = 114,688.
  const std::vector<OpCost> pre = Ops(s, StepShape{1, 16, 16, -1});
  EXPECT_DOUBLE_EQ(Find(pre, OpKind::kSsmScan).flops, 114688);
  // in_proj: 64 -> 2 x 32 + 2 x 1 x 16 + 4 = 100; 2 x 16 x 64 x 100 x 2
  // layers = 409,600.
  EXPECT_DOUBLE_EQ(Find(pre, OpKind::kMambaInProjection).flops, 409600);
  // conv1d over 32 + 32 = 64 channels, K = 4 with bias: (8 + 1 + 4)
  // FLOPs x 64 x 16 tokens x 2 layers = 26,624.
  EXPECT_DOUBLE_EQ(Find(pre, OpKind::kShortConv).flops, 26624);
}

TEST(Mamba2Test, ParametersAndConstantState) {
  const ModelConfig m = TinyMamba();
  // Mixer: in_proj 64 x 100 = 6400; conv (32 + 32) x (4 + 1) = 320;
  // A_log, D, dt_bias 3 x 4 = 12; gated norm 32; out_proj 32 x 64 = 2048
  // -> 8812. Layer + 1 norm of 64 = 8876 (no FFN: one norm less). Two
  // layers 17,752 + embeddings 2 x 100 x 64 = 12,800 + final norm 64.
  EXPECT_DOUBLE_EQ(CountParameters(m).total, 30616);
  EXPECT_DOUBLE_EQ(KvElementsPerToken(m), 0);
  // State: 512 + conv window (4 - 1) x 64 = 704 per layer, 1408 in all.
  EXPECT_DOUBLE_EQ(StateElementsPerSequence(m), 1408);
}

TEST(Mamba1Test, SelectiveScanGoldens) {
  const Scenario s = With(TinyMamba1());
  ASSERT_TRUE(ValidateModel(s.model).ok()) << ValidateModel(s.model);
  // Decode, 2 sequences: per token and channel 7N + 7 = 35; x 128
  // channels x 2 tokens x 2 layers = 17,920.
  const std::vector<OpCost> dec = Ops(s, StepShape{2, 1, 100, -1});
  const OpCost& step = Find(dec, OpKind::kSsmScan);
  EXPECT_DOUBLE_EQ(step.flops, 17920);
  // Each sequence reads and writes its d_inner x N = 512 state elements x
  // 2 B per layer: 2 x 1024 x 2 layers = 4096 B.
  EXPECT_DOUBLE_EQ(step.read[internal::kKv], 4096);
  EXPECT_DOUBLE_EQ(step.write[internal::kKv], 4096);
  EXPECT_DOUBLE_EQ(
      Find(Ops(s, StepShape{2, 1, 10000, -1}), OpKind::kSsmScan).flops,
      step.flops);
  // Prefill costs per token what decode does (no chunked form): 35 x 128 x
  // 16 tokens x 2 layers = 143,360.
  const std::vector<OpCost> pre = Ops(s, StepShape{1, 16, 16, -1});
  EXPECT_DOUBLE_EQ(Find(pre, OpKind::kSsmScan).flops, 143360);
  // in_proj 64 -> 2 x 128: 2 x 16 x 64 x 256 x 2 layers = 1,048,576; then
  // x_proj 128 -> 4 + 8: 2 x 16 x 128 x 12 x 2 = 98,304; dt_proj 4 -> 128
  // and its bias: (2 x 4 + 1) x 16 x 128 x 2 = 36,864.
  const OpCost in = Sum(pre, OpKind::kMambaInProjection);
  EXPECT_DOUBLE_EQ(in.flops, 1048576 + 98304 + 36864);
  // conv1d over the 128 x channels only, K = 4 with bias: (8 + 1 + 4) x 128
  // x 16 x 2 = 53,248.
  EXPECT_DOUBLE_EQ(Find(pre, OpKind::kShortConv).flops, 53248);
}

TEST(Mamba1Test, ParametersAndConstantState) {
  const ModelConfig m = TinyMamba1();
  // Mixer: in_proj 64 x 256 = 16,384; conv 128 x 5 = 640; x_proj 128 x 12
  // = 1536; dt_proj 4 x 128 + 128 = 640; A_log 128 x 4 = 512; D 128;
  // out_proj 128 x 64 = 8192; dt/B/C norms 4 + 8 = 12 -> 28,044. Layer + 1
  // norm of 64 = 28,108; two layers 56,216 + embeddings 12,800 + final
  // norm 64.
  EXPECT_DOUBLE_EQ(CountParameters(m).total, 69080);
  EXPECT_DOUBLE_EQ(KvElementsPerToken(m), 0);
  // State: 128 x 4 = 512 + conv window 3 x 128 = 384 -> 896 per layer.
  EXPECT_DOUBLE_EQ(StateElementsPerSequence(m), 1792);
}

TEST(GatedDeltaNetTest, ChunkedAndRecurrentGoldens) {
  const Scenario s = With(TinyDeltaNet());
  ASSERT_TRUE(ValidateModel(s.model).ok()) << ValidateModel(s.model);
  // Recurrent: 7 dk dv = 448 per value head; x 4 heads x 1 token x 2
  // layers = 3584.
  const std::vector<OpCost> dec = Ops(s, StepShape{1, 1, 5000, -1});
  EXPECT_DOUBLE_EQ(Find(dec, OpKind::kLinearAttention).flops, 3584);
  // Chunked, C = 8: C(6 dk + 4 dv) + 2C^2/3 + 6 dk dv = 640 + 128/3 +
  // 384 = 3200/3 per token and head; x 4 x 16 tokens x 2 layers
  // = 409,600 / 3.
  const std::vector<OpCost> pre = Ops(s, StepShape{1, 16, 16, -1});
  EXPECT_DOUBLE_EQ(Find(pre, OpKind::kLinearAttention).flops, 409600.0 / 3);
  // Each chunk's state (4 x 8 x 8 = 256 elements, 512 B) is written and
  // read back: 16 / 8 chunks x 512 B x 2 layers = 2048 B on top of the
  // inputs (q, k 16 + 16, v 32, beta and decay 8: 72 x 16 tokens x 2 B x
  // 2 layers = 4608 B).
  EXPECT_DOUBLE_EQ(Find(pre, OpKind::kLinearAttention).read[internal::kAct],
                   4608 + 2048);
  // Layer: in_proj_qkvz 64 x (32 + 64) = 6144, in_proj_ba 64 x 8 = 512,
  // conv (32 + 32) x 4 = 256, A_log + dt_bias 8, norm 8, out_proj 32 x 64
  // = 2048 -> 8976; + MLP 3 x 64 x 128 = 24,576 + 2 norms 128 = 33,680;
  // x 2 = 67,360 + 12,800 + 64 = 80,224.
  EXPECT_DOUBLE_EQ(CountParameters(s.model).total, 80224);
  // State per layer 4 x 8 x 8 = 256 + 3 x 64 conv = 448; 2 layers.
  EXPECT_DOUBLE_EQ(StateElementsPerSequence(s.model), 896);
}

TEST(KimiDeltaTest, ChunkedAndRecurrentGoldens) {
  const Scenario s = With(TinyKda());
  ASSERT_TRUE(ValidateModel(s.model).ok()) << ValidateModel(s.model);
  // Recurrent, as Gated DeltaNet's: 7 dk dv = 448 per head; x 2 heads x 1
  // token x 2 layers = 1792.
  const std::vector<OpCost> dec = Ops(s, StepShape{1, 1, 5000, -1});
  EXPECT_DOUBLE_EQ(Find(dec, OpKind::kLinearAttention).flops, 1792);
  // Chunked, C = 8: Gated DeltaNet's C(6 dk + 4 dv) + 2C^2/3 + 6 dk dv =
  // 640 + 128/3 + 384, plus the per-channel decay on q, k and 1/k 3 dk =
  // 24: 3272/3 per token and head; x 2 heads x 16 tokens x 2 layers =
  // 209,408 / 3.
  const std::vector<OpCost> pre = Ops(s, StepShape{1, 16, 16, -1});
  EXPECT_DOUBLE_EQ(Find(pre, OpKind::kLinearAttention).flops, 209408.0 / 3);
  // Inputs q, k 16 + 16, v 16, beta 2 and the decay per key channel 16:
  // 66 x 16 tokens x 2 B x 2 layers = 4224 B; each chunk's state (2 x 8 x
  // 8 = 128 elements, 256 B) written and read back: 2 chunks x 256 B x 2
  // layers = 1024 B.
  EXPECT_DOUBLE_EQ(Find(pre, OpKind::kLinearAttention).read[internal::kAct],
                   4224 + 1024);
  // Projections: q, k, v, b, f_a, g_a from the hidden state, 64 x (16 +
  // 16 + 16 + 2 + 8 + 8 = 66), then f_b, g_b from rank 8 to 16 + 16:
  // 2 x 16 tokens x 2 layers x (64 x 66 + 8 x 32) = 286,720 FLOPs.
  EXPECT_DOUBLE_EQ(Sum(pre, OpKind::kLinearAttentionInProjection).flops,
                   286720);
  // Layer: q, k, v 64 x 48 = 3072, b 64 x 2 = 128, f_a + f_b 64 x 8 + 8 x
  // 16 = 640, dt_bias 16, A_log 2, g_a + g_b 640, convs 48 x 4 = 192,
  // o_norm 8, o_proj 16 x 64 = 1024 -> 5722; + MLP 3 x 64 x 128 = 24,576
  // + 2 norms 128 = 30,426; x 2 = 60,852 + embedding and LM head 12,800
  // + final norm 64 = 73,716.
  EXPECT_DOUBLE_EQ(CountParameters(s.model).total, 73716);
  // State per layer 2 x 8 x 8 = 128 + 3 x 48 conv = 272; 2 layers.
  EXPECT_DOUBLE_EQ(StateElementsPerSequence(s.model), 544);
}

TEST(DsaTest, IndexerScoresEveryKeyAttentionReadsTopK) {
  const Scenario s =
      testing::MakeScenario("deepseek-v3.2", testing::A100Like());
  const std::vector<OpCost> a = Ops(s, StepShape{1, 1, 4096, -1});
  const std::vector<OpCost> b = Ops(s, StepShape{1, 1, 8192, -1});
  // Scores (dense and MoE layer groups together): 61 layers x 4096 keys x
  // 64 heads x (2 x 128 + 3) = 61 x 4096 x 16,576 = 4,141,613,056 FLOPs;
  // twice at 8192.
  EXPECT_DOUBLE_EQ(Sum(a, OpKind::kDsaIndexerScore).flops, 4141613056.0);
  EXPECT_DOUBLE_EQ(Sum(b, OpKind::kDsaIndexerScore).flops, 2 * 4141613056.0);
  // Index keys read: 4096 x 128 x 2 B x 61 = 63,963,136 B.
  EXPECT_DOUBLE_EQ(Sum(a, OpKind::kDsaIndexerScore).read[internal::kKv],
                   63963136.0);
  // Sparse attention reads the top 2048 tokens' latents either way.
  const OpKind attn =
      s.options.flash_attention ? OpKind::kFlashAttention : OpKind::kQk;
  EXPECT_DOUBLE_EQ(Sum(a, attn).read[internal::kKv],
                   Sum(b, attn).read[internal::kKv]);
  EXPECT_GT(Sum(a, attn).read[internal::kKv], 0);
  EXPECT_EQ(Find(a, attn).window, 2048);
  // The cache keeps every token: latent 512 + RoPE key 64 + index key 128
  // = 704 elements per token and layer.
  EXPECT_DOUBLE_EQ(KvElementsPerToken(s.model), 61 * 704.0);
}

// Per-token KV growth is the full-attention layers' share, and the
// recurrent state does not grow.
TEST(HybridMemoryTest, KvGrowsOnlyForFullAttentionLayers) {
  Scenario s = testing::MakeScenario("qwen3-next-80b-a3b", H200Like());
  s.precision.weights = ParseNumberFormat("fp8").value();
  auto kv_at = [&](int64_t prompt) {
    s.workload = {1, prompt, 1};  // keeps `prompt` tokens
    absl::StatusOr<StepEvaluator> ev = StepEvaluator::Create(s);
    EXPECT_TRUE(ev.ok()) << ev.status();
    return ev->memory();
  };
  const MemoryFootprint short_ctx = kv_at(4096), long_ctx = kv_at(65536);
  // 12 of 48 layers attend: 12 x 2 (K, V) x 2 KV heads x 256 x 2 B =
  // 24,576 B per token.
  constexpr int kv = internal::kKv;
  EXPECT_DOUBLE_EQ(
      (long_ctx.required_bytes[kv] - short_ctx.required_bytes[kv]) /
          (65536 - 4096),
      24576);
  // 36 Gated DeltaNet layers x (32 x 128 x 128 = 524,288 state + 3 x
  // (2 x 16 x 128 + 32 x 128) = 24,576 conv window) x 2 B = 39,518,208 B.
  EXPECT_DOUBLE_EQ(short_ctx.state_bytes, 39518208);
  EXPECT_DOUBLE_EQ(long_ctx.state_bytes, 39518208);
  EXPECT_DOUBLE_EQ(short_ctx.required_bytes[kv], 4096 * 24576.0 + 39518208);
}

// MiniMax-M1: the KV grows for its 10 softmax layers only; the 70
// lightning layers keep a dk x dv state per head and no conv window.
TEST(HybridMemoryTest, MiniMaxKvGrowsOnlyForSoftmaxLayers) {
  Scenario s = testing::MakeScenario("minimax-m1", H200Like());
  s.precision.weights = ParseNumberFormat("fp8").value();
  auto kv_at = [&](int64_t prompt) {
    s.workload = {1, prompt, 1};
    absl::StatusOr<StepEvaluator> ev = StepEvaluator::Create(s);
    EXPECT_TRUE(ev.ok()) << ev.status();
    return ev->memory();
  };
  const MemoryFootprint short_ctx = kv_at(4096), long_ctx = kv_at(65536);
  // 10 x 2 (K, V) x 8 KV heads x 128 x 2 B = 40,960 B per token.
  constexpr int kv = internal::kKv;
  EXPECT_DOUBLE_EQ(
      (long_ctx.required_bytes[kv] - short_ctx.required_bytes[kv]) /
          (65536 - 4096),
      40960);
  // 70 x 64 heads x 128 x 128 x 2 B = 146,800,640 B, at any context.
  EXPECT_DOUBLE_EQ(short_ctx.state_bytes, 146800640);
  EXPECT_DOUBLE_EQ(long_ctx.state_bytes, 146800640);
}

// Jamba-1.5-Mini: 4 attention layers of 32; the 28 Mamba-1 layers keep
// d_inner x N plus the conv window, at any context.
TEST(HybridMemoryTest, JambaKvGrowsOnlyForAttentionLayers) {
  Scenario s = testing::MakeScenario("jamba-1.5-mini", H200Like());
  auto kv_at = [&](int64_t prompt) {
    s.workload = {1, prompt, 1};
    absl::StatusOr<StepEvaluator> ev = StepEvaluator::Create(s);
    EXPECT_TRUE(ev.ok()) << ev.status();
    return ev->memory();
  };
  const MemoryFootprint short_ctx = kv_at(4096), long_ctx = kv_at(65536);
  // 4 x 2 (K, V) x 8 KV heads x 128 x 2 B = 16,384 B per token.
  constexpr int kv = internal::kKv;
  EXPECT_DOUBLE_EQ(
      (long_ctx.required_bytes[kv] - short_ctx.required_bytes[kv]) /
          (65536 - 4096),
      16384);
  // 28 x (8192 x 16 + 3 x 8192 = 155,648) x 2 B = 8,716,288 B.
  EXPECT_DOUBLE_EQ(short_ctx.state_bytes, 8716288);
  EXPECT_DOUBLE_EQ(long_ctx.state_bytes, 8716288);
}

// Mamba-Codestral-7B: no attention layer, so no KV grows at all; its 64
// Mamba-2 layers keep (128 x 64 x 128 + 3 x 10,240) = 1,079,296 elements
// each: 69,074,944 x 2 B = 138,149,888 B per sequence at any context.
TEST(HybridMemoryTest, Mamba2KeepsOnlyItsState) {
  Scenario s = testing::MakeScenario("mamba-codestral-7b", H200Like());
  auto at = [&](int64_t prompt) {
    s.workload = {1, prompt, 1};
    absl::StatusOr<StepEvaluator> ev = StepEvaluator::Create(s);
    EXPECT_TRUE(ev.ok()) << ev.status();
    return ev->memory();
  };
  const MemoryFootprint short_ctx = at(4096), long_ctx = at(131072);
  constexpr int kv = internal::kKv;
  EXPECT_DOUBLE_EQ(long_ctx.required_bytes[kv], short_ctx.required_bytes[kv]);
  EXPECT_DOUBLE_EQ(short_ctx.state_bytes, 138149888);
  EXPECT_DOUBLE_EQ(long_ctx.state_bytes, 138149888);
}

// Falcon-H1-0.5B: attention in every layer, so the KV grows for all 36
// (2 KV heads x 64 x (K, V) x 2 B = 512 B a layer, 18,432 B a token), and
// beside it the Mamba-2 state of every layer: 7,271,424 x 2 B =
// 14,542,848 B per sequence at any context.
TEST(HybridMemoryTest, FalconH1KeepsKvAndStateInEveryLayer) {
  Scenario s = testing::MakeScenario("falcon-h1-0.5b", H200Like());
  auto at = [&](int64_t prompt) {
    s.workload = {1, prompt, 1};
    absl::StatusOr<StepEvaluator> ev = StepEvaluator::Create(s);
    EXPECT_TRUE(ev.ok()) << ev.status();
    return ev->memory();
  };
  const MemoryFootprint short_ctx = at(4096), long_ctx = at(16000);
  constexpr int kv = internal::kKv;
  EXPECT_DOUBLE_EQ(
      (long_ctx.required_bytes[kv] - short_ctx.required_bytes[kv]) /
          (16000 - 4096),
      18432);
  EXPECT_DOUBLE_EQ(short_ctx.state_bytes, 14542848);
  EXPECT_DOUBLE_EQ(long_ctx.state_bytes, 14542848);
}

double Tpot(const std::string& model, int64_t context) {
  Scenario s = testing::MakeScenario(model, H200Like());
  // FP8 weights and KV cache (Qwen/Qwen3-Next-80B-A3B-Instruct-FP8 fits one
  // H200; bf16 weights, 159 GB, would not).
  s.precision.weights = ParseNumberFormat("fp8").value();
  s.precision.kv_cache = ParseNumberFormat("fp8").value();
  s.workload = {1, context, 2};
  absl::StatusOr<AnalysisResult> r = AnalyzeForComparison(s);
  EXPECT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->memory.fits) << model << " " << r->memory.not_fitting;
  return r->tpot_mean_seconds;
}

// Kimi-Linear: the KV grows for its 7 MLA layers only (latent and rope
// key); the 20 KDA layers keep a constant state.
TEST(HybridMemoryTest, KimiLinearKvGrowsOnlyForMlaLayers) {
  Scenario s = testing::MakeScenario("kimi-linear-48b-a3b", H200Like());
  s.precision.weights = ParseNumberFormat("fp8").value();
  auto kv_at = [&](int64_t prompt) {
    s.workload = {1, prompt, 1};
    absl::StatusOr<StepEvaluator> ev = StepEvaluator::Create(s);
    EXPECT_TRUE(ev.ok()) << ev.status();
    return ev->memory();
  };
  const MemoryFootprint short_ctx = kv_at(4096), long_ctx = kv_at(65536);
  // 7 x (512 + 64) x 2 B = 8064 B per token.
  constexpr int kv = internal::kKv;
  EXPECT_DOUBLE_EQ(
      (long_ctx.required_bytes[kv] - short_ctx.required_bytes[kv]) /
          (65536 - 4096),
      8064);
  // 20 x (32 x 128 x 128 + 3 x 3 x 4096) x 2 B = 22,446,080 B.
  EXPECT_DOUBLE_EQ(short_ctx.state_bytes, 22446080);
  EXPECT_DOUBLE_EQ(long_ctx.state_bytes, 22446080);
}

// A pure state-space model's decode step does not grow with the context at
// all: every step reads the same weights and the same state.
TEST(HybridMemoryTest, Mamba2DecodeDoesNotGrowWithContext) {
  const double at4k = Tpot("mamba-codestral-7b", 4096);
  const double at128k = Tpot("mamba-codestral-7b", 131072);
  EXPECT_GT(at4k, 0);
  EXPECT_NEAR(at128k, at4k, 1e-12 * at4k);
}

// The target: Qwen3-Next's decode at 128 k stays within 1.5x its
// 4 k TPOT (batch 1, H200); a dense model of about its active size
// (Llama-3.2-3B: 3.2 B against Qwen3-Next's 3.6 B active without the input
// embedding) does not. docs/hybrid.md shows both.
TEST(HybridMemoryTest, Qwen3NextDecodeBarelyGrowsWithContext) {
  const double q4 = Tpot("qwen3-next-80b-a3b", 4096);
  const double q128 = Tpot("qwen3-next-80b-a3b", 131072);
  EXPECT_LT(q128, 1.5 * q4) << q4 << " " << q128;
  EXPECT_GT(q128, q4);  // the attention layers' KV still grows
  const double d4 = Tpot("llama-3.2-3b", 4096);
  const double d128 = Tpot("llama-3.2-3b", 131072);
  EXPECT_GT(d128, 1.5 * d4) << d4 << " " << d128;
  // The numbers docs/hybrid.md quotes (--gtest_output=xml shows them).
  RecordProperty("qwen3_next_tpot_4k_us", std::to_string(q4 * 1e6));
  RecordProperty("qwen3_next_tpot_128k_us", std::to_string(q128 * 1e6));
  RecordProperty("llama_3_2_3b_tpot_4k_us", std::to_string(d4 * 1e6));
  RecordProperty("llama_3_2_3b_tpot_128k_us", std::to_string(d128 * 1e6));
}

// Kimi-Linear likewise: 20 of 27 layers keep a constant state.
TEST(HybridMemoryTest, KimiLinearDecodeBarelyGrowsWithContext) {
  const double k4 = Tpot("kimi-linear-48b-a3b", 4096);
  const double k128 = Tpot("kimi-linear-48b-a3b", 131072);
  EXPECT_LT(k128, 1.5 * k4) << k4 << " " << k128;
  EXPECT_GT(k128, k4);  // the MLA layers' latents still grow
  RecordProperty("kimi_linear_tpot_4k_us", std::to_string(k4 * 1e6));
  RecordProperty("kimi_linear_tpot_128k_us", std::to_string(k128 * 1e6));
}

}  // namespace
}  // namespace ridgeline::engine
