// Catalog entries of the hybrid recurrent / attention and sparse-attention
// models (models_hybrid.cc). Internal to the engine.
#pragma once

#include <vector>

#include "ridgeline/engine/model.h"

namespace ridgeline::engine::internal {

// Appends Qwen3-Next, Nemotron-H, Nemotron-3 Nano and DeepSeek-V3.2.
void AppendHybridModels(std::vector<ModelConfig>* catalog);

}  // namespace ridgeline::engine::internal
