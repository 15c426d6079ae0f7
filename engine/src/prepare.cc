// Graph, footprint and placement of a scenario (see prepare.h).
#include "prepare.h"

#include <algorithm>
#include <array>
#include <functional>
#include <utility>

#include "ridgeline/engine/status_macros.h"
#include "stop.h"

namespace ridgeline::engine::internal {

namespace {

// Chunked prefill of `prompt` tokens per sequence in pieces of `chunk`:
// each chunk is a forward pass of its own. The ops that do not read the KV
// cache keep the whole prompt's FLOPs and activations; the decoder layers'
// weights are streamed again by every chunk (summed per chunk, so MoE
// experts are those each chunk touches), while the ops outside the layers
// (embedding gather, final norm, LM head: logits of the last chunk only)
// run once. Each KV-dependent op (attention, MLA up-projection) becomes the
// sum over chunks, each chunk attending to the KV of the earlier ones. So a
// compute-bound prompt pays only the KV re-reads, and a memory-bound one
// (short chunks: llama.cpp's 512-token ubatches, Genie's 128-token passes)
// pays its weights once per chunk, as the runtime does. Returns the chunk
// count; *act_peak is the largest chunk step's activation footprint (per layer,
// as Prepare counts it), or 0 when `stop` stopped it (a 10M-token prompt in
// 1-token chunks is 10M graph builds).
int64_t ChunkPrefill(const GraphContext& g, int64_t batch, int64_t prompt,
                     int64_t chunk, OpList* whole,
                     const std::function<double(const OpList&, double)>& acts,
                     double* act_peak, StopPoll* stop) {
  OpList sum = *whole;
  auto per_chunk_weights = [](const OpCost& op) {
    return !op.kv_dependent && op.group_index >= 0;
  };
  for (OpCost& op : sum) {
    if (per_chunk_weights(op)) op.read[kWeights] = 0;
    if (!op.kv_dependent) continue;
    op.flops = 0;
    op.read = {};
    op.write = {};
  }
  int64_t n = 0;
  *act_peak = 0;
  OpList ops;
  for (int64_t start = 0; start < prompt; start += chunk, ++n) {
    if (stop->Tick()) return 0;
    const int64_t len = std::min(chunk, prompt - start);
    ops.clear();
    internal::BuildStepOps(g, StepShape{batch, len, start + len, -1}, &ops);
    *act_peak = std::max(*act_peak, acts(ops, static_cast<double>(batch * len)));
    if (ops.size() != sum.size()) return 1;  // graph shape differs: no chunking
    for (size_t i = 0; i < ops.size(); ++i) {
      if (per_chunk_weights(sum[i]))
        sum[i].read[kWeights] += ops[i].read[kWeights];
      if (!sum[i].kv_dependent) continue;
      sum[i].flops += ops[i].flops;
      for (int c = 0; c < kOperandClassCount; ++c) {
        sum[i].read[c] += ops[i].read[c];
        sum[i].write[c] += ops[i].write[c];
      }
    }
  }
  *whole = std::move(sum);
  return n;
}

}  // namespace

absl::Status Prepare(const Scenario& s, Prepared* p) {
  const int64_t tp = s.parallelism.tensor_parallel;
  if (tp > 1) p->shard = internal::TensorParallelShard(s.model, tp);
  ASSIGN_OR_RETURN(p->g,
                   internal::MakeGraphContext(s, tp > 1 ? p->shard : s.model));
  const GraphContext& g = p->g;
  const int64_t batch = s.workload.batch;
  const int64_t prompt = s.workload.prompt_tokens;
  const int64_t decode_steps =
      std::max<int64_t>(s.workload.generated_tokens - 1, 0);

  // Graphs: the prefill step, and decode as base + per-key slope.
  internal::BuildStepOps(g, StepShape{batch, prompt, prompt, -1}, &p->prefill);
  BuildDecode(g, batch, prompt + 1, &p->dec0, &p->slope);

  // Footprint: weights, KV at the longest context, peak activations (the
  // largest single op's inputs and outputs plus the residual stream).
  std::array<double, kOperandClassCount> need{};
  need[kWeights] = CountParameters(*g.model).total * g.weight_bytes;
  // Resident LoRA adapters sit beside the weights (and are read like them).
  need[kWeights] += static_cast<double>(s.options.lora.adapters) *
                    internal::LoraBytesPerAdapter(g);
  need[kKv] = static_cast<double>(batch) *
              internal::KvBytesPerSequence(
                  g, static_cast<double>(prompt + decode_steps));
  const double state_bytes =
      static_cast<double>(batch) * internal::StateBytesPerSequence(g);
  auto peak_acts = [&](const OpList& ops, double tokens) {
    double peak = 0;
    for (const OpCost& op : ops) {
      peak = std::max(peak, (op.read[kAct] + op.write[kAct]) /
                                static_cast<double>(op.layers));
    }
    return peak + tokens * s.model.hidden_size * g.act_bytes;
  };
  const double whole_prompt_acts =
      peak_acts(p->prefill, static_cast<double>(batch * prompt));
  need[kAct] = 0;
  if (decode_steps > 0) {
    // Decode activations at the longest context (unfused scores grow with
    // it): base + x * slope at the last step.
    OpList last = p->dec0;
    for (size_t i = 0; i < last.size(); ++i) {
      if (!last[i].kv_dependent) continue;
      OpAt(p->dec0[i], p->slope[i],
           PeakKeysRead(p->dec0[i], prompt + 1, prompt + decode_steps),
           &last[i]);
    }
    need[kAct] =
        std::max(need[kAct], peak_acts(last, static_cast<double>(batch)));
  }
  const double decode_acts = need[kAct];
  need[kAct] = std::max(decode_acts, whole_prompt_acts);
  // Attention data-parallel expert parallelism: a device holds 1 / ep of
  // the routed experts (and all of the rest).
  if (g.expert_parallel > 1 && g.model->moe.has_value()) {
    const MoeDims& x = *g.model->moe;
    const double moe_layers = static_cast<double>(MoeLayerCount(*g.model));
    const double mats = g.model->ffn == FfnKind::kGated ? 3 : 2;
    const double routed = moe_layers * static_cast<double>(x.num_routed_experts) *
                          mats * static_cast<double>(g.model->hidden_size) *
                          static_cast<double>(x.expert_intermediate_size);
    const double ep = static_cast<double>(g.expert_parallel);
    need[kWeights] -= routed * (ep - 1) / ep * g.weight_bytes;
  }
  // Pipeline: each stage holds 1 / stages of the layers, so of the weights
  // and the KV cache (layers split evenly; the embedding and LM head are
  // spread with them), and prefill activations of one micro-batch.
  if (const int64_t pp = s.parallelism.pipeline_parallel; pp > 1) {
    const int64_t mb = s.parallelism.pipeline_micro_batches > 0
                           ? s.parallelism.pipeline_micro_batches
                           : pp;
    need[kWeights] /= static_cast<double>(pp);
    need[kKv] /= static_cast<double>(pp);
    need[kAct] /= static_cast<double>(mb);
  }
  p->need = need;
  p->need_whole_prompt = need;
  p->memory = Place(s.hardware, s.pins, need, &p->place);
  // Chunked prefill: as asked, or by default when the whole prompt's
  // activations do not fit and a runtime would chunk.
  int64_t chunk = s.options.prefill_chunk_tokens;
  if (chunk == 0 && !p->memory.fits && prompt > kDefaultPrefillChunkTokens) {
    chunk = kDefaultPrefillChunkTokens;
  }
  if (chunk > 0 && chunk < prompt) {
    OpList chunked = p->prefill;
    double chunk_acts = 0;
    StopPoll stop(s.options.should_stop);
    const int64_t n = ChunkPrefill(g, batch, prompt, chunk, &chunked,
                                   peak_acts, &chunk_acts, &stop);
    if (n == 0) return StoppedError();
    std::array<double, kOperandClassCount> chunk_need = need;
    chunk_need[kAct] = std::max(decode_acts, chunk_acts);
    PlacementInfo place;
    MemoryFootprint memory = Place(s.hardware, s.pins, chunk_need, &place);
    // Asked for, or the default's chunk makes the prompt fit.
    if (n > 1 && (s.options.prefill_chunk_tokens > 0 || memory.fits)) {
      p->prefill = std::move(chunked);
      p->prefill_chunks = n;
      p->place = place;
      p->memory = std::move(memory);
      p->need = chunk_need;
    }
  }
  p->memory.state_bytes =
      state_bytes / static_cast<double>(s.parallelism.pipeline_parallel);
  return absl::OkStatus();
}

}  // namespace ridgeline::engine::internal
