// Parameter counts of the heterogeneous-layer and newer model classes
// (Nemotron NAS, Llama 4, gpt-oss, Kimi-K2, GPT-J), each derived by hand and
// checked against the published total, and the same shapes parsed from
// their config.json.
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "ridgeline/engine/model.h"

namespace ridgeline::engine {
namespace {

ModelConfig Find(const char* id) {
  auto m = FindModel(id);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : ModelConfig{};
}

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(RIDGELINE_CONFIG_FIXTURES) + "/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ModelConfig Parse(const std::string& json, const char* id) {
  auto m = ParseHuggingFaceConfig(json, id);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : ModelConfig{};
}

TEST(NewModelsTest, GptOss120bMatchesTheModelCard) {
  const ParameterCounts c = CountParameters(Find("gpt-oss-120b"));
  // h = 2880. Attention: q 2880 x 4096 + 4096 bias = 11,800,576; k, v 2880 x
  //   512 + 512 = 1,475,072 each; o 4096 x 2880 + 2880 = 11,799,360; sinks
  //   64 -> 26,550,144. Router 2880 x 128 + 128 = 368,768. Norms 5,760.
  // Expert: gate_up 2880 x 5760 + 5760, down 2880 x 2880 + 2880 =
  //   24,891,840; 128 of them 3,186,155,520.
  // Layer 26,550,144 + 368,768 + 5,760 + 3,186,155,520 = 3,213,080,192;
  //   x 36 = 115,670,886,912. Embedding and head 2 x 201088 x 2880 =
  //   1,158,266,880; final norm 2,880. Total 116,829,156,672: the card's
  //   116.83 B.
  EXPECT_DOUBLE_EQ(c.total, 116829156672.0);
  // Active: 4 experts 99,567,360 per layer -> (26,924,672 + 99,567,360) x
  //   36 = 4,553,713,152 + 1,158,269,760 = 5,711,982,912. The card's 5.13 B
  //   leaves out the input embedding (579,133,440): 5,132,849,472.
  EXPECT_DOUBLE_EQ(c.active_per_token, 5711982912.0);
  EXPECT_NEAR((c.active_per_token - c.embedding) / 1e9, 5.13, 0.005);
}

TEST(NewModelsTest, GptOss20bMatchesTheModelCard) {
  const ParameterCounts c = CountParameters(Find("gpt-oss-20b"));
  // As 120b with 24 layers and 32 experts: router 2880 x 32 + 32 = 92,192;
  //   layer 26,550,144 + 92,192 + 5,760 + 32 x 24,891,840 = 823,187,008;
  //   x 24 = 19,756,488,192 + 1,158,269,760 = 20,914,757,184 (card: 20.91 B).
  EXPECT_DOUBLE_EQ(c.total, 20914757184.0);
  // Active (26,648,096 + 4 x 24,891,840) x 24 + 1,158,269,760 =
  //   4,187,440,704; less the input embedding 3,608,307,264 (card: 3.61 B).
  EXPECT_DOUBLE_EQ(c.active_per_token, 4187440704.0);
  EXPECT_NEAR((c.active_per_token - c.embedding) / 1e9, 3.61, 0.005);
  // KV: 24 layers x 2 x 8 x 64 = 24,576 elements per token; half the layers
  // keep only 128 tokens.
  EXPECT_DOUBLE_EQ(KvElementsPerToken(Find("gpt-oss-20b")), 24576.0);
}

TEST(NewModelsTest, GptOss20bConfigParsesToTheCatalogShape) {
  const ModelConfig m = Parse(ReadFixture("gpt-oss-20b.json"), "gpt-oss-20b");
  const ModelConfig cat = Find("gpt-oss-20b");
  EXPECT_EQ(m.layers, cat.layers);
  EXPECT_EQ(m.sliding_window, 128);
  EXPECT_TRUE(m.attention_sinks && m.router_bias && m.ffn_bias);
  EXPECT_DOUBLE_EQ(CountParameters(m).total, CountParameters(cat).total);
  EXPECT_DOUBLE_EQ(CountParameters(m).active_per_token,
                   CountParameters(cat).active_per_token);
}

TEST(NewModelsTest, Llama4ScoutAndMaverick) {
  const ParameterCounts s = CountParameters(Find("llama-4-scout"));
  // h = 5120. Attention q, o 5120 x 5120 = 26,214,400 each; k, v 5120 x
  //   1024 = 5,242,880 each -> 62,914,560; norms 10,240.
  // Expert 3 x 5120 x 8192 = 125,829,120; router 5120 x 16 = 81,920.
  // Scout layer (all 48 MoE): 62,914,560 + 10,240 + 81,920 + 17 x
  //   125,829,120 = 2,202,101,760; x 48 = 105,700,884,480 + embedding and
  //   head 2 x 202048 x 5120 = 2,068,971,520 + 5,120 = 107,769,861,120.
  //   The published 109 B includes the vision encoder; the text model is
  //   107.8 B.
  EXPECT_DOUBLE_EQ(s.total, 107769861120.0);
  // Active: (62,914,560 + 10,240 + 81,920 + 2 x 125,829,120) x 48 =
  //   15,103,918,080 + 2,068,976,640 = 17,172,894,720: the "17B active".
  EXPECT_DOUBLE_EQ(s.active_per_token, 17172894720.0);
  const ParameterCounts v = CountParameters(Find("llama-4-maverick"));
  // Maverick: 24 dense layers (FFN 3 x 5120 x 16384 = 251,658,240) and 24
  //   MoE layers (router 655,360 + 129 x 125,829,120 = 16,232,611,840).
  //   48 x 62,924,800 = 3,020,390,400; + 24 x 251,658,240 = 6,039,797,760;
  //   + 24 x 16,232,611,840 = 389,582,684,160; + 2,068,976,640 =
  //   400,711,848,960: the published 400 B.
  EXPECT_DOUBLE_EQ(v.total, 400711848960.0);
  // Active: 3,020,390,400 + 6,039,797,760 + 24 x (655,360 + 2 x
  //   125,829,120) + 2,068,976,640 = 17,184,691,200 (17 B active).
  EXPECT_DOUBLE_EQ(v.active_per_token, 17184691200.0);
}

TEST(NewModelsTest, Llama4ScoutTextConfigParses) {
  // The language model of meta-llama/Llama-4-Scout-17B-16E's config.json
  // (its text_config).
  const ModelConfig m = Parse(ReadFixture("llama-4-scout-17b-16e.json"),
                              "llama-4-scout");
  const ModelConfig cat = Find("llama-4-scout");
  EXPECT_EQ(m.layers, cat.layers);
  EXPECT_EQ(m.attention_chunk_size, 8192);  // attention_chunk_size
  EXPECT_EQ(m.sliding_window, 0);
  // 36 RoPE (chunked) layers, 12 NoPE global ones.
  int chunked = 0;
  for (const LayerSpec& l : m.layers) chunked += l.chunked ? 1 : 0;
  EXPECT_EQ(chunked, 36);
  EXPECT_DOUBLE_EQ(CountParameters(m).total, CountParameters(cat).total);
  EXPECT_DOUBLE_EQ(CountParameters(m).active_per_token,
                   CountParameters(cat).active_per_token);
}

TEST(NewModelsTest, Llama4InterleaveStepWithoutAListMatchesMaverick) {
  // Maverick's text_config fields (TensorRT-LLM's
  // LLAMA_4_MAVERICK_TWO_LAYER_CONFIG with its 48 layers): no moe_layers
  // list, so every 2nd layer (1, 3, ...) is MoE; no no_rope_layers list, so
  // every 4th layer is NoPE (global).
  const ModelConfig m = Parse(R"({
    "model_type": "llama4_text", "architectures": ["Llama4ForCausalLM"],
    "attention_chunk_size": 8192, "head_dim": 128, "hidden_size": 5120,
    "interleave_moe_layer_step": 2, "intermediate_size": 8192,
    "intermediate_size_mlp": 16384, "max_position_embeddings": 1048576,
    "num_attention_heads": 40, "num_experts_per_tok": 1,
    "num_hidden_layers": 48, "num_key_value_heads": 8,
    "num_local_experts": 128, "tie_word_embeddings": false,
    "vocab_size": 202048})",
                              "llama-4-maverick");
  const ModelConfig cat = Find("llama-4-maverick");
  EXPECT_EQ(m.layers, cat.layers);
  EXPECT_EQ(m.layers[0].ffn, FfnLayerKind::kDense);
  EXPECT_EQ(m.layers[1].ffn, FfnLayerKind::kMoe);
  EXPECT_FALSE(m.layers[3].chunked);  // layer 4 (1-based) is NoPE
  EXPECT_TRUE(m.layers[0].chunked);   // RoPE layers attend within chunks
  EXPECT_EQ(m.attention_chunk_size, 8192);
  EXPECT_DOUBLE_EQ(CountParameters(m).total, 400711848960.0);
}

