#include <set>
#include <string>

#include "gtest/gtest.h"
#include "ridgeline/engine/model.h"

namespace ridgeline::engine {
namespace {

ModelConfig Find(std::string_view id) {
  auto m = FindModel(id);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : ModelConfig{};
}

TEST(CatalogTest, AtLeast24ValidSortedEntriesWithSources) {
  const auto& models = BuiltinModels();
  EXPECT_GE(models.size(), 24u);
  std::set<std::string> ids;
  for (size_t i = 0; i < models.size(); ++i) {
    const ModelConfig& m = models[i];
    EXPECT_TRUE(ValidateModel(m).ok()) << m.id << ": " << ValidateModel(m);
    EXPECT_FALSE(m.source.empty()) << m.id;
    EXPECT_NE(m.source.find('/'), std::string::npos) << m.id;  // HF repo id
    EXPECT_FALSE(m.architecture.empty()) << m.id;
    EXPECT_TRUE(ids.insert(m.id).second) << "duplicate " << m.id;
    if (i > 0) {
      EXPECT_LT(models[i - 1].id, m.id);
    }
    for (char ch : m.id) {
      EXPECT_TRUE(ch == '-' || ch == '.' || (ch >= '0' && ch <= '9') ||
                  (ch >= 'a' && ch <= 'z'))
          << m.id;
    }
  }
  // Every model the issue names, plus the ids calibration.csv uses.
  for (const char* id :
       {"llama-2-7b",   "llama-2-13b",   "llama-2-70b",   "llama-3-8b",
        "llama-3-70b",  "llama-3.1-8b",  "llama-3.1-70b", "llama-3.1-405b",
        "llama-3.2-1b", "llama-3.2-3b",  "codellama-7b",  "mistral-7b",
        "mixtral-8x7b", "mixtral-8x22b", "qwen2-7b",      "qwen2-72b",
        "qwen2.5-7b",   "qwen3-30b-a3b", "deepseek-v2",   "deepseek-v2-lite",
        "deepseek-v3",  "deepseek-r1",   "gemma-7b",      "gemma-2-9b",
        "gemma-2-27b",  "phi-3-mini",    "llama-3.3-70b", "tinyllama-1.1b"}) {
    EXPECT_TRUE(ids.count(id)) << id;
  }
}

TEST(CatalogTest, FindModelIsCaseInsensitiveAndAcceptsTheRepoId) {
  EXPECT_EQ(Find("LLAMA-2-7B").id, "llama-2-7b");
  EXPECT_EQ(Find("meta-llama/Llama-2-7b-hf").id, "llama-2-7b");
  EXPECT_EQ(Find("META-LLAMA/llama-2-7b-HF").id, "llama-2-7b");
  // A miss names the lower-cased query.
  auto miss = FindModel("LLAMA-2-7");
  ASSERT_FALSE(miss.ok());
  EXPECT_NE(miss.status().message().find("\"llama-2-7\""),
            absl::string_view::npos)
      << miss.status();
}

TEST(CatalogTest, UnknownModelIsNotFoundWithClosestNames) {
  auto m = FindModel("llama-2-7");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(m.status().message().find("llama-2-7b"), absl::string_view::npos)
      << m.status();
  auto q = FindModel("mixtral-8x7");
  EXPECT_NE(q.status().message().find("mixtral-8x7b"), absl::string_view::npos)
      << q.status();
}

TEST(ClosestNamesTest, OrdersByPrefixThenEditDistanceThenName) {
  const std::vector<std::string> names = {"gemma-7b", "llama-2-7b",
                                          "llama-2-13b", "llama-3-8b"};
  const auto out = ClosestNames("llama-2-8b", names, 3);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0], "llama-2-7b");   // prefix "llama-2-" (8), 1 substitution
  EXPECT_EQ(out[1], "llama-2-13b");  // prefix "llama-2-" (8), 2 edits
  EXPECT_EQ(out[2], "llama-3-8b");   // prefix "llama-" (6), 1 substitution
  // Same prefix (8) and distance (1): alphabetical.
  EXPECT_EQ(ClosestNames("llama-2-8b", {"llama-2-9b", "llama-2-7b"}, 2),
            (std::vector<std::string>{"llama-2-7b", "llama-2-9b"}));
  EXPECT_TRUE(ClosestNames("x", {}, 3).empty());
}

