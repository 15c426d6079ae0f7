// Pipelined replicas and attention data-parallel expert parallelism in the
// serving model: goldens derived by hand beside each assertion.
#include <span>
#include <vector>

#include "gtest/gtest.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/serving/capacity.h"
#include "ridgeline/serving/engine_step_cost.h"
#include "ridgeline/serving/parallelism.h"
#include "ridgeline/serving/plan.h"
#include "ridgeline/serving/simulate.h"
#include "ridgeline/serving/throughput.h"

namespace ridgeline::serving {
namespace {

// Two pipeline stages, each taking `base` + `per_token` x the step's new
// tokens, and a send of `send` from stage 0 to stage 1. The micro-batch's
// latency is both stages and the send: 2 s + send; a full pipeline takes a
// new micro-batch every slowest stage + its send: s + send.
class TwoStages final : public StepCost {
 public:
  TwoStages(double base, double per_token, double send)
      : base_(base), per_token_(per_token), send_(send) {}
  absl::StatusOr<StepTime> Time(
      std::span<const SequenceInStep> seqs) const override {
    int64_t tokens = 0;
    for (const SequenceInStep& s : seqs) tokens += s.new_tokens;
    const double stage = base_ + per_token_ * static_cast<double>(tokens);
    return StepTime{2 * stage + send_, engine::Bound::kMemory, stage + send_};
  }

