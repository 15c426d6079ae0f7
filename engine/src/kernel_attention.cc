// Kernel-level roofline: decode attention, single GEMM and memory streaming calls.
#include <algorithm>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "operators.h"
#include "placement.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/kernel.h"
#include "ridgeline/engine/kernel_model.h"
#include "roofline.h"
#include "validate_util.h"

namespace ridgeline::engine {
namespace {

absl::Status CheckRange(std::string_view prefix, std::string_view field,
                        int64_t value, int64_t lo, int64_t hi) {
  if (value < lo || value > hi) {
    return WithFieldPath(
        absl::InvalidArgumentError(absl::StrFormat(
            "%s.%s: must be in [%d, %d], got %d", prefix, field, lo, hi,
            value)),
        absl::StrCat(internal::Av(prefix), ".", internal::Av(field)));
  }
  return absl::OkStatus();
}

struct Traffic2 {
  double read = 0;
  double write = 0;
  double onchip_footprint = 0;  // bytes that must stay resident between calls
};

// Shared by the kernels: picks the tier by residency, then times the call
// as one op of the operator graph (internal::Evaluator).
absl::StatusOr<KernelCost> Roofline(double flops, const Traffic2& traffic,
                                    MathType wanted, OpClass op_class,
                                    OpKind kind, int64_t rows,
                                    const Hardware& hw, const Efficiency& eff,
                                    const KernelOptions& options) {
  if (hw.tiers.empty()) {
    return absl::InvalidArgumentError(
        "hardware.tiers: at least one memory tier is required, got 0");
  }
  KernelCost cost;
  cost.op_class = op_class;
  cost.flops = flops;
  cost.bytes = traffic.read + traffic.write;

  int device_tier = -1;
  int onchip_tier = -1;
  for (int i = 0; i < static_cast<int>(hw.tiers.size()); ++i) {
    if (hw.tiers[i].kind == TierKind::kSram) {
      if (onchip_tier < 0) onchip_tier = i;
    } else if (device_tier < 0) {
      device_tier = i;
    }
  }
  if (device_tier < 0) device_tier = 0;  // an all-SRAM part (wafer-scale, PIM)
  int tier = device_tier;
  if (options.warm_cache && onchip_tier >= 0 &&
      traffic.onchip_footprint <= hw.tiers[onchip_tier].capacity_bytes) {
    cost.onchip_resident = true;
    if (hw.tiers[onchip_tier].read_bandwidth_bytes_per_second > 0) {
      tier = onchip_tier;
    } else {
      cost.onchip_bandwidth_unknown = true;
    }
  } else if (options.warm_cache && onchip_tier < 0 &&
             hw.last_level_cache_bytes &&
             traffic.onchip_footprint <= *hw.last_level_cache_bytes) {
    // A GPU's L2 (ABI 1.3 size, no published bandwidth): resident, charged
    // to device memory, and said so.
    cost.onchip_resident = cost.onchip_bandwidth_unknown = true;
  }
  cost.tier = tier;
  const MemoryTier& t = hw.tiers[tier];
  if (t.read_bandwidth_bytes_per_second <= 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "hardware.tiers[%d].read_bandwidth_bytes_per_second: must be > 0, "
        "got %g",
        tier, t.read_bandwidth_bytes_per_second));
  }

  const int c = static_cast<int>(op_class);
  const double eta_c = options.pure_roofline ? 1.0 : eff.compute[c];
  const double eta_m = options.pure_roofline ? 1.0 : eff.memory[c];
  if (!(eta_c > 0 && eta_c <= 1) || !(eta_m > 0 && eta_m <= 1)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "efficiency.%s: compute and memory must be in (0, 1], got %g and %g",
        OpClassName(op_class), eta_c, eta_m));
  }

  // Timed by the operator graph's rule (roofline.h): the same roofs, the
  // same efficiency (and plugin hook), the same launch-overhead rule.
  std::optional<MathType> executed =
      ExecutedMathType(hw.peak_ops_per_second, wanted);
  cost.math = executed.value_or(wanted);
  internal::OpCost op;
  op.kind = kind;
  op.op_class = op_class;
  op.math = cost.math;
  op.rows = rows;
  op.flops = flops;
  op.read[internal::kAct] = traffic.read;
  op.write[internal::kAct] = traffic.write;
  AnalysisOptions analysis;
  analysis.pure_roofline = options.pure_roofline;
  const internal::PlacementInfo placement = internal::AllInTier(hw, tier);
  const internal::Evaluator ev(hw, eff, analysis, placement);
  const internal::Timing timing = ev.Time(op);
  cost.compute_seconds = timing.compute;
  cost.memory_seconds = timing.memory;
  cost.overhead_seconds = timing.overhead;
  cost.seconds = timing.seconds;
  cost.bound = timing.bound;
  return cost;
}

