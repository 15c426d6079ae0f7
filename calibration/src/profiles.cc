#include "ridgeline/calibration/profiles.h"
#include "ridgeline/plugin_host/registry.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "ridgeline/engine/hardware.h"
#include "ridgeline/engine/model.h"

namespace ridgeline::calibration {
namespace {

using nlohmann::json;
constexpr int kFormatVersion = 1;

absl::Status Bad(std::string_view file, std::string_view field,
                 std::string_view want, const json& got) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: %s: expected %s, got %s", file, field, want, got.dump()));
}

absl::Status ReadString(const json& j, std::string_view file, const char* key,
                        bool required, std::string* out) {
  if (!j.contains(key)) {
    if (required) return Bad(file, key, "a string (required)", json());
    return absl::OkStatus();
  }
  if (!j[key].is_string()) return Bad(file, key, "a string", j[key]);
  *out = j[key].get<std::string>();
  return absl::OkStatus();
}

absl::Status ReadPerClass(const json& j, std::string_view file,
                          const std::string& path,
                          std::array<double, engine::kOpClassCount>* out) {
  if (!j.is_object()) return Bad(file, path, "an object keyed by op class", j);
  for (const auto& [key, value] : j.items()) {
    int found = -1;
    for (int c = 0; c < engine::kOpClassCount; ++c) {
      if (engine::OpClassName(static_cast<engine::OpClass>(c)) == key) found = c;
    }
    if (found < 0) {
      return Bad(file, absl::StrCat(path, ".", key),
                 "one of gemm, gemv, attention, elementwise", json(key));
    }
    if (!value.is_number() || !(value.get<double>() > 0 && value.get<double>() <= 1)) {
      return Bad(file, absl::StrCat(path, ".", key), "a number in (0, 1]", value);
    }
    (*out)[found] = value.get<double>();
  }
  return absl::OkStatus();
}

// The kernel model section ("kernel_model"): every number is optional and
// defaults to the plain roofline; ranges are the engine's
// (ValidateKernelModel).
absl::Status ReadKernelModel(const json& k, std::string_view file,
                             engine::KernelModel* out) {
  if (!k.is_object()) return Bad(file, "kernel_model", "an object", k);
  engine::KernelModel m;
  m.present = true;
  auto number = [&](const json& obj, const std::string& path, const char* key,
                    double* v) -> absl::Status {
    if (!obj.contains(key)) return absl::OkStatus();
    if (!obj[key].is_number()) {
      return Bad(file, absl::StrCat(path, key), "a number", obj[key]);
    }
    *v = obj[key].get<double>();
    return absl::OkStatus();
  };
  if (k.contains("per_call_seconds")) {
    const json& pc = k["per_call_seconds"];
    if (!pc.is_object())
      return Bad(file, "kernel_model.per_call_seconds", "an object", pc);
    for (int c = 0; c < engine::kKernelClassCount; ++c) {
      const std::string key(
          engine::KernelClassName(static_cast<engine::KernelClass>(c)));
      if (auto st = number(pc, "kernel_model.per_call_seconds.", key.c_str(),
                           &m.per_call_seconds[c]);
          !st.ok())
        return st;
    }
  }
  for (const auto& [name, g] :
       {std::pair{"gemm", &m.gemm}, std::pair{"gemm_fp8", &m.gemm_fp8}}) {
    if (!k.contains(name)) continue;
    if (std::string_view(name) == "gemm_fp8") m.gemm_fp8_fitted = true;
    const json& gj = k[name];
    if (!gj.is_object())
      return Bad(file, absl::StrCat("kernel_model.", name), "an object", gj);
    for (const auto& [side, arr] :
         {std::pair{"compute", &g->compute}, std::pair{"memory", &g->memory}}) {
      if (!gj.contains(side)) continue;
      const json& sj = gj[side];
      const std::string path =
          absl::StrCat("kernel_model.", name, ".", side, ".");
      if (!sj.is_object()) return Bad(file, path, "an object", sj);
      for (int r = 0; r < engine::kGemmRegimeCount; ++r) {
        const std::string key(
            engine::GemmRegimeName(static_cast<engine::GemmRegime>(r)));
        if (auto st = number(sj, path, key.c_str(), &(*arr)[r]); !st.ok())
          return st;
      }
    }
  }
  for (const auto& [key, v] :
       {std::pair{"fp8_quantization_seconds", &m.fp8_quantization_seconds},
        std::pair{"wave_quantization", &m.wave_quantization},
        std::pair{"gemm_seconds_per_k_step", &m.gemm_seconds_per_k_step},
        std::pair{"gemm_split_k_depth_bytes", &m.gemm_split_k_depth_bytes},
        std::pair{"attention_compute", &m.attention_compute},
        std::pair{"attention_memory", &m.attention_memory},
        std::pair{"attention_cta_bandwidth_share",
                  &m.attention_cta_bandwidth_share},
        std::pair{"attention_seconds_per_cta", &m.attention_seconds_per_cta},
        std::pair{"attention_seconds_per_query_head",
                  &m.attention_seconds_per_query_head},
        std::pair{"attention_8bit_kv_per_call_seconds",
                  &m.attention_8bit_kv_per_call_seconds},
        std::pair{"attention_split_merge_seconds",
                  &m.attention_split_merge_seconds},
        std::pair{"attention_max_shared_group", &m.attention_max_shared_group},
        std::pair{"attention_group_reread_share",
                  &m.attention_group_reread_share},
        std::pair{"elementwise_memory", &m.elementwise_memory},
        std::pair{"l2_resident_speedup", &m.l2_resident_speedup}}) {
    if (auto st = number(k, "kernel_model.", key, v); !st.ok()) return st;
  }
  // Present: fitted on 8-bit KV rows (absent: per_call_seconds.attention).
  m.attention_8bit_kv_fitted = k.contains("attention_8bit_kv_per_call_seconds");
  if (absl::Status st = engine::ValidateKernelModel(m, "kernel_model");
      !st.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s", file, std::string(st.message())));
  }
  *out = m;
  return absl::OkStatus();
}

json KernelModelToJson(const engine::KernelModel& m) {
  json pc = json::object();
  for (int c = 0; c < engine::kKernelClassCount; ++c) {
    pc[std::string(engine::KernelClassName(
        static_cast<engine::KernelClass>(c)))] = m.per_call_seconds[c];
  }
  auto gemm = [](const engine::GemmEfficiency& g) {
    json compute = json::object(), memory = json::object();
    for (int r = 0; r < engine::kGemmRegimeCount; ++r) {
      const std::string key(
          engine::GemmRegimeName(static_cast<engine::GemmRegime>(r)));
      compute[key] = g.compute[r];
      memory[key] = g.memory[r];
    }
    return json{{"compute", compute}, {"memory", memory}};
  };
  json j = {{"per_call_seconds", pc},
            {"gemm", gemm(m.gemm)},
            {"fp8_quantization_seconds", m.fp8_quantization_seconds},
            {"wave_quantization", m.wave_quantization},
            {"gemm_seconds_per_k_step", m.gemm_seconds_per_k_step},
            {"gemm_split_k_depth_bytes", m.gemm_split_k_depth_bytes},
            {"attention_compute", m.attention_compute},
            {"attention_memory", m.attention_memory},
            {"attention_cta_bandwidth_share", m.attention_cta_bandwidth_share},
            {"attention_seconds_per_cta", m.attention_seconds_per_cta},
            {"attention_seconds_per_query_head",
             m.attention_seconds_per_query_head},
            {"attention_split_merge_seconds", m.attention_split_merge_seconds},
            {"attention_max_shared_group", m.attention_max_shared_group},
            {"attention_group_reread_share", m.attention_group_reread_share},
            {"elementwise_memory", m.elementwise_memory},
            {"l2_resident_speedup", m.l2_resident_speedup}};
  if (m.gemm_fp8_fitted) j["gemm_fp8"] = gemm(m.gemm_fp8);
  if (m.attention_8bit_kv_fitted) {
    j["attention_8bit_kv_per_call_seconds"] =
        m.attention_8bit_kv_per_call_seconds;
  }
  return j;
}

absl::Status ReadOverhead(const json& j, std::string_view file, const char* key,
                          double* out) {
  if (!j.contains(key)) return absl::OkStatus();
  const json& v = j[key];
  if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= 1)) {
    return Bad(file, absl::StrCat("efficiency.", key), "seconds in [0, 1]", v);
  }
  *out = v.get<double>();
  return absl::OkStatus();
}

