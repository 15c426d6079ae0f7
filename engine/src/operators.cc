// The operator graph: FLOPs and bytes of every op of one step.
//
// Conventions (stated once, used everywhere):
// - A matmul of [rows x k] by [k x n] costs 2*rows*k*n FLOPs and reads the
//   weight matrix once per step (ideal reuse across rows).
// - Attention reads each sequence's K and V once per layer and step (ideal
//   tiling); unfused attention additionally writes and reads the score
//   matrix in activation precision.
// - Causal prefill: query i of n new tokens sees the prior context plus i
//   keys, so a prompt alone counts n(n+1)/2 pairs: the mask halves the full
//   QK^T and AV work.
// - Elementwise ops are memory-bound; their FLOPs are counted anyway with
//   the per-element costs below.
#include "operators.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "emitter.h"
#include "operators_recurrent.h"
#include "ridgeline/engine/model.h"
#include "validate_util.h"

namespace ridgeline::engine::internal {
namespace {

constexpr double kRmsNormFlopsPerElement = 4;    // square, sum, scale, weight
constexpr double kLayerNormFlopsPerElement = 7;  // mean, var, sub, scale, shift
constexpr double kRopeFlopsPerElement = 3;       // 2 mul + 1 add per element
constexpr double kGatedActFlopsPerElement = 5;   // SiLU/GELU (~4) + gate mul
constexpr double kPlainActFlopsPerElement = 4;   // GELU

// Weight vectors per norm: LayerNorm has a bias next to its scale (as
// CountParameters counts it).
double NormVectors(const ModelConfig& m) {
  return m.norm == NormKind::kLayerNorm ? 2 : 1;
}

// Stable storage for layer-group labels (OpResult keeps string_views).
std::string_view GroupName(bool split_moe, bool moe, bool split_window,
                           bool sliding) {
  if (split_moe && split_window) {
    static constexpr std::string_view kBoth[2][2] = {
        {"dense-global", "dense-sliding"}, {"moe-global", "moe-sliding"}};
    return kBoth[moe][sliding];
  }
  if (split_moe) return moe ? "moe" : "dense";
  if (split_window) return sliding ? "sliding" : "global";
  return "";
}

// What sets a decoder layer's shape: the model's own per-layer list, or
// for uniform models MoE or dense FFN and whether the layer slides. The one
// rule for which layer is which.
LayerSpec SpecOfLayer(const ModelConfig& m, int64_t layer) {
  if (!m.layers.empty()) return m.layers[static_cast<size_t>(layer)];
  const int64_t dense_first =
      m.moe.has_value() ? std::min(m.moe->first_dense_layers, m.num_layers) : 0;
  LayerSpec spec;
  switch (m.sliding_layers) {
    case SlidingLayers::kNone:
      break;
    case SlidingLayers::kAll:
      spec.sliding = true;
      break;
    case SlidingLayers::kEvenLayers:
      spec.sliding = layer % 2 == 0;
      break;
  }
  spec.ffn = m.moe.has_value() && layer >= dense_first ? FfnLayerKind::kMoe
                                                       : FfnLayerKind::kDense;
  return spec;
}

const char* LinearAttentionName(LinearAttentionKind kind) {
  switch (kind) {
    case LinearAttentionKind::kGatedDeltaNet:
      return "gated-deltanet";
    case LinearAttentionKind::kLightning:
      return "lightning";
    case LinearAttentionKind::kKimiDelta:
      return "kda";
  }
  return "linear-attention";
}

// A per-layer group's label, e.g. "attn-none ffn-5632" (OpResult keeps
// string_views, so labels live for the process; there are few distinct
// shapes per model).
std::string_view InternedGroupName(const ModelConfig& m, const LayerSpec& l,
                                   int64_t window) {
  std::string name;
  switch (l.attention) {
    case AttentionKind::kFull:
      absl::StrAppend(&name, l.chunked    ? "chunked"
                             : window > 0 ? "sliding"
                                          : "global");
      if (l.num_kv_heads > 0 && l.num_kv_heads != m.num_kv_heads) {
        absl::StrAppend(&name, "-kv", l.num_kv_heads);
      }
      if (l.parallel_mamba) absl::StrAppend(&name, "+mamba2");
      break;
    case AttentionKind::kNone:
      name = "attn-none";
      break;
    case AttentionKind::kLinear:
      name = "attn-linear";
      break;
    case AttentionKind::kMamba2:
      name = "mamba2";
      break;
    case AttentionKind::kMamba1:
      name = "mamba1";
      break;
    case AttentionKind::kLinearAttention:
      name = LinearAttentionName(m.linear_attention.has_value()
                                     ? m.linear_attention->kind
                                     : LinearAttentionKind::kGatedDeltaNet);
      break;
  }
  switch (l.ffn) {
    case FfnLayerKind::kDense:
      absl::StrAppend(&name, " dense-",
                      l.intermediate_size > 0 ? l.intermediate_size
                                              : m.intermediate_size);
      break;
    case FfnLayerKind::kMoe:
      absl::StrAppend(&name, " moe");
      break;
    case FfnLayerKind::kNone:
      absl::StrAppend(&name, " ffn-none");
      break;
    case FfnLayerKind::kLinear:
      absl::StrAppend(&name, " ffn-linear");
      break;
  }
  static absl::Mutex* const mu = new absl::Mutex;
  static std::set<std::string>* const names = new std::set<std::string>;
  absl::MutexLock lock(mu);
  return *names->insert(std::move(name)).first;
}

// New tokens of the step: seqs x new_tokens, or a mixed step's sum.
double StepTokens(const StepShape& shape) {
  return shape.mixed != nullptr
             ? shape.mixed->tokens
             : static_cast<double>(shape.seqs) *
                   static_cast<double>(shape.new_tokens);
}

// Bytes per key token and layer that attention reads, split by operand.
struct KeyBytes {
  double k_kv = 0, k_act = 0, v_kv = 0, v_act = 0;
};

int64_t GroupKvHeads(const ModelConfig& m, const LayerGroup& grp) {
  return grp.spec.num_kv_heads > 0 ? grp.spec.num_kv_heads : m.num_kv_heads;
}

void EmitAttention(const GraphContext& g, const LayerGroup& grp,
                   const StepShape& shape, Emitter& e) {
  const ModelConfig& m = *g.model;
  const double S = static_cast<double>(shape.seqs);
  const double T = StepTokens(shape);
  const double heads = static_cast<double>(m.num_attention_heads);
  double pairs = 0;  // per sequence and head
  double keys = 0;   // key tokens read per sequence
  // DSA: each query attends to the index_topk keys its indexer chose (a
  // decode step reads min(L, topk) keys, like a window of topk, though the
  // cache keeps every token).
  const double topk =
      m.dsa.has_value() ? static_cast<double>(m.dsa->index_topk) : 0;
  if (shape.linear_x >= 0) {
    pairs = keys = shape.linear_x;
  } else if (topk > 0) {
    const double n = static_cast<double>(shape.new_tokens);
    const double len = static_cast<double>(shape.kv_length);
    pairs = CausalPairs(n, len, topk);
    keys = SparseKeysSeen(n, len, topk);
  } else {
    const double n = static_cast<double>(shape.new_tokens);
    const double len = static_cast<double>(shape.kv_length);
    const double w = static_cast<double>(grp.window);
    pairs = CausalPairs(n, len, w, grp.spec.chunked);
    keys = KeysSeen(n, len, w, grp.spec.chunked);
  }

  double dqk = 0, dv = 0;
  KeyBytes kb;
  if (m.mla.has_value()) {
    const MlaDims& a = *m.mla;
    if (g.options.mla_absorbed) {
      // Queries live in the latent space: K = latent + RoPE key, V = latent.
      dqk = static_cast<double>(a.kv_lora_rank + a.qk_rope_head_dim);
      dv = static_cast<double>(a.kv_lora_rank);
      kb.k_kv = dqk * g.kv_bytes;
      // The fused kernel reads the latent once for K and V; unfused AV
      // reads it again.
      kb.v_kv = g.options.flash_attention ? 0 : dv * g.kv_bytes;
    } else {
      // mla_kv_up materialised per-head K (no-RoPE part) and V.
      dqk = static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim);
      dv = static_cast<double>(a.v_head_dim);
      kb.k_act = heads * a.qk_nope_head_dim * g.act_bytes;
      kb.k_kv = a.qk_rope_head_dim * g.kv_bytes;
      kb.v_act = heads * dv * g.act_bytes;
    }
  } else {
    dqk = dv = static_cast<double>(m.head_dim);
    // GQA/MQA: each KV head is read once for its whole query group.
    kb.k_kv = kb.v_kv = static_cast<double>(GroupKvHeads(m, grp)) *
                        m.head_dim * g.kv_bytes;
  }

