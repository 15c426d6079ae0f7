// Parallelism: validation of every combination (ranges, experts dividing,
// stages <= layers, groups in whole nodes), with errors that say why.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ridgeline/engine/analyze.h"
#include "ridgeline/engine/scenario.h"
#include "test_hardware.h"

namespace ridgeline::engine {
namespace {

using ::testing::HasSubstr;
using testing::A100Like;
using testing::MakeScenario;

absl::Status Validate(const std::string& model, Parallelism p,
                      std::optional<int64_t> devices_per_node = std::nullopt) {
  Scenario s = MakeScenario(model, A100Like());
  s.hardware.devices_per_node = devices_per_node;
  s.parallelism = p;
  return ValidateScenario(s);
}

TEST(ParallelismValidationTest, DefaultsAndValidCombinationsPass) {
  EXPECT_TRUE(Validate("llama-3-8b", {}).ok());
  Parallelism pp;
  pp.pipeline_parallel = 4;
  pp.pipeline_micro_batches = 8;
  pp.tensor_parallel = 2;
  pp.data_parallel = 3;
  EXPECT_TRUE(Validate("llama-3-8b", pp, 8).ok());
  // Mixtral: 8 experts over 8 devices with tensor-parallel attention.
  Parallelism ep;
  ep.tensor_parallel = 8;
  ep.expert_parallel = 8;
  EXPECT_TRUE(Validate("mixtral-8x7b", ep, 8).ok());
  // DeepSeek-style: attention data-parallel over the expert group.
  Parallelism dpa;
  dpa.expert_parallel = 8;
  dpa.attention_data_parallel = true;
  EXPECT_TRUE(Validate("mixtral-8x7b", dpa, 8).ok());
  EXPECT_EQ(TotalDevices(pp), 3 * 4 * 2);
  EXPECT_EQ(TotalDevices(dpa), 8);
}

TEST(ParallelismValidationTest, ErrorsNameTheFieldAndSayWhy) {
  struct Case {
    const char* model;
    Parallelism p;
    std::optional<int64_t> node;
    const char* message;
  };
  Parallelism too_many_stages;
  too_many_stages.pipeline_parallel = 33;  // llama-3-8b has 32 layers
  Parallelism stages_range;
  stages_range.pipeline_parallel = 0;
  Parallelism dense_ep;
  dense_ep.expert_parallel = 2;
  dense_ep.tensor_parallel = 2;
  Parallelism ep_not_dividing;
  ep_not_dividing.expert_parallel = 3;  // Mixtral has 8 experts
  ep_not_dividing.attention_data_parallel = true;
  Parallelism ep_ne_tp;
  ep_ne_tp.expert_parallel = 4;
  ep_ne_tp.tensor_parallel = 2;
  Parallelism dpa_without_ep;
  dpa_without_ep.attention_data_parallel = true;
  Parallelism ep_not_multiple;
  ep_not_multiple.expert_parallel = 2;
  ep_not_multiple.tensor_parallel = 4;
  ep_not_multiple.attention_data_parallel = true;
  Parallelism tp_off_node;
  tp_off_node.tensor_parallel = 4;
  Parallelism dp_range;
  dp_range.data_parallel = 65537;
  Parallelism mb_range;
  mb_range.pipeline_parallel = 2;
  mb_range.pipeline_micro_batches = -1;
  const Case cases[] = {
      {"llama-3-8b", too_many_stages, std::nullopt,
       "parallelism.pipeline_parallel must not exceed model.num_layers (32): "
       "every stage needs at least one layer, got 33"},
      {"llama-3-8b", stages_range, std::nullopt,
       "parallelism.pipeline_parallel must be in [1, 256], got 0"},
      {"llama-3-8b", dense_ep, std::nullopt,
       "parallelism.expert_parallel must be 1 for a dense model"},
      {"mixtral-8x7b", ep_not_dividing, std::nullopt,
       "parallelism.expert_parallel must divide the routed experts (8)"},
      {"mixtral-8x7b", ep_ne_tp, std::nullopt,
       "parallelism.expert_parallel must equal parallelism.tensor_parallel (2) "
       "unless attention_data_parallel is set"},
      {"mixtral-8x7b", dpa_without_ep, std::nullopt,
       "parallelism.attention_data_parallel needs expert_parallel > 1"},
      {"mixtral-8x7b", ep_not_multiple, std::nullopt,
       "parallelism.tensor_parallel must be 1 with attention_data_parallel"},
      // 4 devices do not fill 6-device nodes, nor whole multiples of them.
      {"llama-3-8b", tp_off_node, 6,
       "parallelism.tensor_parallel must divide or be a multiple of "
       "hardware.devices_per_node (6)"},
      {"llama-3-8b", dp_range, std::nullopt,
       "parallelism.data_parallel must be in [1, 65536], got 65537"},
      {"llama-3-8b", mb_range, std::nullopt,
       "parallelism.pipeline_micro_batches must be in [1, 65536], got -1"},
  };
  for (const Case& c : cases) {
    absl::Status s = Validate(c.model, c.p, c.node);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.message));
  }
}

