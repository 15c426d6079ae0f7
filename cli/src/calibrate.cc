// `ridgeline validate` / `ridgeline calibrate` flags, parsed with the CLI's
// parser (flags.h) into calibration::ValidateOptions / CalibrateOptions.
#include "calibrate.h"

#include <optional>
#include <string>
#include <vector>

#include "flags.h"
#include "ridgeline/calibration/commands.h"

namespace ridgeline::cli {
namespace {

constexpr int kOk = 0;
constexpr int kUsage = 2;

constexpr char kValidateUsage[] =
    "usage: ridgeline validate --measurements FILE.csv [--measurements "
    "MORE.csv ...] [--profiles DIR] "
    "[--plugin-dir DIR] [--format table|json|csv] [--cross-validate]\n";
constexpr char kCalibrateUsage[] =
    "usage: ridgeline calibrate --measurements FILE.csv [--measurements "
    "MORE.csv ...] --out DIR "
    "[--plugin-dir DIR]\n";

const FlagSpec kHelp = {"help", "", "this text (also -h)"};

// Parses `args` with the CLI's parser. These two commands answer a usage
// error with the reason and then their usage line, and --help / -h with the
// usage line alone. Returns nullopt with the exit code in *code when the
// command should stop there.
std::optional<ParsedFlags> Parse(const std::vector<std::string>& args,
                                 const std::vector<FlagSpec>& specs,
                                 const char* usage, std::ostream& out,
                                 std::ostream& err, int* code) {
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, specs);
  if (!flags.ok()) {
    err << flags.status().message() << "\n" << usage;
    *code = kUsage;
    return std::nullopt;
  }
  bool help = flags->Has("help");
  for (const std::string& p : flags->positional()) {
    if (p == "-h") {
      help = true;
      continue;
    }
    err << "unexpected argument \"" << p << "\"\n" << usage;
    *code = kUsage;
    return std::nullopt;
  }
  if (help) {
    out << usage;
    *code = kOk;
    return std::nullopt;
  }
  return *std::move(flags);
}

}  // namespace

int ValidateCli(const std::vector<std::string>& args, std::ostream& out,
                std::ostream& err) {
  int code = kOk;
  std::optional<ParsedFlags> flags =
      Parse(args,
            {{"measurements", "FILE.csv",
              "measurement CSV (repeatable: the files are one data set)"},
             {"profiles", "DIR", "calibration profile folder"},
             {"plugin-dir", "DIR", "hardware plugin folder"},
             {"format", "table|json|csv", "report format"},
             {"cross-validate", "",
              "also print leave-one-platform-out errors (table format)"},
             kHelp},
            kValidateUsage, out, err, &code);
  if (!flags) return code;
  std::optional<std::string> measurements = flags->Get("measurements");
  if (!measurements) {
    err << "--measurements is required\n" << kValidateUsage;
    return kUsage;
  }
  calibration::ValidateOptions options;
  const std::vector<std::string> files = flags->GetAll("measurements");
  options.measurements = files.front();
  options.more_measurements.assign(files.begin() + 1, files.end());
  const std::string format = flags->Get("format").value_or("table");
  if (format == "table") {
    options.format = calibration::ReportFormat::kTable;
  } else if (format == "json") {
    options.format = calibration::ReportFormat::kJson;
  } else if (format == "csv") {
    options.format = calibration::ReportFormat::kCsv;
  } else {
    err << "--format: must be one of table, json, csv; got \"" << format
        << "\"\n";
    return kUsage;
  }
  if (auto dir = flags->Get("profiles")) options.profiles = *dir;
  if (auto dir = flags->Get("plugin-dir")) options.plugin_dir = *dir;
  options.cross_validate = flags->Has("cross-validate");
  return calibration::Validate(options, out, err);
}

int CalibrateCli(const std::vector<std::string>& args, std::ostream& out,
                 std::ostream& err) {
  int code = kOk;
  std::optional<ParsedFlags> flags =
      Parse(args,
            {{"measurements", "FILE.csv",
              "measurement CSV (repeatable: the files are one data set)"},
             {"out", "DIR", "folder the fitted profiles are written to"},
             {"plugin-dir", "DIR", "hardware plugin folder"},
             kHelp},
            kCalibrateUsage, out, err, &code);
  if (!flags) return code;
  std::optional<std::string> measurements = flags->Get("measurements");
  std::optional<std::string> dir = flags->Get("out");
  if (!measurements || !dir) {
    err << "--measurements and --out are required\n" << kCalibrateUsage;
    return kUsage;
  }
  calibration::CalibrateOptions options;
  const std::vector<std::string> files = flags->GetAll("measurements");
  options.measurements = files.front();
  options.more_measurements.assign(files.begin() + 1, files.end());
  options.out = *dir;
  if (auto plugins = flags->Get("plugin-dir")) options.plugin_dir = *plugins;
  return calibration::Calibrate(options, out, err);
}

}  // namespace ridgeline::cli
