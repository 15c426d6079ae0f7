// Hugging Face config.json -> ModelConfig for the supported architecture
// classes. Absent optional fields take the defaults of the matching
// transformers configuration class (LlamaConfig, MistralConfig, ...); the
// core dimensions (vocab_size, hidden_size, intermediate_size,
// num_hidden_layers, num_attention_heads) are required, because a config
// without them is not a published model and silently defaulting to a 7B
// shape would hide the mistake.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "ridgeline/engine/model.h"
#include "ridgeline/engine/status_macros.h"

namespace ridgeline::engine {
namespace {

using Json = nlohmann::json;

constexpr int64_t kMaxVocab = int64_t{1} << 24;
constexpr int64_t kMaxWidth = int64_t{1} << 20;
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxHeads = 4096;
constexpr int64_t kMaxHeadDim = 4096;
constexpr int64_t kMaxContext = int64_t{1} << 26;
constexpr int64_t kMaxExperts = 4096;

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
};

std::string SupportedList() {
  std::string out;
  for (const ArchName& a : kArchs) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", a.architecture, " (",
                    a.model_type, ")");
  }
  return out;
}

// Real configs nest 3-4 levels (rope_scaling, quantization_config); the
// limit keeps every recursive walk of a parsed value (dump, destruction)
// far from the stack's end.
constexpr int kMaxNesting = 64;
// Longest piece of a client's value quoted back in an error.
constexpr size_t kMaxQuoted = 64;

// At most `max` bytes of `s`, cut on a UTF-8 character boundary (a status
// message may travel in a proto string field, which must be valid UTF-8).
std::string Prefix(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return absl::StrCat(absl::string_view(s.data(), end), "... (", s.size(),
                      " bytes)");
}

// A value as quoted in errors: short JSON text, or its kind and size.
std::string Describe(const Json& v) {
  if ((v.is_array() || v.is_object()) && v.size() > 8) {
    return absl::StrCat("an ", v.type_name(), " of ", v.size(), " elements");
  }
  return Prefix(v.dump(-1, ' ', false, Json::error_handler_t::replace),
                kMaxQuoted);
}

// Rejects nesting deeper than kMaxNesting before the JSON library sees the
// text; brackets inside strings do not count.
absl::Status CheckNesting(std::string_view json);

absl::Status Bad(std::string_view msg) {
  return absl::InvalidArgumentError(
      absl::StrCat("config.json: ", absl::string_view(msg.data(), msg.size())));
}

// Typed, range-checked access to the top-level object. A JSON null counts
// as absent (published configs write "sliding_window": null).
class Reader {
 public:
  explicit Reader(const Json& j) : j_(j) {}

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
      return Bad(absl::StrCat(key, " must be an integer, got ", Describe(*it)));
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
    return Bad(absl::StrCat("missing required field ", key, " (integer in [",
                            lo, ", ", hi, "])"));
  }

  absl::StatusOr<bool> Bool(const char* key, bool def) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return def;
    if (!it->is_boolean()) {
      return Bad(absl::StrCat(key, " must be true or false, got ", Describe(*it)));
    }
    return it->get<bool>();
  }

  absl::StatusOr<std::string> String(const char* key, std::string def) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return def;
    if (!it->is_string()) {
      return Bad(absl::StrCat(key, " must be a string, got ", Describe(*it)));
    }
    return it->get<std::string>();
  }

 private:
  static absl::Status Range(const char* key, int64_t lo, int64_t hi,
                            const std::string& got) {
    return Bad(
        absl::StrCat(key, " must be in [", lo, ", ", hi, "], got ", got));
  }

  const Json& j_;
};

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
                          "\" is not supported; supported: ", SupportedList()));
}

// Qwen2-MoE / Qwen3-MoE: only "every layer sparse" is supported.
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
  }
  return {std::nullopt, std::nullopt, 2048, false};
}

