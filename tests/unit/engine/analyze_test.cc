// Analyze(): golden decode step, phases, placement, PIM, efficiency and
// economy (suggestions: tests/unit/explore/suggestions_test.cc). Each
// expected number is derived in the comment next to it.
#include "ridgeline/engine/analyze.h"

#include <cmath>
#include <set>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "ridgeline/engine/model.h"
#include "test_hardware.h"

namespace ridgeline::engine {
namespace {

using testing::A100Like;
using testing::MakeScenario;

constexpr int kW = static_cast<int>(OperandClass::kWeights);
constexpr int kKv = static_cast<int>(OperandClass::kKvCache);
constexpr int kAct = static_cast<int>(OperandClass::kActivations);

NumberFormat Fmt(const char* name) { return ParseNumberFormat(name).value(); }

const OpResult* FindOp(const StepResult& s, OpKind kind,
                       std::string_view group = "") {
  for (const OpResult& op : s.ops) {
    if (op.kind == kind && op.layer_group == group) return &op;
  }
  return nullptr;
}

// Llama-2-7B, fp16 everything, batch 1, one decode step at KV 1024 (prompt
// 1023 + the token the prefill emitted).
Scenario Llama2DecodeAt1024() {
  Scenario s = MakeScenario("llama-2-7b", A100Like());
  s.precision = {Fmt("fp16"), Fmt("fp16"), Fmt("fp16")};
  s.workload = {1, 1023, 2};
  return s;
}

TEST(AnalyzeTest, Llama2_7bDecodeStepIsMemoryBoundAtRoofline) {
  absl::StatusOr<AnalysisResult> r = Analyze(Llama2DecodeAt1024());
  ASSERT_TRUE(r.ok()) << r.status();
  const StepResult& step = r->decode_first_step;
  EXPECT_EQ(step.kv_length, 1024);
  // Weights read: every layer weight once, 32 x (4 x 4096^2 attention +
  // 3 x 4096 x 11008 FFN + 2 x 4096 norms) = 6476.3 M, plus the untied LM
  // head 32000 x 4096 = 131.1 M, plus one embedding row: 6607.4 M params x
  // 2 B = 13.215 GB (the 262 MB of the embedding table are not read: one row).
  // KV read: 32 layers x 1024 tokens x (K+V) 2 x 32 heads x 128 x 2 B =
  // 0.537 GB. Activations add a few MB.
  // Total ~13.757 GB / 2039 GB/s = 6.747 ms.
  EXPECT_NEAR(step.totals.bytes, 13.757e9, 0.02e9);
  EXPECT_NEAR(step.totals.seconds, 13.757e9 / 2039e9, 0.01e-3);
  // The form: (13.5 GB of weights + 0.54 GB KV) / 2039 GB/s =
  // 6.886 ms; ours is 2% lower because the embedding table is not streamed.
  EXPECT_NEAR(step.totals.seconds, (13.5e9 + 0.54e9) / 2039e9,
              0.03 * (13.5e9 + 0.54e9) / 2039e9);
  // Memory-bound: FLOPs 2 x 6.607 G + attention 0.54 G = 13.8 GFLOP take
  // 44 us at 312 TFLOP/s, 150x less than the memory time.
  EXPECT_LT(step.totals.compute_seconds, step.totals.memory_seconds / 100);
  for (const OpResult& op : step.ops) {
    EXPECT_NE(op.bound, Bound::kCompute) << OpKindName(op.kind);
  }
  // Ridge point: 312e12 / 2039e9 = 153.0 FLOP/byte.
  EXPECT_NEAR(r->ridge_point, 153.0, 0.1);
  EXPECT_EQ(r->matmul_math, MathType::kFp16);
  EXPECT_TRUE(r->pure_roofline);
  EXPECT_TRUE(r->memory.fits);
}

TEST(AnalyzeTest, DecodeFlopsAreTwiceActiveParamsPlusAttention) {
  absl::StatusOr<AnalysisResult> r = Analyze(Llama2DecodeAt1024());
  ASSERT_TRUE(r.ok()) << r.status();
  // Matmul params touched per token: 6738.4 M total - 131.1 M embedding
  // (gathered, not multiplied) - 0.27 M norm weights = 6607.0 M -> 13.214
  // GFLOP. Attention: 32 layers x 32 heads x 1024 keys x (2x128 QK + 2x128
  // AV + 5 softmax) = 0.542 GFLOP. Elementwise ops add ~3 MFLOP.
  const ParameterCounts p = CountParameters(FindModel("llama-2-7b").value());
  const double matmul =
      2 * (p.active_per_token - p.embedding - 32 * 2 * 4096 - 4096);
  const double attention = 32.0 * 32 * 1024 * (2 * 128 + 2 * 128 + 5);
  EXPECT_NEAR(r->decode_first_step.totals.flops, matmul + attention, 5e6);
  const OpResult* fa = FindOp(r->decode_first_step, OpKind::kFlashAttention);
  ASSERT_NE(fa, nullptr);
  EXPECT_DOUBLE_EQ(fa->flops, attention);
  EXPECT_EQ(fa->layers, 32);
  EXPECT_EQ(fa->op_class, OpClass::kAttention);
}

TEST(AnalyzeTest, EveryDecodeStepIsEvaluatedAtItsOwnKvLength) {
  Scenario s = MakeScenario("llama-3-8b", A100Like());
  s.workload = {16, 1024, 128};
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->decode.steps, 127);  // the prefill emits token 1
  EXPECT_EQ(r->decode_first_step.kv_length, 1025);
  EXPECT_EQ(r->decode_last_step.kv_length, 1024 + 127);
  EXPECT_GT(r->tpot_last_seconds, r->tpot_first_seconds);
  EXPECT_DOUBLE_EQ(r->tpot_first_seconds, r->decode_first_step.totals.seconds);
  EXPECT_DOUBLE_EQ(r->tpot_last_seconds, r->decode_last_step.totals.seconds);
  // Only attention grows with the context, linearly: the mean step equals
  // the mean of first and last.
  EXPECT_NEAR(r->tpot_mean_seconds,
              (r->tpot_first_seconds + r->tpot_last_seconds) / 2,
              1e-9 * r->tpot_mean_seconds);
  EXPECT_NEAR(r->e2e_seconds, r->ttft_seconds + 127 * r->tpot_mean_seconds,
              1e-9);
  EXPECT_DOUBLE_EQ(r->decode_tokens_per_second_total,
                   16 / r->tpot_mean_seconds);
  EXPECT_DOUBLE_EQ(r->decode_tokens_per_second_per_sequence,
                   1 / r->tpot_mean_seconds);
  EXPECT_DOUBLE_EQ(r->prefill_tokens_per_second, 16 * 1024 / r->ttft_seconds);
  // Attention over all 127 steps: KV lengths 1025..1151 sum to
  // 127 x 1088 = 138176 keys; x 32 layers x 32 heads x 16 seqs x 517 FLOP.
  const OpResult* fa = FindOp(r->decode, OpKind::kFlashAttention);
  ASSERT_NE(fa, nullptr);
  EXPECT_NEAR(fa->flops, 138176.0 * 32 * 32 * 16 * 517, 1e3);
  // Prefill with the causal mask: 1024 x 1025 / 2 pairs per head.
  const OpResult* pf = FindOp(r->prefill, OpKind::kFlashAttention);
  ASSERT_NE(pf, nullptr);
  EXPECT_NEAR(pf->flops, 1024.0 * 1025 / 2 * 32 * 32 * 16 * 517, 1e3);
  // The 8B prefill of 16 k tokens is compute-bound on the matmuls.
  EXPECT_EQ(FindOp(r->prefill, OpKind::kFfnUpGate)->bound, Bound::kCompute);
  // The bottleneck is a decode op, with numbers in its sentence.
  EXPECT_EQ(r->bottleneck.phase, Phase::kDecode);
  EXPECT_NE(r->bottleneck.text.find("%"), std::string::npos);
}

TEST(AnalyzeTest, PrefillOnlyWhenOneTokenGenerated) {
  Scenario s = MakeScenario("llama-3-8b", A100Like());
  s.workload = {1, 512, 1};
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->decode.steps, 0);
  EXPECT_TRUE(r->decode.ops.empty());
  EXPECT_EQ(r->tpot_mean_seconds, 0);
  EXPECT_DOUBLE_EQ(r->e2e_seconds, r->ttft_seconds);
  EXPECT_EQ(r->bottleneck.phase, Phase::kPrefill);
  // The LM head runs for the last token of each sequence only: 2 x 4096 x
  // 128256 = 1.05 GFLOP at batch 1.
  EXPECT_DOUBLE_EQ(FindOp(r->prefill, OpKind::kLmHead)->flops,
                   2.0 * 4096 * 128256);
}

TEST(AnalyzeTest, CausalPrefillCountsHalfTheSquareAndOneLmHeadRowPerSeq) {
  // Llama-3-8B, batch 2, prompt 512: each sequence has 512 x 513 / 2 =
  // 131,328 causal (query, key) pairs per head; each pair costs 2 x 128 (QK)
  // + 2 x 128 (AV) + 5 (softmax) = 517 FLOP; 32 layers x 2 seqs x 32 heads:
  // 139,052,187,648 FLOP.
  Scenario s = MakeScenario("llama-3-8b", A100Like());
  s.workload = {2, 512, 1};
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  const OpResult* fa = FindOp(r->prefill, OpKind::kFlashAttention);
  ASSERT_NE(fa, nullptr);
  EXPECT_DOUBLE_EQ(fa->flops, 139052187648.0);
  // K and V are read once per layer and sequence (ideal tiling): 32 x 2 x
  // 512 keys x (2 x 8 heads x 128 x 2 B = 4096 B) = 134,217,728 B.
  EXPECT_DOUBLE_EQ(fa->traffic[kKv][0].read, 134217728.0);
  // LM head on the last token of each of the 2 sequences: 2 x 2 x 4096 x
  // 128256 = 2,101,346,304 FLOP (not 1024 rows).
  EXPECT_DOUBLE_EQ(FindOp(r->prefill, OpKind::kLmHead)->flops, 2101346304.0);
}

