#include "ridgeline/calibration/benchmark_import.h"

#include <charconv>
#include <cmath>
#include <functional>
#include <map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "benchmark_readers.h"
#include "nlohmann/json.hpp"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/model.h"

namespace ridgeline::calibration {
namespace {

using nlohmann::json;
using Reader = std::function<absl::StatusOr<std::vector<benchmark::Run>>(
    const std::vector<json>&)>;

struct Format {
  std::string name;
  Reader read;
  std::string default_framework;  // when the file names no runtime
};

const std::vector<Format>& Formats() {
  // Clients that talk to any OpenAI-compatible server do not record which
  // runtime served them: "unknown" unless --framework says.
  static const auto* kFormats = new std::vector<Format>{
      {"vllm-bench", benchmark::ReadVllmBench, "vllm"},
      {"sglang-bench", benchmark::ReadSglangBench, "sglang"},
      {"guidellm", benchmark::ReadGuidellm, "unknown"},
      {"genai-perf", benchmark::ReadGenaiPerf, "unknown"},
      {"aiperf", benchmark::ReadAiperf, "unknown"},
  };
  return *kFormats;
}

// Python's json.dump writes float("inf") and nan as the bare tokens
// Infinity / -Infinity / NaN (SGLang's request_rate at an infinite rate),
// which JSON and nlohmann reject: outside strings they become "inf",
// "-inf" and null before parsing.
std::string ReplacePythonFloatTokens(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < text.size()) {
        out.push_back(text[++i]);
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      out.push_back(c);
    } else if (text.substr(i, 9) == "-Infinity") {
      out += "\"-inf\"";
      i += 8;
    } else if (text.substr(i, 8) == "Infinity") {
      out += "\"inf\"";
      i += 7;
    } else if (text.substr(i, 3) == "NaN") {
      out += "null";
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// One JSON document, or JSON Lines (one document per non-empty line: vLLM
// --append-result, SGLang --output-file).
absl::StatusOr<std::vector<json>> ParseDocuments(std::string_view raw,
                                                 const std::string& file) {
  const std::string text = ReplacePythonFloatTokens(raw);
  json whole = json::parse(text.begin(), text.end(), nullptr,
                           /*allow_exceptions=*/false);
  if (!whole.is_discarded()) return std::vector<json>{std::move(whole)};
  std::vector<json> docs;
  size_t start = 0;
  int line = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    ++line;
    std::string_view one(text.data() + start, end - start);
    if (one.find_first_not_of(" \t\r") != std::string_view::npos) {
      json doc = json::parse(one.begin(), one.end(), nullptr,
                             /*allow_exceptions=*/false);
      if (doc.is_discarded()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: line %d: not JSON (expected one JSON document, or one per "
            "line)",
            file, line));
      }
      docs.push_back(std::move(doc));
    }
    start = end + 1;
  }
  if (docs.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": empty file, expected a benchmark result"));
  }
  return docs;
}

// The shortest decimal that reads back as `x` (the file's own digits).
std::string ShortestDecimal(double x) {
  char buf[64];
  const std::to_chars_result res = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, res.ptr);
}

absl::Status OptionError(const std::string& flag, std::string message) {
  return engine::WithFieldPath(absl::InvalidArgumentError(std::move(message)),
                               flag);
}

}  // namespace

const std::vector<std::string>& BenchmarkFormats() {
  static const auto* kNames = [] {
    auto* names = new std::vector<std::string>;
    for (const Format& f : Formats()) names->push_back(f.name);
    return names;
  }();
  return *kNames;
}

