// Recurrent mixers and DSA's indexer: FLOPs and bytes per step.
//
// Conventions on top of operators.cc's (matmuls 2*rows*k*n, weights read
// once per step, elementwise ops memory-bound):
// - A recurrent layer keeps a constant state per sequence (the KV-cache
//   operand class, placed like the KV cache). Every sequence of a step
//   reads its state and writes it back once per layer, in the recurrent
//   (decode) and the chunked (prefill) form alike; the state never grows.
// - Prefill runs the chunked form over chunks of C (Q) tokens: intra-chunk
//   work grows with C per token, inter-chunk work with the state size. The
//   chunk kernels compute whole C x C tiles (the causal mask multiplies,
//   it does not skip), and write each chunk's state to memory for the
//   output pass, which reads it back (activations).
// - Decode runs the recurrent form: per token a fixed number of passes
//   over the state.
#include "operators_recurrent.h"

#include <algorithm>

#include "ridgeline/engine/model.h"

namespace ridgeline::engine::internal {
namespace {

constexpr double kSiluFlopsPerElement = 4;     // exp, add, divide, multiply
constexpr double kRmsNormFlopsPerElement = 4;  // as operators.cc counts it
constexpr double kGateFlopsPerElement = kSiluFlopsPerElement + 1;  // + mul

double Tokens(const StepShape& shape) {
  return shape.mixed != nullptr ? shape.mixed->tokens
                                : static_cast<double>(shape.seqs) *
                                      static_cast<double>(shape.new_tokens);
}

// Depthwise causal conv1d of kernel K over `channels` (Mamba-2's x, B, C;
// Gated DeltaNet's q, k, v), then SiLU: 2K FLOPs per channel and token
// plus the activation. Each sequence's last K - 1 inputs are its conv
// state (read and written back, KV-cache class).
void EmitShortConv(const GraphContext& g, const LayerGroup& grp,
                   const RecurrentSplit& r, double tokens, double channels,
                   double kernel, bool bias, Emitter& e) {
  const double ab = g.act_bytes;
  const double conv_state = (kernel - 1) * channels * r.seqs * g.kv_bytes;
  OpCost& op = e.Add(
      OpKind::kShortConv, OpClass::kElementwise, grp.name, grp.layers, 1,
      g.elementwise_math, tokens,
      tokens * channels * (2 * kernel + (bias ? 1 : 0) + kSiluFlopsPerElement),
      {.weights_read = channels * (kernel + (bias ? 1 : 0)) * g.weight_bytes,
       .activations_read = tokens * channels * ab,
       .activations_written = tokens * channels * ab,
       .kv_read = conv_state,
       .kv_written = conv_state});
  op.dominant = OperandClass::kActivations;
}

// Gated RMSNorm of `width` per token: RMSNorm(y) scaled by weights and
// multiplied by act(z) (Mamba-2's RMSNormGated, Gated DeltaNet's
// FusedRMSNormGated; lightning's norm then sigmoid gate counts the same).
void EmitGatedNorm(const GraphContext& g, const LayerGroup& grp, double tokens,
                   double width, double weights, Emitter& e) {
  const double ab = g.act_bytes;
  e.Add(OpKind::kGatedNorm, OpClass::kElementwise, grp.name, grp.layers, 1,
        g.elementwise_math, tokens,
        tokens * width * (kRmsNormFlopsPerElement + kGateFlopsPerElement),
        {.weights_read = weights * ab,
         .activations_read = 2 * tokens * width * ab,
         .activations_written = tokens * width * ab});
}

}  // namespace

RecurrentSplit SplitRecurrent(const StepShape& shape) {
  RecurrentSplit r;
  const double tokens = Tokens(shape);
  r.seqs = static_cast<double>(shape.seqs);
  if (shape.mixed != nullptr) {
    r.decode_tokens = shape.mixed->decode_sequences;
    r.chunked_tokens = tokens - r.decode_tokens;
    r.chunked_seqs = r.seqs - r.decode_tokens;
  } else if (shape.new_tokens == 1) {
    r.decode_tokens = tokens;
  } else {
    r.chunked_tokens = tokens;
    r.chunked_seqs = r.seqs;
  }
  return r;
}

// Mamba-2 (Dao & Gu 2024, arXiv:2405.21060). With H heads of P channels,
// state N, G groups of B / C and chunk Q, per token and head:
// - chunked scan (the paper's Listing 1, state-spaces/mamba
//   mamba_ssm/modules/ssd_minimal.py; kernels ssd_chunk_scan /
//   ssd_chunk_state): C B^T in the chunk 2QN, its product with X 2QP,
//   the chunk state B^T X 2NP, the output from the carried state C h
//   2NP: 2Q(N + P) + 4NP;
// - state update (mamba_ssm/ops/triton/selective_state_update.py): decay
//   h * exp(dt A) NP, h += dt B x^T 2NP, y = h C 2NP: 5NP.
void EmitMamba2(const GraphContext& g, const LayerGroup& grp,
                const StepShape& shape, Emitter& e) {
  const ModelConfig& m = *g.model;
  const MambaDims& d = *m.mamba;
  const RecurrentSplit r = SplitRecurrent(shape);
  const double T = Tokens(shape);
  const double h = static_cast<double>(m.hidden_size);
  const double heads = static_cast<double>(d.num_heads);
  const double P = static_cast<double>(d.head_dim);
  const double N = static_cast<double>(d.state_size);
  const double Q = static_cast<double>(d.chunk_size);
  const double di = heads * P;
  const double gn = static_cast<double>(d.n_groups) * N;
  const double ab = g.act_bytes;

  // z (gate), x, B, C, dt.
  e.Matmul(OpKind::kMambaInProjection, grp.name, grp.layers, T, h,
           2 * di + 2 * gn + heads);
  EmitShortConv(g, grp, r, T, di + 2 * gn, static_cast<double>(d.conv_kernel),
                d.conv_bias, e);
  const double state = heads * P * N;  // elements per sequence
  const double flops =
      r.chunked_tokens * heads * (2 * Q * (N + P) + 4 * N * P) +
      r.decode_tokens * heads * 5 * N * P;
  // Chunk states written by the state pass and read by the output pass.
  const double chunk_states = r.chunked_tokens / Q * state * ab;
  OpCost& scan =
      e.Add(OpKind::kSsmScan, OpClass::kAttention, grp.name, grp.layers, 1,
            g.attention_math, T, flops,
            {.weights_read = 3 * heads * ab,  // A_log, D, dt_bias
             .activations_read = T * (di + 2 * gn + heads) * ab + chunk_states,
             .activations_written = T * di * ab + chunk_states,
             .kv_read = r.seqs * state * g.kv_bytes,
             .kv_written = r.seqs * state * g.kv_bytes});
  scan.dominant = OperandClass::kKvCache;
  if (d.gated_norm) EmitGatedNorm(g, grp, T, di, di, e);
  e.Matmul(OpKind::kOutProjection, grp.name, grp.layers, T, di, h);
}

// Mamba-1 (Gu & Dao 2023, arXiv:2312.00752, Algorithm 2; the reference
// selective_scan_ref in state-spaces/mamba
// mamba_ssm/ops/selective_scan_interface.py, selective_state_update for
// decode). Per token and channel of d_inner, state N: exp(dt A) 2N
// (multiply, exp), dt u B N (dt u once per channel), h = dA h + dBu 2N,
// y = C h 2N; then y + D u 2 and y * SiLU(z) 5: 7N + 7. The selective scan
// is sequential in time with the state kept on chip, so prefill costs
// what decode costs per token (no chunked form); each sequence reads its
// d_inner x N state and writes it back once per layer.
void EmitMamba1(const GraphContext& g, const LayerGroup& grp,
                const StepShape& shape, Emitter& e) {
  const ModelConfig& m = *g.model;
  const Mamba1Dims& d = *m.mamba1;
  const RecurrentSplit r = SplitRecurrent(shape);
  const double T = Tokens(shape);
  const double h = static_cast<double>(m.hidden_size);
  const double di = static_cast<double>(d.inner);
  const double N = static_cast<double>(d.state_size);
  const double R = static_cast<double>(d.dt_rank);
  const double ab = g.act_bytes;

  // x and the gate z.
  e.Matmul(OpKind::kMambaInProjection, grp.name, grp.layers, T, h, 2 * di);
  EmitShortConv(g, grp, r, T, di, static_cast<double>(d.conv_kernel),
                d.conv_bias, e);
  // x_proj (dt, B, C) and dt_proj (its bias adds one FLOP per element).
  e.Matmul(OpKind::kMambaInProjection, grp.name, grp.layers, T, di, R + 2 * N);
  OpCost& dt =
      e.Matmul(OpKind::kMambaInProjection, grp.name, grp.layers, T, R, di);
  dt.flops += T * di * grp.layers;
  dt.read[kWeights] += di * g.weight_bytes * grp.layers;
  if (d.inner_norms) {
    const double elems = T * (R + 2 * N);
    e.Add(OpKind::kNorm, OpClass::kElementwise, grp.name, grp.layers, 3,
          g.elementwise_math, T, kRmsNormFlopsPerElement * elems,
          {.weights_read = (R + 2 * N) * ab,
           .activations_read = elems * ab,
           .activations_written = elems * ab});
  }
  const double state = di * N;  // elements per sequence
  OpCost& scan =
      e.Add(OpKind::kSsmScan, OpClass::kAttention, grp.name, grp.layers, 1,
            g.attention_math, T, T * di * (7 * N + 7),
            {.weights_read = (di * N + di) * ab,             // A_log, D
             .activations_read = T * (3 * di + 2 * N) * ab,  // x, dt, z, B, C
             .activations_written = T * di * ab,
             .kv_read = r.seqs * state * g.kv_bytes,
             .kv_written = r.seqs * state * g.kv_bytes});
  scan.dominant = OperandClass::kKvCache;
  e.Matmul(OpKind::kOutProjection, grp.name, grp.layers, T, di, h);
}

// Linear attention with a dk x dv state per value head, chunk C.
// Gated DeltaNet (Yang, Kautz, Hatamizadeh 2024, arXiv:2412.06464; the
// chunkwise WY form of Yang et al. 2024, arXiv:2406.06484; kernels
// fla-org/flash-linear-attention fla/ops/gated_delta_rule/chunk.py), per
// token and value head:
// - chunked: K K^T 2C dk, the triangular solve 2C^2/3 (C^3/3 multiply-adds
//   per chunk), W = A K and U = A V 2C(dk + dv), the state pass W S and
//   K^T (U - W S) 4 dk dv, the output Q S 2 dk dv, Q K^T 2C dk and its
//   product with U - W S 2C dv: C(6 dk + 4 dv) + 2C^2/3 + 6 dk dv;
// - recurrent (fused_recurrent_gated_delta_rule): decay dk dv, S^T k
//   2 dk dv, the rank-1 delta update 2 dk dv, o = S q 2 dk dv: 7 dk dv.
// Lightning attention (Qin et al. 2024, arXiv:2401.04658, Algorithm 1):
// - chunked: intra-chunk Q K^T 2C dk and x V 2C dv, inter-chunk Q (KV)
//   2 dk dv, the KV update K^T V 2 dk dv: 2C(dk + dv) + 4 dk dv;
// - recurrent: decay dk dv, k^T v 2 dk dv, q S 2 dk dv: 5 dk dv.
// Kimi Delta Attention (Kimi Linear, arXiv:2510.26692, section 3; kernels
// fla/ops/kda) is Gated DeltaNet's chunkwise WY form with the scalar decay
// made a diagonal one, a decay per key channel: the same matmuls, plus the
// cumulative decay applied to q and k and its inverse to k before the
// chunk products, 3 dk per token and head; the recurrent decay of dk x dv
// is already counted. Its gates are a low-rank projection (f_a: hidden ->
// dk, f_b: dk -> heads x dk; likewise g_a, g_b for the output gate).
void EmitLinearAttention(const GraphContext& g, const LayerGroup& grp,
                         const StepShape& shape, Emitter& e) {
  const ModelConfig& m = *g.model;
  const LinearAttentionDims& d = *m.linear_attention;
  const RecurrentSplit r = SplitRecurrent(shape);
  const double T = Tokens(shape);
  const double h = static_cast<double>(m.hidden_size);
  const double hv = static_cast<double>(d.num_value_heads);
  const double dk = static_cast<double>(d.key_head_dim);
  const double dv = static_cast<double>(d.value_head_dim);
  const double C = static_cast<double>(d.chunk_size);
  const double qk = static_cast<double>(d.num_key_heads) * dk;
  const double v = hv * dv;
  const double ab = g.act_bytes;
  const bool kda = d.kind == LinearAttentionKind::kKimiDelta;
  const bool delta = d.kind == LinearAttentionKind::kGatedDeltaNet || kda;

  if (kda) {
    // q, k, v, b and the gates' first halves f_a, g_a (rank dk), then f_b
    // and g_b from those ranks.
    e.Matmul(OpKind::kLinearAttentionInProjection, grp.name, grp.layers, T, h,
             2 * qk + v + hv + 2 * dk)
        .kernels_per_layer = 6;
    e.Matmul(OpKind::kLinearAttentionInProjection, grp.name, grp.layers, T, dk,
             qk + v)
        .kernels_per_layer = 2;
  } else {
    // Gated DeltaNet: q, k, v, z (in_proj_qkvz) and beta, a (in_proj_ba).
    // Lightning: q, k, v (qkv_proj) and the output gate (output_gate).
    const double in_width = delta ? 2 * qk + 2 * v + 2 * hv : 2 * qk + 2 * v;
    e.Matmul(OpKind::kLinearAttentionInProjection, grp.name, grp.layers, T, h,
             in_width)
        .kernels_per_layer = 2;
  }
  if (d.conv_kernel > 0) {
    EmitShortConv(g, grp, r, T, 2 * qk + v, static_cast<double>(d.conv_kernel),
                  false, e);
  }
  const double per_chunked =
      delta ? C * (6 * dk + 4 * dv) + 2 * C * C / 3 + 6 * dk * dv +
                  (kda ? 3 * dk : 0)
            : 2 * C * (dk + dv) + 4 * dk * dv;
  const double per_recurrent = (delta ? 7 : 5) * dk * dv;
  const double flops =
      hv * (r.chunked_tokens * per_chunked + r.decode_tokens * per_recurrent);
  const double state = hv * dk * dv;
  const double chunk_states = r.chunked_tokens / C * state * ab;
  // Beta and the decay: one each per head (Gated DeltaNet), the decay per
  // key channel (KDA).
  const double gates = kda ? hv + qk : delta ? 2 * hv : 0;
  // A_log and dt_bias: per head (Gated DeltaNet); A_log per head and
  // dt_bias per key channel (KDA).
  const double gate_weights = kda ? hv + qk : delta ? 2 * hv : 0;
  OpCost& op =
      e.Add(OpKind::kLinearAttention, OpClass::kAttention, grp.name, grp.layers,
            1, g.attention_math, T, flops,
            {.weights_read = gate_weights * ab,
             .activations_read = T * (2 * qk + v + gates) * ab + chunk_states,
             .activations_written = T * v * ab + chunk_states,
             .kv_read = r.seqs * state * g.kv_bytes,
             .kv_written = r.seqs * state * g.kv_bytes});
  op.dominant = OperandClass::kKvCache;
  // Gated DeltaNet normalises each head (weights dv); lightning the whole
  // output (heads x dv).
  EmitGatedNorm(g, grp, T, v, delta ? dv : v, e);
  e.Matmul(OpKind::kOutProjection, grp.name, grp.layers, T, v, h);
}

// DSA's lightning indexer (DeepSeek-V3.2-Exp, arXiv / the repository's
// inference/model.py `Indexer`): index queries from the query latent
// (wq_b: q_lora_rank -> Hi x di), one index key per token (wk: hidden ->
// di, the one the cache keeps), one weight per index head (weights_proj:
// hidden -> Hi). A query's score for a key is sum_j w_j ReLU(q_j . k):
// per (query, key) pair Hi (2 di + 3) FLOPs (dot, ReLU, weight, sum); the
// scores are written and read back by the top-k selection.
void EmitDsaIndexer(const GraphContext& g, const LayerGroup& grp,
                    const StepShape& shape, Emitter& e) {
  const ModelConfig& m = *g.model;
  const DsaDims& d = *m.dsa;
  const double T = Tokens(shape);
  const double S = static_cast<double>(shape.seqs);
  const double h = static_cast<double>(m.hidden_size);
  const double hi = static_cast<double>(d.index_heads);
  const double di = static_cast<double>(d.index_head_dim);
  const double q_in =
      m.mla->q_lora_rank > 0 ? static_cast<double>(m.mla->q_lora_rank) : h;
  const double ab = g.act_bytes;
  const double weights = q_in * hi * di + h * di + h * hi;
  OpCost& proj =
      e.Add(OpKind::kDsaIndexerProjection, e.MatmulClass(T), grp.name,
            grp.layers, 3, g.matmul_math, T, 2 * T * weights,
            {.weights_read = (weights + 2 * di) * g.weight_bytes,  // + k_norm
             .activations_read = T * (q_in + h) * ab,
             .activations_written = T * (hi * di + hi) * ab,
             .kv_written = T * di * g.kv_bytes});
  proj.pim_candidate = true;
  proj.dequantized = g.weights_dequantized;

  // Every causal (query, key) pair is scored: the index keys of the whole
  // context are read (no window).
  double pairs = 0, keys = 0;
  if (shape.linear_x >= 0) {
    pairs = keys = shape.linear_x;
  } else {
    const double n = static_cast<double>(shape.new_tokens);
    const double len = static_cast<double>(shape.kv_length);
    pairs = CausalPairs(n, len, 0);
    keys = KeysSeen(n, len, 0);
  }
  double scores = S * pairs, seq_keys = S * keys;
  if (shape.mixed != nullptr) {
    scores = shape.mixed->pairs[0];
    seq_keys = shape.mixed->keys[0];
  }
  OpCost& score =
      e.Add(OpKind::kDsaIndexerScore, OpClass::kAttention, grp.name, grp.layers,
            1, g.attention_math, T, scores * hi * (2 * di + 3),
            {.activations_read = T * (hi * di + hi) * ab + scores * ab,
             .activations_written = scores * ab,
             .kv_read = seq_keys * di * g.kv_bytes});
  score.kv_dependent = true;
  score.window = 0;
  score.pim_candidate = true;
  score.dominant = OperandClass::kKvCache;
}

}  // namespace ridgeline::engine::internal
