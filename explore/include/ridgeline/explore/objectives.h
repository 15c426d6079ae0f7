// What a design point is judged by: metrics (objectives and constrained
// quantities), their names, units and natural directions; objective and
// constraint specs as the CLI and the RPC spell them.
//
// Formulas (per request batch; energy counted once, over all ops of all
// layers and all steps, as the engine's economy does):
//   decode_tok_s       = 1 / TPOT (per sequence)
//   decode_tok_s_total = batch / TPOT
//   prefill_tok_s      = batch x prompt / TTFT
//   ttft_ms, tpot_ms (mean over the decode steps), e2e_ms = TTFT + decode
//   j_per_token        = (prefill + decode joules, all devices) /
//                        (batch x generated)
//   usd_per_mtoken     = (price x devices x e2e / (life x utilisation) +
//                        joules / 3.6e6 x PUE x $/kWh) / tokens x 1e6
//   gco2_per_mtoken    = (joules / 3.6e6 x PUE x gCO2/kWh + embodied share)
//                        / tokens x 1e6
//   price_usd          = part price x devices (tensor parallelism)
//   power_w            = joules / e2e seconds: the average power the
//                        devices draw while serving the batch
//   gbs_per_w, tflops_per_w: device-memory GB/s and BF16 TFLOPS per TDP
//                        watt (for physical-feasibility rules)
//   gbs_per_mm2, tflops_per_mm2, usd_per_mm2: device-memory GB/s, BF16
//                        TFLOPS and price per mm2 of die area; the area is
//                        the request's (axis die_area_mm2: no part
//                        publishes one here), NaN without it
// A metric the inputs cannot give (no price, no energy figures) is NaN.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace ridgeline::explore {

enum class Metric : uint8_t {
  kDecodeTokS = 0,
  kDecodeTokSTotal,
  kPrefillTokS,
  kTtftMs,
  kTpotMs,
  kE2eMs,
  kJPerToken,
  kUsdPerMtoken,
  kGco2PerMtoken,
  kPriceUsd,
  kPowerW,
  kGbsPerW,
  kTflopsPerW,
  kGbsPerMm2,
  kTflopsPerMm2,
  kUsdPerMm2,
};
inline constexpr int kMetricCount = 16;

std::string_view MetricName(Metric m);  // "decode_tok_s", ...
// True when more is better (tok/s); false for times, energy, cost, power.
bool MetricMaximizedByDefault(Metric m);
// Accepted names, comma-separated, for error messages.
std::string MetricNames();
absl::StatusOr<Metric> ParseMetric(std::string_view name,
                                   std::string_view field);

using MetricValues = std::array<double, kMetricCount>;
inline constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

// "decode_tok_s:max", "j_per_token:min", or a bare name (its natural
// direction).
struct Objective {
  std::string name;  // the metric's name, as given
  Metric metric;
  bool maximize;
};
absl::StatusOr<Objective> ParseObjective(std::string_view spec,
                                         std::string_view field);
inline constexpr int kMinObjectives = 2;
inline constexpr int kMaxObjectives = 6;

// "tpot_ms<=50", "decode_tok_s>=20", "fits" (always applied anyway).
struct Constraint {
  std::string text;  // as given
  Metric metric = Metric::kTpotMs;
  bool upper = true;  // value <= bound; false: value >= bound
  double bound = 0;
  bool fits_only = false;  // the "fits" constraint
};
absl::StatusOr<Constraint> ParseConstraint(std::string_view spec,
                                           std::string_view field);

// How far a point is from feasible: 0 when every constraint holds and the
// model fits; otherwise the sum of relative violations (|v - bound| /
// |bound|), 1 for each constraint on an unknown (NaN) metric and for an
// unknown objective, plus, when the model does not fit, the relative
// memory overflow (at least 1e-6). NSGA-II ranks infeasible points by it.
double Violation(const MetricValues& v, bool fits, double memory_overflow,
                 const std::vector<Objective>& objectives,
                 const std::vector<Constraint>& constraints);

// The objective vector to minimise (maximised ones negated).
void MinimisedObjectives(const MetricValues& v,
                         const std::vector<Objective>& objectives,
                         double* out);

}  // namespace ridgeline::explore
