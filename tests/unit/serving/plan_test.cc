// The planner: candidates sized by the simulation, costs by hand.
#include "ridgeline/serving/plan.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/serving/prompt_content.h"
#include "ridgeline/serving/trace.h"

namespace ridgeline::serving {
namespace {

// A100-like (312 TFLOP/s bf16, 2039 GB/s, 80 GB; NVIDIA A100 SXM4 80GB
// datasheet) with a hand-set purchase price and board power.
engine::Hardware Device(const char* id, double price_usd) {
  engine::Hardware hw;
  hw.id = id;
  hw.family = "inline";
  hw.plugin = "inline";
  hw.peak_ops_per_second[static_cast<int>(engine::MathType::kBf16)] = 312e12;
  engine::MemoryTier hbm;
  hbm.name = "HBM2e";
  hbm.kind = engine::TierKind::kHbm;
  hbm.capacity_bytes = 80e9;
  hbm.read_bandwidth_bytes_per_second = 2039e9;
  hbm.write_bandwidth_bytes_per_second = 2039e9;
  hw.tiers.push_back(hbm);
  hw.tdp_watts = 400;
  hw.price_usd = price_usd;
  return hw;
}

Candidate Make(const char* id, double price_usd) {
  Candidate c;
  c.scenario.model = engine::FindModel("llama-3.1-8b").value();
  c.scenario.hardware = Device(id, price_usd);
  c.scenario.options.suggestions = false;
  engine::Economics& e = c.scenario.economics;
  e.electricity_usd_per_kwh = 0.1;
  e.pue = 1;
  e.grid_g_co2e_per_kwh = 400;
  e.amortization_years = 4;
  e.utilization = 1;
  c.formats = "bf16/bf16/bf16";
  return c;
}

PlanInput Input() {
  PlanInput in;
  in.traffic.rate = 0.05;
  in.traffic.prompt = LengthDistribution::Fixed(128);
  in.traffic.generated = LengthDistribution::Fixed(32);
  in.slo = {1.0, 0.05};
  in.requests = 100;
  in.candidates = {Make("test-dear", 20000), Make("test-cheap", 10000)};
  return in;
}

TEST(Plan, PicksTheCheaperOfTwoHandComputedDeployments) {
  absl::StatusOr<PlanResult> r = Plan(Input());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->deployments.size(), 2u);
  const Deployment& best = r->deployments[0];
  const Deployment& dear = r->deployments[1];
  ASSERT_TRUE(best.feasible && best.meets_slo) << best.why;
  EXPECT_EQ(best.hardware_id, "test-cheap");
  // One replica: a single A100-like decodes an 8B bf16 model at ~16 GB /
  // 2039 GB/s = 7.9 ms per step, far above 0.05 requests/s.
  EXPECT_EQ(best.replicas, 1);
  EXPECT_EQ(best.devices, 1);
  EXPECT_GT(best.max_rate_per_replica, 0.05);
  // Served output: 0.05 req/s x 32 tokens = 1.6 tokens/s. Cost per second:
  // $10,000 / (4 years x 31,557,600 s x utilization 1) = 7.92202e-5 $/s,
  // plus 400 W x PUE 1 / 3.6e6 J/kWh x $0.1 = 1.11111e-5 $/s; total
  // 9.03313e-5 $/s / 1.6 tokens/s x 1e6 = $56.457/Mtoken.
  const double life = 4 * 365.25 * 24 * 3600;
  const double cheap = (10000 / life + 400 / 3.6e6 * 0.1) / 1.6 * 1e6;
  const double dearer = (20000 / life + 400 / 3.6e6 * 0.1) / 1.6 * 1e6;
  ASSERT_TRUE(best.usd_per_mtoken.has_value());
  EXPECT_NEAR(*best.usd_per_mtoken, cheap, 1e-9);
  EXPECT_NEAR(*best.usd_per_mtoken, 56.457, 1e-3);
  EXPECT_NEAR(*dear.usd_per_mtoken, dearer, 1e-9);  // $105.97/Mtoken
  EXPECT_EQ(best.cost_basis, "purchase");
  // Board power: 400 W / 1.6 tokens/s = 250 J/token; carbon 250 / 3.6e6 x
  // 400 g/kWh x 1e6 = 27,777.8 g/Mtoken (no embodied figure given).
  EXPECT_NEAR(*best.joules_per_token, 250, 1e-9);
  EXPECT_NEAR(*best.g_co2e_per_mtoken, 250 / 3.6e6 * 400 * 1e6, 1e-6);
  EXPECT_GE(best.ttft_headroom, 0);
  EXPECT_GE(best.tpot_headroom, 0);
  // Same latency, higher cost: only the cheaper one is on the front.
  EXPECT_TRUE(best.pareto);
  EXPECT_FALSE(dear.pareto);
  EXPECT_NE(r->headline.find("test-cheap"), std::string::npos);
  EXPECT_NE(r->headline.find("purchase price amortised"), std::string::npos);
}

// Equal cost (one replica each of a $10,000 device: cost depends on the
// price, not the speed, at this light load), but the second device has
// twice the bandwidth, so its e2e p90 is lower: it dominates the first,
// which the cost-ordered sweep listed first must not keep on the front.
// A prefill-heavy traffic whose prompts share a 3584-token system prompt:
// with prefix caching each prompt computes 4096 - 3584 = 512 tokens, an
// eighth, so one replica serves several times the rate (the bound: 2 x 8e9
// x 4096 / 312e12 = 0.21 s of prefill a request without the cache, 26 ms
// with it); without prefix caching the shared prefix changes nothing.
TEST(Plan, ASharedPrefixRaisesTheRateAReplicaServes) {
  PlanInput in = Input();
  in.traffic.rate = 1;
  in.traffic.prompt = LengthDistribution::Fixed(4096);
  in.traffic.generated = LengthDistribution::Fixed(16);
  in.slo = {2.0, 0.5};
  in.candidates = {Make("test-cheap", 10000)};
  absl::StatusOr<PlanResult> plain = Plan(in);
  in.traffic.shared_prefix_tokens = 3584;
  absl::StatusOr<PlanResult> shared = Plan(in);
  in.serving.prefix_caching = false;
  absl::StatusOr<PlanResult> off = Plan(in);
  ASSERT_TRUE(plain.ok() && shared.ok() && off.ok());
  const Deployment& a = plain->deployments[0];
  const Deployment& b = shared->deployments[0];
  ASSERT_TRUE(a.feasible && b.feasible) << a.why << b.why;
  EXPECT_GT(b.offline_output_tokens_per_second,
            3 * a.offline_output_tokens_per_second);
  EXPECT_GT(b.max_rate_per_replica, 3 * a.max_rate_per_replica);
  EXPECT_DOUBLE_EQ(off->deployments[0].max_rate_per_replica,
                   a.max_rate_per_replica);
  in.traffic.shared_prefix_tokens = -1;
  absl::StatusOr<PlanResult> bad = Plan(in);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("traffic.shared_prefix_tokens"),
            std::string::npos);
}

