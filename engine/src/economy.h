// Economy: energy (per op and byte, or board power x time), $ (purchase
// price amortised over the device's life plus electricity x PUE) and gCO2e
// (grid intensity plus embodied carbon amortised) of an analysis. Every
// default's source is beside its definition in scenario.cc. Internal.
#pragma once

#include "ridgeline/engine/result.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::engine::internal {

// Fills r->economy from r's per-op prefill and decode results (energy is
// counted once per op, over all its layers) for all devices.
void ComputeEconomy(const Scenario& s, AnalysisResult* r);

}  // namespace ridgeline::engine::internal
