// Readers shared by the config.json parsers (hf_config.cc: the dense and
// MoE transformer classes; hf_config_hybrid.cc: Qwen3-Next, Nemotron-H,
// DeepSeek-V3.2's indexer, GLM-4.5, MiniMax, Jamba, Mamba-2, Falcon-H1 and
// Kimi-Linear). Internal to the engine;
// every error is INVALID_ARGUMENT prefixed "config.json: " and names the key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "ridgeline/engine/model.h"
#include "ridgeline/engine/status_macros.h"

namespace ridgeline::engine::hf_internal {

using Json = nlohmann::json;

constexpr int64_t kMaxVocab = int64_t{1} << 24;
constexpr int64_t kMaxWidth = int64_t{1} << 20;
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxHeads = 4096;
constexpr int64_t kMaxHeadDim = 4096;
constexpr int64_t kMaxContext = int64_t{1} << 26;
constexpr int64_t kMaxExperts = 4096;

// Longest piece of a client's value quoted back in an error.
constexpr size_t kMaxQuoted = 64;

// At most `max` bytes of `s`, cut on a UTF-8 character boundary (a status
// message may travel in a proto string field, which must be valid UTF-8).
inline std::string Prefix(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return absl::StrCat(absl::string_view(s.data(), end), "... (", s.size(),
                      " bytes)");
}

// A value as quoted in errors: short JSON text, or its kind and size.
inline std::string Describe(const Json& v) {
  if ((v.is_array() || v.is_object()) && v.size() > 8) {
    return absl::StrCat("an ", v.type_name(), " of ", v.size(), " elements");
  }
  return Prefix(v.dump(-1, ' ', false, Json::error_handler_t::replace),
                kMaxQuoted);
}

inline absl::Status Bad(std::string_view msg) {
  return absl::InvalidArgumentError(
      absl::StrCat("config.json: ", absl::string_view(msg.data(), msg.size())));
}

// Typed, range-checked access to the top-level object (or to a nested one,
// whose keys errors name after `path`, e.g. "linear_attn_config."). A JSON
// null counts as absent (published configs write "sliding_window": null).
class Reader {
 public:
  explicit Reader(const Json& j, std::string path = "")
      : j_(j), path_(std::move(path)) {}

  bool Contains(const char* key) const { return j_.contains(key); }

  bool Has(const char* key) const {
    const auto it = j_.find(key);
    return it != j_.end() && !it->is_null();
  }

  absl::StatusOr<std::optional<int64_t>> OptInt(const char* key, int64_t lo,
                                                int64_t hi) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return std::optional<int64_t>();
    int64_t v = 0;
    if (it->is_number_unsigned()) {
      const uint64_t u = it->get<uint64_t>();
      if (u > static_cast<uint64_t>(hi)) return Range(key, lo, hi, Describe(*it));
      v = static_cast<int64_t>(u);
    } else if (it->is_number_integer()) {
      v = it->get<int64_t>();
    } else {
      return Bad(absl::StrCat(path_, key, " must be an integer, got ",
                              Describe(*it)));
    }
    if (v < lo || v > hi) return Range(key, lo, hi, absl::StrCat(v));
    return std::optional<int64_t>(v);
  }

  // `def` nullopt: the field is required.
  absl::StatusOr<int64_t> Int(const char* key, std::optional<int64_t> def,
                              int64_t lo, int64_t hi) const {
    ASSIGN_OR_RETURN(std::optional<int64_t> v, OptInt(key, lo, hi));
    if (v.has_value()) return *v;
    if (def.has_value()) return *def;
    return Bad(absl::StrCat("missing required field ", path_, key,
                            " (integer in [", lo, ", ", hi, "])"));
  }

  absl::StatusOr<bool> Bool(const char* key, bool def) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return def;
    if (!it->is_boolean()) {
      return Bad(absl::StrCat(path_, key, " must be true or false, got ",
                              Describe(*it)));
    }
    return it->get<bool>();
  }

  absl::StatusOr<std::string> String(const char* key, std::string def) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return def;
    if (!it->is_string()) {
      return Bad(absl::StrCat(path_, key, " must be a string, got ",
                              Describe(*it)));
    }
    return it->get<std::string>();
  }

 private:
  absl::Status Range(const char* key, int64_t lo, int64_t hi,
                     const std::string& got) const {
    return Bad(absl::StrCat(path_, key, " must be in [", lo, ", ", hi,
                            "], got ", got));
  }

  const Json& j_;
  std::string path_;
};

// Multi-token-prediction layers the checkpoint carries and the HF class drops
// on load (DeepSeek / GLM num_nextn_predict_layers, Qwen3.5
// mtp_num_hidden_layers).
absl::Status ParseMtp(const Reader& r, ModelConfig& m);

