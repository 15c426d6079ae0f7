#include "ridgeline/plugin_host/plugin_library.h"

#include <dlfcn.h>

#include <cmath>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

#ifndef BOOST_DLL_USE_STD_FS
#define BOOST_DLL_USE_STD_FS
#endif
#include <boost/dll/shared_library.hpp>

namespace ridgeline::plugin_host {
namespace {

namespace fs = std::filesystem;

// The engine's enums and the ABI's must agree value for value: the host
// casts between them (PerMath indexes by math type, tiers and op classes are
// cast directly).
static_assert(engine::kMathTypeCount == RIDGELINE_MATH_TYPE_COUNT);
static_assert(engine::kMathTypeCount <= RIDGELINE_MATH_SLOTS);
static_assert(static_cast<int>(engine::MathType::kFp64) == RIDGELINE_MATH_FP64);
static_assert(static_cast<int>(engine::MathType::kFp32) == RIDGELINE_MATH_FP32);
static_assert(static_cast<int>(engine::MathType::kTf32) == RIDGELINE_MATH_TF32);
static_assert(static_cast<int>(engine::MathType::kBf16) == RIDGELINE_MATH_BF16);
static_assert(static_cast<int>(engine::MathType::kFp16) == RIDGELINE_MATH_FP16);
static_assert(static_cast<int>(engine::MathType::kFp8) == RIDGELINE_MATH_FP8);
static_assert(static_cast<int>(engine::MathType::kFp4) == RIDGELINE_MATH_FP4);
static_assert(static_cast<int>(engine::MathType::kInt8) == RIDGELINE_MATH_INT8);
static_assert(static_cast<int>(engine::MathType::kInt4) == RIDGELINE_MATH_INT4);
static_assert(static_cast<int>(engine::MathType::kFp16Acc16) ==
              RIDGELINE_MATH_FP16_ACC16);
static_assert(engine::kTierKindCount == RIDGELINE_TIER_KIND_COUNT);
static_assert(static_cast<int>(engine::TierKind::kSram) == RIDGELINE_TIER_SRAM);
static_assert(static_cast<int>(engine::TierKind::kHbm) == RIDGELINE_TIER_HBM);
static_assert(static_cast<int>(engine::TierKind::kGddr) == RIDGELINE_TIER_GDDR);
static_assert(static_cast<int>(engine::TierKind::kLpddr) ==
              RIDGELINE_TIER_LPDDR);
static_assert(static_cast<int>(engine::TierKind::kDdr) == RIDGELINE_TIER_DDR);
static_assert(static_cast<int>(engine::TierKind::kUnified) ==
              RIDGELINE_TIER_UNIFIED);
static_assert(static_cast<int>(engine::TierKind::kHostLink) ==
              RIDGELINE_TIER_HOST_LINK);
static_assert(static_cast<int>(engine::TierKind::kFlash) ==
              RIDGELINE_TIER_FLASH);
static_assert(engine::kOpClassCount == RIDGELINE_OP_CLASS_COUNT);
static_assert(static_cast<int>(engine::OpClass::kGemm) == RIDGELINE_OP_GEMM);
static_assert(static_cast<int>(engine::OpClass::kGemv) == RIDGELINE_OP_GEMV);
static_assert(static_cast<int>(engine::OpClass::kAttention) ==
              RIDGELINE_OP_ATTENTION);
static_assert(static_cast<int>(engine::OpClass::kElementwise) ==
              RIDGELINE_OP_ELEMENTWISE);
static_assert(engine::kMaxTiers == RIDGELINE_MAX_TIERS);

// Released versions' sizes never change (x86-64 / aarch64 LP64 layout):
// a change here would refuse plugins built against that version.
static_assert(sizeof(void*) != 8 || RIDGELINE_PLATFORM_SIZE_1_0 == 360);
static_assert(sizeof(void*) != 8 || RIDGELINE_PLUGIN_TABLE_SIZE_1_0 == 88);
static_assert(sizeof(void*) != 8 || RIDGELINE_PLATFORM_SIZE_1_2 == 388);
static_assert(sizeof(void*) != 8 || RIDGELINE_MEMORY_TIER_SIZE_1_0 == 72);
static_assert(sizeof(void*) != 8 ||
              RIDGELINE_NEAR_MEMORY_COMPUTE_SIZE_1_0 == 152);

// Process-wide cache of opened plugins, keyed by canonical path. Loading
// twice would run init() twice; unloading would leave dangling pointers in
// every engine::Hardware built from the plugin. Both maps and the library
// objects are leaked on purpose so nothing is ever unloaded.
struct OpenCache {
  std::mutex mu;
  std::map<std::string, absl::StatusOr<const RidgelinePluginTable*>> results;
  // Every library ever opened, refused ones too (their error strings may
  // point into them); reachable for leak checkers, never destroyed.
  std::vector<std::unique_ptr<boost::dll::shared_library>> libraries;
};
OpenCache& Cache() {
  static auto* cache = new OpenCache;
  return *cache;
}

std::string Str(const char* s) { return s == nullptr ? std::string() : s; }

std::string VersionString(uint32_t major, uint32_t minor) {
  return absl::StrCat(major, ".", minor);
}

// Called with Cache().mu held.
absl::StatusOr<const RidgelinePluginTable*> OpenUncached(
    const fs::path& path) {
  // Kept for the process lifetime: plugins are never unloaded (see OpenCache).
  auto* lib = Cache()
                  .libraries.emplace_back(
                      std::make_unique<boost::dll::shared_library>())
                  .get();
  boost::dll::fs::error_code ec;
  lib->load(path,
            boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local,
            ec);
  if (ec || !lib->is_loaded()) {
    // Boost.DLL reports a generic code; dlerror() still holds the cause.
    const char* why = ::dlerror();
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot load shared library: ", why != nullptr ? why : ec.message()));
  }
  if (!lib->has(RIDGELINE_PLUGIN_ENTRY_SYMBOL)) {
    return absl::FailedPreconditionError(
        absl::StrCat("missing entry symbol '", RIDGELINE_PLUGIN_ENTRY_SYMBOL,
                     "' (is it exported with RIDGELINE_PLUGIN_EXPORT?)"));
  }
  auto& entry = lib->get<const RidgelinePluginTable*()>(
      RIDGELINE_PLUGIN_ENTRY_SYMBOL);
  const RidgelinePluginTable* table = nullptr;
  try {
    table = entry();
  } catch (...) {
    return absl::FailedPreconditionError(
        "entry point threw an exception across the C ABI");
  }
  if (table == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(RIDGELINE_PLUGIN_ENTRY_SYMBOL, "() returned NULL"));
  }
  // Version fields come first so they can be read before trusting the rest.
  if (table->abi_major != RIDGELINE_PLUGIN_ABI_MAJOR) {
    return absl::FailedPreconditionError(absl::StrCat(
        "ABI major version mismatch: plugin speaks ",
        VersionString(table->abi_major, table->abi_minor), ", host speaks ",
        VersionString(RIDGELINE_PLUGIN_ABI_MAJOR, RIDGELINE_PLUGIN_ABI_MINOR),
        " (major must be equal)"));
  }
  if (table->abi_minor > RIDGELINE_PLUGIN_ABI_MINOR) {
    return absl::FailedPreconditionError(absl::StrCat(
        "plugin ABI ", VersionString(table->abi_major, table->abi_minor),
        " is newer than host ABI ",
        VersionString(RIDGELINE_PLUGIN_ABI_MAJOR, RIDGELINE_PLUGIN_ABI_MINOR),
        " (plugin minor must be <= ", RIDGELINE_PLUGIN_ABI_MINOR,
        "); rebuild it against this host's header or upgrade the host"));
  }
  if (table->struct_size < RIDGELINE_PLUGIN_TABLE_SIZE_1_0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "table.struct_size must be >= ", RIDGELINE_PLUGIN_TABLE_SIZE_1_0,
        " for ABI 1.0, got ", table->struct_size));
  }
  if (table->family == nullptr || table->family[0] == '\0') {
    return absl::FailedPreconditionError("table.family is NULL or empty");
  }
  if (table->plugin_version == nullptr || table->plugin_version[0] == '\0') {
    return absl::FailedPreconditionError(
        "table.plugin_version is NULL or empty");
  }
  const std::pair<const char*, bool> required[] = {
      {"init", table->init != nullptr},
      {"platform_count", table->platform_count != nullptr},
      {"get_platform", table->get_platform != nullptr},
      {"error_code", table->error_code != nullptr},
      {"error_message", table->error_message != nullptr},
      {"error_free", table->error_free != nullptr},
  };
  for (const auto& [name, present] : required) {
    if (!present) {
      return absl::FailedPreconditionError(
          absl::StrCat("table.", name, " is NULL (required)"));
    }
  }
  RidgelinePluginError* error = nullptr;
  try {
    error = table->init();
  } catch (...) {
    return absl::FailedPreconditionError(
        "init() threw an exception across the C ABI");
  }
  if (error != nullptr) {
    const int32_t code = table->error_code(error);
    const std::string message = Str(table->error_message(error));
    table->error_free(error);
    return absl::FailedPreconditionError(absl::StrCat(
        "init() failed: ",
        absl::StatusCodeToString(static_cast<absl::StatusCode>(code)), ": ",
        message));
  }
  return table;
}