TEST(NewModelsTest, KimiK2IsDeepseekV3ShapedAt384Experts) {
  const ParameterCounts c = CountParameters(Find("kimi-k2"));
  // h = 7168, 64 heads. MLA: q_a 7168 x 1536 = 11,010,048; 1,536; q_b 1536 x
  //   64 x 192 = 18,874,368; kv_a 7168 x 576 = 4,128,768; 512; kv_b 512 x
  //   64 x 256 = 8,388,608; o 64 x 128 x 7168 = 58,720,256 -> 101,124,096 +
  //   norms 14,336 = 101,138,432; x 61 = 6,169,444,352.
  // Layer 0 dense 3 x 7168 x 18432 = 396,361,728.
  // Expert 3 x 7168 x 2048 = 44,040,192; router 7168 x 384 + 384 =
  //   2,752,896; MoE layer 2,752,896 + 385 x 44,040,192 = 16,958,226,816;
  //   x 60 = 1,017,493,608,960.
  // Embedding and head 2 x 163840 x 7168 = 2,348,810,240; final norm 7,168.
  // Total 1,026,408,232,448: the published "1 T total".
  EXPECT_DOUBLE_EQ(c.total, 1026408232448.0);
  // Active MoE layer 2,752,896 + 9 x 44,040,192 = 399,114,624; x 60 =
  //   23,946,877,440; + 6,169,444,352 + 396,361,728 + 2,348,817,408 =
  //   32,861,500,928: the published "32 B activated".
  EXPECT_DOUBLE_EQ(c.active_per_token, 32861500928.0);
  // The parser takes Kimi's model_type as DeepSeek-V3.
  const ModelConfig m = Parse(R"({
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "kimi_k2",
    "vocab_size": 163840, "hidden_size": 7168, "intermediate_size": 18432,
    "moe_intermediate_size": 2048, "num_hidden_layers": 61,
    "num_attention_heads": 64, "num_key_value_heads": 64,
    "n_routed_experts": 384, "n_shared_experts": 1, "num_experts_per_tok": 8,
    "first_k_dense_replace": 1, "moe_layer_freq": 1, "q_lora_rank": 1536,
    "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
    "v_head_dim": 128, "topk_method": "noaux_tc",
    "max_position_embeddings": 131072, "tie_word_embeddings": false})",
                              "kimi-k2");
  EXPECT_DOUBLE_EQ(CountParameters(m).total, c.total);
  auto by_type = ParseHuggingFaceConfig(
      R"({"model_type": "kimi_k2", "vocab_size": 8, "hidden_size": 64,
          "intermediate_size": 64, "num_hidden_layers": 2,
          "num_attention_heads": 4})",
      "k");
  EXPECT_TRUE(by_type.ok()) << by_type.status();
}

