// Multi-turn sessions (SimulationConfig::sessions): each turn's prompt is
// the conversation so far, it arrives a think time after the turn before
// it, and the prefix cache finds the earlier turns (their prompts and
// answers). Goldens by hand with a 10 ms + 1 ms-per-new-token step.
#include <span>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ridgeline/serving/deployment.h"
#include "ridgeline/serving/simulate.h"
#include "linear_step.h"

namespace ridgeline::serving {
namespace {

using Recording = testing::LinearStep;  // 10 ms + 1 ms a new token

// Turns of 40 new prompt tokens and 9 generated, blocks of 16, room for
// everything.
SimulationConfig Conversation(int64_t turns, double think) {
  SimulationConfig c;
  c.limits = {4, 8192, 100000, 16};
  c.prompt = LengthDistribution::Fixed(40);
  c.generated = LengthDistribution::Fixed(9);
  c.sessions = {turns, think};
  return c;
}

TEST(Sessions, ThreeTurnsFindTheConversationSoFarByHand) {
  Recording cost;
  SimulationConfig c = Conversation(3, 1.0);
  c.requests = 3;  // one session
  // Prompts: 40; 40 + 9 + 40 = 89; 89 + 9 + 40 = 138 (mean 89 = 40 + 1 x
  // (40 + 9)).
  EXPECT_DOUBLE_EQ(MeanPromptTokens(c), 89);
  absl::StatusOr<SimulationResult> r = Simulate(cost, c);
  ASSERT_TRUE(r.ok()) << r.status();
  // Turn 0 at 0: prefill 40 (50 ms), 8 decodes of 11 ms: ends at 0.138.
  // Its KV covers 40 + 9 - 1 = 48 tokens: 3 blocks registered.
  // Turn 1 at 1.138: 89 tokens, blocks 0-2 cached (48); 41 computed at
  // context 48 (51 ms); ends at 1.138 + 0.051 + 0.088 = 1.277, its KV 97
  // tokens: 6 whole blocks (its content covers (89 + 9) / 16 = 6 units).
  // Turn 2 at 2.277: 138 tokens, 6 blocks cached (96); 42 at context 96.
  ASSERT_EQ(cost.steps.size(), 27u);  // 3 x (1 prefill + 8 decodes)
  EXPECT_EQ(cost.steps[9][0].context_tokens, 48);
  EXPECT_EQ(cost.steps[9][0].new_tokens, 41);
  EXPECT_EQ(cost.steps[18][0].context_tokens, 96);
  EXPECT_EQ(cost.steps[18][0].new_tokens, 42);
  // TTFT 50, 51, 52 ms; the run ends at 2.277 + 0.052 + 0.088 = 2.417 s.
  EXPECT_NEAR(r->ttft.p50, 0.051, 1e-12);
  EXPECT_NEAR(r->ttft.p99, 0.052, 1e-12);
  EXPECT_NEAR(r->duration_seconds, 2.417, 1e-12);
  EXPECT_EQ(r->prefill_tokens_saved, 48 + 96);
  EXPECT_DOUBLE_EQ(r->prefix_hit_rate, 144.0 / (40 + 89 + 138));
}

TEST(Sessions, AClosedLoopClientRunsOneSessionAfterAnother) {
  Recording cost;
  SimulationConfig c = Conversation(2, 0.5);
  c.arrivals.kind = Arrivals::Kind::kConcurrency;
  c.arrivals.concurrency = 1;
  c.requests = 4;  // two sessions of two turns
  absl::StatusOr<SimulationResult> r = Simulate(cost, c);
  ASSERT_TRUE(r.ok()) << r.status();
  // Session 0: turn 0 at 0 ends at 0.138; turn 1 at 0.638 (89 tokens, 48
  // cached: 51 ms + 88 ms) ends at 0.777. Session 1 starts then, without a
  // think time, and shares nothing with session 0: turn 0 ends at 0.915,
  // turn 1 at 1.415 ends at 1.554.
  EXPECT_EQ(cost.steps[18][0].context_tokens, 0);
  EXPECT_EQ(cost.steps[18][0].new_tokens, 40);
  EXPECT_NEAR(r->duration_seconds, 1.554, 1e-12);
  EXPECT_EQ(r->prefill_tokens_saved, 2 * 48);
}

TEST(Sessions, BadInputNamesTheField) {
  Recording cost;
  SimulationConfig c = Conversation(0, 0);
  absl::StatusOr<SimulationResult> r = Simulate(cost, c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "traffic.sessions.turns: must be in [1, 1000]; got 0");
  c = Conversation(2, -1);
  r = Simulate(cost, c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "traffic.sessions.think_time_seconds: must be in [0, 86400] s; "
            "got -1");
  c = Conversation(2, 0);
  c.arrivals.kind = Arrivals::Kind::kTrace;
  c.arrivals.times = {0, 1};
  r = Simulate(cost, c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("traffic.sessions.turns: must be 1 "
                                      "with a trace"),
            std::string::npos);
  // 1000 turns of 10,000 + 9 tokens: the last prompt would pass 10 M.
  c = Conversation(1000, 0);
  c.prompt = LengthDistribution::Fixed(10000);
  r = Simulate(cost, c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("traffic.sessions.turns"),
            std::string::npos);
}

// Item 5 of issue 23 on the sessions workload itself: 200 conversations of
// 5 turns (512 new prompt tokens, 32 generated, 2 s of think time) over 4
// replicas. Prefix-affinity keeps a conversation on the replica holding
// it; least-loaded sends each turn wherever the load is least, so most
// turns recompute their history.
TEST(Sessions, PrefixAffinityKeepsConversationsWhereTheirCacheIs) {
  testing::LinearStep cost(0.010, 1e-5);  // 10 ms + 10 us a new token
  SimulationConfig c;
  c.arrivals.rate = 20;  // sessions/s
  c.requests = 1000;
  c.prompt = LengthDistribution::Fixed(512);
  c.generated = LengthDistribution::Uniform(16, 48);
  c.sessions = {5, 2.0};
  SimulationResult by[2];
  const char* routers[2] = {"least-loaded", "prefix-affinity"};
  for (int k = 0; k < 2; ++k) {
    DeploymentSpec d;
    d.pools.push_back({"", &cost, {64, 8192, 1'000'000, 16}, 4, routers[k]});
    absl::StatusOr<DeploymentResult> r = SimulateDeployment(d, c);
    ASSERT_TRUE(r.ok()) << r.status();
    by[k] = r->overall;
    EXPECT_TRUE(by[k].stable) << routers[k];
  }
  // The ideal: turn k reuses the previous turns' whole blocks, about
  // k x 544 of its 512 + k x 544 tokens: (0 + 544 + 1088 + 1632 + 2176)
  // / (5 x 512 + 5440) = 5440 / 8000 = 0.68.
  EXPECT_GT(by[1].prefix_hit_rate, 0.6);
  EXPECT_LT(by[1].prefix_hit_rate, 0.68);
  EXPECT_LT(by[0].prefix_hit_rate, 0.5 * by[1].prefix_hit_rate);
  EXPECT_LT(by[1].ttft.mean, by[0].ttft.mean);
}

}  // namespace
}  // namespace ridgeline::serving
