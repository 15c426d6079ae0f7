// `ridgeline validate` and `ridgeline calibrate`: their flags, usage text and
// usage errors. The work itself is ridgeline::calibration (commands.h).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace ridgeline::cli {

// `args` excludes the program name and the subcommand. Return the process
// exit code: 0 ok (or --help / -h), 1 failure, 2 usage error.
int ValidateCli(const std::vector<std::string>& args, std::ostream& out,
                std::ostream& err);
int CalibrateCli(const std::vector<std::string>& args, std::ostream& out,
                 std::ostream& err);

}  // namespace ridgeline::cli