// Framework `query` is covered by profile framework `key`: equal, or key is
// a prefix ending at a separator ("tensorrt-llm" covers "tensorrt-llm-0.6.1").
int CoverLength(std::string_view key, std::string_view query) {
  if (key.empty() || query.size() < key.size()) return -1;
  if (query.substr(0, key.size()) != key) return -1;
  if (query.size() == key.size()) return static_cast<int>(key.size());
  const char next = query[key.size()];
  if (next == '-' || next == '.' || next == '_' || next == ' ') {
    return static_cast<int>(key.size());
  }
  return -1;
}

// As CoverLength, and also the other way round: asking for "vllm" matches
// a "vllm-rocm" profile (the same runtime, built for the hardware), ranked
// below any profile whose key covers the query.
int FrameworkMatchLength(std::string_view key, std::string_view query) {
  const int covers = CoverLength(key, query);
  if (covers >= 0) return covers + 1;
  return CoverLength(query, key) >= 0 ? 0 : -1;
}

// "serving_fit": {"hardware": [ids], "tensor_parallel": [degrees],
// "min_speed_fraction": (0, 1]}.
absl::Status ReadServingFit(const json& v, std::string_view file,
                            Profile::ServingFit* out) {
  if (!v.is_object()) return Bad(file, "serving_fit", "an object", v);
  for (const auto& [key, value] : v.items()) {
    if (key != "hardware" && key != "tensor_parallel" &&
        key != "min_speed_fraction") {
      return Bad(file, absl::StrCat("serving_fit.", key),
                 "one of hardware, tensor_parallel, min_speed_fraction",
                 json(key));
    }
  }
  if (v.contains("hardware")) {
    const json& h = v["hardware"];
    if (!h.is_array())
      return Bad(file, "serving_fit.hardware", "an array of ids", h);
    for (const json& id : h) {
      if (!id.is_string() || id.get<std::string>().empty()) {
        return Bad(file, "serving_fit.hardware", "non-empty hardware ids", id);
      }
      out->hardware.push_back(id.get<std::string>());
    }
  }
  if (v.contains("tensor_parallel")) {
    const json& t = v["tensor_parallel"];
    if (!t.is_array()) {
      return Bad(file, "serving_fit.tensor_parallel", "an array of degrees", t);
    }
    for (const json& d : t) {
      if (!d.is_number_integer() || d.get<int64_t>() < 1 ||
          d.get<int64_t>() > 256) {
        return Bad(file, "serving_fit.tensor_parallel", "integers in [1, 256]",
                   d);
      }
      out->tensor_parallel.push_back(d.get<int64_t>());
    }
  }
  if (v.contains("min_speed_fraction")) {
    const json& f = v["min_speed_fraction"];
    if (!f.is_number() || !(f.get<double>() > 0 && f.get<double>() <= 1)) {
      return Bad(file, "serving_fit.min_speed_fraction", "a number in (0, 1]",
                 f);
    }
    out->min_speed_fraction = f.get<double>();
  }
  return absl::OkStatus();
}

}  // namespace

