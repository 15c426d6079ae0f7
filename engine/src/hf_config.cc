// Hugging Face config.json -> ModelConfig for the supported architecture
// classes. Absent optional fields take the defaults of the matching
// transformers configuration class (LlamaConfig, MistralConfig, ...); the
// core dimensions (vocab_size, hidden_size, intermediate_size,
// num_hidden_layers, num_attention_heads) are required, because a config
// without them is not a published model and silently defaulting to a 7B
// shape would hide the mistake. (GPT-J names them n_embd, n_layer, n_head;
// Nemotron NAS takes its FFN widths from block_configs; Llama 4's
// multimodal config holds them in text_config.)
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hf_config_reader.h"
#include "nlohmann/json.hpp"
#include "ridgeline/engine/model.h"
#include "ridgeline/engine/status_macros.h"

namespace ridgeline::engine {

namespace hf_internal {

absl::Status ParseMtp(const Reader& r, ModelConfig& m) {
  const char* key = r.Has("num_nextn_predict_layers")
                        ? "num_nextn_predict_layers"
                        : "mtp_num_hidden_layers";
  ASSIGN_OR_RETURN(m.mtp_layers, r.Int(key, 0, 0, kMaxLayers));
  return absl::OkStatus();
}

absl::StatusOr<MlaDims> ParseMlaDims(const Reader& r,
                                     int64_t q_lora_rank_when_absent,
                                     bool dims_required) {
  MlaDims mla;
  ASSIGN_OR_RETURN(std::optional<int64_t> q_lora,
                   r.OptInt("q_lora_rank", 1, kMaxWidth));
  // A null q_lora_rank (V2-Lite, Kimi-Linear) means a direct q_proj.
  mla.q_lora_rank =
      r.Contains("q_lora_rank") ? q_lora.value_or(0) : q_lora_rank_when_absent;
  auto dim = [&](const char* key, int64_t deepseek_default, int64_t lo,
                 int64_t hi) {
    return r.Int(key,
                 dims_required ? std::nullopt
                               : std::optional<int64_t>(deepseek_default),
                 lo, hi);
  };
  ASSIGN_OR_RETURN(mla.kv_lora_rank, dim("kv_lora_rank", 512, 1, kMaxWidth));
  ASSIGN_OR_RETURN(mla.qk_nope_head_dim,
                   dim("qk_nope_head_dim", 128, 0, kMaxHeadDim));
  ASSIGN_OR_RETURN(mla.qk_rope_head_dim,
                   dim("qk_rope_head_dim", 64, 1, kMaxHeadDim));
  ASSIGN_OR_RETURN(mla.v_head_dim, dim("v_head_dim", 128, 1, kMaxHeadDim));
  return mla;
}

absl::StatusOr<MoeDims> ParseRoutedMoe(const Reader& r, int64_t experts,
                                       const char* top_k_key,
                                       const char* shared_key,
                                       const ModelConfig& m) {
  MoeDims moe;
  moe.num_routed_experts = experts;
  ASSIGN_OR_RETURN(moe.experts_per_token,
                   r.Int(top_k_key, std::nullopt, 1, experts));
  ASSIGN_OR_RETURN(moe.num_shared_experts,
                   r.Int(shared_key, 0, 0, kMaxExperts));
  ASSIGN_OR_RETURN(moe.expert_intermediate_size,
                   r.Int("moe_intermediate_size", std::nullopt, 1, kMaxWidth));
  // The shared experts are one MLP of n_shared x moe width; counted here as
  // n_shared experts of moe width (same parameters and FLOPs).
  moe.shared_expert_intermediate_size = moe.expert_intermediate_size;
  ASSIGN_OR_RETURN(moe.first_dense_layers,
                   r.Int("first_k_dense_replace", 0, 0, m.num_layers - 1));
  ASSIGN_OR_RETURN(int64_t freq, r.Int("moe_layer_freq", 1, 1, kMaxLayers));
  if (freq != 1) {
    return Bad(absl::StrCat(
        "moe_layer_freq must be 1 (every layer from first_k_dense_replace on "
        "is MoE; other patterns are not supported), got ",
        freq));
  }
  return moe;
}

// Qwen2-MoE / Qwen3-MoE / Qwen3-Next: only "every layer sparse" is supported.
absl::Status CheckAllLayersSparse(const Json& j, const Reader& r) {
  ASSIGN_OR_RETURN(int64_t step,
                   r.Int("decoder_sparse_step", 1, 1, kMaxLayers));
  if (step != 1) {
    return Bad(absl::StrCat(
        "decoder_sparse_step must be 1 (every layer MoE; other patterns are "
        "not supported), got ",
        step));
  }
  const auto it = j.find("mlp_only_layers");
  if (it != j.end() && !it->is_null()) {
    if (!it->is_array()) {
      return Bad(
          absl::StrCat("mlp_only_layers must be an array, got ", Describe(*it)));
    }
    if (!it->empty()) {
      return Bad(absl::StrCat(
          "mlp_only_layers must be empty (dense layers between MoE layers are "
          "not supported), got ",
          Describe(*it)));
    }
  }
  return absl::OkStatus();
}

}  // namespace hf_internal

namespace {

using hf_internal::Bad;
using hf_internal::CheckAllLayersSparse;
using hf_internal::Describe;
using hf_internal::ExpertsPerTokenKey;
using hf_internal::Json;
using hf_internal::kMaxContext;
using hf_internal::kMaxExperts;
using hf_internal::kMaxHeadDim;
using hf_internal::kMaxHeads;
using hf_internal::kMaxLayers;
using hf_internal::kMaxQuoted;
using hf_internal::kMaxVocab;
using hf_internal::kMaxWidth;
using hf_internal::ParseMtp;
using hf_internal::Prefix;
using hf_internal::Reader;

enum class Arch {
  kLlama,
  kMistral,
  kMixtral,
  kQwen2,
  kQwen2Moe,
  kQwen3,
  kQwen3Moe,
  kDeepseekV2,
  kDeepseekV3,
  kGemma,
  kGemma2,
  kPhi3,
  kNemotronNas,  // DeciLM: per-layer block_configs
  kLlama4,       // text config (nested under text_config when multimodal)
  kGptOss,
  kGptJ,
  kQwen3Next,    // Gated DeltaNet 3 : 1 gated attention, MoE
  kNemotronH,    // hybrid_override_pattern of Mamba-2 / attention / MLP / MoE
  kDeepseekV32,  // DeepSeek-V3 + DSA's lightning indexer
  kGlm4Moe,      // GLM-4.5 (hf_config_hybrid.cc)
  kMiniMax,      // MiniMax-M1 / Text-01: lightning + softmax attention, MoE
  kJamba,        // Mamba-1 + attention, MoE every other layer
  kMamba2,       // Mamba-2 blocks only (hf_config_hybrid.cc)
  kFalconH1,     // attention and Mamba-2 side by side in every layer
  kKimiLinear,   // Kimi Delta Attention 3 : 1 MLA, MoE
};

struct ArchName {
  const char* architecture;
  const char* model_type;
  Arch arch;
};

constexpr ArchName kArchs[] = {
    {"LlamaForCausalLM", "llama", Arch::kLlama},
    {"MistralForCausalLM", "mistral", Arch::kMistral},
    {"MixtralForCausalLM", "mixtral", Arch::kMixtral},
    {"Qwen2ForCausalLM", "qwen2", Arch::kQwen2},
    {"Qwen2MoeForCausalLM", "qwen2_moe", Arch::kQwen2Moe},
    {"Qwen3ForCausalLM", "qwen3", Arch::kQwen3},
    {"Qwen3MoeForCausalLM", "qwen3_moe", Arch::kQwen3Moe},
    {"DeepseekV2ForCausalLM", "deepseek_v2", Arch::kDeepseekV2},
    {"DeepseekV3ForCausalLM", "deepseek_v3", Arch::kDeepseekV3},
    {"GemmaForCausalLM", "gemma", Arch::kGemma},
    {"Gemma2ForCausalLM", "gemma2", Arch::kGemma2},
    {"Phi3ForCausalLM", "phi3", Arch::kPhi3},
    // Kimi-K2 ships DeepseekV3ForCausalLM with model_type kimi_k2.
    {"DeepseekV3ForCausalLM", "kimi_k2", Arch::kDeepseekV3},
    {"DeciLMForCausalLM", "nemotron-nas", Arch::kNemotronNas},
    {"Llama4ForConditionalGeneration", "llama4", Arch::kLlama4},
    {"Llama4ForCausalLM", "llama4_text", Arch::kLlama4},
    {"GptOssForCausalLM", "gpt_oss", Arch::kGptOss},
    {"GPTJForCausalLM", "gptj", Arch::kGptJ},
    {"Qwen3NextForCausalLM", "qwen3_next", Arch::kQwen3Next},
    {"NemotronHForCausalLM", "nemotron_h", Arch::kNemotronH},
    {"DeepseekV32ForCausalLM", "deepseek_v32", Arch::kDeepseekV32},
    {"Glm4MoeForCausalLM", "glm4_moe", Arch::kGlm4Moe},
    {"MiniMaxM1ForCausalLM", "minimax_m1", Arch::kMiniMax},
    // The same remote-code class under its MiniMax-Text-01 name (vLLM maps
    // MiniMaxM1ForCausalLM to its MiniMaxText01ForCausalLM).
    {"MiniMaxText01ForCausalLM", "minimax_text_01", Arch::kMiniMax},
    {"JambaForCausalLM", "jamba", Arch::kJamba},
    {"Mamba2ForCausalLM", "mamba2", Arch::kMamba2},
    {"FalconH1ForCausalLM", "falcon_h1", Arch::kFalconH1},
    {"KimiLinearForCausalLM", "kimi_linear", Arch::kKimiLinear},
};

// Every class with its model_type; or, for an unknown model_type, the
// model_types alone (an error that quotes a client's value stays well under
// gRPC's 8 KiB metadata limit as the list grows).
std::string SupportedList(bool model_types_only = false) {
  std::string out;
  for (const ArchName& a : kArchs) {
    if (model_types_only) {
      absl::StrAppend(&out, out.empty() ? "" : ", ", a.model_type);
    } else {
      absl::StrAppend(&out, out.empty() ? "" : ", ", a.architecture, " (",
                      a.model_type, ")");
    }
  }
  return out;
}

// Real configs nest 3-4 levels (rope_scaling, quantization_config); the
// limit keeps every recursive walk of a parsed value (dump, destruction)
// far from the stack's end.
constexpr int kMaxNesting = 64;

// Rejects nesting deeper than kMaxNesting before the JSON library sees the
// text; brackets inside strings do not count.
absl::Status CheckNesting(std::string_view json);

// Python's json.dump writes float('inf') as the bare token Infinity (and
// -Infinity, NaN), which JSON does not allow; published configs carry it
// (Nemotron-H's time_step_limit: [0.0, Infinity]). Outside strings those
// tokens become null, which every reader here treats as absent. Returns
// false (and leaves `out` alone) when there is none.
bool ReplaceNonFinite(std::string_view json, std::string* out) {
  static constexpr std::string_view kTokens[] = {"-Infinity", "Infinity",
                                                 "NaN"};
  bool in_string = false, escaped = false, found = false;
  std::string result;
  size_t copied = 0;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    for (std::string_view t : kTokens) {
      if (json.substr(i, t.size()) == t) {
        result.append(json.data() + copied, i - copied);
        result.append("null");
        i += t.size() - 1;
        copied = i + 1;
        found = true;
        break;
      }
    }
  }
  if (!found) return false;
  result.append(json.data() + copied, json.size() - copied);
  *out = std::move(result);
  return true;
}

absl::StatusOr<Arch> DetectArch(const Json& j, std::string* architecture) {
  const auto archs = j.find("architectures");
  if (archs != j.end() && !archs->is_null()) {
    if (!archs->is_array() || archs->empty() || !(*archs)[0].is_string()) {
      return Bad(absl::StrCat(
          "architectures must be a non-empty array of strings, got ",
          Describe(*archs)));
    }
    const std::string name = (*archs)[0].get<std::string>();
    for (const ArchName& a : kArchs) {
      if (name == a.architecture) {
        *architecture = a.architecture;
        return a.arch;
      }
    }
    return Bad(
        absl::StrCat("architectures[0] \"", Prefix(name, kMaxQuoted),
                     "\" is not supported; supported: ", SupportedList()));
  }
  const auto type = j.find("model_type");
  if (type == j.end() || type->is_null()) {
    return Bad(absl::StrCat(
        "missing architectures and model_type (one is required); supported: ",
        SupportedList()));
  }
  if (!type->is_string()) {
    return Bad(absl::StrCat("model_type must be a string, got ", Describe(*type)));
  }
  const std::string name = type->get<std::string>();
  for (const ArchName& a : kArchs) {
    if (name == a.model_type) {
      *architecture = a.architecture;
      return a.arch;
    }
  }
  return Bad(absl::StrCat("model_type \"", Prefix(name, kMaxQuoted),
                          "\" is not supported; supported model_type values: ",
                          SupportedList(/*model_types_only=*/true)));
}

struct ClassDefaults {
  std::optional<int64_t> num_kv_heads;  // nullopt: == num_attention_heads
  std::optional<int64_t> head_dim;      // nullopt: hidden / heads
  int64_t max_position_embeddings;
  bool tie_word_embeddings;
};

// Defaults of the transformers configuration classes.
ClassDefaults DefaultsFor(Arch arch) {
  switch (arch) {
    case Arch::kLlama:  // LlamaConfig
      return {std::nullopt, std::nullopt, 2048, false};
    case Arch::kMistral:  // MistralConfig
      return {8, std::nullopt, 4096 * 32, false};
    case Arch::kMixtral:  // MixtralConfig
      return {8, std::nullopt, 4096 * 32, false};
    case Arch::kQwen2:  // Qwen2Config
      return {32, std::nullopt, 32768, false};
    case Arch::kQwen2Moe:  // Qwen2MoeConfig
      return {16, std::nullopt, 32768, false};
    case Arch::kQwen3:  // Qwen3Config
      return {32, 128, 32768, false};
    case Arch::kQwen3Moe:  // Qwen3MoeConfig
      return {4, std::nullopt, 32768, false};
    case Arch::kDeepseekV2:  // DeepseekV2Config
    case Arch::kDeepseekV3:  // DeepseekV3Config
      return {std::nullopt, std::nullopt, 2048, false};
    case Arch::kGemma:  // GemmaConfig
      return {16, 256, 8192, true};
    case Arch::kGemma2:  // Gemma2Config
      return {16, 256, 8192, true};
    case Arch::kPhi3:  // Phi3Config
      return {std::nullopt, std::nullopt, 4096, false};
    case Arch::kNemotronNas:  // DeciLMConfig (LlamaConfig defaults)
      return {std::nullopt, std::nullopt, 2048, false};
    case Arch::kLlama4:  // Llama4TextConfig
      return {8, 128, 4096 * 32, false};
    case Arch::kGptOss:  // GptOssConfig
      return {8, 64, 131072, false};
    case Arch::kGptJ:  // GPTJConfig
      return {std::nullopt, std::nullopt, 2048, false};
    case Arch::kQwen3Next:  // Qwen3NextConfig
      return {2, 256, 32768, false};
    case Arch::kNemotronH:  // NemotronHConfig
      return {8, 128, 4096, false};
    case Arch::kDeepseekV32:  // DeepseekV32Config (DeepseekV3Config's)
      return {std::nullopt, std::nullopt, 2048, false};
    case Arch::kGlm4Moe:  // Glm4MoeConfig
      return {8, std::nullopt, 131072, false};
    case Arch::kMiniMax:  // MiniMaxM1Config (configuration_minimax_m1.py)
      return {8, std::nullopt, 4096 * 32, false};
    case Arch::kJamba:  // JambaConfig
      return {8, std::nullopt, 262144, false};
    case Arch::kMamba2:  // Mamba2Config: parsed apart (ParseMamba2)
      return {std::nullopt, std::nullopt, kMaxContext, false};
    case Arch::kFalconH1:  // FalconH1Config
      return {8, std::nullopt, 8192, false};
    case Arch::kKimiLinear:  // KimiLinearConfig: no position key (below)
      return {std::nullopt, std::nullopt, kMaxContext, false};
  }
  return {std::nullopt, std::nullopt, 2048, false};
}

absl::Status ParseDeepseek(const Reader& r, Arch arch, ModelConfig& m) {
  // An absent q_lora_rank takes DeepseekV2Config's default 1536; absent
  // dims take the class defaults.
  ASSIGN_OR_RETURN(const MlaDims mla, hf_internal::ParseMlaDims(r, 1536, false));
  m.mla = mla;
  m.head_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim;

  // n_routed_experts null: every layer dense.
  ASSIGN_OR_RETURN(std::optional<int64_t> routed,
                   r.OptInt("n_routed_experts", 1, kMaxExperts));
  if (!routed.has_value()) return absl::OkStatus();
  ASSIGN_OR_RETURN(MoeDims moe,
                   hf_internal::ParseRoutedMoe(r, *routed, "num_experts_per_tok",
                                               "n_shared_experts", m));
  // noaux_tc routing adds e_score_correction_bias to the gate.
  ASSIGN_OR_RETURN(std::string topk_method,
                   r.String("topk_method",
                            arch == Arch::kDeepseekV2 ? "greedy" : "noaux_tc"));
  moe.router_score_bias = topk_method == "noaux_tc";
  m.moe = moe;
  return absl::OkStatus();
}

// A boolean member of a block_configs sub-object; absent or null: false.
absl::StatusOr<bool> SubBool(const Json& obj, const char* key,
                             const std::string& at) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return false;
  if (!it->is_boolean()) {
    return Bad(absl::StrCat(at, ".", key, " must be true or false, got ",
                            Describe(*it)));
  }
  return it->get<bool>();
}

