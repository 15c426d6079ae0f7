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
#include "ridgeline/engine/hardware.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::calibration {

struct Profile {
  std::string name;         // unique, e.g. "nvidia-rtx-4090.llama.cpp-cuda"
  int format_version = 1;
  std::string hardware_id;  // exact id, or "" when keyed by family
  std::string family;       // plugin family, or "" when keyed by id
  // Device memory technology ("hbm", "gddr", ...: DeviceMemoryTechnology)
  // a family profile is restricted to, or "" for every part of the family.
  // Batch-1 decode reaches a different share of peak bandwidth on HBM parts
  // (2-3.4 TB/s: launches and syncs dominate) than on GDDR ones.
  std::string memory;
  std::string framework;    // "llama.cpp-cuda", "tensorrt-llm", "vllm", ...
  engine::Efficiency efficiency;  // efficiency.profile_name == name
  // The framework runs fp16 matmuls with fp16 accumulation (llama.cpp's
  // CUDA backend); applied with the profile unless a request says otherwise.
  bool fp16_accumulation = false;
  std::string fitted_from;  // provenance: file, rows, method, date
  // Serving profiles (profiles/serving/): where the fit's rows ran, so a
  // use elsewhere is flagged as an extrapolation and bounded. Empty for
  // kernel profiles (and absent from their files).
  struct ServingFit {
    std::vector<std::string> hardware;     // hardware ids of the fit rows
    std::vector<int64_t> tensor_parallel;  // their tensor-parallel degrees
    // The slowest share of the pure roofline's speed any fit row measured,
    // (0, 1]; where the profile extrapolates, a step is never predicted
    // slower than the bound's step / this.
    double min_speed_fraction = 1;
  };
  ServingFit serving_fit;
};

// Whether `p` (a serving profile) was fitted on rows of `hardware_id` at
// tensor-parallel degree `tensor_parallel` without expert parallelism (the
// fit rows are tensor-parallel only); true for a profile that records no
// fit platforms (kernel profiles, hand-written files).
bool FittedOnDeployment(const Profile& p, std::string_view hardware_id,
                        int64_t tensor_parallel, int64_t expert_parallel = 1);
// The warning Plan and Simulate give when FittedOnDeployment is false:
// where the profile was fitted, that `deployment` ("TP 1 EP 8") on
// `hardware_id` is an extrapolation, and the bounds its steps are held
// between.
std::string ExtrapolationWarning(const Profile& p, std::string_view hardware_id,
                                 std::string_view deployment);

// The technology of the hardware's device memory, the first tier that is
// neither on-chip SRAM nor behind a link: "hbm", "gddr", "lpddr", "ddr",
// "unified" (engine::TierKindName, from the plugin's spec-sheet tiers); ""
// when it has none.
std::string DeviceMemoryTechnology(const engine::Hardware& hardware);

// Whether a profile keyed by framework `key` covers the framework `query`:
// equal, or `key` is a prefix ending at a separator ("tensorrt-llm" covers
// "tensorrt-llm-0.6.1"; "llama.cpp" does not cover "llama.cpp-cuda").
bool FrameworkCovers(std::string_view key, std::string_view query);

class ProfileStore {
 public:
  // Loads every profile file in `dir`; a bad file is an error naming the
  // file and field. A missing dir is NOT_FOUND naming it when the caller
  // asked for that dir, an empty store when it is only the default
  // (DefaultProfileDir(): nothing installed means no profiles).
  enum class IfMissing { kError, kEmpty };
  static absl::StatusOr<std::shared_ptr<const ProfileStore>> LoadDirectory(
      const std::filesystem::path& dir, IfMissing if_missing = IfMissing::kError);
  static std::shared_ptr<const ProfileStore> FromProfiles(std::vector<Profile> p);

