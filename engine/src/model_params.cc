// Parameter counts, KV-cache size per token, validation and close-name
// suggestions for ModelConfig (model.h).
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/engine/status_macros.h"

namespace ridgeline::engine {
namespace {

// One norm weight vector (LayerNorm adds a bias of the same length).
double NormParams(const ModelConfig& m, double width) {
  return m.norm == NormKind::kLayerNorm ? 2 * width : width;
}

// Attention weights of one decoder layer (projections, biases, q/k norms,
// sinks) with `kv_heads` key/value heads.
double AttentionParams(const ModelConfig& m, double kv_heads) {
  const double h = m.hidden_size;
  const double heads = m.num_attention_heads;
  if (m.mla.has_value()) {
    const MlaDims& a = *m.mla;
    const double q_head = a.qk_nope_head_dim + a.qk_rope_head_dim;
    double p = 0;
    if (a.q_lora_rank > 0) {
      // q_a_proj, q_a_layernorm, q_b_proj.
      p += h * a.q_lora_rank + NormParams(m, a.q_lora_rank) +
           a.q_lora_rank * heads * q_head;
    } else {
      p += h * heads * q_head;  // q_proj
    }
    // kv_a_proj_with_mqa (latent + shared RoPE key), kv_a_layernorm,
    // kv_b_proj (per-head no-RoPE key and value), o_proj.
    p += h * (a.kv_lora_rank + a.qk_rope_head_dim) +
         NormParams(m, a.kv_lora_rank) +
         a.kv_lora_rank * heads * (a.qk_nope_head_dim + a.v_head_dim) +
         heads * a.v_head_dim * h;
    if (m.dsa.has_value()) {
      // Indexer (DeepSeek-V3.2-Exp inference/model.py): wq_b from the query
      // latent, wk from the hidden state, k_norm (LayerNorm: weight and
      // bias), weights_proj (one weight per index head).
      const DsaDims& d = *m.dsa;
      const double q_in = a.q_lora_rank > 0 ? a.q_lora_rank : h;
      p += q_in * d.index_heads * d.index_head_dim + h * d.index_head_dim +
           2.0 * d.index_head_dim + h * d.index_heads;
    }
    return p;
  }
  const double q = heads * m.head_dim;
  const double kv = kv_heads * m.head_dim;
  double p = h * q + 2 * h * kv + q * h;  // q, k, v, o
  // Qwen3-Next: q_proj emits the output gate too (2 x heads x head_dim).
  if (m.attention_output_gate) p += h * q;
  if (m.qkv_bias) p += q + 2 * kv;
  if (m.attention_out_bias) p += h;
  if (m.qk_norm) p += 2 * NormParams(m, m.head_dim);
  if (m.attention_sinks) p += heads;
  return p;
}

// A Mamba-2 mixer (HF Mamba2Mixer): in_proj to z, x, B, C and dt; the
// depthwise conv1d over x, B, C (weights K per channel, optional bias);
// dt_bias, A_log and D per head; the gated RMSNorm over d_inner; out_proj.
double MambaParams(const ModelConfig& m) {
  const MambaDims& d = *m.mamba;
  const double h = m.hidden_size;
  const double di = static_cast<double>(d.inner());
  const double gn = static_cast<double>(d.n_groups * d.state_size);
  const double heads = static_cast<double>(d.num_heads);
  const double conv_dim = di + 2 * gn;
  return h * (2 * di + 2 * gn + heads) +
         conv_dim *
             (static_cast<double>(d.conv_kernel) + (d.conv_bias ? 1 : 0)) +
         3 * heads + (d.gated_norm ? di : 0) + di * h;
}

// A Mamba-1 mixer (HF JambaMambaMixer): in_proj to x and z (2 d_inner);
// the depthwise conv1d over x; x_proj to dt (R), B and C (N each);
// dt_proj (R -> d_inner, with bias); A_log (d_inner x N) and D; out_proj;
// Jamba's dt / B / C RMSNorms; in/out_proj biases when proj_bias.
double Mamba1Params(const ModelConfig& m) {
  const Mamba1Dims& d = *m.mamba1;
  const double h = m.hidden_size;
  const double di = static_cast<double>(d.inner);
  const double n = static_cast<double>(d.state_size);
  const double r = static_cast<double>(d.dt_rank);
  double p = h * 2 * di +
             di * (static_cast<double>(d.conv_kernel) + (d.conv_bias ? 1 : 0)) +
             di * (r + 2 * n) + (r * di + di) + di * n + di + di * h;
  if (d.proj_bias) p += 2 * di + h;
  if (d.inner_norms) p += r + 2 * n;
  return p;
}

// Linear attention. Gated DeltaNet (HF Qwen3NextGatedDeltaNet):
// in_proj_qkvz (q, k of Hk x dk; v, z of Hv x dv), in_proj_ba (beta and
// the decay's input, one per value head), conv1d over q, k, v (no bias),
// dt_bias and A_log per value head, the gated RMSNorm over dv, out_proj.
// Lightning (HF MiniMaxText01LightningAttention): qkv_proj, output_gate,
// the norm over heads x dv, out_proj.
// KDA (vLLM kda.py KimiDeltaAttention): q, k, v projections, b_proj (beta
// per head), the decay gate f_a (hidden -> dk) and f_b (dk -> heads x
// dk) with dt_bias per key channel and A_log per head, the output gate
// g_a (hidden -> dk) and g_b (dk -> heads x dv), the q, k, v short convs
// (no bias), o_norm over dv, o_proj.
double LinearAttentionParams(const ModelConfig& m) {
  const LinearAttentionDims& d = *m.linear_attention;
  const double h = m.hidden_size;
  const double qk = static_cast<double>(d.num_key_heads * d.key_head_dim);
  const double v = static_cast<double>(d.num_value_heads * d.value_head_dim);
  const double hv = static_cast<double>(d.num_value_heads);
  switch (d.kind) {
    case LinearAttentionKind::kGatedDeltaNet:
      return h * (2 * qk + 2 * v) + h * 2 * hv +
             (2 * qk + v) * static_cast<double>(d.conv_kernel) + 2 * hv +
             static_cast<double>(d.value_head_dim) + v * h;
    case LinearAttentionKind::kLightning:
      return h * (2 * qk + v) + h * v + v + v * h;
    case LinearAttentionKind::kKimiDelta: {
      const double rank = static_cast<double>(d.key_head_dim);
      return h * (2 * qk + v) + h * hv + (h * rank + rank * qk) + qk + hv +
             (h * rank + rank * v) +
             (2 * qk + v) * static_cast<double>(d.conv_kernel) +
             static_cast<double>(d.value_head_dim) + v * h;
    }
  }
  return 0;
}

// A dense FFN of `width`: up(+gate) and down, with their biases if any.
double FfnParams(const ModelConfig& m, double width) {
  const bool gated = m.ffn == FfnKind::kGated;
  double p = (gated ? 3 : 2) * m.hidden_size * width;
  if (m.ffn_bias) p += (gated ? 2 : 1) * width + m.hidden_size;
  return p;
}

struct MoeLayerParams {
  double total = 0;
  double active = 0;
};

// One MoE FFN layer: router, routed experts, shared experts.
MoeLayerParams MoeParams(const ModelConfig& m) {
  const MoeDims& e = *m.moe;
  const double h = m.hidden_size;
  double router = h * e.num_routed_experts;
  if (e.router_score_bias) router += e.num_routed_experts;
  if (m.router_bias) router += e.num_routed_experts;
  const double expert = FfnParams(m, e.expert_intermediate_size);
  double shared =
      e.num_shared_experts * FfnParams(m, e.shared_expert_intermediate_size);
  if (e.shared_expert_gate && e.num_shared_experts > 0) shared += h;
  return {router + shared + e.num_routed_experts * expert,
          router + shared + e.experts_per_token * expert};
}

// Levenshtein distance over lower-cased ASCII.
int EditDistance(std::string_view a, std::string_view b) {
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diag = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int up = row[j];
      const bool same =
          absl::ascii_tolower(a[i - 1]) == absl::ascii_tolower(b[j - 1]);
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

absl::Status OutOfRange(std::string_view field, int64_t lo, int64_t hi,
                        int64_t got) {
  return absl::InvalidArgumentError(
      absl::StrCat(absl::string_view(field.data(), field.size()),
                   " must be in [", lo, ", ", hi, "], got ", got));
}

absl::Status CheckRange(std::string_view field, int64_t value, int64_t lo,
                        int64_t hi) {
  if (value < lo || value > hi) return OutOfRange(field, lo, hi, value);
  return absl::OkStatus();
}

// Upper bounds far above any published model; they keep the arithmetic of
// the engine finite and catch unit mistakes (bytes given as parameters).
constexpr int64_t kMaxVocab = int64_t{1} << 24;
constexpr int64_t kMaxWidth = int64_t{1} << 20;  // hidden, FFN, ranks
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxHeads = 4096;
constexpr int64_t kMaxHeadDim = 4096;
constexpr int64_t kMaxContext = int64_t{1} << 26;
constexpr int64_t kMaxExperts = 4096;

}  // namespace

std::vector<LayerSpec> ResolveLayers(const ModelConfig& m) {
  if (!m.layers.empty()) return m.layers;
  std::vector<LayerSpec> out(static_cast<size_t>(std::max<int64_t>(m.num_layers, 0)));
  const int64_t dense_first =
      m.moe.has_value() ? std::min(m.moe->first_dense_layers, m.num_layers) : 0;
  for (int64_t i = 0; i < m.num_layers; ++i) {
    LayerSpec& l = out[static_cast<size_t>(i)];
    l.ffn = m.moe.has_value() && i >= dense_first ? FfnLayerKind::kMoe
                                                   : FfnLayerKind::kDense;
    switch (m.sliding_layers) {
      case SlidingLayers::kNone:
        break;
      case SlidingLayers::kAll:
        l.sliding = true;
        break;
      case SlidingLayers::kEvenLayers:
        l.sliding = i % 2 == 0;
        break;
    }
  }
  return out;
}

int64_t MoeLayerCount(const ModelConfig& m) {
  if (!m.moe.has_value()) return 0;
  if (m.layers.empty()) {
    return m.num_layers - std::min(m.moe->first_dense_layers, m.num_layers);
  }
  return std::count_if(m.layers.begin(), m.layers.end(), [](const LayerSpec& l) {
    return l.ffn == FfnLayerKind::kMoe;
  });
}

ParameterCounts CountParameters(const ModelConfig& m) {
  ParameterCounts c;
  const double h = static_cast<double>(m.hidden_size);
  c.embedding = static_cast<double>(m.vocab_size) * h;
  c.lm_head = m.tie_word_embeddings ? 0 : c.embedding;
  if (!m.tie_word_embeddings && m.lm_head_bias) c.lm_head += m.vocab_size;
  double total = c.embedding + c.lm_head + NormParams(m, h);  // final norm
  // A draft head's input projection ([embedding; hidden] -> hidden).
  total += static_cast<double>(m.fused_hidden_inputs) * h * h;
  double active = total;
  const MoeLayerParams moe = m.moe.has_value() ? MoeParams(m) : MoeLayerParams{};
  for (const LayerSpec& l : ResolveLayers(m)) {
    double norms = static_cast<double>(m.norms_per_layer);
    double common = 0;
    switch (l.attention) {
      case AttentionKind::kFull:
        common += AttentionParams(m, static_cast<double>(
                                         l.num_kv_heads > 0 ? l.num_kv_heads
                                                            : m.num_kv_heads));
        if (l.parallel_mamba && m.mamba.has_value()) common += MambaParams(m);
        break;
      case AttentionKind::kLinear:
        common += h * h;
        break;
      case AttentionKind::kMamba2:
        common += m.mamba.has_value() ? MambaParams(m) : 0;
        break;
      case AttentionKind::kMamba1:
        common += m.mamba1.has_value() ? Mamba1Params(m) : 0;
        break;
      case AttentionKind::kLinearAttention:
        common += m.linear_attention.has_value() ? LinearAttentionParams(m) : 0;
        break;
      case AttentionKind::kNone:
        norms -= 1;
        break;
    }
    double ffn_total = 0, ffn_active = 0;
    switch (l.ffn) {
      case FfnLayerKind::kDense:
        ffn_total = ffn_active = FfnParams(
            m, static_cast<double>(l.intermediate_size > 0 ? l.intermediate_size
                                                           : m.intermediate_size));
        break;
      case FfnLayerKind::kMoe:
        ffn_total = moe.total;
        ffn_active = moe.active;
        break;
      case FfnLayerKind::kLinear:
        ffn_total = ffn_active = h * h;
        break;
      case FfnLayerKind::kNone:
        norms -= 1;
        break;
    }
    common += std::max(norms, 0.0) * NormParams(m, h);
    total += common + ffn_total;
    active += common + ffn_active;
  }
  c.total = total;
  c.active_per_token = active;
  return c;
}

double LayerKvElementsPerToken(const ModelConfig& m, const LayerSpec& l) {
  if (l.attention != AttentionKind::kFull) return 0;
  // MLA caches the compressed latent and the shared RoPE key, not per-head
  // K and V.
  // DSA adds the indexer's key (index_head_dim) per token.
  const double index_key =
      m.dsa.has_value() ? static_cast<double>(m.dsa->index_head_dim) : 0;
  if (m.mla.has_value()) {
    return static_cast<double>(m.mla->kv_lora_rank + m.mla->qk_rope_head_dim) +
           index_key;
  }
  const int64_t kv = l.num_kv_heads > 0 ? l.num_kv_heads : m.num_kv_heads;
  return 2.0 * static_cast<double>(kv) * static_cast<double>(m.head_dim) +
         index_key;
}

double LayerStateElementsPerSequence(const ModelConfig& m, const LayerSpec& l) {
  if ((l.attention == AttentionKind::kMamba2 || l.parallel_mamba) &&
      m.mamba.has_value()) {
    const MambaDims& d = *m.mamba;
    const double conv_dim =
        static_cast<double>(d.inner() + 2 * d.n_groups * d.state_size);
    return static_cast<double>(d.inner() * d.state_size) +
           static_cast<double>(d.conv_kernel - 1) * conv_dim;
  }
  if (l.attention == AttentionKind::kMamba1 && m.mamba1.has_value()) {
    const Mamba1Dims& d = *m.mamba1;
    return static_cast<double>(d.inner * d.state_size) +
           static_cast<double>(d.conv_kernel - 1) *
               static_cast<double>(d.inner);
  }
  if (l.attention == AttentionKind::kLinearAttention &&
      m.linear_attention.has_value()) {
    const LinearAttentionDims& d = *m.linear_attention;
    const double conv_dim =
        static_cast<double>(2 * d.num_key_heads * d.key_head_dim +
                            d.num_value_heads * d.value_head_dim);
    return static_cast<double>(d.num_value_heads * d.key_head_dim *
                               d.value_head_dim) +
           static_cast<double>(std::max<int64_t>(d.conv_kernel - 1, 0)) *
               conv_dim;
  }
  return 0;
}

double StateElementsPerSequence(const ModelConfig& m) {
  double total = 0;
  for (const LayerSpec& l : m.layers) {
    total += LayerStateElementsPerSequence(m, l);
  }
  return total;
}

double KvElementsPerToken(const ModelConfig& m) {
  if (m.layers.empty()) {
    return static_cast<double>(m.num_layers) * LayerKvElementsPerToken(m, {});
  }
  double total = 0;
  for (const LayerSpec& l : m.layers) total += LayerKvElementsPerToken(m, l);
  return total;
}

absl::Status ValidateModel(const ModelConfig& m) {
  if (m.id.empty()) {
    return absl::InvalidArgumentError("model.id must not be empty");
  }
  RETURN_IF_ERROR(CheckRange("model.vocab_size", m.vocab_size, 1, kMaxVocab));
  RETURN_IF_ERROR(CheckRange("model.hidden_size", m.hidden_size, 1, kMaxWidth));
  RETURN_IF_ERROR(CheckRange("model.num_layers", m.num_layers, 1, kMaxLayers));
  RETURN_IF_ERROR(CheckRange("model.mtp_layers", m.mtp_layers, 0, 16));
  RETURN_IF_ERROR(
      CheckRange("model.fused_hidden_inputs", m.fused_hidden_inputs, 0, 4));
  RETURN_IF_ERROR(CheckRange("model.num_attention_heads", m.num_attention_heads,
                             1, kMaxHeads));
  RETURN_IF_ERROR(
      CheckRange("model.max_context", m.max_context, 1, kMaxContext));
  RETURN_IF_ERROR(CheckRange("model.norms_per_layer", m.norms_per_layer, 0, 8));
  // A dense FFN width is needed unless no layer uses it.
  const bool needs_dense =
      m.layers.empty()
          ? !m.moe.has_value() || m.moe->first_dense_layers > 0
          : std::any_of(m.layers.begin(), m.layers.end(), [](const LayerSpec& l) {
              return l.ffn == FfnLayerKind::kDense && l.intermediate_size == 0;
            });
  RETURN_IF_ERROR(CheckRange("model.intermediate_size", m.intermediate_size,
                             needs_dense ? 1 : 0, kMaxWidth));
  const bool any_sliding =
      m.sliding_layers != SlidingLayers::kNone ||
      std::any_of(m.layers.begin(), m.layers.end(),
                  [](const LayerSpec& l) { return l.sliding; });
  if (any_sliding) {
    RETURN_IF_ERROR(
        CheckRange("model.sliding_window", m.sliding_window, 1, kMaxContext));
  }
  if (std::any_of(m.layers.begin(), m.layers.end(),
                  [](const LayerSpec& l) { return l.chunked; })) {
    RETURN_IF_ERROR(CheckRange("model.attention_chunk_size",
                               m.attention_chunk_size, 1, kMaxContext));
  }
  if (!m.layers.empty()) {
    if (static_cast<int64_t>(m.layers.size()) != m.num_layers) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model.layers must hold model.num_layers (", m.num_layers,
          ") entries, got ", m.layers.size()));
    }
    for (size_t i = 0; i < m.layers.size(); ++i) {
      const LayerSpec& l = m.layers[i];
      const std::string at = absl::StrCat("model.layers[", i, "]");
      if (l.chunked && l.sliding) {
        return absl::InvalidArgumentError(absl::StrCat(
            at, ".chunked and ", at,
            ".sliding are exclusive (a layer attends within its chunk or "
            "within a window), got both true"));
      }
      if (l.chunked && l.attention != AttentionKind::kFull) {
        return absl::InvalidArgumentError(absl::StrCat(
            at, ".chunked needs ", at,
            ".attention to be the model's attention, got a layer without it"));
      }
      if (l.parallel_mamba && (l.attention != AttentionKind::kFull ||
                               !m.mamba.has_value())) {
        return absl::InvalidArgumentError(absl::StrCat(
            at, ".parallel_mamba needs ", at,
            ".attention to be full attention and a model.mamba mixer"));
      }
      if (l.attention == AttentionKind::kMamba2 && !m.mamba.has_value()) {
        return absl::InvalidArgumentError(absl::StrCat(
            at,
            ".attention is a Mamba-2 mixer but the model has no model.mamba"));
      }
      if (l.attention == AttentionKind::kMamba1 && !m.mamba1.has_value()) {
        return absl::InvalidArgumentError(absl::StrCat(
            at,
            ".attention is a Mamba-1 mixer but the model has no model.mamba1"));
      }
      if (l.attention == AttentionKind::kLinearAttention &&
          !m.linear_attention.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat(at,
                         ".attention is linear attention but the model has no "
                         "model.linear_attention"));
      }
      if (l.ffn == FfnLayerKind::kMoe && !m.moe.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat(at, ".ffn is MoE but the model has no model.moe"));
      }
      RETURN_IF_ERROR(CheckRange(absl::StrCat(at, ".intermediate_size"),
                                 l.intermediate_size, 0, kMaxWidth));
      if (l.ffn == FfnLayerKind::kDense && l.intermediate_size == 0 &&
          m.intermediate_size < 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            at, ".intermediate_size must be in [1, ", kMaxWidth,
            "] (model.intermediate_size is 0), got 0"));
      }
      if (l.num_kv_heads != 0 && !m.mla.has_value()) {
        RETURN_IF_ERROR(CheckRange(absl::StrCat(at, ".num_kv_heads"),
                                   l.num_kv_heads, 1, m.num_attention_heads));
        if (m.num_attention_heads % l.num_kv_heads != 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              at, ".num_kv_heads must divide model.num_attention_heads (",
              m.num_attention_heads, "), got ", l.num_kv_heads));
        }
      }
    }
  }
  RETURN_IF_ERROR(CheckRange("model.rotary_dim", m.rotary_dim, 0, m.head_dim));
  RETURN_IF_ERROR(CheckRange("model.mtp_layers", m.mtp_layers, 0, kMaxLayers));
  if (m.mamba.has_value()) {
    const MambaDims& d = *m.mamba;
    RETURN_IF_ERROR(
        CheckRange("model.mamba.num_heads", d.num_heads, 1, kMaxHeads));
    RETURN_IF_ERROR(
        CheckRange("model.mamba.head_dim", d.head_dim, 1, kMaxHeadDim));
    RETURN_IF_ERROR(
        CheckRange("model.mamba.state_size", d.state_size, 1, kMaxHeadDim));
    RETURN_IF_ERROR(
        CheckRange("model.mamba.n_groups", d.n_groups, 1, d.num_heads));
    RETURN_IF_ERROR(
        CheckRange("model.mamba.conv_kernel", d.conv_kernel, 1, 64));
    RETURN_IF_ERROR(
        CheckRange("model.mamba.chunk_size", d.chunk_size, 1, 65536));
  }
  if (m.mamba1.has_value()) {
    const Mamba1Dims& d = *m.mamba1;
    RETURN_IF_ERROR(CheckRange("model.mamba1.inner", d.inner, 1, kMaxWidth));
    RETURN_IF_ERROR(
        CheckRange("model.mamba1.state_size", d.state_size, 1, kMaxHeadDim));
    RETURN_IF_ERROR(
        CheckRange("model.mamba1.dt_rank", d.dt_rank, 1, kMaxWidth));
    RETURN_IF_ERROR(
        CheckRange("model.mamba1.conv_kernel", d.conv_kernel, 1, 64));
  }
  if (m.linear_attention.has_value()) {
    const LinearAttentionDims& d = *m.linear_attention;
    RETURN_IF_ERROR(CheckRange("model.linear_attention.num_key_heads",
                               d.num_key_heads, 1, kMaxHeads));
    RETURN_IF_ERROR(CheckRange("model.linear_attention.key_head_dim",
                               d.key_head_dim, 1, kMaxHeadDim));
    RETURN_IF_ERROR(CheckRange("model.linear_attention.num_value_heads",
                               d.num_value_heads, 1, kMaxHeads));
    RETURN_IF_ERROR(CheckRange("model.linear_attention.value_head_dim",
                               d.value_head_dim, 1, kMaxHeadDim));
    RETURN_IF_ERROR(
        CheckRange("model.linear_attention.conv_kernel", d.conv_kernel, 0, 64));
    RETURN_IF_ERROR(CheckRange("model.linear_attention.chunk_size",
                               d.chunk_size, 1, 65536));
  }
  if (m.dsa.has_value()) {
    const DsaDims& d = *m.dsa;
    if (!m.mla.has_value()) {
      return absl::InvalidArgumentError(
          "model.dsa needs model.mla (DeepSeek Sparse Attention indexes MLA "
          "layers), got no model.mla");
    }
    RETURN_IF_ERROR(
        CheckRange("model.dsa.index_heads", d.index_heads, 1, kMaxHeads));
    RETURN_IF_ERROR(CheckRange("model.dsa.index_head_dim", d.index_head_dim, 1,
                               kMaxHeadDim));
    RETURN_IF_ERROR(
        CheckRange("model.dsa.index_topk", d.index_topk, 1, kMaxContext));
  }
  if (m.mla.has_value()) {
    const MlaDims& a = *m.mla;
    RETURN_IF_ERROR(
        CheckRange("model.mla.q_lora_rank", a.q_lora_rank, 0, kMaxWidth));
    RETURN_IF_ERROR(
        CheckRange("model.mla.kv_lora_rank", a.kv_lora_rank, 1, kMaxWidth));
    RETURN_IF_ERROR(CheckRange("model.mla.qk_nope_head_dim", a.qk_nope_head_dim,
                               0, kMaxHeadDim));
    RETURN_IF_ERROR(CheckRange("model.mla.qk_rope_head_dim", a.qk_rope_head_dim,
                               1, kMaxHeadDim));
    RETURN_IF_ERROR(
        CheckRange("model.mla.v_head_dim", a.v_head_dim, 1, kMaxHeadDim));
  } else {
    RETURN_IF_ERROR(CheckRange("model.num_kv_heads", m.num_kv_heads, 1,
                               m.num_attention_heads));
    if (m.num_attention_heads % m.num_kv_heads != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model.num_kv_heads must divide model.num_attention_heads (",
          m.num_attention_heads, "), got ", m.num_kv_heads));
    }
    RETURN_IF_ERROR(CheckRange("model.head_dim", m.head_dim, 1, kMaxHeadDim));
  }
  if (m.moe.has_value()) {
    const MoeDims& e = *m.moe;
    RETURN_IF_ERROR(CheckRange("model.moe.num_routed_experts",
                               e.num_routed_experts, 1, kMaxExperts));
    RETURN_IF_ERROR(CheckRange("model.moe.experts_per_token",
                               e.experts_per_token, 1, e.num_routed_experts));
    RETURN_IF_ERROR(CheckRange("model.moe.expert_intermediate_size",
                               e.expert_intermediate_size, 1, kMaxWidth));
    RETURN_IF_ERROR(CheckRange("model.moe.num_shared_experts",
                               e.num_shared_experts, 0, kMaxExperts));
    if (e.num_shared_experts > 0) {
      RETURN_IF_ERROR(CheckRange("model.moe.shared_expert_intermediate_size",
                                 e.shared_expert_intermediate_size, 1,
                                 kMaxWidth));
    }
    RETURN_IF_ERROR(CheckRange("model.moe.first_dense_layers",
                               e.first_dense_layers, 0, m.num_layers - 1));
  }
  return absl::OkStatus();
}

