// Fuzz target: `ridgeline measurements import` on arbitrary bytes. The first
// byte picks the --from format (vllm-bench, sglang-bench, guidellm,
// genai-perf, aiperf); the rest is the result file. Every outcome is an
// error or rows; rows must write as CSV that the measurement reader reads
// back to the same ids and values (what validate / calibrate then see).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>

#include "ridgeline/calibration/benchmark_import.h"
#include "ridgeline/calibration/measurements.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace cal = ridgeline::calibration;
  if (size == 0) return 0;
  const auto& formats = cal::BenchmarkFormats();
  cal::ImportOptions options;
  options.from = formats[data[0] % formats.size()];
  options.model_id = "llama-3.1-8b";
  options.hardware_id = "nvidia-h100-sxm-80gb";
  options.file_name = "fuzz.json";
  const std::string_view text(reinterpret_cast<const char*>(data) + 1,
                              size - 1);
  auto rows = cal::ImportBenchmark(text, options);
  if (!rows.ok()) return 0;
  std::ostringstream csv;
  cal::WriteServingCsv(*rows, csv);
  auto back = cal::ParseMeasurementsCsv(csv.str(), "import.csv");
  if (!back.ok() || back->size() != rows->size()) {
    std::fprintf(stderr, "fuzz: imported rows do not read back: %s\n",
                 back.ok() ? "row count differs"
                           : std::string(back.status().message()).c_str());
    std::abort();
  }
  for (size_t i = 0; i < rows->size(); ++i) {
    if ((*back)[i].id != (*rows)[i].row.id ||
        (*back)[i].value != (*rows)[i].row.value) {
      std::fprintf(stderr, "fuzz: row %zu reads back differently\n", i);
      std::abort();
    }
  }
  return 0;
}