// DeciLM's _ffn_mult_to_intermediate_size: int(2 * mult * hidden / 3)
// rounded up to a multiple of 256.
int64_t FfnMultToIntermediate(double mult, int64_t hidden) {
  const int64_t n = static_cast<int64_t>(
      std::trunc(2 * mult * static_cast<double>(hidden) / 3));
  return (n + 255) / 256 * 256;
}

// Nemotron NAS (DeciLM): one block_configs entry per layer, each with an
// attention (n_heads_in_group, no_op, replace_with_linear) and an ffn
// (ffn_mult, no_op, replace_with_linear) sub-block.
absl::Status ParseBlockConfigs(const Json& j, ModelConfig& m) {
  const auto it = j.find("block_configs");
  if (it == j.end() || !it->is_array() ||
      static_cast<int64_t>(it->size()) != m.num_layers) {
    return Bad(absl::StrCat(
        "block_configs must be an array of num_hidden_layers (", m.num_layers,
        ") objects, got ",
        it == j.end() ? std::string("nothing") : Describe(*it)));
  }
  m.layers.assign(static_cast<size_t>(m.num_layers), LayerSpec{});
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& b = (*it)[i];
    const std::string at = absl::StrCat("block_configs[", i, "]");
    if (!b.is_object() || !b.contains("attention") || !b.contains("ffn") ||
        !b["attention"].is_object() || !b["ffn"].is_object()) {
      return Bad(absl::StrCat(at, " must hold attention and ffn objects, got ",
                              Describe(b)));
    }
    const Json& a = b["attention"];
    const Json& f = b["ffn"];
    LayerSpec& l = m.layers[i];
    ASSIGN_OR_RETURN(bool a_noop, SubBool(a, "no_op", at + ".attention"));
    ASSIGN_OR_RETURN(bool a_linear,
                     SubBool(a, "replace_with_linear", at + ".attention"));
    if (a_noop) {
      l.attention = AttentionKind::kNone;
    } else if (a_linear) {
      l.attention = AttentionKind::kLinear;
    } else {
      const auto g = a.find("n_heads_in_group");
      if (g == a.end() || !g->is_number_integer() || g->get<int64_t>() < 1 ||
          m.num_attention_heads % g->get<int64_t>() != 0) {
        return Bad(absl::StrCat(
            at, ".attention.n_heads_in_group must be an integer dividing "
                "num_attention_heads (",
            m.num_attention_heads, "), got ",
            g == a.end() ? std::string("nothing") : Describe(*g)));
      }
      l.num_kv_heads = m.num_attention_heads / g->get<int64_t>();
    }
    ASSIGN_OR_RETURN(bool f_noop, SubBool(f, "no_op", at + ".ffn"));
    ASSIGN_OR_RETURN(bool f_linear,
                     SubBool(f, "replace_with_linear", at + ".ffn"));
    if (f_noop) {
      l.ffn = FfnLayerKind::kNone;
    } else if (f_linear) {
      l.ffn = FfnLayerKind::kLinear;
    } else {
      const auto mult = f.find("ffn_mult");
      if (mult == f.end() || !mult->is_number() ||
          !(mult->get<double>() > 0 && mult->get<double>() <= 64)) {
        return Bad(absl::StrCat(at, ".ffn.ffn_mult must be a number in (0, 64], got ",
                                mult == f.end() ? std::string("nothing")
                                                : Describe(*mult)));
      }
      l.intermediate_size =
          FfnMultToIntermediate(mult->get<double>(), m.hidden_size);
    }
  }
  // The model-level num_kv_heads: the first attention layer's (reported
  // in the summary; each layer uses its own).
  for (const LayerSpec& l : m.layers) {
    if (l.num_kv_heads > 0) {
      m.num_kv_heads = l.num_kv_heads;
      break;
    }
  }
  return absl::OkStatus();
}

