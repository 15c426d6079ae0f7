// Disaggregated planning: the KV transfer by hand, the link rules, the
// candidate space's rules, and prefill + decode pools sized by the
// simulation (serving/disaggregated_plan.h, serving/candidates.h).
#include "ridgeline/serving/disaggregated_plan.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/serving/candidates.h"
#include "ridgeline/serving/plan.h"

namespace ridgeline::serving {
namespace {

using ::testing::HasSubstr;

engine::Scenario Llama70bFp8(const char* id, int64_t tp) {
  engine::Scenario s;
  s.model = engine::FindModel("llama-3.1-70b").value();
  s.hardware.id = id;
  s.parallelism.tensor_parallel = tp;
  s.precision.kv_cache = engine::ParseNumberFormat("fp8").value();
  return s;
}

TEST(PoolKvTransfer, Llama70bFp8PromptBytesAndTimeByHand) {
  engine::Scenario p = Llama70bFp8("test-gpu", 4);
  engine::Scenario d = Llama70bFp8("test-gpu", 8);
  // Llama-3.1-70B: 80 layers x 2 (K, V) x 8 KV heads x 128 = 163,840 KV
  // elements per token; fp8 = 1 byte; 2,048 tokens = 335,544,320 bytes.
  EXPECT_DOUBLE_EQ(PoolKvBytes(p, 2048), 335'544'320.0);
  // One part, node size unknown: the scale-up link, 900 GB/s both
  // directions per device (a stated figure) = 450 GB/s one way, over
  // min(4, 8) = 4 device pairs = 1.8 TB/s; latency unknown = 0.
  p.hardware.interconnect_bytes_per_second = 900e9;
  d.hardware.interconnect_bytes_per_second = 900e9;
  const PoolKvLink link = PoolKvLinkBetween(p, d);
  ASSERT_TRUE(link.known) << link.why;
  EXPECT_EQ(link.name, "scale-up");
  EXPECT_DOUBLE_EQ(link.bytes_per_second, 1.8e12);
  EXPECT_FALSE(link.latency_known);
  // 335,544,320 / 1.8e12 = 186.41 us.
  EXPECT_NEAR(PoolKvTransferSeconds(link, PoolKvBytes(p, 2048)), 186.414e-6,
              1e-9);
  // A node of 8 devices cannot hold TP 4 + TP 8: scale-out, unknown here.
  p.hardware.devices_per_node = 8;
  EXPECT_FALSE(PoolKvLinkBetween(p, d).known);
  EXPECT_EQ(PoolKvLinkBetween(p, d).name, "scale-out");
}

TEST(PoolKvTransfer, HeterogeneousPairNeedsAKnownScaleOutLink) {
  engine::Scenario p = Llama70bFp8("part-a", 2);
  engine::Scenario d = Llama70bFp8("part-b", 4);
  const PoolKvLink none = PoolKvLinkBetween(p, d);
  EXPECT_FALSE(none.known);
  EXPECT_THAT(none.why, HasSubstr("no known link between part-a and part-b"));
  EXPECT_THAT(none.why, HasSubstr("part-a and part-b"));
  // 400 Gb/s NICs = 50 GB/s both directions per device (stated) and 100
  // GB/s on the other side: the slower, 25 GB/s one way, x min(2, 4) = 2
  // pairs = 50 GB/s; latency 5 us and 10 us: the larger.
  p.hardware.scale_out_bytes_per_second = 50e9;
  d.hardware.scale_out_bytes_per_second = 100e9;
  p.hardware.scale_out_latency_seconds = 5e-6;
  d.hardware.scale_out_latency_seconds = 10e-6;
  const PoolKvLink link = PoolKvLinkBetween(p, d);
  ASSERT_TRUE(link.known);
  EXPECT_DOUBLE_EQ(link.bytes_per_second, 50e9);
  // 335,544,320 / 50e9 = 6.7109 ms, + 10 us = 6.7209 ms.
  EXPECT_NEAR(PoolKvTransferSeconds(link, PoolKvBytes(p, 2048)), 6.72089e-3,
              1e-8);
}

TEST(PoolKvTransfer, LengthQuantileIsNearestRank) {
  EXPECT_EQ(LengthQuantile(LengthDistribution::Fixed(2048), 0.9), 2048);
  // 1..10: the 9th of 10 values.
  EXPECT_EQ(LengthQuantile(LengthDistribution::Uniform(1, 10), 0.9), 9);
  // 100 (weight 8), 1000 (weight 2): 80 % at 100, so p90 is 1000.
  EXPECT_EQ(
      LengthQuantile(LengthDistribution::Empirical({1000, 100}, {2, 8}), 0.9),
      1000);
}

TEST(CandidateSpace, BadModeAndZeroReplicasNameTheField) {
  absl::StatusOr<DisaggregatedMode> m =
      ParseDisaggregatedMode("sometimes", "candidates.disaggregated");
  ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("\"auto\""));
  EXPECT_THAT(m.status().message(), HasSubstr("\"sometimes\""));
  EXPECT_EQ(engine::FieldPathOf(m.status()), "candidates.disaggregated");
  CandidateAxes axes;
  axes.max_pool_replicas = 0;
  absl::StatusOr<CandidateSpace> s =
      CandidateSpace::Create(engine::FindModel("llama-3.1-8b").value(), axes);
  ASSERT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(engine::FieldPathOf(s.status()), "candidates.max_pool_replicas");
  EXPECT_THAT(s.status().message(), HasSubstr("in [1, 64]"));
  EXPECT_THAT(s.status().message(), HasSubstr("got 0"));
}

TEST(CandidateSpace, PoolListsDefaultToTheTensorParallelList) {
  CandidateAxes axes;
  axes.mode = DisaggregatedMode::kAuto;
  axes.tensor_parallel = {1, 2};
  axes.decode_tensor_parallel = {4};
  absl::StatusOr<CandidateSpace> s =
      CandidateSpace::Create(engine::FindModel("llama-3.1-8b").value(), axes);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->axes().prefill_tensor_parallel, (std::vector<int64_t>{1, 2}));
  // 3 parts x 2 TP x 2 formats aggregated + (2 x 2 + 2 x 1) x 2 pools.
  EXPECT_DOUBLE_EQ(s->UpperBound(3, 2, 2), 12 + 12);
  axes.mode = DisaggregatedMode::kOff;
  s = CandidateSpace::Create(engine::FindModel("llama-3.1-8b").value(), axes);
  EXPECT_DOUBLE_EQ(s->UpperBound(3, 2, 2), 12);
}

