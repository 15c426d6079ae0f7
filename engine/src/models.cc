// The built-in model catalog. Every number is copied from the config.json
// of the Hugging Face repository named in `source` (and in the comment).
#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models_hybrid.h"
#include "ridgeline/engine/model.h"

namespace ridgeline::engine {
namespace {

// Fields shared by the dense decoder-only models; everything else defaults
// to the ModelConfig defaults (RMSNorm, gated FFN, untied, no bias).
struct Dense {
  const char* id;
  const char* display_name;
  const char* architecture;
  const char* source;
  int64_t vocab;
  int64_t hidden;
  int64_t intermediate;
  int64_t layers;
  int64_t heads;
  int64_t kv_heads;
  int64_t head_dim;
  int64_t max_context;
};

ModelConfig Make(const Dense& d) {
  ModelConfig m;
  m.id = d.id;
  m.display_name = d.display_name;
  m.architecture = d.architecture;
  m.source = d.source;
  m.vocab_size = d.vocab;
  m.hidden_size = d.hidden;
  m.intermediate_size = d.intermediate;
  m.num_layers = d.layers;
  m.num_attention_heads = d.heads;
  m.num_kv_heads = d.kv_heads;
  m.head_dim = d.head_dim;
  m.max_context = d.max_context;
  return m;
}

ModelConfig WithSliding(ModelConfig m, SlidingLayers layers, int64_t window) {
  m.sliding_layers = layers;
  m.sliding_window = window;
  return m;
}

ModelConfig Tied(ModelConfig m) {
  m.tie_word_embeddings = true;
  return m;
}

ModelConfig WithQkvBias(ModelConfig m) {
  m.qkv_bias = true;
  return m;
}

ModelConfig WithMoe(ModelConfig m, const MoeDims& moe) {
  m.moe = moe;
  return m;
}

// MLA models: num_kv_heads is the config's num_key_value_heads (== heads);
// head_dim is the query/key head width qk_nope_head_dim + qk_rope_head_dim.
ModelConfig WithMla(ModelConfig m, const MlaDims& mla) {
  m.mla = mla;
  m.head_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
  return m;
}

// Values below were checked against copies of each repository's
// config.json; where only a partial copy was found the comment says which
// fields rest on it.
constexpr const char* kLlama = "LlamaForCausalLM";
// DeepSeek-V3's MLA ranks (deepseek-ai/DeepSeek-V3 config.json), which
// Kimi-K2 shares.
const MlaDims kDeepseekV3Mla{.q_lora_rank = 1536,
                             .kv_lora_rank = 512,
                             .qk_nope_head_dim = 128,
                             .qk_rope_head_dim = 64,
                             .v_head_dim = 128};

// One function a family, in the catalog's order.
void AddLlama2(std::vector<ModelConfig>& c) {
  // --- Llama 2 (vocab 32000, MHA except 70B, 4096 positions, untied) ---
  // meta-llama/Llama-2-7b-hf
  c.push_back(
      Make({"llama-2-7b", "Llama-2-7B", kLlama, "meta-llama/Llama-2-7b-hf",
            32000, 4096, 11008, 32, 32, 32, 128, 4096}));
  // meta-llama/Llama-2-13b-hf
  c.push_back(
      Make({"llama-2-13b", "Llama-2-13B", kLlama, "meta-llama/Llama-2-13b-hf",
            32000, 5120, 13824, 40, 40, 40, 128, 4096}));
  // meta-llama/Llama-2-70b-hf: GQA with 8 kv heads.
  c.push_back(
      Make({"llama-2-70b", "Llama-2-70B", kLlama, "meta-llama/Llama-2-70b-hf",
            32000, 8192, 28672, 80, 64, 8, 128, 4096}));
  // codellama/CodeLlama-7b-hf: Llama-2-7B shape, vocab 32016, 16384
  // positions.
  c.push_back(
      Make({"codellama-7b", "CodeLlama-7B", kLlama, "codellama/CodeLlama-7b-hf",
            32016, 4096, 11008, 32, 32, 32, 128, 16384}));
  // TinyLlama/TinyLlama-1.1B-Chat-v1.0 (used in the calibration data).
  c.push_back(Make({"tinyllama-1.1b", "TinyLlama-1.1B", kLlama,
                    "TinyLlama/TinyLlama-1.1B-Chat-v1.0", 32000, 2048, 5632, 22,
                    32, 4, 64, 2048}));
}

void AddLlama3(std::vector<ModelConfig>& c) {
  // --- Llama 3 / 3.1 / 3.3 (vocab 128256, GQA 8 kv heads, untied) ---
  // meta-llama/Meta-Llama-3-8B: 8192 positions.
  c.push_back(
      Make({"llama-3-8b", "Llama-3-8B", kLlama, "meta-llama/Meta-Llama-3-8B",
            128256, 4096, 14336, 32, 32, 8, 128, 8192}));
  // meta-llama/Meta-Llama-3-70B
  c.push_back(
      Make({"llama-3-70b", "Llama-3-70B", kLlama, "meta-llama/Meta-Llama-3-70B",
            128256, 8192, 28672, 80, 64, 8, 128, 8192}));
  // meta-llama/Llama-3.1-8B: 131072 positions.
  c.push_back(
      Make({"llama-3.1-8b", "Llama-3.1-8B", kLlama, "meta-llama/Llama-3.1-8B",
            128256, 4096, 14336, 32, 32, 8, 128, 131072}));
  // meta-llama/Llama-3.1-70B
  c.push_back(Make({"llama-3.1-70b", "Llama-3.1-70B", kLlama,
                    "meta-llama/Llama-3.1-70B", 128256, 8192, 28672, 80, 64, 8,
                    128, 131072}));
  // meta-llama/Llama-3.1-405B
  c.push_back(Make({"llama-3.1-405b", "Llama-3.1-405B", kLlama,
                    "meta-llama/Llama-3.1-405B", 128256, 16384, 53248, 126, 128,
                    8, 128, 131072}));
  // meta-llama/Llama-3.3-70B-Instruct: the Llama-3.1-70B shape (used in the
  // calibration data).
  c.push_back(Make({"llama-3.3-70b", "Llama-3.3-70B", kLlama,
                    "meta-llama/Llama-3.3-70B-Instruct", 128256, 8192, 28672,
                    80, 64, 8, 128, 131072}));
  // meta-llama/Llama-3.2-1B: head_dim 64, tied embeddings. (Not found in a
  // searchable copy; values as published in the repository's config.json.)
  c.push_back(Tied(
      Make({"llama-3.2-1b", "Llama-3.2-1B", kLlama, "meta-llama/Llama-3.2-1B",
            128256, 2048, 8192, 16, 32, 8, 64, 131072})));
  // meta-llama/Llama-3.2-3B: 24 heads of 128, tied embeddings. (Same note.)
  c.push_back(Tied(
      Make({"llama-3.2-3b", "Llama-3.2-3B", kLlama, "meta-llama/Llama-3.2-3B",
            128256, 3072, 8192, 28, 24, 8, 128, 131072})));
}

void AddMistral(std::vector<ModelConfig>& c) {
  // --- Mistral ---
  // mistralai/Mistral-7B-v0.1: sliding_window 4096 on every layer.
  c.push_back(
      WithSliding(Make({"mistral-7b", "Mistral-7B-v0.1", "MistralForCausalLM",
                        "mistralai/Mistral-7B-v0.1", 32000, 4096, 14336, 32, 32,
                        8, 128, 32768}),
                  SlidingLayers::kAll, 4096));
  // mistralai/Mixtral-8x7B-v0.1: 8 experts of width 14336, top-2.
  c.push_back(WithMoe(Make({"mixtral-8x7b", "Mixtral-8x7B",
                            "MixtralForCausalLM", "mistralai/Mixtral-8x7B-v0.1",
                            32000, 4096, 14336, 32, 32, 8, 128, 32768}),
                      {.num_routed_experts = 8,
                       .experts_per_token = 2,
                       .expert_intermediate_size = 14336}));
  // mistralai/Mixtral-8x22B-v0.1: 8 experts of width 16384, top-2.
  c.push_back(
      WithMoe(Make({"mixtral-8x22b", "Mixtral-8x22B", "MixtralForCausalLM",
                    "mistralai/Mixtral-8x22B-v0.1", 32000, 6144, 16384, 56, 48,
                    8, 128, 65536}),
              {.num_routed_experts = 8,
               .experts_per_token = 2,
               .expert_intermediate_size = 16384}));
}

void AddQwen(std::vector<ModelConfig>& c) {
  // --- Qwen (bias on q, k, v projections; vocab 152064 untied) ---
  // Qwen/Qwen2-7B-Instruct (same shape as Qwen/Qwen2-7B; the Instruct
  // config gives 32768 positions).
  c.push_back(WithQkvBias(Make({"qwen2-7b", "Qwen2-7B", "Qwen2ForCausalLM",
                                "Qwen/Qwen2-7B-Instruct", 152064, 3584, 18944,
                                28, 28, 4, 128, 32768})));
  // Qwen/Qwen2-72B-Instruct
  c.push_back(WithQkvBias(Make({"qwen2-72b", "Qwen2-72B", "Qwen2ForCausalLM",
                                "Qwen/Qwen2-72B-Instruct", 152064, 8192, 29568,
                                80, 64, 8, 128, 32768})));
  // Qwen/Qwen2.5-7B-Instruct
  c.push_back(WithQkvBias(Make({"qwen2.5-7b", "Qwen2.5-7B", "Qwen2ForCausalLM",
                                "Qwen/Qwen2.5-7B-Instruct", 152064, 3584, 18944,
                                28, 28, 4, 128, 32768})));
  // Qwen/Qwen3-30B-A3B: 128 experts of width 768, top-8, no shared expert,
  // every layer sparse (decoder_sparse_step 1, mlp_only_layers []); q/k
  // RMSNorm; head_dim 128 (32 x 128 = 4096 != hidden 2048).
  {
    ModelConfig m = WithMoe(
        Make({"qwen3-30b-a3b", "Qwen3-30B-A3B", "Qwen3MoeForCausalLM",
              "Qwen/Qwen3-30B-A3B", 151936, 2048, 6144, 48, 32, 4, 128, 40960}),
        {.num_routed_experts = 128,
         .experts_per_token = 8,
         .expert_intermediate_size = 768});
    m.qk_norm = true;
    c.push_back(std::move(m));
  }
}

void AddDeepSeek(std::vector<ModelConfig>& c) {
  // --- DeepSeek (MLA + MoE; routed experts, shared experts, dense first
  // layers) ---
  // deepseek-ai/DeepSeek-V2: 160 routed (top-6) + 2 shared experts of width
  // 1536, first_k_dense_replace 1, q_lora_rank 1536, kv_lora_rank 512.
  c.push_back(
      WithMla(WithMoe(Make({"deepseek-v2", "DeepSeek-V2",
                            "DeepseekV2ForCausalLM", "deepseek-ai/DeepSeek-V2",
                            102400, 5120, 12288, 60, 128, 128, 0, 163840}),
                      {.num_routed_experts = 160,
                       .experts_per_token = 6,
                       .num_shared_experts = 2,
                       .expert_intermediate_size = 1536,
                       .shared_expert_intermediate_size = 1536,
                       .first_dense_layers = 1}),
              {.q_lora_rank = 1536,
               .kv_lora_rank = 512,
               .qk_nope_head_dim = 128,
               .qk_rope_head_dim = 64,
               .v_head_dim = 128}));
  // deepseek-ai/DeepSeek-V2-Lite: q_lora_rank null (direct q_proj), 64
  // routed (top-6) + 2 shared experts of width 1408.
  c.push_back(WithMla(
      WithMoe(Make({"deepseek-v2-lite", "DeepSeek-V2-Lite",
                    "DeepseekV2ForCausalLM", "deepseek-ai/DeepSeek-V2-Lite",
                    102400, 2048, 10944, 27, 16, 16, 0, 163840}),
              {.num_routed_experts = 64,
               .experts_per_token = 6,
               .num_shared_experts = 2,
               .expert_intermediate_size = 1408,
               .shared_expert_intermediate_size = 1408,
               .first_dense_layers = 1}),
      {.q_lora_rank = 0,
       .kv_lora_rank = 512,
       .qk_nope_head_dim = 128,
       .qk_rope_head_dim = 64,
       .v_head_dim = 128}));
  // deepseek-ai/DeepSeek-V3 (deepseek-ai/DeepSeek-R1 has the same config):
  // 256 routed (top-8) + 1 shared expert of width 2048, first 3 layers
  // dense, e_score_correction_bias in the router. The multi-token-prediction
  // layer (num_nextn_predict_layers 1) is not part of inference and is not
  // counted.
  const MoeDims v3_moe{.num_routed_experts = 256,
                       .experts_per_token = 8,
                       .num_shared_experts = 1,
                       .expert_intermediate_size = 2048,
                       .shared_expert_intermediate_size = 2048,
                       .first_dense_layers = 3,
                       .router_score_bias = true};
  // config.json "num_nextn_predict_layers": 1 in both repositories: one
  // MTP module beside the 61 layers.
  c.push_back(
      WithMla(WithMoe(Make({"deepseek-v3", "DeepSeek-V3",
                            "DeepseekV3ForCausalLM", "deepseek-ai/DeepSeek-V3",
                            129280, 7168, 18432, 61, 128, 128, 0, 163840}),
                      v3_moe),
              kDeepseekV3Mla));
  c.back().mtp_layers = 1;
  c.push_back(
      WithMla(WithMoe(Make({"deepseek-r1", "DeepSeek-R1",
                            "DeepseekV3ForCausalLM", "deepseek-ai/DeepSeek-R1",
                            129280, 7168, 18432, 61, 128, 128, 0, 163840}),
                      v3_moe),
              kDeepseekV3Mla));
  c.back().mtp_layers = 1;
}

void AddGemma(std::vector<ModelConfig>& c) {
  // --- Gemma (GeGLU, tied embeddings, vocab 256000) ---
  // google/gemma-7b: 16 heads of 256 (16 x 256 = 4096 != hidden 3072).
  c.push_back(
      Tied(Make({"gemma-7b", "Gemma-7B", "GemmaForCausalLM", "google/gemma-7b",
                 256000, 3072, 24576, 28, 16, 16, 256, 8192})));
  // google/gemma-2-9b: even layers slide over 4096 tokens, odd layers are
  // global; four norms per layer (pre/post attention, pre/post FFN).
  {
    ModelConfig m =
        WithSliding(Tied(Make({"gemma-2-9b", "Gemma-2-9B", "Gemma2ForCausalLM",
                               "google/gemma-2-9b", 256000, 3584, 14336, 42, 16,
                               8, 256, 8192})),
                    SlidingLayers::kEvenLayers, 4096);
    m.norms_per_layer = 4;
    c.push_back(std::move(m));
  }
  // google/gemma-2-27b
  {
    ModelConfig m =
        WithSliding(Tied(Make({"gemma-2-27b", "Gemma-2-27B",
                               "Gemma2ForCausalLM", "google/gemma-2-27b",
                               256000, 4608, 36864, 46, 32, 16, 128, 8192})),
                    SlidingLayers::kEvenLayers, 4096);
    m.norms_per_layer = 4;
    c.push_back(std::move(m));
  }
}

void AddPhi(std::vector<ModelConfig>& c) {
  // --- Phi-3 ---
  // microsoft/Phi-3-mini-4k-instruct: fused qkv_proj and gate_up_proj (same
  // parameter count as separate projections); its config sets
  // sliding_window 2047 on every layer.
  c.push_back(
      WithSliding(Make({"phi-3-mini", "Phi-3-mini-4k", "Phi3ForCausalLM",
                        "microsoft/Phi-3-mini-4k-instruct", 32064, 3072, 8192,
                        32, 32, 32, 96, 4096}),
                  SlidingLayers::kAll, 2047));
}

void AddKimi(std::vector<ModelConfig>& c) {
  // --- Kimi-K2 (DeepSeek-V3 architecture, its own sizes) ---
  // moonshotai/Kimi-K2-Instruct (config.json: DeepseekV3ForCausalLM,
  // model_type kimi_k2): 61 layers (1 dense), hidden 7168, 64 heads, 384
  // routed experts (top-8) + 1 shared of width 2048, MLA, 128 K context
  // (github.com/MoonshotAI/Kimi-K2 README "Model Summary", commit 11062d1);
  // vocab 163840, dense width 18432, MLA ranks 1536 / 512 / 128 / 64 / 128
  // and max_position_embeddings 131072 as in the kimi_k2 text configs
  // quoted by SGLang and vLLM users (the K2.5 / K2.6 text_config has the
  // same shape at 262144 positions).
  c.push_back(
      WithMla(WithMoe(Make({"kimi-k2", "Kimi-K2", "DeepseekV3ForCausalLM",
                            "moonshotai/Kimi-K2-Instruct", 163840, 7168, 18432,
                            61, 64, 64, 0, 131072}),
                      {.num_routed_experts = 384,
                       .experts_per_token = 8,
                       .num_shared_experts = 1,
                       .expert_intermediate_size = 2048,
                       .shared_expert_intermediate_size = 2048,
                       .first_dense_layers = 1,
                       .router_score_bias = true}),
              kDeepseekV3Mla));
}

void AddGptJ(std::vector<ModelConfig>& c) {
  // --- GPT-J (parallel attention + MLP, partial rotary, LayerNorm) ---
  // EleutherAI/gpt-j-6b (https://huggingface.co/EleutherAI/gpt-j-6b/blob/
  // main/config.json): n_embd 4096, n_layer 28, n_head 16 (head 256),
  // n_inner null (4 x 4096), rotary_dim 64, vocab 50400, n_positions 2048;
  // fc_in / fc_out and the LM head carry biases.
  {
    ModelConfig m = Make({"gpt-j-6b", "GPT-J-6B", "GPTJForCausalLM",
                          "EleutherAI/gpt-j-6b", 50400, 4096, 16384, 28, 16, 16,
                          256, 2048});
    m.norm = NormKind::kLayerNorm;
    m.ffn = FfnKind::kPlain;
    m.ffn_bias = true;
    m.lm_head_bias = true;
    m.norms_per_layer = 1;
    m.parallel_attention_ffn = true;
    m.rotary_dim = 64;
    c.push_back(std::move(m));
  }
}

void AddGptOss(std::vector<ModelConfig>& c) {
  // --- gpt-oss (MoE every layer, alternating 128-token window and full
  // attention starting with the window, attention sinks, biases on
  // q/k/v/o, router and experts; the published weights are MXFP4 experts) ---
  // openai/gpt-oss-20b (https://huggingface.co/openai/gpt-oss-20b/blob/main/
  // config.json): 24 layers, 32 experts top-4 of width 2880, 64 heads of 64,
  // 8 KV heads, vocab 201088, 131072 positions.
  // openai/gpt-oss-120b (https://huggingface.co/openai/gpt-oss-120b/blob/
  // main/config.json): the same with 36 layers and 128 experts.
  for (const auto& [id, name, layers, experts] :
       {std::tuple{"gpt-oss-20b", "gpt-oss-20b", 24, 32},
        std::tuple{"gpt-oss-120b", "gpt-oss-120b", 36, 128}}) {
    ModelConfig m = WithMoe(
        Make({id, name, "GptOssForCausalLM",
              absl::StrCat("openai/", id).c_str(), 201088, 2880, 2880, layers,
              64, 8, 64, 131072}),
        {.num_routed_experts = experts,
         .experts_per_token = 4,
         .expert_intermediate_size = 2880});
    m.source = absl::StrCat("openai/", id);
    m.qkv_bias = m.attention_out_bias = true;
    m.attention_sinks = m.router_bias = m.ffn_bias = true;
    m.sliding_window = 128;
    m.layers.assign(static_cast<size_t>(layers), LayerSpec{});
    for (size_t i = 0; i < m.layers.size(); ++i) {
      m.layers[i].sliding = i % 2 == 0;  // layer_types[0] is sliding
      m.layers[i].ffn = FfnLayerKind::kMoe;
    }
    c.push_back(std::move(m));
  }
}

void AddLlama4(std::vector<ModelConfig>& c) {
  // --- Llama 4 (text model; MoE with one shared expert, chunked attention
  // on RoPE layers, every 4th layer NoPE and global) ---
  // meta-llama/Llama-4-Scout-17B-16E (text_config of config.json): 48
  // layers, all MoE (interleave_moe_layer_step 1), 16 experts top-1 of
  // width 8192 + a shared one, 40 heads of 128, 8 KV heads, vocab 202048,
  // attention_chunk_size 8192, no_rope_layers 1,1,1,0 repeated, 262144
  // positions (the config quoted in vllm-project/vllm issue "Llama4 always
  // go OOM when using LLama4ForCausalLM").
  // meta-llama/Llama-4-Maverick-17B-128E: 128 experts, every 2nd layer MoE
  // (interleave_moe_layer_step 2: layers 1, 3, ...), dense layers of
  // intermediate_size_mlp 16384, 1048576 positions (text_config as in
  // TensorRT-LLM's LLAMA_4_MAVERICK_TWO_LAYER_CONFIG test copy).
  for (const auto& [id, name, source, experts, step, positions] :
       {std::tuple{"llama-4-scout", "Llama-4-Scout-17B-16E",
                   "meta-llama/Llama-4-Scout-17B-16E", 16, 1, 262144},
        std::tuple{"llama-4-maverick", "Llama-4-Maverick-17B-128E",
                   "meta-llama/Llama-4-Maverick-17B-128E", 128, 2, 1048576}}) {
    ModelConfig m = WithMoe(
        Make({id, name, "Llama4ForConditionalGeneration", source, 202048, 5120,
              16384, 48, 40, 8, 128, positions}),
        {.num_routed_experts = experts,
         .experts_per_token = 1,
         .num_shared_experts = 1,
         .expert_intermediate_size = 8192,
         .shared_expert_intermediate_size = 8192});
    m.attention_chunk_size = 8192;  // attention_chunk_size
    m.layers.assign(48, LayerSpec{});
    for (int i = 0; i < 48; ++i) {
      LayerSpec& l = m.layers[static_cast<size_t>(i)];
      l.chunked = (i + 1) % 4 != 0;  // RoPE layers are chunked
      l.ffn = (i + 1) % step == 0 ? FfnLayerKind::kMoe : FfnLayerKind::kDense;
    }
    c.push_back(std::move(m));
  }
}

void AddNemotronNas(std::vector<ModelConfig>& c) {
  // --- Nemotron NAS (DeciLM block_configs: per-layer GQA and FFN width,
  // skipped attention) ---
  // nvidia/Llama-3_3-Nemotron-Super-49B-v1 (config.json copied in
  // tests/fixtures/configs/llama-3.3-nemotron-super-49b.json): 80 layers,
  // hidden 8192, 64 heads of 128; attention layers have n_heads_in_group 8
  // (8 KV heads), 31 layers skip attention (no_op); FFN widths from
  // ffn_mult by DeciLM's rule (int(2 mult 8192 / 3) rounded up to 256).
  {
    ModelConfig m = Make({"llama-3.3-nemotron-super-49b",
                          "Llama-3.3-Nemotron-Super-49B-v1", "DeciLMForCausalLM",
                          "nvidia/Llama-3_3-Nemotron-Super-49B-v1", 128256,
                          8192, 0, 80, 64, 8, 128, 131072});
    // A: attention with 8 KV heads; N: no-op attention. Widths per layer.
    constexpr char kAttention[] =
        "AAAAAANNAAANAAAAAAAAAAAAAAAAAAAAAAAAAAAAAANNNNNNNNNNANNNNNNNNNNNNNNNNN"
        "NAAAAAAAAA";
    constexpr int64_t kWidth[80] = {
        14336, 28672, 28672, 28672, 28672, 28672, 14336, 14336, 28672, 28672,
        28672, 17920, 28672, 28672, 28672, 28672, 28672, 28672, 28672, 28672,
        28672, 28672, 28672, 28672, 28672, 28672, 28672, 28672, 28672, 28672,
        28672, 28672, 28672, 28672, 28672, 28672, 28672, 28672, 28672, 28672,
        28672, 28672, 7168,  14336, 14336, 7168,  28672, 7168,  14336, 7168,
        7168,  7168,  28672, 7168,  5632,  5632,  7168,  5632,  5632,  5632,
        7168,  7168,  2816,  2816,  5632,  5632,  2816,  2816,  5632,  2816,
        2816,  28672, 28672, 28672, 28672, 28672, 28672, 28672, 28672, 28672};
    m.layers.assign(80, LayerSpec{});
    for (size_t i = 0; i < 80; ++i) {
      LayerSpec& l = m.layers[i];
      if (kAttention[i] == 'N') {
        l.attention = AttentionKind::kNone;
      } else {
        l.num_kv_heads = 8;
      }
      l.intermediate_size = kWidth[i];
    }
    c.push_back(std::move(m));
  }
}

std::vector<ModelConfig> BuildCatalog() {
  std::vector<ModelConfig> c;
  AddLlama2(c);
  AddLlama3(c);
  AddMistral(c);
  AddQwen(c);
  AddDeepSeek(c);
  AddGemma(c);
  AddPhi(c);
  AddKimi(c);
  AddGptJ(c);
  AddGptOss(c);
  AddLlama4(c);
  AddNemotronNas(c);
  internal::AppendHybridModels(&c);
  std::sort(c.begin(), c.end(), [](const ModelConfig& a, const ModelConfig& b) {
    return a.id < b.id;
  });
  return c;
}

}  // namespace

const std::vector<ModelConfig>& BuiltinModels() {
  static const std::vector<ModelConfig>* const kModels =
      new std::vector<ModelConfig>(BuildCatalog());
  return *kModels;
}

absl::StatusOr<ModelConfig> FindModel(std::string_view id) {
  const absl::string_view query(id.data(), id.size());
  // Hit path without allocation: catalog ids are lower case, so comparing
  // ignoring case equals comparing with the lower-cased query. The HF
  // repository id is accepted too ("meta-llama/Llama-2-7b-hf").
  for (const ModelConfig& m : BuiltinModels()) {
    if (absl::EqualsIgnoreCase(m.id, query) ||
        absl::EqualsIgnoreCase(m.source, query)) {
      return m;
    }
  }
  // Miss: only now build the id list for the close-name suggestion.
  const std::string wanted = absl::AsciiStrToLower(query);
  std::vector<std::string> ids;
  ids.reserve(BuiltinModels().size());
  for (const ModelConfig& m : BuiltinModels()) ids.push_back(m.id);
  return absl::NotFoundError(absl::StrCat(
      "unknown model \"", wanted,
      "\"; closest: ", absl::StrJoin(ClosestNames(wanted, ids), ", ")));
}

}  // namespace ridgeline::engine