TEST(AnalyzeTest, WeightBytesFollowTheFormat) {
  // Llama-2-7B: 6.7384 G params x 16 / 8 / 4.125 (int4 + one fp16 scale per
  // 128) bits.
  const double params = CountParameters(FindModel("llama-2-7b").value()).total;
  EXPECT_NEAR(params, 6.7384e9, 0.0001e9);
  for (auto [fmt, bits] : {std::pair{"fp16", 16.0}, std::pair{"fp8", 8.0},
                           std::pair{"int4-g128", 4.125}}) {
    Scenario s = Llama2DecodeAt1024();
    s.precision.weights = Fmt(fmt);
    absl::StatusOr<AnalysisResult> r = Analyze(s);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_DOUBLE_EQ(r->memory.required_bytes[kW], params * bits / 8) << fmt;
  }
}

TEST(AnalyzeTest, KvBytesPerTokenGqaAndMla) {
  // Llama-3-8B (GQA 32/8): 32 layers x 2 x 8 x 128 x 2 B = 131072 B/token;
  // prompt 1000, generated 1 -> 1000 tokens at batch 2.
  Scenario s = MakeScenario("llama-3-8b", A100Like());
  s.workload = {2, 1000, 1};
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_DOUBLE_EQ(r->memory.required_bytes[kKv], 2 * 1000 * 131072.0);
  // Llama-2-7B (MHA) stores 4x that per token: 524288 B.
  s = MakeScenario("llama-2-7b", A100Like());
  s.workload = {1, 1000, 1};
  r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_DOUBLE_EQ(r->memory.required_bytes[kKv], 1000 * 524288.0);
  // DeepSeek-V2-Lite (MLA) stores the latent: 27 layers x (512 + 64) x 2 B =
  // 31104 B/token; prompt 100 + 11 generated - 1 = 110 tokens.
  s = MakeScenario("deepseek-v2-lite", A100Like());
  s.workload = {1, 100, 11};
  r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_DOUBLE_EQ(r->memory.required_bytes[kKv], 110 * 31104.0);
}

TEST(AnalyzeTest, SlidingWindowCapsKvRead) {
  // Mistral-7B-v0.1: every layer slides over 4096 tokens. At KV 8000 each
  // layer reads 4096 x 2 x 8 heads x 128 x 2 B = 16.8 MB: 32 layers =
  // 536.9 MB, not the 1048.6 MB of the full context.
  Scenario s = MakeScenario("mistral-7b", A100Like());
  s.workload = {1, 7999, 2};
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  const OpResult* fa = FindOp(r->decode_first_step, OpKind::kFlashAttention);
  ASSERT_NE(fa, nullptr);
  EXPECT_DOUBLE_EQ(fa->traffic[kKv][0].read, 32.0 * 4096 * 4096);
  // The stored cache is capped the same way: 4096 x 131072 B.
  EXPECT_DOUBLE_EQ(r->memory.required_bytes[kKv], 4096 * 131072.0);
}

TEST(AnalyzeTest, Gemma2AlternatesSlidingAndGlobalLayers) {
  // Gemma-2-9B: 42 layers, even ones slide over 4096 tokens.
  Scenario s = MakeScenario("gemma-2-9b", A100Like());
  s.workload = {1, 8191, 2};
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  const OpResult* sl =
      FindOp(r->decode_first_step, OpKind::kFlashAttention, "sliding");
  const OpResult* gl =
      FindOp(r->decode_first_step, OpKind::kFlashAttention, "global");
  ASSERT_NE(sl, nullptr);
  ASSERT_NE(gl, nullptr);
  EXPECT_EQ(sl->layers, 21);
  EXPECT_EQ(gl->layers, 21);
  // Same layer count, global reads 8192 keys and sliding 4096.
  EXPECT_DOUBLE_EQ(gl->flops, 2 * sl->flops);
  // Stored cache at 8191 + 1 = 8192 tokens, 2 x 8 heads x 256 x 2 B = 8192
  // B per layer and token: 21 global layers keep 8192 tokens, 21 sliding
  // ones 4096: 21 x 8192 x (8192 + 4096) = 2,113,929,216 B.
  EXPECT_DOUBLE_EQ(r->memory.required_bytes[kKv], 2113929216.0);
  // The first step's KV read is the same split: 21 x 8192 B x (8192 +
  // 4096) keys.
  EXPECT_DOUBLE_EQ(gl->traffic[kKv][0].read + sl->traffic[kKv][0].read,
                   2113929216.0);
}

TEST(AnalyzeTest, MoeReadsTouchedExpertsOnly) {
  // Mixtral-8x7B, top-2 of 8. One expert: 3 x 4096 x 14336 params x 2 B =
  // 352.3 MB per layer. Batch 1 touches 2 experts: 32 x 2 x 352.3 MB =
  // 22.55 GB; batch 256 touches 8 x (1 - 0.75^256) ~ 8: 90.2 GB.
  const double expert_bytes = 3.0 * 4096 * 14336 * 2;
  Scenario s = MakeScenario("mixtral-8x7b", A100Like());
  s.hardware.tiers[0].capacity_bytes = 1e12;
  s.workload = {1, 128, 2};
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  const OpResult* ex = FindOp(r->decode_first_step, OpKind::kMoeRoutedExperts);
  ASSERT_NE(ex, nullptr);
  EXPECT_NEAR(ex->traffic[kW][0].read, 32 * 2 * expert_bytes, 1e3);
  // FLOPs: 1 token x 2 experts x 2 x 3 x 4096 x 14336 + activation 5 x 14336
  // per expert, x 32 layers.
  EXPECT_NEAR(ex->flops, 32 * 2 * (2 * 3 * 4096.0 * 14336 + 5 * 14336), 1);
  s.workload.batch = 256;
  r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  ex = FindOp(r->decode_first_step, OpKind::kMoeRoutedExperts);
  EXPECT_NEAR(ex->traffic[kW][0].read, 32 * 8 * expert_bytes,
              1e-6 * 32 * 8 * expert_bytes);
}

TEST(AnalyzeTest, DeepSeekHasDenseFirstLayersAndMlaVariants) {
  Scenario s = MakeScenario("deepseek-v2-lite", A100Like());
  s.workload = {1, 256, 2};
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  // first_k_dense_replace = 1 of 27 layers.
  const OpResult* dense =
      FindOp(r->decode_first_step, OpKind::kFfnUpGate, "dense");
  const OpResult* moe =
      FindOp(r->decode_first_step, OpKind::kMoeRoutedExperts, "moe");
  ASSERT_NE(dense, nullptr);
  ASSERT_NE(moe, nullptr);
  EXPECT_EQ(dense->layers, 1);
  EXPECT_EQ(moe->layers, 26);
  EXPECT_NE(FindOp(r->decode_first_step, OpKind::kMoeSharedExperts, "moe"),
            nullptr);
  EXPECT_EQ(FindOp(r->decode_first_step, OpKind::kMlaKvUp, "moe"), nullptr);
  // Absorbed attention over the latent: per key 2 x (512 + 64) QK + 2 x 512
  // AV + 5 softmax = 2181 FLOP per head; 16 heads, 257 keys, 26 layers.
  const OpResult* fa =
      FindOp(r->decode_first_step, OpKind::kFlashAttention, "moe");
  ASSERT_NE(fa, nullptr);
  EXPECT_DOUBLE_EQ(fa->flops, 26.0 * 16 * 257 * 2181);

  s.options.mla_absorbed = false;
  absl::StatusOr<AnalysisResult> na = Analyze(s);
  ASSERT_TRUE(na.ok()) << na.status();
  const OpResult* up = FindOp(na->decode_first_step, OpKind::kMlaKvUp, "moe");
  ASSERT_NE(up, nullptr);
  // Up-projects 257 cached latents: 2 x 257 x 512 x 16 x (128 + 128) per layer.
  EXPECT_DOUBLE_EQ(up->flops, 26 * 2.0 * 257 * 512 * 16 * 256);
}

TEST(AnalyzeTest, MlaLatentNormsAreOps) {
  // DeepSeek-V2-Lite: per layer 2 RMSNorms over hidden 2048 plus
  // kv_a_layernorm over the 512-wide latent (q_lora_rank 0: no q norm) =
  // 4608 weights and 3 kernels. Batch 1 decode, 26 MoE layers: weights
  // 26 x 4608 x 2 B = 239,616 B; FLOPs 4 per element x 4608 x 26 = 479,232.
  Scenario s = MakeScenario("deepseek-v2-lite", A100Like());
  s.workload = {1, 256, 2};
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  const OpResult* norm = FindOp(r->decode_first_step, OpKind::kNorm, "moe");
  ASSERT_NE(norm, nullptr);
  EXPECT_DOUBLE_EQ(norm->traffic[kW][0].read, 26.0 * 4608 * 2);
  EXPECT_DOUBLE_EQ(norm->flops, 4.0 * 4608 * 26);
}