// A100-like (312 TFLOP/s bf16, 2039 GB/s, 80 GB; NVIDIA A100 SXM4 80GB
// datasheet; NVLink3 600 GB/s both directions per device, same datasheet).
engine::Scenario A100(const char* id, double hbm_bytes) {
  engine::Scenario s;
  s.model = engine::FindModel("llama-3.1-8b").value();
  s.hardware.id = id;
  s.hardware.family = s.hardware.plugin = "inline";
  s.hardware.peak_ops_per_second[static_cast<int>(engine::MathType::kBf16)] =
      312e12;
  engine::MemoryTier hbm;
  hbm.name = "HBM2e";
  hbm.kind = engine::TierKind::kHbm;
  hbm.capacity_bytes = hbm_bytes;
  hbm.read_bandwidth_bytes_per_second = 2039e9;
  hbm.write_bandwidth_bytes_per_second = 2039e9;
  s.hardware.tiers.push_back(hbm);
  s.hardware.interconnect_bytes_per_second = 600e9;
  s.hardware.tdp_watts = 400;
  s.hardware.price_usd = 10000;
  s.options.suggestions = false;
  s.economics.amortization_years = 4;
  s.economics.utilization = 1;
  return s;
}

TEST(PlanDisaggregated, SizesPoolsAndReportsInfeasiblePairs) {
  PlanInput in;
  in.traffic.rate = 0.5;
  in.traffic.prompt = LengthDistribution::Fixed(128);
  in.traffic.generated = LengthDistribution::Fixed(32);
  in.slo = {1.0, 0.05};
  in.requests = 100;
  // 16 GB cannot hold Llama-3.1-8B's 16 GB of bf16 weights at 0.9.
  in.prefill_pools = {{A100("test-a100", 80e9), "bf16/bf16/bf16", ""},
                      {A100("test-small", 16e9), "bf16/bf16/bf16", ""}};
  in.decode_pools = {{A100("test-a100", 80e9), "bf16/bf16/bf16", ""}};
  absl::StatusOr<PlanResult> r = Plan(in);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->deployments.size(), 2u);
  const Deployment& d = r->deployments[0];
  EXPECT_TRUE(d.disaggregated);
  ASSERT_TRUE(d.feasible) << d.why;
  EXPECT_TRUE(d.meets_slo) << d.why;
  EXPECT_EQ(d.hardware_id, "test-a100");
  EXPECT_EQ(d.kv_link, "scale-up");
  EXPECT_GE(d.prefill_replicas, 1);
  EXPECT_GE(d.decode_replicas, 1);
  EXPECT_EQ(d.replicas, d.prefill_replicas + d.decode_replicas);
  EXPECT_EQ(d.devices, d.replicas);  // TP 1 pools
  // Llama-3.1-8B: 32 layers x 2 x 8 KV heads x 128 = 65,536 elements per
  // token, bf16 = 2 bytes, 128 tokens = 16,777,216 bytes over 300 GB/s one
  // way (600 / 2, one device pair) = 55.92 us.
  ASSERT_TRUE(d.kv_transfer_p90_seconds.has_value());
  EXPECT_NEAR(*d.kv_transfer_p90_seconds, 55.924e-6, 1e-9);
  EXPECT_GT(d.ttft_p90_seconds, *d.kv_transfer_p90_seconds);
  // The rate each pool needs is covered.
  EXPECT_GE(d.prefill_max_rate_per_replica * d.prefill_replicas, 0.5);
  EXPECT_GE(d.decode_max_rate_per_replica * d.decode_replicas, 0.5);
  ASSERT_TRUE(d.usd_per_mtoken.has_value());
  // The pair whose prefill part cannot hold the model: its reason, and
  // heterogeneous without a scale-out figure would say so first.
  const Deployment& bad = r->deployments[1];
  EXPECT_FALSE(bad.feasible);
  EXPECT_THAT(bad.why, HasSubstr("prefill pool (test-small TP 1"));
  EXPECT_THAT(bad.why, HasSubstr("does not fit"));
  EXPECT_THAT(r->headline, HasSubstr("disaggregated"));
}

