// Deployments (serving/deployment.h): replicas behind a router, and a
// prefill pool handing the KV to a decode pool; goldens traced by hand
// beside each assertion. Also the router and scheduler policies.
#include "ridgeline/serving/deployment.h"

#include <span>
#include <vector>

#include "gtest/gtest.h"
#include "ridgeline/serving/router.h"
#include "ridgeline/serving/scheduler.h"

namespace ridgeline::serving {
namespace {

// A step of 10 ms + 1 ms per new token (prefill chunk tokens, one per
// decode), whatever the contexts.
class TenPlusOnePerToken final : public StepCost {
 public:
  absl::StatusOr<StepTime> Time(
      std::span<const SequenceInStep> seqs) const override {
    int64_t tokens = 0;
    for (const SequenceInStep& s : seqs) tokens += s.new_tokens;
    return StepTime{0.010 + 0.001 * static_cast<double>(tokens),
                    engine::Bound::kMemory};
  }
};

// Room for everything: 4 sequences, 8 tokens a step, 1000 KV slots of 1.
ServingLimits Roomy() { return {4, 8, 1000, 1}; }

SimulationConfig Trace(std::vector<double> times) {
  SimulationConfig c;
  c.arrivals.kind = Arrivals::Kind::kTrace;
  c.arrivals.times = std::move(times);
  c.prompt = LengthDistribution::Fixed(4);
  c.generated = LengthDistribution::Fixed(3);
  return c;
}

TEST(Deployment, TwoReplicasLeastLoadedByHand) {
  TenPlusOnePerToken cost;
  DeploymentSpec d;
  d.pools.push_back({"", &cost, Roomy(), 2, "least-loaded"});
  // Every request: 4 prompt + 3 generated tokens = 7 outstanding tokens.
  absl::StatusOr<DeploymentResult> r =
      SimulateDeployment(d, Trace({0, 0, 0, 0.026}));
  ASSERT_TRUE(r.ok()) << r.status();
  // t=0   r0: loads [0, 0] -> replica 0 (ties to the lowest); r1: [7, 0]
  //       -> 1; r2: [7, 7] -> 0. Replica 0 prefills r0 + r2 (8 tokens,
  //       18 ms, out at 18); replica 1 prefills r1 (14 ms, out at 14).
  // t=14  r1's first token (left: 2); r1 decodes, out at 25.
  // t=18  r0, r2 first tokens (replica 0 left: 4); both decode (12 ms),
  //       out at 30.
  // t=25  r1's 2nd token (left 1); decodes, out at 36.
  // t=26  r3: loads [4, 1] -> replica 1, busy until 36 (left 8).
  // t=30  r0, r2 2nd tokens; both decode, out at 42 (their last).
  // t=36  r1 done (e2e 36); r3 admitted (queue 10 ms), prefill out at 50.
  // t=50  r3's first token (TTFT 24 ms); decodes at 50 -> 61 -> 72 (done).
  const SimulationResult& o = r->overall;
  EXPECT_EQ(o.requests, 4);
  // Steps: replica 0 at 0, 18, 30; replica 1 at 0, 14, 25, 36, 50, 61.
  EXPECT_EQ(o.steps, 9);
  EXPECT_NEAR(o.duration_seconds, 0.072, 1e-12);
  // TTFT 18, 14, 18, 24 ms: nearest rank p50 = 2nd of 4 = 18, p90 = 4th.
  EXPECT_NEAR(o.ttft.p50, 0.018, 1e-12);
  EXPECT_NEAR(o.ttft.p90, 0.024, 1e-12);
  EXPECT_NEAR(o.ttft.mean, 0.0185, 1e-12);
  // E2E 42, 36, 42, 46 ms.
  EXPECT_NEAR(o.e2e.p50, 0.042, 1e-12);
  EXPECT_NEAR(o.e2e.p90, 0.046, 1e-12);
  // TPOT (finish - first) / 2: 12, 11, 12, 11 ms.
  EXPECT_NEAR(o.tpot.p50, 0.011, 1e-12);
  EXPECT_NEAR(o.tpot.p90, 0.012, 1e-12);
  EXPECT_NEAR(o.queue.p90, 0.010, 1e-12);
  ASSERT_EQ(r->pools.size(), 1u);
  EXPECT_EQ(r->pools[0].replicas, 2);
  // Busy: replica 0 0-42 ms, replica 1 0-72 ms: (42 + 72) / 2 / 72.
  EXPECT_NEAR(r->pools[0].utilization, 57.0 / 72.0, 1e-12);
  EXPECT_EQ(r->kv_transfer_seconds.p50, 0);
}

// A part with a stated test link: 2 GB/s both directions (1e9 B/s one
// way) and 1 ms one-way latency; node size unknown -> one node.
engine::Hardware TestPart() {
  engine::Hardware hw;
  hw.id = "test-part";
  hw.interconnect_bytes_per_second = 2e9;
  hw.scale_up_latency_seconds = 1e-3;
  return hw;
}

DeploymentSpec OnePrefillOneDecode(const StepCost& cost,
                                   const engine::Hardware& part,
                                   KvOverlap overlap) {
  DeploymentSpec d;
  d.pools.push_back({"prefill", &cost, Roomy(), 1, "round-robin"});
  d.pools.push_back({"decode", &cost, Roomy(), 1, "round-robin"});
  KvHandoff h;
  h.link = KvLinkBetween({&part, 1}, {&part, 1});
  h.prefill_bytes_per_token = 1e6;  // 1 MB of KV a token on each device
  h.decode_bytes_per_token = 1e6;
  h.overlap = overlap;
  h.layers = 4;
  d.handoff = h;
  return d;
}

TEST(Deployment, OneRequestThroughPrefillAndDecodeByHand) {
  TenPlusOnePerToken cost;
  const engine::Hardware part = TestPart();
  absl::StatusOr<DeploymentResult> r = SimulateDeployment(
      OnePrefillOneDecode(cost, part, KvOverlap::kAfterPrefill), Trace({0}));
  ASSERT_TRUE(r.ok()) << r.status();
  // t=0   the prefill replica admits r0: 4 tokens, 14 ms; its first token
  //       at 14 ms ends its stage there (TTFT 14 ms).
  // t=14  KV of 4 tokens x 1e6 B = 4e6 B / 1e9 B/s = 4 ms + 1 ms latency:
  //       on the decode replica at 19 ms.
  // t=19  the decode replica admits it: one decode token (context 4),
  //       11 ms, out at 30 (2nd token; gap 16 ms).
  // t=30  decodes (context 5), out at 41: the 3rd and last (gap 11 ms).
  const SimulationResult& o = r->overall;
  EXPECT_EQ(o.steps, 3);
  EXPECT_NEAR(o.ttft.p50, 0.014, 1e-12);
  EXPECT_NEAR(o.e2e.p50, 0.041, 1e-12);
  // TPOT (41 - 14) / 2 = 13.5 ms: the transfer is in it.
  EXPECT_NEAR(o.tpot.p50, 0.0135, 1e-12);
  // Inter-token gaps 16 and 11 ms, one token each: p50 = 1st of 2, p90 =
  // 2nd.
  EXPECT_NEAR(o.itl.p50, 0.011, 1e-12);
  EXPECT_NEAR(o.itl.p90, 0.016, 1e-12);
  EXPECT_NEAR(r->kv_transfer_seconds.p50, 0.005, 1e-12);
  EXPECT_NEAR(r->kv_transfer_seconds.p90, 0.005, 1e-12);
  ASSERT_EQ(r->pools.size(), 2u);
  EXPECT_EQ(r->pools[0].name, "prefill");
  EXPECT_EQ(r->pools[0].steps, 1);
  EXPECT_EQ(r->pools[1].steps, 2);
  // Busy 14 of 41 ms (prefill) and 22 of 41 ms (decode, 19-41).
  EXPECT_NEAR(r->pools[0].utilization, 14.0 / 41.0, 1e-12);
  EXPECT_NEAR(r->pools[1].utilization, 22.0 / 41.0, 1e-12);
}

TEST(Deployment, LayerwiseTransferHidesBehindThePrefill) {
  TenPlusOnePerToken cost;
  const engine::Hardware part = TestPart();
  absl::StatusOr<DeploymentResult> r = SimulateDeployment(
      OnePrefillOneDecode(cost, part, KvOverlap::kLayerwise), Trace({0}));
  ASSERT_TRUE(r.ok()) << r.status();
  // Wire 4 ms behind a 14 ms prefill of 4 layers: max(4 / 4, 4 - 14 x 3/4)
  // = 1 ms + 1 ms latency = 2 ms; decode at 16 -> 27 -> 38 ms.
  EXPECT_NEAR(r->kv_transfer_seconds.p50, 0.002, 1e-12);
  EXPECT_NEAR(r->overall.e2e.p50, 0.038, 1e-12);
}

TEST(Deployment, SecondTransferWaitsForTheWire) {
  TenPlusOnePerToken cost;
  const engine::Hardware part = TestPart();
  absl::StatusOr<DeploymentResult> r = SimulateDeployment(
      OnePrefillOneDecode(cost, part, KvOverlap::kAfterPrefill), Trace({0, 0}));
  ASSERT_TRUE(r.ok()) << r.status();
  // Both prefill together (8 tokens, 18 ms); the first transfer takes the
  // wire 18-22 ms (lands at 23), the second waits for it: 22-26 (lands at
  // 27): 5 and 9 ms from the prefill's end. p50 = 1st of 2, p90 = 2nd.
  EXPECT_NEAR(r->kv_transfer_seconds.p50, 0.005, 1e-12);
  EXPECT_NEAR(r->kv_transfer_seconds.p90, 0.009, 1e-12);
}

TEST(Deployment, BadInputNamesTheField) {
  TenPlusOnePerToken cost;
  DeploymentSpec d;
  d.pools.push_back({"decode", &cost, Roomy(), 0, "round-robin"});
  EXPECT_EQ(SimulateDeployment(d, Trace({0})).status().message(),
            "decode_replicas: must be in [1, 4096]; got 0");
  d.pools[0] = {"", &cost, Roomy(), 2, "fastest"};
  absl::Status s = SimulateDeployment(d, Trace({0})).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "router: must be round-robin, least-loaded, power-of-two or "
            "prefix-affinity; got \"fastest\"");
  // A request of 4 + 3 tokens needs 6 slots; a replica of 5 cannot hold it.
  d.pools[0] = {"", &cost, {4, 8, 5, 1}, 2, "round-robin"};
  s = SimulateDeployment(d, Trace({0})).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "a request of 4 + 3 tokens needs 6 KV slots; the replica holds 5");
}

