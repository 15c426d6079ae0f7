#include "scenario.h"

#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "decode_flags.h"
#include "google/protobuf/util/json_util.h"

namespace ridgeline::cli {

const std::vector<FlagSpec>& ScenarioFlags() {
  static const std::vector<FlagSpec> kFlags = {
      {"weights", "FMT",
       "weight format, e.g. bf16, fp8, int4-g128 (default bf16)"},
      {"activations", "FMT", "activation format (default bf16)"},
      {"kv", "FMT", "KV-cache format (default bf16)"},
      {"profile", "NAME", "calibration profile by name"},
      {"framework", "NAME",
       "pick the best calibration profile for this framework (vllm, ...)"},
      {"no-flash-attention", "", "QK^T, softmax and AV as separate ops"},
      {"mla-unabsorbed", "", "MLA without W_UK/W_UV absorption"},
      {"pure-roofline", "",
       "ignore calibration and plugin hooks: the speed upper bound"},
      {"tensor-parallel", "N",
       "devices the model is split over (tensor parallelism; default 1)"},
      {"pipeline-parallel", "N",
       "pipeline stages the layers are split into (default 1)"},
      {"micro-batches", "N",
       "prefill micro-batches per pipeline (default: one per stage)"},
      {"expert-parallel", "N",
       "devices the routed experts are spread over (default 1)"},
      {"attention-data-parallel", "",
       "attention replicated over the expert-parallel group, own batches"},
      {"data-parallel", "N",
       "whole replicas: throughput adds up, latency does not (default 1)"},
      {"fp16-accumulation", "",
       "fp16 matmuls accumulate in fp16 (llama.cpp's cuBLAS path): GeForce 2x"},
      {"no-fp16-accumulation", "",
       "fp16 matmuls accumulate in fp32 even if the profile's framework does not"},
      {"prefill-chunk-tokens", "N",
       "prompt tokens per prefill step (default: whole prompt if it fits, "
       "else 2048)"},
      {"weights-tier", "N",
       "pin weights to memory tier N (default: fastest with room)"},
      {"kv-tier", "N", "pin the KV cache to memory tier N"},
      {"activations-tier", "N", "pin activations to memory tier N"},
      {"electricity-usd-per-kwh", "X",
       "electricity price (default: US industrial average)"},
      {"pue", "X", "data-centre power usage effectiveness (default 1.58)"},
      {"grid-g-co2e-per-kwh", "X",
       "grid carbon intensity (default: world average)"},
      {"amortization-years", "X", "years the purchase price is spread over"},
      {"utilization", "X", "share of wall time the device serves, (0, 1]"},
  };
  static const std::vector<FlagSpec>* const kAll = [] {
    auto* all = new std::vector<FlagSpec>(kFlags);
    all->insert(all->end(), DecodeVariantFlags().begin(),
                DecodeVariantFlags().end());
    return all;
  }();
  return *kAll;
}

// Pins and economics: ranges are checked by the service, which names the
// field; here only the number syntax.
Outcome FillPlacementAndEconomics(const ParsedFlags& flags,
                                  v1::PlacementPins* placement,
                                  v1::EconomicsOverrides* economics) {
  struct TierPin {
    const char* flag;
    void (v1::PlacementPins::*set)(int32_t);
  };
  for (const TierPin& pin :
       {TierPin{"weights-tier", &v1::PlacementPins::set_weights_tier},
        TierPin{"kv-tier", &v1::PlacementPins::set_kv_cache_tier},
        TierPin{"activations-tier",
                &v1::PlacementPins::set_activations_tier}}) {
    absl::StatusOr<std::optional<int64_t>> v = flags.GetInt(pin.flag, 0, 7);
    if (!v.ok()) return Usage(v.status());
    if (*v) (placement->*pin.set)(static_cast<int32_t>(**v));
  }
  struct Number {
    const char* flag;
    void (v1::EconomicsOverrides::*set)(double);
  };
  for (const Number& n :
       {Number{"electricity-usd-per-kwh",
               &v1::EconomicsOverrides::set_electricity_usd_per_kwh},
        Number{"pue", &v1::EconomicsOverrides::set_pue},
        Number{"grid-g-co2e-per-kwh",
               &v1::EconomicsOverrides::set_grid_g_co2e_per_kwh},
        Number{"amortization-years",
               &v1::EconomicsOverrides::set_amortization_years},
        Number{"utilization", &v1::EconomicsOverrides::set_utilization}}) {
    absl::StatusOr<std::optional<double>> v = flags.GetDouble(n.flag);
    if (!v.ok()) return Usage(v.status());
    if (*v) (economics->*n.set)(**v);
  }
  return std::nullopt;
}

Outcome FillCommon(const ParsedFlags& flags, v1::AnalysisOptions* options,
                   v1::Calibration* calibration) {
  if (flags.Has("profile") && flags.Has("framework")) {
    return Usage("give at most one of --profile NAME or --framework NAME");
  }
  if (auto profile = flags.Get("profile")) calibration->set_profile(*profile);
  if (auto framework = flags.Get("framework")) {
    calibration->set_framework(*framework);
  }
  if (flags.Has("no-flash-attention")) options->set_flash_attention(false);
  if (flags.Has("mla-unabsorbed")) options->set_mla_absorbed(false);
  if (flags.Has("pure-roofline")) options->set_pure_roofline(true);
  if (flags.Has("fp16-accumulation")) options->set_fp16_accumulation(true);
  if (flags.Has("no-fp16-accumulation")) options->set_fp16_accumulation(false);
  absl::StatusOr<std::optional<int64_t>> chunk =
      flags.GetInt("prefill-chunk-tokens", engine::ranges::kPrefillChunkTokens.lo,
                   engine::ranges::kPrefillChunkTokens.hi);
  if (!chunk.ok()) return Usage(chunk.status());
  if (*chunk) options->set_prefill_chunk_tokens(**chunk);
  if (auto m = FillDecodeVariants(flags, options)) return Usage(*m);
  return std::nullopt;
}

// --pipeline-parallel, --micro-batches, --expert-parallel, --data-parallel,
// --attention-data-parallel (combinations are the service's to check).
Outcome FillParallelismFlags(const ParsedFlags& flags, v1::Parallelism* p) {
  struct IntFlag {
    const char* name;
    int64_t max;
    void (v1::Parallelism::*set)(int32_t);
  };
  const IntFlag ints[] = {
      {"pipeline-parallel", 256, &v1::Parallelism::set_pipeline_parallel},
      {"micro-batches", 65536, &v1::Parallelism::set_pipeline_micro_batches},
      {"expert-parallel", 256, &v1::Parallelism::set_expert_parallel},
      {"data-parallel", 65536, &v1::Parallelism::set_data_parallel},
  };
  for (const IntFlag& f : ints) {
    absl::StatusOr<std::optional<int64_t>> v = flags.GetInt(f.name, 1, f.max);
    if (!v.ok()) return Usage(v.status());
    if (*v) (p->*f.set)(static_cast<int32_t>(**v));
  }
  if (flags.Has("attention-data-parallel")) p->set_attention_data_parallel(true);
  return std::nullopt;
}

Outcome ReadHardwareFile(const std::string& path, v1::Hardware* hardware) {
  absl::StatusOr<std::string> text = ReadFile("hardware-file", path);
  if (!text.ok()) return Usage(text.status());
  auto status = google::protobuf::util::JsonStringToMessage(*text, hardware);
  if (!status.ok()) {
    // `hardware show ID --format json` prints a GetHardwareResponse; take it
    // as is.
    v1::GetHardwareResponse shown;
    if (google::protobuf::util::JsonStringToMessage(*text, &shown).ok() &&
        shown.has_hardware()) {
      *hardware = shown.hardware();
      return std::nullopt;
    }
    return Usage(
        absl::StrCat("--hardware-file: '", path,
                     "' is not a ridgeline.v1.Hardware in proto JSON: ",
                     status.message().as_string()));
  }
  return std::nullopt;
}

Outcome FillHardware(const ParsedFlags& flags, v1::HardwareSpec* hardware) {
  if (flags.Has("hardware") == flags.Has("hardware-file")) {
    return Usage(
        "give exactly one of --hardware ID or --hardware-file FILE.json");
  }
  if (auto id = flags.Get("hardware")) hardware->set_platform_id(*id);
  if (auto path = flags.Get("hardware-file")) {
    return ReadHardwareFile(*path, hardware->mutable_description());
  }
  return std::nullopt;
}

Outcome ReadModelConfig(const std::string& path, v1::ModelSpec* model) {
  absl::StatusOr<std::string> text = ReadFile("model-config", path);
  if (!text.ok()) return Usage(text.status());
  model->set_hf_config_json(*text);
  // The file name is a friendlier id than "inline".
  model->set_id(std::filesystem::path(path).stem().string().substr(0, 128));
  return std::nullopt;
}

}  // namespace ridgeline::cli