// The top-k key: published configs spell it num_experts_per_tok or
// num_experts_per_token.
inline const char* ExpertsPerTokenKey(const Reader& r) {
  return r.Has("num_experts_per_tok") ? "num_experts_per_tok"
                                      : "num_experts_per_token";
}

// Rotated width of each head: `key` (partial_rotary_factor, in (0, 1],
// default `def`) x head_dim, rounded (GLM-4.5: 0.5 x 128 = 64).
absl::StatusOr<int64_t> RotaryDim(const Json& j, const char* key, double def,
                                  int64_t head_dim);

// Qwen2-MoE / Qwen3-MoE / Qwen3-Next: every layer sparse
// (decoder_sparse_step 1, no mlp_only_layers), else INVALID_ARGUMENT.
absl::Status CheckAllLayersSparse(const Json& j, const Reader& r);

// Qwen3-Next: Gated DeltaNet and gated attention by layer_types (else every
// full_attention_interval-th layer), every layer MoE.
absl::Status ParseQwen3Next(const Json& j, const Reader& r, ModelConfig& m);
// Nemotron-H: hybrid_override_pattern of Mamba-2, attention, MLP and MoE.
absl::Status ParseNemotronH(const Json& j, const Reader& r, ModelConfig& m);
// DeepSeek-V3.2's lightning indexer (on a DeepSeek-V3 shape).
absl::Status ParseDsa(const Reader& r, ModelConfig& m);

// GLM-4.5 (Glm4MoeForCausalLM): GQA with q/k/v biases, optional q/k norms,
// partial RoPE; DeepSeek-V3-style MoE after first_k_dense_replace dense
// layers; the MTP layer recorded only.
absl::Status ParseGlm4Moe(const Json& j, const Reader& r, ModelConfig& m);
// MiniMax-M1 / MiniMax-Text-01: attn_type_list picks lightning (0) or
// softmax (1) attention per layer; every layer's FFN is the MoE.
absl::Status ParseMiniMax(const Json& j, const Reader& r, ModelConfig& m);

// Jamba: Mamba-1 layers with attention every attn_layer_period-th layer
// (from attn_layer_offset) and MoE every expert_layer_period-th.
absl::Status ParseJamba(const Json& j, const Reader& r, ModelConfig& m);

// The keys one class spells a Mamba-2 mixer's dims with (Nemotron-H
// mamba_num_heads, Mamba-2 num_heads, Falcon-H1 mamba_n_heads, ...).
struct MambaKeys {
  const char* heads;
  const char* head_dim;
  const char* state_size;
  const char* n_groups;
  const char* conv_kernel;
  const char* chunk_size;
  const char* conv_bias;
};
// The mixer's dims under `keys`, absent ones from `defaults` (the class's);
// n_groups must divide the heads (the error names both keys).
absl::StatusOr<MambaDims> ReadMambaDims(const Reader& r, const MambaKeys& keys,
                                        const MambaDims& defaults);

// Mamba2ForCausalLM: a whole model of Mamba-2 blocks (no attention, no
// FFN), so none of the fields the other classes share but vocab, hidden,
// layers and tied embeddings; hf_config_hybrid.cc.
absl::StatusOr<ModelConfig> ParseMamba2(const Reader& r, ModelConfig m);

// FalconH1ForCausalLM: every layer attention and Mamba-2 side by side.
absl::Status ParseFalconH1(const Json& j, const Reader& r, ModelConfig& m);

// KimiLinearForCausalLM: linear_attn_config's 1-based kda_layers (Kimi
// Delta Attention) and full_attn_layers (MLA); MoE after
// first_k_dense_replace dense layers.
absl::Status ParseKimiLinear(const Json& j, const Reader& r, ModelConfig& m);

// DeepSeek-style routed MoE (DeepSeek-V2/V3, Kimi-Linear): `experts`
// routed experts, top-k (`top_k_key`, required), moe_intermediate_size
// (required), `shared_key` shared experts of that
// width, first_k_dense_replace dense layers, moe_layer_freq 1 (others
// refused). The router bias is the caller's.
absl::StatusOr<MoeDims> ParseRoutedMoe(const Reader& r, int64_t experts,
                                       const char* top_k_key,
                                       const char* shared_key,
                                       const ModelConfig& m);

// MLA dims (DeepSeek-V2/V3, Kimi-Linear): q_lora_rank (null: a direct
// q_proj; absent: `q_lora_rank_when_absent`), kv_lora_rank,
// qk_nope_head_dim, qk_rope_head_dim, v_head_dim (required when
// `dims_required`, else DeepseekV2Config's defaults).
absl::StatusOr<MlaDims> ParseMlaDims(const Reader& r,
                                     int64_t q_lora_rank_when_absent,
                                     bool dims_required);

}  // namespace ridgeline::engine::hf_internal
