// config.json -> ModelConfig for the hybrid and sparse-attention classes:
// Qwen3-Next, Nemotron-H, DeepSeek-V3.2's indexer, GLM-4.5, MiniMax-M1 /
// MiniMax-Text-01, Jamba, Mamba-2, Falcon-H1 and Kimi-Linear
// (hf_config.cc reads the fields every class shares first: vocab, hidden,
// layers, heads, head_dim, context, tied embeddings).
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "hf_config_reader.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/engine/status_macros.h"

namespace ridgeline::engine::hf_internal {

absl::StatusOr<int64_t> RotaryDim(const Json& j, const char* key, double def,
                                  int64_t head_dim) {
  double factor = def;
  const auto it = j.find(key);
  if (it != j.end() && !it->is_null()) {
    if (!it->is_number() || !(it->get<double>() > 0) ||
        it->get<double>() > 1) {
      return Bad(absl::StrCat(key, " must be a number in (0, 1], got ",
                              Describe(*it)));
    }
    factor = it->get<double>();
  }
  return static_cast<int64_t>(
      std::llround(factor * static_cast<double>(head_dim)));
}

// Qwen3-Next: layer_types ("linear_attention" / "full_attention"), else
// every full_attention_interval-th layer (1-based) is full attention.
// Linear layers are Gated DeltaNet (linear_num_key_heads of
// linear_key_head_dim for q and k, linear_num_value_heads of
// linear_value_head_dim for v, a linear_conv_kernel_dim short conv); full
// layers are gated attention (q_proj emits the output gate too) with
// q/k norms and partial RoPE. Every layer's FFN is the MoE (the config's
// intermediate_size is unused).
absl::Status ParseQwen3Next(const Json& j, const Reader& r, ModelConfig& m) {
  RETURN_IF_ERROR(CheckAllLayersSparse(j, r));
  MoeDims moe;
  ASSIGN_OR_RETURN(moe.num_routed_experts,
                   r.Int("num_experts", 512, 1, kMaxExperts));
  ASSIGN_OR_RETURN(moe.experts_per_token,
                   r.Int("num_experts_per_tok", 10, 1, moe.num_routed_experts));
  ASSIGN_OR_RETURN(moe.expert_intermediate_size,
                   r.Int("moe_intermediate_size", 512, 1, kMaxWidth));
  ASSIGN_OR_RETURN(moe.shared_expert_intermediate_size,
                   r.Int("shared_expert_intermediate_size", 512, 0, kMaxWidth));
  moe.num_shared_experts = moe.shared_expert_intermediate_size > 0 ? 1 : 0;
  moe.shared_expert_gate = moe.num_shared_experts > 0;
  m.moe = moe;
  LinearAttentionDims la;
  la.kind = LinearAttentionKind::kGatedDeltaNet;
  ASSIGN_OR_RETURN(la.num_key_heads,
                   r.Int("linear_num_key_heads", 16, 1, kMaxHeads));
  ASSIGN_OR_RETURN(la.key_head_dim,
                   r.Int("linear_key_head_dim", 128, 1, kMaxHeadDim));
  ASSIGN_OR_RETURN(la.num_value_heads,
                   r.Int("linear_num_value_heads", 32, 1, kMaxHeads));
  ASSIGN_OR_RETURN(la.value_head_dim,
                   r.Int("linear_value_head_dim", 128, 1, kMaxHeadDim));
  ASSIGN_OR_RETURN(la.conv_kernel, r.Int("linear_conv_kernel_dim", 4, 1, 64));
  m.linear_attention = la;
  m.attention_output_gate = true;
  m.qk_norm = true;
  // Qwen3NextConfig's default: 0.25.
  ASSIGN_OR_RETURN(
      m.rotary_dim,
      RotaryDim(j, "partial_rotary_factor", 0.25, m.head_dim));

  const size_t n = static_cast<size_t>(m.num_layers);
  m.layers.assign(n, LayerSpec{});
  const auto types = j.find("layer_types");
  const bool listed = types != j.end() && !types->is_null();
  if (listed && (!types->is_array() || types->size() != n)) {
    return Bad(
        absl::StrCat("layer_types must be an array of num_hidden_layers (", n,
                     ") strings, got ", Describe(*types)));
  }
  ASSIGN_OR_RETURN(int64_t interval,
                   r.Int("full_attention_interval", 4, 1, m.num_layers));
  for (size_t i = 0; i < n; ++i) {
    bool full = (static_cast<int64_t>(i) + 1) % interval == 0;
    if (listed) {
      const Json& t = (*types)[i];
      if (t == "full_attention") {
        full = true;
      } else if (t == "linear_attention") {
        full = false;
      } else {
        return Bad(absl::StrCat("layer_types[", i,
                                "] must be \"linear_attention\" or "
                                "\"full_attention\", got ",
                                Describe(t)));
      }
    }
    m.layers[i].attention =
        full ? AttentionKind::kFull : AttentionKind::kLinearAttention;
    m.layers[i].ffn = FfnLayerKind::kMoe;
  }
  return absl::OkStatus();
}

// Nemotron-H: one mixer per layer after one RMSNorm, as
// hybrid_override_pattern spells it (NemotronHConfig): M Mamba-2, *
// attention (no RoPE), - MLP, E MoE. The MLP and the experts are relu^2
// with two matrices (up, down). The Mamba inner width is mamba_num_heads x
// mamba_head_dim (the config's `expand` disagrees for Nemotron-3 Nano:
// 2 x 2688 != 64 x 64). head_dim may be named attention_head_dim.
absl::Status ParseNemotronH(const Json& j, const Reader& r, ModelConfig& m) {
  if (!r.Has("head_dim") && r.Has("attention_head_dim")) {
    ASSIGN_OR_RETURN(m.head_dim,
                     r.Int("attention_head_dim", 128, 1, kMaxHeadDim));
  }
  m.ffn = FfnKind::kPlain;
  // NemotronHConfig's defaults.
  ASSIGN_OR_RETURN(
      m.mamba,
      ReadMambaDims(
          r,
          {"mamba_num_heads", "mamba_head_dim", "ssm_state_size", "n_groups",
           "conv_kernel", "chunk_size", "use_conv_bias"},
          MambaDims{.num_heads = 128,
                    .head_dim = 64,
                    .state_size = 128,
                    .n_groups = 8,
                    .conv_kernel = 4,
                    .chunk_size = 128}));
  if (r.Has("moe_latent_size")) {
    return Bad(
        "moe_latent_size is set: latent MoE (Nemotron-3 Super) is not "
        "supported; expected it absent or null");
  }

  const auto pat = j.find("hybrid_override_pattern");
  if (pat == j.end() || !pat->is_string()) {
    return Bad(absl::StrCat(
        "hybrid_override_pattern must be a string of num_hidden_layers (",
        m.num_layers, ") letters M, *, - or E, got ",
        pat == j.end() ? std::string("nothing") : Describe(*pat)));
  }
  const std::string pattern = pat->get<std::string>();
  if (static_cast<int64_t>(pattern.size()) != m.num_layers) {
    return Bad(
        absl::StrCat("hybrid_override_pattern must have num_hidden_layers (",
                     m.num_layers, ") letters, got ", pattern.size()));
  }
  m.layers.assign(pattern.size(), LayerSpec{});
  bool any_moe = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    LayerSpec& l = m.layers[i];
    l.attention = AttentionKind::kNone;
    l.ffn = FfnLayerKind::kNone;
    switch (pattern[i]) {
      case 'M':
        l.attention = AttentionKind::kMamba2;
        break;
      case '*':
        l.attention = AttentionKind::kFull;
        break;
      case '-':
        l.ffn = FfnLayerKind::kDense;
        break;
      case 'E':
        l.ffn = FfnLayerKind::kMoe;
        any_moe = true;
        break;
      default:
        return Bad(absl::StrCat("hybrid_override_pattern[", i,
                                "] must be one of M (Mamba-2), * (attention), "
                                "- (MLP), E (MoE), got \"",
                                Prefix(pattern.substr(i, 1), kMaxQuoted),
                                "\""));
    }
  }
  if (any_moe) {
    MoeDims moe;
    ASSIGN_OR_RETURN(moe.num_routed_experts,
                     r.Int("n_routed_experts", std::nullopt, 1, kMaxExperts));
    const char* topk = ExpertsPerTokenKey(r);
    ASSIGN_OR_RETURN(moe.experts_per_token,
                     r.Int(topk, std::nullopt, 1, moe.num_routed_experts));
    ASSIGN_OR_RETURN(
        moe.expert_intermediate_size,
        r.Int("moe_intermediate_size", std::nullopt, 1, kMaxWidth));
    ASSIGN_OR_RETURN(moe.num_shared_experts,
                     r.Int("n_shared_experts", 0, 0, kMaxExperts));
    ASSIGN_OR_RETURN(moe.shared_expert_intermediate_size,
                     r.Int("moe_shared_expert_intermediate_size",
                           moe.expert_intermediate_size, 1, kMaxWidth));
    // NemotronHTopkRouter keeps e_score_correction_bias per expert.
    moe.router_score_bias = true;
    m.moe = moe;
  }
  return absl::OkStatus();
}