TEST(AnalyzeTest, BatchOneDecodeReadsEveryActiveWeightOnce) {
  // One decode token reads each weight it uses exactly once: the active
  // parameters, less the embedding table (one 2-byte row of `hidden` is
  // gathered), plus the tied LM head when the table doubles as it. bf16 =
  // 2 B each. Llama-2-7B: (6,738,415,616 - 32000 x 4096 + 4096) x 2 B =
  // 6,607,347,712 x 2 = 13,214,695,424 B. For MoE models the active count
  // holds the top-k routed experts (E(1-(1-k/E)^1) = k) and the shared ones;
  // for MLA both the absorbed and the materialised forms read the same weights.
  for (const ModelConfig& m : BuiltinModels()) {
    for (bool absorbed : {true, false}) {
      Scenario s = MakeScenario(m.id, A100Like());
      s.hardware.tiers[0].capacity_bytes = 2e12;  // everything in one tier
      s.options.mla_absorbed = absorbed;
      s.workload = {1, 100, 2};
      absl::StatusOr<AnalysisResult> r = Analyze(s);
      ASSERT_TRUE(r.ok()) << m.id << ": " << r.status();
      double read = 0;
      for (const OpResult& op : r->decode_first_step.ops) {
        read += op.traffic[kW][0].read;
      }
      const ParameterCounts p = CountParameters(m);
      const double expected =
          2 * (p.active_per_token - p.embedding + m.hidden_size +
               (m.tie_word_embeddings ? p.embedding : 0));
      EXPECT_NEAR(read, expected, 1e-12 * expected) << m.id << " " << absorbed;
      if (m.id == "llama-2-7b") {
        EXPECT_DOUBLE_EQ(read, 13214695424.0);
      }
    }
  }
}

TEST(AnalyzeTest, MlaAbsorbedAndMaterialisedReadTheSameCache) {
  // DeepSeek-V2-Lite (16 heads, kv_lora_rank 512, rope 64, nope 128, v 128,
  // no q LoRA), batch 1, first decode step at 257 keys, 26 MoE layers, bf16.
  Scenario s = MakeScenario("deepseek-v2-lite", A100Like());
  s.workload = {1, 256, 2};
  absl::StatusOr<AnalysisResult> ab = Analyze(s);
  s.options.mla_absorbed = false;
  absl::StatusOr<AnalysisResult> na = Analyze(s);
  ASSERT_TRUE(ab.ok() && na.ok());
  const StepResult& a = ab->decode_first_step;
  const StepResult& n = na->decode_first_step;
  // Absorbed: the fused kernel reads latent + RoPE key once per key for all
  // heads: 26 x 257 x (512 + 64) x 2 B = 7,697,664 B.
  EXPECT_DOUBLE_EQ(
      FindOp(a, OpKind::kFlashAttention, "moe")->traffic[kKv][0].read,
      7697664.0);
  // Materialised: kv_up reads the latents (26 x 257 x 512 x 2 = 6,842,368 B)
  // and attention the RoPE keys (26 x 257 x 64 x 2 = 855,296 B): same total.
  EXPECT_DOUBLE_EQ(FindOp(n, OpKind::kMlaKvUp, "moe")->traffic[kKv][0].read,
                   6842368.0);
  EXPECT_DOUBLE_EQ(
      FindOp(n, OpKind::kFlashAttention, "moe")->traffic[kKv][0].read,
      855296.0);
  // Materialised attention runs per head over 128 + 64 (QK) and 128 (AV):
  // 16 x 257 x (2 x 192 + 2 x 128 + 5) = 2,652,240 FLOP per layer.
  EXPECT_DOUBLE_EQ(FindOp(n, OpKind::kFlashAttention, "moe")->flops,
                   26 * 2652240.0);
  // Absorbed q_proj also multiplies by W_UK (16 x 128 x 512): 2 x (2048 x
  // 3072 + 1,048,576) = 14,680,064 FLOP per layer against 12,582,912; the
  // output side adds W_UV: 2 x (16 x 128 x 2048 + 16 x 512 x 128) =
  // 10,485,760 against 8,388,608.
  EXPECT_DOUBLE_EQ(FindOp(a, OpKind::kQProjection, "moe")->flops,
                   26 * 14680064.0);
  EXPECT_DOUBLE_EQ(FindOp(n, OpKind::kQProjection, "moe")->flops,
                   26 * 12582912.0);
  EXPECT_DOUBLE_EQ(FindOp(a, OpKind::kOutProjection, "moe")->flops,
                   26 * 10485760.0);
  EXPECT_DOUBLE_EQ(FindOp(n, OpKind::kOutProjection, "moe")->flops,
                   26 * 8388608.0);
  // One step writes one token's latent + RoPE key per layer: 27 x 576 x 2 B.
  double written = 0;
  for (const OpResult& op : a.ops) written += op.traffic[kKv][0].write;
  EXPECT_DOUBLE_EQ(written, 27 * 576 * 2.0);
}

TEST(AnalyzeTest, MaterialisedMlaUpProjectsOnlyTheWindow) {
  // DeepSeek-V2-Lite given a 128-token window on every layer (an inline
  // model; no published MLA model has one): decode at 257 keys reads 128.
  // kv_up per MoE layer: 2 x 128 x 512 x 16 x (128 + 128) = 536,870,912
  // FLOP, and 128 latents x 512 x 2 B = 131,072 B, as attention's window.
  Scenario s = MakeScenario("deepseek-v2-lite", A100Like());
  s.model.sliding_layers = SlidingLayers::kAll;
  s.model.sliding_window = 128;
  s.options.mla_absorbed = false;
  s.workload = {1, 256, 2};
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  const OpResult* up = FindOp(r->decode_first_step, OpKind::kMlaKvUp, "moe");
  ASSERT_NE(up, nullptr);
  EXPECT_DOUBLE_EQ(up->flops, 26 * 536870912.0);
  EXPECT_DOUBLE_EQ(up->traffic[kKv][0].read, 26 * 131072.0);
}

TEST(AnalyzeTest, UnfusedAttentionHasThreeOpsAndMoreTraffic) {
  Scenario s = Llama2DecodeAt1024();
  absl::StatusOr<AnalysisResult> fused = Analyze(s);
  s.options.flash_attention = false;
  absl::StatusOr<AnalysisResult> unfused = Analyze(s);
  ASSERT_TRUE(fused.ok() && unfused.ok());
  const StepResult& u = unfused->decode_first_step;
  ASSERT_NE(FindOp(u, OpKind::kQk), nullptr);
  ASSERT_NE(FindOp(u, OpKind::kSoftmax), nullptr);
  ASSERT_NE(FindOp(u, OpKind::kAttentionV), nullptr);
  EXPECT_EQ(FindOp(u, OpKind::kFlashAttention), nullptr);
  const double split = FindOp(u, OpKind::kQk)->flops +
                       FindOp(u, OpKind::kSoftmax)->flops +
                       FindOp(u, OpKind::kAttentionV)->flops;
  EXPECT_DOUBLE_EQ(
      split, FindOp(fused->decode_first_step, OpKind::kFlashAttention)->flops);
  // Scores written, read, written, read: 4 x 32 layers x 32 heads x 1024 x
  // 2 B = 8.4 MB more.
  EXPECT_NEAR(u.totals.bytes - fused->decode_first_step.totals.bytes,
              4.0 * 32 * 32 * 1024 * 2, 1);
}

// Two tiers: 10 GB at 2000 GB/s, then 100 GB at 64 GB/s (host over PCIe).
Hardware TwoTier() {
  Hardware hw = A100Like();
  hw.tiers[0].capacity_bytes = 10e9;
  hw.tiers[0].read_bandwidth_bytes_per_second = 2000e9;
  hw.tiers[0].write_bandwidth_bytes_per_second = 2000e9;
  MemoryTier host;
  host.name = "host";
  host.kind = TierKind::kHostLink;
  host.capacity_bytes = 100e9;
  host.read_bandwidth_bytes_per_second = 64e9;
  host.write_bandwidth_bytes_per_second = 64e9;
  hw.tiers.push_back(host);
  return hw;
}

TEST(AnalyzeTest, PlacementSpillsToTheSlowerTier) {
  Scenario s = MakeScenario("llama-2-7b", TwoTier());
  s.workload = {1, 1023, 2};
  s.options.suggestions = true;
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  // 13.477 GB of bf16 weights: 10 GB in tier 0, 3.477 GB in tier 1; the KV
  // cache (0.54 GB) finds no room in tier 0 and goes to tier 1.
  const double w = r->memory.required_bytes[kW];
  EXPECT_TRUE(r->memory.fits);
  EXPECT_DOUBLE_EQ(r->memory.tiers[0].bytes[kW], 10e9);
  EXPECT_NEAR(r->memory.tiers[1].bytes[kW], w - 10e9, 1);
  EXPECT_DOUBLE_EQ(r->memory.tiers[0].bytes[kKv], 0);
  // Weight traffic splits 10 : 3.477; time = 13.215 GB x (0.742 / 2000 +
  // 0.258 / 64 GB/s) + 0.537 GB / 64 GB/s = 4.90 + 53.3 + 8.4 ms = 66.6 ms.
  const OpResult* up = FindOp(r->decode_first_step, OpKind::kFfnUpGate);
  EXPECT_NEAR(up->traffic[kW][0].read / up->traffic[kW][1].read,
              10e9 / (w - 10e9), 1e-9);
  EXPECT_NEAR(r->decode_first_step.totals.seconds, 66.6e-3, 0.3e-3);
  // "fits", but not on the device: where each operand spilled, said in the
  // memory section and as a warning. Weights 13.477 - 10 = 3.477 GB of
  // 13.477 (25.8%), the whole KV cache (1024 tokens x 524,288 B = 0.537 GB).
  EXPECT_EQ(r->memory.spilled.rfind(
                "weights 3.5 GB of 13.5 GB (25.8%) in host (64.0 GB/s); "
                "kv_cache 0.5 GB of 0.5 GB (100.0%) in host (64.0 GB/s)",
                0),
            0u)
      << r->memory.spilled;
  bool warned = false;
  for (const std::string& w : r->warnings) {
    warned = warned || w.find(r->memory.spilled) != std::string::npos;
  }
  EXPECT_TRUE(warned);
  // Suggestions are explorations (tests/unit/explore/suggestions_test.cc):
  // the engine adds none, whatever options.suggestions says.
  EXPECT_TRUE(r->suggestions.empty());
}

TEST(AnalyzeTest, PinsForceATier) {
  Scenario s = MakeScenario("llama-3.2-1b", TwoTier());
  s.workload = {1, 100, 2};
  s.pins.tier[kKv] = 1;
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->memory.tiers[0].bytes[kKv], 0);
  EXPECT_GT(r->memory.tiers[1].bytes[kKv], 0);
  EXPECT_GT(r->memory.tiers[0].bytes[kW], 0);
}

