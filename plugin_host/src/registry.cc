#include "ridgeline/plugin_host/registry.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/plugin_host/plugin_library.h"

#ifndef RIDGELINE_DEFAULT_PLUGIN_DIR
#error "RIDGELINE_DEFAULT_PLUGIN_DIR must be defined by the build"
#endif
#ifndef RIDGELINE_BUILD_PLUGIN_DIR
#error "RIDGELINE_BUILD_PLUGIN_DIR must be defined by the build"
#endif

namespace ridgeline::plugin_host {

namespace fs = std::filesystem;

// A plugin contributes nothing unless every platform it describes is valid:
// a half-loaded family would silently drop parts from sweeps.
class RegistryBuilder {
 public:
  // `refused` are outcomes decided before loading (folder or file unsafe,
  // folder missing); recorded first.
  static std::shared_ptr<const HardwareRegistry> Build(
      const std::vector<fs::path>& files, std::vector<LoadOutcome> refused,
      LoadLog log, const HardwareRegistry::PreCheck& precheck = nullptr) {
    auto registry = std::shared_ptr<HardwareRegistry>(new HardwareRegistry());
    RegistryBuilder builder(*registry, log, precheck);
    for (LoadOutcome& o : refused) builder.Record(std::move(o));
    for (const fs::path& file : files) builder.Load(file);
    std::sort(registry->platforms_.begin(), registry->platforms_.end(),
              [](const engine::Hardware& a, const engine::Hardware& b) {
                return a.id < b.id;
              });
    return registry;
  }

 private:
  RegistryBuilder(HardwareRegistry& registry, LoadLog log,
                  const HardwareRegistry::PreCheck& precheck)
      : registry_(registry), log_(log), precheck_(precheck) {}

  void Load(const fs::path& file) {
    LoadOutcome outcome;
    outcome.path = file.string();
    std::vector<engine::Hardware> platforms;
    // Logged before any plugin code runs, so a plugin that crashes or hangs
    // while loading is named by the last line of the log.
    if (log_ == LoadLog::kAll) {
      std::fprintf(stderr, "ridgeline plugin: loading path=%s\n",
                   outcome.path.c_str());
      std::fflush(stderr);
    }
    if (precheck_) {
      if (std::string why = precheck_(file); !why.empty()) {
        outcome.reason = std::move(why);
        Record(std::move(outcome));
        return;
      }
    }
    absl::Status status = LoadPlatforms(file, outcome, platforms);
    if (!status.ok()) {
      outcome.reason = std::string(status.message());
      Record(std::move(outcome));
      return;
    }
    for (engine::Hardware& hw : platforms) {
      owners_[hw.id] = file.filename().string();
      registry_.platforms_.push_back(std::move(hw));
    }
    outcome.loaded = true;
    outcome.platforms = static_cast<int>(platforms.size());
    Record(std::move(outcome));
  }

  absl::Status LoadPlatforms(const fs::path& file, LoadOutcome& outcome,
                             std::vector<engine::Hardware>& platforms) {
    absl::StatusOr<PluginLibrary> lib = PluginLibrary::Open(file);
    if (!lib.ok()) return lib.status();
    outcome.family = lib->family();
    outcome.plugin_version = lib->plugin_version();
    const size_t count = lib->platform_count();
    // Bounded: the count drives a loop of get_platform calls.
    constexpr size_t kMaxPlatforms = 4096;
    if (count == 0 || count > kMaxPlatforms) {
      return absl::InvalidArgumentError(absl::StrCat(
          "platform_count() must be in [1, ", kMaxPlatforms, "], got ", count));
    }
    std::map<std::string, size_t> seen;
    for (size_t i = 0; i < count; ++i) {
      absl::StatusOr<engine::Hardware> hw = lib->Platform(i);
      if (!hw.ok()) return hw.status();
      const std::string prefix = absl::StrCat("platforms[", i, "]");
      if (absl::Status s = engine::ValidateHardware(*hw, prefix); !s.ok()) {
        return absl::Status(s.code(), absl::StrCat("platform '", hw->id,
                                                   "': ", s.message()));
      }
      if (auto it = owners_.find(hw->id); it != owners_.end()) {
        return absl::AlreadyExistsError(absl::StrCat(
            "duplicate platform id '", hw->id, "' (", prefix,
            ".id): already provided by ", it->second));
      }
      if (auto [it, inserted] = seen.emplace(hw->id, i); !inserted) {
        return absl::AlreadyExistsError(
            absl::StrCat("duplicate platform id '", hw->id, "' in platforms[",
                         it->second, "] and ", prefix));
      }
      platforms.push_back(*std::move(hw));
    }
    return absl::OkStatus();
  }