// DeepSeek-V3.2: DeepSeek-V3 plus the lightning indexer on every layer.
absl::Status ParseDsa(const Reader& r, ModelConfig& m) {
  DsaDims d;
  ASSIGN_OR_RETURN(d.index_heads, r.Int("index_n_heads", 64, 1, kMaxHeads));
  ASSIGN_OR_RETURN(d.index_head_dim,
                   r.Int("index_head_dim", 128, 1, kMaxHeadDim));
  ASSIGN_OR_RETURN(d.index_topk, r.Int("index_topk", 2048, 1, kMaxContext));
  m.dsa = d;
  return absl::OkStatus();
}

// HF Glm4MoeForCausalLM (modeling_glm4_moe.py): q/k/v projections with
// bias when attention_bias (o_proj never), q_norm / k_norm over head_dim
// when use_qk_norm (GLM-4.5: true, GLM-4.5-Air: false), RoPE on
// partial_rotary_factor of each head. Layers before first_k_dense_replace
// have a gated MLP of intermediate_size; the others Glm4MoeMoE: a
// DeepseekV3TopkRouter (weight and e_score_correction_bias per expert),
// n_routed_experts of moe_intermediate_size and one shared MLP of
// n_shared_experts x moe_intermediate_size (counted as n_shared experts of
// moe width, as for DeepSeek). The num_nextn_predict_layers MTP layer is
// dropped on load: recorded, not counted.
absl::Status ParseGlm4Moe(const Json& j, const Reader& r, ModelConfig& m) {
  ASSIGN_OR_RETURN(m.qkv_bias, r.Bool("attention_bias", false));
  ASSIGN_OR_RETURN(m.qk_norm, r.Bool("use_qk_norm", false));
  ASSIGN_OR_RETURN(m.rotary_dim,
                   RotaryDim(j, "partial_rotary_factor", 0.5, m.head_dim));
  MoeDims moe;
  ASSIGN_OR_RETURN(moe.num_routed_experts,
                   r.Int("n_routed_experts", 128, 1, kMaxExperts));
  ASSIGN_OR_RETURN(moe.experts_per_token, r.Int(ExpertsPerTokenKey(r), 8, 1,
                                                moe.num_routed_experts));
  ASSIGN_OR_RETURN(moe.expert_intermediate_size,
                   r.Int("moe_intermediate_size", 1408, 1, kMaxWidth));
  ASSIGN_OR_RETURN(moe.num_shared_experts,
                   r.Int("n_shared_experts", 1, 0, kMaxExperts));
  moe.shared_expert_intermediate_size = moe.expert_intermediate_size;
  ASSIGN_OR_RETURN(moe.first_dense_layers,
                   r.Int("first_k_dense_replace", 1, 0, m.num_layers - 1));
  moe.router_score_bias = true;
  m.moe = moe;
  return ParseMtp(r, m);
}

