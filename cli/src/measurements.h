// `ridgeline measurements import`: a serving benchmark's result file as
// measurement rows (calibration/benchmark_import.h), printed as CSV for
// `ridgeline validate` / `ridgeline calibrate`.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace ridgeline::cli {

// `args` excludes the program name and "measurements". Returns 0 ok (or
// --help), 1 a file that cannot be imported, 2 a usage error.
int MeasurementsCli(const std::vector<std::string>& args, std::ostream& out,
                    std::ostream& err);

}  // namespace ridgeline::cli
