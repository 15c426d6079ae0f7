// Scenario defaults (precision, economics) and ValidateScenario.
#include "ridgeline/engine/scenario.h"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ridgeline/engine/formats.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/engine/status_macros.h"
#include "speculative_draft.h"
#include "validate_util.h"

namespace ridgeline::engine {
namespace {

using internal::Av;
using internal::CheckDoubleRange;
using internal::CheckIntRange;
using internal::CheckRange;
using internal::CheckPositive;

// `path` names the bits field ("precision.weights.bits").
absl::Status CheckFormat(std::string_view path, const NumberFormat& f) {
  // Effective bits include block scales, so 2-bit with fp16 scales per 8
  // elements reaches 4; the upper end is fp32 (or int32).
  return CheckRange(path, f.bits, ranges::kFormatBits);
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

int64_t StageDevices(const Parallelism& p) {
  return std::max(p.tensor_parallel, p.expert_parallel);
}
int64_t ReplicaDevices(const Parallelism& p) {
  return p.pipeline_parallel * StageDevices(p);
}
int64_t TotalDevices(const Parallelism& p) {
  return p.data_parallel * ReplicaDevices(p);
}

namespace {

// A collective group of `size` devices must sit in whole nodes: inside one
// (size divides devices_per_node) or over whole ones (a multiple of it).
absl::Status CheckGroupFitsNodes(absl::string_view path, int64_t size,
                                 const Hardware& hw) {
  if (!hw.devices_per_node.has_value() || size <= 1) return absl::OkStatus();
  const int64_t node = *hw.devices_per_node;
  if (node % size == 0 || size % node == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      path, " must divide or be a multiple of hardware.devices_per_node (",
      node, ") so that its groups fill whole nodes, got ", size));
}

}  // namespace

// Every combination: ranges, then what the model's shape allows, then what
// the nodes allow. Messages say why a combination is refused.
absl::Status ValidateParallelism(const Scenario& s) {
  const Parallelism& p = s.parallelism;
  RETURN_IF_ERROR(
      CheckIntRange("parallelism.pipeline_parallel", p.pipeline_parallel, 1, 256));
  if (p.pipeline_parallel > s.model.num_layers) {
    return absl::InvalidArgumentError(absl::StrCat(
        "parallelism.pipeline_parallel must not exceed model.num_layers (",
        s.model.num_layers, "): every stage needs at least one layer, got ",
        p.pipeline_parallel));
  }
  if (p.pipeline_micro_batches != 0) {
    RETURN_IF_ERROR(CheckIntRange("parallelism.pipeline_micro_batches",
                                  p.pipeline_micro_batches, 1, 65536));
  }
  RETURN_IF_ERROR(
      CheckIntRange("parallelism.expert_parallel", p.expert_parallel, 1, 256));
  RETURN_IF_ERROR(
      CheckIntRange("parallelism.data_parallel", p.data_parallel, 1, 65536));
  const int64_t ep = p.expert_parallel;
  const int64_t tp = p.tensor_parallel;
  if (ep > 1) {
    if (!s.model.moe.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "parallelism.expert_parallel must be 1 for a dense model (\"",
          s.model.id, "\" has no routed experts), got ", ep));
    }
    if (s.model.moe->num_routed_experts % ep != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "parallelism.expert_parallel must divide the routed experts (",
          s.model.moe->num_routed_experts, ") so every device holds as many, got ",
          ep));
    }
    if (!p.attention_data_parallel && ep != tp) {
      return absl::InvalidArgumentError(absl::StrCat(
          "parallelism.expert_parallel must equal parallelism.tensor_parallel (",
          tp, ") unless attention_data_parallel is set: the attention's "
          "devices are the ones that hold the experts, got ", ep));
    }
    if (p.attention_data_parallel && tp != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "parallelism.tensor_parallel must be 1 with attention_data_parallel: "
          "every device of the expert-parallel group runs the whole attention "
          "on its own batch, got ", tp));
    }
  } else if (p.attention_data_parallel) {
    return absl::InvalidArgumentError(
        "parallelism.attention_data_parallel needs expert_parallel > 1 (the "
        "attention is replicated over the expert-parallel group), got "
        "expert_parallel 1");
  }
  const int64_t devices = TotalDevices(p);
  if (devices > 1048576) {
    return absl::InvalidArgumentError(absl::StrCat(
        "parallelism: data_parallel x pipeline_parallel x max(tensor_parallel, "
        "expert_parallel) must be at most 1048576 devices, got ", devices));
  }
  RETURN_IF_ERROR(CheckGroupFitsNodes("parallelism.tensor_parallel", tp,
                                      s.hardware));
  RETURN_IF_ERROR(CheckGroupFitsNodes("parallelism.expert_parallel", ep,
                                      s.hardware));
  return absl::OkStatus();
}