bool FittedOnDeployment(const Profile& p, std::string_view hardware_id,
                        int64_t tensor_parallel, int64_t expert_parallel) {
  const Profile::ServingFit& f = p.serving_fit;
  if (f.hardware.empty()) return true;
  const bool hw = std::find(f.hardware.begin(), f.hardware.end(),
                            hardware_id) != f.hardware.end();
  const bool tp = f.tensor_parallel.empty() ||
                  std::find(f.tensor_parallel.begin(), f.tensor_parallel.end(),
                            tensor_parallel) != f.tensor_parallel.end();
  return hw && tp && expert_parallel <= 1;
}

std::string ExtrapolationWarning(const Profile& p, std::string_view hardware_id,
                                 std::string_view deployment) {
  const Profile::ServingFit& f = p.serving_fit;
  return absl::StrCat(
      p.name, " was fitted on ", absl::StrJoin(f.hardware, ", "), " at TP ",
      absl::StrJoin(f.tensor_parallel, "/"),
      " only: ", absl::string_view(deployment.data(), deployment.size()),
      " on ", absl::string_view(hardware_id.data(), hardware_id.size()),
      " is an EXTRAPOLATION (no measurement checks it); each step is "
      "held between the pure roofline and ",
      absl::StrFormat("%.3g", f.min_speed_fraction),
      " of its speed (the slowest share of the bound any fit row measured)");
}

std::string DeviceMemoryTechnology(const engine::Hardware& hardware) {
  for (const engine::MemoryTier& t : hardware.tiers) {
    if (t.kind == engine::TierKind::kSram || t.kind == engine::TierKind::kHostLink ||
        t.kind == engine::TierKind::kFlash)
      continue;
    return std::string(engine::TierKindName(t.kind));
  }
  return "";
}