TEST(ClosestNamesTest, SubstringAndSharedPrefixBeatShortIds) {
  const std::vector<std::string> hw = {
      "nvidia-a10",           "nvidia-a100-sxm-80gb",  "nvidia-h100-pcie-80gb",
      "nvidia-h100-sxm-80gb", "nvidia-h200-sxm-141gb", "nvidia-l4"};
  // Edit distance alone puts "nvidia-a10" second (6 edits: h->a, drop
  // "0-sxm") ahead of the PCIe H100 (9 edits).
  const auto out = ClosestNames("nvidia-h100-sxm", hw, 3);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0], "nvidia-h100-sxm-80gb");   // contains the query
  EXPECT_EQ(out[1], "nvidia-h100-pcie-80gb");  // prefix "nvidia-h100-" (12)
  EXPECT_EQ(out[2], "nvidia-h200-sxm-141gb");  // prefix "nvidia-h" (8)
  // A query without the vendor prefix still finds both H100s by substring.
  const auto bare = ClosestNames("h100", hw, 2);
  EXPECT_EQ(bare, (std::vector<std::string>{"nvidia-h100-sxm-80gb",
                                            "nvidia-h100-pcie-80gb"}));
  // All llama ids share "llama" (5): edit distance decides (1 insertion).
  const auto llama = ClosestNames(
      "llama3-8b", {"llama-2-7b", "llama-3-70b", "llama-3-8b", "llama-3.1-8b"},
      2);
  ASSERT_EQ(llama.size(), 2u);
  EXPECT_EQ(llama[0], "llama-3-8b");  // the others need 3 or more edits
}

TEST(ParameterCountTest, Llama2_7b) {
  const ParameterCounts c = CountParameters(Find("llama-2-7b"));
  // Per layer: attention 4 x 4096 x 4096 = 67,108,864; FFN 3 x 4096 x 11008
  // = 135,266,304; two norms 8,192 -> 202,383,360 x 32 = 6,476,267,520.
  // Embedding 32000 x 4096 = 131,072,000, LM head the same, final norm 4096.
  // Total 6,476,267,520 + 262,144,000 + 4,096 = 6,738,415,616 (6.74 B).
  EXPECT_DOUBLE_EQ(c.total, 6738415616.0);
  EXPECT_DOUBLE_EQ(c.active_per_token, c.total);
  EXPECT_DOUBLE_EQ(c.embedding, 131072000.0);
  EXPECT_DOUBLE_EQ(c.lm_head, 131072000.0);
}

TEST(ParameterCountTest, Mixtral8x7bTotalAndActive) {
  const ParameterCounts c = CountParameters(Find("mixtral-8x7b"));
  // Attention: q, o 4096 x 4096 = 16,777,216 each; k, v 4096 x 1024 =
  // 4,194,304 each -> 41,943,040. Expert 3 x 4096 x 14336 = 176,160,768.
  // Router 4096 x 8 = 32,768. Norms 8,192.
  // Layer total: 41,943,040 + 8 x 176,160,768 + 32,768 + 8,192
  //   = 1,451,270,144; x 32 = 46,440,644,608;
  //   + embeddings 2 x 32000 x 4096 = 262,144,000 + final norm 4,096
  //   = 46,702,792,704 (46.7 B).
  EXPECT_DOUBLE_EQ(c.total, 46702792704.0);
  // Active: 41,943,040 + 2 x 176,160,768 + 32,768 + 8,192 = 394,305,536;
  //   x 32 = 12,617,777,152 + 262,148,096 = 12,879,925,248 (12.9 B).
  EXPECT_DOUBLE_EQ(c.active_per_token, 12879925248.0);
}

