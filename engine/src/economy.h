// Economy: energy (per op and byte, or board power x time), $ (purchase
// price amortised over the device's life plus electricity x PUE) and gCO2e
// (grid intensity plus embodied carbon amortised) of an analysis. Every
// default's source is beside its definition in scenario.cc. Internal.
#pragma once

#include <array>
#include <optional>

#include "ridgeline/engine/result.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::engine::internal {

// What a phase's energy depends on: FLOPs by where and in which math type
// they ran, bytes moved per tier, and the phase's time (idle power).
struct EnergyTally {
  std::array<double, kMathTypeCount> unit_flops{};  // on the compute unit
  std::array<double, kMaxTiers> pim_flops{};        // in PIM tier t
  std::array<double, kMaxTiers> bytes{};            // read + write per tier
  double seconds = 0;
};
// Adds one op (all its layers) that ran in `math` on the compute unit
// (tier < 0) or in PIM tier `tier`, with `traffic` per class and tier.
void TallyOp(double flops, MathType math, int tier,
             const TrafficTable& traffic, int tiers, EnergyTally* t);
// The same from per-class amounts and the placement fractions `frac`
// (traffic[c][tier] = amount[c] x frac[c][tier] x scale, as MakeOpResult).
void TallyOp(double flops, MathType math, int tier,
             const std::array<double, kOperandClassCount>& read,
             const std::array<double, kOperandClassCount>& write,
             const std::array<std::array<double, kMaxTiers>,
                              kOperandClassCount>& frac,
             int tiers, double scale, EnergyTally* t);

// Energy by FLOPs x J/op + bytes x J/byte + idle power x time; nullopt when
// an energy the phase needs is not published.
std::optional<double> PhaseEnergy(const Hardware& hw, const EnergyTally& t);

// The economy from the two phases' tallies: energy (per op and byte, else
// board power x time), $ and gCO2e, for all devices.
void FinishEconomy(const Scenario& s, const EnergyTally& prefill,
                   const EnergyTally& decode, double e2e_seconds, Economy* e);

// Fills r->economy from r's per-op prefill and decode results (energy is
// counted once per op, over all its layers) for all devices.
void ComputeEconomy(const Scenario& s, AnalysisResult* r);

}  // namespace ridgeline::engine::internal