  const double q_bytes = T * heads * dqk * g.act_bytes;
  const double out_bytes = T * heads * dv * g.act_bytes;
  // Sums over the step's sequences: S times one sequence's amount, or the
  // mixed step's sums (S = 1 gives the same numbers to the bit).
  double score_count = S * heads * pairs;
  double seq_keys = S * keys;
  if (shape.mixed != nullptr) {
    const int w = topk > 0 ? kMixedSparse : grp.window > 0 ? 1 : 0;
    score_count = heads * shape.mixed->pairs[w];
    seq_keys = shape.mixed->keys[w];
  }
  // Attention sinks (gpt-oss): one more logit in each query row's softmax;
  // it is a learned scalar, so no key is read and no AV term is added.
  const double sink_scores = m.attention_sinks ? T * heads : 0;
  const double sink_weights = m.attention_sinks ? heads * g.weight_bytes : 0;
  const MathType math = g.attention_math;
  auto mark = [&](OpCost& op) {
    op.kv_dependent = true;
    op.window = topk > 0 ? static_cast<int64_t>(topk) : grp.window;
    op.chunked = grp.spec.chunked;
    op.pim_candidate = true;
    op.dominant = OperandClass::kKvCache;
  };
  if (g.options.flash_attention) {
    mark(e.Add(OpKind::kFlashAttention, OpClass::kAttention, grp.name,
               grp.layers, 1, math, T,
               AttentionFlops(score_count, dqk, dv) +
                   kSoftmaxFlopsPerScore * sink_scores,
               {.weights_read = sink_weights,
                .activations_read = q_bytes + seq_keys * (kb.k_act + kb.v_act),
                .activations_written = out_bytes,
                .kv_read = seq_keys * (kb.k_kv + kb.v_kv)}));
  } else {
    const double scores = score_count * g.act_bytes;
    mark(e.Add(OpKind::kQk, OpClass::kAttention, grp.name, grp.layers, 1, math,
               T, 2 * score_count * dqk,
               {.activations_read = q_bytes + seq_keys * kb.k_act,
                .activations_written = scores,
                .kv_read = seq_keys * kb.k_kv}));
    mark(e.Add(OpKind::kSoftmax, OpClass::kElementwise, grp.name, grp.layers, 1,
               g.elementwise_math, T,
               kSoftmaxFlopsPerScore * (score_count + sink_scores),
               {.weights_read = sink_weights,
                .activations_read = scores,
                .activations_written = scores}));
    mark(e.Add(OpKind::kAttentionV, OpClass::kAttention, grp.name, grp.layers,
               1, math, T, 2 * score_count * dv,
               {.activations_read = scores + seq_keys * kb.v_act,
                .activations_written = out_bytes,
                .kv_read = seq_keys * kb.v_kv}));
  }
}

void EmitLayerGroup(const GraphContext& g, const LayerGroup& grp,
                    const StepShape& shape, Emitter& e) {
  const ModelConfig& m = *g.model;
  const double S = static_cast<double>(shape.seqs);
  const double T = StepTokens(shape);
  const double h = static_cast<double>(m.hidden_size);
  const double heads = static_cast<double>(m.num_attention_heads);
  const double ab = g.act_bytes;
  const std::string_view name = grp.name;
  const int64_t layers = grp.layers;
  const double norm_flops = m.norm == NormKind::kLayerNorm
                                ? kLayerNormFlopsPerElement
                                : kRmsNormFlopsPerElement;

  const LayerSpec& spec = grp.spec;
  const bool attends = spec.attention == AttentionKind::kFull;
  const double kv_heads = static_cast<double>(GroupKvHeads(m, grp));
  // Norms of the layer (2, or 4 for Gemma-2; one less per skipped
  // sub-block), plus Qwen3's per-head q/k norms or MLA's latent norms,
  // counted as one op with one kernel per norm.
  {
    int64_t norm_count = m.norms_per_layer;
    if (spec.attention == AttentionKind::kNone) --norm_count;
    if (spec.ffn == FfnLayerKind::kNone) --norm_count;
    norm_count = std::max<int64_t>(norm_count, 0);
    const double norms = static_cast<double>(norm_count);
    double elems = norms * T * h;
    double weights = norms * h;
    int kernels = static_cast<int>(norm_count);
    if (attends && m.qk_norm && !m.mla.has_value()) {
      elems += T * (heads + kv_heads) * m.head_dim;
      weights += 2.0 * m.head_dim;
      kernels += 2;
    }
    if (attends && m.mla.has_value()) {
      // MLA normalises its latents: kv_a_layernorm always, q_a_layernorm
      // when the query is low-rank (CountParameters counts both).
      const MlaDims& a = *m.mla;
      const double latents =
          static_cast<double>(a.kv_lora_rank + a.q_lora_rank);
      elems += T * latents;
      weights += latents;
      kernels += a.q_lora_rank > 0 ? 2 : 1;
    }
    if (kernels > 0) {
      e.Add(OpKind::kNorm, OpClass::kElementwise, name, layers, kernels,
            g.elementwise_math, T, norm_flops * elems,
            {.weights_read = weights * NormVectors(m) * ab,
             .activations_read = elems * ab,
             .activations_written = elems * ab});
    }
  }

  // Attention projections.
  if (spec.attention == AttentionKind::kNone) {
    // Skipped: nothing runs, nothing is cached.
  } else if (spec.attention == AttentionKind::kLinear) {
    e.Matmul(OpKind::kLinearReplacement, name, layers, T, h, h);
  } else if (spec.attention == AttentionKind::kMamba2) {
    EmitMamba2(g, grp, shape, e);
  } else if (spec.attention == AttentionKind::kMamba1) {
    EmitMamba1(g, grp, shape, e);
  } else if (spec.attention == AttentionKind::kLinearAttention) {
    EmitLinearAttention(g, grp, shape, e);
  } else if (m.mla.has_value()) {
    const MlaDims& a = *m.mla;
    const double q_head =
        static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim);
    const double rkv = static_cast<double>(a.kv_lora_rank);
    const double dr = static_cast<double>(a.qk_rope_head_dim);
    // Absorbed: W_UK folds into the query side (per head dn x rkv), so the
    // query leaves in the latent space.
    const double absorb_q =
        g.options.mla_absorbed ? heads * a.qk_nope_head_dim * rkv : 0;
    const double q_out =
        g.options.mla_absorbed ? heads * (rkv + dr) : heads * q_head;
    auto q_up = [&](OpKind kind, double in) {
      OpCost& op = e.Matmul(kind, name, layers, T, in, heads * q_head);
      op.flops += 2 * T * absorb_q * layers;
      op.read[kWeights] += absorb_q * g.weight_bytes * layers;
      op.write[kAct] = T * q_out * ab * layers;
    };
    if (a.q_lora_rank > 0) {
      e.Matmul(OpKind::kMlaQDown, name, layers, T, h,
               static_cast<double>(a.q_lora_rank));
      q_up(OpKind::kMlaQUp, static_cast<double>(a.q_lora_rank));
    } else {
      q_up(OpKind::kQProjection, h);
    }
    // The latent goes to the KV cache; the RoPE key goes on to RoPE.
    OpCost& down = e.Matmul(OpKind::kMlaKvDown, name, layers, T, h, rkv + dr);
    down.write[kAct] = T * dr * ab * layers;
    down.write[kKv] = T * rkv * g.kv_bytes * layers;
    e.Add(OpKind::kRope, OpClass::kElementwise, name, layers, 1,
          g.elementwise_math, T, kRopeFlopsPerElement * T * (heads + 1) * dr,
          {.activations_read = T * (heads + 1) * dr * ab,
           .activations_written = T * heads * dr * ab,
           .kv_written = T * dr * g.kv_bytes});
    if (m.dsa.has_value()) EmitDsaIndexer(g, grp, shape, e);
    if (!g.options.mla_absorbed) {
      // Up-projects every cached latent attention reads (the same keys as
      // EmitAttention, window- or chunk-limited) each step: grows with the
      // context.
      const double keys =
          shape.linear_x >= 0
              ? shape.linear_x
              : KeysSeen(static_cast<double>(shape.new_tokens),
                         static_cast<double>(shape.kv_length),
                         static_cast<double>(grp.window), grp.spec.chunked);
      const double width = heads * (a.qk_nope_head_dim + a.v_head_dim);
      const double seq_keys =
          shape.mixed != nullptr
              ? shape.mixed->keys[grp.window > 0 ? 1 : 0]
              : S * keys;
      OpCost& up = e.Add(OpKind::kMlaKvUp, OpClass::kGemm, name, layers, 1,
                         g.matmul_math, seq_keys, 2 * seq_keys * rkv * width,
                         {.weights_read = rkv * width * g.weight_bytes,
                          .activations_written = seq_keys * width * ab,
                          .kv_read = seq_keys * rkv * g.kv_bytes});
      up.kv_dependent = true;
      up.dequantized = g.weights_dequantized;
      up.window = grp.window;
      up.chunked = grp.spec.chunked;
      up.pim_candidate = true;
      up.dominant = OperandClass::kKvCache;
    }
    EmitAttention(g, grp, shape, e);
    // Absorbed: W_UV folds into the output side (per head rkv x dv).
    const double dv = static_cast<double>(a.v_head_dim);
    OpCost& o =
        e.Matmul(OpKind::kOutProjection, name, layers, T, heads * dv, h);
    if (g.options.mla_absorbed) {
      const double absorb_o = heads * rkv * dv;
      o.flops += 2 * T * absorb_o * layers;
      o.read[kWeights] += absorb_o * g.weight_bytes * layers;
      o.read[kAct] = T * heads * rkv * ab * layers;
    }
  } else {
    const double qd = heads * m.head_dim;
    const double kvd = kv_heads * m.head_dim;
    // Partial rotary (GPT-J) rotates rotary_dim of each head.
    const double rot = m.rotary_dim > 0 ? static_cast<double>(m.rotary_dim) /
                                              static_cast<double>(m.head_dim)
                                        : 1.0;
    auto proj = [&](OpKind kind, double n) -> OpCost& {
      OpCost& op = e.Matmul(kind, name, layers, T, h, n);
      if (m.qkv_bias) {
        op.flops += T * n * layers;
        op.read[kWeights] += n * g.weight_bytes * layers;
      }
      return op;
    };
    // Gated attention (Qwen3-Next): q_proj also emits the output gate.
    const double gate = m.attention_output_gate ? qd : 0;
    proj(OpKind::kQProjection, qd + gate);
    proj(OpKind::kKProjection, kvd);
    // V goes straight into the cache.
    OpCost& v = proj(OpKind::kVProjection, kvd);
    v.write[kAct] = 0;
    v.write[kKv] = T * kvd * g.kv_bytes * layers;
    // RoPE rotates Q and K; the rotated K is appended to the cache.
    e.Add(OpKind::kRope, OpClass::kElementwise, name, layers, 1,
          g.elementwise_math, T, kRopeFlopsPerElement * T * (qd + kvd) * rot,
          {.activations_read = T * (qd + kvd) * ab,
           .activations_written = T * qd * ab,
           .kv_written = T * kvd * g.kv_bytes});
    EmitAttention(g, grp, shape, e);
    OpCost& o = e.Matmul(OpKind::kOutProjection, name, layers, T, qd, h);
    if (gate > 0) {
      // sigmoid(gate) x attention output, fused into the projection's input.
      o.flops += kGatedActFlopsPerElement * T * gate * layers;
      o.read[kAct] += T * gate * ab * layers;
    }
    if (m.attention_out_bias) {
      o.flops += T * h * layers;
      o.read[kWeights] += h * g.weight_bytes * layers;
    }
  }
  // Falcon-H1: a Mamba-2 mixer beside the attention, on the same input.
  if (spec.parallel_mamba) EmitMamba2(g, grp, shape, e);