bool FrameworkCovers(std::string_view key, std::string_view query) {
  return CoverLength(key, query) >= 0;
}

bool SameFramework(std::string_view key, std::string_view query) {
  return FrameworkMatchLength(key, query) >= 0;
}

std::string DescribeMatch(const Profile& p, std::string_view hardware_id_view,
                          std::string_view framework_view) {
  const std::string framework(framework_view);
  const std::string hardware_id(hardware_id_view);
  const std::string hw =
      !p.hardware_id.empty()
          ? absl::StrCat("hardware \"", p.hardware_id, "\"")
          : !p.family.empty()
                ? absl::StrCat("other hardware of family \"", p.family, "\"",
                               p.memory.empty()
                                   ? std::string()
                                   : absl::StrCat(" with ", p.memory, " memory"))
                : std::string("any hardware");
  if (SameFramework(p.framework, framework)) {
    return absl::StrCat(hw, " + framework \"", p.framework, "\"",
                        p.framework == framework
                            ? std::string()
                            : absl::StrCat(" (asked \"", framework, "\")"));
  }
  return absl::StrCat(hw, " only: fitted with framework \"",
                      p.framework.empty() ? "(none)" : p.framework,
                      "\", not the \"", framework, "\" asked for (no profile for ",
                      "it on ", hardware_id, ", its family or any hardware)");
}

