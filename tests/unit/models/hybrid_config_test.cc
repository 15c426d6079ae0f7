// Published config.json files of hybrid and sparse-attention models: they
// parse to the catalog's shapes, their parameter counts match the
// published totals, the known traps of the files are handled, and bad
// patterns are refused naming the key.
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "ridgeline/engine/model.h"

namespace ridgeline::engine {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(RIDGELINE_CONFIG_FIXTURES) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << name;
  return ss.str();
}

ModelConfig Parse(const std::string& file, const std::string& id) {
  absl::StatusOr<ModelConfig> m = ParseHuggingFaceConfig(Fixture(file), id);
  EXPECT_TRUE(m.ok()) << file << ": " << m.status();
  return m.ok() ? *m : ModelConfig{};
}

void ExpectSameHybridShape(const ModelConfig& a, const ModelConfig& b) {
  EXPECT_EQ(a.architecture, b.architecture);
  EXPECT_EQ(a.vocab_size, b.vocab_size);
  EXPECT_EQ(a.hidden_size, b.hidden_size);
  EXPECT_EQ(a.num_layers, b.num_layers);
  EXPECT_EQ(a.num_attention_heads, b.num_attention_heads);
  EXPECT_EQ(a.num_kv_heads, b.num_kv_heads);
  EXPECT_EQ(a.head_dim, b.head_dim);
  EXPECT_EQ(a.max_context, b.max_context);
  EXPECT_EQ(a.ffn, b.ffn);
  EXPECT_EQ(a.qk_norm, b.qk_norm);
  EXPECT_EQ(a.qkv_bias, b.qkv_bias);
  EXPECT_EQ(a.rotary_dim, b.rotary_dim);
  EXPECT_EQ(a.attention_output_gate, b.attention_output_gate);
  EXPECT_EQ(a.mtp_layers, b.mtp_layers);
  EXPECT_TRUE(a.layers == b.layers);
  ASSERT_EQ(a.mamba.has_value(), b.mamba.has_value());
  if (a.mamba) {
    EXPECT_EQ(a.mamba->num_heads, b.mamba->num_heads);
    EXPECT_EQ(a.mamba->head_dim, b.mamba->head_dim);
    EXPECT_EQ(a.mamba->state_size, b.mamba->state_size);
    EXPECT_EQ(a.mamba->n_groups, b.mamba->n_groups);
    EXPECT_EQ(a.mamba->conv_kernel, b.mamba->conv_kernel);
    EXPECT_EQ(a.mamba->chunk_size, b.mamba->chunk_size);
  }
  ASSERT_EQ(a.mamba1.has_value(), b.mamba1.has_value());
  if (a.mamba1) {
    EXPECT_EQ(a.mamba1->inner, b.mamba1->inner);
    EXPECT_EQ(a.mamba1->state_size, b.mamba1->state_size);
    EXPECT_EQ(a.mamba1->dt_rank, b.mamba1->dt_rank);
    EXPECT_EQ(a.mamba1->conv_kernel, b.mamba1->conv_kernel);
    EXPECT_EQ(a.mamba1->conv_bias, b.mamba1->conv_bias);
    EXPECT_EQ(a.mamba1->proj_bias, b.mamba1->proj_bias);
    EXPECT_EQ(a.mamba1->inner_norms, b.mamba1->inner_norms);
  }
  ASSERT_EQ(a.linear_attention.has_value(), b.linear_attention.has_value());
  if (a.linear_attention) {
    EXPECT_EQ(a.linear_attention->num_key_heads,
              b.linear_attention->num_key_heads);
    EXPECT_EQ(a.linear_attention->num_value_heads,
              b.linear_attention->num_value_heads);
    EXPECT_EQ(a.linear_attention->key_head_dim,
              b.linear_attention->key_head_dim);
    EXPECT_EQ(a.linear_attention->value_head_dim,
              b.linear_attention->value_head_dim);
    EXPECT_EQ(a.linear_attention->conv_kernel, b.linear_attention->conv_kernel);
    EXPECT_EQ(a.linear_attention->kind, b.linear_attention->kind);
    EXPECT_EQ(a.linear_attention->chunk_size, b.linear_attention->chunk_size);
  }
  ASSERT_EQ(a.dsa.has_value(), b.dsa.has_value());
  if (a.dsa) {
    EXPECT_EQ(a.dsa->index_heads, b.dsa->index_heads);
    EXPECT_EQ(a.dsa->index_head_dim, b.dsa->index_head_dim);
    EXPECT_EQ(a.dsa->index_topk, b.dsa->index_topk);
  }
  ASSERT_EQ(a.moe.has_value(), b.moe.has_value());
  if (a.moe) {
    EXPECT_EQ(a.moe->num_routed_experts, b.moe->num_routed_experts);
    EXPECT_EQ(a.moe->experts_per_token, b.moe->experts_per_token);
    EXPECT_EQ(a.moe->num_shared_experts, b.moe->num_shared_experts);
    EXPECT_EQ(a.moe->first_dense_layers, b.moe->first_dense_layers);
    EXPECT_EQ(a.moe->router_score_bias, b.moe->router_score_bias);
  }
  EXPECT_DOUBLE_EQ(CountParameters(a).total, CountParameters(b).total);
  EXPECT_DOUBLE_EQ(CountParameters(a).active_per_token,
                   CountParameters(b).active_per_token);
  EXPECT_DOUBLE_EQ(KvElementsPerToken(a), KvElementsPerToken(b));
  EXPECT_DOUBLE_EQ(StateElementsPerSequence(a), StateElementsPerSequence(b));
}

