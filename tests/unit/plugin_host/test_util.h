// Helpers shared by the plugin_host tests: fixture paths and running a
// command while capturing its output.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>
#include <sys/wait.h>

namespace ridgeline::plugin_host::testing {

inline std::filesystem::path Fixture(const std::string& name) {
  return std::filesystem::path(RIDGELINE_FIXTURE_PLUGIN_DIR) /
         ("libridgeline-fixture-" + name + ".so");
}

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `command` through the shell (stderr merged into stdout).
inline CommandResult RunCommand(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    result.output.append(buffer, n);
  }
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

inline std::string Quote(const std::string& s) { return "'" + s + "'"; }

}  // namespace ridgeline::plugin_host::testing