  // FFN.
  const bool gated = m.ffn == FfnKind::kGated;
  const double act_flops =
      gated ? kGatedActFlopsPerElement : kPlainActFlopsPerElement;
  // Biases of up(+gate) and down per token (gpt-oss experts, GPT-J).
  auto ffn_bias = [&](double inter) {
    return m.ffn_bias ? (gated ? 2 * inter : inter) + h : 0.0;
  };
  if (spec.ffn == FfnLayerKind::kNone) {
    // Skipped.
  } else if (spec.ffn == FfnLayerKind::kLinear) {
    e.Matmul(OpKind::kLinearReplacement, name, layers, T, h, h);
  } else if (!grp.moe) {
    const double inter = static_cast<double>(
        spec.intermediate_size > 0 ? spec.intermediate_size : m.intermediate_size);
    const double up_width = gated ? 2 * inter : inter;
    OpCost& up = e.Matmul(OpKind::kFfnUpGate, name, layers, T, h, up_width);
    if (m.ffn_bias) {
      up.flops += T * ffn_bias(inter) * layers;
      up.read[kWeights] += ffn_bias(inter) * g.weight_bytes * layers;
    }
    e.Add(OpKind::kFfnActivation, OpClass::kElementwise, name, layers, 1,
          g.elementwise_math, T, act_flops * T * inter,
          {.activations_read = T * up_width * ab,
           .activations_written = T * inter * ab});
    e.Matmul(OpKind::kFfnDown, name, layers, T, inter, h);
  } else {
    const MoeDims& x = *m.moe;
    const double experts = static_cast<double>(x.num_routed_experts);
    const double top_k = static_cast<double>(x.experts_per_token);
    OpCost& router = e.Matmul(OpKind::kMoeRouter, name, layers, T, h, experts);
    if (x.router_score_bias) router.read[kWeights] += experts * ab * layers;
    if (m.router_bias) {
      router.flops += T * experts * layers;
      router.read[kWeights] += experts * g.weight_bytes * layers;
    }

    // One expert FFN on one token: up(+gate), activation, down; the
    // intermediates round-trip through memory between the three kernels.
    const double mats = gated ? 3 : 2;
    auto expert_ffn = [&](OpKind kind, double tokens, double inter,
                          double instances_read) -> OpCost& {
      const double up_width = gated ? 2 * inter : inter;
      const double rows_per_expert =
          instances_read > 0 ? tokens / instances_read : tokens;
      OpCost& op = e.Add(
          kind, e.MatmulClass(rows_per_expert), name, layers, 3, g.matmul_math,
          rows_per_expert,
          tokens * (2 * mats * h * inter + act_flops * inter + ffn_bias(inter)),
          {.weights_read = instances_read * (mats * h * inter + ffn_bias(inter)) *
                           g.weight_bytes,
           .activations_read = tokens * (h + up_width + inter) * ab,
           .activations_written = tokens * (up_width + inter + h) * ab});
      op.pim_candidate = true;
      op.dominant = OperandClass::kWeights;
      op.dequantized = g.weights_dequantized;
      return op;
    };
    // Every token evaluates k experts; weights are read only for the
    // experts some token of the step touched.
    if (g.expert_parallel > 1) {
      // Expert parallelism with data-parallel attention: this device's E /
      // ep experts serve the tokens of all ep devices (ep x T); under
      // uniform routing it gets 1 / ep of their k T ep expert visits and of
      // the experts they touch (the expected load per device).
      const double ep = static_cast<double>(g.expert_parallel);
      const double group_tokens = T * ep;
      expert_ffn(OpKind::kMoeRoutedExperts, group_tokens * top_k / ep,
                 static_cast<double>(x.expert_intermediate_size),
                 ExpectedExpertsTouched(experts, top_k, group_tokens) / ep);
      e.AllToAll(name, layers, T * top_k, h);
    } else {
      expert_ffn(OpKind::kMoeRoutedExperts, T * top_k,
                 static_cast<double>(x.expert_intermediate_size),
                 ExpectedExpertsTouched(experts, top_k, T));
    }
    if (x.num_shared_experts > 0) {
      const double shared = static_cast<double>(x.num_shared_experts);
      OpCost& op = expert_ffn(
          OpKind::kMoeSharedExperts, T * shared,
          static_cast<double>(x.shared_expert_intermediate_size), shared);
      if (x.shared_expert_gate) {  // Qwen2-MoE: sigmoid(hidden -> 1) scale
        op.flops += 2 * T * h * layers;
        op.read[kWeights] += h * g.weight_bytes * layers;
      }
    }
  }
  // LoRA (S-LoRA / Punica batched kernels): per target module a shrink
  // (x A, in x r) and an expand (x B, r x out) matmul over the step's
  // tokens, adapters gathered per token. Each adapter some sequence of the
  // step uses is read once: with N resident adapters chosen uniformly, S
  // sequences touch N (1 - (1 - 1/N)^S) of them (the MoE expert formula
  // with top-1). Adapters are kept in activation precision (bf16 even over
  // quantised base weights, as vLLM and QLoRA serve them).
  if (g.options.lora.enabled()) {
    const LoraWidths w = LoraWidthsOf(g, grp);
    if (w.in + w.out > 0) {
      const double r = static_cast<double>(g.options.lora.rank);
      const double touched = ExpectedExpertsTouched(
          static_cast<double>(g.options.lora.adapters), 1, S);
      const int modules = std::popcount(g.options.lora.modules);
      OpCost& op = e.Add(OpKind::kLoraAdapters,
                         e.MatmulClass(T / std::max(touched, 1.0)), name,
                         layers, 2 * modules, g.matmul_math,
                         T / std::max(touched, 1.0), 2 * T * r * (w.in + w.out),
                         {.weights_read = touched * r * (w.in + w.out) * ab,
                          .activations_read = T * (w.in + r) * ab,
                          .activations_written = T * (r + w.out) * ab});
      op.dominant = OperandClass::kWeights;
    }
  }
  // Tensor parallelism: the attention output and the FFN output are partial
  // sums on each device until all-reduced.
  // Residual adds: one per sub-block that runs (after attention, after the
  // FFN); GPT-J's parallel block adds both outputs in one 3-input pass.
  const int adds = (spec.attention != AttentionKind::kNone ? 1 : 0) +
                   (spec.ffn != FfnLayerKind::kNone ? 1 : 0);
  if (g.tensor_parallel > 1 && adds > 0) e.AllReduce(name, layers, adds, T, h);
  if (adds > 0) {
    const double a = static_cast<double>(adds);
    if (m.parallel_attention_ffn) {
      e.Add(OpKind::kResidualAdd, OpClass::kElementwise, name, layers, 1,
            g.elementwise_math, T, a * T * h,
            {.activations_read = (a + 1) * T * h * ab,
             .activations_written = T * h * ab});
    } else {
      e.Add(OpKind::kResidualAdd, OpClass::kElementwise, name, layers, adds,
            g.elementwise_math, T, a * T * h,
            {.activations_read = 2 * a * T * h * ab,
             .activations_written = a * T * h * ab});
    }
  }
}

}  // namespace