TEST(AnalyzeTest, APinnedClassIsPlacedBeforeUnpinnedOnesFillItsTier) {
  // KV pinned to the 10 GB fast tier; the weights (13.48 GB) are not
  // pinned and may spill. KV = 32 layers x 2 x 32 heads x 128 x 2 B =
  // 524,288 B/token x (1023 prompt + 1 decode step) = 536,870,912 B. It
  // goes in first; the weights fill the other 10e9 - 536,870,912 =
  // 9,463,129,088 B of tier 0 and spill the rest. (Placing the weights first
  // left the pin no room: "does not fit", with a valid placement at hand.)
  Scenario s = MakeScenario("llama-2-7b", TwoTier());
  s.workload = {1, 1023, 2};
  s.pins.tier[kKv] = 0;
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->memory.fits) << r->memory.not_fitting;
  EXPECT_DOUBLE_EQ(r->memory.required_bytes[kKv], 536870912.0);
  EXPECT_DOUBLE_EQ(r->memory.tiers[0].bytes[kKv], 536870912.0);
  EXPECT_DOUBLE_EQ(r->memory.tiers[0].bytes[kW], 10e9 - 536870912.0);
  EXPECT_NEAR(r->memory.tiers[1].bytes[kW],
              r->memory.required_bytes[kW] - (10e9 - 536870912.0), 1);
  // A pin that truly does not fit is still a result naming it.
  s.pins.tier[kKv] = 0;
  s.workload = {64, 1023, 2};  // 64 x 0.537 GB = 34.4 GB > 10 GB
  r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->memory.fits);
  EXPECT_NE(r->memory.not_fitting.find("kv_cache pinned to tier 0"),
            std::string::npos)
      << r->memory.not_fitting;
}

TEST(AnalyzeTest, DoesNotFitIsAResult) {
  Scenario s = Llama2DecodeAt1024();
  s.hardware.tiers[0].capacity_bytes = 8e9;
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->memory.fits);
  // 6.7384 G params x 2 B = 13.5 GB against 8 GB.
  EXPECT_NE(r->memory.not_fitting.find("weights need 13.5 GB; 8.0 GB free"),
            std::string::npos)
      << r->memory.not_fitting;
  EXPECT_GT(r->e2e_seconds, 0);
  // The tier never shows more than it holds: 8 GB of weights in it and
  // 13.4768 - 8 = 5.4768 GB missing; the KV cache (1024 x 524,288 B) and
  // the activations find no room either and are missing too.
  const TierUsage& t = r->memory.tiers[0];
  EXPECT_LE(t.used_bytes, t.capacity_bytes);
  EXPECT_DOUBLE_EQ(t.bytes[kW], 8e9);
  EXPECT_NEAR(t.missing_bytes[kW], r->memory.required_bytes[kW] - 8e9, 1);
  EXPECT_DOUBLE_EQ(t.missing_bytes[kKv], 536870912.0);
  EXPECT_NE(r->memory.not_fitting.find("5.5 GB missing"), std::string::npos)
      << r->memory.not_fitting;
}

TEST(AnalyzeTest, PimRunsInMemoryOnlyWhenFaster) {
  // HBM-PIM style: 8x internal bandwidth, fp16 compute inside the tier.
  Scenario s = Llama2DecodeAt1024();
  NearMemoryCompute nmc;
  nmc.internal_bandwidth_bytes_per_second = 8 * 2039e9;
  nmc.peak_ops_per_second[static_cast<int>(MathType::kFp16)] = 100e12;
  s.hardware.tiers[0].near_memory_compute = nmc;
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  const OpResult* up = FindOp(r->decode_first_step, OpKind::kFfnUpGate);
  EXPECT_EQ(up->executed_in_tier, 0);
  // 32 x 2 x 4096 x 11008 x 2 B = 5.77 GB read at 16.3 TB/s.
  EXPECT_NEAR(up->memory_seconds, 32 * 2.0 * 4096 * 11008 * 2 / (8 * 2039e9),
              1e-6);
  // The prefill matmuls are compute-bound: they stay on the compute unit.
  s.workload = {8, 1024, 2};
  absl::StatusOr<AnalysisResult> p = Analyze(s);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(FindOp(p->prefill, OpKind::kFfnUpGate)->executed_in_tier, -1);

  // A PIM unit so slow that its compute roof exceeds the CU's memory time:
  // 1 GFLOP/s takes 2.9 s for 2.9 GFLOP of FFN up: never chosen.
  s = Llama2DecodeAt1024();
  nmc.peak_ops_per_second[static_cast<int>(MathType::kFp16)] = 1e9;
  s.hardware.tiers[0].near_memory_compute = nmc;
  r = Analyze(s);
  ASSERT_TRUE(r.ok());
  for (const OpResult& op : r->decode_first_step.ops) {
    EXPECT_EQ(op.executed_in_tier, -1) << OpKindName(op.kind);
  }
}

TEST(AnalyzeTest, PimRunsComputeBoundOpsInMemoryWhenFaster) {
  // Near-memory fp16 at 1000 TFLOP/s beats the compute unit's 312: the
  // compute-bound prefill FFN up+gate (8 x 1024 tokens: 2 x 8192 x 4096 x
  // 2 x 11008 x 32 layers = 4.728e13 FLOP: 151.5 ms at 312 T, 47.3 ms at
  // 1000 T) runs in the tier.
  Scenario s = Llama2DecodeAt1024();
  s.workload = {8, 1024, 2};
  NearMemoryCompute nmc;
  nmc.internal_bandwidth_bytes_per_second = 8 * 2039e9;
  nmc.peak_ops_per_second[static_cast<int>(MathType::kFp16)] = 1000e12;
  s.hardware.tiers[0].near_memory_compute = nmc;
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  const OpResult* up = FindOp(r->prefill, OpKind::kFfnUpGate);
  EXPECT_EQ(up->executed_in_tier, 0);
  EXPECT_NEAR(up->flops, 2.0 * 8192 * 4096 * 2 * 11008 * 32, 1e6);
  EXPECT_NEAR(up->compute_seconds, 2.0 * 8192 * 4096 * 2 * 11008 * 32 / 1000e12,
              1e-9);
}

// Every analysis reports the model's size: Llama-2-7B has 6.7384 G
// parameters (32 x 202.4 M per layer + 2 x 131.1 M embedding and untied LM
// head + norms), of which the embedding and the LM head are 32000 x 4096 =
// 131,072,000 each; dense, so every parameter is active per token.
TEST(AnalyzeTest, ReportsParameterCounts) {
  absl::StatusOr<AnalysisResult> r = Analyze(Llama2DecodeAt1024());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NEAR(r->parameters.total, 6.7384e9, 0.0001e9);
  EXPECT_EQ(r->parameters.active_per_token, r->parameters.total);
  EXPECT_EQ(r->parameters.embedding, 131072000);
  EXPECT_EQ(r->parameters.lm_head, 131072000);
}

// Chunked prefill, Llama-2-7B fp16, prompt 4096 in chunks of 1024 (4
// steps). KV per token: 32 layers x 2 x 32 heads x 128 x 2 B = 524,288 B.
// - Causal attention pairs are the same either way: 4 x 1024^2 x (0+1+2+3)/4
//   ... = sum_k (1024 x 1024k + 1024 x 1025 / 2) = 8,390,656 = 4096 x 4097 / 2,
//   so the flash-attention FLOPs are unchanged.
// - Its KV reads grow by the earlier chunks' KV each later chunk re-reads:
//   (0 + 1024 + 2048 + 3072) tokens x 524,288 B = 3,221,225,472 B.
// - Every other op keeps the whole prompt's FLOPs; each chunk is a forward
//   pass, so the decoder layers' weights are read 4 times (the Q projection:
//   32 layers x 4096 x 4096 x 2 B = 1,073,741,824 B per pass, 3 more passes
//   = 3,221,225,472 B more), the LM head (logits of the last chunk only)
//   once.
// - It stays compute-bound (~4.4 TFLOP at 312 TFLOP/s = 14 ms vs 5.4 GB +
//   3 x 13.2 GB of layer weights at 2039 GB/s = 22 ms, summed; per op the
//   1024-token matmuls are far above the 153 FLOP/B ridge), so TTFT changes
//   by 3 more per-step overheads and the memory-bound RMSNorms' weights read
//   3 more times: 3 x 2 norms x 32 layers x 4096 x 2 B = 1,572,864 B at
//   2039 GB/s = 0.771 us.
TEST(AnalyzeTest, ChunkedPrefillReReadsKvAndLayerWeightsPerChunk) {
  Scenario s = Llama2DecodeAt1024();
  s.workload = {1, 4096, 1};
  s.efficiency.per_step_overhead_seconds = 1e-3;
  absl::StatusOr<AnalysisResult> whole = Analyze(s);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->prefill.steps, 1);
  s.options.prefill_chunk_tokens = 1024;
  absl::StatusOr<AnalysisResult> chunked = Analyze(s);
  ASSERT_TRUE(chunked.ok()) << chunked.status();
  EXPECT_EQ(chunked->prefill.steps, 4);
  const OpResult* aw = FindOp(whole->prefill, OpKind::kFlashAttention);
  const OpResult* ac = FindOp(chunked->prefill, OpKind::kFlashAttention);
  EXPECT_DOUBLE_EQ(ac->flops, aw->flops);
  EXPECT_NEAR(ac->bytes - aw->bytes, 3221225472.0, 1);
  EXPECT_EQ(ac->bound, Bound::kCompute);
  EXPECT_DOUBLE_EQ(ac->seconds, aw->seconds);
  for (OpKind k : {OpKind::kQProjection, OpKind::kFfnUpGate, OpKind::kLmHead}) {
    EXPECT_DOUBLE_EQ(FindOp(chunked->prefill, k)->flops,
                     FindOp(whole->prefill, k)->flops);
  }
  EXPECT_NEAR(FindOp(chunked->prefill, OpKind::kQProjection)->bytes -
                  FindOp(whole->prefill, OpKind::kQProjection)->bytes,
              3221225472.0, 1);
  EXPECT_DOUBLE_EQ(FindOp(chunked->prefill, OpKind::kLmHead)->bytes,
                   FindOp(whole->prefill, OpKind::kLmHead)->bytes);
  EXPECT_NEAR(chunked->ttft_seconds - whole->ttft_seconds,
              3e-3 + 1572864.0 / 2039e9, 1e-12);
  // The activation footprint is the largest chunk's, not the prompt's.
  EXPECT_LT(chunked->memory.required_bytes[kAct],
            whole->memory.required_bytes[kAct]);
}

