// One loaded plugin shared library: the raw C table behind the registry.
// HardwareRegistry builds on it; ridgeline-plugin-check uses it directly to
// probe the ABI (determinism, concurrency, hook errors).
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ridgeline/engine/hardware.h"
#include "ridgeline/plugin/ridgeline_plugin.h"

namespace ridgeline::plugin_host {

// A plugin whose table passed the ABI checks and whose init() succeeded.
// Cheap to copy: it only points at the table, which lives in the plugin and
// stays valid for the process lifetime (libraries are never unloaded).
// Thread-safe for concurrent use after Open() returns.
// Told each time an efficiency hook's answer is not used at analysis time
// (the engine's defaults are used instead): `plugin` is the plugin's file
// name, `kind` "error" (the hook returned an error), "not_finite" (NaN or
// infinity) or "out_of_range" (outside [1e-3, 1]). Called from analysis
// threads, so it must be thread-safe. Each fault is also logged to stderr
// (the first 10 per plugin).
using HookFaultObserver =
    std::function<void(const std::string& plugin, const char* kind)>;
// Replaces the process-wide observer (empty: none).
void SetHookFaultObserver(HookFaultObserver observer);
// Logs and counts one fault of `plugin`'s hook as above; `s` is the hook's
// error. Used by the in-process hook and by hosted plugins (hosted_plugin.h).
void ReportHookFault(const std::string& plugin, const absl::Status& s);
// As above with the kind given ("host_failed": the plugin's host process
// is dead, see hosted_plugin.h).
void ReportHookFault(const std::string& plugin, const char* kind,
                     absl::string_view message);

// A hook's answer checked as the host requires: both 0 is "no opinion"
// (nullopt); otherwise each must be finite (INTERNAL "...finite...") and in
// [1e-3, 1] (OUT_OF_RANGE).
absl::StatusOr<std::optional<engine::OpEfficiency>> CheckHookAnswer(
    double compute, double memory);

// A plugin string checked as the host requires: at most `max` bytes and
// valid UTF-8 (INVALID_ARGUMENT naming `field` and the first bad byte).
absl::Status CheckPluginString(const std::string& field, absl::string_view s,
                               size_t max);

// What one plugin file contributes, however it was read: in this process
// (ReadPluginInProcess) or in a plugin-host child (hosted_plugin.h).
struct PluginContents {
  std::string family;  // set as soon as known, even when reading fails
  std::string plugin_version;
  // In get_platform order, converted but not yet passed through
  // engine::ValidateHardware (the registry does that).
  std::vector<engine::Hardware> platforms;
  // OK while the platforms can be used; UNAVAILABLE naming the plugin once
  // it failed for good (its host died). Empty: always OK. Thread-safe.
  std::function<absl::Status()> health;
};

// Opens `path` in this process (PluginLibrary::Open) and reads its
// platforms: platform_count() must be in [1, 4096]; a descriptor that fails
// the structural checks fails the whole plugin.
absl::Status ReadPluginInProcess(const std::filesystem::path& path,
                                 PluginContents* out);

class PluginLibrary {
 public:
  // Loads `path` (RTLD_NOW | RTLD_LOCAL) once per process: later calls with
  // the same file return the first result without calling init() again.
  // Errors are FAILED_PRECONDITION carrying the reason (an init error's own
  // code and message are quoted in it): cannot load, missing entry symbol, entry
  // returned NULL, ABI major/minor mismatch, table too small, NULL required
  // function, init error.
  static absl::StatusOr<PluginLibrary> Open(const std::filesystem::path& path);

  const RidgelinePluginTable& table() const { return *table_; }
  const std::filesystem::path& path() const { return path_; }
  std::string family() const;
  std::string plugin_version() const;
  size_t platform_count() const { return table_->platform_count(); }

  // Raw descriptor `index` from get_platform, after structural checks
  // (struct sizes, NULL strings, tier count and kinds, reserved slots).
  absl::StatusOr<const RidgelinePlatform*> RawPlatform(size_t index) const;

  // Descriptor `index` converted to engine::Hardware (0 -> nullopt for
  // optional numbers; write bandwidth 0 -> read bandwidth), with the
  // efficiency hook wrapped when the plugin has one. Not yet passed through
  // engine::ValidateHardware.
  absl::StatusOr<engine::Hardware> Platform(size_t index) const;

  // Calls the plugin's efficiency hook; the plugin's error becomes the
  // status (code and message kept). nullopt: "no opinion" (both fields 0).
  // UNIMPLEMENTED when the plugin has no hook.
  absl::StatusOr<std::optional<engine::OpEfficiency>> CallEfficiency(
      size_t platform_index, const engine::OpShape& shape) const;

  // Converts a plugin error to a status and frees it. `error` may be NULL.
  absl::Status ConsumeError(RidgelinePluginError* error) const;

 private:
  PluginLibrary(std::filesystem::path path, const RidgelinePluginTable* table)
      : path_(std::move(path)), table_(table) {}

  std::filesystem::path path_;
  const RidgelinePluginTable* table_;  // plugin-owned, process lifetime
};

}  // namespace ridgeline::plugin_host
