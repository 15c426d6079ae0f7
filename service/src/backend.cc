#include "ridgeline/service/backend.h"

#include <chrono>
#include <cmath>
#include <exception>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ridgeline/engine/analyze.h"
#include "ridgeline/engine/kernel.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/explore/grid.h"
#include "ridgeline/service/convert.h"

namespace ridgeline::service {
namespace {

// Ranges enforced at the edge. They match the engine's own checks
// (engine/include/ridgeline/engine/scenario.h) so the error names the
// request's field path rather than the engine's.
constexpr int64_t kMaxBatch = 65536;
constexpr int64_t kMaxTokens = 10'000'000;
constexpr int64_t kMaxGemvTokens = 65536;
constexpr size_t kMaxIdChars = 128;
constexpr int kMaxSweepModels = 256;
constexpr int kMaxSweepHardware = 1024;
constexpr int kMaxSweepFormats = 256;
constexpr int kMaxSweepValues = 4096;
constexpr uint32_t kMaxShards = 65536;

// Echoes client text back without letting a huge value flood the message.
std::string Quote(absl::string_view s) {
  constexpr size_t kMax = 64;
  if (s.size() <= kMax) return absl::StrCat("\"", s, "\"");
  return absl::StrCat("\"", s.substr(0, kMax), "...\" (", s.size(), " chars)");
}

absl::Status OutOfRange(absl::string_view path, absl::string_view range,
                        absl::string_view got) {
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": must be ", range, "; got ", got));
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

// Prefixes a nested error (engine, registry) with the request's field path.
absl::Status Prefixed(absl::string_view path, const absl::Status& s) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
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

absl::StatusOr<engine::ModelConfig> ResolveModel(const v1::ModelSpec& spec,
                                                 absl::string_view path);

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

absl::StatusOr<engine::Hardware> ResolveHardware(
    const plugin_host::HardwareRegistry& registry, const v1::HardwareSpec& spec,
    absl::string_view path);

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

// Everything in a request that is shared by all points of a sweep.
struct Common {
  engine::PlacementPins pins;
  engine::AnalysisOptions options;
  engine::Economics economics;
  engine::Parallelism parallelism;
};

absl::StatusOr<Common> ResolveCommon(const v1::PlacementPins& pins,
                                     const v1::AnalysisOptions& opts,
                                     const v1::EconomicsOverrides& econ,
                                     const v1::Parallelism& parallelism,
                                     bool suggestions_default) {
  Common c;
  // Divisibility by the model's heads is the engine's check (same path).
  if (parallelism.has_tensor_parallel()) {
    RETURN_IF_ERROR(CheckInt("parallelism.tensor_parallel",
                             parallelism.tensor_parallel(), 1, 256));
    c.parallelism.tensor_parallel = parallelism.tensor_parallel();
  }
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
                             1, kMaxGemvTokens));
    c.options.gemv_max_tokens = opts.gemv_max_tokens();
  }

  c.economics = engine::DefaultEconomics();
  if (econ.has_electricity_usd_per_kwh()) {
    RETURN_IF_ERROR(CheckDouble("economics.electricity_usd_per_kwh",
                                econ.electricity_usd_per_kwh(), 0, false, 10));
    c.economics.electricity_usd_per_kwh = econ.electricity_usd_per_kwh();
  }
  if (econ.has_pue()) {
    RETURN_IF_ERROR(CheckDouble("economics.pue", econ.pue(), 1, false, 3));
    c.economics.pue = econ.pue();
  }
  if (econ.has_grid_g_co2e_per_kwh()) {
    RETURN_IF_ERROR(CheckDouble("economics.grid_g_co2e_per_kwh",
                                econ.grid_g_co2e_per_kwh(), 0, false, 2000));
    c.economics.grid_g_co2e_per_kwh = econ.grid_g_co2e_per_kwh();
  }
  if (econ.has_amortization_years()) {
    RETURN_IF_ERROR(CheckDouble("economics.amortization_years",
                                econ.amortization_years(), 0, true, 30));
    c.economics.amortization_years = econ.amortization_years();
  }
  if (econ.has_utilization()) {
    RETURN_IF_ERROR(
        CheckDouble("economics.utilization", econ.utilization(), 0, true, 1));
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

struct Chosen {
  const calibration::Profile* profile = nullptr;
  std::string selected_by = "none";
};

// fp16 accumulation: what the request says, else what the chosen profile's
// framework does (a profile fitted with it is only right with it), unless
// the profile is only a fallback fitted with another framework.
template <typename Request>  // v1::AnalysisOptions or v1::AnalyzeKernelRequest
bool Fp16Accumulation(const Chosen& chosen, const Request& requested) {
  if (requested.has_fp16_accumulation()) return requested.fp16_accumulation();
  return chosen.profile != nullptr && chosen.selected_by != "hardware-match" &&
         chosen.profile->fp16_accumulation;
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
      c.profile = store.Match(hw.id, hw.family, cal.framework());
      if (c.profile) {
        c.selected_by =
            calibration::FrameworkCovers(c.profile->framework, cal.framework())
                ? "framework-match"
                : "hardware-match";
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
    RETURN_IF_ERROR(CheckInt("workload.batch", w.batch(), 1, kMaxBatch));
    out->batch = w.batch();
  }
  if (w.has_prompt_tokens()) {
    RETURN_IF_ERROR(
        CheckInt("workload.prompt_tokens", w.prompt_tokens(), 1, kMaxTokens));
    out->prompt_tokens = w.prompt_tokens();
  }
  if (w.has_generated_tokens()) {
    RETURN_IF_ERROR(CheckInt("workload.generated_tokens", w.generated_tokens(),
                             0, kMaxTokens));
    out->generated_tokens = w.generated_tokens();
  }
  return absl::OkStatus();
}

void Summarize(const engine::AnalysisResult& r, const engine::Scenario& s,
               v1::SweepSummary* out) {
  out->set_model_id(r.model_id);
  out->set_hardware_id(r.hardware_id);
  out->set_batch(s.workload.batch);
  out->set_prompt_tokens(s.workload.prompt_tokens);
  out->set_generated_tokens(s.workload.generated_tokens);
  out->set_weights_format(s.precision.weights.name);
  out->set_activations_format(s.precision.activations.name);
  out->set_kv_cache_format(s.precision.kv_cache.name);
  out->set_ttft_seconds(r.ttft_seconds);
  out->set_tpot_mean_seconds(r.tpot_mean_seconds);
  out->set_e2e_seconds(r.e2e_seconds);
  out->set_decode_tokens_per_second_total(r.decode_tokens_per_second_total);
  out->set_fits(r.memory.fits);
  out->set_bound(std::string(engine::BoundName(r.bottleneck.bound)));
  out->set_bottleneck_op(std::string(engine::OpKindName(r.bottleneck.op)));
  out->set_matmul_math(std::string(engine::MathTypeName(r.matmul_math)));
  if (r.economy.usd_per_million_output_tokens) {
    out->set_usd_per_million_output_tokens(
        *r.economy.usd_per_million_output_tokens);
  }
  if (r.economy.joules_per_output_token) {
    out->set_joules_per_output_token(*r.economy.joules_per_output_token);
  }
  if (r.economy.g_co2e_per_million_output_tokens) {
    out->set_g_co2e_per_million_output_tokens(
        *r.economy.g_co2e_per_million_output_tokens);
  }
  out->set_profile_name(s.efficiency.profile_name);
}

}  // namespace