absl::StatusOr<Profile> ParseProfileJson(std::string_view text,
                                         std::string_view file) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(file), ": not valid JSON"));
  }
  if (!j.is_object()) return Bad(file, "(top level)", "an object", j);
  Profile p;
  if (!j.contains("format_version")) {
    return Bad(file, "format_version", absl::StrCat(kFormatVersion, " (required)"), json());
  }
  if (!j["format_version"].is_number_integer() ||
      j["format_version"].get<int>() != kFormatVersion) {
    return Bad(file, "format_version", absl::StrCat(kFormatVersion),
               j["format_version"]);
  }
  p.format_version = kFormatVersion;
  if (auto st = ReadString(j, file, "name", true, &p.name); !st.ok()) return st;
  if (p.name.empty()) return Bad(file, "name", "a non-empty string", json(p.name));
  if (auto st = ReadString(j, file, "hardware_id", false, &p.hardware_id); !st.ok()) return st;
  if (auto st = ReadString(j, file, "family", false, &p.family); !st.ok()) return st;
  if (auto st = ReadString(j, file, "framework", false, &p.framework); !st.ok()) return st;
  if (auto st = ReadString(j, file, "memory", false, &p.memory); !st.ok()) return st;
  if (!p.memory.empty()) {
    bool known = false;
    for (engine::TierKind k : {engine::TierKind::kHbm, engine::TierKind::kGddr,
                               engine::TierKind::kLpddr, engine::TierKind::kDdr,
                               engine::TierKind::kUnified}) {
      known = known || engine::TierKindName(k) == p.memory;
    }
    if (!known || p.family.empty() || !p.hardware_id.empty()) {
      return Bad(file, "memory",
                 "\"\" or one of hbm, gddr, lpddr, ddr, unified, on a family "
                 "profile (hardware_id \"\")",
                 json(p.memory));
    }
  }
  if (auto st = ReadString(j, file, "fitted_from", false, &p.fitted_from); !st.ok()) return st;
  if (j.contains("fp16_accumulation")) {
    if (!j["fp16_accumulation"].is_boolean()) {
      return Bad(file, "fp16_accumulation", "true or false", j["fp16_accumulation"]);
    }
    p.fp16_accumulation = j["fp16_accumulation"].get<bool>();
  }
  if (j.contains("serving_fit")) {
    if (auto st = ReadServingFit(j["serving_fit"], file, &p.serving_fit);
        !st.ok())
      return st;
  }
  if (p.hardware_id.empty() && p.family.empty() && p.framework.empty()) {
    return Bad(file, "hardware_id/family/framework",
               "at least one key to match on", json(""));
  }
  if (j.contains("efficiency")) {
    const json& e = j["efficiency"];
    if (!e.is_object()) return Bad(file, "efficiency", "an object", e);
    for (const auto& [key, value] : e.items()) {
      if (key != "compute" && key != "memory" &&
          key != "per_step_overhead_seconds" &&
          key != "per_request_overhead_seconds" &&
          key != "per_kernel_overhead_seconds" && key != "link" &&
          key != "collective_call_seconds" &&
          key != "compute_power_exponent" &&
          key != "dequantized_compute_share" &&
          key != "dequantized_compute_share_by_format" &&
          key != "inline_ecc") {
        return Bad(file, absl::StrCat("efficiency.", key),
                   "one of compute, memory, per_step_overhead_seconds, "
                   "per_request_overhead_seconds, per_kernel_overhead_seconds, "
                   "link, collective_call_seconds, compute_power_exponent, "
                   "dequantized_compute_share, "
                   "dequantized_compute_share_by_format, inline_ecc",
                   json(key));
      }
    }
    if (e.contains("compute")) {
      if (auto st = ReadPerClass(e["compute"], file, "efficiency.compute",
                                 &p.efficiency.compute);
          !st.ok())
        return st;
    }
    if (e.contains("memory")) {
      if (auto st = ReadPerClass(e["memory"], file, "efficiency.memory",
                                 &p.efficiency.memory);
          !st.ok())
        return st;
    }
    if (auto st = ReadOverhead(e, file, "per_step_overhead_seconds",
                               &p.efficiency.per_step_overhead_seconds);
        !st.ok())
      return st;
    if (auto st = ReadOverhead(e, file, "per_request_overhead_seconds",
                               &p.efficiency.per_request_overhead_seconds);
        !st.ok())
      return st;
    if (auto st = ReadOverhead(e, file, "per_kernel_overhead_seconds",
                               &p.efficiency.per_kernel_overhead_seconds);
        !st.ok())
      return st;
    if (auto st = ReadOverhead(e, file, "collective_call_seconds",
                               &p.efficiency.collective_call_seconds);
        !st.ok())
      return st;
    if (e.contains("link")) {
      const json& v = e["link"];
      if (!v.is_number() || !(v.get<double>() > 0 && v.get<double>() <= 1)) {
        return Bad(file, "efficiency.link", "a share in (0, 1]", v);
      }
      p.efficiency.link = v.get<double>();
    }
    if (e.contains("compute_power_exponent")) {
      const json& v = e["compute_power_exponent"];
      if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= 1)) {
        return Bad(file, "efficiency.compute_power_exponent",
                   "an exponent in [0, 1]", v);
      }
      p.efficiency.compute_power_exponent = v.get<double>();
    }
    if (e.contains("inline_ecc")) {
      const json& v = e["inline_ecc"];
      if (!v.is_boolean()) {
        return Bad(file, "efficiency.inline_ecc", "true or false", v);
      }
      p.efficiency.inline_ecc = v.get<bool>();
    }
    if (e.contains("dequantized_compute_share")) {
      const json& v = e["dequantized_compute_share"];
      if (!v.is_number() || !(v.get<double>() > 0 && v.get<double>() <= 1)) {
        return Bad(file, "efficiency.dequantized_compute_share",
                   "a share in (0, 1]", v);
      }
      p.efficiency.dequantized_compute_share = v.get<double>();
    }
    if (e.contains("dequantized_compute_share_by_format")) {
      const json& m = e["dequantized_compute_share_by_format"];
      if (!m.is_object()) {
        return Bad(file, "efficiency.dequantized_compute_share_by_format",
                   "an object of weight format -> share in (0, 1]", m);
      }
      for (const auto& [format, v] : m.items()) {
        if (!v.is_number() || !(v.get<double>() > 0 && v.get<double>() <= 1)) {
          return Bad(file,
                     absl::StrCat("efficiency.dequantized_compute_share_by_format.",
                                  format),
                     "a share in (0, 1]", v);
        }
        p.efficiency.dequantized_compute_share_by_format[format] = v.get<double>();
      }
    }
  }
  if (j.contains("kernel_model")) {
    if (auto st =
            ReadKernelModel(j["kernel_model"], file, &p.efficiency.kernel);
        !st.ok())
      return st;
  }
  p.efficiency.profile_name = p.name;
  return p;
}