// An array of `n` 0/1 integers (Llama 4's no_rope_layers) or nullopt when
// absent, null or empty.
absl::StatusOr<std::optional<std::vector<int64_t>>> IntList(
    const Json& j, const char* key, size_t n) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null() || (it->is_array() && it->empty())) {
    return std::optional<std::vector<int64_t>>();
  }
  if (!it->is_array()) {
    return Bad(absl::StrCat(key, " must be an array of integers, got ",
                            Describe(*it)));
  }
  std::vector<int64_t> out;
  for (const Json& v : *it) {
    if (!v.is_number_integer()) {
      return Bad(absl::StrCat(key, " must be an array of integers, got ",
                              Describe(*it)));
    }
    out.push_back(v.get<int64_t>());
  }
  if (n > 0 && out.size() != n) {
    return Bad(absl::StrCat(key, " must hold num_hidden_layers (", n,
                            ") entries, got ", out.size()));
  }
  return std::optional<std::vector<int64_t>>(std::move(out));
}

// Llama 4 text model: MoE layers (moe_layers, else every
// interleave_moe_layer_step-th) with one shared expert of the routed width;
// dense layers of intermediate_size_mlp; RoPE layers attend within chunks of
// attention_chunk_size (LayerSpec::chunked: a query sees its own chunk's
// keys only), NoPE layers (no_rope_layers[i] == 0, by default every 4th)
// attend globally. use_qk_norm is a weightless L2 norm.
absl::Status ParseLlama4(const Json& j, const Reader& r, ModelConfig& m) {
  MoeDims moe;
  ASSIGN_OR_RETURN(moe.num_routed_experts,
                   r.Int("num_local_experts", 16, 1, kMaxExperts));
  ASSIGN_OR_RETURN(moe.experts_per_token, r.Int("num_experts_per_tok", 1, 1,
                                                moe.num_routed_experts));
  moe.expert_intermediate_size = m.intermediate_size;
  moe.num_shared_experts = 1;
  moe.shared_expert_intermediate_size = m.intermediate_size;
  m.moe = moe;
  ASSIGN_OR_RETURN(m.intermediate_size,
                   r.Int("intermediate_size_mlp", 16384, 1, kMaxWidth));
  ASSIGN_OR_RETURN(int64_t step,
                   r.Int("interleave_moe_layer_step", 1, 1, m.num_layers));
  const size_t n = static_cast<size_t>(m.num_layers);
  std::vector<bool> is_moe(n, false);
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> listed,
                   IntList(j, "moe_layers", 0));
  if (listed.has_value()) {
    for (int64_t i : *listed) {
      if (i < 0 || i >= m.num_layers) {
        return Bad(absl::StrCat("moe_layers entries must be in [0, ",
                                m.num_layers - 1, "], got ", i));
      }
      is_moe[static_cast<size_t>(i)] = true;
    }
  } else {
    for (int64_t i = step - 1; i < m.num_layers; i += step) {
      is_moe[static_cast<size_t>(i)] = true;
    }
  }
  ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> rope,
                   IntList(j, "no_rope_layers", n));
  ASSIGN_OR_RETURN(int64_t interval,
                   r.Int("no_rope_layer_interval", 4, 1, kMaxLayers));
  ASSIGN_OR_RETURN(std::optional<int64_t> chunk,
                   r.OptInt("attention_chunk_size", 1, kMaxContext));
  m.attention_chunk_size = chunk.value_or(0);
  m.layers.assign(n, LayerSpec{});
  for (size_t i = 0; i < n; ++i) {
    const bool uses_rope = rope.has_value()
                               ? (*rope)[i] != 0
                               : (static_cast<int64_t>(i) + 1) % interval != 0;
    m.layers[i].chunked = chunk.has_value() && uses_rope;
    m.layers[i].ffn = is_moe[i] ? FfnLayerKind::kMoe : FfnLayerKind::kDense;
  }
  return absl::OkStatus();
}

