// KV offload tiers (serving/kv_offload.h): which tiers a part offers, the
// recompute cost read off the step model, the block manager demoting
// evicted blocks and reloading them by the rule, and the reload time charged
// to the step that admits them. Goldens by hand.
#include "ridgeline/serving/kv_offload.h"

#include <span>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ridgeline/serving/kv_cache.h"
#include "ridgeline/serving/simulate.h"
#include "ridgeline/serving/trace.h"
#include "linear_step.h"

namespace ridgeline::serving {
namespace {

RequestState Request(int64_t prompt, int64_t reserve) {
  RequestState r;
  r.prompt = prompt;
  r.generated_target = 1;
  r.reserve = reserve;
  return r;
}

// Requests of one 8-token unit each, named by `ids` (equal ids share it).
PromptContent Units(std::vector<uint64_t> ids) {
  PromptContent c;
  c.unit_tokens = 8;
  for (uint64_t id : ids) {
    c.StartRequest();
    c.Append(ChainHash(0, id));
  }
  return c;
}

OffloadTier Tier(const char* name, int64_t capacity, double per_token) {
  OffloadTier t;
  t.name = name;
  t.capacity_tokens = capacity;
  t.seconds_per_token = per_token;
  return t;
}

TEST(KvOffload, TiersOfAPartByHand) {
  engine::Hardware hw;
  engine::MemoryTier hbm;
  hbm.kind = engine::TierKind::kHbm;
  hbm.capacity_bytes = 80.0 * (1 << 30);
  hbm.read_bandwidth_bytes_per_second = 3352e9;
  engine::MemoryTier host;
  host.name = "host DRAM over PCIe 5.0 x16";
  host.kind = engine::TierKind::kHostLink;
  host.capacity_bytes = 256.0 * (1 << 30);      // the plugins' ASSUMPTION
  host.read_bandwidth_bytes_per_second = 64e9;  // PCIe 5.0 x16, one way
  engine::MemoryTier flash;
  flash.name = "UFS 4.0";
  flash.kind = engine::TierKind::kFlash;
  flash.capacity_bytes = 256.0 * (1 << 30);
  flash.read_bandwidth_bytes_per_second = 4.2e9;
  hw.tiers = {hbm, host, flash};
  // Llama-3-8B bf16 on one device: 131,072 B a token. 256 GiB / 131,072 B
  // = 2^38 / 2^17 = 2,097,152 tokens; 131,072 / 64e9 = 2.048 us a token.
  std::vector<OffloadTier> t = OffloadTiers(hw, KvOffload::kHost, 131072, 16);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].name, "host DRAM over PCIe 5.0 x16");
  EXPECT_EQ(t[0].capacity_tokens, 2097152);
  EXPECT_DOUBLE_EQ(t[0].seconds_per_token, 131072 / 64e9);
  t = OffloadTiers(hw, KvOffload::kAll, 131072, 16);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_DOUBLE_EQ(t[1].seconds_per_token, 131072 / 4.2e9);  // 31.2 us
  EXPECT_TRUE(OffloadTiers(hw, KvOffload::kOff, 131072, 16).empty());
  // A tier without a bandwidth is left out, never guessed.
  hw.tiers[1].read_bandwidth_bytes_per_second = 0;
  EXPECT_EQ(OffloadTiers(hw, KvOffload::kHost, 131072, 16).size(), 0u);
  EXPECT_FALSE(ParseKvOffload("disk").ok());
  EXPECT_EQ(ParseKvOffload("disk").status().message(),
            "serving.kv_offload: must be off, host or all; got \"disk\"");
}

TEST(KvOffload, RecomputeCostIsReadOffTheStepModel) {
  // 10 ms + 10 us a new token + 1 ns per new token and context token.
  class Step final : public StepCost {
   public:
    absl::StatusOr<StepTime> Time(
        std::span<const SequenceInStep> seqs) const override {
      double t = 0.010;
      for (const SequenceInStep& s : seqs) {
        t += 1e-5 * static_cast<double>(s.new_tokens) +
             1e-9 * static_cast<double>(s.new_tokens) *
                 static_cast<double>(s.context_tokens);
      }
      return StepTime{t, engine::Bound::kCompute};
    }
  } cost;
  absl::StatusOr<RecomputeCost> r = EstimateRecomputeCost(cost, 100, 1000);
  ASSERT_TRUE(r.ok());
  // (t(100 at 0) - t(1 at 0)) / 99 = 1e-5; (t(100 at 1000) - t(100 at 0))
  // / (100 x 1000) = 1e-9.
  EXPECT_NEAR(r->per_token, 1e-5, 1e-15);
  EXPECT_NEAR(r->per_token_per_context, 1e-9, 1e-18);
  // A 16-token block at context 4096: 16 x (1e-5 + 4.096e-6) = 225.5 us.
  EXPECT_NEAR(r->Seconds(16, 4096), 16 * (1e-5 + 4096e-9), 1e-15);
}

