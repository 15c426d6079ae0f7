#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "ridgeline/engine/model.h"

namespace ridgeline::engine {
namespace {

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(RIDGELINE_CONFIG_FIXTURES) + "/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ModelConfig ParseOk(std::string_view json, std::string_view id = "m") {
  auto m = ParseHuggingFaceConfig(json, id);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : ModelConfig{};
}

std::string ParseError(std::string_view json) {
  auto m = ParseHuggingFaceConfig(json, "m");
  EXPECT_FALSE(m.ok());
  if (m.ok()) return "";
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(m.status().message());
}

// The shape fields the engine uses must match the catalog entry.
void ExpectSameShape(const ModelConfig& a, const ModelConfig& b) {
  EXPECT_EQ(a.architecture, b.architecture);
  EXPECT_EQ(a.vocab_size, b.vocab_size);
  EXPECT_EQ(a.hidden_size, b.hidden_size);
  EXPECT_EQ(a.intermediate_size, b.intermediate_size);
  EXPECT_EQ(a.num_layers, b.num_layers);
  EXPECT_EQ(a.num_attention_heads, b.num_attention_heads);
  EXPECT_EQ(a.num_kv_heads, b.num_kv_heads);
  EXPECT_EQ(a.head_dim, b.head_dim);
  EXPECT_EQ(a.max_context, b.max_context);
  EXPECT_EQ(a.tie_word_embeddings, b.tie_word_embeddings);
  EXPECT_EQ(a.qkv_bias, b.qkv_bias);
  EXPECT_EQ(a.qk_norm, b.qk_norm);
  EXPECT_EQ(a.norms_per_layer, b.norms_per_layer);
  EXPECT_EQ(a.sliding_layers, b.sliding_layers);
  EXPECT_EQ(a.sliding_window, b.sliding_window);
  EXPECT_EQ(a.attention_chunk_size, b.attention_chunk_size);
  ASSERT_EQ(a.moe.has_value(), b.moe.has_value());
  if (a.moe) {
    EXPECT_EQ(a.moe->num_routed_experts, b.moe->num_routed_experts);
    EXPECT_EQ(a.moe->experts_per_token, b.moe->experts_per_token);
    EXPECT_EQ(a.moe->num_shared_experts, b.moe->num_shared_experts);
    EXPECT_EQ(a.moe->expert_intermediate_size, b.moe->expert_intermediate_size);
    EXPECT_EQ(a.moe->shared_expert_intermediate_size,
              b.moe->shared_expert_intermediate_size);
    EXPECT_EQ(a.moe->first_dense_layers, b.moe->first_dense_layers);
    EXPECT_EQ(a.moe->router_score_bias, b.moe->router_score_bias);
  }
  ASSERT_EQ(a.mla.has_value(), b.mla.has_value());
  if (a.mla) {
    EXPECT_EQ(a.mla->q_lora_rank, b.mla->q_lora_rank);
    EXPECT_EQ(a.mla->kv_lora_rank, b.mla->kv_lora_rank);
    EXPECT_EQ(a.mla->qk_nope_head_dim, b.mla->qk_nope_head_dim);
    EXPECT_EQ(a.mla->qk_rope_head_dim, b.mla->qk_rope_head_dim);
    EXPECT_EQ(a.mla->v_head_dim, b.mla->v_head_dim);
  }
  EXPECT_DOUBLE_EQ(CountParameters(a).total, CountParameters(b).total);
  EXPECT_DOUBLE_EQ(KvElementsPerToken(a), KvElementsPerToken(b));
}

struct FixtureCase {
  const char* file;
  const char* id;
};

class PublishedConfigTest : public testing::TestWithParam<FixtureCase> {};

TEST_P(PublishedConfigTest, ParsesToTheCatalogShape) {
  const FixtureCase c = GetParam();
  const ModelConfig parsed = ParseOk(ReadFixture(c.file), c.id);
  EXPECT_EQ(parsed.id, c.id);
  auto catalog = FindModel(c.id);
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  ExpectSameShape(parsed, *catalog);
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, PublishedConfigTest,
    testing::Values(FixtureCase{"deepseek-v2.json", "deepseek-v2"},
                    FixtureCase{"phi-3-mini-4k-instruct.json", "phi-3-mini"},
                    FixtureCase{"qwen3-30b-a3b.json", "qwen3-30b-a3b"},
                    FixtureCase{"mixtral-8x22b.json", "mixtral-8x22b"},
                    FixtureCase{"codellama-7b.json", "codellama-7b"}),
    [](const testing::TestParamInfo<FixtureCase>& info) {
      std::string name = info.param.id;
      for (char& ch : name) {
        if (ch == '-' || ch == '.') ch = '_';
      }
      return name;
    });

TEST(HfConfigTest, Llama2ParameterCountFromConfig) {
  // meta-llama/Llama-2-7b-hf's shape fields; 6,738,415,616 parameters (see
  // models_test.cc for the derivation).
  const ModelConfig m = ParseOk(R"({
    "architectures": ["LlamaForCausalLM"], "hidden_size": 4096,
    "intermediate_size": 11008, "max_position_embeddings": 4096,
    "num_attention_heads": 32, "num_hidden_layers": 32,
    "num_key_value_heads": 32, "tie_word_embeddings": false,
    "vocab_size": 32000})",
                                "my-llama");
  EXPECT_EQ(m.id, "my-llama");
  EXPECT_EQ(m.head_dim, 128);  // 4096 / 32
  EXPECT_DOUBLE_EQ(CountParameters(m).total, 6738415616.0);
}

