// `ridgeline validate` and `ridgeline calibrate`, given parsed options.
#include "ridgeline/calibration/commands.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ridgeline/calibration/fit.h"
#include "ridgeline/calibration/measurements.h"
#include "ridgeline/calibration/profiles.h"
#include "ridgeline/calibration/serving_validation.h"
#include "ridgeline/calibration/validation.h"
#include "ridgeline/plugin_host/registry.h"

namespace ridgeline::calibration {
namespace {

HardwareLookup RegistryLookup(
    const std::optional<std::filesystem::path>& plugin_dir) {
  std::shared_ptr<const plugin_host::HardwareRegistry> registry =
      plugin_host::HardwareRegistry::LoadDirectory(
          !plugin_dir || plugin_dir->empty() ? plugin_host::DefaultPluginDir()
                                             : *plugin_dir,
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

// Every file's rows, in order: one data set (a repeated --measurements).
absl::StatusOr<std::vector<MeasurementRow>> ReadAll(
    const std::filesystem::path& first,
    const std::vector<std::filesystem::path>& more) {
  absl::StatusOr<std::vector<MeasurementRow>> rows = ReadMeasurementsCsv(first);
  for (const std::filesystem::path& p : more) {
    if (!rows.ok()) break;
    absl::StatusOr<std::vector<MeasurementRow>> next = ReadMeasurementsCsv(p);
    if (!next.ok()) return next.status();
    rows->insert(rows->end(), next->begin(), next->end());
  }
  return rows;
}

// Every row times one kernel: a kernel table, fitted with the kernel model.
bool AllKernelRows(const std::vector<PreparedRow>& rows) {
  return !rows.empty() &&
         std::all_of(rows.begin(), rows.end(),
                     [](const PreparedRow& r) { return IsKernel(r.regime); });
}

// The leave-one-platform-out summary with the accuracy targets
// (docs/validation.md).
void WriteCrossValidation(const Summary& s, std::ostream& out) {
  out << "\nleave-one-platform-out cross-validation (predicted with profiles "
         "fitted without the platform's rows):\n";
  WriteTable({}, s, out);
  auto metric_median = [&](std::string_view metric) -> std::string {
    for (const GroupStats& g : s.by_metric) {
      if (g.name == metric) {
        return absl::StrFormat("%.1f%% (n=%d)", g.median_ape * 100,
                               g.evaluated);
      }
    }
    return "n/a";
  };
  out << "\ntargets (cross-validated):\n"
      << "  decode_tok_s  median APE " << metric_median("decode_tok_s")
      << "  target <= 10%\n"
      << "  prefill_tok_s median APE " << metric_median("prefill_tok_s")
      << "  target <= 12%\n"
      << "  ttft_ms       median APE " << metric_median("ttft_ms")
      << "  target <= 20%\n";
  if (s.end_to_end) {
    out << absl::StrFormat(
        "  end-to-end rows (not kernel_us) median APE %.1f%% (n=%d)  target "
        "<= 8%%\n",
        s.end_to_end->median_ape * 100, s.end_to_end->evaluated);
  }
  out
      << absl::StrFormat("  soundness %.1f%%  target >= 99%%\n",
                         s.overall.soundness * 100);
}

}  // namespace

int Validate(const ValidateOptions& options, std::ostream& out,
             std::ostream& err) {
  // Serving measurements (a `concurrency` column) run the serving model.
  if (IsServingMeasurements(options.measurements, options.more_measurements)) {
    return ValidateServing(options, out, err);
  }
  absl::StatusOr<std::vector<MeasurementRow>> rows =
      ReadAll(options.measurements, options.more_measurements);
  if (!rows.ok()) {
    err << rows.status().message() << "\n";
    return 1;
  }
  const std::filesystem::path profile_dir =
      options.profiles ? *options.profiles : DefaultProfileDir();
  absl::StatusOr<std::shared_ptr<const ProfileStore>> store =
      ProfileStore::LoadDirectory(profile_dir,
                                  options.profiles ? ProfileStore::IfMissing::kError
                                                   : ProfileStore::IfMissing::kEmpty);
  if (!store.ok()) {
    err << store.status().message() << "\n";
    return 1;
  }
  std::vector<RowResult> results =
      EvaluateRows(*rows, RegistryLookup(options.plugin_dir), store->get());
  Summary summary = Summarize(results);
  if (options.format == ReportFormat::kCsv) {
    WriteCsv(results, out);
  } else if (options.format == ReportFormat::kJson) {
    WriteJson(results, summary, out);
  } else {
    WriteTable(results, summary, out);
    out << "profiles: " << profile_dir.string() << " ("
        << (*store)->profiles().size() << " loaded)\n";
    const int usable = static_cast<int>(std::count_if(
        rows->begin(), rows->end(), [](const MeasurementRow& r) { return r.usable; }));
    out << absl::StrFormat("evaluated %d of %d usable rows (%.1f%%)\n",
                           summary.evaluated, usable,
                           usable > 0 ? 100.0 * summary.evaluated / usable : 0.0);
  }
  if (options.cross_validate && options.format == ReportFormat::kTable) {
    FitOptions fit;
    fit.provenance = "ridgeline validate --cross-validate";
    std::vector<PreparedRow> prepared =
        PrepareAll(*rows, RegistryLookup(options.plugin_dir), nullptr);
    fit.kernel_model = AllKernelRows(prepared);
    WriteCrossValidation(Summarize(CrossValidate(prepared, fit)), out);
  }
  return 0;
}

int Calibrate(const CalibrateOptions& options, std::ostream& out,
              std::ostream& err) {
  // Serving measurements fit serving profiles (serving_validation.h).
  if (IsServingMeasurements(options.measurements, options.more_measurements)) {
    return CalibrateServing(options, out, err);
  }
  const std::string file = options.measurements.string();
  absl::StatusOr<std::vector<MeasurementRow>> rows =
      ReadAll(options.measurements, options.more_measurements);
  if (!rows.ok()) {
    err << rows.status().message() << "\n";
    return 1;
  }
  std::vector<RowResult> skipped;
  std::vector<PreparedRow> prepared =
      PrepareAll(*rows, RegistryLookup(options.plugin_dir), &skipped);
  FitOptions fit;
  fit.provenance =
      absl::StrCat("ridgeline calibrate --measurements ",
                   std::filesystem::path(file).filename().string());
  for (const std::filesystem::path& more : options.more_measurements) {
    absl::StrAppend(&fit.provenance, " --measurements ", more.filename().string());
  }
  // A kernel table (kernels-aic.csv, bench/gpu rows) fits kernel-model
  // profiles into <out>/kernels/, beside the end-to-end ones.
  fit.kernel_model = AllKernelRows(prepared);
  std::vector<Profile> profiles = FitProfiles(prepared, fit);
  const std::filesystem::path dir =
      fit.kernel_model ? options.out / "kernels" : options.out;
  if (absl::Status st = WriteProfiles(dir, profiles); !st.ok()) {
    err << st.message() << "\n";
    return 1;
  }
  out << absl::StrFormat(
      "fitted %d profiles from %d rows (%d skipped) into %s\n", profiles.size(),
      prepared.size(), skipped.size(), dir.string());

  std::vector<RowResult> cv = CrossValidate(prepared, fit);
  {
    std::ofstream csv(dir / "cross_validation.csv");
    WriteCsv(cv, csv);
  }
  WriteCrossValidation(Summarize(cv), out);
  out << "per-row results: " << (dir / "cross_validation.csv").string() << "\n";
  return 0;
}

}  // namespace ridgeline::calibration