// What the kernel model needs of the call beyond its pure roofs.
struct ModelInput {
  KernelClass kernel_class = KernelClass::kGemm;
  GemmShape gemm;                  // kGemm
  bool fp8 = false;                // kGemm: executes in fp8
  DecodeAttentionShape attention;  // kAttention
};

constexpr std::string_view kNoComputeUnits =
    "compute-unit count not published for this part: plain roofline form "
    "(no tile, wave or split-KV effects)";

// Re-times a pure-roofline cost with the kernel model (kernel_model.h).
void ApplyKernelModel(const KernelModel& km, const Hardware& hw,
                      const ModelInput& in, KernelCost* cost) {
  const double pure_compute = cost->compute_seconds;
  const double pure_memory = cost->memory_seconds;
  cost->kernel_model = true;
  const bool units_known = hw.compute_units.has_value();
  const int64_t units = hw.compute_units.value_or(0);
  cost->compute_units = units;
  cost->shape_modelled = units_known;
  if (!units_known) cost->note = std::string(kNoComputeUnits);
  double compute = pure_compute, memory = pure_memory, overhead = 0;
  switch (in.kernel_class) {
    case KernelClass::kGemm: {
      const int r = static_cast<int>(GemmRegimeOf(in.gemm.m));
      const GemmEfficiency& eff =
          in.fp8 && km.gemm_fp8_fitted ? km.gemm_fp8 : km.gemm;
      double wave = 1;
      if (units_known) {
        const GemmTiling t = TileGemm(in.gemm.m, in.gemm.n, units);
        cost->tiles = t.tiles;
        cost->waves = t.waves;
        cost->wave_efficiency = t.wave_efficiency;
        wave = 1 - km.wave_quantization * (1 - t.wave_efficiency);
        cost->k_steps = GemmSerialKSteps(
            t.tiles, in.gemm.k * (in.fp8 ? 1 : 2), units,
            km.gemm_split_k_depth_bytes);
      }
      compute = pure_compute / (eff.compute[r] * wave);
      memory = pure_memory / eff.memory[r];
      overhead = km.per_call_seconds[static_cast<int>(KernelClass::kGemm)] +
                 km.gemm_seconds_per_k_step *
                     static_cast<double>(cost->k_steps);
      if (in.fp8) {
        // Dynamic activation quantisation: the bf16 activations are read
        // and written back as fp8 before the GEMM reads them.
        const double bw = hw.tiers[cost->tier].read_bandwidth_bytes_per_second;
        const double quant_bytes = static_cast<double>(in.gemm.m) *
                                   static_cast<double>(in.gemm.k) * (2.0 + 1.0);
        memory += quant_bytes / (bw * eff.memory[r]);
        overhead += km.fp8_quantization_seconds;
      }
      break;
    }
    case KernelClass::kAttention: {
      const double kv_reads = AttentionKvReads(
          km, in.attention.num_q_heads, in.attention.num_kv_heads);
      compute = pure_compute / km.attention_compute;
      memory = pure_memory * kv_reads / km.attention_memory;
      if (units_known) {
        const SplitKv s =
            SplitDecodeAttention(in.attention.batch, in.attention.num_kv_heads,
                                 in.attention.kv_length, units);
        cost->ctas = s.ctas;
        cost->splits = s.splits;
        cost->active_units = s.active_units;
        if (s.splits > 1) overhead += km.attention_split_merge_seconds;
        if (km.attention_cta_bandwidth_share > 0) {
          // Each active CTA streams at most share x (bandwidth / units).
          memory = std::max(memory, pure_memory * kv_reads *
                                        static_cast<double>(units) /
                                        (static_cast<double>(s.active_units) *
                                         km.attention_cta_bandwidth_share));
        }
      }
      const DecodeAttentionShape& a = in.attention;
      overhead +=
          a.dtype.bits <= 8 && km.attention_8bit_kv_fitted
              ? km.attention_8bit_kv_per_call_seconds
              : km.per_call_seconds[static_cast<int>(KernelClass::kAttention)];
      overhead += km.attention_seconds_per_cta *
                      static_cast<double>(a.batch * a.num_kv_heads) +
                  km.attention_seconds_per_query_head *
                      static_cast<double>(a.batch * a.num_q_heads);
      break;
    }
    case KernelClass::kElementwise:
    case KernelClass::kCollective:
      memory = pure_memory / km.elementwise_memory;
      overhead = km.per_call_seconds[static_cast<int>(in.kernel_class)];
      break;
  }
  if (cost->onchip_bandwidth_unknown) memory /= km.l2_resident_speedup;
  cost->compute_seconds = compute;
  cost->memory_seconds = memory;
  cost->overhead_seconds = overhead;
  cost->seconds = std::max(compute, memory) + overhead;
  cost->bound = internal::DominantBound(compute, memory, 0, overhead);
}