Backend::Backend(std::shared_ptr<const plugin_host::HardwareRegistry> registry,
                 std::shared_ptr<const calibration::ProfileStore> profiles,
                 Limits limits, BackendObserver* observer)
    : registry_(std::move(registry)),
      profiles_(std::move(profiles)),
      limits_(limits),
      observer_(observer) {}

namespace {

// Runs the engine once, timing it for the observer.
absl::StatusOr<engine::AnalysisResult> RunEngine(const engine::Scenario& s,
                                                 BackendObserver* observer,
                                                 const char* kind) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<engine::AnalysisResult> r = absl::InternalError("");
  try {
    r = engine::Analyze(s);
  } catch (const std::exception& e) {
    r = absl::InternalError(absl::StrCat("engine fault: ", e.what()));
  }
  if (observer != nullptr) {
    const std::chrono::duration<double> d =
        std::chrono::steady_clock::now() - start;
    observer->OnAnalysis(kind, d.count(), r.ok());
  }
  return r;
}

}  // namespace

namespace {

// The scenario fields of an AnalyzeRequest (shared by Analyze and Explore,
// whose request carries the same fields) into `s`; returns the calibration
// chosen (already applied).
absl::StatusOr<Chosen> ResolveScenarioFields(
    const plugin_host::HardwareRegistry& registry,
    const calibration::ProfileStore& profiles, BackendObserver* observer,
    const v1::AnalyzeRequest& req, engine::Scenario* out) {
  engine::Scenario& s = *out;
  RETURN_IF_ERROR(ResolveModelInto(req.model(), "model", &s.model));
  RETURN_IF_ERROR(
      ResolveHardwareInto(registry, req.hardware(), "hardware", &s.hardware));
  s.workload = engine::Workload();
  RETURN_IF_ERROR(CheckWorkload(req.workload(), &s.workload));
  ASSIGN_OR_RETURN(s.precision, ResolveFormats(req.formats(), "formats"));
  ASSIGN_OR_RETURN(Common c,
                   ResolveCommon(req.placement(), req.options(), req.economics(),
                                 req.parallelism(), true));
  RETURN_IF_ERROR(CheckPinsFit(c.pins, s.hardware, "hardware"));
  s.pins = c.pins;
  s.options = c.options;
  s.economics = c.economics;
  s.parallelism = c.parallelism;
  ASSIGN_OR_RETURN(Chosen chosen,
                   ChooseProfile(profiles, req.calibration(), s.hardware));
  // pure_roofline asks for the bound: a named profile is still validated,
  // but not applied, and not reported as used.
  if (s.options.pure_roofline) chosen = Chosen{};
  if (observer != nullptr) observer->OnCalibration(chosen.selected_by);
  ApplyProfile(chosen, req.options(), &s);
  return chosen;
}

}  // namespace