TEST(KvOffload, EvictedBlocksGoToTheHostAndComeBackByHand) {
  // The eviction sequence of PrefixCache.EvictsLeastRecentlyReleasedTailFirst
  // (16 slots, blocks of 4, prompts of 9 reserving 12; a, b, a), with a host
  // tier of 8 tokens reloading at 0.1 ms a token, and recomputing at 1 ms a
  // token: a 4-token block reloads in 0.4 ms against 4 ms, so it comes back.
  const PromptContent c = Units({1, 2, 1});
  KvBlockCache kv(16, 4, &c, true, {Tier("host", 8, 1e-4)}, {1e-3, 0});
  std::vector<RequestState> r(3, Request(9, 12));
  ASSERT_TRUE(kv.TryAdmit(0, r[0], 0));
  kv.Register(0, r[0], 9, 0);
  kv.Release(0, r[0], 1);                // idle: a1, a0
  ASSERT_TRUE(kv.TryAdmit(1, r[1], 2));  // evicts a1: to the host
  EXPECT_EQ(kv.evicted_blocks(), 1);
  EXPECT_EQ(kv.offload_tokens(0), 4);
  kv.Register(1, r[1], 9, 2);
  kv.Release(1, r[1], 3);  // idle: a0, b1, b0
  // a again: a0 in device memory, a1 reloaded from the host: 8 tokens hit,
  // 4 of them reloaded. It needs 12 - 4 = 8 slots: 4 (a0) + 8 + 8 idle >
  // 16 evicts b1, now to the host (a1 left it).
  ASSERT_TRUE(kv.TryAdmit(2, r[2], 4));
  EXPECT_EQ(r[2].prefix_hit_tokens, 8);
  EXPECT_EQ(r[2].offload_hit_tokens, 4);
  EXPECT_EQ(r[2].prefilled, 8);
  EXPECT_EQ(kv.used_tokens(), 12);
  EXPECT_EQ(kv.idle_tokens(), 4);      // b0
  EXPECT_EQ(kv.offload_tokens(0), 4);  // b1
  EXPECT_EQ(kv.offload_peak_tokens(0), 4);
  EXPECT_NEAR(kv.TakeTransferSeconds(), 4e-4, 1e-15);
  EXPECT_EQ(kv.TakeTransferSeconds(), 0);  // taken once
  EXPECT_EQ(kv.hit_tokens(), 8);
  EXPECT_EQ(kv.offload_hit_tokens(), 4);
  // Host held a1 from t = 2 to 4, b1 from 4: 4 tokens x 2 s by then.
  EXPECT_DOUBLE_EQ(kv.offload_token_seconds(0), 8);
}

TEST(KvOffload, ASlowTierIsReloadedOnlyWhereRecomputingCostsMore) {
  // The same a, b, a with a tier at 10 ms a token: a 4-token block reloads
  // in 40 ms. Recomputing it costs 4 x 1 ms = 4 ms at context 0 and, with
  // a steep 10 ms per token and context token, 4 x (1 + 40) ms = 164 ms at
  // context 4 (a1's place): a1 would come back, a block at the start not.
  const RecomputeCost rc{1e-3, 1e-2};
  const OffloadTier slow = Tier("flash", 8, 1e-2);
  EXPECT_FALSE(ReloadBeatsRecompute(slow, rc, 4, 0));
  EXPECT_TRUE(ReloadBeatsRecompute(slow, rc, 4, 4));
  const PromptContent c = Units({1, 2, 1});
  KvBlockCache kv(16, 4, &c, true, {slow}, {1e-3, 0});  // no context term
  std::vector<RequestState> r(3, Request(9, 12));
  ASSERT_TRUE(kv.TryAdmit(0, r[0], 0));
  kv.Register(0, r[0], 9, 0);
  kv.Release(0, r[0], 1);
  ASSERT_TRUE(kv.TryAdmit(1, r[1], 2));
  kv.Register(1, r[1], 9, 2);
  kv.Release(1, r[1], 3);
  ASSERT_TRUE(kv.TryAdmit(2, r[2], 4));
  // 40 ms > 4 ms: a1 stays put and is recomputed; a0 alone hits.
  EXPECT_EQ(r[2].prefix_hit_tokens, 4);
  EXPECT_EQ(r[2].offload_hit_tokens, 0);
}