// Minimal configs per class: absent optional fields take the transformers
// class defaults.
constexpr char kCore[] =
    R"("hidden_size": 4096, "intermediate_size": 14336, "vocab_size": 32000,
       "num_hidden_layers": 32, "num_attention_heads": 32)";

// `fields` come last so that they override kCore (nlohmann keeps the last
// duplicate key).
std::string Config(const std::string& fields) {
  return std::string("{") + kCore + ", " + fields + "}";
}

TEST(HfConfigTest, ClassDefaults) {
  // LlamaConfig: kv heads = heads, head_dim = hidden / heads, 2048 positions.
  ModelConfig m = ParseOk(Config(R"("model_type": "llama")"));
  EXPECT_EQ(m.architecture, "LlamaForCausalLM");
  EXPECT_EQ(m.num_kv_heads, 32);
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.max_context, 2048);
  EXPECT_FALSE(m.tie_word_embeddings);
  // MistralConfig: 8 kv heads, sliding_window 4096 when absent, 131072
  // positions; an explicit null turns the window off.
  m = ParseOk(Config(R"("architectures": ["MistralForCausalLM"])"));
  EXPECT_EQ(m.num_kv_heads, 8);
  EXPECT_EQ(m.sliding_layers, SlidingLayers::kAll);
  EXPECT_EQ(m.sliding_window, 4096);
  EXPECT_EQ(m.max_context, 131072);
  m = ParseOk(Config(
      R"("architectures": ["MistralForCausalLM"], "sliding_window": null)"));
  EXPECT_EQ(m.sliding_layers, SlidingLayers::kNone);
  // MixtralConfig: 8 experts, top-2, expert width = intermediate_size.
  m = ParseOk(Config(R"("model_type": "mixtral")"));
  ASSERT_TRUE(m.moe.has_value());
  EXPECT_EQ(m.moe->num_routed_experts, 8);
  EXPECT_EQ(m.moe->experts_per_token, 2);
  EXPECT_EQ(m.moe->expert_intermediate_size, 14336);
  // Qwen2Config: q/k/v bias always, 32 kv heads.
  m = ParseOk(Config(R"("model_type": "qwen2")"));
  EXPECT_TRUE(m.qkv_bias);
  EXPECT_EQ(m.num_kv_heads, 32);
  // Qwen3Config: head_dim 128 by default, q/k norms.
  m = ParseOk(Config(R"("model_type": "qwen3", "hidden_size": 2048)"));
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_TRUE(m.qk_norm);
  // GemmaConfig / Gemma2Config: head_dim 256, tied, 16 kv heads; Gemma-2
  // slides on even layers over 4096 tokens and has four norms per layer.
  m = ParseOk(Config(R"("model_type": "gemma")"));
  EXPECT_EQ(m.head_dim, 256);
  EXPECT_TRUE(m.tie_word_embeddings);
  EXPECT_EQ(m.num_kv_heads, 16);
  m = ParseOk(Config(R"("model_type": "gemma2")"));
  EXPECT_EQ(m.sliding_layers, SlidingLayers::kEvenLayers);
  EXPECT_EQ(m.sliding_window, 4096);
  EXPECT_EQ(m.norms_per_layer, 4);
  // Phi3Config: no sliding window unless given.
  m = ParseOk(Config(R"("model_type": "phi3")"));
  EXPECT_EQ(m.sliding_layers, SlidingLayers::kNone);
  EXPECT_EQ(m.max_context, 4096);
}