// Default: the whole prompt when it fits, else the runtime's 2048-token
// chunk. Batch 8, prompt 4096, unfused attention. The peak activation op is
// the softmax (scores read + probabilities written, causal pairs only) plus
// the residual stream:
//   whole: 2 x 8,390,656 pairs (4096 x 4097 / 2) x 8 x 32 heads x 2 B
//          + 8 x 4096 x 4096 x 2 B = 8,592,031,744 + 268,435,456
//          = 8,860,467,200 B;
//   last 2048-token chunk (KV 4096): pairs 2048 x 2048 + 2048 x 2049 / 2 =
//          6,292,480: 2 x 6,292,480 x 512 + 8 x 2048 x 4096 x 2
//          = 6,443,499,520 + 134,217,728 = 6,577,717,248 B.
// Weights 6.7384 G x 2 B = 13.48 GB and KV 8 x 4097 x 524,288 B = 17.18 GB:
// in 38 GB the whole prompt (39.52 GB) does not fit, chunks (37.24 GB) do.
TEST(AnalyzeTest, PrefillChunksByDefaultOnlyWhenTheWholePromptDoesNotFit) {
  Scenario s = Llama2DecodeAt1024();
  s.workload = {8, 4096, 2};
  s.options.flash_attention = false;
  absl::StatusOr<AnalysisResult> roomy = Analyze(s);
  ASSERT_TRUE(roomy.ok()) << roomy.status();
  EXPECT_TRUE(roomy->memory.fits);
  EXPECT_EQ(roomy->prefill.steps, 1);
  s.hardware.tiers[0].capacity_bytes = 38e9;
  absl::StatusOr<AnalysisResult> tight = Analyze(s);
  ASSERT_TRUE(tight.ok()) << tight.status();
  EXPECT_TRUE(tight->memory.fits) << tight->memory.not_fitting;
  EXPECT_EQ(tight->prefill.steps, 2);
  EXPECT_DOUBLE_EQ(roomy->memory.required_bytes[kAct], 8860467200.0);
  EXPECT_DOUBLE_EQ(tight->memory.required_bytes[kAct], 6577717248.0);
}

// A compute-bound prefill GEMM (Llama-2-7B ffn_down at 1,023 tokens: 1,023
// FLOP per weight byte pair, far above the A100-like ridge of 153) under a
// compute eta of 0.5: its compute time follows the part's power per unit of
// peak and the cost of dequantising its weights.
TEST(AnalyzeTest, PowerLimitedComputeAndDequantisedWeights) {
  Scenario s = MakeScenario("llama-2-7b", A100Like());
  s.precision = {Fmt("fp16"), Fmt("fp16"), Fmt("fp16")};
  s.workload = {1, 1023, 1};
  s.efficiency.compute = {0.5, 0.5, 0.5, 0.5};
  s.efficiency.profile_name = "test-profile";
  auto down_seconds = [](const Scenario& x) {
    absl::StatusOr<AnalysisResult> r = Analyze(x);
    EXPECT_TRUE(r.ok()) << r.status();
    const OpResult* op = r.ok() ? FindOp(r->prefill, OpKind::kFfnDown) : nullptr;
    EXPECT_NE(op, nullptr);
    return op != nullptr ? op->compute_seconds : 0.0;
  };
  const double plain = down_seconds(s);
  // ffn_down: 2 x 1023 x 11008 x 4096 x 32 layers = 2.9518e12 FLOP at
  // 312 TFLOP/s x 0.5.
  EXPECT_NEAR(plain, 2.0 * 1023 * 11008 * 4096 * 32 / (312e12 * 0.5), 1e-12);
  // An exponent without a published TDP changes nothing.
  s.efficiency.compute_power_exponent = 0.5;
  EXPECT_DOUBLE_EQ(down_seconds(s), plain);
  // 400 W over 312 TFLOP/s = 1.28205 W per peak TFLOP/s; exponent 0.5:
  // eta 0.5 x sqrt(1.28205) = 0.5 x 1.13228 = 0.56614, so the time is
  // plain / 1.13228.
  s.hardware.tdp_watts = 400;
  EXPECT_NEAR(down_seconds(s), plain / std::sqrt(400.0 / 312), 1e-12);
  // 100 W (0.32051 W per TFLOP/s): eta 0.5 x sqrt(0.32051) = 0.28307.
  s.hardware.tdp_watts = 100;
  EXPECT_NEAR(down_seconds(s), plain / std::sqrt(100.0 / 312), 1e-12);
  // Never above the peak: eta 0.9 x 1.28205 (exponent 1) = 1.154 -> 1.
  s.hardware.tdp_watts = 400;
  s.efficiency.compute_power_exponent = 1;
  s.efficiency.compute = {0.9, 0.9, 0.9, 0.9};
  EXPECT_NEAR(down_seconds(s), 2.0 * 1023 * 11008 * 4096 * 32 / 312e12, 1e-12);
  // The pure roofline ignores it; an exponent above 1 is refused by name.
  Scenario pure = s;
  pure.options.pure_roofline = true;
  EXPECT_NEAR(down_seconds(pure), 2.0 * 1023 * 11008 * 4096 * 32 / 312e12, 1e-12);
  s.efficiency.compute_power_exponent = 1.5;
  EXPECT_NE(std::string(Analyze(s).status().message())
                .find("efficiency.compute_power_exponent"),
            std::string::npos)
      << Analyze(s).status();

  // Dequantised weights (gguf-q4_0: no native math, so the GEMM runs in the
  // fp16 activations' math) at a share of 0.8: plain / 0.8. Native fp16
  // weights ignore the share; a share per format wins over it.
  Scenario q = MakeScenario("llama-2-7b", A100Like());
  q.precision = {Fmt("fp16"), Fmt("fp16"), Fmt("fp16")};
  q.workload = {1, 1023, 1};
  q.efficiency.compute = {0.5, 0.5, 0.5, 0.5};
  q.efficiency.profile_name = "test-profile";
  q.efficiency.dequantized_compute_share = 0.8;
  EXPECT_DOUBLE_EQ(down_seconds(q), plain);
  q.precision.weights = Fmt("gguf-q4_0");
  EXPECT_NEAR(down_seconds(q), plain / 0.8, 1e-12);
  q.efficiency.dequantized_compute_share_by_format["gguf-q4_0"] = 0.5;
  q.efficiency.dequantized_compute_share_by_format["gguf-q4_k_m"] = 0.25;
  EXPECT_NEAR(down_seconds(q), plain / 0.5, 1e-12);
  // Attention carries no weights: unchanged.
  absl::StatusOr<AnalysisResult> with_share = Analyze(q);
  q.efficiency.dequantized_compute_share_by_format.clear();
  q.efficiency.dequantized_compute_share = 1;
  absl::StatusOr<AnalysisResult> without = Analyze(q);
  ASSERT_TRUE(with_share.ok() && without.ok());
  EXPECT_DOUBLE_EQ(FindOp(with_share->prefill, OpKind::kFlashAttention)->seconds,
                   FindOp(without->prefill, OpKind::kFlashAttention)->seconds);
  q.efficiency.dequantized_compute_share_by_format["gguf-q4_0"] = 0;
  EXPECT_NE(std::string(Analyze(q).status().message())
                .find("efficiency.dequantized_compute_share_by_format.gguf-q4_0"),
            std::string::npos)
      << Analyze(q).status();
}

// Inline ECC (MemoryTier::inline_ecc_share): a profile fitted net of it
// (Efficiency::inline_ecc) moves 1/15 byte of check bits per byte of data
// on the tier; the bound and other profiles keep the raw rate.
TEST(AnalyzeTest, InlineEccSlowsPredictedTrafficNotTheBound) {
  Scenario s = MakeScenario("llama-2-7b", A100Like());
  s.precision = {Fmt("fp16"), Fmt("fp16"), Fmt("fp16")};
  s.workload = {1, 128, 16};
  s.efficiency.memory = {0.8, 0.8, 0.8, 0.8};
  s.efficiency.profile_name = "test-profile";
  s.hardware.tiers[0].inline_ecc_share = 1.0 / 16;
  auto down = [](const Scenario& x) {
    absl::StatusOr<AnalysisResult> r = Analyze(x);
    EXPECT_TRUE(r.ok()) << r.status();
    const OpResult* op = r.ok() ? FindOp(r->decode, OpKind::kFfnDown) : nullptr;
    EXPECT_NE(op, nullptr);
    return op != nullptr ? *op : OpResult{};
  };
  // Not fitted net of ECC: the op's bytes at 2039 GB/s x 0.8.
  const OpResult raw = down(s);
  EXPECT_NEAR(raw.memory_seconds, raw.bytes / (2039e9 * 0.8), 1e-15);
  // Fitted net of it: the same bytes at 2039 GB/s x 15/16 x 0.8, i.e.
  // 16/15 of the time.
  s.efficiency.inline_ecc = true;
  const OpResult ecc = down(s);
  EXPECT_DOUBLE_EQ(ecc.bytes, raw.bytes);  // check bits are not data
  EXPECT_NEAR(ecc.memory_seconds, raw.bytes / (2039e9 * 15.0 / 16 * 0.8), 1e-15);
  EXPECT_NEAR(ecc.memory_seconds / raw.memory_seconds, 16.0 / 15, 1e-12);
  // The bound keeps the raw rate (ECC can be turned off).
  Scenario pure = s;
  pure.options.pure_roofline = true;
  EXPECT_NEAR(down(pure).memory_seconds, raw.bytes / 2039e9, 1e-15);
  // A tier without a share is unchanged under the same profile.
  Scenario no_share = s;
  no_share.hardware.tiers[0].inline_ecc_share = 0;
  EXPECT_DOUBLE_EQ(down(no_share).memory_seconds, raw.memory_seconds);
  // A share beyond a half is refused by its path.
  s.hardware.tiers[0].inline_ecc_share = 0.6;
  EXPECT_NE(std::string(Analyze(s).status().message())
                .find("hardware.tiers[0].inline_ecc_share"),
            std::string::npos)
      << Analyze(s).status();
}