 private:
  double base_, per_token_, send_;
};

TEST(PipelinedSimulate, TwoRequestsTwoStagesByHand) {
  SimulationConfig c;
  // Budget 4 tokens: one 4-token prompt per micro-batch.
  c.limits = {/*max_num_seqs=*/4, /*max_num_batched_tokens=*/4,
              /*kv_capacity_tokens=*/1000, /*block_size=*/1,
              /*pipeline_stages=*/2};
  c.arrivals.kind = Arrivals::Kind::kTrace;
  c.arrivals.times = {0, 0};
  c.prompt = LengthDistribution::Fixed(4);
  c.generated = LengthDistribution::Fixed(3);
  // Stage 4 ms + 1 ms per token, send 1 ms: a 4-token prefill has stages of
  // 8 ms, latency 17 ms, interval 9 ms; a decode token stages of 5 ms,
  // latency 11 ms, interval 6 ms.
  absl::StatusOr<SimulationResult> r =
      Simulate(TwoStages(0.004, 0.001, 0.001), c);
  ASSERT_TRUE(r.ok()) << r.status();
  // t=0   slot 0 launches r0's prefill: out at 17, next launch at 9.
  // t=9   slot 1 launches r1's prefill: out at 26, next launch at 18.
  // t=18  r0's first token (17); slot 0: r0 decodes, out at 29, next 24.
  // t=24  both slots in flight: wait for slot 1 (26).
  // t=26  r1's first token; slot 1: r1 decodes, out at 37, next 32.
  // t=32  r0's 2nd token (29); r0 decodes, out at 43, next 38.
  // t=38  r1's 2nd token (37); r1 decodes, out at 49, next 44.
  // t=44  r0's 3rd token (43): done. Slot 0 has nothing; wait for 49.
  // t=49  r1 done. Six micro-batches.
  EXPECT_EQ(r->steps, 6);
  // TTFT: 17 and 26 ms (a prefill's tokens take the whole traversal).
  EXPECT_NEAR(r->ttft.p50, 0.017, 1e-12);
  EXPECT_NEAR(r->ttft.p90, 0.026, 1e-12);
  // TPOT: r0 (43 - 17) / 2 = 13 ms, r1 (49 - 26) / 2 = 11.5 ms.
  EXPECT_NEAR(r->tpot.p50, 0.0115, 1e-12);
  EXPECT_NEAR(r->tpot.p90, 0.013, 1e-12);
  // Inter-token gaps: r0 29-17 = 12, 43-29 = 14; r1 37-26 = 11, 49-37 = 12.
  // Sorted 11 12 12 14: p50 (2nd) 12, p90 (4th) 14, mean 49/4 ms.
  EXPECT_NEAR(r->itl.p50, 0.012, 1e-12);
  EXPECT_NEAR(r->itl.p90, 0.014, 1e-12);
  EXPECT_NEAR(r->itl.mean, 0.049 / 4, 1e-12);
  EXPECT_NEAR(r->e2e.p90, 0.049, 1e-12);
  EXPECT_NEAR(r->duration_seconds, 0.049, 1e-12);
  // Six output tokens over 49 ms.
  EXPECT_NEAR(r->output_tokens_per_second, 6 / 0.049, 1e-9);
}

TEST(PipelinedSimulate, OneStageIsPlainContinuousBatching) {
  // The same requests on one stage with the same latency (2 stages + send)
  // run one step at a time: 17 ms prefill of r0, then r0's decode (11 ms)
  // ... so r1's first token waits for r0's prefill and its own.
  SimulationConfig c;
  c.limits = {4, 4, 1000, 1, /*pipeline_stages=*/1};
  c.arrivals.kind = Arrivals::Kind::kTrace;
  c.arrivals.times = {0, 0};
  c.prompt = LengthDistribution::Fixed(4);
  c.generated = LengthDistribution::Fixed(3);
  absl::StatusOr<SimulationResult> r =
      Simulate(TwoStages(0.004, 0.001, 0.001), c);
  ASSERT_TRUE(r.ok()) << r.status();
  // t=0 r0 prefill (4 tokens): 17 ms -> 17, r0's first token.
  // t=17 r0 decode (1 token) + r1's first chunk (3: the budget's rest):
  //      4 tokens, stages 8 ms -> 17 ms -> 34.
  // t=34 r0 decode, r1 last prompt token: 2 tokens, stages 6 -> 13 -> 47;
  //      r0 done (3 tokens), r1's first token at 47.
  // t=47 r1 decode: 11 -> 58; t=58 r1 decode: 11 -> 69, done.
  EXPECT_EQ(r->steps, 5);
  EXPECT_NEAR(r->ttft.p90, 0.047, 1e-12);
  EXPECT_NEAR(r->e2e.p90, 0.069, 1e-12);
}

TEST(PipelinedThroughput, TwoStagesSteadyStateByHand) {
  // 64 sequences, budget 100000 (no budget limit), 100-token prompts, 11
  // generated: two micro-batches of 32 decode sequences each.
  ServingLimits limits{64, 100000, 1'000'000, 16, /*pipeline_stages=*/2};
  // Stage 10 ms + 0.1 ms per token, send 2 ms.
  TwoStages cost(0.010, 0.0001, 0.002);
  absl::StatusOr<OfflineThroughput> t =
      MaxThroughput(cost, limits, 64, 100, 11, 2);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->micro_batches, 2);
  // Per micro-batch: d = 64 / 2 = 32 decoders (the budget allows 100000 x
  // 10 / 110 = 9090), c = 32 x 100 / 10 = 320 prefill tokens.
  EXPECT_EQ(t->decode_sequences, 32);
  EXPECT_EQ(t->prefill_tokens, 320);
  EXPECT_EQ(t->concurrency_limited_by, "max_num_seqs");
  // 352 tokens: stage 10 + 35.2 = 45.2 ms; latency 2 x 45.2 + 2 = 92.4 ms,
  // interval 47.2 ms; a micro-batch comes round every max(2 x 47.2, 92.4)
  // = 94.4 ms (the interval binds: two sends per cycle, one per traversal).
  EXPECT_NEAR(t->step_seconds, 0.0924, 1e-12);
  EXPECT_NEAR(t->cycle_seconds, 0.0944, 1e-12);
  // requests/s = 2 x 32 / (10 x 0.0944) = 67.797; x 11 tokens = 745.76.
  EXPECT_NEAR(t->requests_per_second, 64 / (10 * 0.0944), 1e-9);
  EXPECT_NEAR(t->output_tokens_per_second, 11 * 64 / (10 * 0.0944), 1e-9);
  // Per device (2 stages of 1 device each): 372.88.
  EXPECT_NEAR(t->output_tokens_per_second_per_device,
              11 * 64 / (10 * 0.0944) / 2, 1e-9);
  // Without the send, latency 2 x 45.2 = 90.4 ms = 2 x the interval.
  absl::StatusOr<OfflineThroughput> no_send =
      MaxThroughput(TwoStages(0.010, 0.0001, 0), limits, 64, 100, 11, 2);
  ASSERT_TRUE(no_send.ok());
  EXPECT_NEAR(no_send->cycle_seconds, 0.0904, 1e-12);
}

TEST(AttentionRanks, SimulateRankZeroAndScaleByHand) {
  // 10 ms + 1 ms per token (one rank's step), two ranks.
  class Linear final : public StepCost {
   public:
    absl::StatusOr<StepTime> Time(
        std::span<const SequenceInStep> seqs) const override {
      int64_t tokens = 0;
      for (const SequenceInStep& s : seqs) tokens += s.new_tokens;
      return StepTime{0.010 + 0.001 * static_cast<double>(tokens),
                      engine::Bound::kMemory};
    }
  };
  SimulationConfig c;
  c.limits = {2, 6, 1000, 1, /*pipeline_stages=*/1, /*attention_ranks=*/2};
  c.arrivals.kind = Arrivals::Kind::kTrace;
  c.arrivals.times = {0, 0, 0.02, 0.02, 0.045, 0.045};
  c.prompt = LengthDistribution::Fixed(4);
  c.generated = LengthDistribution::Fixed(3);
  // Round robin: rank 0 gets arrivals 0, 0.02, 0.045.
  EXPECT_EQ(RankConfig(c).arrivals.times,
            (std::vector<double>{0, 0.02, 0.045}));
  absl::StatusOr<SimulationResult> r = Simulate(Linear(), c);
  ASSERT_TRUE(r.ok()) << r.status();
  // Rank 0: t=0 r0 prefill 4 tokens, 14 ms -> 14 (first token).
  // t=14 r0 decode: 11 -> 25. t=25 r1 arrived (20): r0 decode + r1 prefill
  // 4: 15 -> 40: r0 done, r1's first token. t=40 r1 decode: 11 -> 51.
  // t=51 r2 arrived (45): r1 decode + r2 prefill: 15 -> 66: r1 done, r2's
  // first token. t=66, t=77: r2 decodes -> 88, done. Seven steps.
  EXPECT_EQ(r->steps, 7);
  EXPECT_EQ(r->requests, 3);
  // TTFT 14, 40 - 20 = 20, 66 - 45 = 21 ms; TPOT 13, 13, 11 ms.
  EXPECT_NEAR(r->ttft.p50, 0.020, 1e-12);
  EXPECT_NEAR(r->ttft.p90, 0.021, 1e-12);
  EXPECT_NEAR(r->tpot.p90, 0.013, 1e-12);
  EXPECT_NEAR(r->duration_seconds, 0.088, 1e-12);
  // The replica: two ranks alike, 2 x 3 requests and 2 x 9 tokens in 88 ms.
  EXPECT_NEAR(r->requests_per_second, 6 / 0.088, 1e-9);
  EXPECT_NEAR(r->output_tokens_per_second, 18 / 0.088, 1e-9);
  // Poisson: rank 0 sees rate / 2, for as many requests as asked; a closed
  // loop of 5 clients puts ceil(5 / 2) = 3 on rank 0.
  c.arrivals = Arrivals{};
  c.arrivals.rate = 8;
  c.requests = 101;
  EXPECT_DOUBLE_EQ(RankConfig(c).arrivals.rate, 4);
  EXPECT_EQ(RankConfig(c).requests, 101);
  c.arrivals.kind = Arrivals::Kind::kConcurrency;
  c.arrivals.concurrency = 5;
  EXPECT_EQ(RankConfig(c).arrivals.concurrency, 3);
}

TEST(AttentionRanks, MaxThroughputIsRanksTimesOneRank) {
  // ToyRoofline-like fixed step: 20 ms for any step. 4 ranks of 16
  // sequences, 100 + 11 tokens: d = 16 per rank, requests/s per rank
  // 16 / (10 x 0.02) = 80, replica 320, x 11 = 3520 output tokens/s over 4
  // devices = 880 per device.
  class Fixed final : public StepCost {
   public:
    absl::StatusOr<StepTime> Time(
        std::span<const SequenceInStep>) const override {
      return StepTime{0.02, engine::Bound::kCompute};
    }
  };
  ServingLimits limits{16, 100000, 1'000'000, 16, 1, /*attention_ranks=*/4};
  absl::StatusOr<OfflineThroughput> t =
      MaxThroughput(Fixed(), limits, 16, 100, 11, 4);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_NEAR(t->requests_per_second, 320, 1e-9);
  EXPECT_NEAR(t->output_tokens_per_second, 3520, 1e-9);
  EXPECT_NEAR(t->output_tokens_per_second_per_device, 880, 1e-9);
}

// NVIDIA H100 SXM5 80GB as in serving_test.cc (80 GB HBM3 at 3352 GB/s,
// FP8 1978.9 TFLOP/s dense; hardware_specs.csv row nvidia-h100-sxm-80gb).
engine::Scenario Fp8OnH100(const char* model) {
  engine::Scenario s;
  s.model = engine::FindModel(model).value();
  s.hardware.id = "test-h100";
  s.hardware.family = "inline";
  s.hardware.plugin = "inline";
  s.hardware.peak_ops_per_second[static_cast<int>(engine::MathType::kFp8)] =
      1978.9e12;
  s.hardware.peak_ops_per_second[static_cast<int>(engine::MathType::kBf16)] =
      989.4e12;
  engine::MemoryTier hbm;
  hbm.name = "HBM3";
  hbm.kind = engine::TierKind::kHbm;
  hbm.capacity_bytes = 80e9;
  hbm.read_bandwidth_bytes_per_second = 3352e9;
  hbm.write_bandwidth_bytes_per_second = 3352e9;
  s.hardware.tiers.push_back(hbm);
  s.precision.weights = engine::ParseNumberFormat("fp8").value();
  s.precision.activations = engine::ParseNumberFormat("fp8").value();
  s.precision.kv_cache = engine::ParseNumberFormat("fp8").value();
  s.options.suggestions = false;
  return s;
}

TEST(PipelinedKvCapacity, EachStageHoldsItsLayers) {
  engine::Scenario s = Fp8OnH100("llama-3.1-8b");
  s.parallelism.pipeline_parallel = 2;
  ServingConfig config;
  config.max_num_seqs = 1024;
  absl::StatusOr<KvCapacity> kv = ComputeKvCapacity(s, config, 2048, 512);
  ASSERT_TRUE(kv.ok()) << kv.status();
  // Half of serving_test's 8,030,261,248 weight bytes and 65,536 KV bytes
  // per token; the activations of one 8192-token step are a stage's whole
  // step (one micro-batch): 385,875,968 bytes as without the pipeline.
  EXPECT_DOUBLE_EQ(kv->weights_bytes, 4'015'130'624.0);
  EXPECT_DOUBLE_EQ(kv->kv_bytes_per_token, 32'768.0);
  EXPECT_DOUBLE_EQ(kv->activations_bytes, 385'875'968.0);
  // Free: 72e9 - 4,015,130,624 - 385,875,968 = 67,598,993,408 B over blocks
  // of 16 x 32,768 = 524,288 B: 128,934 blocks = 2,062,944 tokens; / 2560
  // per sequence = 805 sequences (378 on one device).
  EXPECT_EQ(kv->kv_capacity_tokens, 2'062'944);
  EXPECT_EQ(kv->max_concurrency, 805);
  EXPECT_EQ(kv->pipeline_stages, 2);
  EXPECT_EQ(LimitsOf(config, *kv).pipeline_stages, 2);
}

TEST(ExpertParallelKvCapacity, EachRankHoldsItsShareOfTheExperts) {
  engine::Scenario one = Fp8OnH100("mixtral-8x7b");
  engine::Scenario ep = one;
  ep.parallelism = ReplicaParallelism(1, 1, 8);
  EXPECT_TRUE(ep.parallelism.attention_data_parallel);
  EXPECT_EQ(ep.parallelism.tensor_parallel, 1);
  ServingConfig config;
  absl::StatusOr<KvCapacity> a = ComputeKvCapacity(one, config, 2048, 512);
  absl::StatusOr<KvCapacity> b = ComputeKvCapacity(ep, config, 2048, 512);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  // Routed experts of Mixtral-8x7B: 32 layers x 8 experts x 3 matrices x
  // 4096 x 14336 = 45,097,156,608 weights, 1 byte each (fp8); a rank of 8
  // keeps 1/8, so holds 7/8 x 45,097,156,608 = 39,460,012,032 bytes less.
  EXPECT_DOUBLE_EQ(a->weights_bytes - b->weights_bytes, 39'460'012'032.0);
  // The attention is replicated: each rank keeps the whole KV of its own
  // sequences, 32 layers x 2 x 8 KV heads x 128 x 1 byte = 65,536 B/token.
  EXPECT_DOUBLE_EQ(b->kv_bytes_per_token, 65'536.0);
  EXPECT_EQ(b->attention_ranks, 8);
  EXPECT_EQ(LimitsOf(config, *b).attention_ranks, 8);
}

TEST(ReplicaParallelism, BadValuesNameTheFieldRangeAndValue) {
  const engine::ModelConfig llama = engine::FindModel("llama-3.1-70b").value();
  absl::Status s =
      CheckPipelineStages(llama, 3, "candidates.pipeline_parallel[1]");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(engine::FieldPathOf(s), "candidates.pipeline_parallel[1]");
  // 80 layers.
  EXPECT_NE(s.message().find("divide the model's 80 layers"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("got 3"), std::string::npos);
  EXPECT_TRUE(CheckPipelineStages(llama, 4, "p").ok());
  s = CheckExpertParallel(llama, 8, "parallelism.expert_parallel");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(engine::FieldPathOf(s), "parallelism.expert_parallel");
  EXPECT_NE(s.message().find("dense model"), std::string::npos);
  EXPECT_TRUE(CheckExpertParallel(llama, 1, "e").ok());
  const engine::ModelConfig mixtral = engine::FindModel("mixtral-8x7b").value();
  s = CheckExpertParallel(mixtral, 3, "candidates.expert_parallel[0]");
  EXPECT_NE(s.message().find("divide the model's 8 routed experts"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(CheckExpertParallel(mixtral, 8, "e").ok());
  SimulationConfig c;
  c.limits.kv_capacity_tokens = 100;
  c.limits.pipeline_stages = 0;
  s = ValidateSimulationConfig(c);
  EXPECT_EQ(engine::FieldPathOf(s), "parallelism.pipeline_parallel");
}

TEST(PipelinedPlan, DevicesCountEveryStage) {
  // Llama-3.1-8B fp8 on the hand H100: PP 2 replicas have 2 devices each.
  Candidate c;
  c.scenario = Fp8OnH100("llama-3.1-8b");
  c.scenario.parallelism.pipeline_parallel = 2;
  c.scenario.hardware.price_usd = 10000;
  c.scenario.hardware.tdp_watts = 700;
  c.formats = "fp8/fp8/fp8";
  PlanInput in;
  in.traffic.rate = 0.5;
  in.traffic.prompt = LengthDistribution::Fixed(128);
  in.traffic.generated = LengthDistribution::Fixed(32);
  in.slo = {1.0, 0.05};
  in.requests = 100;
  in.candidates = {c};
  absl::StatusOr<PlanResult> r = Plan(in);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->deployments.size(), 1u);
  const Deployment& d = r->deployments[0];
  ASSERT_TRUE(d.feasible) << d.why;
  EXPECT_EQ(d.pipeline_parallel, 2);
  EXPECT_EQ(d.devices, 2 * d.replicas);
  EXPECT_NE(r->headline.find("TP 1 PP 2"), std::string::npos) << r->headline;
}

}  // namespace
}  // namespace ridgeline::serving
