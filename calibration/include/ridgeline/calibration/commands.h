// `ridgeline validate` and `ridgeline calibrate`, as functions the CLI
// dispatches to. argv excludes the program name and the subcommand.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace ridgeline::calibration {

// Return the process exit code (0 ok, 2 usage error, 1 failure).
int ValidateCommand(const std::vector<std::string>& args, std::ostream& out,
                    std::ostream& err);
int CalibrateCommand(const std::vector<std::string>& args, std::ostream& out,
                     std::ostream& err);

}  // namespace ridgeline::calibration
