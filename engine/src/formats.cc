// Number formats and math types (formats.h). Every effective bit width that
// includes block scales is derived next to its entry.
#include "ridgeline/engine/formats.h"

#include <array>
#include <charconv>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace ridgeline::engine {
namespace {

constexpr std::array<std::string_view, kMathTypeCount> kMathTypeNames = {
    "fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "fp4", "int8", "int4",
    "fp16-acc16"};

constexpr int Index(MathType t) { return static_cast<int>(t); }

// Storage width of each math type's operands, used to decide which side of a
// mixed-precision matmul is converted (the narrower one is widened).
constexpr std::array<int, kMathTypeCount> kMathTypeBits = {64, 32, 19, 16, 16,
                                                           8,  4,  8,  4, 16};

constexpr std::string_view kAcceptedFormats =
    "accepted: fp32, bf16, fp16, fp8 (= fp8-e4m3), fp8-e5m2, int8, int4, "
    "nvfp4, mxfp4, intN (N in 2..32), intN-gG (N in 2..32, G in 1..65536), "
    "w4a16 (= int4-g128), gguf-q4_0, gguf-q4_1, gguf-q5_0, gguf-q5_1, "
    "gguf-q8_0, gguf-q4_k, gguf-q4_k_m, gguf-q6_k (the gguf- prefix is "
    "optional); case-insensitive";

// abseil 20220623 in Debian has its own string_view type.
absl::string_view Av(std::string_view s) { return {s.data(), s.size()}; }

std::string Lower(std::string_view s) { return absl::AsciiStrToLower(Av(s)); }

bool ConsumePrefix(std::string_view* s, std::string_view prefix) {
  if (!s->starts_with(prefix)) return false;
  s->remove_prefix(prefix.size());
  return true;
}

NumberFormat Make(std::string name, double bits,
                  std::optional<MathType> native) {
  return NumberFormat{std::move(name), bits, native};
}

// Parses a whole decimal integer; false on anything else (sign, spaces).
bool ParseInt(std::string_view s, int& out) {
  if (s.empty() || s.size() > 9) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

absl::Status BadFormat(std::string_view name, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("number format \"", Av(name), "\" is not recognised",
                   why.empty() ? "" : " (", Av(why), why.empty() ? "" : ")",
                   "; ", Av(kAcceptedFormats)));
}

// GGUF block types (ggml-common.h block_* structs). Effective bits =
// block bytes * 8 / elements per block.
std::optional<NumberFormat> ParseGguf(std::string_view type) {
  // q4_0: 32 x 4-bit + one fp16 scale = (128 + 16) / 32 = 4.5.
  if (type == "q4_0") return Make("gguf-q4_0", 4.5, std::nullopt);
  // q4_1: 32 x 4-bit + fp16 scale + fp16 min = (128 + 32) / 32 = 5.0.
  if (type == "q4_1") return Make("gguf-q4_1", 5.0, std::nullopt);
  // q5_0: 32 x 5-bit + fp16 scale = (160 + 16) / 32 = 5.5.
  if (type == "q5_0") return Make("gguf-q5_0", 5.5, std::nullopt);
  // q5_1: 32 x 5-bit + fp16 scale + fp16 min = (160 + 32) / 32 = 6.0.
  if (type == "q5_1") return Make("gguf-q5_1", 6.0, std::nullopt);
  // q8_0: 32 x 8-bit + one fp16 scale = (256 + 16) / 32 = 8.5.
  if (type == "q8_0") return Make("gguf-q8_0", 8.5, std::nullopt);
  // q4_k: super-block of 256 = 8 blocks of 32; 256 x 4-bit + 12 bytes of
  // 6-bit block scales/mins + fp16 d + fp16 dmin
  // = (1024 + 96 + 32) / 256 = 4.5.
  if (type == "q4_k") return Make("gguf-q4_k", 4.5, std::nullopt);
  // q6_k: 256 x 6-bit + 16 int8 block scales + fp16 d
  // = (1536 + 128 + 16) / 256 = 6.5625.
  if (type == "q6_k") return Make("gguf-q6_k", 6.5625, std::nullopt);
  // q4_k_m is a per-tensor mix, not a block type: llama.cpp's quantizer
  // (llama_tensor_get_type) stores attn_v and ffn_down in q6_k on about half
  // of the layers and output.weight in q6_k, the rest in q4_k (4.5). The
  // average depends on the model: llama.cpp tools/quantize/README.md gives
  // 4.84 bpw for Llama-2-7B; the GGUF files in
  // shared/data/measurements/calibration.csv come out at 4.82-4.90. 4.85 is
  // the middle of that range.
  if (type == "q4_k_m") return Make("gguf-q4_k_m", 4.85, std::nullopt);
  return std::nullopt;
}

}  // namespace

