#include "ridgeline/plugin_host/plugin_library.h"

#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <tuple>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ridgeline/engine/status_macros.h"

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
static_assert(sizeof(void*) != 8 || RIDGELINE_PLATFORM_SIZE_1_3 == 400);
static_assert(sizeof(void*) != 8 || RIDGELINE_MEMORY_TIER_SIZE_1_0 == 72);
static_assert(sizeof(void*) != 8 || RIDGELINE_MEMORY_TIER_SIZE_1_4 == 80);
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

// Bounds on what a plugin may claim. A descriptor is a few hundred bytes;
// 4 KiB leaves room for many appended fields while refusing garbage (a
// struct_size of 0xFFFFFFF0 used as an array stride reads far out of bounds).
constexpr uint32_t kMaxStructSize = 4096;
constexpr size_t kMaxNameBytes = 256;       // ids, names, family, version
constexpr size_t kMaxSourcesBytes = 65536;  // citations, one per line

absl::Status CheckStructSize(const std::string& field, uint32_t size,
                             size_t min) {
  if (size >= min && size <= kMaxStructSize) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, " must be in [", min, ", ", kMaxStructSize,
                   "] (the ABI 1.0 size up to the host's bound), got ", size));
}

// The index of the first byte that breaks UTF-8, or npos. Strings reach
// clients in proto string fields, which must be valid UTF-8: one bad name
// would otherwise fail every ListHardware.
size_t FirstInvalidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3
                        : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return i;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return i;
    }
    // Overlong forms, surrogates and code points past U+10FFFF.
    const auto c1 = static_cast<unsigned char>(n > 1 ? s[i + 1] : 0);
    if ((n == 2 && c < 0xC2) || (n == 3 && c == 0xE0 && c1 < 0xA0) ||
        (n == 3 && c == 0xED && c1 >= 0xA0) ||
        (n == 4 && c == 0xF0 && c1 < 0x90) || (n == 4 && c > 0xF4) ||
        (n == 4 && c == 0xF4 && c1 >= 0x90)) {
      return i;
    }
    i += n;
  }
  return std::string_view::npos;
}

// A plugin string: present, NUL-terminated within `max` bytes, UTF-8.
absl::Status CheckString(const std::string& field, const char* s, size_t max,
                         bool required) {
  if (s == nullptr) {
    if (!required) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat(field, " is NULL (a string is required)"));
  }
  const size_t len = ::strnlen(s, max + 1);
  return CheckPluginString(field, absl::string_view(s, len), max);
}

// A plugin error code: absl's numbering, 1..16. Code 0 inside an error
// object, or an unknown number, is itself a plugin fault (INTERNAL): an OK
// status must never stand for an error (StatusOr built from OK aborts).
absl::Status PluginStatus(int32_t code, absl::string_view message) {
  if (code <= 0 || code > RIDGELINE_CODE_UNAUTHENTICATED) {
    return absl::InternalError(absl::StrCat(
        "plugin returned an error object with code ", code,
        code == 0 ? " (OK)" : " (not a status code)", ": ",
        message.substr(0, 256)));
  }
  return absl::Status(static_cast<absl::StatusCode>(code),
                      message.substr(0, 1024));
}

// Efficiencies below this are refused (see CallHook).
constexpr double kMinHookEfficiency = 1e-3;
constexpr uint64_t kLoggedFaultsPerPlugin = 10;