// Math types each ABI minor defines: slots beyond them are reserved.
int DefinedMathTypes(uint32_t abi_minor) {
  return abi_minor == 0 ? 9 : RIDGELINE_MATH_TYPE_COUNT;
}

absl::Status CheckNumberSlots(const double* values, const std::string& field,
                              uint32_t abi_minor) {
  for (int i = DefinedMathTypes(abi_minor); i < RIDGELINE_MATH_SLOTS; ++i) {
    if (values[i] != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, "[", i, "] is reserved in ABI 1.", abi_minor,
          " and must be 0, got ", values[i]));
    }
  }
  return absl::OkStatus();
}

// 0 means "unknown" in the ABI; anything else (even invalid) is passed on
// so engine::ValidateHardware can name it.
std::optional<double> Optional(double v) {
  if (v == 0) return std::nullopt;
  return v;
}

engine::PerMathType PerMath(const double* values) {
  engine::PerMathType out;
  for (int i = 0; i < engine::kMathTypeCount; ++i) out[i] = Optional(values[i]);
  return out;
}

absl::StatusOr<std::optional<engine::OpEfficiency>> CallHook(
    const RidgelinePluginTable* table, size_t platform_index,
    const engine::OpShape& shape) {
  if (table->efficiency == nullptr) {
    return absl::UnimplementedError("plugin has no efficiency hook");
  }
  RidgelineOpShape c_shape{};
  c_shape.struct_size = sizeof(c_shape);
  c_shape.op_class = static_cast<int32_t>(shape.op_class);
  c_shape.math = static_cast<int32_t>(shape.math);
  c_shape.tokens = shape.tokens;
  c_shape.flops = shape.flops;
  c_shape.bytes = shape.bytes;
  RidgelineOpEfficiency out{};
  out.struct_size = sizeof(out);
  RidgelinePluginError* error = table->efficiency(platform_index, &c_shape, &out);
  if (error != nullptr) {
    const auto code = static_cast<absl::StatusCode>(table->error_code(error));
    std::string message = Str(table->error_message(error));
    table->error_free(error);
    return absl::Status(code, message);
  }
  if (out.compute == 0 && out.memory == 0) return std::nullopt;
  if (!(out.compute > 0 && out.compute <= 1 && out.memory > 0 &&
        out.memory <= 1)) {
    return absl::InternalError(absl::StrCat(
        "efficiency hook returned compute=", out.compute,
        " memory=", out.memory, "; each must be in (0, 1] (or both 0)"));
  }
  return engine::OpEfficiency{out.compute, out.memory};
}

}  // namespace

