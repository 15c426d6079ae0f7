// The `ridgeline` command-line client as a function, so tests can run it
// in-process as well as through the binary.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace ridgeline::cli {

// Runs one command line. `args` excludes the program name. Writes results to
// `out` and one-line errors to `err`. Returns the process exit code: 0 ok,
// 1 the command failed (the server or engine said no), 2 usage error (bad or
// missing flag). Never throws. Thread-compatible: loads plugins per call.
int RunCli(const std::vector<std::string>& args, std::ostream& out,
           std::ostream& err);

// The commands RunCli dispatches, in the order `ridgeline --help` lists
// them (one table serves both, so no command can be missing from the help).
struct CommandSummary {
  std::string name;
  std::string summary;
};
std::vector<CommandSummary> Commands();

}  // namespace ridgeline::cli