TEST(ParameterCountTest, DeepseekV2TotalAndActive) {
  const ParameterCounts c = CountParameters(Find("deepseek-v2"));
  // MLA per layer: q_a 5120 x 1536 = 7,864,320; q_a_norm 1,536;
  //   q_b 1536 x 128 x (128 + 64) = 37,748,736;
  //   kv_a 5120 x (512 + 64) = 2,949,120; kv_a_norm 512;
  //   kv_b 512 x 128 x (128 + 128) = 16,777,216; o 128 x 128 x 5120 =
  //   83,886,080 -> 149,227,520; + two norms 10,240 = 149,237,760; x 60 =
  //   8,954,265,600.
  // Layer 0 dense FFN 3 x 5120 x 12288 = 188,743,680.
  // Expert 3 x 5120 x 1536 = 23,592,960; router 5120 x 160 = 819,200.
  // MoE layer: 819,200 + (2 + 160) x 23,592,960 = 3,822,878,720; x 59 =
  //   225,549,844,480.
  // Embedding + head 2 x 102400 x 5120 = 1,048,576,000; final norm 5,120.
  // Total = 8,954,265,600 + 188,743,680 + 225,549,844,480 + 1,048,581,120
  //   = 235,741,434,880 (236 B).
  EXPECT_DOUBLE_EQ(c.total, 235741434880.0);
  // Active MoE layer: 819,200 + (2 + 6) x 23,592,960 = 189,562,880; x 59 =
  //   11,184,209,920. Active = 8,954,265,600 + 188,743,680 + 11,184,209,920
  //   + 1,048,581,120 = 21,375,800,320 (21 B).
  EXPECT_DOUBLE_EQ(c.active_per_token, 21375800320.0);
}

TEST(ParameterCountTest, DeepseekV3IsR1Shaped671B) {
  const ParameterCounts c = CountParameters(Find("deepseek-v3"));
  // MLA: q_a 7168 x 1536 = 11,010,048; 1,536; q_b 1536 x 128 x 192 =
  //   37,748,736; kv_a 7168 x 576 = 4,128,768; 512; kv_b 512 x 128 x 256 =
  //   16,777,216; o 128 x 128 x 7168 = 117,440,512 -> 187,107,328 + norms
  //   14,336 = 187,121,664; x 61 = 11,414,421,504.
  // 3 dense layers x 3 x 7168 x 18432 = 1,189,085,184.
  // Expert 3 x 7168 x 2048 = 44,040,192; router 7168 x 256 + 256 bias =
  //   1,835,264. MoE layer total 1,835,264 + 257 x 44,040,192 =
  //   11,320,164,608; x 58 = 656,569,547,264.
  // Embedding + head 2 x 129280 x 7168 = 1,853,358,080; final norm 7,168.
  // Total = 671,026,419,200 (671 B).
  EXPECT_DOUBLE_EQ(c.total, 671026419200.0);
  // Active MoE layer 1,835,264 + 9 x 44,040,192 = 398,196,992; x 58 =
  //   23,095,425,536. Active = 11,414,421,504 + 1,189,085,184 +
  //   23,095,425,536 + 1,853,365,248 = 37,552,297,472 (37 B).
  EXPECT_DOUBLE_EQ(c.active_per_token, 37552297472.0);
  EXPECT_DOUBLE_EQ(CountParameters(Find("deepseek-r1")).total, c.total);
}

TEST(ParameterCountTest, Qwen2_7bCountsQkvBiases) {
  const ParameterCounts c = CountParameters(Find("qwen2-7b"));
  // Attention: q, o 3584^2 = 12,845,056 each; k, v 3584 x 512 = 1,835,008
  //   each; biases 3584 + 512 + 512 = 4,608 -> 29,364,736. FFN 3 x 3584 x
  //   18944 = 203,685,888. Norms 7,168. Layer 233,057,792 x 28 =
  //   6,525,618,176. Embedding + head 2 x 152064 x 3584 = 1,089,994,752;
  //   final norm 3,584. Total 7,615,616,512 (7.6 B).
  EXPECT_DOUBLE_EQ(c.total, 7615616512.0);
}

TEST(ParameterCountTest, TiedEmbeddingsAndFourNormGemma2) {
  const ParameterCounts g = CountParameters(Find("gemma-7b"));
  // Attention 4 x 3072 x 4096 = 50,331,648; FFN 3 x 3072 x 24576 =
  //   226,492,416; norms 6,144 -> 276,830,208 x 28 = 7,751,245,824;
  //   tied embedding 256000 x 3072 = 786,432,000; final norm 3,072.
  //   Total 8,537,680,896.
  EXPECT_DOUBLE_EQ(g.total, 8537680896.0);
  EXPECT_DOUBLE_EQ(g.lm_head, 0.0);
  const ParameterCounts g2 = CountParameters(Find("gemma-2-9b"));
  // q, o 3584 x 4096 = 14,680,064 each; k, v 3584 x 2048 = 7,340,032 each
  //   -> 44,040,192; FFN 3 x 3584 x 14336 = 154,140,672; 4 norms 14,336 ->
  //   198,195,200 x 42 = 8,324,198,400; tied embedding 256000 x 3584 =
  //   917,504,000; final norm 3,584. Total 9,241,705,984.
  EXPECT_DOUBLE_EQ(g2.total, 9241705984.0);
}

