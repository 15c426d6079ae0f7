#include "ridgeline/calibration/measurements.h"

#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace ridgeline::calibration {

const std::vector<std::string>& MeasurementColumns() {
  static const auto* kColumns = new std::vector<std::string>{
      "id",        "hardware_id", "device_count", "tensor_parallel",
      "model_id",  "weight_format", "weight_bits_effective", "kv_format",
      "batch",     "prompt_len",  "gen_len",      "framework",
      "metric",    "value",       "unit",         "usable",
      "source",    "note"};
  return *kColumns;
}

absl::StatusOr<std::vector<std::vector<std::string>>> SplitCsv(
    std::string_view text, std::string_view file_name) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool in_quotes = false;
  bool field_started = false;
  int line = 1;
  int quote_line = 0;
  auto end_field = [&] {
    record.push_back(std::move(field));
    field.clear();
    field_started = false;
  };
  auto end_record = [&] {
    end_field();
    if (!(record.size() == 1 && record[0].empty())) records.push_back(std::move(record));
    record.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_quotes) {
      if (ch == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field.push_back('"');
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        if (ch == '\n') ++line;
        field.push_back(ch);
      }
      continue;
    }
    switch (ch) {
      case '"':
        if (field_started) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "%s:%d: a quote inside an unquoted field", file_name, line));
        }
        in_quotes = true;
        field_started = true;
        quote_line = line;
        break;
      case ',':
        end_field();
        break;
      case '\r':
        break;
      case '\n':
        end_record();
        ++line;
        break;
      default:
        field.push_back(ch);
        field_started = true;
    }
  }
  if (in_quotes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s:%d: quoted field never closed", file_name, quote_line));
  }
  if (field_started || !record.empty()) end_record();
  return records;
}

std::string CsvField(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

namespace {

absl::Status FieldError(std::string_view file, int line, std::string_view column,
                        std::string_view want, std::string_view got) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s:%d: column %s: expected %s, got \"%s\"", file, line, column, want, got));
}

}  // namespace

absl::StatusOr<std::vector<MeasurementRow>> ParseMeasurementsCsv(
    std::string_view text, std::string_view file_name) {
  absl::StatusOr<std::vector<std::vector<std::string>>> records =
      SplitCsv(text, file_name);
  if (!records.ok()) return records.status();
  if (records->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(file_name), ": empty file, expected a header row"));
  }
  std::map<std::string, size_t> index;
  const std::vector<std::string>& header = records->front();
  for (size_t i = 0; i < header.size(); ++i) {
    index[std::string(absl::StripAsciiWhitespace(header[i]))] = i;
  }
  for (const std::string& col : MeasurementColumns()) {
    if (!index.contains(col)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s:1: header: missing column \"%s\"", file_name, col));
    }
  }
  std::vector<MeasurementRow> rows;
  for (size_t r = 1; r < records->size(); ++r) {
    const std::vector<std::string>& rec = (*records)[r];
    const int line = static_cast<int>(r + 1);  // approximate when fields hold newlines
    auto get = [&](const std::string& col) -> std::string {
      size_t i = index[col];
      return i < rec.size() ? std::string(absl::StripAsciiWhitespace(rec[i])) : "";
    };
    MeasurementRow row;
    row.line = line;
    row.id = get("id");
    row.hardware_id = get("hardware_id");
    row.model_id = get("model_id");
    row.weight_format = get("weight_format");
    row.kv_format = get("kv_format");
    row.framework = get("framework");
    row.metric = get("metric");
    row.unit = get("unit");
    row.source = get("source");
    row.note = get("note");
    if (row.id.empty()) return FieldError(file_name, line, "id", "a row id", "");

    auto opt_int = [&](const std::string& col,
                       std::optional<int64_t>* out) -> absl::Status {
      std::string v = get(col);
      if (v.empty()) return absl::OkStatus();
      int64_t x = 0;
      if (!absl::SimpleAtoi(v, &x) || x < 0) {
        return FieldError(file_name, line, col, "a non-negative integer or blank", v);
      }
      *out = x;
      return absl::OkStatus();
    };
    std::optional<int64_t> devices;
    if (auto st = opt_int("device_count", &devices); !st.ok()) return st;
    row.device_count = devices.value_or(1);
    if (auto st = opt_int("tensor_parallel", &row.tensor_parallel); !st.ok()) return st;
    if (auto st = opt_int("batch", &row.batch); !st.ok()) return st;
    if (auto st = opt_int("prompt_len", &row.prompt_len); !st.ok()) return st;
    if (auto st = opt_int("gen_len", &row.gen_len); !st.ok()) return st;

    std::string bits = get("weight_bits_effective");
    if (!bits.empty()) {
      double x = 0;
      if (!absl::SimpleAtod(bits, &x) || !(x > 0 && x <= 32)) {
        return FieldError(file_name, line, "weight_bits_effective",
                          "a number in (0, 32] or blank", bits);
      }
      row.weight_bits_effective = x;
    }
    std::string value = get("value");
    if (!absl::SimpleAtod(value, &row.value) || !(row.value > 0)) {
      return FieldError(file_name, line, "value", "a positive number", value);
    }
    std::string usable = get("usable");
    if (usable != "0" && usable != "1") {
      return FieldError(file_name, line, "usable", "0 or 1", usable);
    }
    row.usable = usable == "1";
    rows.push_back(std::move(row));
  }
  return rows;
}

absl::StatusOr<std::vector<MeasurementRow>> ReadMeasurementsCsv(
    const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat(path.string(), ": cannot open measurements file"));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseMeasurementsCsv(ss.str(), path.string());
}

}  // namespace ridgeline::calibration
