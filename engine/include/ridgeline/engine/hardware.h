// The engine's description of one device: compute and ordered memory tiers.
// Filled from a plugin (plugin_host) or given inline in a request. SI units,
// named in each field. Plain data; safe to share read-only across threads.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "ridgeline/engine/formats.h"

namespace ridgeline::engine {

enum class TierKind : uint8_t {
  kSram = 0, kHbm, kGddr, kLpddr, kDdr, kUnified, kHostLink, kFlash,
};
inline constexpr int kTierKindCount = 8;
std::string_view TierKindName(TierKind kind);  // "sram", "hbm", ..., "host-link", "flash"
std::optional<TierKind> ParseTierKind(std::string_view name);

// Compute that sits inside a memory tier (processing in memory).
struct NearMemoryCompute {
  double internal_bandwidth_bytes_per_second = 0;  // bank-level, > tier bandwidth
  PerMathType peak_ops_per_second;                 // dense
  std::optional<double> energy_joules_per_op;
};

inline constexpr int kMaxTiers = 8;

struct MemoryTier {
  std::string name;  // "L2", "HBM3", "host DDR5 over PCIe 5.0 x16", "UFS 4.0"
  TierKind kind = TierKind::kHbm;
  double capacity_bytes = 0;
  double read_bandwidth_bytes_per_second = 0;
  double write_bandwidth_bytes_per_second = 0;
  double latency_seconds = 0;
  std::optional<double> energy_joules_per_byte;
  std::optional<NearMemoryCompute> near_memory_compute;
  // Share of the raw bandwidth inline ECC's check bits take when the part
  // runs as shipped (GDDR data-centre parts: 1/16). The bound ignores it
  // (ECC can be turned off); predictions of profiles fitted net of it
  // (Efficiency::inline_ecc) stream data at (1 - share) of the rate; a
  // serving runtime's KV pool is sized from (1 - share) of the capacity
  // (serving::ComputeKvCapacity), and analyze warns past it.
  double inline_ecc_share = 0;
};

// Shapes passed to a plugin's per-op efficiency hook.
enum class OpClass : uint8_t { kGemm = 0, kGemv, kAttention, kElementwise };
inline constexpr int kOpClassCount = 4;
std::string_view OpClassName(OpClass c);  // "gemm", "gemv", "attention", "elementwise"

struct OpEfficiency {
  double compute = 1;  // fraction of peak ops/s attained, (0, 1]
  double memory = 1;   // fraction of bandwidth attained, (0, 1]
};
struct OpShape {
  OpClass op_class;
  MathType math;
  int64_t tokens;  // rows of the matmul / tokens in the step
  double flops;
  double bytes;
};
// Optional plugin hook; nullopt = engine defaults. Must be thread-safe.
using EfficiencyHook = std::function<std::optional<OpEfficiency>(const OpShape&)>;

struct Hardware {
  std::string id;            // stable kebab id, e.g. "nvidia-h100-sxm-80gb"
  std::string display_name;  // "NVIDIA H100 SXM5 80GB"
  std::string vendor;
  std::string family;        // plugin family: "nvidia", "amd", "apple", "intel", "npu", "pim", "inline"
  std::string plugin;        // plugin file name or "inline"
  std::vector<std::string> sources;  // citations for the numbers

  PerMathType peak_ops_per_second;   // dense; sparse figures are never used
  PerMathType energy_joules_per_op;  // nullopt: not published
  double kernel_launch_seconds = 0;  // per kernel; 0 when not published
  // ABI 1.3: streaming multiprocessors / compute units the kernel model
  // spreads GEMM tiles and attention CTAs over, and the last-level cache
  // (L2) size. Unset: not published; kernels then get the plain roofline
  // (no tile, wave or split-KV effects) and say so.
  std::optional<int64_t> compute_units;
  std::optional<double> last_level_cache_bytes;

  // Ordered fastest first (tier 0 is tried first by placement). At most kMaxTiers.
  std::vector<MemoryTier> tiers;

  std::optional<double> tdp_watts;
  std::optional<double> idle_watts;
  std::optional<double> price_usd;
  std::optional<double> embodied_kg_co2e;
  // Two link levels (ABI 1.2). Scale-up (NVLink, Infinity Fabric, ...)
  // joins the devices of one node; scale-out (InfiniBand, RoCE, Ethernet)
  // joins nodes. Bandwidths are per device, both directions together.
  // interconnect_bytes_per_second is the scale-up bandwidth (its meaning
  // since 1.0); it times tensor-parallel all-reduces and every collective
  // whose group stays inside a node. Unset = unknown: such collectives cost
  // no time and the analysis warns.
  std::optional<double> interconnect_bytes_per_second;
  std::optional<double> scale_up_latency_seconds;    // one-way, per step
  std::optional<double> scale_out_bytes_per_second;
  std::optional<double> scale_out_latency_seconds;   // one-way, per step
  // Devices per scale-up domain (8 on an HGX board); unset = unknown, every
  // group is then taken to fit in one node.
  std::optional<int64_t> devices_per_node;

  EfficiencyHook efficiency_hook;  // empty: none
};

// Checks every field; errors are INVALID_ARGUMENT naming
// "<prefix>.tiers[1].read_bandwidth_bytes_per_second" and the allowed range.
absl::Status ValidateHardware(const Hardware& hw, std::string_view prefix = "hardware");

}  // namespace ridgeline::engine
