#include "ridgeline/engine/formats.h"

#include <string>

#include "gtest/gtest.h"

namespace ridgeline::engine {
namespace {

NumberFormat Parse(std::string_view name) {
  auto f = ParseNumberFormat(name);
  EXPECT_TRUE(f.ok()) << name << ": " << f.status();
  return f.ok() ? *f : NumberFormat{};
}

TEST(FormatsTest, PlainTypesHaveTheirWidthAndNativeMath) {
  EXPECT_EQ(Parse("fp32").bits, 32);
  EXPECT_EQ(Parse("fp32").native_math, MathType::kFp32);
  EXPECT_EQ(Parse("bf16").bits, 16);
  EXPECT_EQ(Parse("bf16").native_math, MathType::kBf16);
  EXPECT_EQ(Parse("FP16").native_math, MathType::kFp16);  // case-insensitive
  EXPECT_EQ(Parse("fp8").bits, 8);
  EXPECT_EQ(Parse("fp8").native_math, MathType::kFp8);
  EXPECT_EQ(Parse("fp8-e4m3").name, "fp8");  // alias
  EXPECT_EQ(Parse("fp8-e5m2").native_math, MathType::kFp8);
  EXPECT_EQ(Parse("int8").native_math, MathType::kInt8);
  EXPECT_EQ(Parse("int4").bits, 4);
  EXPECT_EQ(Parse("int4").native_math, MathType::kInt4);
  EXPECT_DOUBLE_EQ(Parse("bf16").bytes_per_element(), 2.0);
}

TEST(FormatsTest, BlockScaledFormatsIncludeTheirScales) {
  // nvfp4: 4-bit values + one 8-bit e4m3 scale per 16 = 4 + 8/16 = 4.5.
  EXPECT_DOUBLE_EQ(Parse("nvfp4").bits, 4.5);
  EXPECT_EQ(Parse("nvfp4").native_math, MathType::kFp4);
  // mxfp4: 4-bit values + one 8-bit e8m0 scale per 32 = 4 + 8/32 = 4.25.
  EXPECT_DOUBLE_EQ(Parse("mxfp4").bits, 4.25);
  // int4, one fp16 scale per 32: 4 + 16/32 = 4.5.
  EXPECT_DOUBLE_EQ(Parse("int4-g32").bits, 4.5);
  // int4, one fp16 scale per 128: 4 + 16/128 = 4.125.
  EXPECT_DOUBLE_EQ(Parse("int4-g128").bits, 4.125);
  // int3-g64: 3 + 16/64 = 3.25.
  EXPECT_DOUBLE_EQ(Parse("int3-g64").bits, 3.25);
  // Group-scaled weights are dequantised before the matmul.
  EXPECT_FALSE(Parse("int4-g128").native_math.has_value());
  // w4a16 = int4-g128.
  EXPECT_EQ(Parse("w4a16").name, "int4-g128");
  EXPECT_DOUBLE_EQ(Parse("w4a16").bits, 4.125);
}

TEST(FormatsTest, GgufTypes) {
  // q4_0: 32 x 4 bits + fp16 scale = 144 bits / 32 = 4.5.
  EXPECT_DOUBLE_EQ(Parse("gguf-q4_0").bits, 4.5);
  // q8_0: 32 x 8 bits + fp16 scale = 272 / 32 = 8.5.
  EXPECT_DOUBLE_EQ(Parse("gguf-q8_0").bits, 8.5);
  // q4_k_m: per-tensor mix of q4_k (4.5) and q6_k (6.5625), ~4.85.
  EXPECT_DOUBLE_EQ(Parse("gguf-q4_k_m").bits, 4.85);
  EXPECT_DOUBLE_EQ(Parse("Q4_K_M").bits, 4.85);  // prefix optional
  // q6_k: (256 x 6 + 16 x 8 + 16) / 256 = 1680 / 256 = 6.5625.
  EXPECT_DOUBLE_EQ(Parse("gguf-q6_k").bits, 6.5625);
  EXPECT_FALSE(Parse("gguf-q4_0").native_math.has_value());
}

TEST(FormatsTest, AnyIntegerWidthFrom2To32) {
  for (int n = 2; n <= 32; ++n) {
    const NumberFormat f = Parse("int" + std::to_string(n));
    EXPECT_EQ(f.bits, n);
    EXPECT_EQ(f.name, "int" + std::to_string(n));
  }
  EXPECT_FALSE(Parse("int3").native_math.has_value());
}

TEST(FormatsTest, ErrorsNameTheFormatAndListAcceptedForms) {
  for (const char* bad : {"int1", "int33", "int4-g0", "int4-x128", "fp7",
                          "gguf-q9_9", "", "int", "int4-g", "int-4"}) {
    auto f = ParseNumberFormat(bad);
    ASSERT_FALSE(f.ok()) << bad;
    EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(f.status().message().find(std::string("\"") + bad + "\""),
              absl::string_view::npos)
        << f.status();
    EXPECT_NE(f.status().message().find("accepted: fp32, bf16"),
              absl::string_view::npos)
        << f.status();
  }
  EXPECT_NE(ParseNumberFormat("int33").status().message().find("2..32"),
            absl::string_view::npos);
}

TEST(FormatsTest, MathTypeNamesRoundTrip) {
  for (int i = 0; i < kMathTypeCount; ++i) {
    const auto t = static_cast<MathType>(i);
    EXPECT_EQ(ParseMathType(MathTypeName(t)), t);
  }
  EXPECT_EQ(MathTypeName(MathType::kTf32), "tf32");
  EXPECT_EQ(ParseMathType("BF16"), MathType::kBf16);
  EXPECT_FALSE(ParseMathType("fp12").has_value());
}

TEST(FormatsTest, MatmulMathType) {
  // W4A16: group-scaled int4 weights dequantised to the activation type.
  EXPECT_EQ(*MatmulMathType(Parse("w4a16"), Parse("fp16")), MathType::kFp16);
  EXPECT_EQ(*MatmulMathType(Parse("gguf-q4_k_m"), Parse("bf16")),
            MathType::kBf16);
  // W8A8 -> int8 tensor math; FP8 -> fp8.
  EXPECT_EQ(*MatmulMathType(Parse("int8"), Parse("int8")), MathType::kInt8);
  EXPECT_EQ(*MatmulMathType(Parse("fp8"), Parse("fp8")), MathType::kFp8);
  // W4A8: the narrower int4 weights are widened to int8.
  EXPECT_EQ(*MatmulMathType(Parse("int4"), Parse("int8")), MathType::kInt8);
  // fp8 weights, bf16 activations -> bf16; bf16 weights, fp8 acts -> bf16.
  EXPECT_EQ(*MatmulMathType(Parse("fp8"), Parse("bf16")), MathType::kBf16);
  EXPECT_EQ(*MatmulMathType(Parse("bf16"), Parse("fp8")), MathType::kBf16);
  // nvfp4 x nvfp4 -> fp4.
  EXPECT_EQ(*MatmulMathType(Parse("nvfp4"), Parse("nvfp4")), MathType::kFp4);
  // Activations must be directly consumable.
  auto bad = MatmulMathType(Parse("bf16"), Parse("int4-g128"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("int4-g128"), absl::string_view::npos);
}

TEST(FormatsTest, ExecutedMathTypeFallsBackToTheNextWiderType) {
  PerMathType a100{};  // has tf32, bf16, fp16, int8, int4, fp32, fp64
  for (MathType t :
       {MathType::kFp64, MathType::kFp32, MathType::kTf32, MathType::kBf16,
        MathType::kFp16, MathType::kInt8, MathType::kInt4}) {
    a100[static_cast<int>(t)] = 1.0;
  }
  EXPECT_EQ(ExecutedMathType(a100, MathType::kBf16), MathType::kBf16);
  EXPECT_EQ(ExecutedMathType(a100, MathType::kFp8), MathType::kBf16);
  EXPECT_EQ(ExecutedMathType(a100, MathType::kFp4), MathType::kBf16);
  EXPECT_EQ(ExecutedMathType(a100, MathType::kInt4), MathType::kInt4);

  PerMathType h100 = a100;
  h100[static_cast<int>(MathType::kFp8)] = 1.0;
  h100[static_cast<int>(MathType::kInt4)] = std::nullopt;
  EXPECT_EQ(ExecutedMathType(h100, MathType::kFp4), MathType::kFp8);
  EXPECT_EQ(ExecutedMathType(h100, MathType::kInt4), MathType::kInt8);

  PerMathType fp16_only{};  // e.g. a part publishing only fp16 and fp32
  fp16_only[static_cast<int>(MathType::kFp16)] = 1.0;
  fp16_only[static_cast<int>(MathType::kFp32)] = 1.0;
  EXPECT_EQ(ExecutedMathType(fp16_only, MathType::kInt8), MathType::kFp16);
  EXPECT_EQ(ExecutedMathType(fp16_only, MathType::kFp8), MathType::kFp16);
  // bf16 does not fall back to fp16 (range); it goes to fp32.
  EXPECT_EQ(ExecutedMathType(fp16_only, MathType::kBf16), MathType::kFp32);
  EXPECT_EQ(ExecutedMathType(fp16_only, MathType::kTf32), MathType::kFp32);

  PerMathType none{};
  EXPECT_FALSE(ExecutedMathType(none, MathType::kFp16).has_value());
  PerMathType fp64_only{};
  fp64_only[static_cast<int>(MathType::kFp64)] = 1.0;
  EXPECT_EQ(ExecutedMathType(fp64_only, MathType::kInt4), MathType::kFp64);
}

}  // namespace
}  // namespace ridgeline::engine