absl::StatusOr<std::vector<ImportedRow>> ImportBenchmark(
    std::string_view text, const ImportOptions& options) {
  const Format* format = nullptr;
  for (const Format& f : Formats()) {
    if (f.name == options.from) format = &f;
  }
  if (format == nullptr) {
    return OptionError(
        "from",
        absl::StrFormat("--from: must be one of %s; got \"%s\"",
                        absl::StrJoin(BenchmarkFormats(), ", "), options.from));
  }
  if (absl::StatusOr<engine::ModelConfig> model =
          engine::FindModel(options.model_id);
      !model.ok()) {
    return OptionError("model",
                       absl::StrCat("--model: ", model.status().message()));
  }
  if (options.hardware_id.empty()) {
    return OptionError("hardware", "--hardware: a hardware id is required");
  }
  if (options.tensor_parallel < 1 || options.tensor_parallel > 1024) {
    return OptionError(
        "tensor-parallel",
        absl::StrCat("--tensor-parallel: must be in [1, 1024]; got ",
                     options.tensor_parallel));
  }
  absl::StatusOr<std::vector<json>> docs =
      ParseDocuments(text, options.file_name);
  if (!docs.ok()) return docs.status();
  absl::StatusOr<std::vector<benchmark::Run>> runs = format->read(*docs);
  if (!runs.ok()) {
    absl::Status prefixed(runs.status().code(),
                          absl::StrCat(options.file_name, ": ", format->name,
                                       ": ", runs.status().message()));
    std::optional<std::string> field = engine::FieldPathOf(runs.status());
    return field ? engine::WithFieldPath(prefixed, *field) : prefixed;
  }
  const std::string prefix =
      options.id_prefix.empty() ? format->name : options.id_prefix;
  std::vector<ImportedRow> rows;
  for (const benchmark::Run& run : *runs) {
    const int64_t prompt = std::llround(run.mean_prompt_tokens);
    const int64_t gen = std::llround(run.mean_output_tokens);
    if (prompt < 1 || gen < 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s: %s: mean lengths round to prompt_len %d, gen_len %d; "
          "both must be >= 1",
          options.file_name, format->name, run.label, prompt, gen));
    }
    const std::string framework = options.framework.value_or(
        run.framework.empty() ? format->default_framework : run.framework);
    for (const benchmark::Stat& stat : run.stats) {
      ImportedRow out;
      MeasurementRow& r = out.row;
      r.id = absl::StrFormat("%s-%03d", prefix, rows.size() + 1);
      r.hardware_id = options.hardware_id;
      // One replica: the file does not say how many served it.
      r.device_count = options.tensor_parallel;
      r.tensor_parallel = options.tensor_parallel;
      r.model_id = options.model_id;
      r.weight_format = options.weight_format;
      r.kv_format = options.kv_format;
      r.prompt_len = prompt;
      r.gen_len = gen;
      r.framework = framework;
      r.metric = stat.metric;
      r.value = stat.value;
      r.unit = stat.unit;
      r.usable = true;
      r.source = absl::StrCat(format->name, ":", options.file_name);
      r.note = absl::StrFormat(
          "imported (ridgeline measurements import --from %s), %s: %s = %s "
          "(%s); workload: %s; load: %s; one replica assumed (device_count = "
          "tensor_parallel %d); weights %s, kv %s as given to the import "
          "(the file does not state them)",
          format->name, run.label, stat.field, ShortestDecimal(stat.value),
          stat.meaning, run.lengths_note, run.load_note,
          options.tensor_parallel, options.weight_format, options.kv_format);
      out.concurrency = run.concurrency;
      rows.push_back(std::move(out));
    }
  }
  return rows;
}

void WriteServingCsv(const std::vector<ImportedRow>& rows, std::ostream& out) {
  std::vector<std::string> header = MeasurementColumns();
  header.push_back("concurrency");
  out << absl::StrJoin(header, ",") << "\n";
  auto opt = [](const std::optional<int64_t>& v) {
    return v ? absl::StrCat(*v) : std::string();
  };
  for (const ImportedRow& ir : rows) {
    const MeasurementRow& r = ir.row;
    const std::vector<std::string> cells = {
        r.id,
        r.hardware_id,
        absl::StrCat(r.device_count),
        opt(r.tensor_parallel),
        r.model_id,
        r.weight_format,
        r.weight_bits_effective ? absl::StrCat(*r.weight_bits_effective) : "",
        r.kv_format,
        opt(r.batch),
        opt(r.prompt_len),
        opt(r.gen_len),
        r.framework,
        r.metric,
        ShortestDecimal(r.value),
        r.unit,
        r.usable ? "1" : "0",
        r.source,
        r.note,
        ir.concurrency,
    };
    std::vector<std::string> quoted;
    for (const std::string& c : cells) quoted.push_back(CsvField(c));
    out << absl::StrJoin(quoted, ",") << "\n";
  }
}

}  // namespace ridgeline::calibration