struct Case {
  const char* file;
  const char* id;
};
class HybridFixtureTest : public testing::TestWithParam<Case> {};

TEST_P(HybridFixtureTest, ParsesToTheCatalogShape) {
  const ModelConfig parsed = Parse(GetParam().file, GetParam().id);
  absl::StatusOr<ModelConfig> catalog = FindModel(GetParam().id);
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  ExpectSameHybridShape(parsed, *catalog);
  EXPECT_TRUE(ValidateModel(*catalog).ok()) << ValidateModel(*catalog);
}

INSTANTIATE_TEST_SUITE_P(
    Published, HybridFixtureTest,
    testing::Values(Case{"qwen3-next-80b-a3b.json", "qwen3-next-80b-a3b"},
                    Case{"nemotron-3-nano-30b-a3b.json",
                         "nemotron-3-nano-30b-a3b"},
                    Case{"nemotron-h-56b-base-8k.json", "nemotron-h-56b"},
                    Case{"deepseek-v3.2.json", "deepseek-v3.2"},
                    Case{"glm-4.5-air.json", "glm-4.5-air"},
                    Case{"minimax-m1.json", "minimax-m1"},
                    Case{"jamba-1.5-mini.json", "jamba-1.5-mini"},
                    Case{"mamba-codestral-7b.json", "mamba-codestral-7b"},
                    Case{"falcon-h1-0.5b.json", "falcon-h1-0.5b"},
                    Case{"kimi-linear-48b-a3b.json", "kimi-linear-48b-a3b"}),
    [](const testing::TestParamInfo<Case>& info) {
      std::string name = info.param.id;
      for (char& ch : name) {
        if (ch == '-' || ch == '.') ch = '_';
      }
      return name;
    });

double Within(double got, double published) {
  return std::abs(got - published) / published;
}

TEST(HybridParameterTest, Qwen3Next80B) {
  const ParameterCounts c =
      CountParameters(FindModel("qwen3-next-80b-a3b").value());
  // Gated attention layer: q_proj 2048 x (2 x 16 x 256) = 16,777,216 (the
  // query and its output gate), k, v 2 x 2048 x 512 = 2,097,152, o_proj
  // 4096 x 2048 = 8,388,608, q/k norms 512 -> 27,263,488; x 12 =
  // 327,161,856.
  // Gated DeltaNet layer: in_proj_qkvz 2048 x (2 x 2048 + 2 x 4096) =
  // 25,165,824, in_proj_ba 2048 x 64 = 131,072, conv 8192 x 4 = 32,768,
  // A_log + dt_bias 64, norm 128, out_proj 4096 x 2048 = 8,388,608 ->
  // 33,718,464; x 36 = 1,213,864,704.
  // MoE layer: router 2048 x 512 = 1,048,576; shared 3 x 2048 x 512 +
  // gate 2048 = 3,147,776; experts 512 x 3,145,728 = 1,610,612,736 ->
  // 1,614,809,088 + 2 norms 4096; x 48 = 77,511,032,832.
  // Embedding + LM head 2 x 151936 x 2048 = 622,329,856; final norm 2048.
  // Total 79,674,391,296.
  EXPECT_DOUBLE_EQ(c.total, 79674391296.0);
  // Published: 80 B (Qwen/Qwen3-Next-80B-A3B-Instruct model card, "80B in
  // total", MTP not loaded by the HF class): 0.4 % off.
  EXPECT_LT(Within(c.total, 80e9), 0.01);
  // Active MoE layer: router + shared 4,196,352 + 10 x 3,145,728 =
  // 35,653,632 + norms 4096; x 48 = 1,711,570,944. Active = 327,161,856 +
  // 1,213,864,704 + 1,711,570,944 + 622,331,904 = 3,874,929,408; without
  // the input embedding (a gather, 311,164,928) 3,563,764,480. The model
  // card's "3B activated" is rounded to one digit, so the golden is the
  // hand count.
  EXPECT_DOUBLE_EQ(c.active_per_token, 3874929408.0);
}

TEST(HybridParameterTest, Nemotron3Nano) {
  const ParameterCounts c =
      CountParameters(FindModel("nemotron-3-nano-30b-a3b").value());
  // Mamba-2 layer (64 heads x 64 = 4096 inner, 8 x 128 B/C): in_proj 2688
  // x (8192 + 2048 + 64) = 27,697,152; conv (4096 + 2048) x 5 = 30,720;
  // 3 x 64 = 192; norm 4096; out_proj 4096 x 2688 = 11,010,048 ->
  // 38,742,208 + layer norm 2688; x 23 = 891,132,608.
  // Attention layer: 2688 x 4096 x 2 + 2 x 2688 x 256 = 23,396,352 +
  // 2688; x 6 = 140,394,240.
  // MoE layer (relu^2, two matrices): router 2688 x 128 + 128 bias =
  // 344,192; shared 2 x 2688 x 3712 = 19,955,712; 128 x 2 x 2688 x 1856 =
  // 1,277,165,568 -> 1,297,465,472 + 2688; x 23 = 29,841,767,680.
  // Embedding + head 2 x 131072 x 2688 = 704,643,072; final norm 2688.
  EXPECT_DOUBLE_EQ(c.total, 31577940288.0);
  // Published (nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 model card):
  // 31.6 B total.
  EXPECT_LT(Within(c.total, 31.6e9), 0.01);
  // Active: 6 of 128 experts; model card: 3.6 B active including
  // embeddings (3.2 B without the input embedding).
  EXPECT_LT(Within(c.active_per_token, 3.6e9), 0.03);
  EXPECT_LT(Within(c.active_per_token - c.embedding, 3.2e9), 0.03);
}