std::string ProfileToJson(const Profile& p) {
  json compute = json::object();
  json memory = json::object();
  for (int c = 0; c < engine::kOpClassCount; ++c) {
    std::string key(engine::OpClassName(static_cast<engine::OpClass>(c)));
    compute[key] = p.efficiency.compute[c];
    memory[key] = p.efficiency.memory[c];
  }
  json j = json::object();
  j["format_version"] = kFormatVersion;
  j["name"] = p.name;
  j["hardware_id"] = p.hardware_id;
  j["family"] = p.family;
  j["framework"] = p.framework;
  if (!p.memory.empty()) j["memory"] = p.memory;
  j["fp16_accumulation"] = p.fp16_accumulation;
  j["efficiency"] = {
      {"compute", compute},
      {"memory", memory},
      {"per_step_overhead_seconds", p.efficiency.per_step_overhead_seconds},
      {"per_request_overhead_seconds",
       p.efficiency.per_request_overhead_seconds},
      {"per_kernel_overhead_seconds", p.efficiency.per_kernel_overhead_seconds}};
  // Only where fitted (serving profiles): other profiles stay as they were.
  if (p.efficiency.link != 1) j["efficiency"]["link"] = p.efficiency.link;
  // Written only where fitted (serving profiles), as the link share.
  if (p.efficiency.collective_call_seconds > 0) {
    j["efficiency"]["collective_call_seconds"] =
        p.efficiency.collective_call_seconds;
  }
  // Written only where fitted (prefill rows over parts and weight formats).
  if (p.efficiency.compute_power_exponent > 0) {
    j["efficiency"]["compute_power_exponent"] =
        p.efficiency.compute_power_exponent;
  }
  if (p.efficiency.dequantized_compute_share != 1) {
    j["efficiency"]["dequantized_compute_share"] =
        p.efficiency.dequantized_compute_share;
  }
  if (!p.efficiency.dequantized_compute_share_by_format.empty()) {
    j["efficiency"]["dequantized_compute_share_by_format"] =
        p.efficiency.dequantized_compute_share_by_format;
  }
  // Written only where true (profiles fitted on end-to-end rows).
  if (p.efficiency.inline_ecc) j["efficiency"]["inline_ecc"] = true;
  if (p.efficiency.kernel.present) {
    j["kernel_model"] = KernelModelToJson(p.efficiency.kernel);
  }
  j["fitted_from"] = p.fitted_from;
  if (!p.serving_fit.hardware.empty()) {
    j["serving_fit"] = {
        {"hardware", p.serving_fit.hardware},
        {"tensor_parallel", p.serving_fit.tensor_parallel},
        {"min_speed_fraction", p.serving_fit.min_speed_fraction}};
  }
  return j.dump(2) + "\n";
}

absl::Status WriteProfiles(const std::filesystem::path& dir,
                           const std::vector<Profile>& profiles) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat(dir.string(), ": cannot create directory: ", ec.message()));
  }
  for (const Profile& p : profiles) {
    std::filesystem::path path = dir / (p.name + ".json");
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << ProfileToJson(p);
    if (!out) {
      return absl::InternalError(absl::StrCat(path.string(), ": write failed"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const ProfileStore>> ProfileStore::LoadDirectory(
    const std::filesystem::path& dir, IfMissing if_missing) {
  std::vector<Profile> profiles;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    if (if_missing == IfMissing::kEmpty) return FromProfiles({});
    return absl::NotFoundError(absl::StrCat(
        "profile directory '", dir.string(), "' does not exist or is not a directory"));
  }
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") {
      files.push_back(entry.path());
    }
  }
  if (ec) {
    return absl::InternalError(
        absl::StrCat(dir.string(), ": cannot list: ", ec.message()));
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    absl::StatusOr<Profile> p = ParseProfileJson(ss.str(), path.string());
    if (!p.ok()) return p.status();
    for (const Profile& other : profiles) {
      if (other.name == p->name) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: name: \"%s\" is already used by another profile in %s",
            path.string(), p->name, dir.string()));
      }
    }
    profiles.push_back(*std::move(p));
  }
  auto store =
      std::make_shared<ProfileStore>(*FromProfiles(std::move(profiles)));
  // Sub-stores: serving/ (serving profiles) and kernels/ (kernel-model
  // profiles fitted on kernel tables).
  for (const auto& [sub, slot] : {std::pair{"serving", &store->serving_},
                                  std::pair{"kernels", &store->kernels_}}) {
    const std::filesystem::path sub_dir = dir / sub;
    if (!std::filesystem::is_directory(sub_dir, ec)) continue;
    absl::StatusOr<std::shared_ptr<const ProfileStore>> loaded =
        LoadDirectory(sub_dir);
    if (!loaded.ok()) return loaded.status();
    *slot = *std::move(loaded);
  }
  return store;
}