// MiniMax-M1 (MiniMax-AI/MiniMax-M1 modeling_minimax_m1.py; MiniMax-01,
// arXiv:2501.08313): attn_type_list[i] 0 is lightning attention
// (MiniMaxM1LightningAttention: qkv_proj and output_gate from the hidden
// state, an RMSNorm over heads x head_dim, out_proj; num_attention_heads
// heads of head_dim for q, k and v; no short conv; blocks of BLOCK = 256
// tokens), 1 is softmax GQA with RoPE on rotary_dim of each head. Every
// layer's FFN is the block-sparse MoE: num_local_experts gated experts of
// intermediate_size, top num_experts_per_tok; shared_intermediate_size > 0
// adds one shared MLP of intermediate_size (sic: MiniMaxM1MLP reads
// intermediate_size) scaled by a sigmoid coefficient (hidden -> 1).
absl::Status ParseMiniMax(const Json& j, const Reader& r, ModelConfig& m) {
  ASSIGN_OR_RETURN(m.rotary_dim,
                   r.Int("rotary_dim", m.head_dim, 1, m.head_dim));
  MoeDims moe;
  ASSIGN_OR_RETURN(moe.num_routed_experts,
                   r.Int("num_local_experts", 8, 1, kMaxExperts));
  ASSIGN_OR_RETURN(moe.experts_per_token, r.Int(ExpertsPerTokenKey(r), 2, 1,
                                                moe.num_routed_experts));
  moe.expert_intermediate_size = m.intermediate_size;
  ASSIGN_OR_RETURN(int64_t shared,
                   r.Int("shared_intermediate_size", 0, 0, kMaxWidth));
  if (shared > 0) {
    moe.num_shared_experts = 1;
    moe.shared_expert_intermediate_size = m.intermediate_size;
    moe.shared_expert_gate = true;
  }
  m.moe = moe;
  LinearAttentionDims la;
  la.kind = LinearAttentionKind::kLightning;
  la.num_key_heads = la.num_value_heads = m.num_attention_heads;
  la.key_head_dim = la.value_head_dim = m.head_dim;
  la.conv_kernel = 0;
  la.chunk_size = 256;
  m.linear_attention = la;

  const auto types = j.find("attn_type_list");
  const size_t n = static_cast<size_t>(m.num_layers);
  if (types == j.end() || !types->is_array() || types->size() != n) {
    return Bad(absl::StrCat(
        "attn_type_list must be an array of num_hidden_layers (", n,
        ") entries 0 (lightning attention) or 1 (softmax attention), got ",
        types == j.end() ? std::string("nothing") : Describe(*types)));
  }
  m.layers.assign(n, LayerSpec{});
  for (size_t i = 0; i < n; ++i) {
    const Json& t = (*types)[i];
    if (!t.is_number_integer() || (t.get<int64_t>() != 0 && t.get<int64_t>() != 1)) {
      return Bad(absl::StrCat("attn_type_list[", i,
                              "] must be 0 (lightning attention) or 1 "
                              "(softmax attention), got ",
                              Describe(t)));
    }
    m.layers[i].attention = t.get<int64_t>() == 0
                                ? AttentionKind::kLinearAttention
                                : AttentionKind::kFull;
    m.layers[i].ffn = FfnLayerKind::kMoe;
  }
  return absl::OkStatus();
}

