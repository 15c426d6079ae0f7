// StepEvaluator::Step: a real batch of sequences at their own contexts.
// One sequence equals Decode / Prefill to the bit; a mixed step's attention
// and linear ops follow the hand-derived sums; errors name the sequence.
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ridgeline/engine/step.h"
#include "test_hardware.h"

namespace ridgeline::engine {
namespace {

using ::testing::HasSubstr;
using testing::A100Like;
using testing::MakeScenario;

void ExpectSame(const StepTiming& want, const StepTiming& got,
                const std::string& what) {
  EXPECT_EQ(want.phase, got.phase) << what;
  EXPECT_EQ(want.batch, got.batch) << what;
  EXPECT_EQ(want.tokens, got.tokens) << what;
  EXPECT_EQ(want.kv_length, got.kv_length) << what;
  EXPECT_EQ(want.flops, got.flops) << what;
  EXPECT_EQ(want.bytes, got.bytes) << what;
  EXPECT_EQ(want.compute_seconds, got.compute_seconds) << what;
  EXPECT_EQ(want.memory_seconds, got.memory_seconds) << what;
  EXPECT_EQ(want.interconnect_seconds, got.interconnect_seconds) << what;
  EXPECT_EQ(want.overhead_seconds, got.overhead_seconds) << what;
  EXPECT_EQ(want.seconds, got.seconds) << what;
  EXPECT_EQ(want.bound, got.bound) << what;
}

TEST(StepMixedTest, OneSequenceEqualsDecodeAndPrefillExactly) {
  AnalysisOptions fused;
  fused.suggestions = false;
  AnalysisOptions unfused = fused;
  unfused.flash_attention = false;
  unfused.mla_absorbed = false;
  struct Case {
    const char* model;
    AnalysisOptions options;
  };
  const Case cases[] = {{"llama-3-8b", fused},  {"mixtral-8x7b", fused},
                        {"deepseek-v2", fused}, {"deepseek-v2", unfused},
                        {"gemma-2-9b", fused},  {"gemma-2-9b", unfused}};
  for (const Case& c : cases) {
    Scenario s = MakeScenario(c.model, A100Like());
    s.options = c.options;
    s.workload = {1, 4096, 2};
    absl::StatusOr<StepEvaluator> ev = StepEvaluator::Create(s);
    ASSERT_TRUE(ev.ok()) << ev.status();
    // Contexts below and above Gemma-2's 4096-token window.
    for (int64_t context : {1, 999, 4095, 4096, 9000}) {
      const std::string what =
          std::string(c.model) + (c.options.flash_attention ? "" : " unfused") +
          " decode over " + std::to_string(context);
      const StepSequence one[] = {{context, 1}};
      absl::StatusOr<StepTiming> got = ev->Step(one);
      ASSERT_TRUE(got.ok()) << got.status();
      absl::StatusOr<StepTiming> want = ev->Decode(1, context + 1);
      ASSERT_TRUE(want.ok());
      ExpectSame(*want, *got, what);
    }
    for (int64_t n : {1, 2, 512, 5000}) {
      const StepSequence one[] = {{0, n}};
      absl::StatusOr<StepTiming> got = ev->Step(one);
      ASSERT_TRUE(got.ok()) << got.status();
      absl::StatusOr<StepTiming> want = ev->Prefill(1, n);
      ASSERT_TRUE(want.ok());
      ExpectSame(*want, *got, std::string(c.model) + " prefill " +
                                  std::to_string(n));
    }
  }
}

const OpResult* FindOp(const std::vector<OpResult>& ops, OpKind kind) {
  for (const OpResult& op : ops) {
    if (op.kind == kind) return &op;
  }
  return nullptr;
}

// The golden: a decode token at context 4096 and a prefill chunk of
// 512 tokens at context 0, Llama-3-8B (32 layers, hidden 4096, 32 heads,
// 8 KV heads of 128, vocabulary 128256), bf16 everywhere, fused attention.
TEST(StepMixedTest, DecodeAt4096PlusChunkOf512ByHand) {
  Scenario s = MakeScenario("llama-3-8b", A100Like());
  s.workload = {2, 4096, 2};
  absl::StatusOr<StepEvaluator> ev = StepEvaluator::Create(s);
  ASSERT_TRUE(ev.ok()) << ev.status();
  const StepSequence step[] = {{4096, 1}, {0, 512}};
  std::vector<OpResult> ops;
  absl::StatusOr<StepTiming> t = ev->Step(step, &ops);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->batch, 2);
  EXPECT_EQ(t->tokens, 513);      // 1 + 512 new tokens
  EXPECT_EQ(t->kv_length, 4097);  // the longest context after the step
  EXPECT_EQ(t->phase, Phase::kPrefill);