// gpt-oss: every layer MoE (num_local_experts of intermediate_size, top
// num_experts_per_tok); layer_types alternate sliding_attention (window
// sliding_window) and full_attention, sliding first by default.
absl::Status ParseGptOss(const Json& j, const Reader& r, ModelConfig& m) {
  MoeDims moe;
  ASSIGN_OR_RETURN(moe.num_routed_experts,
                   r.Int("num_local_experts", 128, 1, kMaxExperts));
  const char* topk_key =
      r.Has("num_experts_per_tok") ? "num_experts_per_tok" : "experts_per_token";
  ASSIGN_OR_RETURN(moe.experts_per_token,
                   r.Int(topk_key, 4, 1, moe.num_routed_experts));
  moe.expert_intermediate_size = m.intermediate_size;
  m.moe = moe;
  ASSIGN_OR_RETURN(m.sliding_window,
                   r.Int("sliding_window", 128, 1, kMaxContext));
  const size_t n = static_cast<size_t>(m.num_layers);
  m.layers.assign(n, LayerSpec{});
  const auto types = j.find("layer_types");
  const bool listed = types != j.end() && !types->is_null();
  if (listed && (!types->is_array() || types->size() != n)) {
    return Bad(absl::StrCat("layer_types must be an array of num_hidden_layers (",
                            n, ") strings, got ", Describe(*types)));
  }
  for (size_t i = 0; i < n; ++i) {
    bool sliding = i % 2 == 0;
    if (listed) {
      const Json& t = (*types)[i];
      if (t == "sliding_attention") {
        sliding = true;
      } else if (t == "full_attention") {
        sliding = false;
      } else {
        return Bad(absl::StrCat("layer_types[", i,
                                "] must be \"sliding_attention\" or "
                                "\"full_attention\", got ",
                                Describe(t)));
      }
    }
    m.layers[i].sliding = sliding;
    m.layers[i].ffn = FfnLayerKind::kMoe;
  }
  return absl::OkStatus();
}

