// Runs the real `ridgeline` binary (RIDGELINE_CLI_BIN) as a child process
// and captures its exit code, stdout and stderr. The plugin and profile
// environment variables are cleared so flags alone decide.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ridgeline::testing {

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string SlurpFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline CliRun RunCliBinary(const std::vector<std::string>& args) {
  char out_path[] = "/tmp/ridgeline-cli-out-XXXXXX";
  char err_path[] = "/tmp/ridgeline-cli-err-XXXXXX";
  const int out_fd = mkstemp(out_path);
  const int err_fd = mkstemp(err_path);
  CliRun run;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    unsetenv("RIDGELINE_PLUGIN_DIR");
    unsetenv("RIDGELINE_PROFILE_DIR");
    std::vector<char*> argv{const_cast<char*>(RIDGELINE_CLI_BIN)};
    for (const std::string& a : args) {
      argv.push_back(const_cast<char*>(a.c_str()));
    }
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  close(out_fd);
  close(err_fd);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  run.out = SlurpFile(out_path);
  run.err = SlurpFile(err_path);
  unlink(out_path);
  unlink(err_path);
  return run;
}

}  // namespace ridgeline::testing