TEST(HybridParameterTest, NemotronH56B) {
  const ParameterCounts c =
      CountParameters(FindModel("nemotron-h-56b").value());
  // Published: 56 B (Nemotron-H, arXiv:2504.03624; the 118-layer base).
  EXPECT_LT(Within(c.total, 56e9), 0.01);
  EXPECT_DOUBLE_EQ(c.total, c.active_per_token);  // dense
}

TEST(HybridParameterTest, DeepseekV32AddsTheIndexer) {
  const ParameterCounts v32 =
      CountParameters(FindModel("deepseek-v3.2").value());
  const ParameterCounts v3 = CountParameters(FindModel("deepseek-v3").value());
  // Indexer per layer: wq_b 1536 x 64 x 128 = 12,582,912; wk 7168 x 128 =
  // 917,504; k_norm 256; weights_proj 7168 x 64 = 458,752 -> 13,959,424;
  // x 61 = 851,524,864 on DeepSeek-V3's 671,026,419,200.
  EXPECT_DOUBLE_EQ(v32.total - v3.total, 851524864.0);
  EXPECT_DOUBLE_EQ(v32.active_per_token - v3.active_per_token, 851524864.0);
  // Published: 671 B without the MTP module (DeepSeek-V3.2-Exp report;
  // 685 B on the Hugging Face page includes the 14 B MTP layer), 37 B
  // active. The 37 B is DeepSeek-V3's figure carried over; with the indexer
  // the count is 38.4 B with the input embedding (3.8 % over), 37.5 B
  // without it (the embedding is a gather of one row): that is compared.
  EXPECT_LT(Within(v32.total, 671e9), 0.01);
  EXPECT_LT(Within(v32.active_per_token - v32.embedding, 37e9), 0.03);
}

TEST(HybridParameterTest, Glm45Air) {
  const ParameterCounts c = CountParameters(FindModel("glm-4.5-air").value());
  // Attention layer (96 heads of 128 = 12288, 8 KV heads = 1024): q, o 2 x
  // 4096 x 12288 = 100,663,296; k, v 2 x 4096 x 1024 = 8,388,608; q/k/v
  // biases 12288 + 2048 = 14,336 -> 109,066,240 + 2 norms 8192; x 46 =
  // 5,017,423,872.
  // Layer 0 dense: 3 x 4096 x 10944 = 134,479,872.
  // MoE layer: router 4096 x 128 + 128 score bias = 524,416; shared and
  // each of 128 experts 3 x 4096 x 1408 = 17,301,504 -> 2,232,418,432; x 45
  // = 100,458,829,440.
  // Embedding + LM head 2 x 151552 x 4096 = 1,241,513,984; final norm 4096.
  EXPECT_DOUBLE_EQ(c.total, 106852251264.0);
  // Published: 106 B total, 12 B active (zai-org/GLM-4.5 README and the
  // transformers Glm4Moe docs; the Hugging Face page's 110 B adds the MTP
  // layer, which the HF class drops): 0.8 % over.
  EXPECT_LT(Within(c.total, 106e9), 0.01);
  // Active MoE layer: 524,416 + 9 x 17,301,504 = 156,237,952; x 45 =
  // 7,030,707,840. Active = 5,017,423,872 + 134,479,872 + 7,030,707,840 +
  // 1,241,513,984 + 4096 = 13,424,129,664; the published 12 B counts
  // neither the embedding nor the LM head: 12,182,615,680 (1.5 % over).
  EXPECT_DOUBLE_EQ(c.active_per_token, 13424129664.0);
  EXPECT_LT(Within(c.active_per_token - c.embedding - c.lm_head, 12e9), 0.03);
}

TEST(HybridParameterTest, MiniMaxM1) {
  const ParameterCounts c = CountParameters(FindModel("minimax-m1").value());
  // Lightning layer (64 heads x 128 = 8192): qkv_proj 6144 x 24576 +
  // output_gate 6144 x 8192 + norm 8192 + out_proj 8192 x 6144 =
  // 251,666,432; x 70 = 17,616,650,240.
  // Softmax layer: q, o 2 x 6144 x 8192 + k, v 2 x 6144 x 1024 =
  // 113,246,208; x 10 = 1,132,462,080.
  // MoE layer: router 6144 x 32 = 196,608; 32 experts x 3 x 6144 x 9216 =
  // 32 x 169,869,312 -> 5,436,014,592 + 2 norms 12,288; x 80 =
  // 434,882,150,400.
  // Embedding + LM head 2 x 200064 x 6144 = 2,458,386,432; final norm 6144.
  EXPECT_DOUBLE_EQ(c.total, 456089655296.0);
  // Published (MiniMax-AI/MiniMax-M1 README, MiniMax-01 arXiv:2501.08313):
  // 456 B total, 45.9 B activated per token.
  EXPECT_LT(Within(c.total, 456e9), 0.01);
  // Active MoE layer: 196,608 + 2 x 169,869,312 = 339,935,232 + 12,288; x
  // 80 = 27,195,801,600. Active = 17,616,650,240 + 1,132,462,080 +
  // 27,195,801,600 + 2,458,386,432 + 6144 = 48,403,306,496; the 45.9 B
  // counts neither the embedding nor the LM head: 45,944,920,064 (0.1 %).
  EXPECT_DOUBLE_EQ(c.active_per_token, 48403306496.0);
  EXPECT_LT(Within(c.active_per_token - c.embedding - c.lm_head, 45.9e9), 0.03);
}

