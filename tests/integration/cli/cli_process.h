// Runs the `ridgeline` binary under test (RIDGELINE_CLI_BIN) as a child
// process, as a user's shell would.
#pragma once

#include <string>
#include <vector>

namespace ridgeline::testing {

struct CliRun {
  int exit_code = -1;  // 128 + the signal when it was killed
  std::string out;
  std::string err;
};

// stdout and stderr are captured separately. RIDGELINE_PLUGIN_DIR and
// RIDGELINE_PROFILE_DIR are unset, so only flags decide where plugins and
// profiles come from.
CliRun RunCliBinary(const std::vector<std::string>& args);

// The whole file (empty if it cannot be read).
std::string Slurp(const std::string& path);

}  // namespace ridgeline::testing