absl::StatusOr<ModelConfig> ParseText(const Json& j, std::string_view id,
                                      Arch arch,
                                      const std::string& architecture);

absl::StatusOr<ModelConfig> Parse(const Json& j, std::string_view id) {
  if (!j.is_object()) {
    return Bad(
        absl::StrCat("top level must be a JSON object, got ", j.type_name()));
  }
  ModelConfig m;
  m.id = std::string(id);
  m.display_name = std::string(id);
  ASSIGN_OR_RETURN(const Arch arch, DetectArch(j, &m.architecture));
  // Llama 4's multimodal config nests the language model in text_config.
  if (arch == Arch::kLlama4 && j.contains("text_config")) {
    const Json& text = j["text_config"];
    if (!text.is_object()) {
      return Bad(absl::StrCat("text_config must be an object, got ",
                              Describe(text)));
    }
    ModelConfig inner;
    ASSIGN_OR_RETURN(inner, ParseText(text, id, arch, m.architecture));
    if (j.contains("_name_or_path") && j["_name_or_path"].is_string()) {
      inner.source = j["_name_or_path"].get<std::string>();
    }
    if (Reader(j).Has("tie_word_embeddings")) {
      ASSIGN_OR_RETURN(inner.tie_word_embeddings,
                       Reader(j).Bool("tie_word_embeddings", false));
    }
    return inner;
  }
  if (arch == Arch::kMamba2) {
    if (j.contains("_name_or_path") && j["_name_or_path"].is_string()) {
      m.source = j["_name_or_path"].get<std::string>();
    }
    return hf_internal::ParseMamba2(Reader(j), std::move(m));
  }
  return ParseText(j, id, arch, m.architecture);
}