TEST(HybridParameterTest, Jamba15Mini) {
  const ParameterCounts c =
      CountParameters(FindModel("jamba-1.5-mini").value());
  // Mamba-1 layer (d_inner 8192, N 16, R 256): in_proj 4096 x 16384 =
  // 67,108,864; conv 8192 x (4 + 1) = 40,960; x_proj 8192 x 288 =
  // 2,359,296; dt_proj 256 x 8192 + 8192 = 2,105,344; A_log 8192 x 16 =
  // 131,072; D 8192; out_proj 8192 x 4096 = 33,554,432; dt/B/C norms 288
  // -> 105,308,448; x 28 = 2,948,636,544.
  // Attention layer: q, o 2 x 4096 x 4096 + k, v 2 x 4096 x 1024 =
  // 41,943,040; x 4 = 167,772,160.
  // FFN: dense and each expert 3 x 4096 x 14336 = 176,160,768; 16 dense
  // layers 2,818,572,288; 16 MoE layers of router 4096 x 16 = 65,536 + 16
  // experts = 2,818,637,824 -> 45,098,205,184.
  // Norms 32 x 2 x 4096 = 262,144; embedding + LM head 2 x 65536 x 4096 =
  // 536,870,912; final norm 4096.
  EXPECT_DOUBLE_EQ(c.total, 51570323328.0);
  // Published (ai21labs/AI21-Jamba-1.5-Mini model card; Jamba,
  // arXiv:2403.19887): 52 B total, 12 B active.
  EXPECT_LT(Within(c.total, 52e9), 0.01);
  // Active MoE layer: 65,536 + 2 x 176,160,768 = 352,387,072; x 16 =
  // 5,638,193,152. Active = 2,948,636,544 + 167,772,160 + 2,818,572,288 +
  // 5,638,193,152 + 262,144 + 536,870,912 + 4096 = 12,110,311,296 (0.9 %).
  EXPECT_DOUBLE_EQ(c.active_per_token, 12110311296.0);
  EXPECT_LT(Within(c.active_per_token, 12e9), 0.03);
}

TEST(HybridParameterTest, MambaCodestral7B) {
  const ModelConfig m = FindModel("mamba-codestral-7b").value();
  const ParameterCounts c = CountParameters(m);
  // Mamba-2 block (hidden 4096, d_inner 128 x 64 = 8192, G 8, N 128, 128
  // heads, K 4): conv_dim = 8192 + 2 x 8 x 128 = 10,240; in_proj 4096 x
  // (8192 + 10,240 + 128) = 76,021,760; conv1d 10,240 x (4 + 1) = 51,200;
  // dt_bias, A_log, D 3 x 128 = 384; gated norm 8192; out_proj 8192 x
  // 4096 = 33,554,432; block RMSNorm 4096 -> 109,640,064; x 64 =
  // 7,016,964,096. Embedding and untied LM head 2 x 32,768 x 4096 =
  // 268,435,456; final norm 4096. Total 7,285,403,648.
  EXPECT_DOUBLE_EQ(c.total, 7285403648.0);
  EXPECT_DOUBLE_EQ(c.active_per_token, c.total);
  // Published: "an instructed model, with 7,285,403,648 parameters"
  // (Mistral AI, "Codestral Mamba", 2024-07-16): exact.
  EXPECT_EQ(c.total, 7285403648.0);
  // No attention layer: no KV cache grows; the state per sequence is the
  // conv window (K - 1) x conv_dim + heads x head_dim x N per layer =
  // (3 x 10,240 + 128 x 64 x 128) x 64 = 69,074,944 elements.
  EXPECT_DOUBLE_EQ(KvElementsPerToken(m), 0.0);
  EXPECT_DOUBLE_EQ(StateElementsPerSequence(m), 69074944.0);
}

TEST(HybridParameterTest, FalconH1_0_5B) {
  const ModelConfig m = FindModel("falcon-h1-0.5b").value();
  const ParameterCounts c = CountParameters(m);
  // A layer (hidden 1024): attention q 1024 x 512 + k, v 2 x 1024 x 128 +
  // o 512 x 1024 = 1,310,720; beside it the Mamba-2 mixer (d_ssm 24 x 64 =
  // 1536, G 1, N 128, 24 heads, K 4): conv_dim 1536 + 2 x 128 = 1792;
  // in_proj 1024 x (1536 + 1792 + 24) = 3,432,448; conv 1792 x (4 + 1) =
  // 8960; dt_bias, A_log, D 72; no gated norm (mamba_rms_norm false);
  // out_proj 1536 x 1024 = 1,572,864 -> 5,014,344; MLP 3 x 1024 x 2048 =
  // 6,291,456; two RMSNorms 2048 -> 12,618,568; x 36 = 454,268,448.
  // Embedding and untied LM head 2 x 32,784 x 1024 = 67,141,632; final
  // norm 1024. Total 521,411,104.
  EXPECT_DOUBLE_EQ(c.total, 521411104.0);
  // Published: "0.5B" (tiiuae/Falcon-H1 README, the sizes "500M, 1.5B,
  // ..."): no exact count is published; the name is 4.3 % under.
  EXPECT_LT(Within(c.total, 0.5e9), 0.05);
  // The KV grows for all 36 attention layers (2 KV heads of 64): 36 x 2
  // x 2 x 64 = 9216 elements a token; beside it each layer keeps the
  // mixer's state, 24 x 64 x 128 + 3 x 1792 = 201,984, x 36 = 7,271,424.
  EXPECT_DOUBLE_EQ(KvElementsPerToken(m), 9216.0);
  EXPECT_DOUBLE_EQ(StateElementsPerSequence(m), 7271424.0);
}

