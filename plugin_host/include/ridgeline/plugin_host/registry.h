// Loads hardware plugins (shared libraries speaking the C ABI in
// include/ridgeline/plugin/) with Boost.DLL and turns their descriptors into
// engine::Hardware. Plugins are loaded once and never unloaded.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ridgeline/engine/hardware.h"
#include "ridgeline/plugin_host/plugin_library.h"

namespace ridgeline::plugin_host {

// What happened to one plugin file.
struct LoadOutcome {
  std::string path;
  std::string family;   // from the plugin table; "" if it never got that far
  std::string plugin_version;
  bool loaded = false;
  std::string reason;   // why it was refused; "" when loaded
  int platforms = 0;    // platforms it contributed
};

// Which load outcomes the registry writes to stderr, one line each
// ("ridgeline plugin: loaded ..." / "ridgeline plugin: refused ...").
// Outcomes are always recorded in outcomes() whatever is printed.
enum class LoadLog {
  kAll,           // every outcome: what a long-running server should log
  kRefusalsOnly,  // refusals only: command-line tools, where success is noise
  kNone,          // nothing: callers that report outcomes() themselves
};

// Immutable after construction; thread-safe for concurrent reads.
class HardwareRegistry {
 public:
  // Tries every regular file ending in ".so" in `dir` (sorted by name, not
  // recursive). A refused plugin is recorded in outcomes() and the others
  // still load; a platform id already taken by an earlier plugin refuses the
  // later plugin. A missing directory yields an empty registry with one
  // refused outcome naming the directory. Folders writable by group or
  // others, files writable by them, symbolic links to files outside `dir`
  // and entries whose status cannot be read (dangling or looping symbolic
  // links) are refused before loading, each with a reason; the rest load.
  // `log` chooses what is printed to stderr (default: every outcome).
  static std::shared_ptr<const HardwareRegistry> LoadDirectory(
      const std::filesystem::path& dir, LoadLog log = LoadLog::kAll);
  // Reads one plugin file into `out` (PluginContents, plugin_library.h);
  // an error refuses the plugin with the status message as the reason
  // (out->family may already be set). A long-running server passes
  // ReadPluginHosted (hosted_plugin.h): no plugin code runs in the server.
  using PluginReader = std::function<absl::Status(
      const std::filesystem::path&, PluginContents* out)>;
  // As above, reading each file with `reader` (empty: in this process, one
  // after the other); a non-empty reader is called for all files side by
  // side, from threads of its own.
  static std::shared_ptr<const HardwareRegistry> LoadDirectory(
      const std::filesystem::path& dir, LoadLog log,
      const PluginReader& reader);
  // Every folder in turn, as LoadDirectory does each: a platform id an
  // earlier folder's plugin already provides refuses the later plugin (so
  // the first folder wins), and a missing folder is a refused outcome.
  // For --plugin-dir plus --extra-plugin-dir.
  static std::shared_ptr<const HardwareRegistry> LoadDirectories(
      const std::vector<std::filesystem::path>& dirs, LoadLog log,
      const PluginReader& reader = nullptr);
  // Loads exactly these files, in order (conformance checker, tests).
  static std::shared_ptr<const HardwareRegistry> LoadFiles(
      const std::vector<std::filesystem::path>& files,
      LoadLog log = LoadLog::kAll);

  const std::vector<LoadOutcome>& outcomes() const { return outcomes_; }
  // Sorted by id.
  const std::vector<engine::Hardware>& platforms() const { return platforms_; }
  // NOT_FOUND naming the closest ids; the plugin's health status (e.g.
  // UNAVAILABLE naming the plugin whose host died) when it is not OK.
  absl::StatusOr<const engine::Hardware*> Find(std::string_view id) const;

 private:
  std::vector<LoadOutcome> outcomes_;
  std::vector<engine::Hardware> platforms_;
  // Plugin file name -> its health (PluginContents::health), for plugins
  // that have one.
  std::map<std::string, std::function<absl::Status()>> health_;
  friend class RegistryBuilder;
};

// The folder a binary finds plugins in when no flag or environment variable
// says otherwise: <prefix>/lib/ridgeline/plugins next to the running
// executable's <prefix>/bin (so an installed tree can be moved or installed
// with --prefix), else the build tree's folder for uninstalled binaries,
// else the configured install prefix's folder.
std::filesystem::path DefaultPluginDir();

// `relative` (e.g. "share/ridgeline/profiles") under the prefix of the running
// executable, i.e. <dir of /proc/self/exe>/../relative; empty if the
// executable's path cannot be read.
std::filesystem::path InstallPrefixPath(const std::filesystem::path& relative);

}  // namespace ridgeline::plugin_host
