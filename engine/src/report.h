// Report text: the bottleneck of an analysis in words and numbers (which
// op, which roof, how far from its ridge point). Internal to the engine.
#pragma once

#include "ridgeline/engine/result.h"

namespace ridgeline::engine::internal {

// Fills r->bottleneck from the decode phase (or the prefill when `decode` is
// false: no decode steps).
void ComputeBottleneck(AnalysisResult* r, bool decode);

}  // namespace ridgeline::engine::internal
