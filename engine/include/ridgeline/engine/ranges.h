// The allowed range of every bounded scenario field: one table, owned by the
// engine (ValidateScenario checks it) and read by the service and the CLI
// for their own messages, so a value the front end accepts is one the engine
// accepts and the messages name the same bounds.
//
// Plain constexpr data; thread-safe.
#pragma once

#include <cstdint>

namespace ridgeline::engine {

// [lo, hi] over integers.
struct IntRange {
  int64_t lo;
  int64_t hi;
};

// [lo, hi], or (lo, hi] when lo_open. NaN and infinities are never inside.
struct DoubleRange {
  double lo;
  double hi;
  bool lo_open = false;
};

namespace ranges {

// ---- Workload ----
inline constexpr IntRange kBatch{1, 65536};
inline constexpr IntRange kPromptTokens{1, 10'000'000};
inline constexpr IntRange kGeneratedTokens{0, 10'000'000};

// ---- Parallelism ----
inline constexpr IntRange kTensorParallel{1, 256};

// ---- Options ----
// Rows at or below which a matmul is a GEMV; 0 = every matmul is a GEMM. The
// ceiling is the largest batch (more rows than kBatch.hi cannot occur in a
// decode step).
inline constexpr IntRange kGemvMaxTokens{0, 65536};
// Prompt tokens per prefill chunk; 0 = default (AnalysisOptions).
inline constexpr IntRange kPrefillChunkTokens{0, 10'000'000};

// ---- Speculative decoding and LoRA (speculative.h, lora.h) ----
// Draft tokens per step: runtimes ship 1..8 (vLLM num_speculative_tokens,
// TensorRT-LLM max_draft_len); at 16 even alpha 0.9 gains < 1 % more.
inline constexpr IntRange kSpeculativeTokens{1, 16};
inline constexpr DoubleRange kAcceptanceRate{0, 1};
// LoRA rank: PEFT adapters use 4..256; vLLM's max_lora_rank tops out at 512.
inline constexpr IntRange kLoraRank{1, 1024};
inline constexpr IntRange kLoraAdapters{1, 100'000};
inline constexpr DoubleRange kLoraColdFraction{0, 1};

// ---- Number formats ----
// Effective bits per element, block scales included (int2 up to fp32 plus
// one fp16 scale per 8).
inline constexpr DoubleRange kFormatBits{2, 34};

// ---- Efficiency (calibration) ----
inline constexpr DoubleRange kEfficiency{0, 1, true};
// Efficiency::compute_power_exponent: 0 = none; the DVFS cube law gives 1/3,
// a square law 1/2; 1 (sustained rate in proportion to power) is the most
// any board could show.
inline constexpr DoubleRange kComputePowerExponent{0, 1};
// MemoryTier::inline_ecc_share: NVIDIA's GDDR6 parts give 1/16; a half
// would be a code as large as the data, no such part exists.
inline constexpr DoubleRange kInlineEccShare{0, 0.5};

// ---- Economics ----
// $/kWh: the dearest retail electricity is below 1 $/kWh; 10 leaves room.
inline constexpr DoubleRange kElectricityUsdPerKwh{0, 10};
// Power usage effectiveness: 1 is the ideal; surveyed data centres average
// 1.58 (Uptime Institute 2023); 3 is well beyond the worst reported.
inline constexpr DoubleRange kPue{1, 3};
// gCO2e/kWh: coal-heavy grids are about 1,000; 2,000 leaves room.
inline constexpr DoubleRange kGridGCo2ePerKwh{0, 2000};
inline constexpr DoubleRange kAmortizationYears{0, 30, true};
inline constexpr DoubleRange kUtilization{0, 1, true};
// Device price overrides. $/device-hour: on-demand list prices of the
// largest accelerators are single-digit dollars (prices.cc); 1,000 leaves
// room. Purchase: $100M per device is beyond any part.
inline constexpr DoubleRange kUsdPerDeviceHour{0, 1000};
inline constexpr DoubleRange kPriceUsd{0, 1e8};

}  // namespace ranges
}  // namespace ridgeline::engine