absl::StatusOr<PluginLibrary> PluginLibrary::Open(const fs::path& path) {
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(path, ec);
  if (ec) canonical = fs::absolute(path);
  OpenCache& cache = Cache();
  std::lock_guard<std::mutex> lock(cache.mu);
  auto it = cache.results.find(canonical.string());
  if (it == cache.results.end()) {
    it = cache.results.emplace(canonical.string(), OpenUncached(canonical))
             .first;
  }
  if (!it->second.ok()) return it->second.status();
  return PluginLibrary(canonical, *it->second);
}

std::string PluginLibrary::family() const { return Str(table_->family); }
std::string PluginLibrary::plugin_version() const {
  return Str(table_->plugin_version);
}

absl::Status PluginLibrary::ConsumeError(RidgelinePluginError* error) const {
  if (error == nullptr) return absl::OkStatus();
  const auto code = static_cast<absl::StatusCode>(table_->error_code(error));
  std::string message = Str(table_->error_message(error));
  table_->error_free(error);
  // A plugin reporting "OK" inside an error object is itself a fault.
  if (code == absl::StatusCode::kOk) {
    return absl::InternalError(
        absl::StrCat("plugin returned an error object with code 0: ", message));
  }
  return absl::Status(code, message);
}

absl::StatusOr<const RidgelinePlatform*> PluginLibrary::RawPlatform(
    size_t index) const {
  const std::string at = absl::StrCat("platforms[", index, "]");
  const RidgelinePlatform* p = nullptr;
  absl::Status status = ConsumeError(table_->get_platform(index, &p));
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat("get_platform(", index,
                                                    "): ", status.message()));
  }
  if (p == nullptr) {
    return absl::InternalError(absl::StrCat(
        "get_platform(", index, ") returned OK but no descriptor"));
  }
  if (p->struct_size < RIDGELINE_PLATFORM_SIZE_1_0) {
    return absl::InvalidArgumentError(
        absl::StrCat(at, ".struct_size must be >= ", RIDGELINE_PLATFORM_SIZE_1_0,
                     " for ABI 1.0, got ", p->struct_size));
  }
  const std::pair<const char*, const char*> strings[] = {
      {"id", p->id},
      {"display_name", p->display_name},
      {"vendor", p->vendor},
      {"sources", p->sources}};
  for (const auto& [name, value] : strings) {
    if (value == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(at, ".", name, " is NULL (a string is required)"));
    }
  }
  if (absl::Status s = CheckNumberSlots(
          p->peak_ops_per_second, absl::StrCat(at, ".peak_ops_per_second"),
          table_->abi_minor);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckNumberSlots(
          p->energy_joules_per_op, absl::StrCat(at, ".energy_joules_per_op"),
          table_->abi_minor);
      !s.ok()) {
    return s;
  }
  if (p->tier_count < 1 || p->tier_count > RIDGELINE_MAX_TIERS) {
    return absl::InvalidArgumentError(
        absl::StrCat(at, ".tier_count must be in [1, ", RIDGELINE_MAX_TIERS,
                     "], got ", p->tier_count));
  }
  if (p->tiers == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        at, ".tiers is NULL but tier_count is ", p->tier_count));
  }
  const uint32_t stride = p->tiers[0].struct_size;
  if (stride < RIDGELINE_MEMORY_TIER_SIZE_1_0) {
    return absl::InvalidArgumentError(absl::StrCat(
        at, ".tiers[0].struct_size must be >= ", RIDGELINE_MEMORY_TIER_SIZE_1_0,
        " for ABI 1.0, got ", stride));
  }
  for (uint32_t t = 0; t < p->tier_count; ++t) {
    const auto* tier = reinterpret_cast<const RidgelineMemoryTier*>(
        reinterpret_cast<const char*>(p->tiers) + size_t{t} * stride);
    const std::string tat = absl::StrCat(at, ".tiers[", t, "]");
    if (tier->struct_size != stride) {
      return absl::InvalidArgumentError(
          absl::StrCat(tat, ".struct_size must equal tiers[0].struct_size (",
                       stride, "), got ", tier->struct_size));
    }
    if (tier->name == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(tat, ".name is NULL (a string is required)"));
    }
    if (tier->kind < 0 || tier->kind >= RIDGELINE_TIER_KIND_COUNT) {
      return absl::InvalidArgumentError(
          absl::StrCat(tat, ".kind must be in [0, ", RIDGELINE_TIER_KIND_COUNT - 1,
                       "] (RidgelineTierKind), got ", tier->kind));
    }
    if (const auto* nmc = tier->near_memory_compute; nmc != nullptr) {
      if (nmc->struct_size < RIDGELINE_NEAR_MEMORY_COMPUTE_SIZE_1_0) {
        return absl::InvalidArgumentError(absl::StrCat(
            tat, ".near_memory_compute.struct_size must be >= ",
            RIDGELINE_NEAR_MEMORY_COMPUTE_SIZE_1_0, " for ABI 1.0, got ",
            nmc->struct_size));
      }
      if (absl::Status s = CheckNumberSlots(
              nmc->peak_ops_per_second,
              absl::StrCat(tat, ".near_memory_compute.peak_ops_per_second"),
              table_->abi_minor);
          !s.ok()) {
        return s;
      }
    }
  }
  return p;
}

