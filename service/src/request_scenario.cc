// Request -> Scenario translation (see request_scenario.h).
#include "ridgeline/service/request_scenario.h"

#include <exception>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/status_macros.h"

namespace ridgeline::service::request {
namespace {

using engine::MathType;

int Index(MathType t) { return static_cast<int>(t); }

// Debian's abseil has its own string_view; the engine speaks std's.
std::string_view Sv(absl::string_view s) { return {s.data(), s.size()}; }

}  // namespace

// Echoes client text back without letting a huge value flood the message.
std::string Quote(absl::string_view s) {
  constexpr size_t kMax = 64;
  if (s.size() <= kMax) return absl::StrCat("\"", s, "\"");
  return absl::StrCat("\"", s.substr(0, kMax), "...\" (", s.size(), " chars)");
}

absl::Status OutOfRange(absl::string_view path, absl::string_view range,
                        absl::string_view got) {
  return engine::WithFieldPath(absl::InvalidArgumentError(absl::StrCat(
                                   path, ": must be ", range, "; got ", got)),
                               Sv(path));
}

absl::Status CheckInt(absl::string_view path, int64_t v, int64_t lo,
                      int64_t hi) {
  if (v >= lo && v <= hi) return absl::OkStatus();
  return OutOfRange(path, absl::StrCat("in [", lo, ", ", hi, "]"),
                    absl::StrCat(v));
}

// NaN fails every comparison, so it is rejected too.
absl::Status CheckDouble(absl::string_view path, double v, double lo,
                         bool lo_open, double hi) {
  const bool ok = (lo_open ? v > lo : v >= lo) && v <= hi;
  if (ok) return absl::OkStatus();
  return OutOfRange(path,
                    absl::StrCat("in ", lo_open ? "(" : "[", lo, ", ", hi, "]"),
                    absl::StrCat(v));
}

absl::Status CheckInt(absl::string_view path, int64_t v,
                      const engine::IntRange& r) {
  return CheckInt(path, v, r.lo, r.hi);
}
absl::Status CheckDouble(absl::string_view path, double v,
                         const engine::DoubleRange& r) {
  return CheckDouble(path, v, r.lo, r.lo_open, r.hi);
}

// Prefixes a nested error (engine, registry) with the request's field path.
absl::Status Prefixed(absl::string_view path, const absl::Status& s) {
  return engine::PrefixFieldPath(Sv(path), s);
}

// The catalog entry whose id equals `id` ignoring case, or null. The hot
// path of every Analyze: no allocation (engine::FindModel, which also
// accepts HF repository ids and names close matches, builds lists).
const engine::ModelConfig* FindCatalogModel(absl::string_view id) {
  for (const engine::ModelConfig& m : engine::BuiltinModels()) {
    if (absl::EqualsIgnoreCase(m.id, id)) return &m;
  }
  return nullptr;
}

// Resolves into an existing ModelConfig: copy-assignment reuses its string
// and vector capacity (the Analyze path keeps one Scenario per thread).
absl::Status ResolveModelInto(const v1::ModelSpec& spec, absl::string_view path,
                              engine::ModelConfig* out) {
  if (spec.source_case() == v1::ModelSpec::kCatalogId &&
      !spec.catalog_id().empty() && spec.catalog_id().size() <= kMaxIdChars) {
    if (const engine::ModelConfig* m = FindCatalogModel(spec.catalog_id())) {
      *out = *m;
      return absl::OkStatus();
    }
  }
  ASSIGN_OR_RETURN(*out, ResolveModel(spec, path));
  return absl::OkStatus();
}

absl::StatusOr<engine::ModelConfig> ResolveModel(const v1::ModelSpec& spec,
                                                 absl::string_view path) {
  switch (spec.source_case()) {
    case v1::ModelSpec::kCatalogId: {
      if (spec.catalog_id().empty() || spec.catalog_id().size() > kMaxIdChars) {
        return OutOfRange(absl::StrCat(path, ".catalog_id"),
                          "a catalog id of 1..128 characters (see ListModels)",
                          Quote(spec.catalog_id()));
      }
      absl::StatusOr<engine::ModelConfig> m =
          engine::FindModel(spec.catalog_id());
      if (!m.ok())
        return Prefixed(absl::StrCat(path, ".catalog_id"), m.status());
      return m;
    }
    case v1::ModelSpec::kHfConfigJson: {
      if (spec.id().size() > kMaxIdChars) {
        return OutOfRange(absl::StrCat(path, ".id"), "0..128 characters",
                          Quote(spec.id()));
      }
      if (spec.hf_config_json().empty()) {
        return OutOfRange(absl::StrCat(path, ".hf_config_json"),
                          "the non-empty text of a config.json", "\"\"");
      }
      absl::StatusOr<engine::ModelConfig> m = absl::InternalError("");
      // The engine's contract is "no exceptions"; this guard keeps a JSON
      // library exception on hostile input from reaching gRPC as UNKNOWN.
      try {
        m = engine::ParseHuggingFaceConfig(
            spec.hf_config_json(), spec.id().empty() ? "inline" : spec.id());
      } catch (const std::exception& e) {
        return absl::InvalidArgumentError(absl::StrCat(
            path, ".hf_config_json: must be a valid config.json; ", e.what()));
      }
      if (!m.ok()) {
        return Prefixed(absl::StrCat(path, ".hf_config_json"), m.status());
      }
      RETURN_IF_ERROR(Prefixed(path, engine::ValidateModel(*m)));
      return m;
    }
    case v1::ModelSpec::SOURCE_NOT_SET:
      break;
  }
  return OutOfRange(path, "set: one of catalog_id or hf_config_json",
                    "neither");
}

// As ResolveModelInto: a catalog platform is copy-assigned into `*out`.
absl::Status ResolveHardwareInto(const plugin_host::HardwareRegistry& registry,
                                 const v1::HardwareSpec& spec,
                                 absl::string_view path,
                                 engine::Hardware* out) {
  if (spec.source_case() == v1::HardwareSpec::kPlatformId &&
      !spec.platform_id().empty() && spec.platform_id().size() <= kMaxIdChars) {
    absl::StatusOr<const engine::Hardware*> hw =
        registry.Find(spec.platform_id());
    if (hw.ok()) {
      *out = **hw;
      return absl::OkStatus();
    }
  }
  ASSIGN_OR_RETURN(*out, ResolveHardware(registry, spec, path));
  return absl::OkStatus();
}

absl::StatusOr<engine::Hardware> ResolveHardware(
    const plugin_host::HardwareRegistry& registry, const v1::HardwareSpec& spec,
    absl::string_view path) {
  switch (spec.source_case()) {
    case v1::HardwareSpec::kPlatformId: {
      if (spec.platform_id().empty() ||
          spec.platform_id().size() > kMaxIdChars) {
        return OutOfRange(
            absl::StrCat(path, ".platform_id"),
            "a platform id of 1..128 characters (see ListHardware)",
            Quote(spec.platform_id()));
      }
      absl::StatusOr<const engine::Hardware*> hw =
          registry.Find(spec.platform_id());
      if (!hw.ok()) {
        return Prefixed(absl::StrCat(path, ".platform_id"), hw.status());
      }
      return **hw;
    }
    case v1::HardwareSpec::kDescription: {
      const std::string prefix = absl::StrCat(path, ".description");
      if (spec.description().tiers_size() < 1 ||
          spec.description().tiers_size() > engine::kMaxTiers) {
        return OutOfRange(absl::StrCat(prefix, ".tiers"),
                          absl::StrCat("1..", engine::kMaxTiers, " tiers"),
                          absl::StrCat(spec.description().tiers_size()));
      }
      if (spec.description().id().size() > kMaxIdChars) {
        return OutOfRange(absl::StrCat(prefix, ".id"), "0..128 characters",
                          Quote(spec.description().id()));
      }
      ASSIGN_OR_RETURN(engine::Hardware hw,
                       FromProto(spec.description(), prefix));
      RETURN_IF_ERROR(engine::ValidateHardware(hw, prefix));
      return hw;
    }
    case v1::HardwareSpec::SOURCE_NOT_SET:
      break;
  }
  return OutOfRange(path, "set: one of platform_id or description", "neither");
}

absl::StatusOr<engine::NumberFormat> ParseFormat(const std::string& name,
                                                 absl::string_view path) {
  if (name.empty()) return engine::ParseNumberFormat("bf16");
  if (name.size() > 64) {
    return OutOfRange(path, "a number format name (e.g. bf16, int4-g128)",
                      Quote(name));
  }
  absl::StatusOr<engine::NumberFormat> f = engine::ParseNumberFormat(name);
  if (!f.ok()) return Prefixed(path, f.status());
  return f;
}

absl::StatusOr<engine::Precision> ResolveFormats(const v1::Formats& f,
                                                 absl::string_view path) {
  // Most requests take the defaults: skip parsing three names.
  if (f.weights().empty() && f.activations().empty() && f.kv_cache().empty()) {
    static const engine::Precision* const kDefault =
        new engine::Precision(engine::DefaultPrecision());
    return *kDefault;
  }
  engine::Precision p;
  ASSIGN_OR_RETURN(p.weights,
                   ParseFormat(f.weights(), absl::StrCat(path, ".weights")));
  ASSIGN_OR_RETURN(
      p.activations,
      ParseFormat(f.activations(), absl::StrCat(path, ".activations")));
  ASSIGN_OR_RETURN(p.kv_cache,
                   ParseFormat(f.kv_cache(), absl::StrCat(path, ".kv_cache")));
  if (!p.activations.native_math) {
    return OutOfRange(absl::StrCat(path, ".activations"),
                      "a format with a native math type (fp32, bf16, fp16, "
                      "fp8, int8, ...)",
                      Quote(f.activations()));
  }
  return p;
}

absl::Status ApplyDecodeVariants(const v1::AnalysisOptions& opts,
                                 engine::AnalysisOptions* out) {
  if (opts.has_speculative()) {
    const v1::SpeculativeDecoding& in = opts.speculative();
    engine::SpeculativeDecoding& sd = out->speculative;
    if (in.method() == "draft") {
      sd.method = engine::DraftMethod::kDraftModel;
    } else if (in.method() == "mtp") {
      sd.method = engine::DraftMethod::kMtp;
    } else if (in.method() == "eagle") {
      sd.method = engine::DraftMethod::kEagle;
    } else if (!in.method().empty() && in.method() != "none") {
      return engine::WithFieldPath(
          absl::InvalidArgumentError(absl::StrCat(
              "options.speculative.method must be one of none, draft, mtp, "
              "eagle, got \"",
              in.method(), "\"")),
          "options.speculative.method");
    }
    sd.draft_model = in.draft_model();
    sd.tokens = in.tokens();
    sd.acceptance_rate = in.acceptance_rate();
    sd.acceptance_by_position.assign(in.acceptance_by_position().begin(),
                                     in.acceptance_by_position().end());
  }
  if (opts.has_lora() && opts.lora().rank() != 0) {
    const v1::LoraAdapters& in = opts.lora();
    engine::LoraAdapters& lora = out->lora;
    lora.rank = in.rank();
    if (!in.modules().empty()) {
      ASSIGN_OR_RETURN(lora.modules, engine::ParseLoraModules(
                                         in.modules(), "options.lora.modules"));
    }
    lora.adapters = in.adapters() == 0 ? 1 : in.adapters();
    lora.cold_fraction = in.cold_fraction();
  }
  return absl::OkStatus();
}

absl::StatusOr<Common> ResolveCommon(const v1::PlacementPins& pins,
                                     const v1::AnalysisOptions& opts,
                                     const v1::EconomicsOverrides& econ,
                                     const v1::Parallelism& parallelism,
                                     bool suggestions_default) {
  Common c;
  // Divisibility by the model's heads is the engine's check (same path).
  if (parallelism.has_tensor_parallel()) {
    RETURN_IF_ERROR(CheckInt("parallelism.tensor_parallel",
                             parallelism.tensor_parallel(),
                             engine::ranges::kTensorParallel));
    c.parallelism.tensor_parallel = parallelism.tensor_parallel();
  }
  // Combinations (experts dividing, stages <= layers, whole nodes) are the
  // engine's checks; here only the ranges of the wire types.
  if (parallelism.has_pipeline_parallel()) {
    RETURN_IF_ERROR(CheckInt("parallelism.pipeline_parallel",
                             parallelism.pipeline_parallel(), 1, 256));
    c.parallelism.pipeline_parallel = parallelism.pipeline_parallel();
  }
  if (parallelism.has_pipeline_micro_batches()) {
    RETURN_IF_ERROR(CheckInt("parallelism.pipeline_micro_batches",
                             parallelism.pipeline_micro_batches(), 1, 65536));
    c.parallelism.pipeline_micro_batches = parallelism.pipeline_micro_batches();
  }
  if (parallelism.has_expert_parallel()) {
    RETURN_IF_ERROR(CheckInt("parallelism.expert_parallel",
                             parallelism.expert_parallel(), 1, 256));
    c.parallelism.expert_parallel = parallelism.expert_parallel();
  }
  if (parallelism.has_data_parallel()) {
    RETURN_IF_ERROR(CheckInt("parallelism.data_parallel",
                             parallelism.data_parallel(), 1, 65536));
    c.parallelism.data_parallel = parallelism.data_parallel();
  }
  c.parallelism.attention_data_parallel = parallelism.attention_data_parallel();
  auto pin = [&](const char* name, bool has, int32_t v,
                 engine::OperandClass cls) -> absl::Status {
    if (!has) return absl::OkStatus();
    // The upper bound depends on the hardware; checked per hardware below.
    RETURN_IF_ERROR(CheckInt(absl::StrCat("placement.", name), v, 0,
                             engine::kMaxTiers - 1));
    c.pins.tier[static_cast<int>(cls)] = v;
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(pin("weights_tier", pins.has_weights_tier(),
                      pins.weights_tier(), engine::OperandClass::kWeights));
  RETURN_IF_ERROR(pin("kv_cache_tier", pins.has_kv_cache_tier(),
                      pins.kv_cache_tier(), engine::OperandClass::kKvCache));
  RETURN_IF_ERROR(pin("activations_tier", pins.has_activations_tier(),
                      pins.activations_tier(),
                      engine::OperandClass::kActivations));

  c.options.suggestions = suggestions_default;
  if (opts.has_flash_attention())
    c.options.flash_attention = opts.flash_attention();
  if (opts.has_mla_absorbed()) c.options.mla_absorbed = opts.mla_absorbed();
  if (opts.has_suggestions()) c.options.suggestions = opts.suggestions();
  if (opts.has_pure_roofline()) c.options.pure_roofline = opts.pure_roofline();
  if (opts.has_fp16_accumulation()) {
    c.options.fp16_accumulation = opts.fp16_accumulation();
  }
  if (opts.has_gemv_max_tokens()) {
    RETURN_IF_ERROR(CheckInt("options.gemv_max_tokens", opts.gemv_max_tokens(),
                             engine::ranges::kGemvMaxTokens));
    c.options.gemv_max_tokens = opts.gemv_max_tokens();
  }
  if (opts.has_prefill_chunk_tokens()) {
    RETURN_IF_ERROR(CheckInt("options.prefill_chunk_tokens",
                             opts.prefill_chunk_tokens(),
                             engine::ranges::kPrefillChunkTokens));
    c.options.prefill_chunk_tokens = opts.prefill_chunk_tokens();
  }
  RETURN_IF_ERROR(ApplyDecodeVariants(opts, &c.options));

  c.economics = engine::DefaultEconomics();
  if (econ.has_electricity_usd_per_kwh()) {
    RETURN_IF_ERROR(CheckDouble("economics.electricity_usd_per_kwh",
                                econ.electricity_usd_per_kwh(),
                                engine::ranges::kElectricityUsdPerKwh));
    c.economics.electricity_usd_per_kwh = econ.electricity_usd_per_kwh();
  }
  if (econ.has_pue()) {
    RETURN_IF_ERROR(CheckDouble("economics.pue", econ.pue(), engine::ranges::kPue));
    c.economics.pue = econ.pue();
  }
  if (econ.has_grid_g_co2e_per_kwh()) {
    RETURN_IF_ERROR(CheckDouble("economics.grid_g_co2e_per_kwh",
                                econ.grid_g_co2e_per_kwh(),
                                engine::ranges::kGridGCo2ePerKwh));
    c.economics.grid_g_co2e_per_kwh = econ.grid_g_co2e_per_kwh();
  }
  if (econ.has_amortization_years()) {
    RETURN_IF_ERROR(CheckDouble("economics.amortization_years",
                                econ.amortization_years(),
                                engine::ranges::kAmortizationYears));
    c.economics.amortization_years = econ.amortization_years();
  }
  if (econ.has_utilization()) {
    RETURN_IF_ERROR(
        CheckDouble("economics.utilization", econ.utilization(),
                    engine::ranges::kUtilization));
    c.economics.utilization = econ.utilization();
  }
  return c;
}

// Pins beyond the hardware's tier count are a request error, not an engine
// one: the client chose both.
absl::Status CheckPinsFit(const engine::PlacementPins& pins,
                          const engine::Hardware& hw,
                          absl::string_view hw_path) {
  static constexpr const char* kNames[] = {"weights_tier", "kv_cache_tier",
                                           "activations_tier"};
  for (int c = 0; c < engine::kOperandClassCount; ++c) {
    if (!pins.tier[c]) continue;
    const int n = static_cast<int>(hw.tiers.size());
    if (*pins.tier[c] >= n) {
      return OutOfRange(absl::StrCat("placement.", kNames[c]),
                        absl::StrCat("in [0, ", n - 1, "] (", hw_path, " \"",
                                     hw.id, "\" has ", n, " tiers)"),
                        absl::StrCat(*pins.tier[c]));
    }
  }
  return absl::OkStatus();
}

// The chosen profile's efficiency and framework numerics.
void ApplyProfile(const Chosen& chosen, const v1::AnalysisOptions& requested,
                  engine::Scenario* s) {
  s->efficiency = chosen.profile != nullptr ? chosen.profile->efficiency
                                            : engine::Efficiency{};
  s->options.fp16_accumulation = Fp16Accumulation(chosen, requested);
}

absl::StatusOr<Chosen> ChooseProfile(const calibration::ProfileStore& store,
                                     const v1::Calibration& cal,
                                     const engine::Hardware& hw) {
  Chosen c;
  switch (cal.selector_case()) {
    case v1::Calibration::kProfile: {
      if (cal.profile().empty() || cal.profile().size() > kMaxIdChars) {
        return OutOfRange("calibration.profile",
                          "a profile name of 1..128 characters",
                          Quote(cal.profile()));
      }
      absl::StatusOr<const calibration::Profile*> p = store.Find(cal.profile());
      if (!p.ok()) return Prefixed("calibration.profile", p.status());
      // A profile fitted on other hardware would silently mislead. One with
      // neither hardware id nor family ("any.<framework>") fits all.
      const bool matches =
          (*p)->hardware_id.empty()
              ? ((*p)->family.empty() || (*p)->family == hw.family)
              : (*p)->hardware_id == hw.id;
      if (!matches) {
        return absl::InvalidArgumentError(absl::StrCat(
            "calibration.profile: must be a profile for hardware \"", hw.id,
            "\" (family \"", hw.family, "\"); got ", Quote(cal.profile()),
            " which is for ",
            (*p)->hardware_id.empty()
                ? absl::StrCat("family \"", (*p)->family, "\"")
                : absl::StrCat("hardware \"", (*p)->hardware_id, "\"")));
      }
      c.profile = *p;
      c.selected_by = "profile";
      return c;
    }
    case v1::Calibration::kFramework: {
      if (cal.framework().empty() || cal.framework().size() > kMaxIdChars) {
        return OutOfRange("calibration.framework",
                          "a framework name of 1..128 characters",
                          Quote(cal.framework()));
      }
      // A misspelt name ("vllmm") would otherwise match another runtime's
      // profile by hardware alone, or none, with only a warning.
      if (!store.KnowsFramework(cal.framework())) {
        const std::vector<std::string> known = store.Frameworks();
        return OutOfRange(
            "calibration.framework",
            known.empty()
                ? std::string("a framework of a loaded calibration profile "
                              "(none are loaded)")
                : absl::StrCat("a framework some calibration profile is "
                               "fitted with (",
                               absl::StrJoin(known, ", "),
                               "; a version suffix is allowed)"),
            Quote(cal.framework()));
      }
      c.profile = store.Match(hw.id, hw.family, cal.framework(),
                              calibration::DeviceMemoryTechnology(hw));
      if (c.profile) {
        c.selected_by =
            calibration::SameFramework(c.profile->framework, cal.framework())
                ? "framework-match"
                : "hardware-match";
        c.match = calibration::DescribeMatch(*c.profile, Sv(hw.id),
                                             Sv(cal.framework()));
        if (c.selected_by == "hardware-match") {
          c.warning = absl::StrCat(
              "calibration: profile ", c.profile->name, " matched by ", c.match,
              "; its efficiencies describe another runtime");
        }
      } else {
        c.warning = absl::StrCat(
            "calibration: no profile for framework ", Quote(cal.framework()),
            " or for hardware \"", hw.id, "\": pure roofline (upper bounds)");
      }
      return c;
    }
    case v1::Calibration::SELECTOR_NOT_SET:
      break;
  }
  return c;
}

absl::Status CheckWorkload(const v1::Workload& w, engine::Workload* out) {
  if (w.has_batch()) {
    RETURN_IF_ERROR(CheckInt("workload.batch", w.batch(), engine::ranges::kBatch));
    out->batch = w.batch();
  }
  if (w.has_prompt_tokens()) {
    RETURN_IF_ERROR(
        CheckInt("workload.prompt_tokens", w.prompt_tokens(),
                 engine::ranges::kPromptTokens));
    out->prompt_tokens = w.prompt_tokens();
  }
  if (w.has_generated_tokens()) {
    RETURN_IF_ERROR(CheckInt("workload.generated_tokens", w.generated_tokens(),
                             engine::ranges::kGeneratedTokens));
    out->generated_tokens = w.generated_tokens();
  }
  return absl::OkStatus();
}

engine::PerMathType FromProto(const v1::PerMathType& in) {
  engine::PerMathType out;
  auto put = [&](MathType t, bool has, double v) {
    if (has) out[Index(t)] = v;
  };
  put(MathType::kFp64, in.has_fp64(), in.fp64());
  put(MathType::kFp32, in.has_fp32(), in.fp32());
  put(MathType::kTf32, in.has_tf32(), in.tf32());
  put(MathType::kBf16, in.has_bf16(), in.bf16());
  put(MathType::kFp16, in.has_fp16(), in.fp16());
  put(MathType::kFp8, in.has_fp8(), in.fp8());
  put(MathType::kFp4, in.has_fp4(), in.fp4());
  put(MathType::kInt8, in.has_int8(), in.int8());
  put(MathType::kInt4, in.has_int4(), in.int4());
  put(MathType::kFp16Acc16, in.has_fp16_acc16(), in.fp16_acc16());
  return out;
}

absl::StatusOr<engine::Hardware> FromProto(const v1::Hardware& in,
                                           absl::string_view path) {
  engine::Hardware hw;
  hw.id = in.id().empty() ? "inline" : in.id();
  hw.display_name = in.display_name().empty() ? hw.id : in.display_name();
  hw.vendor = in.vendor();
  // Inline hardware never claims to come from a plugin.
  hw.family = "inline";
  hw.plugin = "inline";
  hw.sources.assign(in.sources().begin(), in.sources().end());
  hw.peak_ops_per_second = FromProto(in.peak_ops_per_second());
  hw.energy_joules_per_op = FromProto(in.energy_joules_per_op());
  hw.kernel_launch_seconds = in.kernel_launch_seconds();
  for (int i = 0; i < in.tiers_size(); ++i) {
    const v1::MemoryTier& pt = in.tiers(i);
    engine::MemoryTier t;
    t.name = pt.name();
    std::optional<engine::TierKind> kind = engine::ParseTierKind(pt.kind());
    if (!kind) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ".tiers[", i,
          "].kind: must be one of sram, hbm, gddr, lpddr, ddr, unified, "
          "host-link, flash; got \"",
          pt.kind().substr(0, 64), "\""));
    }
    t.kind = *kind;
    t.capacity_bytes = pt.capacity_bytes();
    t.read_bandwidth_bytes_per_second = pt.read_bandwidth_bytes_per_second();
    // 0 = same as read, as in the plugin ABI (one rule for both sources).
    t.write_bandwidth_bytes_per_second =
        pt.write_bandwidth_bytes_per_second() == 0
            ? pt.read_bandwidth_bytes_per_second()
            : pt.write_bandwidth_bytes_per_second();
    t.latency_seconds = pt.latency_seconds();
    t.inline_ecc_share = pt.inline_ecc_share();
    if (pt.has_energy_joules_per_byte()) {
      t.energy_joules_per_byte = pt.energy_joules_per_byte();
    }
    if (pt.has_near_memory_compute()) {
      const v1::NearMemoryCompute& pn = pt.near_memory_compute();
      engine::NearMemoryCompute n;
      n.internal_bandwidth_bytes_per_second =
          pn.internal_bandwidth_bytes_per_second();
      n.peak_ops_per_second = FromProto(pn.peak_ops_per_second());
      if (pn.has_energy_joules_per_op()) {
        n.energy_joules_per_op = pn.energy_joules_per_op();
      }
      t.near_memory_compute = n;
    }
    hw.tiers.push_back(std::move(t));
  }
  if (in.has_tdp_watts()) hw.tdp_watts = in.tdp_watts();
  if (in.has_idle_watts()) hw.idle_watts = in.idle_watts();
  if (in.has_price_usd()) hw.price_usd = in.price_usd();
  if (in.has_embodied_kg_co2e()) hw.embodied_kg_co2e = in.embodied_kg_co2e();
  if (in.has_interconnect_bytes_per_second()) {
    hw.interconnect_bytes_per_second = in.interconnect_bytes_per_second();
  }
  if (in.has_scale_up_latency_seconds()) {
    hw.scale_up_latency_seconds = in.scale_up_latency_seconds();
  }
  if (in.has_scale_out_bytes_per_second()) {
    hw.scale_out_bytes_per_second = in.scale_out_bytes_per_second();
  }
  if (in.has_scale_out_latency_seconds()) {
    hw.scale_out_latency_seconds = in.scale_out_latency_seconds();
  }
  if (in.has_devices_per_node()) hw.devices_per_node = in.devices_per_node();
  return hw;
}

}  // namespace ridgeline::service::request
