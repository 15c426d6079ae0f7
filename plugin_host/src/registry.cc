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
  // folder missing); recorded first. An empty `reader` reads in this
  // process, one file after the other (so the log names the plugin that
  // crashes it); other readers run side by side (a start then waits for
  // the slowest plugin, not for their sum).
  static std::shared_ptr<const HardwareRegistry> Build(
      const std::vector<fs::path>& files, std::vector<LoadOutcome> refused,
      LoadLog log, const HardwareRegistry::PluginReader& reader = nullptr) {
    auto registry = std::shared_ptr<HardwareRegistry>(new HardwareRegistry());
    RegistryBuilder builder(*registry, log);
    for (LoadOutcome& o : refused) builder.Record(std::move(o));
    if (!reader) {
      for (const fs::path& file : files) {
        builder.LogLoading(file);
        PluginContents contents;
        absl::Status read = ReadPluginInProcess(file, &contents);
        builder.Add(file, std::move(read), std::move(contents));
      }
    } else {
      for (const fs::path& file : files) builder.LogLoading(file);
      std::vector<absl::Status> read(files.size());
      std::vector<PluginContents> contents(files.size());
      std::vector<std::thread> threads;
      threads.reserve(files.size());
      for (size_t i = 0; i < files.size(); ++i) {
        threads.emplace_back(
            [&, i] { read[i] = reader(files[i], &contents[i]); });
      }
      for (std::thread& t : threads) t.join();
      for (size_t i = 0; i < files.size(); ++i) {
        builder.Add(files[i], std::move(read[i]), std::move(contents[i]));
      }
    }
    std::sort(registry->platforms_.begin(), registry->platforms_.end(),
              [](const engine::Hardware& a, const engine::Hardware& b) {
                return a.id < b.id;
              });
    return registry;
  }

 private:
  RegistryBuilder(HardwareRegistry& registry, LoadLog log)
      : registry_(registry), log_(log) {}

  // Logged before any plugin code runs, so a plugin that crashes or hangs
  // while loading in this process is named by the last line of the log.
  void LogLoading(const fs::path& file) {
    if (log_ == LoadLog::kAll) {
      std::fprintf(stderr, "ridgeline plugin: loading path=%s\n",
                   file.string().c_str());
      std::fflush(stderr);
    }
  }

  void Add(const fs::path& file, absl::Status read, PluginContents contents) {
    LoadOutcome outcome;
    outcome.path = file.string();
    outcome.family = contents.family;
    outcome.plugin_version = contents.plugin_version;
    if (read.ok()) read = CheckPlatforms(file, contents.platforms);
    if (!read.ok()) {
      outcome.reason = std::string(read.message());
      Record(std::move(outcome));
      return;
    }
    const std::string name = file.filename().string();
    if (contents.health) registry_.health_[name] = std::move(contents.health);
    for (engine::Hardware& hw : contents.platforms) {
      owners_[hw.id] = name;
      registry_.platforms_.push_back(std::move(hw));
    }
    outcome.loaded = true;
    outcome.platforms = static_cast<int>(contents.platforms.size());
    Record(std::move(outcome));
  }

  absl::Status CheckPlatforms(const fs::path& file,
                              std::vector<engine::Hardware>& platforms) {
    constexpr size_t kMaxPlatforms = 4096;
    if (platforms.empty() || platforms.size() > kMaxPlatforms) {
      return absl::InvalidArgumentError(
          absl::StrCat("platform_count() must be in [1, ", kMaxPlatforms,
                       "], got ", platforms.size()));
    }
    std::map<std::string, size_t> seen;
    for (size_t i = 0; i < platforms.size(); ++i) {
      engine::Hardware& hw = platforms[i];
      hw.plugin = file.filename().string();
      const std::string prefix = absl::StrCat("platforms[", i, "]");
      if (absl::Status s = engine::ValidateHardware(hw, prefix); !s.ok()) {
        return absl::Status(s.code(), absl::StrCat("platform '", hw.id,
                                                   "': ", s.message()));
      }
      if (auto it = owners_.find(hw.id); it != owners_.end()) {
        return absl::AlreadyExistsError(absl::StrCat(
            "duplicate platform id '", hw.id, "' (", prefix,
            ".id): already provided by ", it->second));
      }
      if (auto [it, inserted] = seen.emplace(hw.id, i); !inserted) {
        return absl::AlreadyExistsError(
            absl::StrCat("duplicate platform id '", hw.id, "' in platforms[",
                         it->second, "] and ", prefix));
      }
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

// Why the status of `file` cannot be read, for its refusal.
std::string DescribeUnreadable(const fs::path& file,
                               const std::error_code& ec) {
  std::error_code link_ec;
  if (fs::is_symlink(fs::symlink_status(file, link_ec))) {
    const fs::path target = fs::read_symlink(file, link_ec);
    if (ec == std::errc::too_many_symbolic_link_levels) {
      return absl::StrCat("is a symbolic link that loops (-> '",
                          target.string(), "'): ", ec.message(),
                          "; skipped");
    }
    return absl::StrCat("is a dangling symbolic link (-> '", target.string(),
                        "'): ", ec.message(), "; skipped");
  }
  return absl::StrCat("cannot be read: ", ec.message(), "; skipped");
}

}  // namespace

std::shared_ptr<const HardwareRegistry> HardwareRegistry::LoadDirectory(
    const fs::path& dir, LoadLog log) {
  return LoadDirectory(dir, log, nullptr);
}

std::shared_ptr<const HardwareRegistry> HardwareRegistry::LoadDirectory(
    const fs::path& dir, LoadLog log, const PluginReader& reader) {
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
  std::vector<LoadOutcome> bad_files;
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const fs::path& path = it->path();
    if (path.extension() != ".so") continue;
    // One entry that cannot be read (a dangling or looping symbolic link)
    // is refused on its own; it must not hide the rest of the folder.
    std::error_code entry_ec;
    const bool regular = it->is_regular_file(entry_ec);
    std::string why;
    if (entry_ec) {
      why = DescribeUnreadable(path, entry_ec);
    } else if (!regular) {
      continue;  // a folder or device named *.so is not a plugin
    } else {
      why = UnsafePluginFile(dir, path);
    }
    if (!why.empty()) {
      LoadOutcome o;
      o.path = path.string();
      o.reason = absl::StrCat("refused before loading: ",
                              path.filename().string(), " ", why);
      bad_files.push_back(std::move(o));
      continue;
    }
    files.push_back(path);
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
  std::sort(bad_files.begin(), bad_files.end(),
            [](const LoadOutcome& a, const LoadOutcome& b) {
              return a.path < b.path;
            });
  return RegistryBuilder::Build(files, std::move(bad_files), log, reader);
}

std::shared_ptr<const HardwareRegistry> HardwareRegistry::LoadDirectories(
    const std::vector<fs::path>& dirs, LoadLog log, const PluginReader& reader) {
  auto all = std::shared_ptr<HardwareRegistry>(new HardwareRegistry());
  std::map<std::string, std::string> owners;  // platform id -> plugin path
  for (const fs::path& dir : dirs) {
    const std::shared_ptr<const HardwareRegistry> one =
        LoadDirectory(dir, log, reader);
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
        // A hosted plugin's health (its host died) travels with its
        // platforms.
        if (auto h = one->health_.find(file); h != one->health_.end()) {
          all->health_.emplace(file, h->second);
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
  if (it != platforms_.end() && it->id == id) {
    if (auto h = health_.find(it->plugin); h != health_.end()) {
      if (absl::Status s = h->second(); !s.ok()) {
        return absl::Status(
            s.code(), absl::StrCat("hardware \"", it->id, "\": ", s.message()));
      }
    }
    return &*it;
  }
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