TEST(ParallelismValidationTest, DevicesPerNodeIsValidated) {
  Scenario s = MakeScenario("llama-3-8b", A100Like());
  s.hardware.devices_per_node = 0;
  absl::Status st = ValidateScenario(s);
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("hardware.devices_per_node must be in [1, 1048576], "
                        "got 0"));
  s.hardware.devices_per_node = 8;
  s.hardware.scale_out_bytes_per_second = -1;
  st = ValidateScenario(s);
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("hardware.scale_out_bytes_per_second must be finite "
                        "and > 0, got -1"));
}

}  // namespace
}  // namespace ridgeline::engine

namespace ridgeline::engine {
namespace {

const OpResult* FindOp(const StepResult& step, OpKind kind) {
  for (const OpResult& op : step.ops) {
    if (op.kind == kind) return &op;
  }
  return nullptr;
}

// The golden: 4 stages, 8 micro-batches. Llama-3-8B (32 layers,
// hidden 4096), batch 8, prompt 1024, bf16, on the A100-like part with an
// illustrative 600e9 B/s scale-up link and no latency.
TEST(PipelineParallelTest, PrefillBubbleFourStagesEightMicroBatches) {
  Scenario s = MakeScenario("llama-3-8b", A100Like());
  s.hardware.interconnect_bytes_per_second = 600e9;
  s.workload = {8, 1024, 16};
  s.parallelism.pipeline_parallel = 4;
  s.parallelism.pipeline_micro_batches = 8;
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  // Bubble (stages - 1) / micro-batches = 3 / 8.
  EXPECT_DOUBLE_EQ(r->pipeline_bubble_fraction, 0.375);
  // TTFT = prefill x (8 + 4 - 1) / (8 x 4) = prefill x 11 / 32.
  EXPECT_DOUBLE_EQ(r->ttft_seconds, r->prefill.totals.seconds * 11.0 / 32.0);
  // Stage-to-stage sends: 3 sends of the 8 x 1024 tokens' hidden states,
  // 8192 x 4096 x 2 B = 67,108,864 B each, at 300e9 B/s one way:
  // 3 x 223.696 us = 671.089 us.
  const OpResult* send = FindOp(r->prefill, OpKind::kPipelineSend);
  ASSERT_NE(send, nullptr);
  EXPECT_NEAR(send->interconnect_seconds, 3 * 67108864.0 / 300e9, 1e-15);
  // Decode: a token crosses every stage in turn: its step holds all 32
  // layers plus 3 sends of 8 x 4096 x 2 B = 65,536 B.
  const OpResult* dsend = FindOp(r->decode_first_step, OpKind::kPipelineSend);
  ASSERT_NE(dsend, nullptr);
  EXPECT_NEAR(dsend->interconnect_seconds, 3 * 65536.0 / 300e9, 1e-18);
  // Memory per stage: a quarter of the weights (8.03e9 params x 2 B / 4).
  Scenario one = s;
  one.parallelism = Parallelism();
  absl::StatusOr<AnalysisResult> r1 = Analyze(one);
  ASSERT_TRUE(r1.ok());
  const int w = static_cast<int>(OperandClass::kWeights);
  EXPECT_DOUBLE_EQ(r->memory.required_bytes[w] * 4, r1->memory.required_bytes[w]);
  EXPECT_EQ(r->devices, 4);
}

// Data-parallel replicas: throughput adds up, latency does not; every
// device counts in cost, per-token cost stays.
TEST(DataParallelTest, TwoReplicasDoubleThroughputNotSpeed) {
  Scenario s = MakeScenario("llama-3-8b", A100Like());
  s.hardware.price_usd = 10000;  // illustrative
  s.hardware.tdp_watts = 400;    // illustrative
  s.workload = {16, 512, 64};
  absl::StatusOr<AnalysisResult> one = Analyze(s);
  s.parallelism.data_parallel = 2;
  absl::StatusOr<AnalysisResult> two = Analyze(s);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(one->devices, 1);
  EXPECT_EQ(two->devices, 2);
  EXPECT_EQ(two->ttft_seconds, one->ttft_seconds);
  EXPECT_EQ(two->tpot_mean_seconds, one->tpot_mean_seconds);
  EXPECT_DOUBLE_EQ(two->deployment_decode_tokens_per_second,
                   2 * one->deployment_decode_tokens_per_second);
  EXPECT_DOUBLE_EQ(two->deployment_prefill_tokens_per_second,
                   2 * one->deployment_prefill_tokens_per_second);
  EXPECT_DOUBLE_EQ(one->deployment_decode_tokens_per_second,
                   one->decode_tokens_per_second_total);
  ASSERT_TRUE(two->economy.usd_per_million_output_tokens.has_value());
  EXPECT_DOUBLE_EQ(*two->economy.usd_per_million_output_tokens,
                   *one->economy.usd_per_million_output_tokens);
}

}  // namespace
}  // namespace ridgeline::engine

