// serving/trace.h: the Mooncake, Azure and times readers on excerpts of the
// published traces (tests/fixtures/traces/README.md), the ideal prefix
// reuse by hand, and every malformed input refused with line and field.
#include "ridgeline/serving/trace.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ridgeline::serving {
namespace {

using ::testing::HasSubstr;

std::string Fixture(const std::string& name) {
  return std::string(RIDGELINE_TEST_TRACE_DIR) + "/" + name;
}

absl::StatusOr<std::vector<TraceRequest>> Read(const std::string& text,
                                               TraceFormat f,
                                               size_t max = 1000) {
  std::istringstream in(text);
  return ReadTrace(in, f, "t", max);
}

TEST(Trace, MooncakeExcerptReadsAsPublished) {
  std::ifstream in(Fixture("mooncake-conversation-head.jsonl"));
  absl::StatusOr<std::vector<TraceRequest>> t =
      ReadTrace(in, TraceFormat::kMooncake, "mooncake", 100);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->size(), 6u);
  EXPECT_EQ((*t)[0].arrival_seconds, 0);
  EXPECT_EQ((*t)[0].prompt_tokens, 6758);
  EXPECT_EQ((*t)[0].generated_tokens, 500);
  // ceil(6758 / 512) = 14 blocks, ids 0..13.
  ASSERT_EQ((*t)[0].block_hashes.size(), 14u);
  EXPECT_EQ((*t)[0].block_hashes[13], 13u);
  // "timestamp": 3000 ms.
  EXPECT_EQ((*t)[5].arrival_seconds, 3.0);
  EXPECT_EQ((*t)[5].block_hashes, (std::vector<uint64_t>{0, 462}));
  // Every request starts with block 0 (the shared system prompt): the
  // five after the first hit it, 5 x 512 = 2,560 of 6758 + 7322 + 7236 +
  // 2290 + 6760 + 915 = 31,281 prompt tokens.
  const IdealReuse reuse = IdealPrefixReuse(*t);
  EXPECT_EQ(reuse.prompt_tokens, 31281);
  EXPECT_EQ(reuse.hit_tokens, 2560);
}

TEST(Trace, IdealReuseFollowsPrefixChainsNotLoneBlocks) {
  // Three 1,536-token prompts (3 blocks each): [1 2 3], [1 2 4], [5 2 3].
  // The second shares the chain 1, 1-2 with the first: 1,024 tokens. The
  // third's block 2 follows 5, not 1: a different prefix, no hit, though
  // ids 2 and 3 were seen.
  const std::string text =
      "{\"timestamp\": 0, \"input_length\": 1536, \"output_length\": 1, "
      "\"hash_ids\": [1, 2, 3]}\n"
      "{\"timestamp\": 10, \"input_length\": 1536, \"output_length\": 1, "
      "\"hash_ids\": [1, 2, 4]}\n"
      "{\"timestamp\": 20, \"input_length\": 1536, \"output_length\": 1, "
      "\"hash_ids\": [5, 2, 3]}\n";
  absl::StatusOr<std::vector<TraceRequest>> t = Read(text, TraceFormat::kMooncake);
  ASSERT_TRUE(t.ok()) << t.status();
  const IdealReuse reuse = IdealPrefixReuse(*t);
  EXPECT_EQ(reuse.prompt_tokens, 3 * 1536);
  EXPECT_EQ(reuse.hit_tokens, 1024);
  EXPECT_DOUBLE_EQ(reuse.hit_rate(), 1024.0 / 4608.0);
}

TEST(Trace, AzureExcerptIsRelativeToTheFirstRow) {
  std::ifstream in(Fixture("azure-conv-head.csv"));
  absl::StatusOr<std::vector<TraceRequest>> t =
      ReadTrace(in, TraceFormat::kAzure, "azure", 100);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->size(), 8u);
  EXPECT_EQ((*t)[0].arrival_seconds, 0);
  EXPECT_EQ((*t)[0].prompt_tokens, 374);
  EXPECT_EQ((*t)[0].generated_tokens, 44);
  // 18:15:50.9951690 - 18:15:46.6805900 = 4.3145790 s.
  EXPECT_NEAR((*t)[1].arrival_seconds, 4.314579, 1e-6);
  // 18:15:54.9320210 - 18:15:46.6805900 = 8.2514310 s.
  EXPECT_NEAR((*t)[7].arrival_seconds, 8.251431, 1e-6);
  EXPECT_EQ((*t)[7].prompt_tokens, 388);
  EXPECT_TRUE((*t)[7].block_hashes.empty());
}