TEST(KvOffload, AFullTierPassesItsOldestBlockDown) {
  // Host and flash of one block each: a1 to the host, then b1 pushes it on
  // to flash; an admission finds a1 on flash.
  const PromptContent c = Units({1, 2, 1});
  KvBlockCache kv(16, 4, &c, true,
                  {Tier("host", 4, 1e-4), Tier("flash", 4, 2e-4)}, {1e-3, 0});
  std::vector<RequestState> r(3, Request(9, 12));
  ASSERT_TRUE(kv.TryAdmit(0, r[0], 0));
  kv.Register(0, r[0], 9, 0);
  kv.Release(0, r[0], 1);
  ASSERT_TRUE(kv.TryAdmit(1, r[1], 2));  // a1 -> host
  kv.Register(1, r[1], 9, 2);
  kv.Release(1, r[1], 3);  // idle a0, b1, b0
  // An unshared request (no content: no hits) of 12 slots leaves room for
  // one idle block: a0 and b1 go.
  RequestState other = Request(9, 12);
  ASSERT_TRUE(kv.TryAdmit(99, other, 4));
  // a0 then b1 left device memory: host a0 -> pushed a1 to flash, then b1
  // -> pushed a0 to flash, which pushed a1 off the last tier.
  EXPECT_EQ(kv.offload_tokens(0), 4);  // b1
  EXPECT_EQ(kv.offload_tokens(1), 4);  // a0
  kv.Release(99, other, 5);
  ASSERT_TRUE(kv.TryAdmit(2, r[2], 6));
  // a0 on flash reloads (0.8 ms < 4 ms); a1 is gone: 4 tokens.
  EXPECT_EQ(r[2].prefix_hit_tokens, 4);
  EXPECT_EQ(r[2].offload_hit_tokens, 4);
  EXPECT_NEAR(kv.TakeTransferSeconds(), 4 * 2e-4, 1e-15);
}

TEST(KvOffload, TheReloadIsChargedToTheStepThatAdmitsIt) {
  // A trace of three 9-token prompts of one output token, a (blocks 1, 2),
  // b (3, 4), a again, at 0, 1, 2 s; blocks of 4, 16 KV slots, one host
  // tier reloading at 0.1 ms a token; steps of 10 ms + 1 ms a new token
  // (recomputing: 1 ms a token).
  testing::LinearStep cost;
  std::vector<TraceRequest> trace(3);
  const std::vector<uint64_t> ids[3] = {{1, 2}, {3, 4}, {1, 2}};
  for (int i = 0; i < 3; ++i) {
    trace[i] = {static_cast<double>(i), 9, 1, ids[i]};
  }
  SimulationConfig c;
  c.arrivals = TraceArrivals(trace, 4);
  c.limits = {4, 8192, 16, 4};
  c.limits.offload_tiers = {Tier("host DRAM", 64, 1e-4)};
  absl::StatusOr<SimulationResult> r = Simulate(cost, c);
  ASSERT_TRUE(r.ok()) << r.status();
  // a: 10 + 9 = 19 ms. b: its 12 slots evict a's tail to the host; 19 ms.
  // a again: a0 in device memory, a1 reloaded (0.4 ms < 4 ms): one token
  // computed at context 8, 10 + 1 ms, plus the 0.4 ms reload = 11.4 ms.
  EXPECT_NEAR(r->ttft.mean, (0.019 + 0.019 + 0.0114) / 3, 1e-12);
  EXPECT_EQ(r->prefill_tokens_saved, 8);
  EXPECT_EQ(r->offload_hit_tokens, 4);
  EXPECT_DOUBLE_EQ(r->kv_offload_hit_rate, 4.0 / 27);
  ASSERT_EQ(r->kv_tiers.size(), 1u);
  EXPECT_EQ(r->kv_tiers[0].name, "host DRAM");
  EXPECT_EQ(r->kv_tiers[0].capacity_tokens, 64);
  EXPECT_GT(r->kv_tiers[0].usage_mean, 0);
  // One block at a time: a1 until it came back, then b1.
  EXPECT_DOUBLE_EQ(r->kv_tiers[0].usage_peak, 4.0 / 64);
  // Without the tier a1 is dropped: a0 hits, 5 tokens computed at context
  // 4 (15 ms).
  c.limits.offload_tiers.clear();
  r = Simulate(cost, c);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->ttft.mean, (0.019 + 0.019 + 0.015) / 3, 1e-12);
  EXPECT_EQ(r->offload_hit_tokens, 0);
  EXPECT_TRUE(r->kv_tiers.empty());
}

}  // namespace
}  // namespace ridgeline::serving