absl::Status Backend::ResolveScenario(const v1::AnalyzeRequest& req,
                                      engine::Scenario* s) const {
  return ResolveScenarioFields(*registry_, *profiles_, observer_, req, s)
      .status();
}

absl::StatusOr<v1::AnalyzeResponse> Backend::Analyze(
    const v1::AnalyzeRequest& req) const {
  v1::AnalyzeResponse resp;
  RETURN_IF_ERROR(Analyze(req, &resp));
  return resp;
}

absl::Status Backend::Analyze(const v1::AnalyzeRequest& req,
                              v1::AnalyzeResponse* resp) const {
  if (!req.has_model()) {
    return OutOfRange("model", "set: one of catalog_id or hf_config_json",
                      "unset");
  }
  if (!req.has_hardware()) {
    return OutOfRange("hardware", "set: one of platform_id or description",
                      "unset");
  }
  if (!v1::AnalysisView_IsValid(req.view())) {
    return OutOfRange("view",
                      "ANALYSIS_VIEW_UNSPECIFIED (0), ANALYSIS_VIEW_BASIC (1) "
                      "or ANALYSIS_VIEW_FULL (2)",
                      absl::StrCat(req.view()));
  }
  // One scenario per thread, overwritten field by field: the model's and
  // hardware's strings and vectors keep their capacity between requests.
  thread_local engine::Scenario s;
  ASSIGN_OR_RETURN(Chosen chosen, ResolveScenarioFields(*registry_, *profiles_,
                                                        observer_, req, &s));

  ASSIGN_OR_RETURN(engine::AnalysisResult r,
                   RunEngine(s, observer_, "analyze"));
  ToProto(r, resp->mutable_result(), req.view());
  v1::CalibrationUsed* cu = resp->mutable_calibration();
  cu->set_selected_by(chosen.selected_by);
  if (chosen.profile != nullptr) {
    cu->set_profile_name(chosen.profile->name);
    cu->set_fitted_from(chosen.profile->fitted_from);
  }
  resp->set_upper_bound(r.pure_roofline);
  return absl::OkStatus();
}