TEST(Trace, AzureAcrossMidnightAndMonths) {
  // 2024-02-29 23:59:59.5 to 2024-03-01 00:00:00.25: 0.75 s (a leap day).
  absl::StatusOr<std::vector<TraceRequest>> t = Read(
      "TIMESTAMP,ContextTokens,GeneratedTokens\n"
      "2024-02-29 23:59:59.5,10,2\n2024-03-01 00:00:00.25,20,3\n",
      TraceFormat::kAzure);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_NEAR((*t)[1].arrival_seconds, 0.75, 1e-9);
}

TEST(Trace, TimesAreArrivalsOnlyInOrder) {
  absl::StatusOr<std::vector<TraceRequest>> t =
      Read("0.5, 0 # first two\n1.25\n", TraceFormat::kTimes);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->size(), 3u);
  EXPECT_EQ((*t)[0].arrival_seconds, 0);
  EXPECT_EQ((*t)[1].arrival_seconds, 0.5);
  EXPECT_EQ((*t)[2].arrival_seconds, 1.25);
  EXPECT_EQ((*t)[0].prompt_tokens, -1);
}

TEST(Trace, MalformedInputNamesTheLineAndTheField) {
  struct Case {
    TraceFormat format;
    std::string text;
    std::string want;
  };
  const std::string ok =
      "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 2}\n";
  const std::string head = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  const std::vector<Case> cases = {
      {TraceFormat::kMooncake, ok + "{\"timestamp\": 1, \"input_length\": 10}\n",
       "t:2: output_length: want an integer in 1..2147483648"},
      {TraceFormat::kMooncake, ok + "[1, 2]\n", "t:2: not a JSON object"},
      {TraceFormat::kMooncake, ok + "{\"timestamp\": 1, \"inp",
       "t:2: not a JSON object"},
      {TraceFormat::kMooncake,
       "{\"timestamp\": -1, \"input_length\": 10, \"output_length\": 2}\n",
       "t:1: timestamp: want milliseconds >= 0"},
      {TraceFormat::kMooncake,
       "{\"timestamp\": 0, \"input_length\": 1.5, \"output_length\": 2}\n",
       "t:1: input_length: want an integer"},
      {TraceFormat::kMooncake,
       "{\"timestamp\": 0, \"input_length\": 1025, \"output_length\": 2, "
       "\"hash_ids\": [1, 2]}\n",
       "t:1: hash_ids: 2 ids for 1025 input tokens; want 3"},
      {TraceFormat::kMooncake,
       "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 2, "
       "\"hash_ids\": [-1]}\n",
       "t:1: hash_ids: want integers >= 0"},
      {TraceFormat::kAzure, "", "t:1: empty"},
      {TraceFormat::kAzure, "TIMESTAMP,ContextTokens\n",
       "t:1: header has no GeneratedTokens column"},
      {TraceFormat::kAzure, head + "2023-11-16 18:15:46,10\n",
       "t:2: 2 cells, the header has 3"},
      {TraceFormat::kAzure, head + "yesterday,10,2\n",
       "t:2: TIMESTAMP: want YYYY-MM-DD HH:MM:SS[.fraction], got 'yesterday'"},
      {TraceFormat::kAzure, head + "2023-11-16 18:15:46,0,2\n",
       "t:2: ContextTokens: want an integer in 1..2147483648, got '0'"},
      {TraceFormat::kAzure, head + "2023-11-16 18:15:46,5,x\n",
       "t:2: GeneratedTokens: want an integer"},
      {TraceFormat::kTimes, "1\n2\nsoon\n",
       "t:3: expected a number of seconds >= 0, got 'soon'"},
      {TraceFormat::kTimes, "# nothing\n", "t: holds no requests"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<TraceRequest>> t = Read(c.text, c.format);
    ASSERT_FALSE(t.ok()) << c.text;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(c.want))
        << c.text;
  }
}

TEST(Trace, LongerThanTheLimitIsRefusedWhole) {
  absl::StatusOr<std::vector<TraceRequest>> t =
      Read("0\n1\n2\n", TraceFormat::kTimes, 2);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("more than 2 requests"));
}

TEST(Trace, FormatNamesListTheChoices) {
  EXPECT_TRUE(ParseTraceFormat("mooncake").ok());
  absl::StatusOr<TraceFormat> f = ParseTraceFormat("sharegpt");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(std::string(f.status().message()),
              HasSubstr("want mooncake, azure or times, got 'sharegpt'"));
}

}  // namespace
}  // namespace ridgeline::serving
