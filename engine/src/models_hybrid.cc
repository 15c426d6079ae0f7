// Catalog entries of hybrid models. Every number is copied from the
// config.json of the Hugging Face repository named in `source`; copies of
// those files are the fixtures in tests/fixtures/configs/, and
// hf_config_test.cc checks that parsing them gives these shapes.
#include "models_hybrid.h"

#include <string_view>
#include <utility>

namespace ridgeline::engine::internal {
namespace {

// Nemotron-H's hybrid_override_pattern, one layer per letter: M Mamba-2,
// * attention, - MLP, E MoE (one mixer per layer).
std::vector<LayerSpec> NemotronLayers(std::string_view pattern) {
  std::vector<LayerSpec> layers(pattern.size());
  for (size_t i = 0; i < pattern.size(); ++i) {
    LayerSpec& l = layers[i];
    l.attention = pattern[i] == 'M'   ? AttentionKind::kMamba2
                  : pattern[i] == '*' ? AttentionKind::kFull
                                      : AttentionKind::kNone;
    l.ffn = pattern[i] == '-'   ? FfnLayerKind::kDense
            : pattern[i] == 'E' ? FfnLayerKind::kMoe
                                : FfnLayerKind::kNone;
  }
  return layers;
}

ModelConfig Base(const char* id, const char* name, const char* arch,
                 const char* source) {
  ModelConfig m;
  m.id = id;
  m.display_name = name;
  m.architecture = arch;
  m.source = source;
  return m;
}

// Qwen/Qwen3-Next-80B-A3B-Instruct (the Thinking variant has the same
// config): 48 layers, every 4th gated attention (16 heads of 256, 2 KV
// heads, q/k norms, RoPE on 0.25 of each head), the others Gated
// DeltaNet (16 q/k heads of 128, 32 v heads of 128, conv 4); every layer
// MoE of 512 experts (top 10) of 512 plus one gated shared expert of 512.
// intermediate_size 5120 is unused. The MTP layer is not counted.
ModelConfig Qwen3Next80B() {
  ModelConfig m =
      Base("qwen3-next-80b-a3b", "Qwen3-Next-80B-A3B", "Qwen3NextForCausalLM",
           "Qwen/Qwen3-Next-80B-A3B-Instruct");
  m.vocab_size = 151936;
  m.hidden_size = 2048;
  m.intermediate_size = 5120;
  m.num_layers = 48;
  m.num_attention_heads = 16;
  m.num_kv_heads = 2;
  m.head_dim = 256;
  m.max_context = 262144;
  m.qk_norm = true;
  m.rotary_dim = 64;
  m.attention_output_gate = true;
  m.moe = MoeDims{.num_routed_experts = 512,
                  .experts_per_token = 10,
                  .num_shared_experts = 1,
                  .expert_intermediate_size = 512,
                  .shared_expert_intermediate_size = 512,
                  .shared_expert_gate = true};
  m.linear_attention =
      LinearAttentionDims{.kind = LinearAttentionKind::kGatedDeltaNet,
                          .num_key_heads = 16,
                          .key_head_dim = 128,
                          .num_value_heads = 32,
                          .value_head_dim = 128,
                          .conv_kernel = 4};
  m.layers.assign(48, LayerSpec{});
  for (size_t i = 0; i < m.layers.size(); ++i) {
    m.layers[i].attention = (i + 1) % 4 == 0 ? AttentionKind::kFull
                                             : AttentionKind::kLinearAttention;
    m.layers[i].ffn = FfnLayerKind::kMoe;
  }
  return m;
}

// nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16: 52 layers (23 Mamba-2 of 64
// heads x 64, state 128, 8 groups; 6 attention of 32 heads of 128, 2 KV
// heads; 23 MoE of 128 relu^2 experts of 1856, top 6, one shared of
// 3712). intermediate_size 1856 is unused (no MLP layer).
ModelConfig Nemotron3Nano30B() {
  ModelConfig m = Base("nemotron-3-nano-30b-a3b", "Nemotron-3-Nano-30B-A3B",
                       "NemotronHForCausalLM",
                       "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16");
  m.vocab_size = 131072;
  m.hidden_size = 2688;
  m.intermediate_size = 1856;
  m.num_layers = 52;
  m.num_attention_heads = 32;
  m.num_kv_heads = 2;
  m.head_dim = 128;
  m.max_context = 262144;
  m.ffn = FfnKind::kPlain;
  m.mamba = MambaDims{.num_heads = 64,
                      .head_dim = 64,
                      .state_size = 128,
                      .n_groups = 8,
                      .conv_kernel = 4,
                      .chunk_size = 128};
  m.moe = MoeDims{.num_routed_experts = 128,
                  .experts_per_token = 6,
                  .num_shared_experts = 1,
                  .expert_intermediate_size = 1856,
                  .shared_expert_intermediate_size = 3712,
                  .router_score_bias = true};
  m.layers =
      NemotronLayers("MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME");
  return m;
}

// nvidia/Nemotron-H-56B-Base-8K: 118 layers (54 Mamba-2 of 256 heads x
// 64, state 256, 8 groups; 10 attention of 64 heads of 128, 8 KV heads;
// 54 relu^2 MLPs of 32768).
ModelConfig NemotronH56B() {
  ModelConfig m = Base("nemotron-h-56b", "Nemotron-H-56B",
                       "NemotronHForCausalLM", "nvidia/Nemotron-H-56B-Base-8K");
  m.vocab_size = 131072;
  m.hidden_size = 8192;
  m.intermediate_size = 32768;
  m.num_layers = 118;
  m.num_attention_heads = 64;
  m.num_kv_heads = 8;
  m.head_dim = 128;
  m.max_context = 8192;
  m.ffn = FfnKind::kPlain;
  m.mamba = MambaDims{.num_heads = 256,
                      .head_dim = 64,
                      .state_size = 256,
                      .n_groups = 8,
                      .conv_kernel = 4,
                      .chunk_size = 128};
  m.layers = NemotronLayers(
      "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-"
      "M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-");
  return m;
}

// deepseek-ai/DeepSeek-V3.2: DeepSeek-V3's shape plus the lightning
// indexer (64 index heads of 128, top 2048) on every layer. The MTP
// layer (num_nextn_predict_layers 1) is not counted.
ModelConfig DeepseekV32() {
  ModelConfig m = Base("deepseek-v3.2", "DeepSeek-V3.2",
                       "DeepseekV32ForCausalLM", "deepseek-ai/DeepSeek-V3.2");
  m.vocab_size = 129280;
  m.hidden_size = 7168;
  m.intermediate_size = 18432;
  m.num_layers = 61;
  m.num_attention_heads = 128;
  m.num_kv_heads = 128;
  m.max_context = 163840;
  m.mla = MlaDims{.q_lora_rank = 1536,
                  .kv_lora_rank = 512,
                  .qk_nope_head_dim = 128,
                  .qk_rope_head_dim = 64,
                  .v_head_dim = 128};
  m.head_dim = 128 + 64;
  m.moe = MoeDims{.num_routed_experts = 256,
                  .experts_per_token = 8,
                  .num_shared_experts = 1,
                  .expert_intermediate_size = 2048,
                  .shared_expert_intermediate_size = 2048,
                  .first_dense_layers = 3,
                  .router_score_bias = true};
  m.dsa = DsaDims{.index_heads = 64, .index_head_dim = 128, .index_topk = 2048};
  m.mtp_layers = 1;
  return m;
}

// zai-org/GLM-4.5-Air: 46 layers of GQA (96 heads of 128, 8 KV heads,
// q/k/v biases, no q/k norms, RoPE on half of each head); layer 0 a
// dense gated MLP of 10944, layers 1-45 MoE of 128 experts (top 8) of
// 1408 plus one shared expert of 1408, sigmoid router with a score bias.
// The MTP layer (num_nextn_predict_layers 1) is not counted.
ModelConfig Glm45Air() {
  ModelConfig m = Base("glm-4.5-air", "GLM-4.5-Air", "Glm4MoeForCausalLM",
                       "zai-org/GLM-4.5-Air");
  m.vocab_size = 151552;
  m.hidden_size = 4096;
  m.intermediate_size = 10944;
  m.num_layers = 46;
  m.num_attention_heads = 96;
  m.num_kv_heads = 8;
  m.head_dim = 128;
  m.max_context = 131072;
  m.qkv_bias = true;
  m.rotary_dim = 64;
  m.moe = MoeDims{.num_routed_experts = 128,
                  .experts_per_token = 8,
                  .num_shared_experts = 1,
                  .expert_intermediate_size = 1408,
                  .shared_expert_intermediate_size = 1408,
                  .first_dense_layers = 1,
                  .router_score_bias = true};
  m.mtp_layers = 1;
  return m;
}

// MiniMaxAI/MiniMax-M1-80k (config.json as in the MiniMax-AI/MiniMax-M1
// repository; -40k has the same shape): 80 layers, every 8th softmax
// attention (64 heads of 128, 8 KV heads, RoPE on 64 of 128), the others
// lightning attention (64 heads, dk = dv = 128, blocks of 256); every
// layer MoE of 32 experts (top 2) of 9216, no shared expert.
ModelConfig MiniMaxM1() {
  ModelConfig m = Base("minimax-m1", "MiniMax-M1", "MiniMaxM1ForCausalLM",
                       "MiniMaxAI/MiniMax-M1-80k");
  m.vocab_size = 200064;
  m.hidden_size = 6144;
  m.intermediate_size = 9216;
  m.num_layers = 80;
  m.num_attention_heads = 64;
  m.num_kv_heads = 8;
  m.head_dim = 128;
  m.max_context = 10240000;
  m.rotary_dim = 64;
  m.moe = MoeDims{.num_routed_experts = 32,
                  .experts_per_token = 2,
                  .expert_intermediate_size = 9216};
  m.linear_attention =
      LinearAttentionDims{.kind = LinearAttentionKind::kLightning,
                          .num_key_heads = 64,
                          .key_head_dim = 128,
                          .num_value_heads = 64,
                          .value_head_dim = 128,
                          .conv_kernel = 0,
                          .chunk_size = 256};
  m.layers.assign(80, LayerSpec{});
  for (size_t i = 0; i < m.layers.size(); ++i) {
    m.layers[i].attention = (i + 1) % 8 == 0 ? AttentionKind::kFull
                                             : AttentionKind::kLinearAttention;
    m.layers[i].ffn = FfnLayerKind::kMoe;
  }
  return m;
}

// ai21labs/AI21-Jamba-1.5-Mini: 32 layers; attention (32 heads of 128, 8
// KV heads, no positional encoding) at layers 4, 12, 20, 28, the others
// Mamba-1 (d_inner 8192, state 16, dt rank 256, conv 4 with bias); odd
// layers MoE of 16 experts (top 2) of 14336, even layers a dense MLP of
// 14336.
ModelConfig Jamba15Mini() {
  ModelConfig m = Base("jamba-1.5-mini", "Jamba-1.5-Mini", "JambaForCausalLM",
                       "ai21labs/AI21-Jamba-1.5-Mini");
  m.vocab_size = 65536;
  m.hidden_size = 4096;
  m.intermediate_size = 14336;
  m.num_layers = 32;
  m.num_attention_heads = 32;
  m.num_kv_heads = 8;
  m.head_dim = 128;
  m.max_context = 262144;
  m.mamba1 = Mamba1Dims{.inner = 8192,
                        .state_size = 16,
                        .dt_rank = 256,
                        .conv_kernel = 4,
                        .conv_bias = true,
                        .proj_bias = false,
                        .inner_norms = true};
  m.moe = MoeDims{.num_routed_experts = 16,
                  .experts_per_token = 2,
                  .expert_intermediate_size = 14336};
  m.layers.assign(32, LayerSpec{});
  for (size_t i = 0; i < m.layers.size(); ++i) {
    m.layers[i].attention =
        i % 8 == 4 ? AttentionKind::kFull : AttentionKind::kMamba1;
    m.layers[i].ffn = i % 2 == 1 ? FfnLayerKind::kMoe : FfnLayerKind::kDense;
  }
  return m;
}

// mistralai/Mamba-Codestral-7B-v0.1: 64 Mamba-2 blocks (128 heads x 64,
// state 128, 8 groups, conv 4, chunk 256), no attention and no FFN; LM
// head untied. No position limit (the engine's maximum context).
ModelConfig MambaCodestral7B() {
  ModelConfig m = Base("mamba-codestral-7b", "Mamba-Codestral-7B",
                       "Mamba2ForCausalLM", "mistralai/Mamba-Codestral-7B-v0.1");
  m.vocab_size = 32768;
  m.hidden_size = 4096;
  m.intermediate_size = 0;
  m.num_layers = 64;
  m.num_attention_heads = 128;  // the mixer's heads; no layer attends
  m.num_kv_heads = 128;
  m.head_dim = 64;
  m.max_context = int64_t{1} << 26;
  m.mamba = MambaDims{.num_heads = 128,
                      .head_dim = 64,
                      .state_size = 128,
                      .n_groups = 8,
                      .conv_kernel = 4,
                      .chunk_size = 256};
  m.layers.assign(64, LayerSpec{.attention = AttentionKind::kMamba2,
                                .ffn = FfnLayerKind::kNone});
  return m;
}

// tiiuae/Falcon-H1-0.5B-Base: 36 layers, each GQA attention (8 heads of
// 64, 2 KV heads, RoPE) beside a Mamba-2 mixer (24 heads x 64, state 128,
// 1 group, conv 4 with bias, chunk 128, no gated norm), then a gated SiLU
// MLP of 2048; LM head untied.
ModelConfig FalconH1_0_5B() {
  ModelConfig m = Base("falcon-h1-0.5b", "Falcon-H1-0.5B",
                       "FalconH1ForCausalLM", "tiiuae/Falcon-H1-0.5B-Base");
  m.vocab_size = 32784;
  m.hidden_size = 1024;
  m.intermediate_size = 2048;
  m.num_layers = 36;
  m.num_attention_heads = 8;
  m.num_kv_heads = 2;
  m.head_dim = 64;
  m.max_context = 16384;
  m.mamba = MambaDims{.num_heads = 24,
                      .head_dim = 64,
                      .state_size = 128,
                      .n_groups = 1,
                      .conv_kernel = 4,
                      .chunk_size = 128,
                      .conv_bias = true,
                      .gated_norm = false};
  m.layers.assign(36, LayerSpec{.attention = AttentionKind::kFull,
                                .parallel_mamba = true});
  return m;
}

// moonshotai/Kimi-Linear-48B-A3B-Instruct: 27 layers, MLA (32 heads, no
// q_lora, KV latent 512, qk 128 + 64, v 128, no rotary) at the 1-based
// layers 4, 8, 12, 16, 20, 24, 27, Kimi Delta Attention (32 heads, dk = dv
// = 128, short convs of 4) at the others; layer 1 a gated MLP of 9216,
// layers 2-27 MoE of 256 experts (top 8) of 1024 plus one shared expert of
// 1024, sigmoid router with a score bias; LM head untied; 1 M context
// (model_max_length).
ModelConfig KimiLinear48B() {
  ModelConfig m =
      Base("kimi-linear-48b-a3b", "Kimi-Linear-48B-A3B", "KimiLinearForCausalLM",
           "moonshotai/Kimi-Linear-48B-A3B-Instruct");
  m.vocab_size = 163840;
  m.hidden_size = 2304;
  m.intermediate_size = 9216;
  m.num_layers = 27;
  m.num_attention_heads = 32;
  m.num_kv_heads = 32;
  m.max_context = 1048576;
  m.mla = MlaDims{.q_lora_rank = 0,
                  .kv_lora_rank = 512,
                  .qk_nope_head_dim = 128,
                  .qk_rope_head_dim = 64,
                  .v_head_dim = 128};
  m.head_dim = 128 + 64;
  m.moe = MoeDims{.num_routed_experts = 256,
                  .experts_per_token = 8,
                  .num_shared_experts = 1,
                  .expert_intermediate_size = 1024,
                  .shared_expert_intermediate_size = 1024,
                  .first_dense_layers = 1,
                  .router_score_bias = true};
  m.linear_attention =
      LinearAttentionDims{.kind = LinearAttentionKind::kKimiDelta,
                          .num_key_heads = 32,
                          .key_head_dim = 128,
                          .num_value_heads = 32,
                          .value_head_dim = 128,
                          .conv_kernel = 4,
                          .chunk_size = 64};
  m.layers.assign(27, LayerSpec{});
  for (size_t i = 0; i < m.layers.size(); ++i) {
    const size_t layer = i + 1;  // the config's 1-based numbering
    m.layers[i].attention = layer % 4 == 0 || layer == 27
                                ? AttentionKind::kFull
                                : AttentionKind::kLinearAttention;
    m.layers[i].ffn = i == 0 ? FfnLayerKind::kDense : FfnLayerKind::kMoe;
  }
  return m;
}

}  // namespace

void AppendHybridModels(std::vector<ModelConfig>* c) {
  c->push_back(Qwen3Next80B());
  c->push_back(Nemotron3Nano30B());
  c->push_back(NemotronH56B());
  c->push_back(DeepseekV32());
  c->push_back(Glm45Air());
  c->push_back(MiniMaxM1());
  c->push_back(Jamba15Mini());
  c->push_back(MambaCodestral7B());
  c->push_back(FalconH1_0_5B());
  c->push_back(KimiLinear48B());
}

}  // namespace ridgeline::engine::internal