namespace ridgeline::engine {
namespace {

// The golden: Mixtral-8x7B (32 MoE layers, 8 experts, top-2,
// hidden 4096), expert parallelism over 8 devices with data-parallel
// attention, batch 64 decode on each device, bf16, an illustrative 900e9
// B/s scale-up link (no latency).
TEST(ExpertParallelTest, MixtralEp8Batch64AllToAllBytesByHand) {
  Scenario s = MakeScenario("mixtral-8x7b", A100Like());
  s.hardware.interconnect_bytes_per_second = 900e9;
  s.workload = {64, 512, 8};
  s.parallelism.expert_parallel = 8;
  s.parallelism.attention_data_parallel = true;
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  const OpResult* a2a = nullptr;
  for (const OpResult& op : r->decode_first_step.ops) {
    if (op.kind == OpKind::kAllToAll) a2a = &op;
  }
  ASSERT_NE(a2a, nullptr);
  // Per device and layer: 64 tokens x 2 experts = 128 visits, 7/8 of them
  // to other devices: 112 x 4096 x 2 B = 917,504 B sent by dispatch (and
  // as many received), the same again by combine. Over 32 layers:
  // 2 calls x 917,504 B / 450e9 B/s (one direction) x 32 = 130.48 us.
  EXPECT_NEAR(a2a->interconnect_seconds, 2 * 917504.0 / 450e9 * 32, 1e-15);
  // Expected load per device: the experts see all 8 x 64 = 512 tokens'
  // 1024 visits, 128 of them here; each of the 8 experts is touched
  // (1 - (6/8)^512 ~ 1), so a device reads its one expert: 3 x 4096 x
  // 14336 x 2 B = 352,321,536 B per layer.
  const OpResult* experts = nullptr;
  for (const OpResult& op : r->decode_first_step.ops) {
    if (op.kind == OpKind::kMoeRoutedExperts) experts = &op;
  }
  ASSERT_NE(experts, nullptr);
  const int w = static_cast<int>(OperandClass::kWeights);
  double weights = 0;
  for (const Traffic& t : experts->traffic[w]) weights += t.read;
  EXPECT_NEAR(weights, 352321536.0 * 32, 1.0);
  // The 8 devices each serve a batch of 64: throughput adds up.
  EXPECT_DOUBLE_EQ(r->deployment_decode_tokens_per_second,
                   8 * r->decode_tokens_per_second_total);
  EXPECT_EQ(r->devices, 8);
}

}  // namespace
}  // namespace ridgeline::engine
