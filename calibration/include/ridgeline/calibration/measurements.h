// Rows of a measurement file in the schema of
// ../shared/data/measurements/calibration.csv (see data/README.md): one
// published (or micro-benchmarked) number per row. Plain data.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace ridgeline::calibration {

struct MeasurementRow {
  std::string id;  // "m001"
  std::string hardware_id;
  int64_t device_count = 1;
  std::optional<int64_t> tensor_parallel;
  std::string model_id;  // catalog id, or "attention-decode-kernel" / "gemm-kernel"
  std::string weight_format;
  std::optional<double> weight_bits_effective;
  std::string kv_format;
  std::optional<int64_t> batch;       // blank: runtime-chosen
  std::optional<int64_t> prompt_len;  // kernel rows: KV length
  std::optional<int64_t> gen_len;
  std::string framework;
  std::string metric;  // decode_tok_s, prefill_tok_s, ttft_ms, tpot_ms, ...
  double value = 0;
  std::string unit;    // tok/s, ms, us
  bool usable = false;
  std::string source;
  std::string note;
  int line = 0;  // 1-based line in the file, for messages
};

// The column names, in file order.
const std::vector<std::string>& MeasurementColumns();

// RFC 4180 CSV with a header row holding at least the columns above (in any
// order; extra columns are ignored). Errors name the file, line and column.
absl::StatusOr<std::vector<MeasurementRow>> ParseMeasurementsCsv(
    std::string_view text, std::string_view file_name);
absl::StatusOr<std::vector<MeasurementRow>> ReadMeasurementsCsv(
    const std::filesystem::path& path);

// Splits one CSV document into records of fields (RFC 4180 quoting).
absl::StatusOr<std::vector<std::vector<std::string>>> SplitCsv(
    std::string_view text, std::string_view file_name);

// Quotes a field for CSV output when it needs it.
std::string CsvField(std::string_view s);

}  // namespace ridgeline::calibration