const ProfileStore& ProfileStore::serving() const {
  static const ProfileStore* const kEmpty = new ProfileStore();
  return serving_ ? *serving_ : *kEmpty;
}

const ProfileStore& ProfileStore::kernels() const {
  static const ProfileStore* const kEmpty = new ProfileStore();
  return kernels_ ? *kernels_ : *kEmpty;
}

std::shared_ptr<const ProfileStore> ProfileStore::FromProfiles(
    std::vector<Profile> p) {
  auto store = std::make_shared<ProfileStore>();
  for (Profile& profile : p) profile.efficiency.profile_name = profile.name;
  std::sort(p.begin(), p.end(),
            [](const Profile& a, const Profile& b) { return a.name < b.name; });
  store->profiles_ = std::move(p);
  return store;
}

std::vector<std::string> ProfileStore::Frameworks() const {
  std::vector<std::string> out;
  for (const ProfileStore* store : {this, &serving()}) {
    for (const Profile& p : store->profiles()) out.push_back(p.framework);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool ProfileStore::KnowsFramework(std::string_view framework) const {
  for (const ProfileStore* store : {this, &serving()}) {
    for (const Profile& p : store->profiles()) {
      if (SameFramework(p.framework, framework)) return true;
    }
  }
  return false;
}

absl::StatusOr<const Profile*> ProfileStore::Find(std::string_view name) const {
  std::vector<std::string> names;
  for (const Profile& p : profiles_) {
    if (p.name == name) return &p;
    names.push_back(p.name);
  }
  std::vector<std::string> close = engine::ClosestNames(name, names);
  return absl::NotFoundError(absl::StrFormat(
      "profile \"%s\" not found%s", name,
      close.empty() ? std::string(" (no profiles loaded)")
                    : absl::StrCat("; closest: ", absl::StrJoin(close, ", "))));
}

const Profile* ProfileStore::Match(std::string_view hardware_id,
                                   std::string_view family,
                                   std::string_view framework,
                                   std::string_view memory) const {
  // Tiers, best first: 0 id + framework, 1 family + memory technology +
  // framework, 2 family + framework, 3 framework alone, 4 id (framework-less
  // profile first), 5 family (likewise; technology-matched first).
  const Profile* best = nullptr;
  int best_tier = 100;
  int best_len = -1;
  for (const Profile& p : profiles_) {
    const bool id_match = !p.hardware_id.empty() && p.hardware_id == hardware_id;
    const bool family_match =
        p.hardware_id.empty() && !p.family.empty() && p.family == family &&
        (p.memory.empty() || p.memory == memory);
    const bool wildcard_hw = p.hardware_id.empty() && p.family.empty();
    const int fw = FrameworkMatchLength(p.framework, framework);  // -1: none
    int tier = 100;
    int len = fw;
    if (id_match && fw >= 0) {
      tier = 0;
    } else if (family_match && fw >= 0) {
      tier = p.memory.empty() ? 2 : 1;
    } else if (wildcard_hw && fw >= 0) {
      tier = 3;
    } else if (id_match) {
      tier = 4;
      len = p.framework.empty() ? 1 : 0;
    } else if (family_match) {
      tier = 5;
      len = (p.framework.empty() ? 2 : 0) + (p.memory.empty() ? 0 : 1);
    }
    if (tier < best_tier || (tier == best_tier && len > best_len)) {
      best = tier < 100 ? &p : best;
      best_tier = tier;
      best_len = len;
    }
  }
  return best_tier < 100 ? best : nullptr;
}

std::filesystem::path DefaultProfileDir() {
  // Same order as plugin_host::DefaultPluginDir: the running executable's
  // install prefix, then the source tree (uninstalled binaries), then the
  // configured install prefix.
  std::error_code ec;
  for (const std::filesystem::path& dir :
       {plugin_host::InstallPrefixPath(RIDGELINE_PROFILE_INSTALL_DIR),
        std::filesystem::path(RIDGELINE_SOURCE_PROFILE_DIR),
        std::filesystem::path(RIDGELINE_DEFAULT_PROFILE_DIR)}) {
    if (!dir.empty() && std::filesystem::is_directory(dir, ec)) return dir;
  }
  return RIDGELINE_DEFAULT_PROFILE_DIR;
}

}  // namespace ridgeline::calibration
