// Speculative decoding and LoRA cold loads applied to a finished analysis:
// the decode phase re-timed as speculative steps, TTFT with the draft's
// prefill and the expected adapter loads. Internal to the engine.
#pragma once

#include "absl/status/status.h"
#include "prepare.h"
#include "ridgeline/engine/result.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::engine::internal {

// No-op without options.speculative. Otherwise replaces r's decode times
// (TPOT first/mean/last, decode totals' seconds, tokens/s) with the
// speculative steps' (SpeculativeSummary says how), adds the draft's
// prefill to TTFT and fills r->speculative. Call before e2e and the
// deployment figures are derived. Errors: the draft's (INVALID_ARGUMENT
// naming options.speculative.*).
absl::Status ApplySpeculative(const Scenario& s, AnalysisResult* r);

// No-op without options.lora; else fills r->lora and adds the expected cold
// loads to TTFT (a warning when the hardware has no host link to time them).
void ApplyLoraColdLoads(const Scenario& s, const Prepared& prep,
                        AnalysisResult* r);

}  // namespace ridgeline::engine::internal