LoraWidths LoraWidthsOf(const GraphContext& g, const LayerGroup& grp) {
  const ModelConfig& m = *g.model;
  const uint32_t mods = g.options.lora.modules;
  const double h = static_cast<double>(m.hidden_size);
  const double heads = static_cast<double>(m.num_attention_heads);
  LoraWidths w;
  auto add = [&](uint32_t bit, double in, double out) {
    if ((mods & bit) != 0 && in > 0 && out > 0) {
      w.in += in;
      w.out += out;
    }
  };
  if (grp.spec.attention == AttentionKind::kFull) {
    if (m.mla.has_value()) {
      // MLA: q on the query projection, k on the joint latent down
      // projection (K and V share it; v adds nothing), o as usual.
      const MlaDims& a = *m.mla;
      add(kLoraQ, h,
          heads * static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim));
      add(kLoraK, h, static_cast<double>(a.kv_lora_rank + a.qk_rope_head_dim));
      add(kLoraO, heads * static_cast<double>(a.v_head_dim), h);
    } else {
      const double qd = heads * static_cast<double>(m.head_dim);
      const double kvd = static_cast<double>(GroupKvHeads(m, grp)) *
                         static_cast<double>(m.head_dim);
      add(kLoraQ, h, qd);
      add(kLoraK, h, kvd);
      add(kLoraV, h, kvd);
      add(kLoraO, qd, h);
    }
  }
  // The FFN modules wrap the dense FFN, or an MoE layer's shared experts;
  // routed experts carry no adapter (vLLM's MoE LoRA is a separate kernel,
  // not modelled).
  double inter = 0;
  if (grp.spec.ffn == FfnLayerKind::kDense) {
    inter = static_cast<double>(grp.spec.intermediate_size > 0
                                    ? grp.spec.intermediate_size
                                    : m.intermediate_size);
  } else if (grp.spec.ffn == FfnLayerKind::kMoe && m.moe.has_value()) {
    inter = static_cast<double>(m.moe->num_shared_experts *
                                m.moe->shared_expert_intermediate_size);
  }
  if (m.ffn == FfnKind::kGated) add(kLoraGate, h, inter);
  add(kLoraUp, h, inter);
  add(kLoraDown, inter, h);
  return w;
}

