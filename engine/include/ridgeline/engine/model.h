// Transformer model shapes: the built-in catalog and Hugging Face config.json
// parsing. Values are plain data; functions are thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace ridgeline::engine {

enum class NormKind : uint8_t { kRmsNorm, kLayerNorm };
// kGated: up+gate projections and down (SwiGLU / GeGLU). kPlain: up, down.
enum class FfnKind : uint8_t { kGated, kPlain };
// Which layers use a sliding attention window.
enum class SlidingLayers : uint8_t {
  kNone,
  kAll,          // Mistral-7B-v0.1: every layer
  kEvenLayers,   // Gemma-2: layer_idx % 2 == 0 is sliding, odd layers global
};

// Multi-head latent attention (DeepSeek-V2/V3).
struct MlaDims {
  int64_t q_lora_rank = 0;  // 0: queries projected directly (V2-Lite)
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
};

struct MoeDims {
  int64_t num_routed_experts = 0;
  int64_t experts_per_token = 0;        // top-k over routed experts
  int64_t num_shared_experts = 0;       // always active
  int64_t expert_intermediate_size = 0; // per routed expert
  int64_t shared_expert_intermediate_size = 0;  // per shared expert
  int64_t first_dense_layers = 0;  // leading layers with a dense FFN
                                   // (DeepSeek first_k_dense_replace)
  // Qwen2-MoE: a sigmoid gate (hidden -> 1) scales the shared expert.
  bool shared_expert_gate = false;
  // DeepSeek-V3: a per-expert bias added to the router scores
  // (e_score_correction_bias, num_routed_experts parameters).
  bool router_score_bias = false;
};

// Mamba-2 mixer (Dao & Gu 2024, "Transformers are SSMs", arXiv:2405.21060;
// HF Mamba2Mixer / NemotronHMamba2Mixer). Inner width d_inner = num_heads x
// head_dim (not expand x hidden: Nemotron-H's configs disagree with expand).
struct MambaDims {
  int64_t num_heads = 0;     // mamba_num_heads / num_heads
  int64_t head_dim = 0;      // mamba_head_dim / head_dim (P)
  int64_t state_size = 0;    // ssm_state_size (N)
  int64_t n_groups = 1;      // B and C groups (G)
  int64_t conv_kernel = 4;   // depthwise causal conv1d width (K)
  int64_t chunk_size = 256;  // SSD prefill chunk (Q)
  bool conv_bias = true;     // use_conv_bias
  // The gated RMSNorm over d_inner before out_proj (Mamba-2 and Nemotron-H
  // always; Falcon-H1 when mamba_rms_norm).
  bool gated_norm = true;
  int64_t inner() const { return num_heads * head_dim; }
};

// Mamba-1 mixer (Gu & Dao 2023, "Mamba: Linear-Time Sequence Modeling with
// Selective State Spaces", arXiv:2312.00752; HF JambaMambaMixer /
// MambaMixer): a selective scan over d_inner channels, each with its own
// state of N, and input-dependent dt, B, C from x_proj.
struct Mamba1Dims {
  int64_t inner = 0;        // d_inner = mamba_expand x hidden
  int64_t state_size = 0;   // mamba_d_state (N)
  int64_t dt_rank = 0;      // mamba_dt_rank (R): x_proj's low-rank dt
  int64_t conv_kernel = 4;  // mamba_d_conv (K)
  bool conv_bias = true;    // mamba_conv_bias
  bool proj_bias = false;   // mamba_proj_bias: in_proj and out_proj biases
  // Jamba: RMSNorms over dt (R), B (N) and C (N) after x_proj.
  bool inner_norms = false;
};

// Linear attention with a constant-size state per head (dk x dv).
enum class LinearAttentionKind : uint8_t {
  // Gated DeltaNet (Yang, Kautz, Hatamizadeh 2024, arXiv:2412.06464):
  // Qwen3-Next's linear_attention layers.
  kGatedDeltaNet,
  // Lightning attention (Qin et al. 2024, arXiv:2401.04658; MiniMax-01,
  // arXiv:2501.08313): decayed linear attention, no short convolution.
  kLightning,
  // Kimi Delta Attention (Kimi Linear, arXiv:2510.26692; vLLM
  // model_executor/layers/kda.py): Gated DeltaNet with a decay per key
  // channel from a low-rank gate (f_a, f_b) and a low-rank output gate
  // (g_a, g_b), rank key_head_dim; heads = key heads = value heads.
  kKimiDelta,
};
struct LinearAttentionDims {
  LinearAttentionKind kind = LinearAttentionKind::kGatedDeltaNet;
  int64_t num_key_heads = 0;    // linear_num_key_heads
  int64_t key_head_dim = 0;     // linear_key_head_dim (dk)
  int64_t num_value_heads = 0;  // linear_num_value_heads (state heads)
  int64_t value_head_dim = 0;   // linear_value_head_dim (dv)
  int64_t conv_kernel = 0;      // short causal conv over q, k, v; 0: none
  int64_t chunk_size = 64;      // chunked prefill (fla chunk kernels: 64)
};

// DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2-Exp,
// inference/model.py `Indexer`): per token one cached index key of
// index_head_dim; each query scores every cached key with index_n_heads
// heads and attends to the index_topk best only.
struct DsaDims {
  int64_t index_heads = 0;     // index_n_heads
  int64_t index_head_dim = 0;  // index_head_dim
  int64_t index_topk = 0;      // index_topk
};

// One decoder layer where layers differ (Nemotron NAS block_configs, Llama 4's
// interleaved MoE and chunked layers, gpt-oss's alternating windows, hybrid
// recurrent / attention models).
enum class AttentionKind : uint8_t {
  kFull,             // the model's attention (MHA/GQA/MQA/MLA)
  kNone,             // no-op: the layer has no attention and no KV cache
  kLinear,           // replaced by one hidden x hidden matmul, no KV cache
  kMamba2,           // the model's `mamba` mixer: constant state, no KV cache
  kMamba1,           // the model's `mamba1` mixer: constant state
  kLinearAttention,  // the model's `linear_attention`: constant state
};
enum class FfnLayerKind : uint8_t {
  kDense,   // gated/plain FFN of `intermediate_size`
  kMoe,     // the model's `moe`
  kNone,    // no-op: no FFN
  kLinear,  // replaced by one hidden x hidden matmul
};
struct LayerSpec {
  AttentionKind attention = AttentionKind::kFull;
  int64_t num_kv_heads = 0;  // 0: the model's num_kv_heads
  bool sliding = false;      // window of the model's sliding_window tokens
  // Chunked local attention (Llama 4's RoPE layers): the sequence is cut
  // into chunks of the model's attention_chunk_size C and a query at
  // position p attends to its own chunk only, keys floor(p / C) * C .. p:
  // (p mod C) + 1 keys, not a window's min(p + 1, C).
  bool chunked = false;
  FfnLayerKind ffn = FfnLayerKind::kDense;
  int64_t intermediate_size = 0;  // dense width; 0: the model's
  // The model's `mamba` mixer runs beside this layer's full attention, on
  // the same normed input, their outputs added (Falcon-H1's parallel
  // hybrid): both its weights and its constant state, and the attention's
  // KV cache.
  bool parallel_mamba = false;
  bool operator==(const LayerSpec&) const = default;
};

struct ModelConfig {
  std::string id;            // catalog id, lower-case kebab, e.g. "llama-2-7b"
  std::string display_name;  // "Llama-2-7B"
  std::string architecture;  // HF architectures[0], e.g. "LlamaForCausalLM"
  std::string source;        // HF repository id the numbers come from

  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;  // dense FFN width
  int64_t num_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_kv_heads = 0;  // == heads: MHA; 1: MQA; else GQA
  // Query/key width of one head. MLA models: qk_nope_head_dim +
  // qk_rope_head_dim (their K/V geometry is in `mla`; num_kv_heads is the
  // config's num_key_value_heads and does not size the cache).
  int64_t head_dim = 0;
  int64_t max_context = 0;   // max_position_embeddings

  bool tie_word_embeddings = false;
  bool qkv_bias = false;     // Qwen2
  NormKind norm = NormKind::kRmsNorm;
  FfnKind ffn = FfnKind::kGated;
  SlidingLayers sliding_layers = SlidingLayers::kNone;
  int64_t sliding_window = 0;  // tokens; used when sliding_layers != kNone
  // Tokens per attention chunk of the layers marked `chunked` (HF
  // attention_chunk_size); 0 when no layer is chunked.
  int64_t attention_chunk_size = 0;

  std::optional<MlaDims> mla;
  std::optional<MoeDims> moe;
  // Recurrent mixers of the kMamba2 / kLinearAttention layers, and DSA on
  // the full-attention (MLA) layers.
  std::optional<MambaDims> mamba;
  std::optional<Mamba1Dims> mamba1;
  std::optional<LinearAttentionDims> linear_attention;
  std::optional<DsaDims> dsa;
  // Qwen3-Next gated attention: q_proj also emits a per-element output gate
  // (heads x head_dim), sigmoid(gate) scales the attention output.
  bool attention_output_gate = false;
  // Multi-token-prediction layers the checkpoint ships and the HF class
  // drops on load (num_nextn_predict_layers, mtp_num_hidden_layers;
  // DeepSeek-V3/R1: 1). Not in the graph or the parameter counts: what
  // speculative `mtp:k` drafts with.
  int64_t mtp_layers = 0;

  // Norm weight vectors of `hidden_size` per decoder layer: 2 (before
  // attention and before the FFN); Gemma-2 adds a norm after each, 4.
  int64_t norms_per_layer = 2;
  // Qwen3: RMSNorm over head_dim on each query and key head (q_norm, k_norm).
  bool qk_norm = false;

