#include "ridgeline/calibration/measurements.h"

#include <string>

#include "gtest/gtest.h"

namespace ridgeline::calibration {
namespace {

const char kHeader[] =
    "id,hardware_id,device_count,tensor_parallel,model_id,weight_format,"
    "weight_bits_effective,kv_format,batch,prompt_len,gen_len,framework,"
    "metric,value,unit,usable,source,note\n";

TEST(Measurements, ParsesQuotedFieldsAndBlanks) {
  std::string csv = std::string(kHeader) +
                    "m1,nvidia-l40s,1,,llama-2-7b,gguf-q4_0,4.5,fp16,1,0,128,"
                    "llama.cpp-cuda,decode_tok_s,100.5,tok/s,1,src,"
                    "\"a, \"\"quoted\"\"\nnote\"\n";
  auto rows = ParseMeasurementsCsv(csv, "t.csv");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  const MeasurementRow& r = (*rows)[0];
  EXPECT_EQ(r.id, "m1");
  EXPECT_FALSE(r.tensor_parallel.has_value());
  EXPECT_EQ(*r.weight_bits_effective, 4.5);
  EXPECT_EQ(*r.prompt_len, 0);
  EXPECT_EQ(*r.gen_len, 128);
  EXPECT_DOUBLE_EQ(r.value, 100.5);
  EXPECT_TRUE(r.usable);
  EXPECT_EQ(r.note, "a, \"quoted\"\nnote");
}

TEST(Measurements, BadCellNamesFileLineColumnAndValue) {
  std::string csv = std::string(kHeader) +
                    "m1,x,1,1,m,fp16,16,fp16,1,1,1,f,decode_tok_s,fast,tok/s,1,s,n\n";
  auto rows = ParseMeasurementsCsv(csv, "t.csv");
  ASSERT_FALSE(rows.ok());
  std::string msg(rows.status().message());
  EXPECT_NE(msg.find("t.csv:2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("column value"), std::string::npos) << msg;
  EXPECT_NE(msg.find("\"fast\""), std::string::npos) << msg;
}

TEST(Measurements, MissingColumnAndUnclosedQuote) {
  auto rows = ParseMeasurementsCsv("id,hardware_id\nm1,x\n", "t.csv");
  ASSERT_FALSE(rows.ok());
  EXPECT_NE(std::string(rows.status().message()).find("missing column \"device_count\""),
            std::string::npos);
  auto split = SplitCsv("a,\"b\n", "q.csv");
  ASSERT_FALSE(split.ok());
  EXPECT_NE(std::string(split.status().message()).find("q.csv:1"), std::string::npos);
}

TEST(Measurements, ShippedCopyParses) {
  auto rows = ReadMeasurementsCsv(RIDGELINE_TEST_MEASUREMENTS);
  ASSERT_TRUE(rows.ok()) << rows.status();
  // The file has ids m001..m314 with gaps; 183 rows at the time of writing.
  EXPECT_GE(rows->size(), 150u);
  EXPECT_EQ(rows->front().id, "m001");
}

}  // namespace
}  // namespace ridgeline::calibration