// HF JambaForCausalLM (modeling_jamba.py, configuration_jamba.py): layer
// i is attention (GQA, no positional encoding) when i % attn_layer_period
// == attn_layer_offset, else a Mamba-1 mixer (JambaMambaMixer: d_inner =
// mamba_expand x hidden, mamba_d_state, mamba_dt_rank ("auto": ceil(hidden
// / 16)), with RMSNorms over dt, B and C); its FFN is the MoE
// (num_experts gated experts of intermediate_size, a bias-free router)
// when i % expert_layer_period == expert_layer_offset and num_experts > 1,
// else a gated MLP of intermediate_size. Both layer kinds have an input
// and a pre-FFN RMSNorm.
absl::Status ParseJamba(const Json& j, const Reader& r, ModelConfig& m) {
  Mamba1Dims d;
  ASSIGN_OR_RETURN(int64_t expand, r.Int("mamba_expand", 2, 1, 64));
  d.inner = expand * m.hidden_size;
  ASSIGN_OR_RETURN(d.state_size, r.Int("mamba_d_state", 16, 1, kMaxHeadDim));
  ASSIGN_OR_RETURN(d.conv_kernel, r.Int("mamba_d_conv", 4, 1, 64));
  const auto rank = j.find("mamba_dt_rank");
  if (rank != j.end() && rank->is_string()) {
    if (rank->get<std::string>() != "auto") {
      return Bad(
          absl::StrCat("mamba_dt_rank must be \"auto\" or an integer in [1, ",
                       kMaxWidth, "], got ", Describe(*rank)));
    }
    d.dt_rank = (m.hidden_size + 15) / 16;  // JambaConfig: ceil(hidden / 16)
  } else {
    ASSIGN_OR_RETURN(d.dt_rank, r.Int("mamba_dt_rank",
                                      (m.hidden_size + 15) / 16, 1, kMaxWidth));
  }
  ASSIGN_OR_RETURN(d.conv_bias, r.Bool("mamba_conv_bias", true));
  ASSIGN_OR_RETURN(d.proj_bias, r.Bool("mamba_proj_bias", false));
  d.inner_norms = true;
  m.mamba1 = d;

  ASSIGN_OR_RETURN(int64_t experts, r.Int("num_experts", 16, 1, kMaxExperts));
  if (experts > 1) {
    MoeDims moe;
    moe.num_routed_experts = experts;
    ASSIGN_OR_RETURN(moe.experts_per_token,
                     r.Int(ExpertsPerTokenKey(r), 2, 1, experts));
    moe.expert_intermediate_size = m.intermediate_size;
    m.moe = moe;
  }
  ASSIGN_OR_RETURN(int64_t attn_period,
                   r.Int("attn_layer_period", 8, 1, m.num_layers));
  ASSIGN_OR_RETURN(int64_t attn_offset,
                   r.Int("attn_layer_offset", 4, 0, attn_period - 1));
  ASSIGN_OR_RETURN(int64_t expert_period,
                   r.Int("expert_layer_period", 2, 1, m.num_layers));
  ASSIGN_OR_RETURN(int64_t expert_offset,
                   r.Int("expert_layer_offset", 1, 0, expert_period - 1));
  m.layers.assign(static_cast<size_t>(m.num_layers), LayerSpec{});
  for (int64_t i = 0; i < m.num_layers; ++i) {
    LayerSpec& l = m.layers[static_cast<size_t>(i)];
    l.attention = i % attn_period == attn_offset ? AttentionKind::kFull
                                                 : AttentionKind::kMamba1;
    l.ffn = m.moe.has_value() && i % expert_period == expert_offset
                ? FfnLayerKind::kMoe
                : FfnLayerKind::kDense;
  }
  return absl::OkStatus();
}