TEST(HybridParameterTest, KimiLinear48B) {
  const ModelConfig m = FindModel("kimi-linear-48b-a3b").value();
  const ParameterCounts c = CountParameters(m);
  // KDA layer (hidden 2304, 32 heads x 128 = 4096): q, k, v 3 x 2304 x
  // 4096 = 28,311,552; b_proj 2304 x 32 = 73,728; f_a 2304 x 128 + f_b
  // 128 x 4096 = 819,200; dt_bias 4096; A_log 32; g_a + g_b 819,200;
  // q, k, v convs 3 x 4096 x 4 = 49,152; o_norm 128; o_proj 4096 x 2304
  // = 9,437,184 -> 39,514,272; x 20 = 790,285,440.
  // MLA layer (32 heads, no q_lora): q_proj 2304 x 32 x 192 = 14,155,776;
  // kv_a_proj_with_mqa 2304 x 576 = 1,327,104; kv_a_layernorm 512;
  // kv_b_proj 512 x 32 x 256 = 4,194,304; o_proj 4096 x 2304 = 9,437,184
  // -> 29,114,880; x 7 = 203,804,160.
  // Two RMSNorms a layer: 27 x 4608 = 124,416.
  // MoE layer: 256 experts x 3 x 2304 x 1024 = 1,811,939,328; shared
  // expert 7,077,888; gate 2304 x 256 = 589,824; e_score_correction_bias
  // 256 -> 1,819,607,296; x 26 = 47,309,789,696. Layer 1's MLP 3 x 2304
  // x 9216 = 63,700,992.
  // Embedding and untied LM head 2 x 163,840 x 2304 = 754,974,720; final
  // norm 2304. Total 49,122,681,728.
  EXPECT_DOUBLE_EQ(c.total, 49122681728.0);
  // Published: the checkpoint's safetensors total, 49,122,681,728
  // (Hugging Face's `safetensors.total` for
  // moonshotai/Kimi-Linear-48B-A3B-Instruct; the model card rounds it to
  // "48B"): exact.
  EXPECT_EQ(c.total, 49122681728.0);
  // Active: 248 of 256 experts idle in 26 layers: 49,122,681,728 - 248 x
  // 26 x 7,077,888 = 3,484,459,904; without the input embedding
  // 3,106,972,544. The model card's "3B activated" is rounded to one
  // digit, so the golden is the hand count.
  EXPECT_DOUBLE_EQ(c.active_per_token, 3484459904.0);
  EXPECT_LT(Within(c.active_per_token - c.embedding, 3e9), 0.04);
  // The KV grows for the 7 MLA layers: latent 512 + rope key 64 = 576
  // elements a token each, 4032. Each KDA layer keeps 32 x 128 x 128 =
  // 524,288 state elements plus the convs' window 3 x 3 x 4096 = 36,864:
  // 561,152 x 20 = 11,223,040.
  EXPECT_DOUBLE_EQ(KvElementsPerToken(m), 4032.0);
  EXPECT_DOUBLE_EQ(StateElementsPerSequence(m), 11223040.0);
}

