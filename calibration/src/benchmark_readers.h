// The five benchmark-file readers behind ImportBenchmark
// (benchmark_import.h): each turns the parsed JSON documents of one tool's
// result file into runs of (load, workload, statistics) in the schema's
// metric names and units. Private to ridgeline::calibration.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace ridgeline::calibration::benchmark {

// One statistic of a run: `metric` in the schema's names (ttft_ms,
// ttft_p99_ms, throughput_tok_s ...), `value` in `unit` (ms or tok/s),
// `field` the file's own key it came from and `meaning` how that tool
// defines it (for the row's note).
struct Stat {
  std::string metric;
  double value = 0;
  std::string unit;
  std::string field;
  std::string meaning;
};

// One benchmark run (a line of a JSONL file, a GuideLLM benchmark).
struct Run {
  std::string label;        // "line 2", "benchmarks[1]"
  std::string concurrency;  // "max", "rate=R/s", "N"
  std::string load_note;    // how `concurrency` was read
  double mean_prompt_tokens = 0;
  double mean_output_tokens = 0;
  std::string lengths_note;  // how the lengths were read
  std::string framework;     // the server runtime the file names, or ""
  std::vector<Stat> stats;
};

// Each returns INVALID_ARGUMENT naming (as its field path) the first field
// a row needs that the document lacks or holds with a wrong type or range,
// prefixed by the run's label.
absl::StatusOr<std::vector<Run>> ReadVllmBench(
    const std::vector<nlohmann::json>& docs);
absl::StatusOr<std::vector<Run>> ReadSglangBench(
    const std::vector<nlohmann::json>& docs);
absl::StatusOr<std::vector<Run>> ReadGuidellm(
    const std::vector<nlohmann::json>& docs);
absl::StatusOr<std::vector<Run>> ReadGenaiPerf(
    const std::vector<nlohmann::json>& docs);
absl::StatusOr<std::vector<Run>> ReadAiperf(
    const std::vector<nlohmann::json>& docs);

}  // namespace ridgeline::calibration::benchmark