absl::StatusOr<MambaDims> ReadMambaDims(const Reader& r, const MambaKeys& k,
                                        const MambaDims& defaults) {
  MambaDims d = defaults;
  ASSIGN_OR_RETURN(d.num_heads, r.Int(k.heads, defaults.num_heads, 1, kMaxHeads));
  ASSIGN_OR_RETURN(d.head_dim,
                   r.Int(k.head_dim, defaults.head_dim, 1, kMaxHeadDim));
  ASSIGN_OR_RETURN(d.state_size,
                   r.Int(k.state_size, defaults.state_size, 1, kMaxHeadDim));
  ASSIGN_OR_RETURN(d.n_groups,
                   r.Int(k.n_groups, defaults.n_groups, 1, d.num_heads));
  ASSIGN_OR_RETURN(d.conv_kernel,
                   r.Int(k.conv_kernel, defaults.conv_kernel, 1, 64));
  ASSIGN_OR_RETURN(d.chunk_size,
                   r.Int(k.chunk_size, defaults.chunk_size, 1, 65536));
  ASSIGN_OR_RETURN(d.conv_bias, r.Bool(k.conv_bias, defaults.conv_bias));
  if (d.num_heads % d.n_groups != 0) {
    return Bad(absl::StrCat(k.n_groups, " must divide ", k.heads, " (",
                            d.num_heads, "), got ", d.n_groups));
  }
  return d;
}

