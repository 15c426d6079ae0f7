// `ridgeline validate` and `ridgeline calibrate`.
#include "ridgeline/calibration/commands.h"

#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ridgeline/calibration/fit.h"
#include "ridgeline/calibration/measurements.h"
#include "ridgeline/calibration/profiles.h"
#include "ridgeline/calibration/validation.h"
#include "ridgeline/plugin_host/registry.h"

namespace ridgeline::calibration {
namespace {

struct Flags {
  std::map<std::string, std::string> values;
  bool help = false;  // --help / -h: a plain switch, never takes a value
};

// --name VALUE or --name=VALUE; unknown flags are usage errors.
bool ParseFlags(const std::vector<std::string>& args,
                const std::vector<std::string>& known, Flags* flags,
                std::ostream& err) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    if (a == "--help" || a == "-h") {
      flags->help = true;
      continue;
    }
    if (a.rfind("--", 0) != 0) {
      err << "unexpected argument \"" << a << "\"\n";
      return false;
    }
    std::string name = a.substr(2), value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      err << "flag --" << name << " needs a value\n";
      return false;
    }
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      err << "unknown flag --" << name << "\n";
      return false;
    }
    flags->values[name] = value;
  }
  return true;
}

HardwareLookup RegistryLookup(const std::string& plugin_dir) {
  std::shared_ptr<const plugin_host::HardwareRegistry> registry =
      plugin_host::HardwareRegistry::LoadDirectory(
          plugin_dir.empty() ? plugin_host::DefaultPluginDir()
                             : std::filesystem::path(plugin_dir),
          // A report on stdout: a refused plugin is news, a loaded one is not.
          plugin_host::LoadLog::kRefusalsOnly);
  return [registry](std::string_view id) -> absl::StatusOr<engine::Hardware> {
    absl::StatusOr<const engine::Hardware*> hw = registry->Find(id);
    if (!hw.ok()) return hw.status();
    return **hw;
  };
}

std::vector<PreparedRow> PrepareAll(const std::vector<MeasurementRow>& rows,
                                    const HardwareLookup& lookup,
                                    std::vector<RowResult>* skipped) {
  std::vector<PreparedRow> out;
  for (const MeasurementRow& r : rows) {
    absl::StatusOr<PreparedRow> p = PrepareRow(r, lookup);
    if (p.ok()) {
      out.push_back(*std::move(p));
    } else if (skipped) {
      RowResult s;
      s.id = r.id;
      s.metric = r.metric;
      s.unit = r.unit;
      s.measured = r.value;
      s.status = std::string(p.status().message());
      skipped->push_back(std::move(s));
    }
  }
  return out;
}

constexpr char kValidateUsage[] =
    "usage: ridgeline validate --measurements FILE.csv [--profiles DIR] "
    "[--plugin-dir DIR] [--format table|json|csv]\n";
constexpr char kCalibrateUsage[] =
    "usage: ridgeline calibrate --measurements FILE.csv --out DIR "
    "[--plugin-dir DIR]\n";

}  // namespace