absl::StatusOr<engine::Hardware> PluginLibrary::Platform(size_t index) const {
  absl::StatusOr<const RidgelinePlatform*> raw = RawPlatform(index);
  if (!raw.ok()) return raw.status();
  const RidgelinePlatform& p = **raw;
  engine::Hardware hw;
  hw.id = p.id;
  hw.display_name = p.display_name;
  hw.vendor = p.vendor;
  hw.family = family();
  hw.plugin = path_.filename().string();
  // One citation per line; blank lines and surrounding spaces dropped.
  std::string_view sources = p.sources;
  while (!sources.empty()) {
    size_t end = sources.find('\n');
    std::string_view line = sources.substr(0, end);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t' ||
                             line.front() == '\r'))
      line.remove_prefix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' ||
                             line.back() == '\r'))
      line.remove_suffix(1);
    if (!line.empty()) hw.sources.emplace_back(line);
    if (end == std::string_view::npos) break;
    sources.remove_prefix(end + 1);
  }
  hw.peak_ops_per_second = PerMath(p.peak_ops_per_second);
  hw.energy_joules_per_op = PerMath(p.energy_joules_per_op);
  hw.kernel_launch_seconds = p.kernel_launch_seconds;
  const uint32_t stride = p.tiers[0].struct_size;
  for (uint32_t t = 0; t < p.tier_count; ++t) {
    const auto& tier = *reinterpret_cast<const RidgelineMemoryTier*>(
        reinterpret_cast<const char*>(p.tiers) + size_t{t} * stride);
    engine::MemoryTier out;
    out.name = tier.name;
    out.kind = static_cast<engine::TierKind>(tier.kind);
    out.capacity_bytes = tier.capacity_bytes;
    out.read_bandwidth_bytes_per_second = tier.read_bandwidth_bytes_per_second;
    // ABI: 0 = only one figure published, which then holds both ways.
    out.write_bandwidth_bytes_per_second =
        tier.write_bandwidth_bytes_per_second == 0
            ? tier.read_bandwidth_bytes_per_second
            : tier.write_bandwidth_bytes_per_second;
    out.latency_seconds = tier.latency_seconds;
    out.energy_joules_per_byte = Optional(tier.energy_joules_per_byte);
    if (tier.near_memory_compute != nullptr) {
      const RidgelineNearMemoryCompute& nmc = *tier.near_memory_compute;
      engine::NearMemoryCompute c;
      c.internal_bandwidth_bytes_per_second =
          nmc.internal_bandwidth_bytes_per_second;
      c.peak_ops_per_second = PerMath(nmc.peak_ops_per_second);
      c.energy_joules_per_op = Optional(nmc.energy_joules_per_op);
      out.near_memory_compute = std::move(c);
    }
    hw.tiers.push_back(std::move(out));
  }
  hw.tdp_watts = Optional(p.tdp_watts);
  hw.idle_watts = Optional(p.idle_watts);
  hw.price_usd = Optional(p.price_usd);
  hw.embodied_kg_co2e = Optional(p.embodied_kg_co2e);
  hw.interconnect_bytes_per_second = Optional(p.interconnect_bytes_per_second);
  // 1.2 link fields exist only when the plugin's struct reaches them; an
  // older plugin's are unknown.
  if (p.struct_size >= RIDGELINE_PLATFORM_SIZE_1_2) {
    hw.scale_up_latency_seconds = Optional(p.scale_up_latency_seconds);
    hw.scale_out_bytes_per_second = Optional(p.scale_out_bytes_per_second);
    hw.scale_out_latency_seconds = Optional(p.scale_out_latency_seconds);
    if (p.devices_per_node != 0) hw.devices_per_node = p.devices_per_node;
  }
  if (table_->efficiency != nullptr) {
    const RidgelinePluginTable* table = table_;
    // A failing hook call falls back to the engine's defaults: the engine
    // only asks for math types the platform executes, so an error here is a
    // plugin fault the conformance checker reports, not a user error.
    hw.efficiency_hook = [table, index](const engine::OpShape& shape)
        -> std::optional<engine::OpEfficiency> {
      absl::StatusOr<std::optional<engine::OpEfficiency>> r =
          CallHook(table, index, shape);
      if (!r.ok()) return std::nullopt;
      return *r;
    };
  }
  return hw;
}

absl::StatusOr<std::optional<engine::OpEfficiency>>
PluginLibrary::CallEfficiency(size_t platform_index,
                              const engine::OpShape& shape) const {
  return CallHook(table_, platform_index, shape);
}

}  // namespace ridgeline::plugin_host