// Capacity under inline ECC: the fits check keeps the physical capacity (ECC
// can be turned off), and warns when the bytes pass the (1 - share) usable
// with ECC on.
TEST(AnalyzeTest, InlineEccWarnsWhenTheAnswerNeedsEccOff) {
  Scenario s = MakeScenario("llama-2-7b", A100Like());
  s.precision = {Fmt("fp16"), Fmt("fp16"), Fmt("fp16")};
  s.workload = {1, 128, 16};
  s.hardware.tiers[0].inline_ecc_share = 1.0 / 16;
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  const double used = r->memory.tiers[0].used_bytes;
  ASSERT_GT(used, 0);
  EXPECT_TRUE(r->warnings.empty());  // 80 GB, 13.5 GB of weights: room
  // Capacity = used / 0.96: 96 % full, past the 15/16 = 93.75 % usable.
  s.hardware.tiers[0].capacity_bytes = used / 0.96;
  r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->memory.fits);
  EXPECT_DOUBLE_EQ(r->memory.tiers[0].used_bytes, used);  // all still there
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("fits only with ECC turned off"),
            std::string::npos)
      << r->warnings[0];
  // Capacity = used / 0.9: 90 % full, inside the 93.75 %: no warning; nor
  // at 96 % on a tier without a share.
  s.hardware.tiers[0].capacity_bytes = used / 0.9;
  r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->warnings.empty()) << r->warnings[0];
  s.hardware.tiers[0].capacity_bytes = used / 0.96;
  s.hardware.tiers[0].inline_ecc_share = 0;
  r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->warnings.empty()) << r->warnings[0];
  // What does not fit at all is not told it fits with ECC off: at half
  // the bytes' capacity, with the share, fits is false and no ECC warning.
  s.hardware.tiers[0].inline_ecc_share = 1.0 / 16;
  s.hardware.tiers[0].capacity_bytes = used / 2;  // its one tier: no spill
  r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->memory.fits);
  for (const std::string& w : r->warnings) {
    EXPECT_EQ(w.find("ECC"), std::string::npos) << w;
  }
}

TEST(AnalyzeTest, EfficiencyAndOverheads) {
  Scenario s = Llama2DecodeAt1024();
  absl::StatusOr<AnalysisResult> base = Analyze(s);
  ASSERT_TRUE(base.ok());
  // Memory efficiency 0.5 everywhere: a memory-bound step takes twice as long.
  s.efficiency.memory = {0.5, 0.5, 0.5, 0.5};
  absl::StatusOr<AnalysisResult> half = Analyze(s);
  ASSERT_TRUE(half.ok());
  EXPECT_NEAR(half->tpot_mean_seconds, 2 * base->tpot_mean_seconds, 1e-9);
  EXPECT_FALSE(half->pure_roofline);
  // pure_roofline ignores it.
  s.options.pure_roofline = true;
  absl::StatusOr<AnalysisResult> pure = Analyze(s);
  ASSERT_TRUE(pure.ok());
  EXPECT_DOUBLE_EQ(pure->tpot_mean_seconds, base->tpot_mean_seconds);
  EXPECT_TRUE(pure->pure_roofline);
  // Per-step overhead 1 ms is added once per decode step.
  s = Llama2DecodeAt1024();
  s.efficiency.per_step_overhead_seconds = 1e-3;
  absl::StatusOr<AnalysisResult> ov = Analyze(s);
  ASSERT_TRUE(ov.ok());
  EXPECT_NEAR(ov->tpot_mean_seconds, base->tpot_mean_seconds + 1e-3, 1e-12);
  // Per-request overhead 5 ms is paid once, in the prefill: TTFT grows by
  // exactly 5 ms, the decode steps not at all, and the result is no longer
  // the pure roofline.
  s = Llama2DecodeAt1024();
  s.efficiency.per_request_overhead_seconds = 5e-3;
  absl::StatusOr<AnalysisResult> req = Analyze(s);
  ASSERT_TRUE(req.ok());
  EXPECT_NEAR(req->ttft_seconds, base->ttft_seconds + 5e-3, 1e-12);
  EXPECT_NEAR(req->tpot_mean_seconds, base->tpot_mean_seconds, 1e-12);
  EXPECT_NEAR(req->e2e_seconds, base->e2e_seconds + 5e-3, 1e-12);
  EXPECT_FALSE(req->pure_roofline);
  // Prefill only (generated 1: no decode step), with a per-request cost far
  // above any op: the bottleneck sentence says the fixed cost dominates.
  s.workload = {1, 1023, 1};
  s.options.suggestions = false;
  s.efficiency.per_request_overhead_seconds = 1;
  absl::StatusOr<AnalysisResult> fixed = Analyze(s);
  ASSERT_TRUE(fixed.ok());
  EXPECT_EQ(fixed->bottleneck.phase, Phase::kPrefill);
  EXPECT_NE(fixed->bottleneck.text.find(
                "Fixed overhead (per step and per request) takes more"),
            std::string::npos)
      << fixed->bottleneck.text;
  s.efficiency.per_request_overhead_seconds = 5e-3;
  s.efficiency.per_request_overhead_seconds = -1;
  absl::StatusOr<AnalysisResult> negative = Analyze(s);
  ASSERT_EQ(negative.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(negative.status().message().find(
                "efficiency.per_request_overhead_seconds"),
            std::string::npos)
      << negative.status();
  // A plugin hook applies when no calibration profile is named.
  s = Llama2DecodeAt1024();
  s.hardware.efficiency_hook = [](const OpShape&) {
    return std::optional<OpEfficiency>(OpEfficiency{1, 0.25});
  };
  absl::StatusOr<AnalysisResult> hooked = Analyze(s);
  ASSERT_TRUE(hooked.ok());
  EXPECT_NEAR(hooked->tpot_mean_seconds, 4 * base->tpot_mean_seconds, 1e-9);
  s.efficiency.profile_name = "test-profile";  // profile wins over the hook
  absl::StatusOr<AnalysisResult> prof = Analyze(s);
  ASSERT_TRUE(prof.ok());
  EXPECT_NEAR(prof->tpot_mean_seconds, base->tpot_mean_seconds, 1e-12);
}

TEST(AnalyzeTest, Fp16AccumulationTimesMatmulsAtTheAcc16Peak) {
  // Llama-2-7B fp16, prompt 1023: every matmul op is compute-bound work
  // FLOPs / peak. Without the option at fp16's 312e12; with it, on a part
  // whose fp16-acc16 rate is 624e12, exactly half that; attention math is
  // not a matmul of weights and stays fp16.
  Scenario s = Llama2DecodeAt1024();
  s.hardware.peak_ops_per_second[static_cast<int>(MathType::kFp16Acc16)] = 624e12;
  absl::StatusOr<AnalysisResult> fp32_acc = Analyze(s);
  s.options.fp16_accumulation = true;
  absl::StatusOr<AnalysisResult> fp16_acc = Analyze(s);
  ASSERT_TRUE(fp32_acc.ok() && fp16_acc.ok());
  EXPECT_EQ(fp32_acc->matmul_math, MathType::kFp16);
  EXPECT_EQ(fp16_acc->matmul_math, MathType::kFp16Acc16);
  int matmuls = 0;
  for (const OpResult& op : fp16_acc->prefill.ops) {
    if (op.math != MathType::kFp16Acc16) continue;
    ++matmuls;
    EXPECT_DOUBLE_EQ(op.compute_seconds, op.flops / 624e12) << OpKindName(op.kind);
  }
  EXPECT_GE(matmuls, 5);  // q/k/v, o, up+gate, down, LM head
  for (const OpResult& op : fp32_acc->prefill.ops) {
    EXPECT_NE(op.math, MathType::kFp16Acc16);
    if (op.flops > 0) {
      EXPECT_DOUBLE_EQ(op.compute_seconds, op.flops / 312e12) << OpKindName(op.kind);
    }
  }
  EXPECT_LT(fp16_acc->ttft_seconds, fp32_acc->ttft_seconds);
}

TEST(AnalyzeTest, TensorParallelShardsWeightsAndAllReducesOverTheLink) {
  // Llama-2-7B fp16 on two A100-like devices joined by a 600 GB/s link.
  Scenario s = Llama2DecodeAt1024();
  s.hardware.interconnect_bytes_per_second = 600e9;
  s.hardware.tdp_watts = 400;
  absl::StatusOr<AnalysisResult> one = Analyze(s);
  s.parallelism.tensor_parallel = 2;
  absl::StatusOr<AnalysisResult> two = Analyze(s);
  ASSERT_TRUE(one.ok() && two.ok()) << two.status();
  // Per-device weights: embedding and LM head 32000 x 4096 / 2 = 65,536,000
  // each; per layer q/k/v/o 4 x 4096^2 / 2 = 33,554,432, FFN 3 x 4096 x
  // 11008 / 2 = 67,633,152, norms 2 x 4096 = 8,192 (replicated) =
  // 101,195,776, x 32 = 3,238,264,832; final norm 4,096. Total
  // 3,369,340,928 params x 2 B = 6,738,681,856 B (half of 13,476,831,232
  // plus the replicated norms).
  constexpr int kW = static_cast<int>(OperandClass::kWeights);
  constexpr int kKv = static_cast<int>(OperandClass::kKvCache);
  EXPECT_DOUBLE_EQ(two->memory.required_bytes[kW], 6738681856.0);
  // MHA, 32 KV heads: 16 per device, so exactly half the KV cache.
  EXPECT_DOUBLE_EQ(two->memory.required_bytes[kKv], one->memory.required_bytes[kKv] / 2);
  // One decode step (1 token): each all-reduce moves 4 x (2 - 1) / 2 x
  // 4096 x 2 B = 16,384 B over the link; 2 per layer x 32 + 1 (embedding) =
  // 65 of them = 1,064,960 B / 600e9 B/s = 1.7749 us.
  double link = 0;
  int all_reduce_ops = 0;
  for (const OpResult& op : two->decode_first_step.ops) {
    link += op.interconnect_seconds;
    if (op.kind == OpKind::kAllReduce) {
      ++all_reduce_ops;
      EXPECT_EQ(op.bound, Bound::kInterconnect) << op.layer_group;
    }
  }
  EXPECT_EQ(all_reduce_ops, 2);  // the layers' and the embedding's
  EXPECT_NEAR(link, 1064960.0 / 600e9, 1e-15);
  EXPECT_NEAR(two->decode_first_step.totals.interconnect_seconds, link, 1e-15);
  // Each device streams half the weights: the step is faster, but by less
  // than 2x (replicated norms, the link).
  EXPECT_LT(two->tpot_mean_seconds, one->tpot_mean_seconds);
  EXPECT_GT(two->tpot_mean_seconds, one->tpot_mean_seconds / 2);
  // Energy covers both boards: 2 x 400 W x the (per-device) times.
  EXPECT_NEAR(*two->economy.decode_joules, 2 * 400 * two->decode.totals.seconds, 1e-9);
  EXPECT_TRUE(two->warnings.empty());

  // A profile whose collectives reach a quarter of the link (efficiency.
  // link 0.25): each all-reduce takes 4x as long, 4 x 1.7749 us; nothing
  // else moves over the link.
  Scenario quarter = s;
  quarter.parallelism.tensor_parallel = 2;
  quarter.efficiency.link = 0.25;
  absl::StatusOr<AnalysisResult> slow_link = Analyze(quarter);
  ASSERT_TRUE(slow_link.ok()) << slow_link.status();
  EXPECT_NEAR(slow_link->decode_first_step.totals.interconnect_seconds,
              4 * 1064960.0 / 600e9, 1e-15);
  // The pure roofline ignores it.
  quarter.options.pure_roofline = true;
  EXPECT_NEAR(Analyze(quarter)->decode_first_step.totals.interconnect_seconds,
              1064960.0 / 600e9, 1e-15);
  quarter.options.pure_roofline = false;
  // 40 us per collective call (efficiency.collective_call_seconds): the 2
  // all-reduce ops hold 65 calls (2 per layer x 32 + the embedding's), so
  // the step pays 65 x 40 us = 2.6 ms more, as overhead beside the link.
  Scenario called = quarter;
  called.efficiency.collective_call_seconds = 40e-6;
  absl::StatusOr<AnalysisResult> with_calls = Analyze(called);
  ASSERT_TRUE(with_calls.ok()) << with_calls.status();
  double call_overhead = 0;
  for (const OpResult& op : with_calls->decode_first_step.ops) {
    if (op.kind == OpKind::kAllReduce) call_overhead += op.overhead_seconds;
  }
  EXPECT_NEAR(call_overhead, 65 * 40e-6, 1e-12);
  EXPECT_NEAR(with_calls->decode_first_step.totals.seconds -
                  slow_link->decode_first_step.totals.seconds,
              65 * 40e-6, 1e-12);
  // The pure roofline ignores it; a negative cost is refused.
  Scenario pure_called = called, pure_plain = quarter;
  pure_called.options.pure_roofline = pure_plain.options.pure_roofline = true;
  EXPECT_DOUBLE_EQ(Analyze(pure_called)->decode_first_step.totals.seconds,
                   Analyze(pure_plain)->decode_first_step.totals.seconds);
  called.efficiency.collective_call_seconds = -1e-6;
  EXPECT_NE(std::string(Analyze(called).status().message())
                .find("efficiency.collective_call_seconds"),
            std::string::npos)
      << Analyze(called).status();
  quarter.efficiency.link = 0;
  EXPECT_NE(std::string(Analyze(quarter).status().message())
                .find("efficiency.link must be in (0, 1], got 0"),
            std::string::npos)
      << Analyze(quarter).status();

  // No published link: the all-reduces cost no time (still a bound) and a
  // warning says so.
  s.hardware.interconnect_bytes_per_second.reset();
  absl::StatusOr<AnalysisResult> unknown = Analyze(s);
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->decode_first_step.totals.interconnect_seconds, 0);
  ASSERT_EQ(unknown->warnings.size(), 1u);
  EXPECT_NE(unknown->warnings[0].find("without a published interconnect"), std::string::npos);

  // Heads must split evenly.
  s.parallelism.tensor_parallel = 3;
  absl::StatusOr<AnalysisResult> bad = Analyze(s);
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "parallelism.tensor_parallel must divide model.num_attention_heads (32), got 3");
}

