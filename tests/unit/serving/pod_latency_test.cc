// PodLatencyModel's rules (serving/pod_latency.h) on a hand-set step model:
// a step takes 1 ms + 0.01 ms per prefill token + 0.1 ms per decode
// sequence + 0.001 ms per 1,000 tokens of decode context, so every golden
// value below is derived by hand.
#include "ridgeline/serving/pod_latency.h"

#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "ridgeline/engine/field_path.h"

namespace ridgeline::serving {
namespace {

class LinearSteps : public StepCost {
 public:
  absl::StatusOr<StepTime> Time(
      std::span<const SequenceInStep> seqs) const override {
    double ms = 1;
    for (const SequenceInStep& s : seqs) {
      if (s.new_tokens > 1) {
        ms += 0.01 * s.new_tokens;
      } else {
        ms += 0.1 + 0.001 * s.context_tokens / 1000.0;
      }
    }
    return StepTime{ms / 1e3};
  }
};

std::unique_ptr<PodLatencyModel> Model() {
  ServingConfig config;
  config.max_num_batched_tokens = 1000;  // chunk = 1000 - running - 1
  config.max_num_seqs = 64;
  auto m = PodLatencyModel::Create(std::make_unique<LinearSteps>(),
                                   /*kv_capacity_tokens=*/100000, config);
  EXPECT_TRUE(m.ok()) << m.status();
  return *std::move(m);
}

TEST(PodLatency, IdlePodPrefillsInChunksOfTheBudget) {
  auto m = Model();
  PodState s;
  s.input_tokens = 2500;  // no queue, nothing running: chunk 999
  auto p = m->Predict(s);
  ASSERT_TRUE(p.ok()) << p.status();
  // 2500 = 2 full chunks of 999 + 502: 2 x (1 + 9.99) + (1 + 5.02) ms.
  EXPECT_NEAR(p->ttft_seconds * 1e3, 2 * 10.99 + 6.02, 1e-9);
  // TPOT: this request alone at context 2500: 1 + 0.1 + 0.0025 ms.
  EXPECT_NEAR(p->tpot_seconds * 1e3, 1.1025, 1e-9);
}

TEST(PodLatency, QueueRunningSequencesAndPrefixCache) {
  auto m = Model();
  PodState s;
  s.kv_cache_fraction = 0.4;  // 40,000 tokens over 8 sequences: 5,000 each
  s.running = 8;
  s.waiting = 1;
  s.input_tokens = 400;
  s.prefix_cache_score = 0.5;
  s.tokens_generated = 100;
  auto p = m->Predict(s);
  ASSERT_TRUE(p.ok()) << p.status();
  // Ahead: 1 x 400 queued + 400 x 0.5 own = 600 tokens; chunk 1000 - 9 =
  // 991, so one step of 8 decodes and 600 prefill tokens:
  // 1 + 8 x (0.1 + 0.005) + 6 = 7.84 ms.
  EXPECT_NEAR(p->ttft_seconds * 1e3, 7.84, 1e-9);
  // TPOT: 8 decodes at 5,000, this one at 500, a 400-token queued chunk:
  // 1 + 8 x 0.105 + (0.1 + 0.0005) + 4 = 5.9405 ms.
  EXPECT_NEAR(p->tpot_seconds * 1e3, 5.9405, 1e-9);
}

TEST(PodLatency, RangesNameTheLlmdField) {
  auto m = Model();
  PodState s;
  s.kv_cache_fraction = 1.5;
  EXPECT_EQ(engine::FieldPathOf(m->Predict(s).status()), "kv_cache_percentage");
  s = PodState{};
  s.waiting = -1;
  EXPECT_EQ(engine::FieldPathOf(m->Predict(s).status()), "num_request_waiting");
  // Counts past what a replica admits are clamped, not timed.
  s = PodState{};
  s.running = int64_t{1} << 53;
  s.input_tokens = int64_t{1} << 53;
  s.kv_cache_fraction = 1;
  EXPECT_TRUE(m->Predict(s).ok());
}

TEST(PodLatency, PredictManyMatchesPredict) {
  auto m = Model();
  std::vector<PodState> states(3);
  states[1].input_tokens = 800;
  states[2].running = 5;
  states[2].kv_cache_fraction = 0.1;
  std::vector<PodLatency> out;
  ASSERT_TRUE(m->PredictMany(states, &out).ok());
  ASSERT_EQ(out.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(out[i].ttft_seconds, m->Predict(states[i])->ttft_seconds);
    EXPECT_EQ(out[i].tpot_seconds, m->Predict(states[i])->tpot_seconds);
  }
}

}  // namespace
}  // namespace ridgeline::serving