TEST(NewModelsTest, GptJ6bParallelBlockAndPartialRotary) {
  const ParameterCounts c = CountParameters(Find("gpt-j-6b"));
  // h = 4096. One LayerNorm (scale + bias) 8,192; attention 4 x 4096^2 =
  //   67,108,864 (no biases); fc_in 4096 x 16384 + 16384 = 67,125,248;
  //   fc_out 16384 x 4096 + 4096 = 67,112,960 -> 201,355,264; x 28 =
  //   5,637,947,392. Embedding 50400 x 4096 = 206,438,400; LM head the same
  //   + 50,400 bias; ln_f 8,192. Total 6,050,882,784.
  EXPECT_DOUBLE_EQ(c.total, 6050882784.0);
  EXPECT_DOUBLE_EQ(c.lm_head, 206438400.0 + 50400.0);
  // The model card's 6,053,381,344 counts the original JAX checkpoint,
  // 2,498,560 (0.04 %) more than the transformers module's parameters.
  EXPECT_NEAR(c.total / 6053381344.0, 1.0, 5e-4);
  const ModelConfig m = Parse(R"({
    "architectures": ["GPTJForCausalLM"], "model_type": "gptj",
    "n_embd": 4096, "n_head": 16, "n_inner": null, "n_layer": 28,
    "n_positions": 2048, "rotary_dim": 64, "vocab_size": 50400,
    "tie_word_embeddings": false})",
                              "gpt-j-6b");
  EXPECT_EQ(m.head_dim, 256);
  EXPECT_EQ(m.rotary_dim, 64);
  EXPECT_TRUE(m.parallel_attention_ffn);
  EXPECT_DOUBLE_EQ(CountParameters(m).total, c.total);
}