TEST(HfConfigTest, Qwen2MoeSharedExpertWithGate) {
  // Qwen/Qwen1.5-MoE-A2.7B shape: 60 experts of 1408, top-4, one shared
  // expert of 5632 behind a sigmoid gate (hidden -> 1).
  const ModelConfig m = ParseOk(R"({
    "architectures": ["Qwen2MoeForCausalLM"], "hidden_size": 2048,
    "intermediate_size": 5632, "num_hidden_layers": 24,
    "num_attention_heads": 16, "num_key_value_heads": 16,
    "vocab_size": 151936, "num_experts": 60, "num_experts_per_tok": 4,
    "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
    "decoder_sparse_step": 1, "mlp_only_layers": []})");
  ASSERT_TRUE(m.moe.has_value());
  EXPECT_EQ(m.moe->num_shared_experts, 1);
  EXPECT_TRUE(m.moe->shared_expert_gate);
  // Layer: attention 4 x 2048^2 + biases 3 x 2048 = 16,783,360; experts
  //   60 x 3 x 2048 x 1408 = 519,045,120; shared 3 x 2048 x 5632 =
  //   34,603,008 + gate 2048; router 2048 x 60 = 122,880; norms 4,096 ->
  //   570,560,512 x 24 = 13,693,452,288; embeddings 2 x 151936 x 2048 =
  //   622,329,856; final norm 2,048. Total 14,315,784,192 (14.3 B).
  EXPECT_DOUBLE_EQ(CountParameters(m).total, 14315784192.0);
}

TEST(HfConfigTest, DeepseekV2LiteAndDenseDeepseek) {
  // q_lora_rank null: queries projected directly.
  ModelConfig m = ParseOk(R"({
    "architectures": ["DeepseekV2ForCausalLM"], "hidden_size": 2048,
    "intermediate_size": 10944, "num_hidden_layers": 27,
    "num_attention_heads": 16, "num_key_value_heads": 16,
    "vocab_size": 102400, "q_lora_rank": null, "kv_lora_rank": 512,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
    "n_routed_experts": 64, "n_shared_experts": 2, "num_experts_per_tok": 6,
    "moe_intermediate_size": 1408, "first_k_dense_replace": 1,
    "max_position_embeddings": 163840, "topk_method": "greedy"})");
  auto lite = FindModel("deepseek-v2-lite");
  ASSERT_TRUE(lite.ok());
  ExpectSameShape(m, *lite);
  // n_routed_experts absent: every layer dense.
  m = ParseOk(Config(R"("model_type": "deepseek_v3")"));
  EXPECT_FALSE(m.moe.has_value());
  ASSERT_TRUE(m.mla.has_value());
  EXPECT_EQ(m.mla->q_lora_rank, 1536);  // DeepseekV3Config default
}