TEST(Plan, MeanPromptOfSessionsByHand) {
  Traffic t;
  t.prompt = LengthDistribution::Fixed(512);
  t.generated = LengthDistribution::Fixed(128);
  t.sessions.turns = 4;
  // Turn k carries k x 640 tokens of history: prompts 512, 1152, 1792,
  // 2432 (mean 1472); cached 0, 640, 1280, 1920 (mean 960, whole 16-token
  // blocks).
  MeanPrompt m = MeanPromptOf(t, true, 16);
  EXPECT_EQ(m.tokens, 1472);
  EXPECT_EQ(m.cached, 960);
  EXPECT_EQ(MeanPromptOf(t, false, 16).cached, 0);
  // One turn: the shared prefix, in whole blocks (250 -> 240).
  t.sessions.turns = 1;
  t.shared_prefix_tokens = 250;
  m = MeanPromptOf(t, true, 16);
  EXPECT_EQ(m.tokens, 512);
  EXPECT_EQ(m.cached, 240);
}

// Four-turn chat sessions: without the cache every turn recomputes its
// history (mean prompt 1472 tokens against 512 new), with it only the new
// ones (plus the history's last partial block); the rate is sessions/s and
// the cost counts their 4 requests.
TEST(Plan, SessionsAreSizedWithTheirReuse) {
  PlanInput in = Input();
  in.traffic.rate = 0.2;
  in.traffic.prompt = LengthDistribution::Fixed(512);
  in.traffic.generated = LengthDistribution::Fixed(128);
  in.traffic.sessions = {4, 1.0};
  in.slo = {2.0, 0.5};
  in.candidates = {Make("test-cheap", 10000)};
  absl::StatusOr<PlanResult> cached = Plan(in);
  in.serving.prefix_caching = false;
  absl::StatusOr<PlanResult> off = Plan(in);
  ASSERT_TRUE(cached.ok() && off.ok());
  const Deployment& a = cached->deployments[0];
  const Deployment& b = off->deployments[0];
  ASSERT_TRUE(a.feasible && b.feasible) << a.why << b.why;
  EXPECT_GT(a.max_rate_per_replica, b.max_rate_per_replica);
  EXPECT_GT(a.offline_output_tokens_per_second,
            b.offline_output_tokens_per_second);
  // 0.2 sessions/s x 4 turns x 128 tokens = 102.4 output tokens/s: one
  // replica's cost per second over them.
  const double life = 4 * 365.25 * 24 * 3600;
  EXPECT_NEAR(*a.usd_per_mtoken,
              (10000 / life + 400 / 3.6e6 * 0.1) / 102.4 * 1e6, 1e-9);
  in.traffic.sessions.turns = 0;
  absl::StatusOr<PlanResult> bad = Plan(in);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("traffic.sessions.turns"),
            std::string::npos)
      << bad.status();
}