  const std::vector<Profile>& profiles() const { return profiles_; }
  // NOT_FOUND listing close names.
  absl::StatusOr<const Profile*> Find(std::string_view name) const;
  // Best match: exact hardware id + framework, then family + framework,
  // then framework on any hardware, then hardware id with another
  // framework, then family; nullptr if none. So the framework asked for on
  // other hardware of the family wins over another framework on this
  // hardware. Framework matches by prefix either way ("tensorrt-llm-0.6.1"
  // matches "tensorrt-llm"; "vllm" matches "vllm-rocm", ranked after a
  // profile whose framework covers the query).
  // `memory` is the hardware's DeviceMemoryTechnology: a family profile
  // restricted to that technology ranks above the family's general one.
  const Profile* Match(std::string_view hardware_id, std::string_view family,
                       std::string_view framework,
                       std::string_view memory = "") const;

  // Serving profiles: <dir>/serving/*.json, one per framework ("serving.
  // tensorrt-llm", keyed by framework alone), written by `calibrate` from
  // serving measurements and fitted on the serving model itself. Plan and
  // Simulate prefer them for a framework; Analyze never uses them. Empty
  // when the folder is absent.
  const ProfileStore& serving() const;

  // Kernel profiles: <dir>/kernels/*.json, written by `calibrate` from
  // kernel tables (gemm-kernel / attention-decode-kernel rows), carrying a
  // kernel_model section. Kernel rows (validate, AnalyzeKernel) prefer them;
  // Analyze never uses them. Empty when the folder is absent.
  const ProfileStore& kernels() const;

  // The frameworks some profile (kernel or serving) is fitted with, sorted
  // and unique: what a framework query may name.
  std::vector<std::string> Frameworks() const;
  // Whether `framework` is one of them, or the same runtime by
  // SameFramework ("vllm" is "vllm-rocm"'s; "tensorrt-llm-0.6.1" is
  // "tensorrt-llm"'s). A misspelt name is not.
  bool KnowsFramework(std::string_view framework) const;

 private:
  std::vector<Profile> profiles_;
  std::shared_ptr<const ProfileStore> serving_;
  std::shared_ptr<const ProfileStore> kernels_;
};

// One profile as JSON (one file holds one profile):
//   {"format_version": 1, "name": "...", "hardware_id": "", "family": "nvidia",
//    "framework": "llama.cpp-cuda", "fp16_accumulation": true,
//    "efficiency": {"compute": {"gemm": 0.6, "gemv": 1, "attention": 0.6,
//                               "elementwise": 1},
//                   "memory": {...same keys...},
//                   "per_step_overhead_seconds": 0.0004,
//                   "per_request_overhead_seconds": 0.005,
//                   "per_kernel_overhead_seconds": 0,
//                   "compute_power_exponent": 0.4,        // optional
//                   "dequantized_compute_share": 0.8,     // optional
//                   "dequantized_compute_share_by_format":
//                       {"gguf-q4_0": 0.9}},              // optional
//    "kernel_model": {...},  // optional: engine::KernelModel, keys as named
//    "fitted_from": "..."}
// Missing op classes default to 1, missing overheads to 0. Errors are
// INVALID_ARGUMENT naming `file` and the field path, the allowed range and
// the value received.
absl::StatusOr<Profile> ParseProfileJson(std::string_view text,
                                         std::string_view file);
std::string ProfileToJson(const Profile& profile);
// Writes <dir>/<name>.json for each profile (creates dir).
absl::Status WriteProfiles(const std::filesystem::path& dir,
                           const std::vector<Profile>& profiles);

// Whether profile framework `key` and the framework asked for are the same
// runtime for Match(): either covers the other at a separator.
bool SameFramework(std::string_view key, std::string_view query);

// How Match() chose `profile` for (hardware_id, framework), in words:
// 'hardware "amd-mi300x" + framework "vllm-rocm" (asked "vllm")', or
// 'hardware "x" only: fitted with framework "y", not the "z" asked for ...'.
std::string DescribeMatch(const Profile& profile, std::string_view hardware_id,
                          std::string_view framework);

// Match() also accepts a profile keyed by framework alone (hardware_id and
// family both ""): it ranks after family + framework and before the
// framework-less tiers.

// The folder of shipped profiles for installed binaries, or the source
// tree's profiles/ for uninstalled ones.
std::filesystem::path DefaultProfileDir();

}  // namespace ridgeline::calibration