struct HookFaults {
  std::mutex mu;
  std::map<std::string, uint64_t> count;  // by plugin file name
  HookFaultObserver observer;
};

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
  if (absl::Status s = CheckStructSize("table.struct_size", table->struct_size,
                                       RIDGELINE_PLUGIN_TABLE_SIZE_1_0);
      !s.ok()) {
    return absl::FailedPreconditionError(s.message());
  }
  if (table->family == nullptr || table->family[0] == '\0') {
    return absl::FailedPreconditionError("table.family is NULL or empty");
  }
  if (table->plugin_version == nullptr || table->plugin_version[0] == '\0') {
    return absl::FailedPreconditionError(
        "table.plugin_version is NULL or empty");
  }
  for (const auto& [name, value] :
       {std::pair<const char*, const char*>{"table.family", table->family},
        {"table.plugin_version", table->plugin_version}}) {
    if (absl::Status s = CheckString(name, value, kMaxNameBytes, true);
        !s.ok()) {
      return absl::FailedPreconditionError(s.message());
    }
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
    const absl::Status cause = PluginStatus(code, message);
    return absl::FailedPreconditionError(
        absl::StrCat("init() failed: ", absl::StatusCodeToString(cause.code()),
                     ": ", cause.message()));
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

HookFaults& Faults() {
  static auto* faults = new HookFaults;
  return *faults;
}

// "error", "not_finite" or "out_of_range": the metric label.
const char* FaultKind(const absl::Status& s) {
  if (absl::IsOutOfRange(s)) return "out_of_range";
  if (absl::IsInternal(s) &&
      absl::string_view(s.message()).find("finite") != absl::string_view::npos) {
    return "not_finite";
  }
  return "error";
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
    const int32_t code = table->error_code(error);
    std::string message = Str(table->error_message(error));
    table->error_free(error);
    return PluginStatus(code, message);
  }
  return CheckHookAnswer(out.compute, out.memory);
}

}  // namespace