// HF Mamba2ForCausalLM (modeling_mamba2.py, configuration_mamba2.py; the
// class of mistralai/Mamba-Codestral-7B-v0.1): num_hidden_layers blocks of
// one RMSNorm and a Mamba2Mixer each (in_proj to z, x, B, C and dt of
// 2 d_inner + 2 n_groups state_size + num_heads, the depthwise conv1d over
// x, B, C, dt_bias / A_log / D per head, the gated RMSNorm, out_proj), then
// the final norm and the LM head. d_inner = num_heads x head_dim (the
// config's intermediate_size and expand x hidden_size say the same for
// Codestral; neither is read). No attention layer, so no KV cache and no
// position limit: the attention fields hold the mixer's heads (unused), and
// max_context is the engine's maximum.
absl::StatusOr<ModelConfig> ParseMamba2(const Reader& r, ModelConfig m) {
  ASSIGN_OR_RETURN(m.vocab_size,
                   r.Int("vocab_size", std::nullopt, 1, kMaxVocab));
  ASSIGN_OR_RETURN(m.hidden_size,
                   r.Int("hidden_size", std::nullopt, 1, kMaxWidth));
  ASSIGN_OR_RETURN(m.num_layers,
                   r.Int("num_hidden_layers", std::nullopt, 1, kMaxLayers));
  // Mamba2Config's default.
  ASSIGN_OR_RETURN(m.tie_word_embeddings,
                   r.Bool("tie_word_embeddings", false));
  ASSIGN_OR_RETURN(const bool rms_norm, r.Bool("rms_norm", true));
  if (!rms_norm) {
    return Bad(
        "rms_norm must be true (the Mamba-2 mixer without its gated "
        "RMSNorm is not supported), got false");
  }
  ASSIGN_OR_RETURN(const bool bias, r.Bool("use_bias", false));
  if (bias) {
    return Bad(
        "use_bias must be false (in_proj and out_proj biases are not "
        "counted), got true");
  }
  // Mamba2Config's defaults.
  ASSIGN_OR_RETURN(
      const MambaDims d,
      ReadMambaDims(r,
                    {"num_heads", "head_dim", "state_size", "n_groups",
                     "conv_kernel", "chunk_size", "use_conv_bias"},
                    MambaDims{.num_heads = 128,
                              .head_dim = 64,
                              .state_size = 128,
                              .n_groups = 8,
                              .conv_kernel = 4,
                              .chunk_size = 256}));
  m.mamba = d;
  m.num_attention_heads = m.num_kv_heads = d.num_heads;
  m.head_dim = d.head_dim;
  m.intermediate_size = 0;
  m.max_context = kMaxContext;
  m.layers.assign(static_cast<size_t>(m.num_layers),
                  LayerSpec{.attention = AttentionKind::kMamba2,
                            .ffn = FfnLayerKind::kNone});
  if (absl::Status s = ValidateModel(m); !s.ok()) {
    return Bad(std::string(s.message()));
  }
  return m;
}

