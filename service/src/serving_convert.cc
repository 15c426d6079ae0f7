#include "serving_convert.h"

#include <exception>

#include "absl/strings/str_cat.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/service/convert.h"

namespace ridgeline::service::serving_convert {
namespace {

constexpr size_t kMaxIdChars = 128;

absl::StatusOr<engine::NumberFormat> Format(const std::string& name,
                                            const std::string& path) {
  if (name.empty()) return engine::ParseNumberFormat("bf16");
  if (name.size() > 64) return Bad(path, "a number format name", "too long");
  absl::StatusOr<engine::NumberFormat> f = engine::ParseNumberFormat(name);
  if (!f.ok()) return Prefixed(path, f.status());
  return f;
}

}  // namespace


absl::Status Bad(absl::string_view field, absl::string_view range,
                 absl::string_view got) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": must be ", range, "; got ", got));
}

absl::Status Prefixed(absl::string_view path, const absl::Status& s) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
}

absl::StatusOr<serving::LengthDistribution> Lengths(const v1::TokenLengths& l,
                                                    absl::string_view field) {
  switch (l.kind_case()) {
    case v1::TokenLengths::kFixed:
      return serving::LengthDistribution::Fixed(l.fixed());
    case v1::TokenLengths::kUniform:
      return serving::LengthDistribution::Uniform(l.uniform().min(),
                                                  l.uniform().max());
    case v1::TokenLengths::kHistogram:
      return serving::LengthDistribution::Empirical(
          {l.histogram().values().begin(), l.histogram().values().end()},
          {l.histogram().weights().begin(), l.histogram().weights().end()});
    case v1::TokenLengths::KIND_NOT_SET:
      break;
  }
  return Bad(field, "set: one of fixed, uniform or histogram", "unset");
}

absl::StatusOr<engine::ModelConfig> Model(const v1::ModelSpec& spec) {
  switch (spec.source_case()) {
    case v1::ModelSpec::kCatalogId: {
      if (spec.catalog_id().empty() || spec.catalog_id().size() > kMaxIdChars) {
        return Bad("model.catalog_id",
                   "a catalog id of 1..128 characters (see ListModels)",
                   absl::StrCat("\"", spec.catalog_id().substr(0, 64), "\""));
      }
      absl::StatusOr<engine::ModelConfig> m =
          engine::FindModel(spec.catalog_id());
      if (!m.ok()) return Prefixed("model.catalog_id", m.status());
      return m;
    }
    case v1::ModelSpec::kHfConfigJson: {
      absl::StatusOr<engine::ModelConfig> m = absl::InternalError("");
      try {
        m = engine::ParseHuggingFaceConfig(
            spec.hf_config_json(), spec.id().empty() ? "inline" : spec.id());
      } catch (const std::exception& e) {
        return absl::InvalidArgumentError(absl::StrCat(
            "model.hf_config_json: must be a valid config.json; ", e.what()));
      }
      if (!m.ok()) return Prefixed("model.hf_config_json", m.status());
      RETURN_IF_ERROR(Prefixed("model", engine::ValidateModel(*m)));
      return m;
    }
    case v1::ModelSpec::SOURCE_NOT_SET:
      break;
  }
  return Bad("model", "set: one of catalog_id or hf_config_json", "unset");
}

absl::StatusOr<engine::Precision> Precision(const v1::Formats& f,
                                            const std::string& path) {
  engine::Precision p;
  ASSIGN_OR_RETURN(p.weights, Format(f.weights(), path + ".weights"));
  ASSIGN_OR_RETURN(p.activations,
                   Format(f.activations(), path + ".activations"));
  ASSIGN_OR_RETURN(p.kv_cache, Format(f.kv_cache(), path + ".kv_cache"));
  if (!p.activations.native_math) {
    return Bad(path + ".activations",
               "a format with a native math type (bf16, fp8, int8, ...)",
               f.activations());
  }
  return p;
}

absl::Status Economics(const v1::EconomicsOverrides& e,
                       engine::Economics* out) {
  auto range = [](const char* field, double v, double lo, bool lo_open,
                  double hi) -> absl::Status {
    if ((lo_open ? v > lo : v >= lo) && v <= hi) return absl::OkStatus();
    return Bad(absl::StrCat("economics.", field),
               absl::StrCat("in ", lo_open ? "(" : "[", lo, ", ", hi, "]"),
               absl::StrCat(v));
  };
  if (e.has_electricity_usd_per_kwh()) {
    RETURN_IF_ERROR(range("electricity_usd_per_kwh",
                          e.electricity_usd_per_kwh(), 0, false, 10));
    out->electricity_usd_per_kwh = e.electricity_usd_per_kwh();
  }
  if (e.has_pue()) {
    RETURN_IF_ERROR(range("pue", e.pue(), 1, false, 3));
    out->pue = e.pue();
  }
  if (e.has_grid_g_co2e_per_kwh()) {
    RETURN_IF_ERROR(range("grid_g_co2e_per_kwh", e.grid_g_co2e_per_kwh(), 0,
                          false, 2000));
    out->grid_g_co2e_per_kwh = e.grid_g_co2e_per_kwh();
  }
  if (e.has_amortization_years()) {
    RETURN_IF_ERROR(
        range("amortization_years", e.amortization_years(), 0, true, 30));
    out->amortization_years = e.amortization_years();
  }
  if (e.has_utilization()) {
    RETURN_IF_ERROR(range("utilization", e.utilization(), 0, true, 1));
    out->utilization = e.utilization();
  }
  return absl::OkStatus();
}

std::string FormatsLabel(const engine::Precision& p) {
  return absl::StrCat(p.weights.name, "/", p.activations.name, "/",
                      p.kv_cache.name);
}

absl::StatusOr<engine::Hardware> Hardware(
    const plugin_host::HardwareRegistry& registry, const v1::HardwareSpec& spec,
    const std::string& path) {
  if (spec.source_case() == v1::HardwareSpec::kPlatformId) {
    absl::StatusOr<const engine::Hardware*> found =
        registry.Find(spec.platform_id());
    if (!found.ok()) return Prefixed(path + ".platform_id", found.status());
    return **found;
  }
  if (spec.source_case() == v1::HardwareSpec::kDescription) {
    ASSIGN_OR_RETURN(engine::Hardware hw,
                     FromProto(spec.description(), path + ".description"));
    RETURN_IF_ERROR(engine::ValidateHardware(hw, path + ".description"));
    return hw;
  }
  return Bad(path, "set: one of platform_id or description", "unset");
}

absl::StatusOr<Calibrated> Calibration(const calibration::ProfileStore& store,
                                       const v1::Calibration& cal,
                                       const engine::Hardware& hw,
                                       const std::string& path) {
  Calibrated c;
  if (cal.selector_case() == v1::Calibration::kProfile) {
    absl::StatusOr<const calibration::Profile*> p = store.Find(cal.profile());
    if (!p.ok()) return Prefixed(path + ".profile", p.status());
    c.efficiency = (*p)->efficiency;
    c.fp16_accumulation = (*p)->fp16_accumulation;
  } else if (cal.selector_case() == v1::Calibration::kFramework) {
    if (const calibration::Profile* p =
            store.Match(hw.id, hw.family, cal.framework())) {
      c.efficiency = p->efficiency;
      c.fp16_accumulation = p->fp16_accumulation;
    }
  }
  return c;
}

}  // namespace ridgeline::service::serving_convert