// A trace's requests (plan --trace): three prompts over 512-token units,
// the first unit shared. Hits (an earlier request had the unit's chain):
// request 0 none; request 1 unit A, 512 tokens; request 2 units A and B
// (B's 88 tokens: 600 - 512), 600, but at least one prompt token is
// computed, whole 16-token blocks: 599 -> 592. Mean prompt 2600 / 3 =
// 866.67 -> 867; mean cached (0 + 512 + 592) / 3 = 368.
TEST(Plan, MeanPromptOfATraceByHand) {
  Arrivals a;
  a.prompt_tokens = {1000, 1000, 600};
  a.generated_tokens = {10, 20, 30};
  a.content.unit_tokens = 512;
  const uint64_t A = ChainHash(0, 1), B = ChainHash(A, 2), C = ChainHash(A, 3);
  for (const std::vector<uint64_t>& chain :
       {std::vector<uint64_t>{A, B}, {A, C}, {A, B}}) {
    a.content.StartRequest();
    for (uint64_t u : chain) a.content.Append(u);
  }
  EXPECT_EQ(IdealHitTokens(a), (std::vector<int64_t>{0, 512, 600}));
  Traffic t;
  SetTraceRequests(a, &t);
  MeanPrompt m = MeanPromptOf(t, true, 16);
  EXPECT_EQ(m.tokens, 867);
  EXPECT_EQ(m.cached, 368);
  EXPECT_EQ(MeanPromptOf(t, false, 16).cached, 0);
  // The lengths become the traffic's distributions: means 866.67 and 20.
  EXPECT_NEAR(t.prompt.Mean(), 2600.0 / 3, 1e-9);
  EXPECT_DOUBLE_EQ(t.generated.Mean(), 20);
  EXPECT_EQ(t.prompt.Max(), 1000);
}