double LoraBytesPerAdapter(const GraphContext& g) {
  if (!g.options.lora.enabled()) return 0;
  const double r = static_cast<double>(g.options.lora.rank);
  double bytes = 0;
  for (const LayerGroup& grp : g.groups) {
    const LoraWidths w = LoraWidthsOf(g, grp);
    bytes += static_cast<double>(grp.layers) * r * (w.in + w.out) * g.act_bytes;
  }
  return bytes;
}

double ExpectedExpertsTouched(double experts, double top_k, double tokens) {
  if (experts <= 0 || tokens <= 0) return 0;
  const double miss = 1 - top_k / experts;  // one token skips a given expert
  // pow(0, t) = 0 when k == E: every expert touched.
  return experts * (1 - std::pow(std::max(miss, 0.0), tokens));
}

double KvBytesPerSequence(const GraphContext& g, double tokens) {
  const ModelConfig& m = *g.model;
  double total = 0;
  for (const LayerGroup& grp : g.groups) {
    const double per_layer_token =
        LayerKvElementsPerToken(m, grp.spec) * g.kv_bytes;
    const double kept = grp.window > 0
                            ? std::min(tokens, static_cast<double>(grp.window))
                            : tokens;
    total += static_cast<double>(grp.layers) * kept * per_layer_token;
  }
  return total + StateBytesPerSequence(g);
}