TEST(NewModelsTest, NemotronSuper49bFromBlockConfigs) {
  const ModelConfig m = Parse(ReadFixture("llama-3.3-nemotron-super-49b.json"),
                              "llama-3.3-nemotron-super-49b");
  const ModelConfig cat = Find("llama-3.3-nemotron-super-49b");
  EXPECT_EQ(m.layers, cat.layers);
  const ParameterCounts c = CountParameters(m);
  // 49 layers attend (GQA 64 / 8 = 8 KV heads): q, o 8192^2 = 67,108,864
  //   each, k, v 8192 x 1024 = 8,388,608 each -> 150,994,944; x 49 =
  //   7,398,752,256. 31 layers skip attention (and its norm).
  // FFN widths (DeciLM: int(2 m 8192 / 3) up to a multiple of 256):
  //   5.25 -> 28672 (49 layers), 2.625 -> 14336 (6), 1.3125 -> 7168 (10),
  //   1.0 -> 5632 (8), 0.5 -> 2816 (6), 3.28125 -> 17920 (1); 3 x 8192 x
  //   width: 34,527,510,528 + 2,113,929,216 + 1,761,607,680 +
  //   1,107,296,256 + 415,236,096 + 440,401,920 = 40,365,981,696.
  // Norms (49 + 80) x 8192 = 1,056,768. Embedding and head 2 x 128256 x
  //   8192 = 2,101,346,304; final norm 8,192.
  // Total 49,867,145,216: the published 49.9 B.
  EXPECT_DOUBLE_EQ(c.total, 49867145216.0);
  EXPECT_DOUBLE_EQ(c.active_per_token, c.total);
  // KV: 49 x 2 x 8 x 128 = 100,352 elements per token (Llama-3.3-70B: 80
  // layers, 163,840).
  EXPECT_DOUBLE_EQ(KvElementsPerToken(m), 100352.0);
  EXPECT_DOUBLE_EQ(CountParameters(cat).total, c.total);
}

TEST(NewModelsTest, BlockConfigErrorsNameTheField) {
  auto bad = ParseHuggingFaceConfig(
      R"({"architectures": ["DeciLMForCausalLM"], "vocab_size": 8,
          "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
          "block_configs": [
            {"attention": {"n_heads_in_group": 2}, "ffn": {"ffn_mult": 1.0}},
            {"attention": {"n_heads_in_group": 3}, "ffn": {"ffn_mult": 1.0}}]})",
      "m");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("block_configs[1].attention.n_heads_in_group"),
            std::string::npos)
      << bad.status();
  // Linear replacements: one hidden x hidden matmul each, no KV.
  auto linear = ParseHuggingFaceConfig(
      R"({"architectures": ["DeciLMForCausalLM"], "vocab_size": 8,
          "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 4,
          "block_configs": [{"attention": {"replace_with_linear": true},
                             "ffn": {"replace_with_linear": true}}]})",
      "m");
  ASSERT_TRUE(linear.ok()) << linear.status();
  // 2 x 64 x 64 = 8,192 + norms 2 x 64 + embeddings 2 x 8 x 64 = 1,024 +
  // final norm 64 = 9,408.
  EXPECT_DOUBLE_EQ(CountParameters(*linear).total, 9408.0);
  EXPECT_DOUBLE_EQ(KvElementsPerToken(*linear), 0.0);
}

}  // namespace
}  // namespace ridgeline::engine
