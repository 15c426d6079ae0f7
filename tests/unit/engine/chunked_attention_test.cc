// Chunked local attention (Llama 4's RoPE layers, LayerSpec::chunked): a
// query at position p attends to the keys of its own chunk of C tokens only,
// floor(p / C) * C .. p, so (p mod C) + 1 keys. Each expected number is
// derived in the comment beside it.
//
// Llama-4-Scout: 48 layers, every 4th (4, 8, ... 1-based) NoPE and global,
// the other 36 chunked with C = 8192; 40 query heads, 8 KV heads of 128; bf16
// KV: K + V per layer and token = 2 x 8 x 128 x 2 B = 4,096 B. Fused
// attention FLOPs per (query, key) pair and head: 4 x 128 + 5 = 517
// (AttentionFlops: 2d QK^T, 2d AV, 5 softmax).
#include <string>
#include <vector>

#include "decode_sum.h"
#include "gtest/gtest.h"
#include "operators.h"
#include "prepare.h"
#include "ridgeline/engine/analyze.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/engine/step.h"
#include "roofline.h"
#include "test_hardware.h"

namespace ridgeline::engine {
namespace {

using testing::A100Like;
using testing::MakeScenario;

constexpr int kKv = static_cast<int>(OperandClass::kKvCache);

bool Chunked(std::string_view group) { return group.substr(0, 7) == "chunked"; }

// Fused attention of the chunked (or the other) layers: KV bytes read, FLOPs.
struct Attn {
  double kv_read = 0, flops = 0;
};
Attn Attention(const std::vector<OpResult>& ops, bool chunked) {
  Attn a;
  for (const OpResult& op : ops) {
    if (op.kind != OpKind::kFlashAttention || Chunked(op.layer_group) != chunked)
      continue;
    for (const Traffic& t : op.traffic[kKv]) a.kv_read += t.read;
    a.flops += op.flops;
  }
  return a;
}

Scenario Scout() {
  Scenario s = MakeScenario("llama-4-scout", A100Like());
  s.hardware.tiers[0].capacity_bytes = 2e12;
  return s;
}

TEST(ChunkedAttentionTest, CatalogAndConfigMarkRopeLayersChunked) {
  const ModelConfig m = FindModel("llama-4-scout").value();
  EXPECT_EQ(m.attention_chunk_size, 8192);
  EXPECT_EQ(m.sliding_window, 0);
  int chunked = 0;
  for (const LayerSpec& l : m.layers) {
    chunked += l.chunked;
    EXPECT_FALSE(l.sliding);
  }
  EXPECT_EQ(chunked, 36);  // 48 - 12 NoPE layers
  EXPECT_FALSE(m.layers[3].chunked);  // layer 4 (1-based) is NoPE, global
}

TEST(ChunkedAttentionTest, DecodeJustPastAChunkReadsOnlyItsOwnChunk) {
  // Context L = C + 5 = 8197 before the step: the new token sits at position
  // 8197 and sees (8197 mod 8192) + 1 = 6 keys on a chunked layer (a window
  // would read 8192). Prompt 8197, 2 generated: the first decode step has
  // 8198 tokens in its cache.
  Scenario s = Scout();
  s.workload = {1, 8197, 2};
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  const Attn chunked = Attention(r->decode_first_step.ops, true);
  const Attn global = Attention(r->decode_first_step.ops, false);
  // 36 layers x 6 keys x 4,096 B = 884,736 B.
  EXPECT_DOUBLE_EQ(chunked.kv_read, 884736.0);
  // 36 x 40 heads x 6 pairs x 517 = 4,466,880 FLOPs.
  EXPECT_DOUBLE_EQ(chunked.flops, 4466880.0);
  // Global layers read everything: 12 x 8,198 x 4,096 B = 402,948,096 B.
  EXPECT_DOUBLE_EQ(global.kv_read, 402948096.0);
  // KV footprint at 8,198 tokens held (prompt + 2 generated - 1): a chunked
  // layer keeps at most one chunk, min(8198, 8192) = 8192 tokens (the peak
  // it reaches), 36 x 8,192 x 4,096 = 1,207,959,552; the global layers
  // 402,948,096; together 1,610,907,648 B.
  EXPECT_DOUBLE_EQ(r->memory.required_bytes[kKv], 1610907648.0);
}

TEST(ChunkedAttentionTest, PrefillCountsEachQueryOwnChunk) {
  // A prompt of C + 1000 = 9192 tokens: queries 0..8191 see 1..8192 keys
  // (8192 x 8193 / 2 = 33,558,528 pairs), queries 8192..9191 see 1..1000
  // (1000 x 1001 / 2 = 500,500): 34,059,028 pairs per head, 3,705.3 keys per
  // query on average. A window of 8192 would count 33,558,528 + 1000 x 8192
  // = 41,750,528, full causal attention 9192 x 9193 / 2 = 42,251,028.
  Scenario s = Scout();
  s.workload = {1, 9192, 1};
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  const Attn chunked = Attention(r->prefill.ops, true);
  // 36 x 40 x 34,059,028 x 517 = 25,356,265,165,440 FLOPs.
  EXPECT_DOUBLE_EQ(chunked.flops, 25356265165440.0);
  // Every key of the prompt is in some query's chunk and is read once:
  // 36 x 9,192 x 4,096 B = 1,355,415,552 B.
  EXPECT_DOUBLE_EQ(chunked.kv_read, 1355415552.0);
}

TEST(ChunkedAttentionTest, StepModelUsesTheChunksPerSequence) {
  Scenario s = Scout();
  s.workload = {1, 9192, 2};
  absl::StatusOr<StepEvaluator> ev = StepEvaluator::Create(s);
  ASSERT_TRUE(ev.ok()) << ev.status();
  std::vector<OpResult> ops;
  // A decode token at context 8197 (6 pairs, 6 keys) and a prompt of 9192
  // from empty (34,059,028 pairs, 9,192 keys) in one step: 36 x 40 x
  // 34,059,034 x 517 = 25,356,269,632,320 FLOPs and 36 x 9,198 x 4,096 B =
  // 1,356,300,288 B of KV on the chunked layers.
  const std::vector<StepSequence> mixed = {{8197, 1}, {0, 9192}};
  ASSERT_TRUE(ev->Step(mixed, &ops).ok());
  Attn a = Attention(ops, true);
  EXPECT_DOUBLE_EQ(a.flops, 25356269632320.0);
  EXPECT_DOUBLE_EQ(a.kv_read, 1356300288.0);
  // A chunk of 400 prompt tokens over 8000 cached crosses a chunk boundary:
  // queries 8000..8191 see 8001..8192 keys ((8001 + 8192) x 192 / 2 =
  // 1,554,528), queries 8192..8399 see 1..208 (21,736): 1,576,264 pairs;
  // 36 x 40 x 1,576,264 x 517 = 1,173,497,022,720 FLOPs. Keys read: from
  // the start of chunk 0 to 8399, 8,400: 36 x 8,400 x 4,096 = 1,238,630,400 B.
  ops.clear();
  const std::vector<StepSequence> cross = {{8000, 400}};
  ASSERT_TRUE(ev->Step(cross, &ops).ok());
  a = Attention(ops, true);
  EXPECT_DOUBLE_EQ(a.flops, 1173497022720.0);
  EXPECT_DOUBLE_EQ(a.kv_read, 1238630400.0);
}

TEST(ChunkedAttentionTest, ClosedFormDecodeSumFollowsTheSawtooth) {
  // Chunks of 64: from a prompt of 100, 300 steps hold 101..400 tokens and
  // read ((kv - 1) mod 64) + 1 keys: 37..64 (28 steps, 1,414 keys), four
  // full chunks 1..64 (4 x 2,080 = 8,320), then 1..16 (136): 9,870 keys,
  // 36 x 9,870 x 4,096 B = 1,455,390,720 B of KV over the decode.
  Scenario s = Scout();
  s.model.attention_chunk_size = 64;
  s.workload = {1, 100, 301};
  internal::Prepared prep;
  ASSERT_TRUE(internal::Prepare(s, &prep).ok());
  const internal::Evaluator ev(s, prep.place);
  std::vector<int> linear;
  double const_seconds = ev.per_step();
  for (size_t i = 0; i < prep.dec0.size(); ++i) {
    if (prep.dec0[i].kv_dependent) {
      linear.push_back(static_cast<int>(i));
    } else {
      const_seconds += ev.Time(prep.dec0[i]).seconds;
    }
  }
  internal::DecodeSums closed, loop;
  internal::SumDecodeSteps(prep.dec0, prep.slope, linear.data(), linear.size(),
                           100, 300, const_seconds, ev, &closed);
  internal::SumDecodeStepsLoop(prep.dec0, prep.slope, linear.data(),
                               linear.size(), 100, 300, const_seconds, ev, &loop);
  double chunked_kv = 0;
  for (size_t j = 0; j < linear.size(); ++j) {
    const internal::OpCost& op = prep.dec0[linear[j]];
    if (op.chunked) chunked_kv += closed.acc[j].read[kKv];
    EXPECT_NEAR(closed.acc[j].seconds, loop.acc[j].seconds,
                1e-9 * loop.acc[j].seconds);
    EXPECT_NEAR(closed.acc[j].read[kKv], loop.acc[j].read[kKv],
                1e-9 * loop.acc[j].read[kKv]);
  }
  EXPECT_NEAR(chunked_kv, 1455390720.0, 1e-6);
  EXPECT_NEAR(closed.total, loop.total, 1e-9 * loop.total);
  EXPECT_NEAR(closed.first, loop.first, 1e-9 * loop.first);
  EXPECT_NEAR(closed.last, loop.last, 1e-9 * loop.last);
}

TEST(ChunkedAttentionTest, ErrorsNameTheLayerField) {
  ModelConfig m = FindModel("llama-4-scout").value();
  m.layers[2].sliding = true;
  m.sliding_window = 128;
  absl::Status st = ValidateModel(m);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("model.layers[2].chunked"), std::string::npos)
      << st.message();
  m = FindModel("llama-4-scout").value();
  m.attention_chunk_size = 0;
  st = ValidateModel(m);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("model.attention_chunk_size"), std::string::npos)
      << st.message();
}

}  // namespace
}  // namespace ridgeline::engine