double StateBytesPerSequence(const GraphContext& g) {
  double total = 0;
  for (const LayerGroup& grp : g.groups) {
    total += static_cast<double>(grp.layers) *
             LayerStateElementsPerSequence(*g.model, grp.spec);
  }
  return total * g.kv_bytes;
}

ModelConfig TensorParallelShard(const ModelConfig& m, int64_t tp) {
  if (tp <= 1) return m;
  auto split = [tp](int64_t v) { return (v + tp - 1) / tp; };
  ModelConfig d = m;
  d.num_attention_heads = m.num_attention_heads / tp;
  d.num_kv_heads = std::max<int64_t>(1, m.num_kv_heads / tp);
  d.intermediate_size = split(m.intermediate_size);
  d.vocab_size = split(m.vocab_size);
  for (LayerSpec& l : d.layers) {
    if (l.num_kv_heads > 0) l.num_kv_heads = std::max<int64_t>(1, l.num_kv_heads / tp);
    l.intermediate_size = l.intermediate_size > 0 ? split(l.intermediate_size) : 0;
  }
  // Recurrent mixers shard by head (vLLM's MambaMixer2 and GatedDeltaNet
  // split heads and groups over the tensor-parallel ranks).
  if (d.mamba.has_value()) {
    d.mamba->num_heads = split(m.mamba->num_heads);
    d.mamba->n_groups = std::max<int64_t>(1, m.mamba->n_groups / tp);
  }
  // Mamba-1 shards its d_inner channels (vLLM's MambaMixer).
  if (d.mamba1.has_value()) d.mamba1->inner = split(m.mamba1->inner);
  if (d.linear_attention.has_value()) {
    d.linear_attention->num_key_heads =
        split(m.linear_attention->num_key_heads);
    d.linear_attention->num_value_heads =
        split(m.linear_attention->num_value_heads);
  }
  if (d.moe.has_value()) {
    d.moe->expert_intermediate_size = split(m.moe->expert_intermediate_size);
    d.moe->shared_expert_intermediate_size =
        split(m.moe->shared_expert_intermediate_size);
  }
  return d;
}