std::string_view MathTypeName(MathType type) {
  const int i = Index(type);
  if (i < 0 || i >= kMathTypeCount) return "unknown";
  return kMathTypeNames[i];
}

std::optional<MathType> ParseMathType(std::string_view name) {
  const std::string lower = Lower(name);
  for (int i = 0; i < kMathTypeCount; ++i) {
    if (lower == kMathTypeNames[i]) return static_cast<MathType>(i);
  }
  return std::nullopt;
}

absl::StatusOr<NumberFormat> ParseNumberFormat(std::string_view name) {
  const std::string s = Lower(name);
  if (s == "fp32" || s == "float32") return Make("fp32", 32, MathType::kFp32);
  if (s == "bf16" || s == "bfloat16") return Make("bf16", 16, MathType::kBf16);
  if (s == "fp16" || s == "float16") return Make("fp16", 16, MathType::kFp16);
  // e4m3 is the inference format (weights, activations, KV); e5m2 is
  // mostly for gradients but is accepted for KV caches (vLLM fp8_e5m2).
  if (s == "fp8" || s == "fp8-e4m3") return Make("fp8", 8, MathType::kFp8);
  if (s == "fp8-e5m2") return Make("fp8-e5m2", 8, MathType::kFp8);
  // nvfp4: e2m1 values with one e4m3 scale per 16 = 4 + 8/16 = 4.5 bits
  // (the per-tensor fp32 scale is negligible).
  if (s == "nvfp4") return Make("nvfp4", 4.5, MathType::kFp4);
  // mxfp4 (OCP MX v1.0): e2m1 with one e8m0 scale per 32 = 4 + 8/32 = 4.25.
  if (s == "mxfp4") return Make("mxfp4", 4.25, MathType::kFp4);
  // W4A16 as served by GPTQ/AWQ kernels: int4 with one fp16 scale per 128
  // weights = 4 + 16/128 = 4.125 bits, dequantised to 16-bit math.
  if (s == "w4a16") return Make("int4-g128", 4 + 16.0 / 128, std::nullopt);

  std::string_view rest = s;
  if (ConsumePrefix(&rest, "gguf-") || rest.starts_with("q")) {
    if (auto f = ParseGguf(rest)) return *f;
    return BadFormat(name, "unknown GGUF type");
  }

  if (ConsumePrefix(&rest, "int")) {
    std::string_view bits_part = rest;
    std::string_view group_part;
    const size_t dash = rest.find('-');
    if (dash != std::string_view::npos) {
      bits_part = rest.substr(0, dash);
      group_part = rest.substr(dash + 1);
      if (!ConsumePrefix(&group_part, "g")) {
        return BadFormat(name, "expected -gG after intN");
      }
    }
    int n = 0;
    if (!ParseInt(bits_part, n) || n < 2 || n > 32) {
      return BadFormat(name, absl::StrCat("integer width must be 2..32, got \"",
                                          Av(bits_part), "\""));
    }
    if (dash == std::string_view::npos) {
      // Per-channel scales are negligible. int8 and int4 have tensor math.
      std::optional<MathType> native;
      if (n == 8) native = MathType::kInt8;
      if (n == 4) native = MathType::kInt4;
      return Make(absl::StrCat("int", n), n, native);
    }
    int g = 0;
    if (!ParseInt(group_part, g) || g < 1 || g > 65536) {
      return BadFormat(name, absl::StrCat("group size must be 1..65536, got \"",
                                          Av(group_part), "\""));
    }
    // One fp16 scale per G elements: N + 16/G bits. Group scales cannot be
    // applied inside an integer tensor-core accumulation, so the weights are
    // dequantised first (no native math).
    return Make(absl::StrCat("int", n, "-g", g), n + 16.0 / g, std::nullopt);
  }
  return BadFormat(name, "");
}

