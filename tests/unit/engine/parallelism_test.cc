// Parallelism: validation of every combination (ranges, experts dividing,
// stages <= layers, groups in whole nodes), with errors that say why.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
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
       "parallelism.expert_parallel must be a multiple of "
       "parallelism.tensor_parallel (4)"},
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
