// `ridgeline measurements import`: the result files of serving benchmark
// clients (vLLM `vllm bench serve --save-result`, SGLang `bench_serving
// --output-file`, GuideLLM `benchmarks.json`, genai-perf
// `profile_export_genai_perf.json`, AIPerf `profile_export_aiperf.json`) as
// rows of the serving measurement schema (data/measurements/serving.csv:
// the calibration.csv columns plus `concurrency`), which `ridgeline
// validate` and `ridgeline calibrate` read. Plain data; no I/O but the
// stream a caller passes.
//
// Metric names: the mean of a quantity keeps the schema's name (ttft_ms,
// tpot_ms, e2e_latency_ms, throughput_tok_s; itl_ms for the pooled
// inter-chunk gaps of vLLM and SGLang); a percentile puts pNN before the
// unit (ttft_p99_ms, tpot_p50_ms). The tools' own names map by definition,
// not by spelling (docs/validation.md has the table): genai-perf's and
// AIPerf's inter_token_latency and GuideLLM's inter_token_latency_ms are
// the per-request (latency - TTFT) / (output - 1), vLLM's TPOT.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ridgeline/calibration/measurements.h"

namespace ridgeline::calibration {

// The --from values, in the order usage messages list them.
const std::vector<std::string>& BenchmarkFormats();

struct ImportOptions {
  std::string from;         // one of BenchmarkFormats()
  std::string model_id;     // catalog id (checked)
  std::string hardware_id;  // checked by validate / calibrate (plugins)
  int64_t tensor_parallel = 1;
  std::optional<std::string> framework;  // default: by format (see .cc)
  // The files do not state the formats the server ran; these are the
  // caller's (bf16 weights, and an unknown KV format, which validation
  // reads as the narrowest the run could have used) unless given.
  std::string weight_format = "bf16";
  std::string kv_format = "unknown";
  std::string id_prefix;  // default: the format name
  std::string file_name;  // for `source` and messages
};

// One imported row and its `concurrency` cell ("max", "rate=R/s", "N").
struct ImportedRow {
  MeasurementRow row;
  std::string concurrency;
};

// Every row of every run in `text`, or the first error: INVALID_ARGUMENT
// naming the file, the run and the field (as the status' field path) that
// a row needs and the file lacks. All or nothing: no rows on error.
absl::StatusOr<std::vector<ImportedRow>> ImportBenchmark(
    std::string_view text, const ImportOptions& options);

// The rows as a serving measurement CSV: MeasurementColumns() then
// `concurrency`, one header row.
void WriteServingCsv(const std::vector<ImportedRow>& rows, std::ostream& out);

}  // namespace ridgeline::calibration