absl::StatusOr<ModelConfig> ParseText(const Json& j, std::string_view id,
                                      Arch arch,
                                      const std::string& architecture) {
  ModelConfig m;
  m.id = std::string(id);
  m.display_name = std::string(id);
  m.architecture = architecture;
  const Reader r(j);
  const ClassDefaults d = DefaultsFor(arch);
  if (j.contains("_name_or_path") && j["_name_or_path"].is_string()) {
    m.source = j["_name_or_path"].get<std::string>();
  }

  // GPT-J names its core fields the GPT-2 way.
  const bool gptj = arch == Arch::kGptJ;
  ASSIGN_OR_RETURN(m.vocab_size,
                   r.Int("vocab_size", std::nullopt, 1, kMaxVocab));
  ASSIGN_OR_RETURN(m.hidden_size, r.Int(gptj ? "n_embd" : "hidden_size",
                                        std::nullopt, 1, kMaxWidth));
  if (arch == Arch::kNemotronNas) {
    // Per-layer widths come from block_configs (intermediate_size is null).
    m.intermediate_size = 0;
  } else if (gptj) {
    // n_inner null: 4 x n_embd.
    ASSIGN_OR_RETURN(m.intermediate_size,
                     r.Int("n_inner", 4 * m.hidden_size, 1, kMaxWidth));
  } else {
    ASSIGN_OR_RETURN(m.intermediate_size,
                     r.Int("intermediate_size", std::nullopt, 1, kMaxWidth));
  }
  ASSIGN_OR_RETURN(m.num_layers, r.Int(gptj ? "n_layer" : "num_hidden_layers",
                                       std::nullopt, 1, kMaxLayers));
  ASSIGN_OR_RETURN(m.num_attention_heads,
                   r.Int(gptj ? "n_head" : "num_attention_heads", std::nullopt,
                         1, kMaxHeads));
  ASSIGN_OR_RETURN(
      m.num_kv_heads,
      r.Int("num_key_value_heads",
            d.num_kv_heads.value_or(m.num_attention_heads), 1, kMaxHeads));
  if (m.num_kv_heads > m.num_attention_heads ||
      m.num_attention_heads % m.num_kv_heads != 0) {
    return Bad(
        absl::StrCat("num_key_value_heads must divide num_attention_heads (",
                     m.num_attention_heads, "), got ", m.num_kv_heads));
  }
  const bool head_dim_field = arch != Arch::kPhi3 && arch != Arch::kQwen2 &&
                              arch != Arch::kQwen2Moe && !gptj;
  std::optional<int64_t> default_head_dim = d.head_dim;
  if (!default_head_dim.has_value()) {
    if (m.hidden_size % m.num_attention_heads != 0 &&
        !(head_dim_field && r.Has("head_dim"))) {
      return Bad(absl::StrCat("hidden_size (", m.hidden_size,
                              ") must be a multiple of num_attention_heads (",
                              m.num_attention_heads,
                              ") when head_dim is not given"));
    }
    default_head_dim = m.hidden_size / m.num_attention_heads;
  }
  if (head_dim_field) {
    ASSIGN_OR_RETURN(m.head_dim,
                     r.Int("head_dim", default_head_dim, 1, kMaxHeadDim));
  } else {
    m.head_dim = *default_head_dim;  // the class has no head_dim field
  }
  ASSIGN_OR_RETURN(m.max_context,
                   r.Int(gptj ? "n_positions" : "max_position_embeddings",
                         d.max_position_embeddings, 1, kMaxContext));
  ASSIGN_OR_RETURN(m.tie_word_embeddings,
                   r.Bool("tie_word_embeddings", d.tie_word_embeddings));

  switch (arch) {
    case Arch::kLlama:
    case Arch::kQwen3:
    case Arch::kQwen3Moe:
    case Arch::kQwen3Next:
    case Arch::kNemotronNas:
    case Arch::kLlama4: {
      // attention_bias also adds an o_proj bias (hidden_size values), which
      // is negligible and not counted.
      ASSIGN_OR_RETURN(m.qkv_bias, r.Bool("attention_bias", false));
      break;
    }
    case Arch::kGptOss: {
      // q, k, v and o biases (GptOssAttention), sinks, router and expert
      // biases.
      ASSIGN_OR_RETURN(m.qkv_bias, r.Bool("attention_bias", true));
      m.attention_out_bias = m.qkv_bias;
      m.attention_sinks = true;
      m.router_bias = true;
      m.ffn_bias = true;
      break;
    }
    case Arch::kQwen2:
    case Arch::kQwen2Moe:
      m.qkv_bias = true;  // Qwen2 always has q/k/v biases
      break;
    default:
      break;
  }

  // Sliding windows.
  switch (arch) {
    case Arch::kMistral:
    case Arch::kMixtral:
    case Arch::kPhi3: {
      ASSIGN_OR_RETURN(std::optional<int64_t> w,
                       r.OptInt("sliding_window", 1, kMaxContext));
      // MistralConfig defaults to 4096 when the key is absent; an explicit
      // null (Mistral v0.2+, Mixtral) turns the window off.
      if (!w.has_value() && arch == Arch::kMistral &&
          !j.contains("sliding_window")) {
        w = 4096;
      }
      if (w.has_value()) {
        m.sliding_layers = SlidingLayers::kAll;
        m.sliding_window = *w;
      }
      break;
    }
    case Arch::kGemma2: {
      ASSIGN_OR_RETURN(m.sliding_window,
                       r.Int("sliding_window", 4096, 1, kMaxContext));
      m.sliding_layers = SlidingLayers::kEvenLayers;
      m.norms_per_layer = 4;
      break;
    }
    case Arch::kQwen2:
    case Arch::kQwen2Moe:
    case Arch::kQwen3:
    case Arch::kQwen3Moe:
    case Arch::kQwen3Next: {
      ASSIGN_OR_RETURN(bool use, r.Bool("use_sliding_window", false));
      if (use) {
        return Bad(
            "use_sliding_window must be false (Qwen's layer-range sliding "
            "window is not supported), got true");
      }
      break;
    }
    default:
      break;
  }

  // Mixture of experts and MLA.
  switch (arch) {
    case Arch::kMixtral: {
      MoeDims moe;
      ASSIGN_OR_RETURN(moe.num_routed_experts,
                       r.Int("num_local_experts", 8, 1, kMaxExperts));
      ASSIGN_OR_RETURN(moe.experts_per_token, r.Int("num_experts_per_tok", 2, 1,
                                                    moe.num_routed_experts));
      moe.expert_intermediate_size = m.intermediate_size;
      m.moe = moe;
      break;
    }
    case Arch::kQwen2Moe: {
      RETURN_IF_ERROR(CheckAllLayersSparse(j, r));
      MoeDims moe;
      ASSIGN_OR_RETURN(moe.num_routed_experts,
                       r.Int("num_experts", 60, 1, kMaxExperts));
      ASSIGN_OR_RETURN(moe.experts_per_token, r.Int("num_experts_per_tok", 4, 1,
                                                    moe.num_routed_experts));
      ASSIGN_OR_RETURN(moe.expert_intermediate_size,
                       r.Int("moe_intermediate_size", 1408, 1, kMaxWidth));
      ASSIGN_OR_RETURN(
          moe.shared_expert_intermediate_size,
          r.Int("shared_expert_intermediate_size", 5632, 0, kMaxWidth));
      moe.num_shared_experts = moe.shared_expert_intermediate_size > 0 ? 1 : 0;
      moe.shared_expert_gate = moe.num_shared_experts > 0;
      m.moe = moe;
      break;
    }
    case Arch::kQwen3Moe: {
      RETURN_IF_ERROR(CheckAllLayersSparse(j, r));
      MoeDims moe;
      ASSIGN_OR_RETURN(moe.num_routed_experts,
                       r.Int("num_experts", 128, 1, kMaxExperts));
      ASSIGN_OR_RETURN(moe.experts_per_token, r.Int("num_experts_per_tok", 8, 1,
                                                    moe.num_routed_experts));
      ASSIGN_OR_RETURN(moe.expert_intermediate_size,
                       r.Int("moe_intermediate_size", 768, 1, kMaxWidth));
      m.moe = moe;
      break;
    }
    case Arch::kDeepseekV2:
    case Arch::kDeepseekV3:
      RETURN_IF_ERROR(ParseDeepseek(r, arch, m));
      RETURN_IF_ERROR(ParseMtp(r, m));
      break;
    case Arch::kDeepseekV32:
      RETURN_IF_ERROR(ParseDeepseek(r, arch, m));
      RETURN_IF_ERROR(hf_internal::ParseDsa(r, m));
      RETURN_IF_ERROR(ParseMtp(r, m));
      break;
    default:
      break;
  }
  if (arch == Arch::kQwen3 || arch == Arch::kQwen3Moe) m.qk_norm = true;
  switch (arch) {
    case Arch::kNemotronNas:
      RETURN_IF_ERROR(ParseBlockConfigs(j, m));
      break;
    case Arch::kLlama4:
      RETURN_IF_ERROR(ParseLlama4(j, r, m));
      break;
    case Arch::kGptOss:
      RETURN_IF_ERROR(ParseGptOss(j, r, m));
      break;
    case Arch::kQwen3Next:
      RETURN_IF_ERROR(hf_internal::ParseQwen3Next(j, r, m));
      RETURN_IF_ERROR(ParseMtp(r, m));
      break;
    case Arch::kNemotronH:
      RETURN_IF_ERROR(hf_internal::ParseNemotronH(j, r, m));
      RETURN_IF_ERROR(ParseMtp(r, m));
      break;
    case Arch::kGlm4Moe:
      RETURN_IF_ERROR(hf_internal::ParseGlm4Moe(j, r, m));
      break;
    case Arch::kMiniMax:
      RETURN_IF_ERROR(hf_internal::ParseMiniMax(j, r, m));
      break;
    case Arch::kJamba:
      RETURN_IF_ERROR(hf_internal::ParseJamba(j, r, m));
      break;
    case Arch::kFalconH1:
      RETURN_IF_ERROR(hf_internal::ParseFalconH1(j, r, m));
      break;
    case Arch::kKimiLinear:
      RETURN_IF_ERROR(hf_internal::ParseKimiLinear(j, r, m));
      RETURN_IF_ERROR(ParseMtp(r, m));
      break;
    case Arch::kGptJ: {
      // GPT-J: LayerNorm, GELU MLP fc_in / fc_out with biases, one norm per
      // layer (attention and MLP in parallel), LM head with bias, partial
      // rotary.
      m.norm = NormKind::kLayerNorm;
      m.ffn = FfnKind::kPlain;
      m.ffn_bias = true;
      m.lm_head_bias = true;
      m.norms_per_layer = 1;
      m.parallel_attention_ffn = true;
      ASSIGN_OR_RETURN(m.rotary_dim, r.Int("rotary_dim", 64, 1, m.head_dim));
      break;
    }
    default:
      break;
  }

  // Backstop: the engine's own checks, reported against config.json.
  if (absl::Status s = ValidateModel(m); !s.ok()) {
    return Bad(std::string(s.message()));
  }
  return m;
}