// Times one kernel: the kernel model when the efficiency carries one (on
// the pure roofs), else the operator graph's rule.
absl::StatusOr<KernelCost> TimeKernel(double flops, const Traffic2& traffic,
                                      MathType wanted, OpClass op_class,
                                      OpKind kind, int64_t rows,
                                      const Hardware& hw, const Efficiency& eff,
                                      const KernelOptions& options,
                                      const ModelInput& in) {
  if (options.pure_roofline || !eff.kernel.present) {
    return Roofline(flops, traffic, wanted, op_class, kind, rows, hw, eff,
                    options);
  }
  KernelOptions pure = options;
  pure.pure_roofline = true;
  absl::StatusOr<KernelCost> cost =
      Roofline(flops, traffic, wanted, op_class, kind, rows, hw, eff, pure);
  if (!cost.ok()) return cost;
  ModelInput input = in;
  input.fp8 =
      in.kernel_class == KernelClass::kGemm && cost->math == MathType::kFp8;
  ApplyKernelModel(eff.kernel, hw, input, &*cost);
  return cost;
}

}  // namespace

absl::Status ValidateDecodeAttentionShape(const DecodeAttentionShape& s,
                                          std::string_view prefix) {
  if (auto st = CheckRange(prefix, "batch", s.batch, 1, 65536); !st.ok()) return st;
  if (auto st = CheckRange(prefix, "num_q_heads", s.num_q_heads, 1, 4096); !st.ok()) return st;
  if (auto st = CheckRange(prefix, "num_kv_heads", s.num_kv_heads, 1, 4096); !st.ok()) return st;
  if (auto st = CheckRange(prefix, "head_dim", s.head_dim, 1, 1024); !st.ok()) return st;
  if (auto st = CheckRange(prefix, "kv_length", s.kv_length, 1, 10'000'000); !st.ok()) return st;
  if (s.num_q_heads % s.num_kv_heads != 0) {
    return WithFieldPath(
        absl::InvalidArgumentError(absl::StrFormat(
            "%s.num_q_heads: must be a multiple of num_kv_heads (%d), got %d",
            prefix, s.num_kv_heads, s.num_q_heads)),
        absl::StrCat(internal::Av(prefix), ".num_q_heads"));
  }
  if (!(s.dtype.bits >= 2 && s.dtype.bits <= 32)) {
    return WithFieldPath(
        absl::InvalidArgumentError(absl::StrFormat(
            "%s.dtype.bits: must be in [2, 32], got %g", prefix, s.dtype.bits)),
        absl::StrCat(internal::Av(prefix), ".dtype"));
  }
  return absl::OkStatus();
}