TEST(HybridTrapTest, FilesAsPublished) {
  // Infinity in Nemotron-H-56B's time_step_limit parses (as null; unused).
  const ModelConfig h56 = Parse("nemotron-h-56b-base-8k.json", "m");
  EXPECT_EQ(h56.layers.size(), 118u);
  // Nemotron-3 Nano: Mamba inner = 64 heads x 64 = 4096, not expand 2 x
  // hidden 2688 = 5376.
  const ModelConfig nano = Parse("nemotron-3-nano-30b-a3b.json", "m");
  EXPECT_EQ(nano.mamba->inner(), 4096);
  // relu^2 MLP and experts: up and down only.
  EXPECT_EQ(nano.ffn, FfnKind::kPlain);
  // Qwen3-Next: head_dim 256 given explicitly (hidden / heads = 128); the
  // unused intermediate_size (5120) changes nothing since every layer is
  // MoE.
  ModelConfig next = Parse("qwen3-next-80b-a3b.json", "m");
  EXPECT_EQ(next.head_dim, 256);
  const double total = CountParameters(next).total;
  next.intermediate_size = 1;
  EXPECT_DOUBLE_EQ(CountParameters(next).total, total);
  // The output gate doubles q_proj: 12 layers x 2048 x 4096 more.
  next.attention_output_gate = false;
  EXPECT_DOUBLE_EQ(total - CountParameters(next).total, 12.0 * 2048 * 4096);
  // DeepSeek-V3.2's MTP layer is recorded, not counted.
  EXPECT_EQ(Parse("deepseek-v3.2.json", "m").mtp_layers, 1);
  // GLM-4.5-Air: head_dim 128 given (hidden / heads = 42.7), the MTP layer
  // recorded, q/k/v biases, RoPE on half of each head, no q/k norms.
  const ModelConfig air = Parse("glm-4.5-air.json", "m");
  EXPECT_EQ(air.head_dim, 128);
  EXPECT_EQ(air.mtp_layers, 1);
  EXPECT_TRUE(air.qkv_bias);
  EXPECT_FALSE(air.qk_norm);
  EXPECT_EQ(air.rotary_dim, 64);
  // MiniMax-M1: attn_type_list 1 = softmax attention on 10 of 80 layers;
  // lightning heads are the attention heads (64 of 128), no conv.
  const ModelConfig m1 = Parse("minimax-m1.json", "m");
  EXPECT_EQ(m1.layers[7].attention, AttentionKind::kFull);
  EXPECT_EQ(m1.layers[0].attention, AttentionKind::kLinearAttention);
  EXPECT_EQ(m1.linear_attention->kind, LinearAttentionKind::kLightning);
  EXPECT_EQ(m1.linear_attention->conv_kernel, 0);
  // MiniMax-Text-01's class name is the same class.
  std::string text01 = Fixture("minimax-m1.json");
  text01.replace(text01.find("MiniMaxM1ForCausalLM"),
                 std::string("MiniMaxM1ForCausalLM").size(),
                 "MiniMaxText01ForCausalLM");
  absl::StatusOr<ModelConfig> t = ParseHuggingFaceConfig(text01, "m");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->architecture, "MiniMaxText01ForCausalLM");
  EXPECT_DOUBLE_EQ(CountParameters(*t).total, CountParameters(m1).total);
  // Both spellings of the top-k key.
  std::string tok = Fixture("glm-4.5-air.json");
  tok.replace(tok.find("num_experts_per_tok"),
              std::string("num_experts_per_tok").size(),
              "num_experts_per_token");
  EXPECT_EQ(ParseHuggingFaceConfig(tok, "m")->moe->experts_per_token, 8);
  // Jamba: attention at i % 8 == 4, MoE at odd layers; d_inner = expand 2
  // x 4096; no head_dim key (hidden / heads = 128); mamba_dt_rank "auto"
  // is ceil(hidden / 16) = 256, as published.
  // Mamba-2 (Codestral): d_inner = num_heads 128 x head_dim 64; the
  // config's intermediate_size (8192, the mixer's width) builds no FFN,
  // and no attention key is needed; the Infinity of time_step_limit parses.
  const ModelConfig codestral = Parse("mamba-codestral-7b.json", "m");
  EXPECT_EQ(codestral.mamba->inner(), 8192);
  EXPECT_EQ(codestral.layers[0].ffn, FfnLayerKind::kNone);
  EXPECT_EQ(codestral.source, "/raid/pablo/codestral-hf-good/");
  // Falcon-H1: the copy has no mamba_d_ssm; d_ssm = mamba_n_heads x
  // mamba_d_head = 24 x 64 = 1536 (not mamba_expand 2 x hidden 1024 =
  // 2048, nor FalconH1Config's default 1024); every layer has attention
  // and the mixer; no gated norm (mamba_rms_norm false).
  const ModelConfig falcon = Parse("falcon-h1-0.5b.json", "m");
  EXPECT_EQ(falcon.mamba->inner(), 1536);
  EXPECT_EQ(falcon.layers[0].attention, AttentionKind::kFull);
  EXPECT_TRUE(falcon.layers[35].parallel_mamba);
  EXPECT_FALSE(falcon.mamba->gated_norm);
  // Kimi-Linear: the layer lists are 1-based (full_attn_layers 4 is the
  // fourth layer, index 3); head_dim 72 (hidden / heads) is not the MLA
  // head (128 + 64); num_experts_per_token; q_lora_rank null is a direct
  // q_proj; the first layer dense.
  const ModelConfig kimi = Parse("kimi-linear-48b-a3b.json", "m");
  EXPECT_EQ(kimi.layers[3].attention, AttentionKind::kFull);
  EXPECT_EQ(kimi.layers[26].attention, AttentionKind::kFull);
  EXPECT_EQ(kimi.layers[4].attention, AttentionKind::kLinearAttention);
  EXPECT_EQ(kimi.linear_attention->kind, LinearAttentionKind::kKimiDelta);
  EXPECT_EQ(kimi.head_dim, 192);
  EXPECT_EQ(kimi.mla->q_lora_rank, 0);
  EXPECT_EQ(kimi.moe->experts_per_token, 8);
  EXPECT_EQ(kimi.layers[0].ffn, FfnLayerKind::kDense);
  EXPECT_EQ(kimi.layers[1].ffn, FfnLayerKind::kMoe);
  EXPECT_EQ(kimi.max_context, 1048576);
  const ModelConfig jamba = Parse("jamba-1.5-mini.json", "m");
  EXPECT_EQ(jamba.layers[4].attention, AttentionKind::kFull);
  EXPECT_EQ(jamba.layers[5].attention, AttentionKind::kMamba1);
  EXPECT_EQ(jamba.layers[1].ffn, FfnLayerKind::kMoe);
  EXPECT_EQ(jamba.layers[2].ffn, FfnLayerKind::kDense);
  EXPECT_EQ(jamba.mamba1->inner, 8192);
  EXPECT_EQ(jamba.head_dim, 128);
  std::string autorank = Fixture("jamba-1.5-mini.json");
  autorank.replace(autorank.find("\"mamba_dt_rank\": 256"),
                   std::string("\"mamba_dt_rank\": 256").size(),
                   "\"mamba_dt_rank\": \"auto\"");
  absl::StatusOr<ModelConfig> autoparsed =
      ParseHuggingFaceConfig(autorank, "m");
  ASSERT_TRUE(autoparsed.ok()) << autoparsed.status();
  EXPECT_EQ(autoparsed->mamba1->dt_rank, 256);
}

std::string Error(const std::string& json) {
  absl::StatusOr<ModelConfig> m = ParseHuggingFaceConfig(json, "m");
  EXPECT_FALSE(m.ok());
  if (m.ok()) return "";
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(m.status().message());
}