// A trace of lengths alone, re-timed: 128 requests of 128 + 32 tokens are
// the fixed distributions' requests (a fixed length draws nothing from the
// seed's stream, so the Poisson gaps are the same numbers): the same plan
// to the last digit, when the runs are equally long (max_num_seqs 8: 16
// turnovers are 128 requests).
TEST(Plan, ATraceOfFixedLengthsPlansAsTheFixedDistributions) {
  PlanInput in = Input();
  in.candidates = {Make("test-cheap", 10000)};
  in.traffic.rate = 2;
  in.requests = 128;
  in.serving.max_num_seqs = 8;
  absl::StatusOr<PlanResult> fixed = Plan(in);
  Arrivals a;
  a.prompt_tokens.assign(128, 128);
  a.generated_tokens.assign(128, 32);
  SetTraceRequests(a, &in.traffic);
  absl::StatusOr<PlanResult> traced = Plan(in);
  ASSERT_TRUE(fixed.ok() && traced.ok());
  const Deployment& f = fixed->deployments[0];
  const Deployment& t = traced->deployments[0];
  ASSERT_TRUE(f.meets_slo) << f.why;
  EXPECT_EQ(t.simulated_requests, 128);
  EXPECT_EQ(f.simulated_requests, 128);
  EXPECT_DOUBLE_EQ(t.max_rate_per_replica, f.max_rate_per_replica);
  EXPECT_DOUBLE_EQ(t.ttft_p90_seconds, f.ttft_p90_seconds);
  EXPECT_EQ(t.replicas, f.replicas);
  // A run replays at most the trace: asking for more changes nothing.
  in.requests = 1000;
  absl::StatusOr<PlanResult> longer = Plan(in);
  ASSERT_TRUE(longer.ok());
  EXPECT_EQ(longer->deployments[0].simulated_requests, 128);
  // Sessions are not a trace's.
  in.traffic.sessions.turns = 2;
  absl::StatusOr<PlanResult> bad = Plan(in);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("traffic.sessions.turns"),
            std::string::npos)
      << bad.status();
}

TEST(Plan, FrontDropsAnEqualCostSlowerDeployment) {
  PlanInput in = Input();
  in.candidates = {Make("test-slow", 10000), Make("test-fast", 10000)};
  in.candidates[1].scenario.hardware.tiers[0].read_bandwidth_bytes_per_second *= 2;
  in.candidates[1].scenario.hardware.tiers[0].write_bandwidth_bytes_per_second *= 2;
  absl::StatusOr<PlanResult> r = Plan(in);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->deployments.size(), 2u);
  const Deployment& slow = r->deployments[0];  // stable: input order kept
  const Deployment& fast = r->deployments[1];
  ASSERT_EQ(slow.hardware_id, "test-slow");
  ASSERT_TRUE(slow.meets_slo && fast.meets_slo);
  EXPECT_DOUBLE_EQ(*slow.usd_per_mtoken, *fast.usd_per_mtoken);
  EXPECT_LT(fast.e2e_p90_seconds, slow.e2e_p90_seconds);
  EXPECT_FALSE(slow.pareto);
  EXPECT_TRUE(fast.pareto);
  EXPECT_EQ(r->pareto, std::vector<int>{1});
}

TEST(Plan, ElectricityOnlyHeadlineSaysSo) {
  PlanInput in = Input();
  in.candidates = {Make("test-unpriced", 0)};
  in.candidates[0].scenario.hardware.price_usd.reset();
  absl::StatusOr<PlanResult> r = Plan(in);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->deployments[0].cost_basis, "energy-only");
  EXPECT_NE(r->headline.find("ENERGY ONLY"), std::string::npos);
}

