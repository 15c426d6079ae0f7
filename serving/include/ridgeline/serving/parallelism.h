// The parallelism a serving replica may use, on top of the engine's own
// rules (engine::ValidateScenario): pipeline stages that divide the layers
// (every stage then holds the same share of the weights and of every
// sequence's KV, which the per-stage KV capacity counts on), and expert
// parallelism only for MoE models, over their routed experts, with the
// attention data-parallel over the expert-parallel group.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::serving {

// INVALID_ARGUMENT naming `field` (a Status field path), the allowed values
// and the value: 1..256 stages dividing model.num_layers.
absl::Status CheckPipelineStages(const engine::ModelConfig& model,
                                 int64_t stages, absl::string_view field);
// 1 for a dense model; else 1..256 dividing the routed experts.
absl::Status CheckExpertParallel(const engine::ModelConfig& model,
                                 int64_t expert_parallel,
                                 absl::string_view field);

// The replica's parallelism for `expert_parallel` > 1: attention data-
// parallel over the expert-parallel group, tensor parallelism 1 (the
// engine's DeepSeek-V3 style); else tensor parallelism `tensor_parallel`.
engine::Parallelism ReplicaParallelism(int64_t tensor_parallel,
                                       int64_t pipeline_parallel,
                                       int64_t expert_parallel);

}  // namespace ridgeline::serving
