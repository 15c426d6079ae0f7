// Number formats of weights, activations and KV cache, and the math types a
// compute unit executes. Pure data and functions; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace ridgeline::engine {

// A data type a compute unit has a dense peak rate for. Order is fixed (it
// indexes arrays and appears in the plugin ABI and the proto).
enum class MathType : uint8_t {
  kFp64 = 0,
  kFp32,
  kTf32,
  kBf16,
  kFp16,
  kFp8,
  kFp4,
  kInt8,
  kInt4,
  // FP16 with FP16 accumulation, where it is faster than kFp16 (the
  // FP32-accumulate rate; GeForce: 2x). Only wanted when the scenario asks
  // for FP16 accumulation; without a peak of its own it runs as kFp16.
  kFp16Acc16,
};
inline constexpr int kMathTypeCount = 10;

// "fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "fp4", "int8", "int4",
// "fp16-acc16".
std::string_view MathTypeName(MathType type);
std::optional<MathType> ParseMathType(std::string_view name);

// Per-math-type value (peak ops/s, joules per op, ...). nullopt = not
// published / not supported by the part.
using PerMathType = std::array<std::optional<double>, kMathTypeCount>;

// How one tensor is stored.
struct NumberFormat {
  std::string name;  // canonical, e.g. "bf16", "int4-g128", "gguf-q4_k_m"
  double bits = 16;  // effective storage bits per element, block scales included
  // The math type that consumes this format directly (fp8 -> kFp8, int4 ->
  // kInt4, nvfp4 -> kFp4). nullopt: must be dequantised first (int3,
  // GGUF k-quants, ...).
  std::optional<MathType> native_math;

  double bytes_per_element() const { return bits / 8.0; }
  // Dequantised inside the matmul kernel that reads it (no native math):
  // GGUF, intN-gG. Efficiency::dequantized_compute_share applies.
  bool dequantized() const { return !native_math.has_value(); }
};

// Accepted names (case-insensitive):
//   fp32 bf16 fp16 fp8 (= fp8-e4m3) fp8-e5m2 int8 int4 nvfp4 (4 bits + one
//   e4m3 scale per 16 = 4.5) mxfp4 (4 + one e8m0 scale per 32 = 4.25),
//   intN for N in 2..32, intN-gG (N + 16/G bits: one fp16 scale per G),
//   gguf-q4_0 (4.5), gguf-q8_0 (8.5), gguf-q4_k_m (4.85), w4a16 (= int4-g128);
//   also gguf-q4_1 (5), gguf-q5_0 (5.5), gguf-q5_1 (6), gguf-q4_k (4.5),
//   gguf-q6_k (6.5625); the gguf- prefix is optional.
// intN-gG and GGUF types have no native math (dequantised first); int8,
// int4, fp8, nvfp4, mxfp4 and the floats do.
// Errors name the format and list the accepted forms.
absl::StatusOr<NumberFormat> ParseNumberFormat(std::string_view name);

// The math the matmuls of a layer run in, given weight and activation
// formats: both natively the same type -> that type (W8A8 -> int8, FP8 ->
// fp8); weights without native math are dequantised to the activation type
// (W4A16 -> bf16/fp16); two different native types run in the wider one
// (W4A8 -> int8, fp8 weights with bf16 activations -> bf16; equal widths
// follow the activations). Activations must have a native math type.
// fp16 matmuls that accumulate in fp16 want kFp16Acc16 (which runs as
// kFp16 where the hardware has no rate of its own); other types unchanged.
inline MathType WithAccumulation(MathType math, bool fp16_accumulation) {
  return fp16_accumulation && math == MathType::kFp16 ? MathType::kFp16Acc16
                                                      : math;
}

absl::StatusOr<MathType> MatmulMathType(const NumberFormat& weights,
                                        const NumberFormat& activations);

// The type the hardware actually executes `wanted` in: `wanted` if it has a
// peak, else the next wider type it has (fp4 -> fp8 -> bf16/fp16 -> fp32;
// int4 -> int8 -> fp16 -> fp32; tf32 -> fp32). nullopt when nothing fits.
std::optional<MathType> ExecutedMathType(const PerMathType& peaks,
                                         MathType wanted);

}  // namespace ridgeline::engine