// HF FalconH1ForCausalLM (modeling_falcon_h1.py / vLLM falcon_h1.py,
// FalconH1ParallelHybrid): every layer runs GQA attention (RoPE) and a
// Mamba-2 mixer on the same normed input and adds their outputs, then a
// gated SiLU MLP of intermediate_size after its own RMSNorm (two norms a
// layer). The mixer: mamba_n_heads x mamba_d_head (= d_ssm), state
// mamba_d_state, mamba_n_groups, conv mamba_d_conv (with bias when
// mamba_conv_bias), chunk mamba_chunk_size, its gated RMSNorm only when
// mamba_rms_norm. The multipliers (embedding, attention/ssm in and out,
// key, MLP, LM head) scale activations and cost nothing. Not modelled:
// biases on the projections or the MLP, attention on some layers only
// (attn_layer_indices), no MLP (mamba_use_mlp false): refused.
absl::Status ParseFalconH1(const Json& j, const Reader& r, ModelConfig& m) {
  for (const char* key : {"mamba_proj_bias", "projectors_bias", "mlp_bias",
                          "attention_bias"}) {
    ASSIGN_OR_RETURN(const bool bias, r.Bool(key, false));
    if (bias) {
      return Bad(absl::StrCat(key, " must be false (its biases are not "
                              "counted), got true"));
    }
  }
  ASSIGN_OR_RETURN(const bool mlp, r.Bool("mamba_use_mlp", true));
  if (!mlp) {
    return Bad("mamba_use_mlp must be true (layers without an MLP are not "
               "modelled), got false");
  }
  if (const auto it = j.find("attn_layer_indices");
      it != j.end() && !it->is_null()) {
    return Bad(absl::StrCat(
        "attn_layer_indices must be null (attention in every layer), got ",
        Describe(*it)));
  }
  // FalconH1Config's defaults.
  ASSIGN_OR_RETURN(
      MambaDims d,
      ReadMambaDims(r,
                    {"mamba_n_heads", "mamba_d_head", "mamba_d_state",
                     "mamba_n_groups", "mamba_d_conv", "mamba_chunk_size",
                     "mamba_conv_bias"},
                    MambaDims{.num_heads = 128,
                              .head_dim = 64,
                              .state_size = 256,
                              .n_groups = 1,
                              .conv_kernel = 4,
                              .chunk_size = 256}));
  ASSIGN_OR_RETURN(d.gated_norm, r.Bool("mamba_rms_norm", false));
  // The scan runs heads x head_dim channels; a d_ssm saying otherwise
  // would be a model the mixer cannot run.
  ASSIGN_OR_RETURN(std::optional<int64_t> d_ssm,
                   r.OptInt("mamba_d_ssm", 1, kMaxWidth));
  if (d_ssm.has_value() && *d_ssm != d.inner()) {
    return Bad(absl::StrCat("mamba_d_ssm must equal mamba_n_heads x "
                            "mamba_d_head (",
                            d.num_heads, " x ", d.head_dim, " = ", d.inner(),
                            "), got ", *d_ssm));
  }
  m.mamba = d;
  m.layers.assign(static_cast<size_t>(m.num_layers),
                  LayerSpec{.attention = AttentionKind::kFull,
                            .parallel_mamba = true});
  return absl::OkStatus();
}

// One of linear_attn_config's 1-based layer lists: every entry a layer
// number, none twice; marks its layers `kind` in `owner` (0: unclaimed).
static absl::Status ClaimLayers(const Json& cfg, const char* key, int kind,
                         std::vector<int>& owner) {
  const int64_t n = static_cast<int64_t>(owner.size());
  const auto it = cfg.find(key);
  if (it == cfg.end() || it->is_null() || !it->is_array()) {
    return Bad(absl::StrCat(
        "linear_attn_config.", key,
        " must be an array of 1-based layer numbers in [1, ", n, "], got ",
        it == cfg.end() ? std::string("nothing") : Describe(*it)));
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& v = (*it)[i];
    if (!v.is_number_integer() || v.get<int64_t>() < 1 ||
        v.get<int64_t>() > n) {
      return Bad(absl::StrCat("linear_attn_config.", key, "[", i,
                              "] must be a 1-based layer number in [1, ", n,
                              "], got ", Describe(v)));
    }
    int& o = owner[static_cast<size_t>(v.get<int64_t>() - 1)];
    if (o != 0) {
      return Bad(absl::StrCat(
          "linear_attn_config.", key, "[", i, "]: layer ", v.get<int64_t>(),
          " is listed twice (in kda_layers and full_attn_layers, or twice "
          "in one)"));
    }
    o = kind;
  }
  return absl::OkStatus();
}