// Issue 20 item 3: a rental-priced and a purchase-priced part in one
// ranking are not the same money; the headline says so, naming each basis'
// hardware. The rental price is the candidate's own (a per-part request
// price): $1/h x 1 device / 1.6 tokens/s (0.05 req/s x 32) x 1e6 / 3600 =
// $173.6/Mtoken, dearer than the purchase-priced $56.457.
TEST(Plan, MixedCostBasesSayTheyAreMixed) {
  PlanInput in = Input();
  in.candidates = {Make("test-cheap", 10000), Make("test-rented", 10000)};
  in.candidates[1].scenario.economics.usd_per_device_hour = 1;
  absl::StatusOr<PlanResult> r = Plan(in);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->deployments.size(), 2u);
  const Deployment& rented = r->deployments[1];
  EXPECT_EQ(rented.hardware_id, "test-rented");
  EXPECT_EQ(rented.cost_basis, "rental");
  EXPECT_EQ(rented.price_source, "request: $1/device-hour");
  EXPECT_NEAR(*rented.usd_per_mtoken, 1.0 / 3600 / 1.6 * 1e6, 1e-9);
  EXPECT_NE(r->headline.find("MIXED COST BASES, not comparable: purchase "
                             "(test-cheap), rental (test-rented)"),
            std::string::npos)
      << r->headline;
  // One basis: no such clause.
  in.candidates[0].scenario.economics.usd_per_device_hour = 1;
  r = Plan(in);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->headline.find("MIXED"), std::string::npos) << r->headline;
}

// The pure roofline is a bound: the headline says so in its one line, as
// simulate's header does ("pure roofline (upper bound)"); a calibrated
// plan's does not.
TEST(Plan, PureRooflineHeadlineSaysBound) {
  PlanInput in = Input();
  in.candidates = {Make("test-cheap", 10000)};
  absl::StatusOr<PlanResult> r = Plan(in);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NE(r->headline.find("pure-roofline bound"), std::string::npos)
      << r->headline;
  EXPECT_EQ(r->headline.find('\n'), std::string::npos);
  in.candidates[0].scenario.efficiency.profile_name = "test-profile";
  r = Plan(in);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->headline.find("bound"), std::string::npos) << r->headline;
}

TEST(Plan, InfeasibleCandidatesSayWhy) {
  PlanInput in = Input();
  in.candidates = {Make("test-cheap", 10000)};
  in.candidates[0].scenario.model = engine::FindModel("llama-3.1-70b").value();
  in.slo.tpot_p90_seconds = 0.001;
  absl::StatusOr<PlanResult> r = Plan(in);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->deployments[0].feasible);
  EXPECT_NE(r->deployments[0].why.find("does not fit"), std::string::npos);
  // 8B fits but 1 ms TPOT is below one step (7.9 ms).
  in.candidates = {Make("test-cheap", 10000)};
  r = Plan(in);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->deployments[0].feasible);
  EXPECT_NE(r->deployments[0].why.find("unreachable even at concurrency 1"),
            std::string::npos);
  EXPECT_GT(r->deployments[0].tpot_p90_seconds, 0.001);
  EXPECT_NE(r->headline.find("no candidate"), std::string::npos);
}

TEST(Plan, BadInputNamesTheField) {
  PlanInput in = Input();
  in.traffic.rate = 0;
  EXPECT_NE(Plan(in).status().message().find("traffic.rate"),
            std::string::npos);
  in = Input();
  in.candidates.clear();
  EXPECT_NE(Plan(in).status().message().find("candidates"),
            std::string::npos);
  in = Input();
  in.slo.ttft_p90_seconds = 0;
  EXPECT_NE(Plan(in).status().message().find("slo.ttft_p90_seconds"),
            std::string::npos);
  in = Input();
  in.requests = 1'000'000'000;
  absl::Status s = Plan(in).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("simulation.requests"), std::string::npos);
}

TEST(Plan, StopEndsThePlan) {
  PlanInput in = Input();
  in.requests = 5000;
  in.stop = [] { return true; };
  EXPECT_EQ(Plan(in).status().code(), absl::StatusCode::kDeadlineExceeded);
}

}  // namespace
}  // namespace ridgeline::serving
