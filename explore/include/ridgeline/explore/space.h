// A design space: a base scenario (model, base hardware part, workload,
// formats, parallelism, economics) and axes, each a list of values. The
// points are the grid of all axes, numbered by MixedRadix (first axis
// slowest); each axis's values are sorted ascending (formats by name) and
// de-duplicated, so the same axes always number the same points the same
// way, whatever order the values were given in.
//
// Hardware axes (absolute values in the unit the name says, or `<stem>_x`
// multipliers of the base part's value):
//   bandwidth_gbs       device-memory tier (first HBM/GDDR/LPDDR/DDR/unified
//                       tier) read and write bandwidth, GB/s (1e9 B/s)
//   peak_tflops         dense BF16 TFLOPS (FP16 where the part has no BF16);
//                       every other math type scales by the same factor
//   peak_tflops.<type>  one math type only, e.g. peak_tflops.fp8
//   capacity_gb         device-memory capacity, GiB as marketed (2^30 B)
//   sram_mb, sram_bandwidth_gbs   the on-chip SRAM tier: MiB (2^20 B), GB/s
//   tdp_w, price_usd, interconnect_gbs (per device, both directions)
//   pim_bandwidth_gbs, pim_tflops the processing-in-memory tier's internal
//                       bandwidth and compute (BF16-referenced, all types)
//   die_area_mm2        die area, mm2: the request's figure (no part here
//                       publishes one); feeds gbs_per_mm2, tflops_per_mm2
//                       and usd_per_mm2 only. No multiplier.
//   multipliers: bandwidth_x, peak_x (peak_x.<type>), capacity_x, sram_x,
//   sram_bandwidth_x, tdp_x, price_x, interconnect_x, pim_bandwidth_x, pim_x
// Energy per byte and per op follow the base part (no axis sets them).
// Deployment axes: batch, prompt, gen (generated tokens), weights,
// activations, kv (number formats), tensor_parallel.
//
// Values: a comma list ("24,48,96") or lo:hi:n, n values log-spaced from
// lo to hi inclusive (lo, hi > 0; n in 1..100000). Format axes take names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ridgeline/engine/formats.h"
#include "ridgeline/engine/scenario.h"
#include "ridgeline/explore/grid.h"

namespace ridgeline::explore {

enum class AxisKind : uint8_t {
  kBandwidth = 0,
  kPeak,
  kCapacity,
  kSram,
  kSramBandwidth,
  kTdp,
  kPrice,
  kInterconnect,
  kPimBandwidth,
  kPim,
  // The die area a design states (not an engine figure: only the per-mm2
  // metrics read it).
  kDieArea,
  // Deployment axes (they change the operator graph).
  kBatch,
  kPrompt,
  kGen,
  kWeights,
  kActivations,
  kKv,
  kTensorParallel,
  // Speculative decoding of the base scenario: k and the acceptance rate.
  kSpeculativeTokens,
  kAcceptanceRate,
};

struct Axis {
  std::string name;  // as given: "bandwidth_gbs", "peak_tflops.fp8", "tdp_x"
  AxisKind kind = AxisKind::kBandwidth;
  bool multiplier = false;
  std::optional<engine::MathType> math;  // peak_tflops.<type>
  std::vector<double> values;            // numeric axes, ascending
  std::vector<engine::NumberFormat> formats;  // format axes, by name
  size_t size() const {
    return formats.empty() ? values.size() : formats.size();
  }
  bool hardware() const { return kind < AxisKind::kBatch; }
  // The k-th value as printed in outputs: the format name, or the number's
  // shortest round-trip decimal form.
  std::string Label(size_t k) const;
};

inline constexpr size_t kMaxAxes = 16;
inline constexpr size_t kMaxAxisValues = 100000;

// "name=values". Errors are INVALID_ARGUMENT naming `field`, the allowed
// names or range and the value.
absl::StatusOr<Axis> ParseAxis(std::string_view spec, std::string_view field);

// Shortest decimal text that parses back to exactly `v`.
std::string FormatNumber(double v);

struct Space {
  engine::Scenario base;
  std::vector<Axis> axes;
  MixedRadix Grid() const;
};

// Checks that the base part has what every axis changes (a device-memory
// tier, an SRAM tier, a PIM tier, a BF16/FP16 peak, the named math type;
// a base value for multipliers of optional figures). INVALID_ARGUMENT
// naming `field`[k] otherwise.
absl::Status ValidateSpace(const Space& space, std::string_view field = "vary");

// Sets the hardware numbers of the point with axis digits `digits` on `hw`
// (a copy of space.base.hardware; only the numbers axes touch are written,
// from the base part, so `hw` can be reused across points without copying
// strings). Deployment axes are ignored here.
void ApplyHardwareAxes(const Space& space, const uint64_t* digits,
                       engine::Hardware* hw);
// Sets the deployment fields (workload, formats, parallelism) of `s`.
void ApplyDeploymentAxes(const Space& space, const uint64_t* digits,
                         engine::Scenario* s);

// The die area (mm2) of the point: its die_area_mm2 axis value, NaN when
// the space has no such axis.
double DieAreaMm2(const Space& space, const uint64_t* digits);

// Index of the device-memory, SRAM and PIM tiers of `hw`; -1 when none.
int DeviceMemoryTier(const engine::Hardware& hw);
int SramTier(const engine::Hardware& hw);
int PimTier(const engine::Hardware& hw);
// BF16 peak, or FP16 where there is no BF16; 0 when neither.
double ReferencePeak(const engine::PerMathType& peaks);

}  // namespace ridgeline::explore
