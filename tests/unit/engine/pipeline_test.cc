// Pipeline parallelism in a step: the latency through every stage (the
// step's `seconds`) and the steady-state interval between steps (the
// slowest stage plus its send), derived by hand from the stage split.
#include <vector>

#include "gtest/gtest.h"
#include "ridgeline/engine/step.h"
#include "test_hardware.h"

namespace ridgeline::engine {
namespace {

using testing::A100Like;
using testing::MakeScenario;

// The step's per-op seconds split into what runs once (embedding on the
// first stage, final norm + LM head on the last, the stage sends) and the
// decoder layers' ops.
struct Parts {
  double layers = 0, embedding = 0, final_norm = 0, lm_head = 0, sends = 0;
};
Parts Split(const std::vector<OpResult>& ops) {
  Parts p;
  for (const OpResult& op : ops) {
    switch (op.kind) {
      case OpKind::kEmbedding: p.embedding += op.seconds; break;
      case OpKind::kFinalNorm: p.final_norm += op.seconds; break;
      case OpKind::kLmHead: p.lm_head += op.seconds; break;
      case OpKind::kPipelineSend: p.sends += op.seconds; break;
      default: p.layers += op.seconds; break;
    }
  }
  return p;
}

// Llama-3-8B (32 alike layers, hidden 4096, vocabulary 128,256), bf16, on
// the A100-like part (2039e9 B/s, 312e12 FLOP/s) with an illustrative
// 600e9 B/s scale-up link; a decode step of 8 sequences at context 1023.
absl::StatusOr<StepEvaluator> Pipelined(int64_t stages) {
  Scenario s = MakeScenario("llama-3-8b", A100Like());
  s.hardware.interconnect_bytes_per_second = 600e9;
  s.workload = {8, 1024, 16};
  s.parallelism.pipeline_parallel = stages;
  return StepEvaluator::Create(s);
}

std::vector<StepSequence> EightDecodes() {
  return std::vector<StepSequence>(8, StepSequence{1023, 1});
}

TEST(PipelineStepTest, FourStagesLatencyAndIntervalByHand) {
  absl::StatusOr<StepEvaluator> ev = Pipelined(4);
  ASSERT_TRUE(ev.ok()) << ev.status();
  std::vector<OpResult> ops;
  absl::StatusOr<StepTiming> t = ev->Step(EightDecodes(), &ops);
  ASSERT_TRUE(t.ok()) << t.status();
  const Parts p = Split(ops);
  // LM head on 8 rows: reads 4096 x 128256 x 2 B = 1,050,673,152 B of
  // weights + 8 x 4096 x 2 = 65,536 B in, writes 8 x 128256 x 2 =
  // 2,052,096 B: 1,052,790,784 B / 2039e9 B/s = 516.327 us (memory-bound:
  // 2 x 8 x 4096 x 128256 FLOPs / 312e12 = 26.9 us).
  EXPECT_NEAR(p.lm_head, 1052790784.0 / 2039e9, 1e-15);
  // 3 sends of 8 x 4096 x 2 B = 65,536 B at 300e9 B/s one way: 0.218 us
  // each.
  EXPECT_NEAR(p.sends, 3 * 65536.0 / 300e9, 1e-18);
  // Latency: one step crosses every stage in turn, all ops summed (pure
  // roofline: no per-step overhead).
  EXPECT_NEAR(t->seconds,
              p.layers + p.embedding + p.final_norm + p.lm_head + p.sends,
              1e-15);
  // Interval: 32 layers in 4 stages of 8, so each stage runs a quarter of
  // the layers' time. Stage 0 adds the embedding (8 rows x 4096 x 2 B =
  // 65,536 B read) and a send (0.218 us), stages 1 and 2 a send, stage 3
  // the final norm and the 516 us LM head: stage 3 is the slowest.
  EXPECT_EQ(t->pipeline_slowest_stage, 3);
  EXPECT_NEAR(t->pipeline_interval_seconds,
              p.layers / 4 + p.final_norm + p.lm_head, 1e-15);
  EXPECT_LT(t->pipeline_interval_seconds, t->seconds / 2);
}

TEST(PipelineStepTest, UnevenSplitPutsTheExtraLayerLate) {
  // 32 layers in 3 stages: [0, 10), [10, 21), [21, 32) = 10, 11, 11.
  // The last stage runs 11 of the 32 layers plus the final norm and LM
  // head.
  absl::StatusOr<StepEvaluator> ev = Pipelined(3);
  ASSERT_TRUE(ev.ok()) << ev.status();
  std::vector<OpResult> ops;
  absl::StatusOr<StepTiming> t = ev->Step(EightDecodes(), &ops);
  ASSERT_TRUE(t.ok()) << t.status();
  const Parts p = Split(ops);
  EXPECT_EQ(t->pipeline_slowest_stage, 2);
  EXPECT_NEAR(t->pipeline_interval_seconds,
              p.layers * 11 / 32 + p.final_norm + p.lm_head, 1e-15);
}

TEST(PipelineStepTest, IntervalIsTheLatencyWithoutPipelining) {
  absl::StatusOr<StepEvaluator> ev = Pipelined(1);
  ASSERT_TRUE(ev.ok()) << ev.status();
  absl::StatusOr<StepTiming> t = ev->Step(EightDecodes());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->pipeline_interval_seconds, t->seconds);
  EXPECT_EQ(t->pipeline_slowest_stage, 0);
  // Decode() and Prefill() report it too.
  absl::StatusOr<StepEvaluator> pp = Pipelined(4);
  ASSERT_TRUE(pp.ok());
  absl::StatusOr<StepTiming> d = pp->Decode(8, 1024);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->pipeline_slowest_stage, 3);
  EXPECT_GT(d->pipeline_interval_seconds, 0);
  EXPECT_LT(d->pipeline_interval_seconds, d->seconds);
}

}  // namespace
}  // namespace ridgeline::engine