int ValidateCommand(const std::vector<std::string>& args, std::ostream& out,
                    std::ostream& err) {
  Flags flags;
  if (!ParseFlags(args, {"measurements", "profiles", "plugin-dir", "format"},
                  &flags, err)) {
    err << kValidateUsage;
    return 2;
  }
  if (flags.help) {
    out << kValidateUsage;
    return 0;
  }
  if (!flags.values.contains("measurements")) {
    err << "--measurements is required\n" << kValidateUsage;
    return 2;
  }
  const std::string format =
      flags.values.contains("format") ? flags.values["format"] : "table";
  if (format != "table" && format != "json" && format != "csv") {
    err << "--format: must be one of table, json, csv; got \"" << format << "\"\n";
    return 2;
  }
  absl::StatusOr<std::vector<MeasurementRow>> rows =
      ReadMeasurementsCsv(flags.values["measurements"]);
  if (!rows.ok()) {
    err << rows.status().message() << "\n";
    return 1;
  }
  const std::filesystem::path profile_dir =
      flags.values.contains("profiles") ? std::filesystem::path(flags.values["profiles"])
                                        : DefaultProfileDir();
  absl::StatusOr<std::shared_ptr<const ProfileStore>> store =
      ProfileStore::LoadDirectory(profile_dir);
  if (!store.ok()) {
    err << store.status().message() << "\n";
    return 1;
  }
  std::vector<RowResult> results =
      EvaluateRows(*rows, RegistryLookup(flags.values["plugin-dir"]), store->get());
  Summary summary = Summarize(results);
  if (format == "csv") {
    WriteCsv(results, out);
  } else if (format == "json") {
    WriteJson(results, summary, out);
  } else {
    WriteTable(results, summary, out);
    out << "profiles: " << profile_dir.string() << " ("
        << (*store)->profiles().size() << " loaded)\n";
  }
  return 0;
}

int CalibrateCommand(const std::vector<std::string>& args, std::ostream& out,
                     std::ostream& err) {
  Flags flags;
  if (!ParseFlags(args, {"measurements", "out", "plugin-dir"}, &flags, err)) {
    err << kCalibrateUsage;
    return 2;
  }
  if (flags.help) {
    out << kCalibrateUsage;
    return 0;
  }
  if (!flags.values.contains("measurements") || !flags.values.contains("out")) {
    err << "--measurements and --out are required\n" << kCalibrateUsage;
    return 2;
  }
  const std::string file = flags.values["measurements"];
  absl::StatusOr<std::vector<MeasurementRow>> rows = ReadMeasurementsCsv(file);
  if (!rows.ok()) {
    err << rows.status().message() << "\n";
    return 1;
  }
  std::vector<RowResult> skipped;
  std::vector<PreparedRow> prepared =
      PrepareAll(*rows, RegistryLookup(flags.values["plugin-dir"]), &skipped);
  FitOptions options;
  options.provenance = absl::StrCat(
      "ridgeline calibrate --measurements ",
      std::filesystem::path(file).filename().string());
  std::vector<Profile> profiles = FitProfiles(prepared, options);
  const std::filesystem::path dir = flags.values["out"];
  if (absl::Status st = WriteProfiles(dir, profiles); !st.ok()) {
    err << st.message() << "\n";
    return 1;
  }
  out << absl::StrFormat("fitted %d profiles from %d rows (%d skipped) into %s\n",
                         profiles.size(), prepared.size(), skipped.size(),
                         dir.string());

  std::vector<RowResult> cv = CrossValidate(prepared, options);
  {
    std::ofstream csv(dir / "cross_validation.csv");
    WriteCsv(cv, csv);
  }
  Summary s = Summarize(cv);
  out << "\nleave-one-platform-out cross-validation (predicted with profiles "
         "fitted without the platform's rows):\n";
  WriteTable({}, s, out);
  auto metric_median = [&](std::string_view metric) -> std::string {
    for (const GroupStats& g : s.by_metric) {
      if (g.name == metric) {
        return absl::StrFormat("%.1f%% (n=%d)", g.median_ape * 100, g.evaluated);
      }
    }
    return "n/a";
  };
  out << "\ngoals (cross-validated):\n"
      << "  decode_tok_s  median APE " << metric_median("decode_tok_s")
      << "  goal <= 15%\n"
      << "  prefill_tok_s median APE " << metric_median("prefill_tok_s")
      << "  goal <= 25%\n"
      << "  ttft_ms       median APE " << metric_median("ttft_ms")
      << "  goal <= 25%\n"
      << absl::StrFormat("  soundness %.1f%%  goal >= 98%%\n", s.overall.soundness * 100)
      << "per-row results: " << (dir / "cross_validation.csv").string() << "\n";
  return 0;
}

}  // namespace ridgeline::calibration
