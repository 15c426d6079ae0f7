// Energy, cost and carbon of an analysis (see economy.h).
#include "economy.h"

#include <optional>
#include <string>
#include <string_view>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "ridgeline/engine/prices.h"
#include "validate_util.h"

namespace ridgeline::engine::internal {
namespace {

constexpr double kSecondsPerYear = 365.25 * 24 * 3600;
constexpr double kJoulesPerKwh = 3.6e6;

}  // namespace

void TallyOp(double flops, MathType math, int tier,
             const TrafficTable& traffic, int tiers, EnergyTally* t) {
  if (flops > 0) {
    if (tier >= 0) {
      t->pim_flops[tier] += flops;
    } else {
      t->unit_flops[static_cast<int>(math)] += flops;
    }
  }
  for (int c = 0; c < kOperandClassCount; ++c) {
    for (int k = 0; k < tiers; ++k) {
      t->bytes[k] += traffic[c][k].read + traffic[c][k].write;
    }
  }
}

void TallyOp(double flops, MathType math, int tier,
             const std::array<double, kOperandClassCount>& read,
             const std::array<double, kOperandClassCount>& write,
             const std::array<std::array<double, kMaxTiers>,
                              kOperandClassCount>& frac,
             int tiers, double scale, EnergyTally* t) {
  if (flops > 0) {
    if (tier >= 0) {
      t->pim_flops[tier] += flops * scale;
    } else {
      t->unit_flops[static_cast<int>(math)] += flops * scale;
    }
  }
  for (int c = 0; c < kOperandClassCount; ++c) {
    for (int k = 0; k < tiers; ++k) {
      const double f = frac[c][k];
      if (f == 0) continue;
      t->bytes[k] += read[c] * f * scale + write[c] * f * scale;
    }
  }
}

std::optional<double> PhaseEnergy(const Hardware& hw, const EnergyTally& t) {
  // Per-op-and-byte needs an energy for every math type and tier used.
  double j = 0;
  for (int m = 0; m < kMathTypeCount; ++m) {
    if (t.unit_flops[m] <= 0) continue;
    if (!hw.energy_joules_per_op[m].has_value()) return std::nullopt;
    j += t.unit_flops[m] * *hw.energy_joules_per_op[m];
  }
  for (size_t k = 0; k < hw.tiers.size(); ++k) {
    if (t.pim_flops[k] > 0) {
      const std::optional<double>& e =
          hw.tiers[k].near_memory_compute->energy_joules_per_op;
      if (!e.has_value()) return std::nullopt;
      j += t.pim_flops[k] * *e;
    }
    if (t.bytes[k] == 0) continue;
    if (!hw.tiers[k].energy_joules_per_byte.has_value()) return std::nullopt;
    j += t.bytes[k] * *hw.tiers[k].energy_joules_per_byte;
  }
  return j + hw.idle_watts.value_or(0) * t.seconds;
}

void ComputeEconomy(const Scenario& s, AnalysisResult* r) {
  const int tiers = static_cast<int>(s.hardware.tiers.size());
  EnergyTally pt, dt;
  for (const OpResult& op : r->prefill.ops) {
    TallyOp(op.flops, op.math, op.executed_in_tier, op.traffic, tiers, &pt);
  }
  for (const OpResult& op : r->decode.ops) {
    TallyOp(op.flops, op.math, op.executed_in_tier, op.traffic, tiers, &dt);
  }
  pt.seconds = r->prefill.totals.seconds;
  dt.seconds = r->decode.totals.seconds;
  FinishEconomy(s, pt, dt, r->e2e_seconds, &r->economy);
}

void FinishEconomy(const Scenario& s, const EnergyTally& prefill,
                   const EnergyTally& decode, double e2e_seconds, Economy* ep) {
  const Hardware& hw = s.hardware;
  Economy& e = *ep;
  // Keep the note's buffer: design points re-price millions of times.
  std::string note = std::move(e.note);
  note.clear();
  e = Economy();
  e.note = std::move(note);
  std::optional<double> pj = PhaseEnergy(hw, prefill);
  std::optional<double> dj = PhaseEnergy(hw, decode);
  if (pj.has_value() && dj.has_value()) {
    e.energy_method = EnergyMethod::kPerOpAndByte;
  } else if (hw.tdp_watts.has_value()) {
    e.energy_method = EnergyMethod::kBoardPower;
    pj = *hw.tdp_watts * prefill.seconds;
    dj = *hw.tdp_watts * decode.seconds;
  } else {
    e.energy_method = EnergyMethod::kUnknown;
    pj.reset();
    dj.reset();
  }
  // Energy: the devices of a stage share each layer's work for the same time
  // (tensor / expert parallelism); pipeline stages run the layers in turn,
  // so the graph's ops already hold every stage's work once. Purchase price
  // and embodied carbon: every device of one replica. Per-token figures
  // are one replica's (data-parallel replicas multiply devices and tokens
  // alike).
  const double stage_devices = static_cast<double>(StageDevices(s.parallelism));
  const double devices = static_cast<double>(ReplicaDevices(s.parallelism));
  if (pj.has_value()) *pj *= stage_devices;
  if (dj.has_value()) *dj *= stage_devices;
  e.prefill_joules = pj;
  e.decode_joules = dj;
  // With data-parallel attention every device of the expert group serves
  // a batch of its own (the workload's).
  const double batches = s.parallelism.attention_data_parallel
                             ? static_cast<double>(s.parallelism.expert_parallel)
                             : 1.0;
  const double out_tokens = batches * static_cast<double>(s.workload.batch) *
                            static_cast<double>(s.workload.generated_tokens);
  if (out_tokens <= 0) {
    e.note = "no output tokens: per-token figures are undefined";
    return;
  }
  const Economics& x = s.economics;
  // Seconds of device life that one served second costs.
  const double life = x.amortization_years * kSecondsPerYear * x.utilization;
  std::optional<double> joules;
  if (pj.has_value()) joules = *pj + *dj;
  if (joules.has_value()) e.joules_per_output_token = *joules / out_tokens;
  absl::InlinedVector<std::string_view, 4> notes;
  // The device's price: one rule for every command (prices.h).
  const DevicePrice price = DevicePriceOf(hw, x);
  if (price.basis != CostBasis::kEnergyOnly || joules.has_value()) {
    double usd = price.usd_per_served_second * devices * e2e_seconds;
    if (price.basis == CostBasis::kEnergyOnly) {
      notes.push_back("price unknown: $/Mtoken counts energy only");
    }
    if (!price.plus_electricity()) {
      notes.push_back("rental price per device-hour (power included)");
    } else if (joules.has_value()) {
      usd += *joules / kJoulesPerKwh * x.pue * x.electricity_usd_per_kwh;
    } else {
      notes.push_back("energy unknown: $/Mtoken counts purchase price only");
    }
    e.usd_per_million_output_tokens = usd / out_tokens * 1e6;
    e.cost_basis = price.basis;
  }
  if (joules.has_value()) {
    double g = *joules / kJoulesPerKwh * x.pue * x.grid_g_co2e_per_kwh;
    if (hw.embodied_kg_co2e.has_value()) {
      g += *hw.embodied_kg_co2e * devices * 1000 * e2e_seconds / life;
    } else {
      notes.push_back("embodied carbon unknown: operational carbon only");
    }
    e.g_co2e_per_million_output_tokens = g / out_tokens * 1e6;
  }
  if (e.energy_method == EnergyMethod::kBoardPower) {
    notes.push_back("energy from board power x time: an upper bound");
  }
  for (std::string_view n : notes) {
    if (!e.note.empty()) absl::StrAppend(&e.note, "; ");
    absl::StrAppend(&e.note, Av(n));
  }
}

}  // namespace ridgeline::engine::internal