std::vector<std::string> ClosestNames(
    std::string_view query, const std::vector<std::string>& candidates,
    int limit) {
  // Edit distance alone ranks "nvidia-a10" near "nvidia-h100-sxm" (short ids
  // are few edits from anything), so ids that contain the query, then ids
  // sharing a longer prefix with it, come first; edit distance and the name
  // break ties.
  struct Scored {
    bool contains;
    size_t prefix;
    int distance;
    const std::string* name;
  };
  std::vector<Scored> scored;
  scored.reserve(candidates.size());
  for (const std::string& c : candidates) {
    const auto mismatch =
        std::mismatch(query.begin(), query.end(), c.begin(), c.end());
    scored.push_back({c.find(query) != std::string::npos,
                      static_cast<size_t>(mismatch.first - query.begin()),
                      EditDistance(query, c), &c});
  }
  std::sort(scored.begin(), scored.end(), [](const Scored& a, const Scored& b) {
    if (a.contains != b.contains) return a.contains;
    if (a.prefix != b.prefix) return a.prefix > b.prefix;
    if (a.distance != b.distance) return a.distance < b.distance;
    return *a.name < *b.name;
  });
  std::vector<std::string> out;
  for (const Scored& s : scored) {
    if (static_cast<int>(out.size()) >= limit) break;
    out.push_back(*s.name);
  }
  return out;
}

}  // namespace ridgeline::engine