TEST(AnalyzeTest, TensorParallelBeyondTheKvHeadsReplicatesThem) {
  // Llama-3-8B has 8 KV heads: at tensor parallelism 16 each device holds
  // one (replicated in pairs), so the KV cache per device is 1/8 of one
  // device's, not 1/16; at 4 each device holds 2: 1/4.
  Scenario s = MakeScenario("llama-3-8b", A100Like());
  s.workload = {4, 1000, 8};
  absl::StatusOr<AnalysisResult> one = Analyze(s);
  s.parallelism.tensor_parallel = 4;
  absl::StatusOr<AnalysisResult> four = Analyze(s);
  s.parallelism.tensor_parallel = 16;
  absl::StatusOr<AnalysisResult> sixteen = Analyze(s);
  ASSERT_TRUE(one.ok() && four.ok() && sixteen.ok()) << sixteen.status();
  constexpr int kKv = static_cast<int>(OperandClass::kKvCache);
  EXPECT_DOUBLE_EQ(four->memory.required_bytes[kKv], one->memory.required_bytes[kKv] / 4);
  EXPECT_DOUBLE_EQ(sixteen->memory.required_bytes[kKv], one->memory.required_bytes[kKv] / 8);
  // 64 does not divide the 32 query heads.
  s.parallelism.tensor_parallel = 64;
  absl::StatusOr<AnalysisResult> too_many = Analyze(s);
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("must divide model.num_attention_heads (32)"),
            std::string::npos);
}

TEST(AnalyzeTest, BeyondMaxContextIsAWarningNotAnError) {
  // Llama-2-7B: max_position_embeddings 4096. 1023 + 2 fits: no warning;
  // 4000 + 200 = 4200 > 4096: still computed, with one warning naming both.
  Scenario s = Llama2DecodeAt1024();
  absl::StatusOr<AnalysisResult> inside = Analyze(s);
  ASSERT_TRUE(inside.ok());
  EXPECT_TRUE(inside->warnings.empty());
  s.workload = {1, 4000, 200};
  absl::StatusOr<AnalysisResult> beyond = Analyze(s);
  ASSERT_TRUE(beyond.ok()) << beyond.status();
  EXPECT_GT(beyond->ttft_seconds, 0);
  ASSERT_EQ(beyond->warnings.size(), 1u);
  EXPECT_NE(beyond->warnings[0].find("(4200) exceed the model's max_context (4096"),
            std::string::npos)
      << beyond->warnings[0];
}

TEST(AnalyzeTest, EnergyFromBoardPowerOrPerOpAndByte) {
  Scenario s = Llama2DecodeAt1024();
  s.workload = {1, 1023, 11};
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->economy.energy_method, EnergyMethod::kUnknown);
  EXPECT_FALSE(r->economy.joules_per_output_token.has_value());

  s.hardware.tdp_watts = 400;
  s.hardware.price_usd = 10000;
  r = Analyze(s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->economy.energy_method, EnergyMethod::kBoardPower);
  EXPECT_DOUBLE_EQ(*r->economy.decode_joules, 400 * r->decode.totals.seconds);
  const double joules = 400 * r->e2e_seconds;
  EXPECT_NEAR(*r->economy.joules_per_output_token, joules / 11, 1e-9);
  // $ = price x e2e / (4 years x 365.25 d x 86400 s x utilisation 1) +
  // kWh x 1.58 PUE x 0.0806 $/kWh, per 11 tokens, x 1e6.
  const Economics e = DefaultEconomics();
  const double usd = 10000 * r->e2e_seconds / (4 * 365.25 * 86400) +
                     joules / 3.6e6 * e.pue * e.electricity_usd_per_kwh;
  EXPECT_NEAR(*r->economy.usd_per_million_output_tokens, usd / 11 * 1e6, 1e-6);
  EXPECT_NEAR(*r->economy.g_co2e_per_million_output_tokens,
              joules / 3.6e6 * 1.58 * 480 / 11 * 1e6, 1e-6);

  // Per-op-and-byte: 1 pJ/FLOP, 10 pJ/byte, 50 W idle.
  s.hardware.energy_joules_per_op[static_cast<int>(MathType::kFp16)] = 1e-12;
  s.hardware.tiers[0].energy_joules_per_byte = 10e-12;
  s.hardware.idle_watts = 50;
  r = Analyze(s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->economy.energy_method, EnergyMethod::kPerOpAndByte);
  const StepTotals& d = r->decode.totals;
  EXPECT_NEAR(*r->economy.decode_joules,
              d.flops * 1e-12 + d.bytes * 10e-12 + 50 * d.seconds, 1e-9);
}