  void Record(LoadOutcome outcome) {
    // One line per outcome, for operators reading the service log.
    if (outcome.loaded && log_ == LoadLog::kAll) {
      std::fprintf(stderr,
                   "ridgeline plugin: loaded family=%s version=%s "
                   "platforms=%d path=%s\n",
                   outcome.family.c_str(), outcome.plugin_version.c_str(),
                   outcome.platforms, outcome.path.c_str());
    } else if (!outcome.loaded && log_ != LoadLog::kNone) {
      std::fprintf(stderr, "ridgeline plugin: refused family=%s path=%s: %s\n",
                   outcome.family.empty() ? "?" : outcome.family.c_str(),
                   outcome.path.c_str(), outcome.reason.c_str());
    }
    registry_.outcomes_.push_back(std::move(outcome));
  }

  HardwareRegistry& registry_;
  const LoadLog log_;
  const HardwareRegistry::PreCheck& precheck_;
  std::map<std::string, std::string> owners_;  // platform id -> plugin file
};

namespace {

// The server runs code from its plugin folder, so anyone who can write
// there can run code as the server.
bool WritableByOthers(const fs::path& p, mode_t* mode) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return false;
  *mode = st.st_mode & 07777;
  return (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
}

std::string Octal(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "%04o", static_cast<unsigned>(mode));
  return buf;
}

// Why `file` (an entry of `dir`) must not be loaded; "" when it may.
std::string UnsafePluginFile(const fs::path& dir, const fs::path& file) {
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(file, ec))) {
    const fs::path target = fs::canonical(file, ec);
    const fs::path root = fs::canonical(dir, ec);
    const auto rel = target.lexically_relative(root);
    if (ec || rel.empty() || *rel.begin() == "..") {
      return absl::StrCat("is a symbolic link to '", target.string(),
                          "', outside the plugin folder; copy the file in "
                          "instead");
    }
  }
  mode_t mode = 0;
  if (WritableByOthers(file, &mode)) {
    return absl::StrCat("is writable by group or others (mode ", Octal(mode),
                        "); run chmod go-w on it");
  }
  return "";
}

}  // namespace

std::shared_ptr<const HardwareRegistry> HardwareRegistry::LoadDirectory(
    const fs::path& dir, LoadLog log) {
  return LoadDirectory(dir, log, nullptr);
}

std::shared_ptr<const HardwareRegistry> HardwareRegistry::LoadDirectory(
    const fs::path& dir, LoadLog log, const PreCheck& precheck) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    LoadOutcome missing;
    missing.path = dir.string();
    missing.reason = absl::StrCat("plugin directory '", dir.string(),
                                  "' does not exist or is not a directory");
    return RegistryBuilder::Build({}, {std::move(missing)}, log);
  }
  if (mode_t mode = 0; WritableByOthers(dir, &mode)) {
    LoadOutcome unsafe;
    unsafe.path = dir.string();
    unsafe.reason = absl::StrCat(
        "plugin directory '", dir.string(), "' is writable by group or others "
        "(mode ", Octal(mode), "), so anyone could make the server run their "
        "code; no plugin is loaded from it (run chmod go-w on it)");
    return RegistryBuilder::Build({}, {std::move(unsafe)}, log);
  }
  std::vector<fs::path> files;
  std::vector<LoadOutcome> unsafe_files;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec) && entry.path().extension() == ".so") {
      if (std::string why = UnsafePluginFile(dir, entry.path()); !why.empty()) {
        LoadOutcome o;
        o.path = entry.path().string();
        o.reason = absl::StrCat("refused before loading: ",
                                entry.path().filename().string(), " ", why);
        unsafe_files.push_back(std::move(o));
        continue;
      }
      files.push_back(entry.path());
    }
  }
  if (ec) {
    LoadOutcome unreadable;
    unreadable.path = dir.string();
    unreadable.reason = absl::StrCat("cannot list plugin directory '",
                                     dir.string(), "': ", ec.message());
    return RegistryBuilder::Build({}, {std::move(unreadable)}, log);
  }
  std::sort(files.begin(), files.end(),
            [](const fs::path& a, const fs::path& b) {
              return a.filename().string() < b.filename().string();
            });
  if (!precheck) {
    return RegistryBuilder::Build(files, std::move(unsafe_files), log);
  }
  // The checks run in child processes, so they run side by side: a start
  // then waits for the slowest plugin, not for their sum.
  std::vector<std::string> reasons(files.size());
  std::vector<std::thread> checks;
  checks.reserve(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    checks.emplace_back(
        [&, i] { reasons[i] = precheck(files[i]); });
  }
  for (std::thread& t : checks) t.join();
  std::map<fs::path, std::string> by_file;
  for (size_t i = 0; i < files.size(); ++i) by_file[files[i]] = reasons[i];
  const PreCheck checked = [&by_file](const fs::path& file) {
    return by_file[file];
  };
  return RegistryBuilder::Build(files, std::move(unsafe_files), log, checked);
}