absl::Status Backend::Sweep(
    const v1::SweepRequest& req,
    const std::function<bool(const v1::SweepPoint&)>& emit) const {
  auto check_len = [](absl::string_view name, int n, int lo,
                      int hi) -> absl::Status {
    if (n >= lo && n <= hi) return absl::OkStatus();
    return OutOfRange(name, absl::StrCat(lo, "..", hi, " entries"),
                      absl::StrCat(n, " entries"));
  };
  RETURN_IF_ERROR(check_len("models", req.models_size(), 1, kMaxSweepModels));
  RETURN_IF_ERROR(
      check_len("hardware", req.hardware_size(), 1, kMaxSweepHardware));
  RETURN_IF_ERROR(
      check_len("formats", req.formats_size(), 0, kMaxSweepFormats));
  RETURN_IF_ERROR(
      check_len("batch_sizes", req.batch_sizes_size(), 0, kMaxSweepValues));
  RETURN_IF_ERROR(
      check_len("prompt_tokens", req.prompt_tokens_size(), 0, kMaxSweepValues));
  RETURN_IF_ERROR(check_len("generated_tokens", req.generated_tokens_size(), 0,
                            kMaxSweepValues));
  if (!v1::AnalysisView_IsValid(req.result_view())) {
    return OutOfRange("result_view",
                      "ANALYSIS_VIEW_UNSPECIFIED (0), ANALYSIS_VIEW_BASIC (1) "
                      "or ANALYSIS_VIEW_FULL (2)",
                      absl::StrCat(req.result_view()));
  }
  const uint32_t shard_count = req.shard_count() == 0 ? 1 : req.shard_count();
  if (shard_count > kMaxShards) {
    return OutOfRange("shard_count", absl::StrCat("in [0, ", kMaxShards, "]"),
                      absl::StrCat(req.shard_count()));
  }
  if (req.shard_index() >= shard_count) {
    return OutOfRange("shard_index",
                      absl::StrCat("in [0, ", shard_count - 1, "]"),
                      absl::StrCat(req.shard_index()));
  }

  // An empty list is one default entry.
  const engine::Workload defaults;
  std::vector<int64_t> batches(req.batch_sizes().begin(),
                               req.batch_sizes().end());
  std::vector<int64_t> prompts(req.prompt_tokens().begin(),
                               req.prompt_tokens().end());
  std::vector<int64_t> gens(req.generated_tokens().begin(),
                            req.generated_tokens().end());
  if (batches.empty()) batches.push_back(defaults.batch);
  if (prompts.empty()) prompts.push_back(defaults.prompt_tokens);
  if (gens.empty()) gens.push_back(defaults.generated_tokens);
  for (size_t i = 0; i < batches.size(); ++i) {
    RETURN_IF_ERROR(CheckInt(absl::StrCat("batch_sizes[", i, "]"), batches[i],
                             1, kMaxBatch));
  }
  for (size_t i = 0; i < prompts.size(); ++i) {
    RETURN_IF_ERROR(CheckInt(absl::StrCat("prompt_tokens[", i, "]"), prompts[i],
                             1, kMaxTokens));
  }
  for (size_t i = 0; i < gens.size(); ++i) {
    RETURN_IF_ERROR(CheckInt(absl::StrCat("generated_tokens[", i, "]"), gens[i],
                             0, kMaxTokens));
  }

  // Sizes are capped above, so the product fits in 64 bits (< 2^62).
  const uint64_t n_formats = req.formats_size() == 0 ? 1 : req.formats_size();
  const uint64_t total = static_cast<uint64_t>(req.models_size()) *
                         req.hardware_size() * n_formats * batches.size() *
                         prompts.size() * gens.size();
  const uint64_t in_shard =
      total / shard_count + (req.shard_index() < total % shard_count ? 1 : 0);
  if (in_shard > static_cast<uint64_t>(limits_.max_sweep_points)) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "sweep: ", in_shard, " points", shard_count > 1 ? " in this shard" : "",
        " (", total, " in all) exceed the server's cap of ",
        limits_.max_sweep_points,
        " points per request; split it with shard_index/shard_count or "
        "shorter lists"));
  }

  std::vector<engine::ModelConfig> models;
  for (int i = 0; i < req.models_size(); ++i) {
    ASSIGN_OR_RETURN(
        engine::ModelConfig m,
        ResolveModel(req.models(i), absl::StrCat("models[", i, "]")));
    models.push_back(std::move(m));
  }
  ASSIGN_OR_RETURN(Common c,
                   ResolveCommon(req.placement(), req.options(), req.economics(),
                                 req.parallelism(), false));
  std::vector<engine::Hardware> hardware;
  std::vector<Chosen> profiles;
  for (int i = 0; i < req.hardware_size(); ++i) {
    const std::string path = absl::StrCat("hardware[", i, "]");
    ASSIGN_OR_RETURN(engine::Hardware hw,
                     ResolveHardware(*registry_, req.hardware(i), path));
    RETURN_IF_ERROR(CheckPinsFit(c.pins, hw, path));
    ASSIGN_OR_RETURN(Chosen chosen,
                     ChooseProfile(*profiles_, req.calibration(), hw));
    if (c.options.pure_roofline) chosen = Chosen{};
    if (observer_ != nullptr) observer_->OnCalibration(chosen.selected_by);
    hardware.push_back(std::move(hw));
    profiles.push_back(chosen);
  }
  std::vector<engine::Precision> formats;
  if (req.formats_size() == 0) formats.push_back(engine::DefaultPrecision());
  for (int i = 0; i < req.formats_size(); ++i) {
    ASSIGN_OR_RETURN(
        engine::Precision p,
        ResolveFormats(req.formats(i), absl::StrCat("formats[", i, "]")));
    formats.push_back(std::move(p));
  }

  const uint64_t H = hardware.size(), F = formats.size(), B = batches.size(),
                 P = prompts.size(), G = gens.size();
  engine::Scenario s;
  s.pins = c.pins;
  s.options = c.options;
  s.economics = c.economics;
  s.parallelism = c.parallelism;
  v1::SweepPoint point;
  constexpr uint64_t kNone = ~uint64_t{0};
  uint64_t cur_m = kNone, cur_h = kNone, cur_f = kNone;
  // The stable order and sharding of explore/grid.h: models slowest,
  // generated lengths fastest; shard i of n owns index % n == i.
  const explore::MixedRadix grid({models.size(), H, F, B, P, G});
  const explore::Shard shard{req.shard_index(), shard_count};
  uint64_t digits[6];
  absl::Status stopped;
  explore::ForEachInShard(total, shard, 0, [&](uint64_t i) {
    grid.Decode(i, digits);
    const uint64_t m = digits[0], h = digits[1], f = digits[2], b = digits[3],
                   p = digits[4], g = digits[5];

    // The inner lists vary fastest: copy a model, hardware, formats or
    // profile (strings, vectors) only when its index changes.
    if (m != cur_m) s.model = models[cur_m = m];
    if (h != cur_h) {
      s.hardware = hardware[cur_h = h];
      ApplyProfile(profiles[h], req.options(), &s);
    }
    if (f != cur_f) s.precision = formats[cur_f = f];
    s.workload.batch = batches[b];
    s.workload.prompt_tokens = prompts[p];
    s.workload.generated_tokens = gens[g];

    point.Clear();
    point.set_index(i);
    point.set_total_points(total);
    point.set_model_index(static_cast<int32_t>(m));
    point.set_hardware_index(static_cast<int32_t>(h));
    point.set_formats_index(static_cast<int32_t>(f));
    point.set_batch_index(static_cast<int32_t>(b));
    point.set_prompt_index(static_cast<int32_t>(p));
    point.set_generated_index(static_cast<int32_t>(g));
    absl::StatusOr<engine::AnalysisResult> r = RunEngine(s, observer_, "sweep");
    if (r.ok()) {
      Summarize(*r, s, point.mutable_summary());
      if (req.include_full_result()) {
        ToProto(*r, point.mutable_result(), req.result_view());
      }
    } else {
      point.mutable_error()->set_code(static_cast<int32_t>(r.status().code()));
      point.mutable_error()->set_message(std::string(r.status().message()));
    }
    if (!emit(point)) {
      stopped = absl::CancelledError(
          absl::StrCat("sweep stopped after point ", i, " of ", total,
                       ": the client went away or the deadline passed"));
      return false;
    }
    return true;
  });
  return stopped;
}

