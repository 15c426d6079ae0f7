// `ridgeline validate` and `ridgeline calibrate` after their flags are
// parsed: the CLI (cli/) owns argument parsing, usage text and exit code 2
// for usage errors; these functions only run the command.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <vector>

namespace ridgeline::calibration {

// How `Validate` reports its per-row results.
enum class ReportFormat { kTable, kJson, kCsv };

struct ValidateOptions {
  std::filesystem::path measurements;  // measurement CSV (measurements.h)
  // Further CSVs (a repeated --measurements), read after `measurements` as
  // one data set: serving.csv plus data/measurements/serving-added.csv.
  std::vector<std::filesystem::path> more_measurements;
  // Profile folder; DefaultProfileDir() when absent.
  std::optional<std::filesystem::path> profiles;
  // Hardware plugin folder; plugin_host::DefaultPluginDir() when absent or
  // empty.
  std::optional<std::filesystem::path> plugin_dir;
  ReportFormat format = ReportFormat::kTable;
  // Also fit profiles leave-one-platform-out (as `calibrate` does) and print
  // those forecast errors after the report (table format only).
  bool cross_validate = false;
};

struct CalibrateOptions {
  std::filesystem::path measurements;  // measurement CSV (measurements.h)
  std::vector<std::filesystem::path> more_measurements;  // as ValidateOptions
  std::filesystem::path out;           // profile folder to write
  // Hardware plugin folder; plugin_host::DefaultPluginDir() when absent or
  // empty.
  std::optional<std::filesystem::path> plugin_dir;
};

// Compares predictions with measurements and writes the report to `out`.
// Returns the process exit code: 0 ok, 1 when an input cannot be read (the
// reason goes to `err`).
int Validate(const ValidateOptions& options, std::ostream& out,
             std::ostream& err);

// Fits profiles into options.out, with a leave-one-platform-out
// cross-validation summary on `out`. Returns 0 ok, 1 on failure (reason on
// `err`).
int Calibrate(const CalibrateOptions& options, std::ostream& out,
              std::ostream& err);

}  // namespace ridgeline::calibration
