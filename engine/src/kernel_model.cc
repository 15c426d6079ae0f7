// The kernel model's shape arithmetic (tiles, waves, split-KV) and checks.
#include "ridgeline/engine/kernel_model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_format.h"
#include "ridgeline/engine/field_path.h"

namespace ridgeline::engine {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

absl::Status Bad(std::string_view prefix, const std::string& field,
                 std::string_view range, double value) {
  const std::string path = std::string(prefix) + "." + field;
  return WithFieldPath(absl::InvalidArgumentError(absl::StrFormat(
                           "%s: must be in %s, got %g", path, range, value)),
                       path);
}

bool InUnit(double v) { return v > 0 && v <= 1; }

}  // namespace

std::string_view KernelClassName(KernelClass c) {
  switch (c) {
    case KernelClass::kGemm:
      return "gemm";
    case KernelClass::kAttention:
      return "attention";
    case KernelClass::kElementwise:
      return "elementwise";
    case KernelClass::kCollective:
      return "collective";
  }
  return "?";
}

GemmRegime GemmRegimeOf(int64_t m) {
  if (m <= 16) return GemmRegime::kSmallM;
  if (m <= 128) return GemmRegime::kMediumM;
  return GemmRegime::kLargeM;
}

std::string_view GemmRegimeName(GemmRegime r) {
  switch (r) {
    case GemmRegime::kSmallM:
      return "m<=16";
    case GemmRegime::kMediumM:
      return "m<=128";
    case GemmRegime::kLargeM:
      return "m>128";
  }
  return "?";
}

absl::Status ValidateKernelModel(const KernelModel& m,
                                 std::string_view prefix) {
  for (int c = 0; c < kKernelClassCount; ++c) {
    const double v = m.per_call_seconds[c];
    if (!(v >= 0 && v <= 1)) {
      return Bad(prefix,
                 "per_call_seconds." +
                     std::string(KernelClassName(static_cast<KernelClass>(c))),
                 "[0, 1]", v);
    }
  }
  for (const auto& [name, g] :
       {std::pair{"gemm", &m.gemm}, std::pair{"gemm_fp8", &m.gemm_fp8}}) {
    for (int r = 0; r < kGemmRegimeCount; ++r) {
      const std::string_view regime =
          GemmRegimeName(static_cast<GemmRegime>(r));
      if (!InUnit(g->compute[r])) {
        return Bad(prefix,
                   std::string(name) + ".compute." + std::string(regime),
                   "(0, 1]", g->compute[r]);
      }
      if (!InUnit(g->memory[r])) {
        return Bad(prefix, std::string(name) + ".memory." + std::string(regime),
                   "(0, 1]", g->memory[r]);
      }
    }
  }
  if (!(m.fp8_quantization_seconds >= 0 && m.fp8_quantization_seconds <= 1)) {
    return Bad(prefix, "fp8_quantization_seconds", "[0, 1]",
               m.fp8_quantization_seconds);
  }
  if (!(m.l2_resident_speedup >= 1 && m.l2_resident_speedup <= 1000)) {
    return Bad(prefix, "l2_resident_speedup", "[1, 1000]", m.l2_resident_speedup);
  }
  if (!(m.attention_max_shared_group >= 0 &&
        m.attention_max_shared_group <= 4096)) {
    return Bad(prefix, "attention_max_shared_group", "[0, 4096] (0: no limit)",
               m.attention_max_shared_group);
  }
  if (!(m.gemm_split_k_depth_bytes >= 0 && m.gemm_split_k_depth_bytes <= 1e12)) {
    return Bad(prefix, "gemm_split_k_depth_bytes", "[0, 1e12] (0: K not split)",
               m.gemm_split_k_depth_bytes);
  }
  if (!(m.wave_quantization >= 0 && m.wave_quantization <= 1)) {
    return Bad(prefix, "wave_quantization", "[0, 1]", m.wave_quantization);
  }
  for (const auto& [name, v] :
       {std::pair{"attention_compute", m.attention_compute},
        std::pair{"attention_memory", m.attention_memory},
        std::pair{"elementwise_memory", m.elementwise_memory}}) {
    if (!InUnit(v)) return Bad(prefix, name, "(0, 1]", v);
  }
  for (const auto& [name, v] :
       {std::pair{"attention_seconds_per_cta", m.attention_seconds_per_cta},
        std::pair{"attention_seconds_per_query_head",
                  m.attention_seconds_per_query_head},
        std::pair{"attention_8bit_kv_per_call_seconds",
                  m.attention_8bit_kv_per_call_seconds},
        std::pair{"attention_split_merge_seconds",
                  m.attention_split_merge_seconds},
        std::pair{"gemm_seconds_per_k_step", m.gemm_seconds_per_k_step},
        std::pair{"attention_group_reread_share",
                  m.attention_group_reread_share}}) {
    if (!(v >= 0 && v <= 1)) return Bad(prefix, name, "[0, 1]", v);
  }
  if (!(m.attention_cta_bandwidth_share >= 0 &&
        m.attention_cta_bandwidth_share <= 1e6)) {
    return Bad(prefix, "attention_cta_bandwidth_share",
               "[0, 1e6] (0: not limited)", m.attention_cta_bandwidth_share);
  }
  return absl::OkStatus();
}

GemmTiling TileGemm(int64_t m, int64_t n, int64_t compute_units) {
  GemmTiling t;
  t.tile_m = kGemmTileM;
  t.tile_n = kGemmTileN;
  t.tiles = CeilDiv(std::max<int64_t>(m, 1), t.tile_m) *
            CeilDiv(std::max<int64_t>(n, 1), t.tile_n);
  const int64_t units = std::max<int64_t>(compute_units, 1);
  t.waves = CeilDiv(t.tiles, units);
  t.wave_efficiency =
      static_cast<double>(t.tiles) / static_cast<double>(t.waves * units);
  return t;
}

int64_t GemmSerialKSteps(int64_t tiles, int64_t k_bytes, int64_t compute_units,
                         double split_k_depth_bytes) {
  if (tiles >= compute_units) return 0;
  double depth = static_cast<double>(std::max<int64_t>(k_bytes, 1));
  if (split_k_depth_bytes > 0) depth = std::min(depth, split_k_depth_bytes);
  return static_cast<int64_t>(
      std::ceil(depth / static_cast<double>(kGemmKStepBytes)));
}

double AttentionKvReads(const KernelModel& m, int64_t q_heads,
                        int64_t kv_heads) {
  const int64_t group = q_heads / std::max<int64_t>(kv_heads, 1);
  if (m.attention_max_shared_group <= 0 ||
      static_cast<double>(group) <= m.attention_max_shared_group)
    return 1;
  return 1 + m.attention_group_reread_share * static_cast<double>(group - 1);
}

SplitKv SplitDecodeAttention(int64_t batch, int64_t kv_heads, int64_t kv_length,
                             int64_t compute_units) {
  SplitKv s;
  const int64_t units = std::max<int64_t>(compute_units, 1);
  s.ctas = std::max<int64_t>(batch, 1) * std::max<int64_t>(kv_heads, 1);
  if (s.ctas < units) {
    // Enough chunks to fill the units, none shorter than the minimum.
    s.splits =
        std::max<int64_t>(1, std::min(CeilDiv(units, s.ctas),
                                      CeilDiv(kv_length, kSplitKvMinTokens)));
  }
  s.active_units = std::min(units, s.ctas * s.splits);
  return s;
}

}  // namespace ridgeline::engine