namespace {

// A kernel dtype: empty = `def`; any known format name.
absl::StatusOr<engine::NumberFormat> KernelFormat(const std::string& name,
                                                  absl::string_view def,
                                                  absl::string_view path) {
  return ParseFormat(name.empty() ? std::string(def) : name, path);
}

void ToProto(const engine::KernelCost& c, const engine::Hardware& hw,
             v1::KernelCost* out) {
  out->set_flops(c.flops);
  out->set_bytes(c.bytes);
  out->set_intensity(c.bytes > 0 ? c.flops / c.bytes : 0);
  const std::string_view math = engine::MathTypeName(c.math);
  out->set_math(math.data(), math.size());
  out->set_tier(c.tier);
  if (c.tier >= 0 && c.tier < static_cast<int>(hw.tiers.size())) {
    out->set_tier_name(hw.tiers[c.tier].name);
  }
  out->set_onchip_resident(c.onchip_resident);
  out->set_onchip_bandwidth_unknown(c.onchip_bandwidth_unknown);
  out->set_compute_seconds(c.compute_seconds);
  out->set_memory_seconds(c.memory_seconds);
  out->set_overhead_seconds(c.overhead_seconds);
  out->set_seconds(c.seconds);
  const std::string_view bound = engine::BoundName(c.bound);
  out->set_bound(bound.data(), bound.size());
  if (c.seconds > 0) {
    out->set_attained_flops_per_second(c.flops / c.seconds);
    out->set_attained_bytes_per_second(c.bytes / c.seconds);
  }
}

}  // namespace