absl::Status ValidateGemmShape(const GemmShape& s, std::string_view prefix) {
  if (auto st = CheckRange(prefix, "m", s.m, 1, 10'000'000); !st.ok()) return st;
  if (auto st = CheckRange(prefix, "n", s.n, 1, 10'000'000); !st.ok()) return st;
  if (auto st = CheckRange(prefix, "k", s.k, 1, 10'000'000); !st.ok()) return st;
  for (const auto& [name, f] : {std::pair{"a", &s.a}, std::pair{"b", &s.b}}) {
    if (!(f->bits >= 2 && f->bits <= 32)) {
      return WithFieldPath(
          absl::InvalidArgumentError(absl::StrFormat(
              "%s.%s.bits: must be in [2, 32], got %g", prefix, name, f->bits)),
          absl::StrCat(internal::Av(prefix), ".", name, "_format"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateMemoryKernelShape(const MemoryKernelShape& s,
                                       std::string_view prefix) {
  return CheckRange(prefix, "bytes", s.bytes, 1, int64_t{1} << 50);
}

absl::StatusOr<KernelCost> DecodeAttentionKernel(
    const DecodeAttentionShape& s, const Hardware& hardware,
    const Efficiency& efficiency, const KernelOptions& options) {
  if (auto st = ValidateDecodeAttentionShape(s); !st.ok()) return st;
  const double b = static_cast<double>(s.batch);
  const double hq = static_cast<double>(s.num_q_heads);
  const double hkv = static_cast<double>(s.num_kv_heads);
  const double d = static_cast<double>(s.head_dim);
  const double len = static_cast<double>(s.kv_length);
  const double e = s.dtype.bytes_per_element();
  // The operator graph's attention FLOPs (QK^T, softmax, score x V).
  const double flops = internal::AttentionFlops(b * hq * len, d, d);
  Traffic2 traffic;
  const double kv = 2.0 * b * hkv * len * d * e;  // K and V
  const double q = b * hq * d * e;
  traffic.read = kv + q;
  traffic.write = q;  // output has the query's shape
  traffic.onchip_footprint = kv + 2.0 * q;
  // An fp32 or unquantised dtype without native math runs in fp16 at best.
  const MathType wanted = s.dtype.native_math.value_or(MathType::kFp16);
  ModelInput in;
  in.kernel_class = KernelClass::kAttention;
  in.attention = s;
  return TimeKernel(flops, traffic, wanted, OpClass::kAttention,
                    OpKind::kFlashAttention, s.batch, hardware, efficiency,
                    options, in);
}

absl::StatusOr<KernelCost> GemmKernel(const GemmShape& s,
                                      const Hardware& hardware,
                                      const Efficiency& efficiency,
                                      const KernelOptions& options,
                                      int64_t gemv_max_tokens) {
  if (auto st = ValidateGemmShape(s); !st.ok()) return st;
  const double m = static_cast<double>(s.m);
  const double n = static_cast<double>(s.n);
  const double k = static_cast<double>(s.k);
  Traffic2 traffic;
  traffic.read = m * k * s.a.bytes_per_element() + k * n * s.b.bytes_per_element();
  traffic.write = m * n * s.a.bytes_per_element();
  traffic.onchip_footprint = traffic.read + traffic.write;
  absl::StatusOr<MathType> math = MatmulMathType(s.b, s.a);
  if (!math.ok()) return math.status();
  math = WithAccumulation(*math, options.fp16_accumulation);
  const OpClass op_class = s.m <= gemv_max_tokens ? OpClass::kGemv : OpClass::kGemm;
  // The kind only labels the op; timing does not read it.
  ModelInput in;
  in.kernel_class = KernelClass::kGemm;
  in.gemm = s;
  return TimeKernel(2.0 * m * n * k, traffic, *math, op_class,
                    OpKind::kLinearReplacement, s.m, hardware, efficiency,
                    options, in);
}

absl::StatusOr<KernelCost> MemoryKernel(const MemoryKernelShape& s,
                                        const Hardware& hardware,
                                        const Efficiency& efficiency,
                                        const KernelOptions& options) {
  if (auto st = ValidateMemoryKernelShape(s); !st.ok()) return st;
  Traffic2 traffic;
  traffic.read = static_cast<double>(s.bytes);
  // A copy moves every byte twice: read from the source, written to the
  // destination, each at its own tier bandwidth (Roofline sums the two).
  traffic.write = s.copy ? traffic.read : 0;
  traffic.onchip_footprint = traffic.read + traffic.write;
  // No FLOPs: the compute roof contributes 0 s, so hardware without a
  // published peak still gets a bound.
  ModelInput in;
  in.kernel_class = KernelClass::kElementwise;
  return TimeKernel(0, traffic, MathType::kFp16, OpClass::kElementwise,
                    OpKind::kResidualAdd, 1, hardware, efficiency, options, in);
}

}  // namespace ridgeline::engine
