// Scenario defaults (precision, economics) and ValidateScenario.
#include "ridgeline/engine/scenario.h"

#include <array>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ridgeline/engine/formats.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/engine/status_macros.h"
#include "validate_util.h"

namespace ridgeline::engine {
namespace {

using internal::Av;
using internal::CheckDoubleRange;
using internal::CheckIntRange;
using internal::CheckPositive;

// `path` names the bits field ("precision.weights.bits").
absl::Status CheckFormat(std::string_view path, const NumberFormat& f) {
  // Effective bits include block scales, so 2-bit with fp16 scales per 8
  // elements reaches 4; the upper end is fp32 (or int32).
  return CheckDoubleRange(path, f.bits, 2, 34);
}

// Field paths built once, not on every validation (Analyze runs in a
// scheduler's loop).
template <int N, typename Enum, typename NameFn>
std::array<std::string, N> Paths(std::string_view prefix, NameFn name) {
  std::array<std::string, N> out;
  for (int i = 0; i < N; ++i) {
    out[i] = absl::StrCat(Av(prefix), Av(name(static_cast<Enum>(i))));
  }
  return out;
}

}  // namespace

Precision DefaultPrecision() {
  // bf16 is always a valid name; ParseNumberFormat cannot fail here.
  static const NumberFormat kBf16 = ParseNumberFormat("bf16").value();
  return Precision{kBf16, kBf16, kBf16};
}

Economics DefaultEconomics() {
  Economics e;
  // US EIA, average retail price of electricity to industrial consumers,
  // 2023: 8.06 US cents/kWh (EIA Electric Power Annual / Statista series
  // 190680, published 2024-03-18).
  e.electricity_usd_per_kwh = 0.0806;
  // Uptime Institute Global Data Center Survey 2023: industry average
  // annual PUE 1.58 (UII Update 221, Nov 2023).
  e.pue = 1.58;
  // Ember Global Electricity Review 2024: carbon intensity of world power
  // generation in 2023, 480 gCO2/kWh.
  e.grid_g_co2e_per_kwh = 480;
  // Assumption, not a published figure: 4-year depreciation of an
  // accelerator. Override per deployment.
  e.amortization_years = 4;
  // Assumption: the device serves requests all the time (the cheapest case).
  // Override with a fleet's measured utilisation.
  e.utilization = 1.0;
  return e;
}

absl::Status ValidateScenario(const Scenario& s) {
  RETURN_IF_ERROR(ValidateModel(s.model));
  RETURN_IF_ERROR(ValidateHardware(s.hardware, "hardware"));

  const Workload& w = s.workload;
  RETURN_IF_ERROR(CheckIntRange("workload.batch", w.batch, 1, 65536));
  RETURN_IF_ERROR(
      CheckIntRange("workload.prompt_tokens", w.prompt_tokens, 1, 10'000'000));
  RETURN_IF_ERROR(CheckIntRange("workload.generated_tokens", w.generated_tokens,
                                0, 10'000'000));

  const int64_t tp = s.parallelism.tensor_parallel;
  RETURN_IF_ERROR(CheckIntRange("parallelism.tensor_parallel", tp, 1, 256));
  if (s.model.num_attention_heads % tp != 0) {
    return WithFieldPath(
        absl::InvalidArgumentError(absl::StrCat(
            "parallelism.tensor_parallel must divide "
            "model.num_attention_heads (",
            s.model.num_attention_heads, "), got ", tp)),
        "parallelism.tensor_parallel");
  }
  if (!s.model.mla.has_value() && s.model.num_kv_heads % tp != 0 &&
      tp % s.model.num_kv_heads != 0) {
    return WithFieldPath(absl::InvalidArgumentError(absl::StrCat(
                             "parallelism.tensor_parallel must divide or be a "
                             "multiple of model.num_kv_heads (",
                             s.model.num_kv_heads, "), got ", tp)),
                         "parallelism.tensor_parallel");
  }

  RETURN_IF_ERROR(CheckFormat("precision.weights.bits", s.precision.weights));
  RETURN_IF_ERROR(
      CheckFormat("precision.activations.bits", s.precision.activations));
  RETURN_IF_ERROR(CheckFormat("precision.kv_cache.bits", s.precision.kv_cache));
  if (!s.precision.activations.native_math.has_value()) {
    return WithFieldPath(
        absl::InvalidArgumentError(absl::StrCat(
            "precision.activations must be a format math runs in directly "
            "(fp32, bf16, fp16, fp8, int8, int4, nvfp4, mxfp4), got \"",
            s.precision.activations.name, "\"")),
        "precision.activations");
  }

  const int tiers = static_cast<int>(s.hardware.tiers.size());
  static const auto* const kPinPaths =
      new std::array<std::string, kOperandClassCount>(
          Paths<kOperandClassCount, OperandClass>("pins.", OperandClassName));
  for (int c = 0; c < kOperandClassCount; ++c) {
    const auto& pin = s.pins.tier[c];
    if (!pin.has_value()) continue;
    RETURN_IF_ERROR(CheckIntRange((*kPinPaths)[c], *pin, 0, tiers - 1));
  }

  const Efficiency& e = s.efficiency;
  static const auto* const kComputePaths =
      new std::array<std::string, kOpClassCount>(
          Paths<kOpClassCount, OpClass>("efficiency.compute.", OpClassName));
  static const auto* const kMemoryPaths =
      new std::array<std::string, kOpClassCount>(
          Paths<kOpClassCount, OpClass>("efficiency.memory.", OpClassName));
  for (int c = 0; c < kOpClassCount; ++c) {
    RETURN_IF_ERROR(
        CheckDoubleRange((*kComputePaths)[c], e.compute[c], 0, 1, true));
    RETURN_IF_ERROR(
        CheckDoubleRange((*kMemoryPaths)[c], e.memory[c], 0, 1, true));
  }
  RETURN_IF_ERROR(CheckPositive("efficiency.per_step_overhead_seconds",
                                e.per_step_overhead_seconds, true));
  RETURN_IF_ERROR(CheckPositive("efficiency.per_request_overhead_seconds",
                                e.per_request_overhead_seconds, true));
  RETURN_IF_ERROR(CheckPositive("efficiency.per_kernel_overhead_seconds",
                                e.per_kernel_overhead_seconds, true));

  const Economics& x = s.economics;
  RETURN_IF_ERROR(CheckDoubleRange("economics.electricity_usd_per_kwh",
                                   x.electricity_usd_per_kwh, 0, 100));
  RETURN_IF_ERROR(CheckDoubleRange("economics.pue", x.pue, 1, 10));
  RETURN_IF_ERROR(CheckDoubleRange("economics.grid_g_co2e_per_kwh",
                                   x.grid_g_co2e_per_kwh, 0, 5000));
  RETURN_IF_ERROR(CheckDoubleRange("economics.amortization_years",
                                   x.amortization_years, 0, 100, true));
  RETURN_IF_ERROR(
      CheckDoubleRange("economics.utilization", x.utilization, 0, 1, true));

  RETURN_IF_ERROR(CheckIntRange("options.gemv_max_tokens",
                                s.options.gemv_max_tokens, 0, 1'000'000));
  return absl::OkStatus();
}

}  // namespace ridgeline::engine
