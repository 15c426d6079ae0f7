// Calibration profiles: efficiency factors and overheads fitted from
// measurements, keyed by hardware (id or family) and framework. Loaded from a
// directory of versioned files; immutable after loading; thread-safe reads.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::calibration {

struct Profile {
  std::string name;         // unique, e.g. "nvidia-rtx-4090.llama.cpp-cuda"
  int format_version = 1;
  std::string hardware_id;  // exact id, or "" when keyed by family
  std::string family;       // plugin family, or "" when keyed by id
  std::string framework;    // "llama.cpp-cuda", "tensorrt-llm", "vllm", ...
  engine::Efficiency efficiency;  // efficiency.profile_name == name
  std::string fitted_from;  // provenance: file, rows, method, date
};

class ProfileStore {
 public:
  // Loads every profile file in `dir`; a bad file is an error naming the
  // file and field. A missing dir is an empty store.
  static absl::StatusOr<std::shared_ptr<const ProfileStore>> LoadDirectory(
      const std::filesystem::path& dir);
  static std::shared_ptr<const ProfileStore> FromProfiles(std::vector<Profile> p);

  const std::vector<Profile>& profiles() const { return profiles_; }
  // NOT_FOUND listing close names.
  absl::StatusOr<const Profile*> Find(std::string_view name) const;
  // Best match: exact hardware id + framework, then family + framework,
  // then hardware id with any framework, then family; nullptr if none.
  // Framework matches by prefix ("tensorrt-llm-0.6.1" matches "tensorrt-llm").
  const Profile* Match(std::string_view hardware_id, std::string_view family,
                       std::string_view framework) const;

 private:
  std::vector<Profile> profiles_;
};

// The folder of shipped profiles for installed binaries, or the source
// tree's profiles/ for uninstalled ones.
std::filesystem::path DefaultProfileDir();

}  // namespace ridgeline::calibration
