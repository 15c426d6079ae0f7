// Serving model goldens, derived by hand beside each assertion.
#include <cmath>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/engine/speculative.h"
#include "ridgeline/serving/capacity.h"
#include "ridgeline/serving/deployment.h"
#include "ridgeline/serving/engine_step_cost.h"
#include "ridgeline/serving/scheduler.h"
#include "ridgeline/serving/simulate.h"
#include "ridgeline/serving/slo_search.h"
#include "ridgeline/serving/throughput.h"

namespace ridgeline::serving {
namespace {

using engine::MathType;

// NVIDIA H100 SXM5 80GB as the nvidia plugin describes it (80 GB HBM3 at
// 3352 GB/s, FP8 1978.9 / BF16 989.4 TFLOP/s dense; hardware_specs.csv row
// nvidia-h100-sxm-80gb).
engine::Hardware H100() {
  engine::Hardware hw;
  hw.id = "test-h100";
  hw.family = "inline";
  hw.plugin = "inline";
  hw.peak_ops_per_second[static_cast<int>(MathType::kFp8)] = 1978.9e12;
  hw.peak_ops_per_second[static_cast<int>(MathType::kBf16)] = 989.4e12;
  hw.peak_ops_per_second[static_cast<int>(MathType::kFp16)] = 989.4e12;
  engine::MemoryTier hbm;
  hbm.name = "HBM3";
  hbm.kind = engine::TierKind::kHbm;
  hbm.capacity_bytes = 80e9;
  hbm.read_bandwidth_bytes_per_second = 3352e9;
  hbm.write_bandwidth_bytes_per_second = 3352e9;
  hw.tiers.push_back(hbm);
  return hw;
}

engine::Scenario Llama8bFp8OnH100() {
  engine::Scenario s;
  s.model = engine::FindModel("llama-3.1-8b").value();
  s.hardware = H100();
  s.precision.weights = engine::ParseNumberFormat("fp8").value();
  s.precision.activations = engine::ParseNumberFormat("fp8").value();
  s.precision.kv_cache = engine::ParseNumberFormat("fp8").value();
  s.options.suggestions = false;
  return s;
}

// A hybrid model: KV grows for its 6 attention layers only; each sequence
// also holds a constant Mamba-2 state, set aside per admitted sequence.
TEST(KvCapacity, HybridReservesTheRecurrentStatePerSequence) {
  engine::Scenario s = Llama8bFp8OnH100();
  s.model = engine::FindModel("nemotron-3-nano-30b-a3b").value();
  ServingConfig config;
  config.max_num_seqs = 4096;
  absl::StatusOr<KvCapacity> kv = ComputeKvCapacity(s, config, 2048, 512);
  ASSERT_TRUE(kv.ok()) << kv.status();
  // KV per token: 6 attention layers x (K + V) x 2 KV heads x 128 x 1 B.
  EXPECT_DOUBLE_EQ(kv->kv_bytes_per_token, 3072.0);
  // State: 23 Mamba-2 layers x (64 heads x 64 x 128 state = 524,288 + conv
  // window 3 x (4096 + 2 x 8 x 128) = 18,432) x 1 B = 12,482,560 B.
  EXPECT_DOUBLE_EQ(kv->state_bytes_per_sequence, 12'482'560.0);
  // A sequence: 2560 tokens x 3072 + 12,482,560 = 20,346,880 B.
  const double free_bytes =
      0.9 * 80e9 - kv->weights_bytes - kv->activations_bytes;
  const auto seqs = static_cast<int64_t>(std::floor(free_bytes / 20'346'880.0));
  EXPECT_EQ(kv->max_concurrency, seqs);
  EXPECT_EQ(kv->limited_by, "kv_capacity");
  // The blocks left after the state of those sequences.
  EXPECT_EQ(kv->kv_capacity_tokens,
            static_cast<int64_t>(std::floor(
                (free_bytes - 12'482'560.0 * static_cast<double>(seqs)) /
                (3072.0 * 16))) *
                16);
  EXPECT_GE(kv->kv_capacity_tokens, seqs * kv->tokens_per_sequence);
}

// A pure state-space model (Mamba-Codestral-7B): no KV grows, so the
// sequences are what their constant states allow, and the block pool is
// exactly their tokens (nothing is ever short of a block).
TEST(KvCapacity, PureMambaHoldsStatesOnly) {
  engine::Scenario s = Llama8bFp8OnH100();
  s.model = engine::FindModel("mamba-codestral-7b").value();
  ServingConfig config;
  config.max_num_seqs = 4096;
  absl::StatusOr<KvCapacity> kv = ComputeKvCapacity(s, config, 2048, 512);
  ASSERT_TRUE(kv.ok()) << kv.status();
  EXPECT_DOUBLE_EQ(kv->kv_bytes_per_token, 0.0);
  // 64 layers x (128 heads x 64 x 128 + conv window 3 x (8192 + 2 x 8 x
  // 128)) = 69,074,944 elements x 1 B (fp8).
  EXPECT_DOUBLE_EQ(kv->state_bytes_per_sequence, 69'074'944.0);
  const double free_bytes =
      0.9 * 80e9 - kv->weights_bytes - kv->activations_bytes;
  const auto seqs =
      static_cast<int64_t>(std::floor(free_bytes / 69'074'944.0));
  EXPECT_EQ(kv->max_concurrency, seqs);
  EXPECT_EQ(kv->limited_by, "kv_capacity");
  // 2560 tokens a sequence (2048 + 512, whole blocks of 16).
  EXPECT_EQ(kv->kv_capacity_tokens, seqs * 2560);
}

TEST(KvCapacity, Llama31_8bFp8OnH100At2048Plus512) {
  ServingConfig config;  // fraction 0.9, 256 seqs, 8192 tokens, blocks of 16
  config.max_num_seqs = 1024;  // let the KV cache be the limit
  absl::StatusOr<KvCapacity> kv =
      ComputeKvCapacity(Llama8bFp8OnH100(), config, 2048, 512);
  ASSERT_TRUE(kv.ok()) << kv.status();
  // Weights, 1 byte each (fp8): embedding 128256 x 4096 = 525,336,576 and
  // the untied LM head as much; per layer q 4096^2 = 16,777,216, k and v
  // 4096 x 1024 = 4,194,304 each, o 16,777,216, FFN 3 x 4096 x 14336 =
  // 176,160,768, two norms 8192: 218,112,000 x 32 layers = 6,979,584,000;
  // final norm 4096. Total 8,030,261,248 bytes.
  EXPECT_DOUBLE_EQ(kv->weights_bytes, 8'030'261'248.0);
  // KV per token: 32 layers x (K + V) x 8 KV heads x 128 x 1 byte = 65,536.
  EXPECT_DOUBLE_EQ(kv->kv_bytes_per_token, 65'536.0);
  // Activations of the 8192-token budget step: the largest op is the SwiGLU
  // activation (reads 2 x 14336, writes 14336 per token = 43,008 B) plus the
  // residual stream 4096 B per token: 47,104 x 8192 = 385,875,968 bytes.
  EXPECT_DOUBLE_EQ(kv->activations_bytes, 385'875'968.0);
  // Free for KV: 0.9 x 80e9 - 8,030,261,248 - 385,875,968 = 63,583,862,784
  // bytes = 60,638.3 blocks of 16 x 65,536 B -> 60,638 blocks = 970,208
  // tokens. A sequence keeps 2048 + 512 - 1 = 2559 tokens = 160 blocks =
  // 2560 tokens: 970,208 / 2560 = 378.99 -> 378 sequences.
  EXPECT_EQ(kv->kv_capacity_tokens, 970'208);
  EXPECT_EQ(kv->tokens_per_sequence, 2560);
  EXPECT_EQ(kv->max_concurrency, 378);
  EXPECT_EQ(kv->limited_by, "kv_capacity");
  // With vLLM's default max_num_seqs = 256 the scheduler is the limit.
  absl::StatusOr<KvCapacity> capped =
      ComputeKvCapacity(Llama8bFp8OnH100(), ServingConfig{}, 2048, 512);
  ASSERT_TRUE(capped.ok());
  EXPECT_EQ(capped->max_concurrency, 256);
  EXPECT_EQ(capped->limited_by, "max_num_seqs");
}

// Inline ECC: the runtime sizes its pool from the memory the driver reports,
// (1 - share) of the physical capacity with ECC on; the bound (the pure
// roofline) keeps the physical figure.
TEST(KvCapacity, InlineEccTakesItsShareOfTheMemoryTheRuntimeSees) {
  ServingConfig config;
  config.max_num_seqs = 1024;
  engine::Scenario s = Llama8bFp8OnH100();
  s.hardware.tiers[0].inline_ecc_share = 1.0 / 16;
  absl::StatusOr<KvCapacity> kv = ComputeKvCapacity(s, config, 2048, 512);
  ASSERT_TRUE(kv.ok()) << kv.status();
  // 80e9 x 15/16 = 75e9 bytes. Free for KV: 0.9 x 75e9 - 8,030,261,248 -
  // 385,875,968 (the golden above) = 59,083,862,784 bytes = 56,346.8
  // blocks of 16 x 65,536 B -> 56,346 blocks = 901,536 tokens; / 2560 a
  // sequence = 352.2 -> 352 sequences (378 without ECC).
  EXPECT_DOUBLE_EQ(kv->device_memory_bytes, 75e9);
  EXPECT_EQ(kv->kv_capacity_tokens, 901'536);
  EXPECT_EQ(kv->max_concurrency, 352);
  // One that does not fit says which memory it counted: 0.05 x 75 GB =
  // 3.75 GB < the 8.03 GB of weights.
  ServingConfig small = config;
  small.memory_fraction = 0.05;
  absl::StatusOr<KvCapacity> none = ComputeKvCapacity(s, small, 2048, 512);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->fits);
  EXPECT_NE(none->not_fitting.find("(memory fraction 0.05 of 75.0 GB, net "
                                   "of inline ECC's check bits)"),
            std::string::npos)
      << none->not_fitting;
  s.options.pure_roofline = true;
  kv = ComputeKvCapacity(s, config, 2048, 512);
  ASSERT_TRUE(kv.ok()) << kv.status();
  EXPECT_DOUBLE_EQ(kv->device_memory_bytes, 80e9);
  EXPECT_EQ(kv->max_concurrency, 378);
}

// Speculative decoding: the draft sits beside the target (issue 24). With
// a Llama-3.2-1B draft (fp8, the target's formats) its weights: embedding
// 128256 x 2048 = 262,668,288 (tied: the LM head is the embedding), per
// layer q and o 2048^2 = 4,194,304 each, k and v 2048 x 512 = 1,048,576
// each, FFN 3 x 2048 x 8192 = 50,331,648, norms 4096: 60,821,504 x 16 =
// 973,144,064, final norm 2048: 1,235,814,400 bytes. Its KV keeps the same
// tokens: 16 layers x (K + V) x 8 x 64 x 1 B = 16,384 a token, 81,920 with
// the target's 65,536. Free: 72e9 - 8,030,261,248 - 1,235,814,400 -
// 385,875,968 = 62,348,048,384 B = 47,567.7 blocks of 16 x 81,920 ->
// 761,072 tokens; / 2560 a sequence = 297.3 -> 297 sequences (378 without).
// An EAGLE head shares the embedding and LM head; its one layer's KV is 2 x
// 8 x 128 x 1 B = 2048 a token.
TEST(KvCapacity, TheDraftsWeightsAndKvSitBesideTheTarget) {
  ServingConfig config;
  config.max_num_seqs = 1024;
  engine::Scenario s = Llama8bFp8OnH100();
  s.options.speculative =
      engine::ParseSpeculativeMethod("draft:llama-3.2-1b:4", "speculative")
          .value();
  s.options.speculative.acceptance_rate = 0.7;
  absl::StatusOr<KvCapacity> kv = ComputeKvCapacity(s, config, 2048, 512);
  ASSERT_TRUE(kv.ok()) << kv.status();
  EXPECT_DOUBLE_EQ(kv->weights_bytes, 8'030'261'248.0);
  EXPECT_DOUBLE_EQ(kv->draft_weights_bytes, 1'235'814'400.0);
  EXPECT_DOUBLE_EQ(kv->kv_bytes_per_token, 81'920.0);
  EXPECT_DOUBLE_EQ(kv->activations_bytes, 385'875'968.0);
  EXPECT_EQ(kv->kv_capacity_tokens, 761'072);
  EXPECT_EQ(kv->max_concurrency, 297);
  s.options.speculative =
      engine::ParseSpeculativeMethod("eagle:3", "speculative").value();
  s.options.speculative.acceptance_rate = 0.7;
  absl::StatusOr<KvCapacity> eagle = ComputeKvCapacity(s, config, 2048, 512);
  ASSERT_TRUE(eagle.ok()) << eagle.status();
  EXPECT_DOUBLE_EQ(eagle->kv_bytes_per_token, 65'536.0 + 2048.0);
  // One decoder layer of the target (218,112,000 B) and its input fusion,
  // without the 2 x 525,336,576 B of embedding and LM head it shares.
  EXPECT_GT(eagle->draft_weights_bytes, 218'112'000.0);
  EXPECT_LT(eagle->draft_weights_bytes, 2 * 218'112'000.0);
}
TEST(KvCapacity, DoesNotFitSaysWhy) {
  engine::Scenario s = Llama8bFp8OnH100();
  // Llama-3.1-70B in bf16: 70.6e9 parameters x 2 bytes = 141 GB > 72 GB.
  s.model = engine::FindModel("llama-3.1-70b").value();
  s.precision = engine::DefaultPrecision();
  absl::StatusOr<KvCapacity> kv =
      ComputeKvCapacity(s, ServingConfig{}, 2048, 512);
  ASSERT_TRUE(kv.ok());
  EXPECT_FALSE(kv->fits);
  EXPECT_EQ(kv->max_concurrency, 0);
  EXPECT_NE(kv->not_fitting.find("does not fit"), std::string::npos);
}

TEST(KvCapacity, BadConfigNamesTheField) {
  ServingConfig c;
  c.memory_fraction = 0;
  absl::Status s = ValidateServingConfig(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("serving.memory_fraction"), std::string::npos);
  EXPECT_NE(s.message().find("(0, 1]"), std::string::npos);
}

// A hand roofline: each step reads W bytes of weights once, each new token
// costs F flops, each token of context (and each new token) K bytes of KV.
class ToyRoofline final : public StepCost {
 public:
  double peak = 1e15, bandwidth = 1e12, weights = 1e10, flops_per_token = 2e10,
         kv_per_token = 1e5;
  absl::StatusOr<StepTime> Time(
      std::span<const SequenceInStep> seqs) const override {
    double tokens = 0, kv = 0;
    for (const SequenceInStep& s : seqs) {
      tokens += static_cast<double>(s.new_tokens);
      kv += static_cast<double>(s.context_tokens + s.new_tokens);
    }
    const double compute = tokens * flops_per_token / peak;
    const double memory = (weights + kv * kv_per_token) / bandwidth;
    return compute > memory ? StepTime{compute, engine::Bound::kCompute}
                            : StepTime{memory, engine::Bound::kMemory};
  }
};

TEST(MaxThroughput, MemoryBoundDecode) {
  ToyRoofline cost;
  ServingLimits limits{10, 10000, 1'000'000, 16};
  absl::StatusOr<OfflineThroughput> t =
      MaxThroughput(cost, limits, /*max_concurrency=*/10, 100, 101, 2);
  ASSERT_TRUE(t.ok()) << t.status();
  // d = min(10, 10000 x 100 / 200 = 5000) = 10 decoding; c = 10 x 100 / 100
  // = 10 prefill tokens. Decode context = 100 + 100 / 2 = 150.
  EXPECT_EQ(t->decode_sequences, 10);
  EXPECT_EQ(t->prefill_tokens, 10);
  EXPECT_EQ(t->concurrency_limited_by, "max_num_seqs");
  // The 10 prefill tokens are a tenth of a 100-token prompt: a chunk of 10
  // at context (100 - 10) / 2 = 45 (it reads 45 + 10 KV tokens).
  // Compute: 20 tokens x 2e10 / 1e15 = 0.4 ms. Memory: (1e10 + 10 x 151 x
  // 1e5 + 55 x 1e5) / 1e12 = 1.01565e10 / 1e12 = 10.1565 ms -> memory-bound.
  EXPECT_DOUBLE_EQ(t->step_seconds, 0.0101565);
  EXPECT_EQ(t->limiting_resource, "memory");
  // requests/s = 10 / (100 x 0.0101565) = 9.84591...; tokens/s = 101 x that
  // = 994.437; per device (2) 497.218.
  EXPECT_NEAR(t->requests_per_second, 10 / (100 * 0.0101565), 1e-9);
  EXPECT_NEAR(t->output_tokens_per_second, 994.4370600, 1e-6);
  EXPECT_NEAR(t->output_tokens_per_second_per_device, 497.2185300, 1e-6);
}

TEST(MaxThroughput, ComputeBoundPrefillHeavy) {
  ToyRoofline cost;
  ServingLimits limits{256, 2048, 1'000'000, 16};
  absl::StatusOr<OfflineThroughput> t =
      MaxThroughput(cost, limits, 256, 1000, 2, 1);
  ASSERT_TRUE(t.ok()) << t.status();
  // By budget: 2048 x 1 / 1001 = 2.05 decoders -> 2, each needs 1000 prompt
  // tokens per decode token: c = 2000, two whole prompts at context 0.
  EXPECT_EQ(t->decode_sequences, 2);
  EXPECT_EQ(t->prefill_tokens, 2000);
  EXPECT_EQ(t->concurrency_limited_by, "max_num_batched_tokens");
  // Compute: 2002 x 2e10 / 1e15 = 40.04 ms; memory: (1e10 + 2 x 1001 x 1e5
  // + 2000 x 1e5) / 1e12 = 10.4002 ms -> compute-bound, 40.04 ms.
  EXPECT_DOUBLE_EQ(t->step_seconds, 0.04004);
  EXPECT_EQ(t->limiting_resource, "compute");
  // 2 / (1 x 0.04004) = 49.95 requests/s, x 2 tokens = 99.9 tokens/s.
  EXPECT_NEAR(t->output_tokens_per_second, 2 * 2 / 0.04004, 1e-9);
}

TEST(MaxThroughput, CachedPrefixComputesOnlyTheRest) {
  ToyRoofline cost;
  ServingLimits limits{256, 2048, 1'000'000, 16};
  // A 900-token shared prefix in 1000-token prompts: whole 16-token blocks,
  // 56 x 16 = 896 cached; at least one token computed caps it at 999.
  EXPECT_EQ(CachedSharedPrefixTokens(900, 1000, 16), 896);
  EXPECT_EQ(CachedSharedPrefixTokens(2000, 1000, 16), 992);  // 999 -> 992
  EXPECT_EQ(CachedSharedPrefixTokens(10, 1000, 16), 0);
  absl::StatusOr<OfflineThroughput> t =
      MaxThroughput(cost, limits, 256, 1000, 2, 1, 896);
  ASSERT_TRUE(t.ok()) << t.status();
  // q = 1000 - 896 = 104 computed per prompt. By budget: 2048 x 1 / (104 +
  // 1) = 19.5 -> 19 decoders; c = 19 x 104 = 1976 = 19 whole chunks of 104
  // at context 896.
  EXPECT_EQ(t->decode_sequences, 19);
  EXPECT_EQ(t->prefill_tokens, 1976);
  // Compute: (19 + 1976) x 2e10 / 1e15 = 39.9 ms; memory: (1e10 + 19 x 1001
  // x 1e5 + 19 x 1000 x 1e5) / 1e12 = 13.8019 ms -> compute, 39.9 ms.
  EXPECT_DOUBLE_EQ(t->step_seconds, 0.0399);
  // 19 / 0.0399 = 476.19 requests/s: 9.5 x the 49.95 uncached (above).
  EXPECT_NEAR(t->requests_per_second, 19 / 0.0399, 1e-9);
  EXPECT_FALSE(MaxThroughput(cost, limits, 256, 1000, 2, 1, 1000).ok());
}

// 10 ms + 1 ms per new token in the step.
class LinearStep final : public StepCost {
 public:
  absl::StatusOr<StepTime> Time(
      std::span<const SequenceInStep> seqs) const override {
    int64_t tokens = 0;
    for (const SequenceInStep& s : seqs) tokens += s.new_tokens;
    return StepTime{0.010 + 0.001 * static_cast<double>(tokens),
                    engine::Bound::kMemory};
  }
};

TEST(Simulate, ThreeRequestsByHand) {
  SimulationConfig c;
  c.limits = {/*max_num_seqs=*/2, /*max_num_batched_tokens=*/6,
              /*kv_capacity_tokens=*/1000, /*block_size=*/1};
  c.arrivals.kind = Arrivals::Kind::kTrace;
  c.arrivals.times = {0, 0, 0.025};
  c.prompt = LengthDistribution::Fixed(4);
  c.generated = LengthDistribution::Fixed(3);
  absl::StatusOr<SimulationResult> r = Simulate(LinearStep(), c);
  ASSERT_TRUE(r.ok()) << r.status();
  // t=0     step 1: admit r0 (chunk 4) and r1 (chunk 2, budget left 2):
  //                 6 tokens, 16 ms -> t=0.016; r0's first token.
  // t=0.016 step 2: r0 decodes (1), r1 prefills its last 2: 3 tokens,
  //                 13 ms -> t=0.029; r1's first token.
  // t=0.029 step 3: r2 arrived (0.025) but 2 sequences run (max_num_seqs);
  //                 r0, r1 decode: 12 ms -> 0.041; r0 done (3 tokens).
  // t=0.041 step 4: r1 decodes, r2 admitted (chunk 4): 5 tokens, 15 ms ->
  //                 0.056; r1 done, r2's first token.
  // steps 5, 6: r2 decodes alone, 11 ms each -> 0.067, 0.078; r2 done.
  EXPECT_EQ(r->steps, 6);
  // TTFT: r0 0.016, r1 0.029, r2 0.056 - 0.025 = 0.031. Nearest rank: p50
  // is the 2nd of 3, p90 and p99 the 3rd.
  EXPECT_NEAR(r->ttft.p50, 0.029, 1e-12);
  EXPECT_NEAR(r->ttft.p90, 0.031, 1e-12);
  EXPECT_NEAR(r->ttft.mean, (0.016 + 0.029 + 0.031) / 3, 1e-12);
  // TPOT = (finish - first) / 2: r0 (0.041-0.016)/2 = 0.0125, r1
  // (0.056-0.029)/2 = 0.0135, r2 (0.078-0.056)/2 = 0.011.
  EXPECT_NEAR(r->tpot.p50, 0.0125, 1e-12);
  EXPECT_NEAR(r->tpot.p90, 0.0135, 1e-12);
  // E2E: 0.041, 0.056, 0.053. Queue: r2 waited 0.041 - 0.025 = 0.016.
  EXPECT_NEAR(r->e2e.p90, 0.056, 1e-12);
  EXPECT_NEAR(r->e2e.p50, 0.053, 1e-12);
  EXPECT_NEAR(r->queue.p90, 0.016, 1e-12);
  // Inter-token gaps: r0 13, 12; r1 12, 15; r2 11, 11 ms. Sorted
  // 11 11 12 12 13 15: p50 (3rd) 12 ms, p90 (6th) 15 ms, mean 74/6 ms.
  EXPECT_NEAR(r->itl.p50, 0.012, 1e-12);
  EXPECT_NEAR(r->itl.p90, 0.015, 1e-12);
  EXPECT_NEAR(r->itl.mean, 0.074 / 6, 1e-12);
  // 9 output tokens over 0.078 s.
  EXPECT_NEAR(r->duration_seconds, 0.078, 1e-12);
  EXPECT_NEAR(r->output_tokens_per_second, 9 / 0.078, 1e-9);
  EXPECT_EQ(r->max_waiting, 2);
}

// The same three requests over time, in 3 buckets (min(200, 3 requests))
// of 0.078 / 3 = 0.026 s: [0, 0.026), [0.026, 0.052), [0.052, 0.078].
TEST(Simulate, TimelineOfThreeRequestsByHand) {
  SimulationConfig c;
  c.limits = {2, 6, 1000, 1};
  c.arrivals.kind = Arrivals::Kind::kTrace;
  c.arrivals.times = {0, 0, 0.025};
  c.prompt = LengthDistribution::Fixed(4);
  c.generated = LengthDistribution::Fixed(3);
  c.timeline_buckets = kMaxTimelineBuckets;
  absl::StatusOr<SimulationResult> r = Simulate(LinearStep(), c);
  ASSERT_TRUE(r.ok()) << r.status();
  const Timeline& t = r->timeline;
  EXPECT_EQ(t.start_seconds, 0);
  EXPECT_NEAR(t.bucket_seconds, 0.026, 1e-12);
  // Arrivals 0, 0 and 0.025: all in bucket 0; their TTFTs 0.016, 0.029,
  // 0.031 (ThreeRequestsByHand): p50 0.029, p90 0.031. Buckets 1, 2: none.
  EXPECT_EQ(t.arrivals, (std::vector<int64_t>{3, 0, 0}));
  EXPECT_NEAR(t.ttft_p50_seconds[0], 0.029, 1e-12);
  EXPECT_NEAR(t.ttft_p90_seconds[0], 0.031, 1e-12);
  EXPECT_EQ(t.ttft_p90_seconds[1], 0);
  // TPOT 0.0125, 0.0135, 0.011 -> p90 0.0135; e2e 0.041, 0.056, 0.053.
  EXPECT_NEAR(t.tpot_p90_seconds[0], 0.0135, 1e-12);
  EXPECT_NEAR(t.e2e_p90_seconds[0], 0.056, 1e-12);
  // r2 waits [0.025, 0.041): 0.001 s in bucket 0, 0.015 s in bucket 1.
  EXPECT_NEAR(t.queue_mean[0], 0.001 / 0.026, 1e-9);
  EXPECT_NEAR(t.queue_mean[1], 0.015 / 0.026, 1e-9);
  EXPECT_NEAR(t.queue_mean[2], 0, 1e-12);
  // Running: r0 [0, 0.041), r1 [0, 0.056), r2 [0.041, 0.078).
  // Bucket 0: 0.026 + 0.026 = 2 x w; bucket 1: 0.015 + 0.026 + 0.011 =
  // 2 x w; bucket 2: 0.004 + 0.026 = 0.030 -> 0.030 / 0.026.
  EXPECT_NEAR(t.running_mean[0], 2, 1e-9);
  EXPECT_NEAR(t.running_mean[1], 2, 1e-9);
  EXPECT_NEAR(t.running_mean[2], 0.030 / 0.026, 1e-9);
  // Each reserves 4 + 3 - 1 = 6 of 1000 KV tokens while running.
  EXPECT_NEAR(t.kv_usage_mean[0], 2 * 0.006, 1e-9);
  EXPECT_NEAR(t.kv_usage_mean[2], 0.030 / 0.026 * 0.006, 1e-9);
}

SimulationConfig PoissonConfig(double rate, int64_t requests) {
  SimulationConfig c;
  c.limits = {64, 2048, 100000, 16};
  c.arrivals.rate = rate;
  c.requests = requests;
  c.prompt = LengthDistribution::Uniform(100, 300);
  c.generated = LengthDistribution::Empirical({10, 50, 100}, {1, 2, 1});
  c.seed = 7;
  return c;
}

TEST(Simulate, FoldedInterTokenGapsKeepExactPercentiles) {
  // One client, prompt 1, 1001 tokens, 100 requests: each request decodes
  // 1000 steps alone at contexts c = 1..1000, each the ToyRoofline's
  // memory time (1e10 + (c + 1) x 1e5) / 1e12 = 0.01 + (c + 1) x 1e-7 s
  // (compute, 2e10 / 1e15, is less). So the gaps are 0.01 + k x 1e-7 for
  // k = 2..1001, 100 times each: 100,000 samples, past the 65,536 at which
  // the simulation folds them by value (issue 26: unfolded they grew with
  // every step). Weighted nearest rank over 1000 equal-weight values:
  // p50 = the 500th (k = 501), p90 the 900th (k = 901), p99 the 990th
  // (k = 991); mean k = 501.5.
  ToyRoofline cost;
  SimulationConfig c;
  c.limits = {64, 2048, 100000, 16};
  c.arrivals.kind = Arrivals::Kind::kConcurrency;
  c.arrivals.concurrency = 1;
  c.requests = 100;
  c.prompt = LengthDistribution::Fixed(1);
  c.generated = LengthDistribution::Fixed(1001);
  absl::StatusOr<SimulationResult> r = Simulate(cost, c);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NEAR(r->itl.p50, 0.01 + 501e-7, 1e-12);
  EXPECT_NEAR(r->itl.p90, 0.01 + 901e-7, 1e-12);
  EXPECT_NEAR(r->itl.p99, 0.01 + 991e-7, 1e-12);
  EXPECT_NEAR(r->itl.mean, 0.01 + 501.5e-7, 1e-12);
}

TEST(Simulate, RunLengthAndCostBeforeTheRun) {
  // The run length: requests, or a trace's arrivals.
  SimulationConfig c = PoissonConfig(5, 500);
  EXPECT_EQ(SimulatedRequests(c), 500);
  c.arrivals.kind = Arrivals::Kind::kTrace;
  c.arrivals.times = {0, 1, 2};
  EXPECT_EQ(SimulatedRequests(c), 3);
  // 100 generated + ceil(3000 / 2048) = 2 chunks - 1 = 101 sequence-steps;
  // a 1-token answer to a 1-token prompt still takes one.
  EXPECT_DOUBLE_EQ(SequenceStepsPerRequest(3000, 100, 2048), 101);
  EXPECT_DOUBLE_EQ(SequenceStepsPerRequest(1, 1, 2048), 1);
}

TEST(Simulate, DeterministicPerSeed) {
  ToyRoofline cost;
  absl::StatusOr<SimulationResult> a = Simulate(cost, PoissonConfig(5, 500));
  absl::StatusOr<SimulationResult> b = Simulate(cost, PoissonConfig(5, 500));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->steps, b->steps);
  EXPECT_EQ(a->ttft.p99, b->ttft.p99);
  EXPECT_EQ(a->tpot.p90, b->tpot.p90);
  SimulationConfig other = PoissonConfig(5, 500);
  other.seed = 8;
  absl::StatusOr<SimulationResult> c = Simulate(cost, other);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(a->e2e.mean, c->e2e.mean);
  // Offered 5 requests/s of mean 65 tokens (10x1 + 50x2 + 100x1) / 4.
  EXPECT_GT(a->kv_usage_peak, 0);
  EXPECT_LE(a->kv_usage_peak, 1);
}

// A long run: at most 200 buckets whatever the request count, and the
// buckets add up to the run's own totals.
TEST(Simulate, TimelineIsBoundedAndAddsUp) {
  ToyRoofline cost;
  SimulationConfig c = PoissonConfig(50, 3000);
  c.timeline_buckets = kMaxTimelineBuckets;
  absl::StatusOr<SimulationResult> r = Simulate(cost, c);
  ASSERT_TRUE(r.ok()) << r.status();
  const Timeline& t = r->timeline;
  ASSERT_EQ(t.arrivals.size(), 200u);
  for (const auto* v :
       {&t.ttft_p50_seconds, &t.ttft_p90_seconds, &t.tpot_p90_seconds,
        &t.e2e_p90_seconds, &t.queue_mean, &t.running_mean, &t.kv_usage_mean}) {
    EXPECT_EQ(v->size(), 200u);
  }
  EXPECT_NEAR(t.bucket_seconds * 200, r->duration_seconds, 1e-9);
  int64_t arrived = 0;
  double kv = 0, queued = 0;
  for (size_t k = 0; k < 200; ++k) {
    arrived += t.arrivals[k];
    kv += t.kv_usage_mean[k] / 200;
    queued += t.queue_mean[k] * t.bucket_seconds;
  }
  EXPECT_EQ(arrived, 3000);
  // The mean of the KV series is the run's time-weighted KV use; the
  // queue's integral is every request's wait (3000 x the mean wait).
  EXPECT_NEAR(kv, r->kv_usage_mean, 1e-9);
  EXPECT_NEAR(queued, 3000 * r->queue.mean, 1e-6);
  // Without a timeline asked for (the rate search), none is built.
  c.timeline_buckets = 0;
  EXPECT_EQ(Simulate(cost, c)->timeline.arrivals.size(), 0u);
  c.timeline_buckets = 201;
  absl::Status bad = Simulate(cost, c).status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("simulation.timeline_buckets: must be in "
                               "[0, 200]; got 201"),
            std::string::npos)
      << bad;
}

TEST(Simulate, BadInputNamesTheField) {
  ToyRoofline cost;
  SimulationConfig c = PoissonConfig(0, 10);
  absl::StatusOr<SimulationResult> r = Simulate(cost, c);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("traffic.rate"), std::string::npos);
  // The smallest double's gaps overflow to infinity: found by the fuzzer
  // (answered INTERNAL "idle with nothing to arrive" before the floor).
  c = PoissonConfig(2.2250738585072014e-308, 10);
  r = Simulate(cost, c);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("[0.000001, 1000000]"), std::string::npos);
  c = PoissonConfig(-1, 10);
  EXPECT_EQ(Simulate(cost, c).status().code(),
            absl::StatusCode::kInvalidArgument);
  c = PoissonConfig(1, 1'000'000'000);
  r = Simulate(cost, c);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("simulation.requests"),
            std::string::npos);
  EXPECT_NE(r.status().message().find("1000000000"), std::string::npos);
  c = PoissonConfig(1, 10);
  c.prompt = LengthDistribution::Fixed(0);
  r = Simulate(cost, c);
  EXPECT_NE(r.status().message().find("traffic.prompt_tokens"),
            std::string::npos);
}

TEST(Simulate, StepCapAndStopEndTheRun) {
  ToyRoofline cost;
  SimulationConfig c = PoissonConfig(5, 500);
  c.max_steps = 100;
  absl::StatusOr<SimulationResult> r = Simulate(cost, c);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("SimulationConfig.max_steps"),
            std::string::npos)
      << r.status();
  // The caller names the limit (the server: its flag).
  c.max_steps_name = "--max-sequence-steps";
  r = Simulate(cost, c);
  EXPECT_NE(r.status().message().find("(the limit, --max-sequence-steps)"),
            std::string::npos)
      << r.status();
  c = PoissonConfig(5, 500);
  c.stop = [] { return true; };
  r = Simulate(cost, c);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(Simulate, RequestLargerThanTheCacheIsAPrecondition) {
  ToyRoofline cost;
  SimulationConfig c = PoissonConfig(5, 10);
  c.limits.kv_capacity_tokens = 64;
  EXPECT_EQ(Simulate(cost, c).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(MaxRateAtSlo, FindsTheKnee) {
  ToyRoofline cost;
  SimulationConfig base = PoissonConfig(1, 400);
  Slo slo{0.5, 0.05};
  absl::StatusOr<OfflineThroughput> off =
      MaxThroughput(cost, base.limits, 64, 200, 65, 1);
  ASSERT_TRUE(off.ok());
  absl::StatusOr<MaxRate> m =
      MaxRateAtSlo(cost, base, slo, off->requests_per_second);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(m->reachable) << m->why;
  EXPECT_TRUE(MeetsSlo(m->at_max, slo));
  EXPECT_GT(m->max_rate, 0);
  EXPECT_LE(m->max_rate, off->requests_per_second);
  // A step alone takes >= 10 ms (weights 1e10 B / 1e12 B/s): a 5 ms TPOT
  // can never be met; the best achievable is reported.
  absl::StatusOr<MaxRate> none =
      MaxRateAtSlo(cost, base, Slo{0.5, 0.005}, off->requests_per_second);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->reachable);
  EXPECT_NE(none->why.find("unreachable even at concurrency 1"),
            std::string::npos);
  EXPECT_GE(none->best.tpot.p90, 0.010);
  EXPECT_EQ(ValidateSlo(Slo{0, 0.05}).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(EngineStepCost, MixedStepIsAtLeastEachPart) {
  engine::Scenario s = Llama8bFp8OnH100();
  s.workload = {64, 2048, 512};
  absl::StatusOr<std::unique_ptr<EngineStepCost>> cost =
      EngineStepCost::Create(s);
  ASSERT_TRUE(cost.ok()) << cost.status();
  std::vector<SequenceInStep> decode(32, SequenceInStep{2000, 1});
  std::vector<SequenceInStep> prefill = {{0, 1024}};
  std::vector<SequenceInStep> mixed = decode;
  mixed.push_back({0, 1024});
  const double d = (*cost)->Time(decode)->seconds;
  const double p = (*cost)->Time(prefill)->seconds;
  const double m = (*cost)->Time(mixed)->seconds;
  EXPECT_GE(m, d);
  EXPECT_GE(m, p);
  EXPECT_LE(m, d + p);
  EXPECT_EQ((*cost)->cache_size(), 3);
  EXPECT_EQ((*cost)->Time(mixed)->seconds, m);  // cached
  EXPECT_EQ((*cost)->cache_size(), 3);
}

// The cost is the engine's mixed step itself: decode sequences folded to
// their mean context give the same time as the unfolded batch (Llama-3.1-8B
// has no sliding layers: attention reads sum(c_i + 1) keys either way), and a
// chunk of a prompt already partly cached is timed at its own context.
TEST(EngineStepCost, IsTheEngineMixedStep) {
  engine::Scenario s = Llama8bFp8OnH100();
  s.workload = {64, 2048, 512};
  absl::StatusOr<std::unique_ptr<EngineStepCost>> cost =
      EngineStepCost::Create(s);
  ASSERT_TRUE(cost.ok()) << cost.status();
  absl::StatusOr<engine::StepEvaluator> e = engine::StepEvaluator::Create(s);
  ASSERT_TRUE(e.ok()) << e.status();
  // Contexts are multiples of the 16-token quantum, so nothing is rounded.
  const std::vector<SequenceInStep> mixed = {{1024, 1}, {3072, 1}, {1024, 512}};
  const std::vector<engine::StepSequence> real = {
      {1024, 1}, {3072, 1}, {1024, 512}};
  absl::StatusOr<engine::StepTiming> want = e->Step(real);
  ASSERT_TRUE(want.ok()) << want.status();
  absl::StatusOr<StepTime> got = (*cost)->Time(mixed);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_NEAR(got->seconds, want->seconds, 1e-9 * want->seconds);
  EXPECT_EQ(got->bound, want->bound);
  // The same decode contexts in another order and split: one cache entry.
  const std::vector<SequenceInStep> folded = {{1024, 512}, {2048, 1}, {2048, 1}};
  EXPECT_NEAR((*cost)->Time(folded)->seconds, want->seconds,
              1e-9 * want->seconds);
  EXPECT_EQ((*cost)->cache_size(), 1);
  // The chunk's prior context costs attention: later chunks take longer.
  const double first = (*cost)->Time(std::vector<SequenceInStep>{{0, 512}})->seconds;
  const double later =
      (*cost)->Time(std::vector<SequenceInStep>{{4096, 512}})->seconds;
  EXPECT_GT(later, first);
}

// A lone cohort's next step reuses the last decode-only step's time while
// its key is the same (EngineStepCost::TimeFolded's memo), and only then.
// Key: {count, nearest(floor(S / count)) to the 16-token quantum}, nearest(v)
// = (v + 8) / 16 * 16. Three decoders: S = 69 -> floor 23 -> 16; S = 71 ->
// 23 -> 16 (the memo's range [(16 - 8) * 3, (16 + 8) * 3) = [24, 72)); S =
// 72 -> 24 -> 32, a new key: more context, a longer step.
TEST(EngineStepCost, ALoneCohortsNextStepReusesItsKeysTime) {
  engine::Scenario s = Llama8bFp8OnH100();
  s.workload = {64, 2048, 512};
  absl::StatusOr<std::unique_ptr<EngineStepCost>> memo =
      EngineStepCost::Create(s);
  absl::StatusOr<std::unique_ptr<EngineStepCost>> plain =
      EngineStepCost::Create(s);
  ASSERT_TRUE(memo.ok()) << memo.status();
  ASSERT_TRUE(plain.ok()) << plain.status();
  // `plain` is asked another count first each time: never its memo.
  auto fresh = [&](int64_t count, int64_t sum) {
    (void)(*plain)->TimeFolded({}, FoldedDecodes{count + 1, sum});
    return (*plain)->TimeFolded({}, FoldedDecodes{count, sum})->seconds;
  };
  const double at69 = (*memo)->TimeFolded({}, FoldedDecodes{3, 69})->seconds;
  EXPECT_EQ((*memo)->TimeFolded({}, FoldedDecodes{3, 71})->seconds, at69);
  EXPECT_EQ(fresh(3, 71), at69);
  const double at72 = (*memo)->TimeFolded({}, FoldedDecodes{3, 72})->seconds;
  EXPECT_EQ(at72, fresh(3, 72));
  EXPECT_GT(at72, at69);
  // Another count with the same sum is another key.
  EXPECT_EQ((*memo)->TimeFolded({}, FoldedDecodes{4, 72})->seconds,
            fresh(4, 72));
  // A cohort stepping on (the sum grows by its count) through many quanta
  // is timed as without the memo, step by step.
  for (int64_t count : {1, 3, 7}) {
    for (int64_t sum = count * 2000; sum < count * 2100; sum += count) {
      EXPECT_EQ((*memo)->TimeFolded({}, FoldedDecodes{count, sum})->seconds,
                fresh(count, sum))
          << count << " decoders, context sum " << sum;
    }
  }
}

// Decoders in lockstep step as a cohort (decode_cohort.h) when the step
// model folds decodes; a model that times them one by one (the same
// engine cost, its fold hidden) takes the per-sequence path. Both are the
// same simulation: every request's times equal, the steps and the
// summaries too (the inter-token mean to rounding: its weighted sum is
// added in another grouping). Decode-first and prefill-first, with
// prefix caching and varied lengths, on one replica (whose lone cohort
// steps on between events without the event loop: Replica::Coast) and on
// two behind a router.
class OneByOne final : public StepCost {
 public:
  explicit OneByOne(const StepCost& inner) : inner_(inner) {}
  absl::StatusOr<StepTime> Time(
      std::span<const SequenceInStep> sequences) const override {
    return inner_.Time(sequences);
  }

 private:
  const StepCost& inner_;
};

TEST(Simulate, DecodeCohortIsTheOneByOneSimulation) {
  engine::Scenario s = Llama8bFp8OnH100();
  s.workload = {64, 2048, 512};
  absl::StatusOr<std::unique_ptr<EngineStepCost>> cost =
      EngineStepCost::Create(s);
  ASSERT_TRUE(cost.ok()) << cost.status();
  ASSERT_TRUE((*cost)->folds_decodes());
  const OneByOne one_by_one(**cost);
  ASSERT_FALSE(one_by_one.folds_decodes());
  const DecodeFirstScheduler decode_first;
  const PrefillFirstScheduler prefill_first;
  for (const std::pair<const Scheduler*, int>& setup :
       std::initializer_list<std::pair<const Scheduler*, int>>{
           {&decode_first, 1},
           {&decode_first, 2},
           {&prefill_first, 1},
           {&prefill_first, 2}}) {
    // Not a structured binding: clang 14 (the sanitizer build) cannot
    // capture one in a lambda.
    const Scheduler* policy = setup.first;
    const int replicas = setup.second;
    SimulationConfig c = PoissonConfig(40 / (3 - replicas), 600);
    ServingLimits limits = c.limits;
    limits.max_num_batched_tokens = 512;  // chunked prefills, partial steps
    limits.prefix_caching = true;
    c.shared_prefix_tokens = 64;
    auto run = [&](const StepCost& cost) {
      DeploymentSpec d;
      d.pools.push_back(
          {"", &cost, limits, replicas, "least-loaded", policy});
      return SimulateDeployment(d, c);
    };
    absl::StatusOr<DeploymentResult> cohort = run(**cost);
    absl::StatusOr<DeploymentResult> each = run(one_by_one);
    ASSERT_TRUE(cohort.ok()) << cohort.status();
    ASSERT_TRUE(each.ok()) << each.status();
    const SimulationResult& a = cohort->overall;
    const SimulationResult& b = each->overall;
    const std::string name =
        std::string(policy->name()) + " x" + std::to_string(replicas);
    EXPECT_EQ(a.steps, b.steps) << name;
    EXPECT_GT(a.steps, 1000) << name;
    EXPECT_EQ(a.ttft.p90, b.ttft.p90) << name;
    EXPECT_EQ(a.tpot.p90, b.tpot.p90) << name;
    EXPECT_EQ(a.tpot.mean, b.tpot.mean) << name;
    EXPECT_EQ(a.e2e.p99, b.e2e.p99) << name;
    EXPECT_EQ(a.itl.p50, b.itl.p50) << name;
    EXPECT_EQ(a.itl.p99, b.itl.p99) << name;
    EXPECT_NEAR(a.itl.mean, b.itl.mean, 1e-12 * b.itl.mean) << name;
    EXPECT_EQ(a.duration_seconds, b.duration_seconds) << name;
    EXPECT_EQ(a.prefix_hit_rate, b.prefix_hit_rate) << name;
    EXPECT_EQ(a.mean_running, b.mean_running) << name;
  }
}

}  // namespace
}  // namespace ridgeline::serving
