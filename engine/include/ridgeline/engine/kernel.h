// Kernel-level roofline models: the single-query decode attention kernel
// (FlashInfer single_decode_with_kv_cache / batch decode), one GEMM call and
// a device-memory streaming read or copy (bench/gpu membw).
// They answer "how long does one kernel call take on this hardware" from
// FLOPs and bytes, for comparison with micro-benchmarks. Pure functions of
// their arguments; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "ridgeline/engine/formats.h"
#include "ridgeline/engine/hardware.h"
#include "ridgeline/engine/result.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::engine {

// One decode-attention call: every sequence in the batch has one query token
// and a KV cache of kv_length tokens.
struct DecodeAttentionShape {
  int64_t batch = 1;          // 1..65536
  int64_t num_q_heads = 32;   // 1..4096, a multiple of num_kv_heads
  int64_t num_kv_heads = 32;  // 1..4096 (== q heads: MHA; fewer: GQA/MQA)
  int64_t head_dim = 128;     // 1..1024
  int64_t kv_length = 2048;   // tokens, 1..10,000,000
  NumberFormat dtype = {"fp16", 16, MathType::kFp16};  // q, k, v and output
};

// One GEMM call C[m x n] = A[m x k] * B[k x n]; A is activations, B weights.
struct GemmShape {
  int64_t m = 1;  // rows (tokens), 1..10,000,000
  int64_t n = 1;  // 1..10,000,000
  int64_t k = 1;  // 1..10,000,000
  NumberFormat a = {"fp16", 16, MathType::kFp16};  // also the output format
  NumberFormat b = {"fp16", 16, MathType::kFp16};
};

// One device-memory streaming call over a buffer of `bytes` bytes: a read
// kernel (reads it once) or a device-to-device copy (reads it and writes a
// buffer of the same size).
struct MemoryKernelShape {
  int64_t bytes = 1;  // bytes read per call, 1..2^50
  bool copy = false;  // true: also writes `bytes`
};

struct KernelOptions {
  // Benchmarks call the kernel again and again on the same tensors: operands
  // that fit in an on-chip (kSram) tier stay there between calls. False: every
  // call streams from device memory (cold cache, inputs rotated).
  bool warm_cache = true;
  // Efficiency 1 and no launch overhead: the speed bound.
  bool pure_roofline = false;
  // GEMM: fp16 accumulates in fp16 (AnalysisOptions::fp16_accumulation).
  bool fp16_accumulation = false;
};

struct KernelCost {
  double flops = 0;
  double bytes = 0;             // read + written
  MathType math = MathType::kFp16;  // the type the math executed in
  OpClass op_class = OpClass::kAttention;  // whose efficiency applied
  int tier = 0;                 // index of the tier the operands were read from
  // The operands fit in the on-chip tier and warm_cache was set. When that
  // tier has no published bandwidth the bytes are charged to device memory
  // instead (onchip_bandwidth_unknown), so the result is no longer a bound.
  bool onchip_resident = false;
  bool onchip_bandwidth_unknown = false;
  double compute_seconds = 0;
  double memory_seconds = 0;
  double overhead_seconds = 0;  // launch / per-kernel overhead
  double seconds = 0;           // max(compute, memory) + overhead
  Bound bound = Bound::kMemory;
  // The kernel model (efficiency.kernel) timed this call: per-call cost of
  // its class, efficiency of its shape regime.
  bool kernel_model = false;
  // The hardware publishes its compute-unit count, so tiles and waves (GEMM)
  // or split-KV CTAs (decode attention) shaped the time; false: the plain
  // roofline form, and `note` says so.
  bool shape_modelled = false;
  int64_t compute_units = 0;
  int64_t tiles = 0, waves = 0;  // GEMM
  double wave_efficiency = 1;    // tiles / (waves x compute units)
  int64_t k_steps = 0;  // GEMM: serial K-loop steps paid (GemmSerialKSteps)
  int64_t ctas = 0, splits = 0, active_units = 0;  // decode attention
  std::string note;
};

// Errors are INVALID_ARGUMENT naming "<prefix>.kv_length" etc., the allowed
// range and the value received.
absl::Status ValidateDecodeAttentionShape(const DecodeAttentionShape& shape,
                                          std::string_view prefix = "shape");
absl::Status ValidateGemmShape(const GemmShape& shape,
                               std::string_view prefix = "shape");
absl::Status ValidateMemoryKernelShape(const MemoryKernelShape& shape,
                                       std::string_view prefix = "shape");

// FLOPs: batch x q_heads x kv_length x (4 x head_dim + 5): 2 x head_dim
// for QK^T, 2 x head_dim for score x V and 5 per score for the softmax, as
// the operator graph counts fused attention. Bytes: K and V once per KV
// head, q read and output written once per query head. Compute runs at the
// peak of the dtype's math type (tensor cores: the bound may not assume
// slower units). Every kernel is timed by the operator graph's roofline
// rule: efficiency.compute/memory of its op class (or the plugin's
// efficiency hook when no profile is named), and per kernel
// efficiency.per_kernel_overhead_seconds (hardware.kernel_launch_seconds
// when a named profile fitted none); the default Efficiency is the pure
// bound.
// With efficiency.kernel present (and not pure_roofline) the kernel model
// times the call instead (kernel_model.h): compute / (eta_c of the shape),
// memory / (eta_m of the shape, and for decode attention no faster than the
// active CTAs can stream), plus the per-call cost of the kernel class.
absl::StatusOr<KernelCost> DecodeAttentionKernel(
    const DecodeAttentionShape& shape, const Hardware& hardware,
    const Efficiency& efficiency, const KernelOptions& options = {});

// FLOPs 2mnk; bytes: A and B read once, C written once (in A's format).
// Op class: kGemv when m <= gemv_max_tokens, else kGemm.
absl::StatusOr<KernelCost> GemmKernel(const GemmShape& shape,
                                      const Hardware& hardware,
                                      const Efficiency& efficiency,
                                      const KernelOptions& options = {},
                                      int64_t gemv_max_tokens = 64);

// No FLOPs. Read: bytes / (read bandwidth x eta_m). Copy: bytes read and
// the same bytes written, bytes / read_bw + bytes / write_bw (write = read
// bandwidth when the tier gives one figure), over eta_m. Device tier unless
// warm_cache and the buffers fit on chip. Op class kElementwise (a streaming
// pass); calibrated time adds the per-kernel overhead as the other kernels.
absl::StatusOr<KernelCost> MemoryKernel(const MemoryKernelShape& shape,
                                        const Hardware& hardware,
                                        const Efficiency& efficiency,
                                        const KernelOptions& options = {});

}  // namespace ridgeline::engine
