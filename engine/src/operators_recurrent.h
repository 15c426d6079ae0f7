// The ops of recurrent mixers (Mamba-1, Mamba-2 / SSD, Gated DeltaNet,
// lightning attention) and of DeepSeek Sparse Attention's indexer. Internal to
// the engine; called by the operator graph (operators.cc).
#pragma once

#include "emitter.h"
#include "operators.h"

namespace ridgeline::engine::internal {

// How a step's tokens split between the recurrent form (one new token of a
// sequence: decode) and the chunked form (several: prefill or a prefill
// chunk).
struct RecurrentSplit {
  double decode_tokens = 0;  // = decoding sequences
  double chunked_tokens = 0;
  double chunked_seqs = 0;
  double seqs = 0;  // all sequences of the step
};
RecurrentSplit SplitRecurrent(const StepShape& shape);

// in_proj, conv1d, SSD scan / state update, gated norm, out_proj of one
// group of Mamba-2 layers.
void EmitMamba2(const GraphContext& g, const LayerGroup& grp,
                const StepShape& shape, Emitter& e);
// in_proj, conv1d, x_proj and dt_proj, selective scan, out_proj of one
// group of Mamba-1 layers.
void EmitMamba1(const GraphContext& g, const LayerGroup& grp,
                const StepShape& shape, Emitter& e);
// Projections, short conv, chunked / recurrent linear attention, gated
// norm, out_proj of one group of linear-attention layers.
void EmitLinearAttention(const GraphContext& g, const LayerGroup& grp,
                         const StepShape& shape, Emitter& e);
// DSA's indexer on an MLA layer group: its projections (the index key goes
// to the cache) and the scores of every query against every cached index
// key (KV-dependent, no window).
void EmitDsaIndexer(const GraphContext& g, const LayerGroup& grp,
                    const StepShape& shape, Emitter& e);

}  // namespace ridgeline::engine::internal