absl::StatusOr<GraphContext> MakeGraphContext(const Scenario& s,
                                              const ModelConfig& model) {
  GraphContext g;
  g.model = &model;
  g.tensor_parallel = s.parallelism.tensor_parallel;
  g.pipeline_parallel = s.parallelism.pipeline_parallel;
  g.replica_devices = ReplicaDevices(s.parallelism);
  g.expert_parallel =
      s.parallelism.attention_data_parallel ? s.parallelism.expert_parallel : 1;
  g.options = s.options;
  g.weight_bytes = s.precision.weights.bytes_per_element();
  g.act_bytes = s.precision.activations.bytes_per_element();
  g.kv_bytes = s.precision.kv_cache.bytes_per_element();

  absl::StatusOr<MathType> wanted =
      MatmulMathType(s.precision.weights, s.precision.activations);
  if (!wanted.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("precision: ", wanted.status().message()));
  }
  wanted = WithAccumulation(*wanted, s.options.fp16_accumulation);
  const PerMathType& peaks = s.hardware.peak_ops_per_second;
  // No peak at all = compute roof unknown: ops are labelled with the math
  // they want and get no compute time. Some peaks but none wide enough is a
  // real mismatch (UNIMPLEMENTED).
  const bool roof_unknown = std::none_of(
      peaks.begin(), peaks.end(),
      [](const std::optional<double>& p) { return p.has_value(); });
  auto executed = [&](MathType want,
                      std::string_view what) -> absl::StatusOr<MathType> {
    if (roof_unknown) return want;
    std::optional<MathType> t = ExecutedMathType(peaks, want);
    if (!t.has_value()) {
      return absl::UnimplementedError(absl::StrCat(
          "hardware ", s.hardware.id, " has no peak for ", Av(what), " math (",
          Av(MathTypeName(want)), ") or any wider type"));
    }
    return *t;
  };
  auto mm = executed(*wanted, "matmul");
  if (!mm.ok()) return mm.status();
  g.matmul_math = *mm;
  g.weights_dequantized = s.precision.weights.dequantized();
  // Attention and elementwise math run in activation precision.
  const MathType act =
      s.precision.activations.native_math.value_or(MathType::kFp32);
  auto at = executed(act, "attention");
  if (!at.ok()) return at.status();
  g.attention_math = g.elementwise_math = *at;

  // Layer groups: distinct layer shapes in order of first appearance.
  const ModelConfig& m = model;
  const int64_t dense_first =
      m.moe.has_value() ? std::min(m.moe->first_dense_layers, m.num_layers) : 0;
  const bool split_moe = m.moe.has_value() && dense_first > 0;
  const bool split_window =
      m.sliding_layers == SlidingLayers::kEvenLayers && m.num_layers > 1;
  const int64_t layers =
      m.layers.empty() ? m.num_layers : static_cast<int64_t>(m.layers.size());
  for (int64_t i = 0; i < layers; ++i) {
    const LayerSpec l = SpecOfLayer(m, i);
    auto it = std::find_if(g.groups.begin(), g.groups.end(),
                           [&](const LayerGroup& x) { return x.spec == l; });
    if (it != g.groups.end()) {
      ++it->layers;
      continue;
    }
    const int64_t window = l.sliding   ? m.sliding_window
                           : l.chunked ? m.attention_chunk_size
                                       : 0;
    const bool moe = l.ffn == FfnLayerKind::kMoe;
    // Uniform models keep their short names ("moe", "sliding"); per-layer
    // models are named after each shape.
    const std::string_view name =
        m.layers.empty() ? GroupName(split_moe, moe, split_window, l.sliding)
                         : InternedGroupName(m, l, window);
    g.groups.push_back(LayerGroup{name, 1, moe, window, l});
  }
  return g;
}

