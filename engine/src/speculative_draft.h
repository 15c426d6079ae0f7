// The draft of a speculative scenario: its model (a catalog draft or the
// target's own MTP / EAGLE head), its scenario and its room beside the
// target. Internal to the engine.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/engine/result.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::engine::internal {

// Ranges of options.speculative (k, alpha or the per-position list) and MTP
// layers present in `target`: INVALID_ARGUMENT naming the field.
absl::Status ValidateSpeculative(const SpeculativeDecoding& s,
                                 const ModelConfig& target);

// A draft head as a one-layer model: the target's hidden size, attention and
// vocabulary, an input fusion of [embedding; hidden] (fused_hidden_inputs
// 2), and one decoder layer: MTP the target's (MoE) layer, EAGLE a dense
// one of the target's FFN width.
ModelConfig DraftHeadModel(const ModelConfig& target, DraftMethod method);

// The scenario the draft runs as: the target's with the draft model, no
// speculation or LoRA, the tensor-parallel group kept and no pipeline.
// Errors (unknown draft, a draft the parallelism does not divide) carry
// "options.speculative.draft_model" / ".method".
absl::StatusOr<Scenario> DraftScenario(const Scenario& target);

// Capacity of the device-memory tiers (HBM, GDDR, LPDDR, DDR, unified).
double DeviceMemoryBytes(const Hardware& hw);

// What the draft adds on one device: its weights and KV cache less, for a
// head, the embedding and LM head it shares with the target (activations
// share the target's workspace).
double DraftExtraBytes(const Scenario& draft, const MemoryFootprint& memory,
                       DraftMethod method);
// Of the draft's weights on one device, what a head shares with the
// target (its embedding and LM head); 0 for a draft model.
double DraftSharedBytes(const Scenario& draft, DraftMethod method);

// INVALID_ARGUMENT when the target fits in device memory alone but not with
// `draft_bytes` beside it.
absl::Status CheckDraftFits(const Scenario& target,
                            const MemoryFootprint& target_memory,
                            double draft_bytes);

}  // namespace ridgeline::engine::internal
