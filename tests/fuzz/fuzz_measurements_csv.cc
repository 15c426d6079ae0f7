// Fuzz target: the measurement CSV reader and what `ridgeline validate` does
// with its rows: parse (RFC 4180), map each usable row onto the engine
// against the real plugin registry, predict it under the real profiles.
// Also checks that CsvField quotes a field so SplitCsv reads it back.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_backend.h"
#include "ridgeline/calibration/measurements.h"
#include "ridgeline/calibration/validation.h"

namespace {

// Rows evaluated per input: each costs one analysis, and files of
// thousands of rows are legitimate but slow.
constexpr size_t kMaxEvaluatedRows = 8;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)ridgeline::fuzz::FuzzBackend();  // load plugins outside the timer
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace cal = ridgeline::calibration;
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  auto records = cal::SplitCsv(text, "fuzz.csv");
  if (records.ok() && !records->empty() && !records->front().empty()) {
    // Round trip of the first record through the writer.
    std::string line;
    for (size_t i = 0; i < records->front().size(); ++i) {
      if (i) line += ',';
      line += cal::CsvField(records->front()[i]);
    }
    auto again = cal::SplitCsv(line, "again.csv");
    if (!again.ok() || again->empty() ||
        again->front() != records->front()) {
      std::fprintf(stderr, "fuzz: CsvField/SplitCsv round trip differs\n");
      std::abort();
    }
  }

  auto rows = cal::ParseMeasurementsCsv(text, "fuzz.csv");
  if (!rows.ok()) return 0;
  if (rows->size() > kMaxEvaluatedRows) rows->resize(kMaxEvaluatedRows);
  const auto& registry = ridgeline::fuzz::FuzzBackend().registry();
  cal::HardwareLookup lookup =
      [&registry](std::string_view id)
      -> absl::StatusOr<ridgeline::engine::Hardware> {
    auto hw = registry.Find(id);
    if (!hw.ok()) return hw.status();
    return **hw;
  };
  (void)cal::EvaluateRows(*rows, lookup, &ridgeline::fuzz::FuzzProfiles());
  return 0;
}