std::string NemotronH(const std::string& pattern, int layers,
                      const std::string& extra = "") {
  return R"({"architectures": ["NemotronHForCausalLM"], "vocab_size": 1000,
    "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 64, "mamba_num_heads": 8,
    "mamba_head_dim": 32, "ssm_state_size": 16, "n_groups": 2,
    "n_routed_experts": 8, "moe_intermediate_size": 128)" +
         extra + R"(, "num_hidden_layers": )" + std::to_string(layers) +
         R"(, "hybrid_override_pattern": ")" + pattern + "\"}";
}

TEST(HybridBadInputTest, PatternsNameTheKeyExpectedAndFound) {
  // Both spellings of the top-k key.
  EXPECT_TRUE(ParseHuggingFaceConfig(
                  NemotronH("M*-E", 4, R"(, "num_experts_per_token": 2)"), "m")
                  .ok());
  EXPECT_EQ(ParseHuggingFaceConfig(
                NemotronH("M*-E", 4, R"(, "num_experts_per_tok": 3)"), "m")
                ->moe->experts_per_token,
            3);
  const std::string len =
      Error(NemotronH("M*-", 4, R"(, "num_experts_per_tok": 2)"));
  EXPECT_NE(len.find("hybrid_override_pattern must have num_hidden_layers (4) "
                     "letters, got 3"),
            std::string::npos)
      << len;
  const std::string letter =
      Error(NemotronH("M*Q-", 4, R"(, "num_experts_per_tok": 2)"));
  EXPECT_NE(
      letter.find("hybrid_override_pattern[2] must be one of M (Mamba-2), "
                  "* (attention), - (MLP), E (MoE), got \"Q\""),
      std::string::npos)
      << letter;
  const std::string types = Error(R"({"architectures": ["Qwen3NextForCausalLM"],
    "vocab_size": 1000, "hidden_size": 256, "intermediate_size": 512,
    "num_hidden_layers": 2, "num_attention_heads": 4,
    "layer_types": ["linear_attention", "sliding_attention"]})");
  EXPECT_NE(types.find("layer_types[1] must be \"linear_attention\" or "
                       "\"full_attention\", got \"sliding_attention\""),
            std::string::npos)
      << types;
  const std::string count = Error(R"({"architectures": ["Qwen3NextForCausalLM"],
    "vocab_size": 1000, "hidden_size": 256, "intermediate_size": 512,
    "num_hidden_layers": 2, "num_attention_heads": 4,
    "layer_types": ["full_attention"]})");
  EXPECT_NE(count.find("layer_types must be an array of num_hidden_layers (2)"),
            std::string::npos)
      << count;
  const std::string interval =
      Error(R"({"architectures": ["Qwen3NextForCausalLM"],
    "vocab_size": 1000, "hidden_size": 256, "intermediate_size": 512,
    "num_hidden_layers": 2, "num_attention_heads": 4,
    "full_attention_interval": 3})");
  EXPECT_NE(interval.find("full_attention_interval must be in [1, 2], got 3"),
            std::string::npos)
      << interval;
}

std::string MiniMax(const std::string& types, int layers) {
  return R"({"architectures": ["MiniMaxM1ForCausalLM"], "vocab_size": 1000,
    "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 64, "num_local_experts": 4,
    "num_hidden_layers": )" +
         std::to_string(layers) + R"(, "attn_type_list": )" + types + "}";
}

TEST(HybridBadInputTest, MiniMaxAndGlmNameTheKeyExpectedAndFound) {
  EXPECT_TRUE(ParseHuggingFaceConfig(MiniMax("[0, 1]", 2), "m").ok());
  const std::string len = Error(MiniMax("[0, 0, 1]", 2));
  EXPECT_NE(len.find("attn_type_list must be an array of num_hidden_layers "
                     "(2) entries 0 (lightning attention) or 1 (softmax "
                     "attention), got [0,0,1]"),
            std::string::npos)
      << len;
  const std::string type = Error(MiniMax("[0, 2]", 2));
  EXPECT_NE(type.find("attn_type_list[1] must be 0 (lightning attention) or "
                      "1 (softmax attention), got 2"),
            std::string::npos)
      << type;
  const std::string missing = Error(MiniMax("null", 2));
  EXPECT_NE(missing.find("attn_type_list must be an array of "
                         "num_hidden_layers (2) entries"),
            std::string::npos)
      << missing;
  std::string glm = Fixture("glm-4.5-air.json");
  glm.replace(glm.find("\"first_k_dense_replace\": 1"),
              std::string("\"first_k_dense_replace\": 1").size(),
              "\"first_k_dense_replace\": 46");
  const std::string dense = Error(glm);
  EXPECT_NE(dense.find("first_k_dense_replace must be in [0, 45], got 46"),
            std::string::npos)
      << dense;
}

TEST(HybridBadInputTest, Mamba2NamesTheKeyExpectedAndFound) {
  auto with = [](const std::string& from, const std::string& to) {
    std::string json = Fixture("mamba-codestral-7b.json");
    json.replace(json.find(from), from.size(), to);
    return json;
  };
  const std::string groups =
      Error(with("\"n_groups\": 8", "\"n_groups\": 3"));
  EXPECT_NE(groups.find("n_groups must divide num_heads (128), got 3"),
            std::string::npos)
      << groups;
  const std::string heads =
      Error(with("\"num_heads\": 128", "\"num_heads\": 0"));
  EXPECT_NE(heads.find("num_heads must be in [1, "), std::string::npos)
      << heads;
  const std::string bias =
      Error(with("\"use_bias\": false", "\"use_bias\": true"));
  EXPECT_NE(bias.find("use_bias must be false"), std::string::npos) << bias;
  const std::string norm =
      Error(with("\"rms_norm\": true", "\"rms_norm\": false"));
  EXPECT_NE(norm.find("rms_norm must be true"), std::string::npos) << norm;
  const std::string layers = Error(
      with("\"num_hidden_layers\": 64", "\"num_hidden_layers\": \"64\""));
  EXPECT_NE(layers.find("num_hidden_layers must be an integer, got \"64\""),
            std::string::npos)
      << layers;
}