TEST(ParameterCountTest, Qwen3MoeCountsQkNorms) {
  const ParameterCounts c = CountParameters(Find("qwen3-30b-a3b"));
  // Attention: q, o 2048 x 4096 = 8,388,608 each; k, v 2048 x 512 =
  //   1,048,576 each; q/k norms 2 x 128 -> 18,874,624. Expert 3 x 2048 x 768
  //   = 4,718,592; router 2048 x 128 = 262,144; norms 4,096.
  // Layer total 18,874,624 + 128 x 4,718,592 + 262,144 + 4,096 =
  //   623,120,640; x 48 = 29,909,790,720 + embeddings 2 x 151936 x 2048 =
  //   622,329,856 + 2,048 = 30,532,122,624 (30.5 B).
  EXPECT_DOUBLE_EQ(c.total, 30532122624.0);
  // Active layer 18,874,624 + 8 x 4,718,592 + 266,240 = 56,889,600; x 48 =
  //   2,730,700,800 + 622,331,904 = 3,353,032,704 (3.3 B).
  EXPECT_DOUBLE_EQ(c.active_per_token, 3353032704.0);
}

TEST(KvCacheTest, ElementsPerToken) {
  // MHA: 32 layers x 2 (K, V) x 32 heads x 128 = 262,144 (0.5 MiB in fp16).
  EXPECT_DOUBLE_EQ(KvElementsPerToken(Find("llama-2-7b")), 262144.0);
  // GQA divides by the group factor 32 / 8: 32 x 2 x 8 x 128 = 65,536.
  EXPECT_DOUBLE_EQ(KvElementsPerToken(Find("llama-3-8b")), 65536.0);
  // MLA stores the latent and the RoPE key: 60 x (512 + 64) = 34,560.
  EXPECT_DOUBLE_EQ(KvElementsPerToken(Find("deepseek-v2")), 34560.0);
  // Gemma-2-9B: 42 x 2 x 8 x 256 = 172,032.
  EXPECT_DOUBLE_EQ(KvElementsPerToken(Find("gemma-2-9b")), 172032.0);
}

TEST(CatalogTest, AttentionVariants) {
  EXPECT_EQ(Find("mistral-7b").sliding_layers, SlidingLayers::kAll);
  EXPECT_EQ(Find("mistral-7b").sliding_window, 4096);
  EXPECT_EQ(Find("gemma-2-27b").sliding_layers, SlidingLayers::kEvenLayers);
  EXPECT_EQ(Find("gemma-2-27b").sliding_window, 4096);
  EXPECT_EQ(Find("llama-2-7b").sliding_layers, SlidingLayers::kNone);
  EXPECT_FALSE(Find("deepseek-v2-lite").mla->q_lora_rank);
  EXPECT_EQ(Find("deepseek-v2").moe->first_dense_layers, 1);
}

TEST(ValidateModelTest, ErrorsNameFieldRangeAndValue) {
  ModelConfig m = Find("llama-2-7b");
  m.num_kv_heads = 5;
  absl::Status s = ValidateModel(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "model.num_kv_heads must divide model.num_attention_heads (32), "
            "got 5");
  m = Find("llama-2-7b");
  m.hidden_size = 0;
  s = ValidateModel(m);
  EXPECT_EQ(s.message(), "model.hidden_size must be in [1, 1048576], got 0");
  m = Find("mixtral-8x7b");
  m.moe->experts_per_token = 9;
  s = ValidateModel(m);
  EXPECT_EQ(s.message(),
            "model.moe.experts_per_token must be in [1, 8], got 9");
  m = Find("mistral-7b");
  m.sliding_window = 0;
  EXPECT_NE(ValidateModel(m).message().find("model.sliding_window"),
            absl::string_view::npos);
  m = Find("deepseek-v2");
  m.moe->first_dense_layers = 60;
  EXPECT_EQ(ValidateModel(m).message(),
            "model.moe.first_dense_layers must be in [0, 59], got 60");
  m = ModelConfig{};
  EXPECT_FALSE(ValidateModel(m).ok());
}

}  // namespace
}  // namespace ridgeline::engine