absl::Status CheckPluginString(const std::string& field, absl::string_view s,
                               size_t max) {
  if (s.size() > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " must be at most ", max, " bytes long"));
  }
  if (const size_t bad = FirstInvalidUtf8(std::string_view(s.data(), s.size())); bad != std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, " must be valid UTF-8; byte ", bad, " (0x",
        absl::Hex(static_cast<unsigned char>(s[bad])), ") is not"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<engine::OpEfficiency>> CheckHookAnswer(
    double compute, double memory) {
  if (compute == 0 && memory == 0) return std::nullopt;
  if (!std::isfinite(compute) || !std::isfinite(memory)) {
    return absl::InternalError(absl::StrCat(
        "efficiency hook returned compute=", compute, " memory=", memory,
        "; each must be a finite number in [", kMinHookEfficiency,
        ", 1] (or both 0)"));
  }
  // A tiny efficiency is no opinion but a fault: 1e-300 would turn a
  // microsecond kernel into 1e294 s.
  if (!(compute >= kMinHookEfficiency && compute <= 1 &&
        memory >= kMinHookEfficiency && memory <= 1)) {
    return absl::OutOfRangeError(absl::StrCat(
        "efficiency hook returned compute=", compute, " memory=", memory,
        "; each must be in [", kMinHookEfficiency, ", 1] (or both 0)"));
  }
  return engine::OpEfficiency{compute, memory};
}

void ReportHookFault(const std::string& plugin, const absl::Status& s) {
  ReportHookFault(plugin, FaultKind(s), s.message());
}

// The hook's answer was not used: log (the first few per plugin, so a
// plugin failing every call cannot flood the log) and tell the observer.
void ReportHookFault(const std::string& plugin, const char* kind,
                     absl::string_view message) {
  HookFaults& f = Faults();
  HookFaultObserver observer;
  bool log = false;
  uint64_t n = 0;
  {
    std::lock_guard<std::mutex> lock(f.mu);
    n = ++f.count[plugin];
    log = n <= kLoggedFaultsPerPlugin;
    observer = f.observer;
  }
  if (log) {
    std::fprintf(stderr,
                 "ridgeline plugin: efficiency hook of %s ignored (%s, engine "
                 "defaults used): %s%s\n",
                 plugin.c_str(), kind, std::string(message).c_str(),
                 n == kLoggedFaultsPerPlugin
                     ? " [further faults of this plugin are only counted]"
                     : "");
  }
  if (observer) observer(plugin, kind);
}

absl::Status ReadPluginInProcess(const fs::path& path, PluginContents* out) {
  absl::StatusOr<PluginLibrary> lib = PluginLibrary::Open(path);
  if (!lib.ok()) return lib.status();
  out->family = lib->family();
  out->plugin_version = lib->plugin_version();
  const size_t count = lib->platform_count();
  // Bounded: the count drives a loop of get_platform calls.
  constexpr size_t kMaxPlatforms = 4096;
  if (count == 0 || count > kMaxPlatforms) {
    return absl::InvalidArgumentError(absl::StrCat(
        "platform_count() must be in [1, ", kMaxPlatforms, "], got ", count));
  }
  for (size_t i = 0; i < count; ++i) {
    absl::StatusOr<engine::Hardware> hw = lib->Platform(i);
    if (!hw.ok()) return hw.status();
    out->platforms.push_back(*std::move(hw));
  }
  return absl::OkStatus();
}

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
  const int32_t code = table_->error_code(error);
  std::string message = Str(table_->error_message(error));
  table_->error_free(error);
  return PluginStatus(code, message);
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
  RETURN_IF_ERROR(CheckStructSize(absl::StrCat(at, ".struct_size"),
                                  p->struct_size, RIDGELINE_PLATFORM_SIZE_1_0));
  const std::tuple<const char*, const char*, size_t> strings[] = {
      {"id", p->id, kMaxNameBytes},
      {"display_name", p->display_name, kMaxNameBytes},
      {"vendor", p->vendor, kMaxNameBytes},
      {"sources", p->sources, kMaxSourcesBytes}};
  for (const auto& [name, value, max] : strings) {
    RETURN_IF_ERROR(
        CheckString(absl::StrCat(at, ".", name), value, max, true));
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
  RETURN_IF_ERROR(CheckStructSize(absl::StrCat(at, ".tiers[0].struct_size"),
                                  stride, RIDGELINE_MEMORY_TIER_SIZE_1_0));
  for (uint32_t t = 0; t < p->tier_count; ++t) {
    const auto* tier = reinterpret_cast<const RidgelineMemoryTier*>(
        reinterpret_cast<const char*>(p->tiers) + size_t{t} * stride);
    const std::string tat = absl::StrCat(at, ".tiers[", t, "]");
    if (tier->struct_size != stride) {
      return absl::InvalidArgumentError(
          absl::StrCat(tat, ".struct_size must equal tiers[0].struct_size (",
                       stride, "), got ", tier->struct_size));
    }
    RETURN_IF_ERROR(
        CheckString(absl::StrCat(tat, ".name"), tier->name, kMaxNameBytes, true));
    if (tier->kind < 0 || tier->kind >= RIDGELINE_TIER_KIND_COUNT) {
      return absl::InvalidArgumentError(
          absl::StrCat(tat, ".kind must be in [0, ", RIDGELINE_TIER_KIND_COUNT - 1,
                       "] (RidgelineTierKind), got ", tier->kind));
    }
    if (const auto* nmc = tier->near_memory_compute; nmc != nullptr) {
      RETURN_IF_ERROR(CheckStructSize(
          absl::StrCat(tat, ".near_memory_compute.struct_size"),
          nmc->struct_size, RIDGELINE_NEAR_MEMORY_COMPUTE_SIZE_1_0));
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
    // 1.4: only when the plugin's tiers reach the field (a 1.0-1.3 tier
    // array is strided by its own, smaller struct_size).
    if (stride >= RIDGELINE_MEMORY_TIER_SIZE_1_4) {
      out.inline_ecc_share = tier.inline_ecc_share;
    }
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
  // 1.3: the kernel model's hardware figures, likewise.
  if (p.struct_size >= RIDGELINE_PLATFORM_SIZE_1_3) {
    if (p.compute_unit_count != 0) hw.compute_units = p.compute_unit_count;
    hw.last_level_cache_bytes = Optional(p.last_level_cache_bytes);
  }
  if (table_->efficiency != nullptr) {
    const RidgelinePluginTable* table = table_;
    // A failing hook call falls back to the engine's defaults: the engine
    // only asks for math types the platform executes, so an error here is a
    // plugin fault the conformance checker reports, not a user error. It is
    // logged and counted (SetHookFaultObserver), never silently dropped.
    hw.efficiency_hook = [table, index, plugin = hw.plugin](
                             const engine::OpShape& shape)
        -> std::optional<engine::OpEfficiency> {
      absl::StatusOr<std::optional<engine::OpEfficiency>> r =
          CallHook(table, index, shape);
      if (!r.ok()) {
        ReportHookFault(plugin, r.status());
        return std::nullopt;
      }
      return *r;
    };
  }
  return hw;
}

void SetHookFaultObserver(HookFaultObserver observer) {
  std::lock_guard<std::mutex> lock(Faults().mu);
  Faults().observer = std::move(observer);
}

absl::StatusOr<std::optional<engine::OpEfficiency>>
PluginLibrary::CallEfficiency(size_t platform_index,
                              const engine::OpShape& shape) const {
  return CallHook(table_, platform_index, shape);
}

}  // namespace ridgeline::plugin_host
