// AnalysisOptions::should_stop: the engine's long loops ask it and stop
// with CANCELLED (issue 14, defect 2), and asking it changes nothing else.
#include <atomic>
#include <cstdint>
#include <optional>

#include "gtest/gtest.h"
#include "ridgeline/engine/analyze.h"
#include "stop.h"
#include "test_hardware.h"

namespace ridgeline::engine {
namespace {

using testing::A100Like;
using testing::MakeScenario;

// A decode walked step by step: a plugin hook makes the engine leave the
// closed-form sum (decode_sum.h).
Scenario HookedDecode(int64_t generated) {
  Scenario s = MakeScenario("llama-2-7b", A100Like());
  s.workload = {1, 512, generated};
  s.options.suggestions = false;
  s.hardware.efficiency_hook = [](const OpShape&) {
    return std::optional<OpEfficiency>(OpEfficiency{0.5, 0.8});
  };
  return s;
}

TEST(StopPollTest, AsksFirstThenEverySixteenthTickAndStaysStopped) {
  int asked = 0;
  bool answer = false;
  const std::function<bool()> fn = [&] {
    ++asked;
    return answer;
  };
  internal::StopPoll poll(fn);
  EXPECT_FALSE(poll.Tick());  // tick 0: asked
  EXPECT_EQ(asked, 1);
  for (int i = 1; i < 16; ++i) EXPECT_FALSE(poll.Tick());  // ticks 1-15
  EXPECT_EQ(asked, 1);
  answer = true;
  EXPECT_TRUE(poll.Tick());  // tick 16: asked again
  EXPECT_EQ(asked, 2);
  answer = false;
  EXPECT_TRUE(poll.Tick());  // sticky, not asked
  EXPECT_EQ(asked, 2);
  internal::StopPoll never{std::function<bool()>()};
  EXPECT_FALSE(never.Tick());
}

TEST(StopTest, HookedDecodeStopsWhenAsked) {
  // 10^6 steps; the answer turns to stop at the 10th question, i.e. after
  // 9 x 16 = 144 steps of the loop.
  Scenario s = HookedDecode(1'000'001);
  std::atomic<int> asked{0};
  s.options.should_stop = [&] { return asked.fetch_add(1) + 1 >= 10; };
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled) << r.status();
  EXPECT_EQ(asked.load(), 10);
}

TEST(StopTest, ChunkedPrefillStopsWhenAsked) {
  // 10^6 one-token chunks, closed-form decode: only the chunk loop asks.
  Scenario s = MakeScenario("llama-2-7b", A100Like());
  s.workload = {1, 1'000'000, 2};
  s.options.suggestions = false;
  s.options.prefill_chunk_tokens = 1;
  std::atomic<int> asked{0};
  s.options.should_stop = [&] { return asked.fetch_add(1) + 1 >= 3; };
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled) << r.status();
  EXPECT_EQ(asked.load(), 3);
}

TEST(StopTest, AskingWithoutStoppingChangesNothing) {
  Scenario s = HookedDecode(5000);
  s.options.suggestions = true;
  absl::StatusOr<AnalysisResult> plain = Analyze(s);
  int asked = 0;
  s.options.should_stop = [&] {
    ++asked;
    return false;
  };
  absl::StatusOr<AnalysisResult> polled = Analyze(s);
  ASSERT_TRUE(plain.ok() && polled.ok()) << polled.status();
  EXPECT_GT(asked, 0);
  EXPECT_EQ(plain->ttft_seconds, polled->ttft_seconds);
  EXPECT_EQ(plain->tpot_mean_seconds, polled->tpot_mean_seconds);
  EXPECT_EQ(plain->e2e_seconds, polled->e2e_seconds);
  EXPECT_EQ(plain->suggestions.size(), polled->suggestions.size());
}

}  // namespace
}  // namespace ridgeline::engine