absl::StatusOr<MathType> MatmulMathType(const NumberFormat& weights,
                                        const NumberFormat& activations) {
  if (!activations.native_math.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "activation format \"", activations.name,
        "\" has no native math type; activations must be one of fp32, bf16, "
        "fp16, fp8, fp8-e5m2, int8, int4, nvfp4, mxfp4"));
  }
  const MathType act = *activations.native_math;
  if (weights.dequantized()) return act;  // dequantised to act
  const MathType w = *weights.native_math;
  if (w == act) return w;
  // Mixed native types: the narrower operand is widened to the other's type
  // (W4A8 -> int8, fp8 weights with bf16 activations -> bf16, bf16 weights
  // with fp8 activations -> bf16). Equal widths: weights follow activations.
  return kMathTypeBits[Index(w)] > kMathTypeBits[Index(act)] ? w : act;
}

std::optional<MathType> ExecutedMathType(const PerMathType& peaks,
                                         MathType wanted) {
  using M = MathType;
  // Each chain lists the wanted type, then wider types that hold its values
  // exactly (fp8 fits bf16 and fp16; int8 fits fp16 and bf16; 16-bit floats
  // fit tf32's 8-bit exponent and 10-bit mantissa).
  static constexpr std::array<M, 7> kFp4 = {
      M::kFp4, M::kFp8, M::kBf16, M::kFp16, M::kTf32, M::kFp32, M::kFp64};
  static constexpr std::array<M, 7> kInt4 = {
      M::kInt4, M::kInt8, M::kFp16, M::kBf16, M::kTf32, M::kFp32, M::kFp64};
  const M* chain = nullptr;
  size_t len = 0;
  switch (wanted) {
    case M::kFp4:
      chain = kFp4.data();
      len = kFp4.size();
      break;
    case M::kFp8:
      chain = kFp4.data() + 1;
      len = kFp4.size() - 1;
      break;
    case M::kInt4:
      chain = kInt4.data();
      len = kInt4.size();
      break;
    case M::kInt8:
      chain = kInt4.data() + 1;
      len = kInt4.size() - 1;
      break;
    case M::kBf16:  // bf16 -> tf32 -> fp32 -> fp64 (fp16 lacks bf16's range)
      chain = kFp4.data() + 4;
      len = 3;
      if (peaks[Index(M::kBf16)].has_value()) return M::kBf16;
      break;
    case M::kFp16Acc16:  // its own rate, else as fp16 (same operands)
      if (peaks[Index(M::kFp16Acc16)].has_value()) return M::kFp16Acc16;
      return ExecutedMathType(peaks, M::kFp16);
    case M::kFp16:  // fp16 -> tf32 -> fp32 -> fp64 (bf16 lacks the mantissa)
      chain = kFp4.data() + 4;
      len = 3;
      if (peaks[Index(M::kFp16)].has_value()) return M::kFp16;
      break;
    case M::kTf32:
      chain = kFp4.data() + 4;
      len = 3;
      break;
    case M::kFp32:
      chain = kFp4.data() + 5;
      len = 2;
      break;
    case M::kFp64:
      chain = kFp4.data() + 6;
      len = 1;
      break;
  }
  for (size_t i = 0; i < len; ++i) {
    if (peaks[Index(chain[i])].has_value()) return chain[i];
  }
  return std::nullopt;
}

}  // namespace ridgeline::engine