absl::Status ValidateScenario(const Scenario& s) {
  RETURN_IF_ERROR(ValidateModel(s.model));
  RETURN_IF_ERROR(ValidateHardware(s.hardware, "hardware"));

  const Workload& w = s.workload;
  RETURN_IF_ERROR(CheckRange("workload.batch", w.batch, ranges::kBatch));
  RETURN_IF_ERROR(
      CheckRange("workload.prompt_tokens", w.prompt_tokens,
                 ranges::kPromptTokens));
  RETURN_IF_ERROR(CheckRange("workload.generated_tokens", w.generated_tokens,
                             ranges::kGeneratedTokens));

  const int64_t tp = s.parallelism.tensor_parallel;
  RETURN_IF_ERROR(CheckRange("parallelism.tensor_parallel", tp, ranges::kTensorParallel));
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

  RETURN_IF_ERROR(ValidateParallelism(s));

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
        CheckRange((*kComputePaths)[c], e.compute[c], ranges::kEfficiency));
    RETURN_IF_ERROR(
        CheckRange((*kMemoryPaths)[c], e.memory[c], ranges::kEfficiency));
  }
  RETURN_IF_ERROR(CheckPositive("efficiency.per_step_overhead_seconds",
                                e.per_step_overhead_seconds, true));
  RETURN_IF_ERROR(CheckPositive("efficiency.per_request_overhead_seconds",
                                e.per_request_overhead_seconds, true));
  RETURN_IF_ERROR(CheckPositive("efficiency.per_kernel_overhead_seconds",
                                e.per_kernel_overhead_seconds, true));
  RETURN_IF_ERROR(CheckRange("efficiency.link", e.link, ranges::kEfficiency));
  RETURN_IF_ERROR(CheckPositive("efficiency.collective_call_seconds",
                                e.collective_call_seconds, true));
  RETURN_IF_ERROR(CheckRange("efficiency.compute_power_exponent",
                             e.compute_power_exponent,
                             ranges::kComputePowerExponent));
  RETURN_IF_ERROR(CheckRange("efficiency.dequantized_compute_share",
                             e.dequantized_compute_share, ranges::kEfficiency));
  for (const auto& [format, share] : e.dequantized_compute_share_by_format) {
    RETURN_IF_ERROR(CheckRange(
        absl::StrCat("efficiency.dequantized_compute_share_by_format.", format),
        share, ranges::kEfficiency));
  }
  if (e.kernel.present) {
    RETURN_IF_ERROR(ValidateKernelModel(e.kernel, "efficiency.kernel"));
  }

  const Economics& x = s.economics;
  RETURN_IF_ERROR(CheckRange("economics.electricity_usd_per_kwh",
                             x.electricity_usd_per_kwh,
                             ranges::kElectricityUsdPerKwh));
  RETURN_IF_ERROR(CheckRange("economics.pue", x.pue, ranges::kPue));
  RETURN_IF_ERROR(CheckRange("economics.grid_g_co2e_per_kwh",
                             x.grid_g_co2e_per_kwh, ranges::kGridGCo2ePerKwh));
  RETURN_IF_ERROR(CheckRange("economics.amortization_years",
                             x.amortization_years, ranges::kAmortizationYears));
  RETURN_IF_ERROR(
      CheckRange("economics.utilization", x.utilization, ranges::kUtilization));
  if (x.usd_per_device_hour) {
    RETURN_IF_ERROR(CheckRange("economics.usd_per_device_hour",
                               *x.usd_per_device_hour,
                               ranges::kUsdPerDeviceHour));
  }
  if (x.price_usd) {
    RETURN_IF_ERROR(
        CheckRange("economics.price_usd", *x.price_usd, ranges::kPriceUsd));
  }

  RETURN_IF_ERROR(CheckRange("options.gemv_max_tokens",
                             s.options.gemv_max_tokens, ranges::kGemvMaxTokens));
  RETURN_IF_ERROR(CheckRange("options.prefill_chunk_tokens",
                             s.options.prefill_chunk_tokens,
                             ranges::kPrefillChunkTokens));
  RETURN_IF_ERROR(
      internal::ValidateSpeculative(s.options.speculative, s.model));
  const LoraAdapters& lora = s.options.lora;
  if (lora.rank != 0) {
    RETURN_IF_ERROR(
        CheckRange("options.lora.rank", lora.rank, ranges::kLoraRank));
    if ((lora.modules & kAllLoraModules) == 0) {
      return WithFieldPath(absl::InvalidArgumentError(
                               "options.lora.modules must name at least one of "
                               "q,k,v,o,gate,up,down, got none"),
                           "options.lora.modules");
    }
    RETURN_IF_ERROR(CheckRange("options.lora.adapters", lora.adapters,
                               ranges::kLoraAdapters));
    RETURN_IF_ERROR(CheckRange("options.lora.cold_fraction", lora.cold_fraction,
                               ranges::kLoraColdFraction));
  }
  return absl::OkStatus();
}

}  // namespace ridgeline::engine