  // Per-layer shapes; empty: every layer follows the fields above (dense,
  // or MoE after moe.first_dense_layers; windows per sliding_layers). When
  // set it has num_layers entries and overrides sliding_layers and
  // first_dense_layers. A layer whose attention or FFN is kNone has no norm
  // before it (DeciLM builds none), so its norms are norms_per_layer less
  // one per skipped sub-block.
  std::vector<LayerSpec> layers;
  // gpt-oss: bias on o_proj (qkv_bias covers q, k, v).
  bool attention_out_bias = false;
  // Biases on the FFN / expert projections: up(+gate) and down (gpt-oss
  // experts, GPT-J fc_in / fc_out).
  bool ffn_bias = false;
  // gpt-oss: a bias on the router linear (num_routed_experts values).
  bool router_bias = false;
  // GPT-J: a bias on the LM head (vocab_size values).
  bool lm_head_bias = false;
  // gpt-oss: one learned sink logit per head and layer, an extra softmax
  // term per query row (no key is read for it).
  bool attention_sinks = false;
  // Partial rotary: RoPE rotates the first rotary_dim of each head (GPT-J:
  // 64 of 256); 0: the whole head.
  int64_t rotary_dim = 0;
  // GPT-J: attention and FFN read the same normed input and add to one
  // residual (one norm, one residual add per layer).
  bool parallel_attention_ffn = false;
  // Draft heads (MTP, EAGLE): each token's input is this many hidden-size
  // vectors (its embedding and the target's hidden state), concatenated and
  // projected to hidden_size by one matmul before the layers (DeepSeek-V3's
  // eh_proj, EAGLE's fc: 2). 0: a plain model.
  int64_t fused_hidden_inputs = 0;
};

// Every layer's shape: `layers` when set, else the uniform description
// expanded (thread-safe, allocates num_layers entries).
std::vector<LayerSpec> ResolveLayers(const ModelConfig& model);
// Layers whose FFN is the MoE.
int64_t MoeLayerCount(const ModelConfig& model);

// Parameter counts in parameters (not bytes): embeddings, LM head (0 when
// tied), attention projections and biases, norms, FFN / experts, routers
// (and DeepSeek-V3's router bias, Qwen2-MoE's shared-expert gate). Active
// counts top-k routed experts plus shared experts, embeddings included.
// DeepSeek-V3's multi-token-prediction layer is not counted.
struct ParameterCounts {
  double total = 0;
  double active_per_token = 0;  // what one token touches (top-k experts)
  double embedding = 0;         // input embedding table
  double lm_head = 0;           // 0 when tied to the embedding
};
ParameterCounts CountParameters(const ModelConfig& model);

// KV-cache elements stored per token over all layers: layers x 2 x
// num_kv_heads x head_dim; MLA: layers x (kv_lora_rank + qk_rope_head_dim),
// the compressed latent plus the decoupled RoPE key. Sliding windows cap how
// many tokens are kept, not the per-token size.
double KvElementsPerToken(const ModelConfig& model);
// One layer's share: 0 for a layer without attention or with a linear or
// recurrent one; DSA layers add their index key.
double LayerKvElementsPerToken(const ModelConfig& model, const LayerSpec& layer);
// Recurrent state elements one sequence keeps in one layer, whatever its
// context: Mamba-2 SSM state (heads x head_dim x state) plus the conv
// window (K - 1 positions of the conv channels); Mamba-1 d_inner x N plus
// (K - 1) x d_inner; linear attention's
// dk x dv per value head plus its conv window. 0 for other layers.
double LayerStateElementsPerSequence(const ModelConfig& model,
                                     const LayerSpec& layer);
double StateElementsPerSequence(const ModelConfig& model);

// Checks every field; errors name the field ("model.num_kv_heads") and the
// allowed range.
absl::Status ValidateModel(const ModelConfig& model);

// The built-in catalog, sorted by id. Each entry cites its HF repository.
const std::vector<ModelConfig>& BuiltinModels();
// NOT_FOUND lists the closest ids.
absl::StatusOr<ModelConfig> FindModel(std::string_view id);

// Parses a Hugging Face config.json for the supported architecture classes
// (Llama, Mistral, Mixtral, Qwen2, Qwen2-MoE, Qwen3, Qwen3-MoE, DeepSeek-V2/V3
// and Kimi-K2, Gemma, Gemma-2, Phi-3, Nemotron NAS (DeciLM block_configs),
// Llama 4 (text config), gpt-oss, GPT-J, and the hybrid classes
// Qwen3-Next, Nemotron-H, DeepSeek-V3.2, GLM-4.5, MiniMax-M1 / Text-01,
// Jamba, Mamba-2, Falcon-H1, Kimi-Linear). `id` becomes
// ModelConfig::id. Errors name the JSON field.
absl::StatusOr<ModelConfig> ParseHuggingFaceConfig(std::string_view json,
                                                   std::string_view id);

// Up to `limit` names from `candidates` closest to `query` (edit distance),
// for NOT_FOUND messages.
std::vector<std::string> ClosestNames(std::string_view query,
                                      const std::vector<std::string>& candidates,
                                      int limit = 3);

}  // namespace ridgeline::engine