absl::StatusOr<v1::AnalyzeKernelResponse> Backend::AnalyzeKernel(
    const v1::AnalyzeKernelRequest& req) const {
  v1::AnalyzeKernelResponse resp;
  RETURN_IF_ERROR(AnalyzeKernel(req, &resp));
  return resp;
}

absl::Status Backend::AnalyzeKernel(const v1::AnalyzeKernelRequest& req,
                                    v1::AnalyzeKernelResponse* resp) const {
  if (req.shape_case() == v1::AnalyzeKernelRequest::SHAPE_NOT_SET) {
    return OutOfRange("shape", "set: one of decode_attention or gemm",
                      "neither");
  }
  if (!req.has_hardware()) {
    return OutOfRange("hardware", "set: one of platform_id or description",
                      "unset");
  }
  ASSIGN_OR_RETURN(engine::Hardware hw,
                   ResolveHardware(*registry_, req.hardware(), "hardware"));
  int64_t gemv_max_tokens = engine::AnalysisOptions().gemv_max_tokens;
  if (req.has_gemv_max_tokens()) {
    RETURN_IF_ERROR(
        CheckInt("gemv_max_tokens", req.gemv_max_tokens(), 1, kMaxGemvTokens));
    gemv_max_tokens = req.gemv_max_tokens();
  }
  engine::KernelOptions options;
  if (req.has_warm_cache()) options.warm_cache = req.warm_cache();
  options.pure_roofline = req.has_pure_roofline() && req.pure_roofline();
  ASSIGN_OR_RETURN(Chosen chosen,
                   ChooseProfile(*profiles_, req.calibration(), hw));
  options.fp16_accumulation = Fp16Accumulation(chosen, req);
  // No profile is the pure bound (no launch overhead either), as in Analyze.
  if (options.pure_roofline || chosen.profile == nullptr) {
    chosen.profile = nullptr;
    if (options.pure_roofline) chosen.selected_by = "none";
    options.pure_roofline = true;
  }
  if (observer_ != nullptr) observer_->OnCalibration(chosen.selected_by);
  const engine::Efficiency efficiency = chosen.profile != nullptr
                                            ? chosen.profile->efficiency
                                            : engine::Efficiency{};
  engine::KernelOptions bound_options = options;
  bound_options.pure_roofline = true;

  // Runs the kernel model twice (calibrated and bound), timing both for the
  // observer as one analysis.
  auto run = [&](auto&& kernel) -> absl::Status {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<engine::KernelCost> cost = absl::InternalError("");
    absl::StatusOr<engine::KernelCost> bound = absl::InternalError("");
    try {
      cost = kernel(efficiency, options);
      if (cost.ok()) bound = kernel(engine::Efficiency{}, bound_options);
    } catch (const std::exception& e) {
      cost = absl::InternalError(absl::StrCat("engine fault: ", e.what()));
    }
    if (observer_ != nullptr) {
      const std::chrono::duration<double> d =
          std::chrono::steady_clock::now() - start;
      observer_->OnAnalysis("kernel", d.count(), cost.ok() && bound.ok());
    }
    if (!cost.ok()) return cost.status();
    if (!bound.ok()) return bound.status();
    ToProto(*cost, hw, resp->mutable_result());
    ToProto(*bound, hw, resp->mutable_bound());
    // Compute is a roof when the executed math type has a published peak.
    resp->set_compute_roof_known(bound->compute_seconds > 0);
    return absl::OkStatus();
  };

  if (req.has_decode_attention()) {
    const v1::DecodeAttentionKernelShape& in = req.decode_attention();
    constexpr std::string_view kPath = "decode_attention";
    engine::DecodeAttentionShape shape;
    if (in.has_batch()) shape.batch = in.batch();
    if (in.has_num_q_heads()) shape.num_q_heads = in.num_q_heads();
    shape.num_kv_heads =
        in.has_num_kv_heads() ? in.num_kv_heads() : shape.num_q_heads;
    if (in.has_head_dim()) shape.head_dim = in.head_dim();
    if (in.has_kv_length()) shape.kv_length = in.kv_length();
    ASSIGN_OR_RETURN(shape.dtype, KernelFormat(in.dtype(), "fp16",
                                               "decode_attention.dtype"));
    // Names "decode_attention.<field>", the range and the value.
    RETURN_IF_ERROR(engine::ValidateDecodeAttentionShape(shape, kPath));
    resp->set_kernel("decode_attention");
    resp->set_op_class(
        std::string(engine::OpClassName(engine::OpClass::kAttention)));
    RETURN_IF_ERROR(
        run([&](const engine::Efficiency& e, const engine::KernelOptions& o) {
          return engine::DecodeAttentionKernel(shape, hw, e, o);
        }));
  } else {
    const v1::GemmKernelShape& in = req.gemm();
    constexpr std::string_view kPath = "gemm";
    engine::GemmShape shape;
    shape.m = in.m();
    shape.n = in.n();
    shape.k = in.k();
    ASSIGN_OR_RETURN(shape.a,
                     KernelFormat(in.a_format(), "fp16", "gemm.a_format"));
    ASSIGN_OR_RETURN(
        shape.b, KernelFormat(in.b_format(), shape.a.name, "gemm.b_format"));
    if (!shape.a.native_math) {
      return OutOfRange("gemm.a_format",
                        "a format with a native math type (fp32, bf16, fp16, "
                        "fp8, int8, ...)",
                        Quote(in.a_format()));
    }
    RETURN_IF_ERROR(engine::ValidateGemmShape(shape, kPath));
    resp->set_kernel("gemm");
    resp->set_op_class(std::string(engine::OpClassName(
        shape.m <= gemv_max_tokens ? engine::OpClass::kGemv
                                   : engine::OpClass::kGemm)));
    RETURN_IF_ERROR(
        run([&](const engine::Efficiency& e, const engine::KernelOptions& o) {
          return engine::GemmKernel(shape, hw, e, o, gemv_max_tokens);
        }));
  }
  resp->set_hardware_id(hw.id);
  v1::CalibrationUsed* cu = resp->mutable_calibration();
  cu->set_selected_by(chosen.selected_by);
  if (chosen.profile != nullptr) {
    cu->set_profile_name(chosen.profile->name);
    cu->set_fitted_from(chosen.profile->fitted_from);
  }
  resp->set_upper_bound(chosen.profile == nullptr);
  return absl::OkStatus();
}