TEST(AnalyzeTest, EmbodiedCarbonAndUtilisationAmortise) {
  // Board power 400 W, price $10,000, embodied 1,500 kg CO2e, served half the
  // time over 4 years: each served second costs 1 / (0.5 x 4 x 365.25 x
  // 86400 s) = 1 / 63,115,200 s of the device's life.
  Scenario s = Llama2DecodeAt1024();
  s.workload = {1, 1023, 11};
  s.hardware.tdp_watts = 400;
  s.hardware.price_usd = 10000;
  s.hardware.embodied_kg_co2e = 1500;
  s.economics.utilization = 0.5;
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  const double life = 0.5 * 4 * 365.25 * 86400;
  EXPECT_DOUBLE_EQ(life, 63115200.0);
  const double t = r->e2e_seconds;
  const double kwh = 400 * t / 3.6e6;
  // $ = 10,000 x t / life + kWh x 1.58 x 0.0806, per 11 tokens x 1e6.
  EXPECT_NEAR(*r->economy.usd_per_million_output_tokens,
              (10000 * t / life + kwh * 1.58 * 0.0806) / 11 * 1e6, 1e-6);
  // gCO2e = kWh x 1.58 x 480 + 1,500,000 g x t / life, per 11 tokens x 1e6.
  EXPECT_NEAR(*r->economy.g_co2e_per_million_output_tokens,
              (kwh * 1.58 * 480 + 1.5e6 * t / life) / 11 * 1e6, 1e-6);
  EXPECT_EQ(r->economy.note.find("embodied carbon unknown"), std::string::npos)
      << r->economy.note;
}

TEST(AnalyzeTest, HardwareWithoutTheMathIsUnimplemented) {
  Scenario s = Llama2DecodeAt1024();
  s.hardware.peak_ops_per_second = {};
  s.hardware.peak_ops_per_second[static_cast<int>(MathType::kInt8)] = 1e12;
  // fp16 math widens to tf32, fp32 or fp64, never to int8.
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
}

// A phone SoC whose spec sheet gives memory but no compute rate: LPDDR5X at
// 9.6 Gb/s per pin x 64-bit bus / 8 = 76.8 GB/s (the Snapdragon 8 Gen 3 row
// of data/hardware_specs.csv, provenance D), 16 GB, and no peak at all.
Hardware NoPeakPhone() {
  Hardware hw;
  hw.id = "test-no-peak-phone";
  hw.display_name = "phone without a published peak (test)";
  hw.family = "inline";
  hw.plugin = "inline";
  MemoryTier lpddr;
  lpddr.name = "LPDDR5X";
  lpddr.kind = TierKind::kLpddr;
  lpddr.capacity_bytes = 16e9;
  lpddr.read_bandwidth_bytes_per_second = 76.8e9;
  lpddr.write_bandwidth_bytes_per_second = 76.8e9;
  hw.tiers.push_back(lpddr);
  return hw;
}

TEST(AnalyzeTest, ComputeRoofUnknownGivesMemoryOnlyTimes) {
  Scenario s = Llama2DecodeAt1024();
  s.hardware = NoPeakPhone();
  ASSERT_TRUE(ValidateHardware(s.hardware).ok());
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->compute_roof_known);
  // Ops are labelled with the math they want (fp16 x fp16 -> fp16).
  EXPECT_EQ(r->matmul_math, MathType::kFp16);
  // Footprint: 6.7384 G params x 2 B = 13.48 GB + KV 0.54 GB < 16 GB.
  EXPECT_TRUE(r->memory.fits);
  const StepResult& step = r->decode_first_step;
  // Same bytes as the A100 golden step above: 13.215 GB of weights read +
  // 0.537 GB KV + a few MB of activations = 13.757 GB; with no compute roof
  // the step takes the memory time alone: 13.757 GB / 76.8 GB/s = 179.1 ms.
  EXPECT_NEAR(step.totals.bytes, 13.757e9, 0.02e9);
  EXPECT_NEAR(step.totals.seconds, 13.757e9 / 76.8e9, 0.3e-3);
  EXPECT_DOUBLE_EQ(step.totals.compute_seconds, 0);
  EXPECT_DOUBLE_EQ(step.totals.seconds, step.totals.memory_seconds);
  for (const StepResult* phase :
       {&std::as_const(r->prefill), &std::as_const(r->decode), &step}) {
    for (const OpResult& op : phase->ops) {
      EXPECT_EQ(op.compute_seconds, 0) << OpKindName(op.kind);
      EXPECT_NE(op.bound, Bound::kCompute) << OpKindName(op.kind);
      EXPECT_EQ(op.executed_in_tier, -1);
    }
  }
  // Prefill of 1023 tokens reads the weights once (13.2 GB) plus the new
  // KV and activations: still only memory time, a loose lower bound.
  EXPECT_DOUBLE_EQ(r->prefill.totals.compute_seconds, 0);
  EXPECT_GT(r->prefill.totals.seconds, 13.2e9 / 76.8e9);
  // No ridge point can be stated, and the sentence says why.
  EXPECT_EQ(r->ridge_point, 0);
  EXPECT_EQ(r->bottleneck.ridge_point, 0);
  EXPECT_EQ(r->bottleneck.bound, Bound::kMemory);
  EXPECT_NE(r->bottleneck.text.find("compute roof is unknown"),
            std::string::npos)
      << r->bottleneck.text;
  EXPECT_EQ(r->bottleneck.text.find("ridge point"), std::string::npos)
      << r->bottleneck.text;

  // The same hardware with its A100-like peak back is compute-known.
  Scenario known = Llama2DecodeAt1024();
  EXPECT_TRUE(Analyze(known)->compute_roof_known);
}

TEST(AnalyzeTest, SomePeaksButNoneForTheMathStayUnimplemented) {
  // Only an int8 peak: the compute roof is known but cannot run fp16, which
  // is an error, not "unknown".
  Scenario s = Llama2DecodeAt1024();
  s.hardware = NoPeakPhone();
  s.hardware.peak_ops_per_second[static_cast<int>(MathType::kInt8)] = 45e12;
  EXPECT_EQ(Analyze(s).status().code(), absl::StatusCode::kUnimplemented);
}

TEST(NamesTest, AreStableAndDistinct) {
  EXPECT_EQ(OpKindName(OpKind::kFlashAttention), "flash_attention");
  EXPECT_EQ(OpKindName(OpKind::kQProjection), "q_projection");
  EXPECT_EQ(OpKindName(OpKind::kLmHead), "lm_head");
  std::set<std::string_view> names;
  for (int i = 0; i < kOpKindCount; ++i) {
    names.insert(OpKindName(static_cast<OpKind>(i)));
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kOpKindCount));
  EXPECT_EQ(names.count("unknown"), 0u);
  for (int i = 0; i < kTierKindCount; ++i) {
    const auto k = static_cast<TierKind>(i);
    EXPECT_EQ(ParseTierKind(TierKindName(k)), k);
  }
  EXPECT_EQ(ParseTierKind("HOST-LINK"), TierKind::kHostLink);
  EXPECT_FALSE(ParseTierKind("dram").has_value());
  EXPECT_EQ(PhaseName(Phase::kDecode), "decode");
  EXPECT_EQ(BoundName(Bound::kOverhead), "overhead");
  EXPECT_EQ(OpClassName(OpClass::kGemv), "gemv");
  EXPECT_EQ(OperandClassName(OperandClass::kKvCache), "kv_cache");
  EXPECT_EQ(EnergyMethodName(EnergyMethod::kBoardPower), "board-power");
  EXPECT_EQ(DefaultPrecision().weights.name, "bf16");
}

}  // namespace
}  // namespace ridgeline::engine

namespace ridgeline::engine {
namespace {

// Every catalog model analyses, and the bookkeeping adds up: step totals are
// the sums of their ops, op bytes the sums of their traffic, and a batch-1
// decode step reads each active weight once.
TEST(CatalogTest, EveryModelAnalysesConsistently) {
  ASSERT_GE(BuiltinModels().size(), 24u);
  for (const ModelConfig& m : BuiltinModels()) {
    Scenario s = MakeScenario(m.id, A100Like());
    s.hardware.tiers[0].capacity_bytes = 4e12;  // DeepSeek-V3 fits
    s.workload = {1, 512, 4};
    absl::StatusOr<AnalysisResult> r = Analyze(s);
    ASSERT_TRUE(r.ok()) << m.id << ": " << r.status();
    EXPECT_TRUE(r->memory.fits) << m.id;
    EXPECT_GT(r->ttft_seconds, 0) << m.id;
    EXPECT_GT(r->tpot_mean_seconds, 0) << m.id;
    for (const StepResult* step :
         {&r->prefill, &r->decode, &r->decode_first_step}) {
      double seconds = 0, bytes = 0;
      for (const OpResult& op : step->ops) {
        double traffic = 0;
        for (const auto& per_class : op.traffic) {
          for (const Traffic& t : per_class) traffic += t.read + t.write;
        }
        EXPECT_NEAR(op.bytes, traffic, 1e-9 * traffic) << m.id;
        EXPECT_GE(op.flops, 0);
        seconds += op.seconds;
        bytes += op.bytes;
      }
      EXPECT_NEAR(step->totals.seconds, seconds, 1e-12) << m.id;
      EXPECT_NEAR(step->totals.bytes, bytes, 1e-6 * bytes) << m.id;
    }
    // Weights read in one batch-1 decode step: the active parameters, less
    // the embedding table (one row gathered) unless the LM head shares it;
    // bf16 = 2 bytes each.
    const ParameterCounts p = CountParameters(m);
    const double expected =
        2 * (p.active_per_token - (m.tie_word_embeddings ? 0 : p.embedding));
    double weights = 0;
    for (const OpResult& op : r->decode_first_step.ops) {
      for (const Traffic& t : op.traffic[kW]) weights += t.read;
    }
    EXPECT_NEAR(weights, expected, 0.005 * expected) << m.id;
  }
}

}  // namespace
}  // namespace ridgeline::engine
