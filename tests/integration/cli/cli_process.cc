#include "cli_process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ridgeline::testing {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

CliRun RunCliBinary(const std::vector<std::string>& args) {
  char out_path[] = "/tmp/ridgeline-cli-out-XXXXXX";
  char err_path[] = "/tmp/ridgeline-cli-err-XXXXXX";
  const int out_fd = mkstemp(out_path);
  const int err_fd = mkstemp(err_path);
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
  CliRun run;
  run.exit_code =
      WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.out = Slurp(out_path);
  run.err = Slurp(err_path);
  unlink(out_path);
  unlink(err_path);
  return run;
}

}  // namespace ridgeline::testing
