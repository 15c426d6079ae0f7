// Loads hardware plugins (shared libraries speaking the C ABI in
// include/ridgeline/plugin/) with Boost.DLL and turns their descriptors into
// engine::Hardware. Plugins are loaded once and never unloaded.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ridgeline/engine/hardware.h"

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
  // refused outcome naming the directory.
  // `log` chooses what is printed to stderr (default: every outcome).
  static std::shared_ptr<const HardwareRegistry> LoadDirectory(
      const std::filesystem::path& dir, LoadLog log = LoadLog::kAll);
  // Decides, before any of a plugin's code runs in this process, whether it
  // may be loaded: "" yes, else the reason it is refused (a long-running
  // server passes CheckPluginInChild, see isolated_check.h).
  using PreCheck = std::function<std::string(const std::filesystem::path&)>;
  // As above; `precheck` (may be empty) runs first for every file. Folders
  // writable by group or others, files writable by them, and symbolic links
  // to files outside `dir` are refused before that, with a reason.
  static std::shared_ptr<const HardwareRegistry> LoadDirectory(
      const std::filesystem::path& dir, LoadLog log, const PreCheck& precheck);
  // Every folder in turn, as LoadDirectory does each: a platform id an
  // earlier folder's plugin already provides refuses the later plugin (so
  // the first folder wins), and a missing folder is a refused outcome.
  // For --plugin-dir plus --extra-plugin-dir.
  static std::shared_ptr<const HardwareRegistry> LoadDirectories(
      const std::vector<std::filesystem::path>& dirs, LoadLog log,
      const PreCheck& precheck = nullptr);
  // Loads exactly these files, in order (conformance checker, tests).
  static std::shared_ptr<const HardwareRegistry> LoadFiles(
      const std::vector<std::filesystem::path>& files,
      LoadLog log = LoadLog::kAll);

  const std::vector<LoadOutcome>& outcomes() const { return outcomes_; }
  // Sorted by id.
  const std::vector<engine::Hardware>& platforms() const { return platforms_; }
  // NOT_FOUND naming the closest ids.
  absl::StatusOr<const engine::Hardware*> Find(std::string_view id) const;

 private:
  std::vector<LoadOutcome> outcomes_;
  std::vector<engine::Hardware> platforms_;
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