  // Attention, per layer and head: the decode token scores 4096 + 1 = 4097
  // keys; the chunk scores 512 * 513 / 2 = 131328 causal pairs. Sum 135425.
  // FLOPs per pair: QK^T 2*128 + AV 2*128 + softmax 5 = 517.
  // 32 heads x 135425 x 517 x 32 layers = 71,695,078,400.
  const OpResult* attn = FindOp(ops, OpKind::kFlashAttention);
  ASSERT_NE(attn, nullptr);
  EXPECT_DOUBLE_EQ(attn->flops, 71695078400.0);
  // KV read: each sequence's cache once per layer: (4097 + 512) keys x
  // K and V x 8 heads x 128 x 2 B = 4609 x 4096 B = 18,878,464 B per layer,
  // x 32 layers = 604,110,848 B.
  EXPECT_DOUBLE_EQ(attn->traffic[static_cast<int>(OperandClass::kKvCache)][0].read,
                   604110848.0);

  // Linear layers see all 513 tokens: Q projection 2 x 513 x 4096 x 4096
  // x 32 layers = 550,829,555,712 FLOPs.
  const OpResult* q = FindOp(ops, OpKind::kQProjection);
  ASSERT_NE(q, nullptr);
  EXPECT_DOUBLE_EQ(q->flops, 550829555712.0);
  // The LM head runs on one row per sequence: 2 x 2 x 4096 x 128256.
  const OpResult* head = FindOp(ops, OpKind::kLmHead);
  ASSERT_NE(head, nullptr);
  EXPECT_DOUBLE_EQ(head->flops, 2.0 * 2 * 4096 * 128256);

  // The per-op results add up to the totals.
  double flops = 0, seconds = 0;
  for (const OpResult& op : ops) {
    flops += op.flops;
    seconds += op.seconds;
  }
  EXPECT_DOUBLE_EQ(t->flops, flops);
  EXPECT_DOUBLE_EQ(t->seconds, seconds);
}

// Sequences at one context add up as a batch: equal to Decode(b, L). MoE's
// expected distinct experts follow the step's total tokens, so Mixtral
// agrees too.
TEST(StepMixedTest, EqualSequencesAreABatch) {
  for (const char* model : {"llama-3-8b", "mixtral-8x7b"}) {
    Scenario s = MakeScenario(model, A100Like());
    s.workload = {16, 2048, 2};
    absl::StatusOr<StepEvaluator> ev = StepEvaluator::Create(s);
    ASSERT_TRUE(ev.ok());
    std::vector<StepSequence> seqs(16, StepSequence{2047, 1});
    absl::StatusOr<StepTiming> got = ev->Step(seqs);
    absl::StatusOr<StepTiming> want = ev->Decode(16, 2048);
    ASSERT_TRUE(got.ok() && want.ok());
    EXPECT_NEAR(got->seconds, want->seconds, 1e-12 * want->seconds) << model;
    EXPECT_NEAR(got->bytes, want->bytes, 1e-12 * want->bytes) << model;
    EXPECT_NEAR(got->flops, want->flops, 1e-12 * want->flops) << model;
  }
}

TEST(StepMixedTest, BadSequencesNameTheirIndex) {
  Scenario s = MakeScenario("llama-3-8b", A100Like());
  absl::StatusOr<StepEvaluator> ev = StepEvaluator::Create(s);
  ASSERT_TRUE(ev.ok());
  absl::StatusOr<StepTiming> t = ev->Step({});
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(t.status().message()),
              HasSubstr("sequences must hold 1..65536 sequences, got 0"));
  const StepSequence bad_context[] = {{1, 1}, {-3, 1}};
  t = ev->Step(bad_context);
  EXPECT_THAT(std::string(t.status().message()),
              HasSubstr("sequences[1].context_tokens must be in [0, 10000000], "
                        "got -3"));
  const StepSequence bad_new[] = {{1, 0}};
  t = ev->Step(bad_new);
  EXPECT_THAT(std::string(t.status().message()),
              HasSubstr("sequences[0].new_tokens must be in [1, 10000000], "
                        "got 0"));
  std::vector<StepSequence> many(65537, StepSequence{1, 1});
  t = ev->Step(many);
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("got 65537"));
  // Beyond the model's window: computed, and flagged for a warning.
  const StepSequence long_one[] = {{9000, 1}};  // llama-3-8b: 8192
  t = ev->Step(long_one);
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->beyond_model_context);
}

}  // namespace
}  // namespace ridgeline::engine