int GroupOfLayer(const GraphContext& g, int64_t layer) {
  const LayerSpec l = SpecOfLayer(*g.model, layer);
  for (size_t i = 0; i < g.groups.size(); ++i) {
    if (g.groups[i].spec == l) return static_cast<int>(i);
  }
  return -1;  // not reached: every layer's shape has its group
}

void BuildStepOps(const GraphContext& g, const StepShape& shape,
                  std::vector<OpCost>* out) {
  OpList ops;
  BuildStepOps(g, shape, &ops);
  out->insert(out->end(), ops.begin(), ops.end());
}

void BuildStepOps(const GraphContext& g, const StepShape& shape, OpList* out) {
  const ModelConfig& m = *g.model;
  Emitter e(g, out);
  const double S = static_cast<double>(shape.seqs);
  const double T = StepTokens(shape);
  const double h = static_cast<double>(m.hidden_size);
  const double vocab = static_cast<double>(m.vocab_size);
  const double ab = g.act_bytes;

  // Gathers one embedding row per token (at most the whole table).
  e.Add(OpKind::kEmbedding, OpClass::kElementwise, "", 1, 1, g.elementwise_math,
        T, 0,
        {.weights_read = std::min(T, vocab) * h * g.weight_bytes,
         .activations_written = T * h * ab});
  // Vocabulary-parallel embedding: each device holds 1/tp of the rows and
  // contributes zeros for the others, so the lookup is all-reduced.
  if (g.tensor_parallel > 1) e.AllReduce("", 1, 1, T, h);
  // Draft heads (MTP, EAGLE) project [embedding; target hidden] to hidden.
  if (m.fused_hidden_inputs > 0) {
    e.Matmul(OpKind::kDraftInputFusion, "", 1, T,
             static_cast<double>(m.fused_hidden_inputs) * h, h);
  }
  for (size_t i = 0; i < g.groups.size(); ++i) {
    e.set_group_index(static_cast<int>(i));
    EmitLayerGroup(g, g.groups[i], shape, e);
  }
  e.set_group_index(-1);
  const double norm_flops = m.norm == NormKind::kLayerNorm
                                ? kLayerNormFlopsPerElement
                                : kRmsNormFlopsPerElement;
  e.Add(OpKind::kFinalNorm, OpClass::kElementwise, "", 1, 1, g.elementwise_math,
        T, norm_flops * T * h,
        {.weights_read = h * NormVectors(m) * ab,
         .activations_read = T * h * ab,
         .activations_written = T * h * ab});
  // Only the last position of each sequence needs logits to emit the next
  // token, so the LM head runs on `seqs` rows in prefill as in decode.
  OpCost& head = e.Matmul(OpKind::kLmHead, "", 1, S, h, vocab);
  if (m.lm_head_bias) {
    head.flops += S * vocab;
    head.read[kWeights] += vocab * g.weight_bytes;
  }
  if (g.pipeline_parallel > 1) e.PipelineSends(T, h);
}

double KeysRead(const OpCost& op, int64_t kv_length) {
  return KeysSeen(1, static_cast<double>(kv_length),
                  static_cast<double>(op.window), op.chunked);
}

double PeakKeysRead(const OpCost& op, int64_t kv_first, int64_t kv_last) {
  if (op.chunked && op.window > 0 &&
      (kv_first - 1) / op.window != (kv_last - 1) / op.window) {
    return static_cast<double>(op.window);  // a full chunk on the way
  }
  return KeysRead(op, kv_last);
}

void OpAt(const OpCost& base, const OpCost& slope, double x, OpCost* out) {
  out->flops = base.flops + x * slope.flops;
  for (int c = 0; c < kOperandClassCount; ++c) {
    out->read[c] = base.read[c] + x * slope.read[c];
    out->write[c] = base.write[c] + x * slope.write[c];
  }
}

void BuildDecode(const GraphContext& g, int64_t batch, int64_t kv_length,
                 OpList* base, OpList* slope) {
  internal::BuildStepOps(g, StepShape{batch, 1, kv_length, 0}, base);
  internal::BuildStepOps(g, StepShape{batch, 1, kv_length, 1}, slope);
  for (size_t i = 0; i < base->size(); ++i) {
    if ((*base)[i].kv_dependent) {
      OpCost& s = (*slope)[i];
      OpAt(s, (*base)[i], -1, &s);  // (x = 1) - (x = 0)
    }
  }
}

}  // namespace ridgeline::engine::internal