absl::StatusOr<v1::ListHardwareResponse> Backend::ListHardware(
    const v1::ListHardwareRequest& req) const {
  if (req.family().size() > kMaxIdChars) {
    return OutOfRange("family", "0..128 characters", Quote(req.family()));
  }
  v1::ListHardwareResponse resp;
  for (const engine::Hardware& hw : registry_->platforms()) {
    if (!req.family().empty() && hw.family != req.family()) continue;
    ToProto(hw, resp.add_hardware());
  }
  // A mistyped family would otherwise look like "no such hardware". With no
  // platforms loaded nothing is known, so the empty list stands.
  if (!req.family().empty() && resp.hardware_size() == 0 &&
      !registry_->platforms().empty()) {
    std::set<std::string> known;
    for (const engine::Hardware& hw : registry_->platforms()) {
      known.insert(hw.family);
    }
    return OutOfRange("family",
                      absl::StrCat("empty or a loaded family (",
                                   absl::StrJoin(known, ", "), ")"),
                      Quote(req.family()));
  }
  for (const plugin_host::LoadOutcome& o : registry_->outcomes()) {
    v1::PluginInfo* pi = resp.add_plugins();
    pi->set_path(o.path);
    pi->set_family(o.family);
    pi->set_plugin_version(o.plugin_version);
    pi->set_loaded(o.loaded);
    pi->set_reason(o.reason);
    pi->set_platforms(o.platforms);
  }
  return resp;
}

