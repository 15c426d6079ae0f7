#include "measurements.h"

#include <fstream>
#include <optional>
#include <sstream>

#include "absl/strings/str_join.h"
#include "flags.h"
#include "ridgeline/calibration/benchmark_import.h"

namespace ridgeline::cli {
namespace {

constexpr int kOk = 0;
constexpr int kFailed = 1;
constexpr int kUsage = 2;

std::string Usage() {
  return "usage: ridgeline measurements import --from " +
         absl::StrJoin(calibration::BenchmarkFormats(), "|") +
         " FILE --model ID --hardware ID [--tensor-parallel N] [--framework "
         "NAME] [--weight-format FMT] [--kv-format FMT] [--id-prefix P]\n";
}

// A result file is read whole before anything is printed: an error leaves
// stdout empty (a partial import writes nothing).
std::optional<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

int MeasurementsCli(const std::vector<std::string>& args, std::ostream& out,
                    std::ostream& err) {
  const std::vector<FlagSpec> specs = {
      {"from", absl::StrJoin(calibration::BenchmarkFormats(), "|"),
       "the tool that wrote FILE"},
      {"model", "ID", "the model the benchmark served (catalog id)"},
      {"hardware", "ID", "the hardware it ran on (catalog id)"},
      {"tensor-parallel", "N", "tensor-parallel degree of the server (1)"},
      {"framework", "NAME",
       "the serving runtime (default: vllm / sglang for their own clients, "
       "the file's backend, else unknown)"},
      {"weight-format", "FMT", "weight format the server ran (bf16)"},
      {"kv-format", "FMT", "KV-cache format the server ran (unknown)"},
      {"id-prefix", "P", "row ids are P-001, P-002, ... (the --from name)"},
      {"help", "", "this text (also -h)"},
  };
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, specs);
  if (!flags.ok()) {
    err << "ridgeline measurements: " << flags.status().message() << "\n"
        << Usage();
    return kUsage;
  }
  const std::vector<std::string>& pos = flags->positional();
  if (flags->Has("help") || (!pos.empty() && pos[0] == "-h")) {
    out << Usage() << "\nflags:\n" << FlagHelp(specs);
    return kOk;
  }
  if (pos.empty() || pos[0] != "import") {
    err << "ridgeline measurements: expected the subcommand \"import\"\n"
        << Usage();
    return kUsage;
  }
  if (pos.size() != 2) {
    err << "ridgeline measurements import: expected one FILE, got "
        << pos.size() - 1 << "\n"
        << Usage();
    return kUsage;
  }
  calibration::ImportOptions options;
  std::optional<std::string> from = flags->Get("from");
  if (!from) {
    err << "ridgeline measurements import: --from is required (one of "
        << absl::StrJoin(calibration::BenchmarkFormats(), ", ") << ")\n"
        << Usage();
    return kUsage;
  }
  options.from = *from;
  bool known = false;
  for (const std::string& f : calibration::BenchmarkFormats()) {
    known = known || f == *from;
  }
  if (!known) {
    err << "ridgeline measurements import: --from: must be one of "
        << absl::StrJoin(calibration::BenchmarkFormats(), ", ") << "; got \""
        << *from << "\"\n"
        << Usage();
    return kUsage;
  }
  std::optional<std::string> model = flags->Get("model");
  std::optional<std::string> hardware = flags->Get("hardware");
  if (!model || !hardware) {
    err << "ridgeline measurements import: --model and --hardware are "
           "required\n"
        << Usage();
    return kUsage;
  }
  options.model_id = *model;
  options.hardware_id = *hardware;
  absl::StatusOr<std::optional<int64_t>> tp =
      flags->GetInt("tensor-parallel", 1, 1024);
  if (!tp.ok()) {
    err << "ridgeline measurements import: " << tp.status().message() << "\n";
    return kUsage;
  }
  options.tensor_parallel = tp->value_or(1);
  options.framework = flags->Get("framework");
  if (auto v = flags->Get("weight-format")) options.weight_format = *v;
  if (auto v = flags->Get("kv-format")) options.kv_format = *v;
  if (auto v = flags->Get("id-prefix")) options.id_prefix = *v;
  options.file_name = pos[1];
  std::optional<std::string> text = ReadWhole(pos[1]);
  if (!text) {
    err << "ridgeline measurements import: " << pos[1]
        << ": cannot open the file\n";
    return kFailed;
  }
  absl::StatusOr<std::vector<calibration::ImportedRow>> rows =
      calibration::ImportBenchmark(*text, options);
  if (!rows.ok()) {
    err << "ridgeline measurements import: " << rows.status().message() << "\n";
    return kFailed;
  }
  std::ostringstream csv;
  calibration::WriteServingCsv(*rows, csv);
  out << csv.str();
  return kOk;
}

}  // namespace ridgeline::cli