TEST(Router, Policies) {
  const std::vector<int64_t> loads = {9, 3, 3, 7};
  RoundRobinRouter rr;
  EXPECT_EQ(rr.Pick(loads), 0u);
  EXPECT_EQ(rr.Pick(loads), 1u);
  EXPECT_EQ(rr.Pick(loads), 2u);
  EXPECT_EQ(rr.Pick(loads), 3u);
  EXPECT_EQ(rr.Pick(loads), 0u);
  LeastLoadedRouter ll;
  EXPECT_EQ(ll.Pick(loads), 1u);  // 3 tokens, ties to the lowest index
  // Two replicas: both are always drawn, so the lighter one wins.
  PowerOfTwoRouter p2(7);
  const std::vector<int64_t> two = {5, 0};
  for (int i = 0; i < 20; ++i) EXPECT_EQ(p2.Pick(two), 1u);
  // Never the heaviest of four (it loses to whichever other is drawn).
  for (int i = 0; i < 200; ++i) EXPECT_NE(p2.Pick(loads), 0u);
}

TEST(Scheduler, DecodeFirstAndPrefillFirstSpendTheBudgetDifferently) {
  // One request decoding (prompt 4, 1 token out), one waiting with a
  // 4-token prompt; budget 4.
  std::vector<RequestState> reqs(2);
  reqs[0] = {0, 0, 0.01, -1, 4, 3, 4, 1, 6, 0.01, 3};
  reqs[1] = {0, -1, -1, -1, 4, 3, 0, 0, 6, -1, 3};
  for (int policy = 0; policy < 2; ++policy) {
    std::vector<RequestState> r = reqs;
    std::vector<int64_t> running = {0}, waiting = {1};
    size_t head = 0;
    int64_t running_total = 1, admissions = 1;
    KvBlockCache kv(100, 1);
    ASSERT_TRUE(kv.TryAdmit(0, r[0], 0));  // r0 holds its 6 slots
    SchedulerView view{r,          running, waiting, head, running_total,
                       admissions, kv,      nullptr, 0.02};
    Batch batch;
    if (policy == 0) {
      DecodeFirstScheduler().Schedule({4, 4}, view, batch);
      // The decode token first (context 4 + 1 - 1), then 3 of r1's prompt.
      ASSERT_EQ(batch.sequences.size(), 2u);
      EXPECT_EQ(batch.sequences[0].new_tokens, 1);
      EXPECT_EQ(batch.sequences[0].context_tokens, 4);
      EXPECT_EQ(batch.sequences[1].new_tokens, 3);
    } else {
      PrefillFirstScheduler().Schedule({4, 4}, view, batch);
      // r1's whole prompt takes the budget; the decode waits.
      ASSERT_EQ(batch.sequences.size(), 1u);
      EXPECT_EQ(batch.sequences[0].new_tokens, 4);
      EXPECT_EQ(batch.members[0].request, 1);
    }
    EXPECT_EQ(head, 1u);
    EXPECT_EQ(kv.used_tokens(), 12);  // r1's 6 slots allocated
    EXPECT_DOUBLE_EQ(r[1].admitted, 0.02);
  }
  EXPECT_EQ(MakeScheduler("lottery", "scheduler").status().message(),
            "scheduler: must be decode-first or prefill-first; got "
            "\"lottery\"");
}

}  // namespace
}  // namespace ridgeline::serving