TEST(HfConfigTest, ErrorsNameTheField) {
  EXPECT_EQ(ParseError(Config(R"("model_type": "llama",
                                  "num_key_value_heads": 5)")),
            "config.json: num_key_value_heads must divide "
            "num_attention_heads (32), got 5");
  EXPECT_EQ(
      ParseError(
          R"({"model_type": "llama", "hidden_size": 4096, "vocab_size": 32000})"),
      "config.json: missing required field intermediate_size (integer "
      "in [1, 1048576])");
  EXPECT_EQ(ParseError(Config(R"("model_type": "llama",
                                  "num_hidden_layers": 0)")),
            "config.json: num_hidden_layers must be in [1, 1024], got 0");
  EXPECT_EQ(ParseError(R"({"model_type": "llama", "hidden_size": "4096",
      "intermediate_size": 1, "vocab_size": 1, "num_hidden_layers": 1,
      "num_attention_heads": 1})"),
            "config.json: hidden_size must be an integer, got \"4096\"");
  EXPECT_EQ(ParseError(Config(R"("model_type": "llama",
                                  "tie_word_embeddings": 1)")),
            "config.json: tie_word_embeddings must be true or false, got 1");
  EXPECT_NE(ParseError(Config(R"("architectures": ["GPT2LMHeadModel"])"))
                .find("architectures[0] \"GPT2LMHeadModel\" is not "
                      "supported; supported: LlamaForCausalLM (llama)"),
            std::string::npos);
  EXPECT_NE(ParseError(Config(R"("model_type": "falcon")"))
                .find("model_type \"falcon\" is not supported"),
            std::string::npos);
  EXPECT_NE(ParseError(std::string("{") + kCore + "}")
                .find("missing architectures and model_type"),
            std::string::npos);
  EXPECT_NE(ParseError("{not json").find("config.json: not valid JSON"),
            std::string::npos);
  EXPECT_EQ(ParseError("[1, 2]"),
            "config.json: top level must be a JSON object, got array");
  EXPECT_EQ(ParseError(Config(R"("model_type": "mixtral",
                                  "num_experts_per_tok": 9)")),
            "config.json: num_experts_per_tok must be in [1, 8], got 9");
  EXPECT_NE(ParseError(Config(R"("model_type": "qwen3_moe",
                                  "mlp_only_layers": [0, 5])"))
                .find("mlp_only_layers must be empty"),
            std::string::npos);
  EXPECT_NE(ParseError(Config(R"("model_type": "qwen2_moe",
                                  "decoder_sparse_step": 2)"))
                .find("decoder_sparse_step must be 1"),
            std::string::npos);
  EXPECT_NE(ParseError(Config(R"("model_type": "deepseek_v2",
      "n_routed_experts": 8, "num_experts_per_tok": 2,
      "moe_intermediate_size": 64, "moe_layer_freq": 2)"))
                .find("moe_layer_freq must be 1"),
            std::string::npos);
  EXPECT_EQ(ParseError(Config(R"("model_type": "deepseek_v2",
      "n_routed_experts": 8, "moe_intermediate_size": 64)")),
            "config.json: missing required field num_experts_per_tok "
            "(integer in [1, 8])");
  EXPECT_EQ(ParseError(Config(R"("model_type": "llama",
                                  "hidden_size": 4097)")),
            "config.json: hidden_size (4097) must be a multiple of "
            "num_attention_heads (32) when head_dim is not given");
  EXPECT_NE(ParseError(Config(R"("model_type": "qwen2",
                                  "use_sliding_window": true)"))
                .find("use_sliding_window must be false"),
            std::string::npos);
  EXPECT_EQ(ParseError(Config(R"("model_type": "llama",
                                  "vocab_size": 3.5)")),
            "config.json: vocab_size must be an integer, got 3.5");
  EXPECT_EQ(ParseError(Config(R"("model_type": "llama",
                                  "hidden_size": -4)")),
            "config.json: hidden_size must be in [1, 1048576], got -4");
  // nlohmann throws out_of_range.406 while lexing a number a double cannot
  // hold; the error names the key being read, nested or not.
  EXPECT_EQ(ParseError(Config(R"("model_type": "llama",
                                  "hidden_size": 1e400)")),
            "config.json: hidden_size must be a number within a double's "
            "range (|x| <= 1.8e308); [json.exception.out_of_range.406] "
            "number overflow parsing '1e400'");
  EXPECT_NE(ParseError(Config(R"("model_type": "llama",
                                  "rope_scaling": {"factor": -1e999})"))
                .find("config.json: rope_scaling.factor must be a number "
                      "within a double's range"),
            std::string::npos);
  auto empty_id =
      ParseHuggingFaceConfig(Config(R"("model_type": "llama")"), "");
  EXPECT_FALSE(empty_id.ok());
}

// Defect 1 (issue 14): one value nested ~70,000 levels deep (a 140 KB
// request) used to overflow the stack when an error echoed it. Refused by
// depth before parsing, naming the limit and where the too-deep level opens.
TEST(HfConfigTest, DeepNestingIsRefusedByDepthNotByTheStack) {
  constexpr int kDepth = 70000;
  const std::string deep = std::string(kDepth, '[') + std::string(kDepth, ']');
  const std::string msg = ParseError(
      Config(R"("model_type": "llama", "vocab_size": )" + deep));
  EXPECT_NE(msg.find("values may nest at most 64 levels deep; level 65"),
            std::string::npos)
      << msg;
  EXPECT_LT(msg.size(), 300u);
  // Brackets inside strings are text, not nesting.
  ModelConfig m = ParseOk(Config(R"("model_type": "llama", "note": ")" +
                                 std::string(100, '[') + "\\\"{\""));
  EXPECT_EQ(m.architecture, "LlamaForCausalLM");
  // 64 levels is allowed; the nested value is then a type error, quoted
  // short.
  const std::string at_limit =
      std::string(63, '[') + std::string(63, ']');
  const std::string typed = ParseError(
      Config(R"("model_type": "llama", "vocab_size": )" + at_limit));
  EXPECT_NE(typed.find("vocab_size must be an integer, got [[[["),
            std::string::npos)
      << typed;
  EXPECT_LT(typed.size(), 200u);
}

// A long bad value is quoted as a short prefix with its size, never whole.
TEST(HfConfigTest, ErrorsQuoteAShortPrefixOfLongValues) {
  const std::string big(8192, 'x');
  std::string msg = ParseError(Config(R"("model_type": ")" + big + "\""));
  // The supported model_type values (about 300 bytes) plus the short
  // quote: far below the 8 KiB value.
  EXPECT_LT(msg.size(), 1000u) << msg.size();
  EXPECT_NE(msg.find("supported model_type values: llama, mistral"),
            std::string::npos)
      << msg;
  // 64 bytes of the value, then its size: 8192 bytes.
  EXPECT_NE(msg.find("model_type \"" + std::string(64, 'x') +
                     "... (8192 bytes)\""),
            std::string::npos)
      << msg.substr(0, 200);
  msg = ParseError(Config(R"("model_type": "llama", "vocab_size": ")" + big +
                          "\""));
  EXPECT_LT(msg.size(), 300u) << msg.size();
  // The dump is "\"xxx...": the quote plus 63 bytes, then the size of the
  // dumped text (8192 + 2 quotes = 8194 bytes).
  EXPECT_NE(msg.find("(8194 bytes)"), std::string::npos) << msg;
  // A prefix never splits a UTF-8 character: 63 ASCII bytes then "é"
  // (2 bytes) cut at byte 64 drops the whole "é".
  msg = ParseError(Config(R"("model_type": ")" + std::string(63, 'y') +
                          "\xc3\xa9" + big + "\""));
  EXPECT_NE(msg.find(std::string(63, 'y') + "... ("), std::string::npos);
  // Large arrays and objects are described, not dumped.
  std::string arr = "[";
  for (int i = 0; i < 1000; ++i) arr += i == 0 ? "1" : ",1";
  arr += "]";
  EXPECT_EQ(ParseError(Config(R"("model_type": "llama", "vocab_size": )" +
                              arr)),
            "config.json: vocab_size must be an integer, got an array of "
            "1000 elements");
}

}  // namespace
}  // namespace ridgeline::engine