absl::Status CheckNesting(std::string_view json) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNesting) {
        return Bad(absl::StrCat("values may nest at most ", kMaxNesting,
                                " levels deep; level ", depth,
                                " opens at byte ", i));
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ModelConfig> ParseHuggingFaceConfig(std::string_view json,
                                                   std::string_view id) {
  // The path of the key being read, so that errors the JSON library raises
  // mid-value (a number that overflows a double: out_of_range.406) can name
  // the field.
  std::vector<std::string> path;
  auto track = [&path](int depth, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::key && depth >= 1) {
      path.resize(static_cast<size_t>(depth));
      path.back() = parsed.get<std::string>();
    }
    return true;
  };
  RETURN_IF_ERROR(CheckNesting(json));
  std::string finite;
  if (ReplaceNonFinite(json, &finite)) json = finite;
  Json j;
  try {
    j = Json::parse(json.begin(), json.end(), track);
  } catch (const Json::parse_error& e) {
    // The library's message quotes the last token read, which may be long.
    return Bad(absl::StrCat("not valid JSON: ", Prefix(e.what(), 256)));
  } catch (const Json::exception& e) {
    // out_of_range.406: a number beyond a double's range, e.g. 1e400.
    return Bad(absl::StrCat(
        path.empty() ? "top-level value"
                     : Prefix(absl::StrJoin(path, "."), kMaxQuoted),
        " must be a number within a double's range (|x| <= 1.8e308); ",
        Prefix(e.what(), 256)));
  }
  if (id.empty()) {
    return absl::InvalidArgumentError("model id must not be empty");
  }
  // The readers check types before every get<>(); this is the backstop that
  // keeps the library's exceptions inside the no-exceptions contract.
  try {
    return Parse(j, id);
  } catch (const Json::exception& e) {
    return Bad(absl::StrCat("unexpected value: ", Prefix(e.what(), 256)));
  }
}

}  // namespace ridgeline::engine