absl::StatusOr<v1::GetHardwareResponse> Backend::GetHardware(
    const v1::GetHardwareRequest& req) const {
  if (req.id().empty() || req.id().size() > kMaxIdChars) {
    return OutOfRange("id",
                      "a platform id of 1..128 characters (see ListHardware)",
                      Quote(req.id()));
  }
  absl::StatusOr<const engine::Hardware*> hw = registry_->Find(req.id());
  if (!hw.ok()) return Prefixed("id", hw.status());
  v1::GetHardwareResponse resp;
  ToProto(**hw, resp.mutable_hardware());
  return resp;
}

absl::StatusOr<v1::ListModelsResponse> Backend::ListModels(
    const v1::ListModelsRequest&) const {
  v1::ListModelsResponse resp;
  for (const engine::ModelConfig& m : engine::BuiltinModels()) {
    ToProto(m, resp.add_models());
  }
  return resp;
}

absl::StatusOr<v1::GetModelResponse> Backend::GetModel(
    const v1::GetModelRequest& req) const {
  if (req.id().empty() || req.id().size() > kMaxIdChars) {
    return OutOfRange("id",
                      "a catalog id of 1..128 characters (see ListModels)",
                      Quote(req.id()));
  }
  absl::StatusOr<engine::ModelConfig> m = engine::FindModel(req.id());
  if (!m.ok()) return Prefixed("id", m.status());
  v1::GetModelResponse resp;
  ToProto(*m, resp.mutable_model());
  return resp;
}

}  // namespace ridgeline::service
