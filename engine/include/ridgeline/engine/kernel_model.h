// The kernel model: what one GPU kernel call costs beyond its roofline.
// A measured call is max(compute, memory) at the efficiency of its shape
// plus a fixed per-call cost of its kernel class. The shape enters through
// the device's compute units (tiles and waves of a GEMM, the CTAs of a
// split-KV decode attention); the efficiencies and per-call costs are
// fitted from measured kernel tables (calibration/) and carried in a
// profile. Plain data and pure functions; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "absl/status/status.h"

namespace ridgeline::engine {

// Kernel classes, each with its own per-call cost: a GEMM call, a decode
// attention call, a norm / elementwise / memory-streaming call, and a
// collective (all-reduce, all-gather, ...) call.
enum class KernelClass : uint8_t {
  kGemm = 0,
  kAttention,
  kElementwise,
  kCollective
};
inline constexpr int kKernelClassCount = 4;
std::string_view KernelClassName(
    KernelClass c);  // "gemm", "attention", "elementwise", "collective"

// GEMM shape regimes by M (the activation rows): M <= 16 are GEMV-like
// (a weight stream with a few rows; they reach less of the bandwidth),
// 16 < M <= 128 skinny GEMMs, M > 128 full tiles.
enum class GemmRegime : uint8_t { kSmallM = 0, kMediumM, kLargeM };
inline constexpr int kGemmRegimeCount = 3;
GemmRegime GemmRegimeOf(int64_t m);
std::string_view GemmRegimeName(GemmRegime r);  // "m<=16", "m<=128", "m>128"

// Efficiencies of one GEMM numeric path per regime, (0, 1].
struct GemmEfficiency {
  std::array<double, kGemmRegimeCount> compute{1, 1, 1};
  std::array<double, kGemmRegimeCount> memory{1, 1, 1};
};

// Every fitted constant of the kernel model; the defaults are the plain
// roofline (no per-call cost, eta 1). A profile's provenance says which
// rows fixed each one.
struct KernelModel {
  bool present = false;  // false: the kernels take the operator graph's rule
  // Fixed cost of one call per KernelClass, seconds (launch, prologue,
  // epilogue, the serial part a call always pays).
  std::array<double, kKernelClassCount> per_call_seconds{0, 0, 0, 0};
  GemmEfficiency gemm;           // 16-bit GEMMs
  GemmEfficiency gemm_fp8;       // fp8 (W8A8) GEMMs
  bool gemm_fp8_fitted = false;  // false: fp8 GEMMs use `gemm`
  // Per fp8 GEMM call on top of the GEMM per-call cost: the dynamic
  // activation quantisation (a scale reduction and a quantise kernel that
  // read the bf16 activations and write them as fp8; those bytes are also
  // charged to the memory roof).
  double fp8_quantization_seconds = 0;
  // Share of the wave-quantisation tail the GEMM library cannot hide, [0, 1]:
  // 1 = a partial last wave costs a full wave; 0 = split-K / stream-K fill it.
  double wave_quantization = 1;
  // A GEMM whose output tiles do not fill the compute units waits on one
  // CTA's serial K loop: each step of kGemmKStepBytes costs this (the
  // latency of a load-and-multiply stage the other CTAs cannot hide), over
  // at most gemm_split_k_depth_bytes of K (split-K gives each CTA a slice
  // that deep; 0 = K is never split). GemmSerialKSteps counts the steps.
  double gemm_seconds_per_k_step = 0;
  double gemm_split_k_depth_bytes = 0;
  double attention_compute = 1;
  double attention_memory = 1;
  // Bandwidth one decode-attention CTA streams, as a multiple of the fair
  // share (bandwidth / compute units), > 0: calls with fewer CTAs than
  // units cannot reach the full bandwidth. 0 = not limited.
  double attention_cta_bandwidth_share = 0;
  // What a decode-attention call pays per unit of its shape beyond the
  // stream, seconds: per CTA (a sequence x KV head: its setup, the new
  // token's K and V appended, its output and split-KV merge) and per query
  // head of a sequence (the fused RoPE of the query and its softmax
  // normaliser). Small calls of many sequences or heads measure several
  // times the floor with almost nothing to stream.
  double attention_seconds_per_cta = 0;
  double attention_seconds_per_query_head = 0;
  // Per call whose KV is split (SplitKv::splits > 1), seconds: the second
  // kernel that merges the chunks' partial outputs and softmax sums
  // (FlashDecoding's reduction, TensorRT-LLM XQA multi-block mode).
  double attention_split_merge_seconds = 0;
  // Query heads per KV head above which one KV read no longer serves the
  // whole group (TensorRT-LLM's XQA kernels take head groups up to a size;
  // larger ones run per query head, whose repeated reads of the same KV
  // partly hit L2): such calls read the KV 1 + share x (group - 1) times
  // (AttentionKvReads). 0 = no limit.
  double attention_max_shared_group = 0;
  double attention_group_reread_share = 0;
  // The per-call cost of decode attention over an 8-bit KV cache (another
  // kernel: TensorRT-LLM's fp8 XQA), when fitted; else per_call_seconds'.
  double attention_8bit_kv_per_call_seconds = 0;
  bool attention_8bit_kv_fitted = false;
  double elementwise_memory = 1;
  // Operands resident in an on-chip tier that publishes no bandwidth (a
  // GPU's L2 under a warm-cache benchmark; KernelCost::
  // onchip_bandwidth_unknown) move this many times faster than device
  // memory, >= 1. Fitted: the bound still charges device memory and says so.
  double l2_resident_speedup = 1;
};

// INVALID_ARGUMENT naming "<prefix>.per_call_seconds.gemm" etc., the range
// and the value.
absl::Status ValidateKernelModel(const KernelModel& m, std::string_view prefix);

// GEMM tiling: output tiles of tile_m x tile_n over the compute units, in
// waves. The tile is CUTLASS's default threadblock shape for tensor-core
// GEMMs on Ampere (and forwarded to Hopper by its examples): GemmShape<128,
// 256, 64> (NVIDIA/cutlass@59e3a33 include/cutlass/gemm/device/
// default_gemm_configuration.h L467, DefaultGemmConfiguration<OpClassTensorOp,
// Sm80>). One tile shape for every M: libraries pick others, which is why
// the share of the wave tail they pay is fitted (wave_quantization).
inline constexpr int64_t kGemmTileM = 128;
inline constexpr int64_t kGemmTileN = 256;
// The same threadblock's K depth, 64 16-bit elements: 128 bytes of each
// operand row per step of the K loop (fp8 operands: 128 elements).
inline constexpr int64_t kGemmKStepBytes = 64 * 2;
struct GemmTiling {
  int64_t tile_m = 0, tile_n = 0;
  int64_t tiles = 0;  // ceil(m / tile_m) x ceil(n / tile_n)
  int64_t waves = 0;  // ceil(tiles / compute units)
  // tiles / (waves x compute units): the busy share of the unit-waves.
  double wave_efficiency = 1;
};
GemmTiling TileGemm(int64_t m, int64_t n, int64_t compute_units);

// Serial K-loop steps of one CTA of a GEMM with `tiles` output tiles over
// K of `k_bytes` bytes per operand row: 0 when the tiles fill the units
// (throughput hides the loop), else ceil(min(k_bytes, split depth) /
// kGemmKStepBytes), the depth 0 meaning K is not split.
int64_t GemmSerialKSteps(int64_t tiles, int64_t k_bytes, int64_t compute_units,
                         double split_k_depth_bytes);

// Split-KV decode attention (FlashDecoding / TensorRT-LLM XQA multi-block):
// one CTA per (sequence, KV head); when they do not fill the compute units
// the KV length is split into chunks of at least kSplitKvMinTokens so the
// CTAs do, and a reduction merges the partial results
// (KernelModel::attention_split_merge_seconds).
inline constexpr int64_t kSplitKvMinTokens = 256;
struct SplitKv {
  int64_t ctas = 0;          // batch x kv heads
  int64_t splits = 1;        // KV chunks per CTA
  int64_t active_units = 0;  // min(compute units, ctas x splits)
};
SplitKv SplitDecodeAttention(int64_t batch, int64_t kv_heads, int64_t kv_length,
                             int64_t compute_units);

// How many times a decode-attention call of `q_heads` over `kv_heads` reads
// its KV under model m (1 for head groups it shares; see
// KernelModel::attention_max_shared_group).
double AttentionKvReads(const KernelModel& m, int64_t q_heads, int64_t kv_heads);

}  // namespace ridgeline::engine