std::shared_ptr<const HardwareRegistry> HardwareRegistry::LoadDirectories(
    const std::vector<fs::path>& dirs, LoadLog log, const PreCheck& precheck) {
  auto all = std::shared_ptr<HardwareRegistry>(new HardwareRegistry());
  std::map<std::string, std::string> owners;  // platform id -> plugin path
  for (const fs::path& dir : dirs) {
    const std::shared_ptr<const HardwareRegistry> one =
        LoadDirectory(dir, log, precheck);
    for (LoadOutcome o : one->outcomes()) {
      // A plugin's platforms carry its file name (unique in one folder).
      std::vector<const engine::Hardware*> mine;
      const std::string file = fs::path(o.path).filename().string();
      for (const engine::Hardware& hw : one->platforms()) {
        if (o.loaded && hw.plugin == file) mine.push_back(&hw);
      }
      for (const engine::Hardware* hw : mine) {
        auto it = owners.find(hw->id);
        if (it == owners.end()) continue;
        o.loaded = false;
        o.platforms = 0;
        o.reason = absl::StrCat("duplicate platform id '", hw->id,
                                "': already provided by ", it->second);
        if (log != LoadLog::kNone) {
          std::fprintf(stderr,
                       "ridgeline plugin: refused family=%s path=%s: %s\n",
                       o.family.c_str(), o.path.c_str(), o.reason.c_str());
        }
        break;
      }
      if (o.loaded) {
        for (const engine::Hardware* hw : mine) {
          owners[hw->id] = o.path;
          all->platforms_.push_back(*hw);
        }
      }
      all->outcomes_.push_back(std::move(o));
    }
  }
  std::sort(all->platforms_.begin(), all->platforms_.end(),
            [](const engine::Hardware& a, const engine::Hardware& b) {
              return a.id < b.id;
            });
  return all;
}

std::shared_ptr<const HardwareRegistry> HardwareRegistry::LoadFiles(
    const std::vector<fs::path>& files, LoadLog log) {
  return RegistryBuilder::Build(files, {}, log);
}

absl::StatusOr<const engine::Hardware*> HardwareRegistry::Find(
    std::string_view id) const {
  auto it = std::lower_bound(
      platforms_.begin(), platforms_.end(), id,
      [](const engine::Hardware& hw, std::string_view key) {
        return hw.id < key;
      });
  if (it != platforms_.end() && it->id == id) return &*it;
  if (platforms_.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "unknown hardware \"", std::string(id), "\": no hardware plugins are loaded"));
  }
  std::vector<std::string> ids;
  ids.reserve(platforms_.size());
  for (const engine::Hardware& hw : platforms_) ids.push_back(hw.id);
  return absl::NotFoundError(
      absl::StrCat("unknown hardware \"", std::string(id), "\"; closest: ",
                   absl::StrJoin(engine::ClosestNames(id, ids), ", ")));
}

fs::path InstallPrefixPath(const fs::path& relative) {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec || exe.empty()) return {};
  return exe.parent_path().parent_path() / relative;
}

fs::path DefaultPluginDir() {
  std::error_code ec;
  for (const fs::path& dir :
       {InstallPrefixPath(RIDGELINE_PLUGIN_INSTALL_DIR),
        fs::path(RIDGELINE_BUILD_PLUGIN_DIR),
        fs::path(RIDGELINE_DEFAULT_PLUGIN_DIR)}) {
    if (!dir.empty() && fs::is_directory(dir, ec)) return dir;
  }
  return fs::path(RIDGELINE_DEFAULT_PLUGIN_DIR);
}

}  // namespace ridgeline::plugin_host
