// Catalog entries of the hybrid recurrent / attention and sparse-attention
// models (models_hybrid.cc). Internal to the engine.
#pragma once

#include <vector>

#include "ridgeline/engine/model.h"

namespace ridgeline::engine::internal {

// Appends Qwen3-Next, Nemotron-H, Nemotron-3 Nano, DeepSeek-V3.2,
// GLM-4.5-Air, MiniMax-M1, Jamba-1.5-Mini, Mamba-Codestral, Falcon-H1 and
// Kimi-Linear.
void AppendHybridModels(std::vector<ModelConfig>* catalog);

}  // namespace ridgeline::engine::internal