// Kimi-Linear (vLLM model_executor/models/kimi_linear.py with
// transformers_utils/configs/kimi_linear.py KimiLinearConfig; Kimi Linear,
// arXiv:2510.26692). Layer i (1-based) is Kimi Delta Attention when listed
// in linear_attn_config.kda_layers (num_heads heads of head_dim for q, k
// and v, short_conv_kernel_size convs), MLA when in full_attn_layers
// (KimiMLAAttention: q_proj without q_lora, the DeepSeek latent KV; with
// mla_use_nope no rotary is applied, the qk_rope part is still cached, and
// the engine's small RoPE op stands for that copy). Every layer listed in
// exactly one. Layers from first_k_dense_replace on are KimiMoE
// (num_experts of moe_intermediate_size, top num_experts_per_token, a gate
// with e_score_correction_bias, num_shared_experts x moe_intermediate_size
// shared), earlier ones a gated MLP of intermediate_size. Context: the
// class has no position key; model_max_length is the published one.
absl::Status ParseKimiLinear(const Json& j, const Reader& r, ModelConfig& m) {
  ASSIGN_OR_RETURN(const MlaDims mla, ParseMlaDims(r, 0, true));
  m.mla = mla;
  m.head_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
  ASSIGN_OR_RETURN(m.max_context,
                   r.Int("model_max_length", m.max_context, 1, kMaxContext));

  ASSIGN_OR_RETURN(std::optional<int64_t> experts,
                   r.OptInt("num_experts", 1, kMaxExperts));
  std::optional<MoeDims> moe;
  if (experts.has_value()) {
    ASSIGN_OR_RETURN(moe, ParseRoutedMoe(r, *experts, ExpertsPerTokenKey(r),
                                         "num_shared_experts", m));
    moe->router_score_bias = true;  // KimiMoE's gate.e_score_correction_bias
  }
  m.moe = moe;

  const size_t n = static_cast<size_t>(m.num_layers);
  std::vector<int> owner(n, 0);  // 1: KDA, 2: MLA
  const auto cfg = j.find("linear_attn_config");
  if (cfg != j.end() && !cfg->is_null()) {
    if (!cfg->is_object()) {
      return Bad(absl::StrCat("linear_attn_config must be an object, got ",
                              Describe(*cfg)));
    }
    const Reader lr(*cfg, "linear_attn_config.");
    LinearAttentionDims la;
    la.kind = LinearAttentionKind::kKimiDelta;
    ASSIGN_OR_RETURN(la.num_key_heads,
                     lr.Int("num_heads", std::nullopt, 1, kMaxHeads));
    ASSIGN_OR_RETURN(la.key_head_dim,
                     lr.Int("head_dim", std::nullopt, 1, kMaxHeadDim));
    la.num_value_heads = la.num_key_heads;
    la.value_head_dim = la.key_head_dim;
    ASSIGN_OR_RETURN(la.conv_kernel,
                     lr.Int("short_conv_kernel_size", std::nullopt, 1, 64));
    m.linear_attention = la;
    RETURN_IF_ERROR(ClaimLayers(*cfg, "kda_layers", 1, owner));
    RETURN_IF_ERROR(ClaimLayers(*cfg, "full_attn_layers", 2, owner));
    for (size_t i = 0; i < n; ++i) {
      if (owner[i] == 0) {
        return Bad(absl::StrCat(
            "layer ", i + 1, " of num_hidden_layers (", n,
            ") is in neither linear_attn_config.kda_layers nor "
            "full_attn_layers (every layer must be in exactly one)"));
      }
    }
  }
  m.layers.assign(n, LayerSpec{});
  for (size_t i = 0; i < n; ++i) {
    m.layers[i].attention = owner[i] == 1 ? AttentionKind::kLinearAttention
                                          : AttentionKind::kFull;
    m.layers[i].ffn = moe.has_value() && static_cast<int64_t>(i) >=
                                             moe->first_dense_layers
                          ? FfnLayerKind::kMoe
                          : FfnLayerKind::kDense;
  }
  return absl::OkStatus();
}

}  // namespace ridgeline::engine::hf_internal
