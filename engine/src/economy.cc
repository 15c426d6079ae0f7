// Energy, cost and carbon of an analysis (see economy.h).
#include "economy.h"

#include <optional>
#include <string>
#include <string_view>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "validate_util.h"

namespace ridgeline::engine::internal {
namespace {

constexpr double kSecondsPerYear = 365.25 * 24 * 3600;
constexpr double kJoulesPerKwh = 3.6e6;

}  // namespace

void ComputeEconomy(const Scenario& s, AnalysisResult* r) {
  const Hardware& hw = s.hardware;
  Economy& e = r->economy;
  // Per-op-and-byte needs an energy for every math type and tier used.
  auto step_energy = [&](const StepResult& step) -> std::optional<double> {
    double j = 0;
    for (const OpResult& op : step.ops) {
      if (op.flops > 0) {
        std::optional<double> per_op =
            hw.energy_joules_per_op[static_cast<int>(op.math)];
        if (op.executed_in_tier >= 0) {
          per_op = hw.tiers[op.executed_in_tier]
                       .near_memory_compute->energy_joules_per_op;
        }
        if (!per_op.has_value()) return std::nullopt;
        j += op.flops * *per_op;
      }
      for (int c = 0; c < kOperandClassCount; ++c) {
        for (size_t t = 0; t < hw.tiers.size(); ++t) {
          const Traffic& tr = op.traffic[c][t];
          if (tr.read + tr.write == 0) continue;
          if (!hw.tiers[t].energy_joules_per_byte.has_value()) {
            return std::nullopt;
          }
          j += (tr.read + tr.write) * *hw.tiers[t].energy_joules_per_byte;
        }
      }
    }
    return j + hw.idle_watts.value_or(0) * step.totals.seconds;
  };
  std::optional<double> pj = step_energy(r->prefill);
  std::optional<double> dj = step_energy(r->decode);
  if (pj.has_value() && dj.has_value()) {
    e.energy_method = EnergyMethod::kPerOpAndByte;
  } else if (hw.tdp_watts.has_value()) {
    e.energy_method = EnergyMethod::kBoardPower;
    pj = *hw.tdp_watts * r->prefill.totals.seconds;
    dj = *hw.tdp_watts * r->decode.totals.seconds;
  } else {
    e.energy_method = EnergyMethod::kUnknown;
    pj.reset();
    dj.reset();
  }
  // Tensor parallelism: every device does its share for the same time.
  const double devices = static_cast<double>(s.parallelism.tensor_parallel);
  if (pj.has_value()) *pj *= devices;
  if (dj.has_value()) *dj *= devices;
  e.prefill_joules = pj;
  e.decode_joules = dj;
  const double out_tokens = static_cast<double>(s.workload.batch) *
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
  if (joules.has_value() || hw.price_usd.has_value()) {
    double usd = 0;
    if (hw.price_usd.has_value()) {
      usd += *hw.price_usd * devices * r->e2e_seconds / life;
    } else {
      notes.push_back("price unknown: $/Mtoken counts energy only");
    }
    if (joules.has_value()) {
      usd += *joules / kJoulesPerKwh * x.pue * x.electricity_usd_per_kwh;
    } else {
      notes.push_back("energy unknown: $/Mtoken counts purchase price only");
    }
    e.usd_per_million_output_tokens = usd / out_tokens * 1e6;
  }
  if (joules.has_value()) {
    double g = *joules / kJoulesPerKwh * x.pue * x.grid_g_co2e_per_kwh;
    if (hw.embodied_kg_co2e.has_value()) {
      g += *hw.embodied_kg_co2e * devices * 1000 * r->e2e_seconds / life;
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