TEST(PlanDisaggregated, HeterogeneousPairWithoutLinkIsInfeasible) {
  PlanInput in;
  in.traffic.rate = 0.5;
  in.traffic.prompt = LengthDistribution::Fixed(128);
  in.traffic.generated = LengthDistribution::Fixed(32);
  in.slo = {1.0, 0.05};
  in.requests = 100;
  in.prefill_pools = {{A100("test-a", 80e9), "bf16/bf16/bf16", ""}};
  in.decode_pools = {{A100("test-b", 80e9), "bf16/bf16/bf16", ""}};
  absl::StatusOr<PlanResult> r = Plan(in);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->deployments.size(), 1u);
  EXPECT_FALSE(r->deployments[0].feasible);
  EXPECT_THAT(r->deployments[0].why,
              HasSubstr("no known link between test-a and test-b"));
  EXPECT_EQ(r->deployments[0].hardware_id, "test-a+test-b");
}

TEST(PlanDisaggregated, PoolsComeInPairs) {
  PlanInput in;
  in.prefill_pools = {{A100("test-a", 80e9), "bf16/bf16/bf16", ""}};
  const absl::Status s = ValidatePlanInput(in);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("both or neither"));
  in.decode_pools = in.prefill_pools;
  in.max_pool_replicas = 0;
  EXPECT_EQ(engine::FieldPathOf(ValidatePlanInput(in)),
            "candidates.max_pool_replicas");
}

}  // namespace
}  // namespace ridgeline::serving