absl::Status ParseDeepseek(const Reader& r, Arch arch, ModelConfig& m) {
  MlaDims mla;
  ASSIGN_OR_RETURN(std::optional<int64_t> q_lora,
                   r.OptInt("q_lora_rank", 1, kMaxWidth));
  // A null q_lora_rank (V2-Lite) means a direct q_proj; absent takes the
  // class default 1536.
  mla.q_lora_rank = r.Contains("q_lora_rank") ? q_lora.value_or(0) : 1536;
  ASSIGN_OR_RETURN(mla.kv_lora_rank, r.Int("kv_lora_rank", 512, 1, kMaxWidth));
  ASSIGN_OR_RETURN(mla.qk_nope_head_dim,
                   r.Int("qk_nope_head_dim", 128, 0, kMaxHeadDim));
  ASSIGN_OR_RETURN(mla.qk_rope_head_dim,
                   r.Int("qk_rope_head_dim", 64, 1, kMaxHeadDim));
  ASSIGN_OR_RETURN(mla.v_head_dim, r.Int("v_head_dim", 128, 1, kMaxHeadDim));
  m.mla = mla;
  m.head_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim;

  // n_routed_experts null: every layer dense.
  ASSIGN_OR_RETURN(std::optional<int64_t> routed,
                   r.OptInt("n_routed_experts", 1, kMaxExperts));
  if (!routed.has_value()) return absl::OkStatus();
  MoeDims moe;
  moe.num_routed_experts = *routed;
  ASSIGN_OR_RETURN(moe.experts_per_token,
                   r.Int("num_experts_per_tok", std::nullopt, 1, *routed));
  ASSIGN_OR_RETURN(moe.num_shared_experts,
                   r.Int("n_shared_experts", 0, 0, kMaxExperts));
  ASSIGN_OR_RETURN(moe.expert_intermediate_size,
                   r.Int("moe_intermediate_size", std::nullopt, 1, kMaxWidth));
  // DeepSeek's shared experts are one MLP of n_shared x moe width; counted
  // here as n_shared experts of moe width (same parameters and FLOPs).
  moe.shared_expert_intermediate_size = moe.expert_intermediate_size;
  ASSIGN_OR_RETURN(moe.first_dense_layers,
                   r.Int("first_k_dense_replace", 0, 0, m.num_layers - 1));
  ASSIGN_OR_RETURN(int64_t freq, r.Int("moe_layer_freq", 1, 1, kMaxLayers));
  if (freq != 1) {
    return Bad(absl::StrCat(
        "moe_layer_freq must be 1 (every layer after first_k_dense_replace is "
        "MoE; other patterns are not supported), got ",
        freq));
  }
  // noaux_tc routing adds e_score_correction_bias to the gate.
  ASSIGN_OR_RETURN(std::string topk_method,
                   r.String("topk_method",
                            arch == Arch::kDeepseekV3 ? "noaux_tc" : "greedy"));
  moe.router_score_bias = topk_method == "noaux_tc";
  m.moe = moe;
  return absl::OkStatus();
}

absl::StatusOr<ModelConfig> Parse(const Json& j, std::string_view id) {
  if (!j.is_object()) {
    return Bad(
        absl::StrCat("top level must be a JSON object, got ", j.type_name()));
  }
  ModelConfig m;
  m.id = std::string(id);
  m.display_name = std::string(id);
  ASSIGN_OR_RETURN(const Arch arch, DetectArch(j, &m.architecture));
  const Reader r(j);
  const ClassDefaults d = DefaultsFor(arch);
  if (j.contains("_name_or_path") && j["_name_or_path"].is_string()) {
    m.source = j["_name_or_path"].get<std::string>();
  }

  ASSIGN_OR_RETURN(m.vocab_size,
                   r.Int("vocab_size", std::nullopt, 1, kMaxVocab));
  ASSIGN_OR_RETURN(m.hidden_size,
                   r.Int("hidden_size", std::nullopt, 1, kMaxWidth));
  ASSIGN_OR_RETURN(m.intermediate_size,
                   r.Int("intermediate_size", std::nullopt, 1, kMaxWidth));
  ASSIGN_OR_RETURN(m.num_layers,
                   r.Int("num_hidden_layers", std::nullopt, 1, kMaxLayers));
  ASSIGN_OR_RETURN(m.num_attention_heads,
                   r.Int("num_attention_heads", std::nullopt, 1, kMaxHeads));
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
  const bool head_dim_field =
      arch != Arch::kPhi3 && arch != Arch::kQwen2 && arch != Arch::kQwen2Moe;
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
                   r.Int("max_position_embeddings", d.max_position_embeddings,
                         1, kMaxContext));
  ASSIGN_OR_RETURN(m.tie_word_embeddings,
                   r.Bool("tie_word_embeddings", d.tie_word_embeddings));

  switch (arch) {
    case Arch::kLlama:
    case Arch::kQwen3:
    case Arch::kQwen3Moe: {
      // attention_bias also adds an o_proj bias (hidden_size values), which
      // is negligible and not counted.
      ASSIGN_OR_RETURN(m.qkv_bias, r.Bool("attention_bias", false));
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
    case Arch::kQwen3Moe: {
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
      break;
    default:
      break;
  }
  if (arch == Arch::kQwen3 || arch == Arch::kQwen3Moe) m.qk_norm = true;

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
