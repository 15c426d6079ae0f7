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
  }
  ASSERT_EQ(a.dsa.has_value(), b.dsa.has_value());
  if (a.dsa) {
    EXPECT_EQ(a.dsa->index_heads, b.dsa->index_heads);
    EXPECT_EQ(a.dsa->index_head_dim, b.dsa->index_head_dim);
    EXPECT_EQ(a.dsa->index_topk, b.dsa->index_topk);
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
                    Case{"deepseek-v3.2.json", "deepseek-v3.2"}),
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

}  // namespace
}  // namespace ridgeline::engine
