// Prefix caching (serving/kv_cache.h): the block manager's hits, reference
// counts and eviction order by hand, the simulation skipping cached
// prefills while attention still reads them, and the hit rate against the
// ideal reuse of the Mooncake excerpt (tests/fixtures/traces/README.md).
#include <algorithm>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ridgeline/serving/deployment.h"
#include "ridgeline/serving/kv_cache.h"
#include "ridgeline/serving/router.h"
#include "ridgeline/serving/simulate.h"
#include "ridgeline/serving/trace.h"
#include "linear_step.h"

namespace ridgeline::serving {
namespace {

// Requests whose prompts all start with the same `shared` tokens (one
// unit), as --shared-prefix makes them.
PromptContent Shared(int64_t shared, int64_t requests) {
  PromptContent c;
  c.unit_tokens = shared;
  for (int64_t i = 0; i < requests; ++i) {
    c.StartRequest();
    c.Append(ChainHash(0, 7));
  }
  return c;
}

RequestState Request(int64_t prompt, int64_t reserve) {
  RequestState r;
  r.prompt = prompt;
  r.generated_target = 1;
  r.reserve = reserve;
  return r;
}

// A unit longer than a slab (KvBlockCache::kMaxSlab = 64 blocks): a
// 1,000-token shared prefix in blocks of 4 is 250 blocks over 4 slabs; it
// is found whole, and after its tail is evicted, its head.
TEST(PrefixCache, AUnitLongerThanASlabIsFoundWhole) {
  const PromptContent content = Shared(1000, 3);
  KvBlockCache kv(2000, 4, &content, true);
  std::vector<RequestState> r(3, Request(1100, 1100));
  ASSERT_TRUE(kv.TryAdmit(0, r[0], 0));
  r[0].prefilled = 1100;
  kv.Register(0, r[0], 1100, 1);
  EXPECT_EQ(r[0].cached_blocks, 250);
  kv.Release(0, r[0], 2);
  EXPECT_EQ(kv.idle_tokens(), 1000);
  // r1 and r2 share all 250 blocks: each allocates only its other 100.
  ASSERT_TRUE(kv.TryAdmit(1, r[1], 3));
  ASSERT_TRUE(kv.TryAdmit(2, r[2], 3));
  EXPECT_EQ(r[1].prefix_hit_tokens, 1000);
  EXPECT_EQ(r[2].prefix_hit_tokens, 1000);
  EXPECT_EQ(kv.used_tokens(), 1200);
  kv.Release(1, r[1], 4);
  kv.Release(2, r[2], 4);  // last to first: the tail is the oldest idle
  // A request with no shared content takes 1500 slots: 1500 + 1000 idle >
  // 2000, so the oldest 125 blocks (the prefix's tail, 500 tokens) go.
  RequestState other = Request(1500, 1500);
  ASSERT_TRUE(kv.TryAdmit(7, other, 5));
  EXPECT_EQ(kv.evicted_blocks(), 125);
  kv.Release(7, other, 6);
  // The head is still there: 125 blocks, across the first two slabs.
  RequestState again = Request(1100, 1100);
  ASSERT_TRUE(kv.TryAdmit(0, again, 7));
  EXPECT_EQ(again.prefix_hit_tokens, 500);
}

TEST(PrefixCache, ThreeRequestsShareAPrefixByHand) {
  // Blocks of 4 tokens; prompts of 10 tokens whose first 8 are shared; a
  // request reserves SlotsFor(10 + 1 - 1) = 12 slots.
  const PromptContent content = Shared(8, 3);
  KvBlockCache kv(100, 4, &content, true);
  std::vector<RequestState> r(3, Request(10, 12));
  // r0: nothing cached yet; it computes its prompt and registers its
  // shareable blocks: min(10, 8) / 4 = 2.
  ASSERT_TRUE(kv.TryAdmit(0, r[0], 0));
  EXPECT_EQ(r[0].prefilled, 0);
  EXPECT_EQ(kv.used_tokens(), 12);
  r[0].prefilled = 10;
  kv.Register(0, r[0], r[0].prefilled, 1);
  EXPECT_EQ(r[0].cached_blocks, 2);
  EXPECT_EQ(kv.used_tokens(), 12);  // its own blocks became the cached ones
  // r1 finds both (hit 8 tokens, at most (10 - 1) / 4 = 2 blocks) and
  // allocates only its other 12 - 8 = 4 slots.
  ASSERT_TRUE(kv.TryAdmit(1, r[1], 2));
  EXPECT_EQ(r[1].prefix_hit_tokens, 8);
  EXPECT_EQ(r[1].prefilled, 8);  // its prefill starts past the hit
  EXPECT_EQ(kv.used_tokens(), 16);
  // r0 leaves: its 4 own slots go; the shared blocks are still r1's.
  kv.Release(0, r[0], 3);
  EXPECT_EQ(kv.used_tokens(), 12);
  EXPECT_EQ(kv.idle_tokens(), 0);
  // r1 leaves: the shared blocks stay cached, held by no one (8 slots).
  kv.Release(1, r[1], 4);
  EXPECT_EQ(kv.used_tokens(), 0);
  EXPECT_EQ(kv.idle_tokens(), 8);
  // r2 takes them back from the idle list.
  ASSERT_TRUE(kv.TryAdmit(2, r[2], 5));
  EXPECT_EQ(r[2].prefix_hit_tokens, 8);
  EXPECT_EQ(kv.used_tokens(), 12);
  EXPECT_EQ(kv.idle_tokens(), 0);
  // 16 of the 30 prompt tokens served from the cache: 53 %.
  EXPECT_EQ(kv.hit_tokens(), 16);
  EXPECT_EQ(kv.evicted_blocks(), 0);
}

TEST(PrefixCache, EvictsLeastRecentlyReleasedTailFirst) {
  // 16 slots, blocks of 4; prompts of 9 tokens (reserve 12), the first 8
  // shared by requests of the same content: a (requests 0, 2), b (1).
  PromptContent c;
  c.unit_tokens = 8;
  for (uint64_t id : {1, 2, 1}) {
    c.StartRequest();
    c.Append(ChainHash(0, id));
  }
  KvBlockCache kv(16, 4, &c, true);
  std::vector<RequestState> r(3, Request(9, 12));
  ASSERT_TRUE(kv.TryAdmit(0, r[0], 0));
  r[0].prefilled = 9;
  kv.Register(0, r[0], r[0].prefilled, 0);
  kv.Release(0, r[0], 1);  // idle, oldest first: a1, a0
  EXPECT_EQ(kv.idle_tokens(), 8);
  // b needs 12 slots: 0 used + 12 + 8 idle > 16 evicts one block, a's
  // tail (released first).
  ASSERT_TRUE(kv.TryAdmit(1, r[1], 2));
  EXPECT_EQ(kv.evicted_blocks(), 1);
  r[1].prefilled = 9;
  kv.Register(1, r[1], r[1].prefilled, 2);
  kv.Release(1, r[1], 3);  // idle: a0, b1, b0
  // a again: a0 hits, a1 was evicted: 4 tokens. It needs 12 - 4 = 8 slots
  // more: 4 (a0) + 8 + 8 idle (b1, b0) > 16 evicts b1, the oldest now.
  ASSERT_TRUE(kv.TryAdmit(2, r[2], 4));
  EXPECT_EQ(r[2].prefix_hit_tokens, 4);
  EXPECT_EQ(kv.evicted_blocks(), 2);
  EXPECT_EQ(kv.used_tokens(), 12);
  EXPECT_EQ(kv.idle_tokens(), 4);  // b0
}

TEST(PrefixCache, BlocksComputedTwiceAtOnceAreKeptOnce) {
  const PromptContent content = Shared(8, 2);
  KvBlockCache kv(100, 4, &content, true);
  std::vector<RequestState> r(2, Request(10, 12));
  ASSERT_TRUE(kv.TryAdmit(0, r[0], 0));
  ASSERT_TRUE(kv.TryAdmit(1, r[1], 0));  // before r0 registered: no hit
  EXPECT_EQ(r[1].prefix_hit_tokens, 0);
  EXPECT_EQ(kv.used_tokens(), 24);
  r[0].prefilled = r[1].prefilled = 10;
  kv.Register(0, r[0], r[0].prefilled, 1);
  kv.Register(1, r[1], r[1].prefilled,
              1);  // takes r0's two blocks, frees its copies
  EXPECT_EQ(kv.used_tokens(), 16);
  kv.Release(0, r[0], 2);
  kv.Release(1, r[1], 2);
  EXPECT_EQ(kv.used_tokens(), 0);
  EXPECT_EQ(kv.idle_tokens(), 8);
}

TEST(PrefixCache, AFullHitStillComputesTheLastToken) {
  // An 8-token prompt entirely shared: at most (8 - 1) / 4 = 1 block hits,
  // so the last block is computed (the first token's logits).
  const PromptContent content = Shared(8, 2);
  KvBlockCache kv(100, 4, &content, true);
  std::vector<RequestState> r(2, Request(8, 8));
  ASSERT_TRUE(kv.TryAdmit(0, r[0], 0));
  r[0].prefilled = 8;
  kv.Register(0, r[0], r[0].prefilled, 1);
  ASSERT_TRUE(kv.TryAdmit(1, r[1], 1));
  EXPECT_EQ(r[1].prefix_hit_tokens, 4);
}

using Recording = testing::LinearStep;  // 10 ms + 1 ms a new token

TEST(PrefixCache, SimulationSkipsTheCachedPrefillButAttendsToIt) {
  // Two requests of 100 prompt tokens (the first 64 shared) and 2 output
  // tokens, at 0 and 1 s; blocks of 16, room for everything.
  Recording cost;
  SimulationConfig c;
  c.limits = {4, 8192, 100000, 16};
  c.arrivals.kind = Arrivals::Kind::kTrace;
  c.arrivals.times = {0, 1};
  c.prompt = LengthDistribution::Fixed(100);
  c.generated = LengthDistribution::Fixed(2);
  c.shared_prefix_tokens = 64;
  absl::StatusOr<SimulationResult> r = Simulate(cost, c);
  ASSERT_TRUE(r.ok()) << r.status();
  // Steps: r0's prefill {0 + 100}, its decode, r1's prefill, its decode.
  ASSERT_EQ(cost.steps.size(), 4u);
  EXPECT_EQ(cost.steps[0][0].context_tokens, 0);
  EXPECT_EQ(cost.steps[0][0].new_tokens, 100);
  // r1 finds 64 / 16 = 4 blocks: 36 new tokens attend to 64 cached + 36.
  EXPECT_EQ(cost.steps[2][0].context_tokens, 64);
  EXPECT_EQ(cost.steps[2][0].new_tokens, 36);
  // TTFT: r0 10 + 100 ms = 110 ms; r1 10 + 36 = 46 ms.
  EXPECT_NEAR(r->ttft.p90, 0.110, 1e-12);
  EXPECT_NEAR(r->ttft.p50, 0.046, 1e-12);
  EXPECT_EQ(r->prefill_tokens_saved, 64);
  EXPECT_DOUBLE_EQ(r->prefix_hit_rate, 64.0 / 200);  // 0.32

  // Off: both prefills computed whole.
  c.limits.prefix_caching = false;
  Recording off;
  r = Simulate(off, c);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(off.steps[2][0].context_tokens, 0);
  EXPECT_EQ(off.steps[2][0].new_tokens, 100);
  EXPECT_EQ(r->prefill_tokens_saved, 0);
}

std::vector<TraceRequest> MooncakeExcerpt() {
  std::ifstream in(std::string(RIDGELINE_TEST_TRACE_DIR) +
                   "/mooncake-conversation-head.jsonl");
  absl::StatusOr<std::vector<TraceRequest>> t =
      ReadTrace(in, TraceFormat::kMooncake, "mooncake", 100);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : std::vector<TraceRequest>{};
}

TEST(PrefixCache, HitRateOnTheMooncakeExcerptStaysUnderTheIdeal) {
  // Six requests; every prompt starts with block 0 (512 tokens): the ideal
  // (infinite cache, trace_test) is 5 x 512 = 2,560 of 31,281 tokens.
  Recording cost;
  SimulationConfig c;
  c.limits = {256, 8192, 1'000'000, 16};
  const std::vector<TraceRequest> trace = MooncakeExcerpt();
  c.arrivals = TraceArrivals(trace);
  absl::StatusOr<SimulationResult> r = Simulate(cost, c);
  ASSERT_TRUE(r.ok()) << r.status();
  // Step 1 takes r0's 6,758 tokens and 1,434 of r1's (budget 8,192), both
  // before anything is cached: r1 misses. r0's blocks are registered when
  // that step ends, so r2, r3, r4 (admitted from step 2) and r5 (at 3 s)
  // hit block 0: 4 x 512 = 2,048 tokens.
  EXPECT_EQ(r->prefill_tokens_saved, 2048);
  EXPECT_LE(r->prefill_tokens_saved, IdealPrefixReuse(trace).hit_tokens);
  EXPECT_NEAR(r->prefix_hit_rate, 2048.0 / 31281, 1e-12);
  // A cache that holds one request at a time (the largest reserves
  // 7,236 + 794 - 1 = 8,029 tokens: 8,032 slots) runs them one after the
  // other: each finds block 0, which survives the evictions because a
  // prefix's tail is evicted before its head: the ideal, 2,560.
  c.limits.kv_capacity_tokens = 8032;
  Recording small;
  r = Simulate(small, c);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->prefill_tokens_saved, 2560);
}

TEST(PrefixAffinityRouter, LongestPrefixWithinTheLoadBoundByHand) {
  PrefixAffinityRouter router;
  // Loads 1,000, 900, 1,100 and a request of 100 tokens: the bound is
  // 1.25 x (3,000 + 100) / 3 = 1,291.7; every replica is under it, so the
  // one holding 512 cached tokens wins, though it is the most loaded.
  const std::vector<int64_t> loads = {1000, 900, 1100};
  EXPECT_EQ(router.PickFor(loads, std::vector<int64_t>{0, 0, 512}, 100), 2u);
  // Loads 300, 0, 50: bound 1.25 x 450 / 3 = 187.5; replica 0 is over it
  // (its 512 cached tokens do not count), of the others replica 2 holds
  // the longer prefix.
  EXPECT_EQ(router.PickFor(std::vector<int64_t>{300, 0, 50},
                           std::vector<int64_t>{512, 0, 256}, 100),
            2u);
  // No hit anywhere: the least loaded.
  EXPECT_EQ(router.PickFor(loads, std::vector<int64_t>{0, 0, 0}, 100), 1u);
  EXPECT_EQ(router.Pick(loads), 1u);
}

// 40 chat sessions over 4 replicas, starting 50 ms apart, turns 5 s apart:
// each turn's prompt is the session's previous one plus two new 512-token
// blocks (a Mooncake-style trace), its output 5-44 tokens (varied, so the
// replicas' loads differ from turn to turn). Prefix-affinity sends a turn
// back to the replica that holds its session; least-loaded scatters them
// (measured: 34 % of prompt tokens found against affinity's 67 %), so it
// recomputes prefixes, which costs time to first token (33 vs 21 ms).
TEST(PrefixAffinityRouter, FindsMoreSessionPrefixesThanLeastLoaded) {
  std::vector<TraceRequest> trace;
  uint64_t next_id = 1;
  for (int session = 0; session < 40; ++session) {
    std::vector<uint64_t> ids;
    for (int turn = 0; turn < 5; ++turn) {
      ids.push_back(next_id++);
      ids.push_back(next_id++);
      TraceRequest r;
      r.arrival_seconds = 0.05 * session + 5.0 * turn;
      r.prompt_tokens = static_cast<int64_t>(ids.size()) * 512;
      r.generated_tokens = 5 + (7 * session + 13 * turn) % 40;
      r.block_hashes = ids;
      trace.push_back(r);
    }
  }
  std::stable_sort(trace.begin(), trace.end(),
                   [](const TraceRequest& a, const TraceRequest& b) {
                     return a.arrival_seconds < b.arrival_seconds;
                   });
  testing::LinearStep cost(0.010, 1e-5);  // 10 ms + 10 us a new token
  SimulationConfig c;
  c.arrivals = TraceArrivals(trace);
  const IdealReuse ideal = IdealPrefixReuse(trace);
  // Turn k > 0 reuses its 2k earlier blocks: (2 + 4 + 6 + 8) / (2 + 4 +
  // 6 + 8 + 10) = 2/3 of the prompt tokens.
  EXPECT_DOUBLE_EQ(ideal.hit_rate(), 20.0 / 30);
  SimulationResult by[2];
  const char* routers[2] = {"least-loaded", "prefix-affinity"};
  for (int k = 0; k < 2; ++k) {
    DeploymentSpec d;
    d.pools.push_back({"", &cost, {64, 8192, 1'000'000, 16}, 4, routers[k]});
    absl::StatusOr<DeploymentResult> r = SimulateDeployment(d, c);
    ASSERT_TRUE(r.ok()) << r.status();
    by[k] = r->overall;
    EXPECT_LE(by[k].prefix_hit_rate, ideal.hit_rate()) << routers[k];
  }
  // Each turn arrives after its session's previous turn has finished, so
  // affinity finds every earlier block: the ideal.
  EXPECT_DOUBLE_EQ(by[1].prefix_hit_rate, ideal.hit_rate());
  EXPECT_LT(by[0].prefix_hit_rate, 0.8 * by[1].prefix_hit_rate);
  EXPECT_LT(by[1].ttft.mean, by[0].ttft.mean);
}

}  // namespace
}  // namespace ridgeline::serving