TEST(HybridBadInputTest, FalconH1NamesTheKeyExpectedAndFound) {
  auto with = [](const std::string& from, const std::string& to) {
    std::string json = Fixture("falcon-h1-0.5b.json");
    json.replace(json.find(from), from.size(), to);
    return json;
  };
  const std::string ssm = Error(
      with("\"mamba_d_head\": 64,", "\"mamba_d_head\": 64, \"mamba_d_ssm\": 2048,"));
  EXPECT_NE(ssm.find("mamba_d_ssm must equal mamba_n_heads x mamba_d_head "
                     "(24 x 64 = 1536), got 2048"),
            std::string::npos)
      << ssm;
  const std::string groups =
      Error(with("\"mamba_n_groups\": 1", "\"mamba_n_groups\": 5"));
  EXPECT_NE(groups.find("mamba_n_groups must divide mamba_n_heads (24), got 5"),
            std::string::npos)
      << groups;
  const std::string bias =
      Error(with("\"mlp_bias\": false", "\"mlp_bias\": true"));
  EXPECT_NE(bias.find("mlp_bias must be false"), std::string::npos) << bias;
  const std::string layers = Error(
      with("\"attn_layer_indices\": null", "\"attn_layer_indices\": [0, 2]"));
  EXPECT_NE(layers.find("attn_layer_indices must be null (attention in every "
                        "layer), got [0,2]"),
            std::string::npos)
      << layers;
}

TEST(HybridBadInputTest, KimiLinearNamesTheKeyExpectedAndFound) {
  auto with = [](const std::string& from, const std::string& to) {
    std::string json = Fixture("kimi-linear-48b-a3b.json");
    json.replace(json.find(from), from.size(), to);
    return json;
  };
  const std::string past =
      Error(with("      27\n    ],", "      28\n    ],"));
  EXPECT_NE(past.find("linear_attn_config.full_attn_layers[6] must be a "
                      "1-based layer number in [1, 27], got 28"),
            std::string::npos)
      << past;
  const std::string zero =
      Error(with("      1,\n      2,\n", "      0,\n      2,\n"));
  EXPECT_NE(zero.find("linear_attn_config.kda_layers[0] must be a 1-based "
                      "layer number in [1, 27], got 0"),
            std::string::npos)
      << zero;
  const std::string twice =
      Error(with("      26\n    ],", "      26,\n      27\n    ],"));
  EXPECT_NE(twice.find("linear_attn_config.full_attn_layers[6]: layer 27 is "
                       "listed twice"),
            std::string::npos)
      << twice;
  const std::string neither =
      Error(with("      25,\n      26\n", "      25\n"));
  EXPECT_NE(neither.find("layer 26 of num_hidden_layers (27) is in neither "
                         "linear_attn_config.kda_layers nor full_attn_layers"),
            std::string::npos)
      << neither;
  const std::string heads = Error(with("\"num_heads\": 32,\n", ""));
  EXPECT_NE(heads.find("missing required field linear_attn_config.num_heads"),
            std::string::npos)
      << heads;
  const std::string freq =
      Error(with("\"moe_layer_freq\": 1", "\"moe_layer_freq\": 2"));
  EXPECT_NE(freq.find("moe_layer_freq must be 1"), std::string::npos) << freq;
  const std::string list = Error(with("\"kda_layers\": [", "\"kda_layers\": 3, \"x\": ["));
  EXPECT_NE(list.find("linear_attn_config.kda_layers must be an array of "
                      "1-based layer numbers in [1, 27], got 3"),
            std::string::npos)
      << list;
}

TEST(HybridBadInputTest, JambaNamesTheKeyExpectedAndFound) {
  auto with = [](const std::string& from, const std::string& to) {
    std::string json = Fixture("jamba-1.5-mini.json");
    json.replace(json.find(from), from.size(), to);
    return json;
  };
  const std::string offset =
      Error(with("\"attn_layer_offset\": 4", "\"attn_layer_offset\": 8"));
  EXPECT_NE(offset.find("attn_layer_offset must be in [0, 7], got 8"),
            std::string::npos)
      << offset;
  const std::string period =
      Error(with("\"attn_layer_period\": 8", "\"attn_layer_period\": 33"));
  EXPECT_NE(period.find("attn_layer_period must be in [1, 32], got 33"),
            std::string::npos)
      << period;
  const std::string experts =
      Error(with("\"expert_layer_offset\": 1", "\"expert_layer_offset\": 2"));
  EXPECT_NE(experts.find("expert_layer_offset must be in [0, 1], got 2"),
            std::string::npos)
      << experts;
  const std::string rank =
      Error(with("\"mamba_dt_rank\": 256", "\"mamba_dt_rank\": \"big\""));
  EXPECT_NE(rank.find("mamba_dt_rank must be \"auto\" or an integer in [1, "
                      "1048576], got \"big\""),
            std::string::npos)
      << rank;
}

}  // namespace
}  // namespace ridgeline::engine
