// Test harness: runs the real ridgeline-server binary as a child process on
// 127.0.0.1 with ports 0, reads the bound ports from its stdout, and kills
// it when destroyed. Also a tiny HTTP GET for the metrics port. Not
// thread-safe; one per test.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "grpcpp/grpcpp.h"

namespace ridgeline::testing {

class ServerProcess {
 public:
  // Starts the server with --listen=127.0.0.1:0 --metrics-listen=127.0.0.1:0
  // --plugin-dir=<build plugins> plus `extra_args`; waits for both ports
  // (and the HTTP port when `extra_args` has --http-listen).
  // On failure, ok() is false and error() says why.
  explicit ServerProcess(const std::vector<std::string>& extra_args = {});
  ~ServerProcess();

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  int port() const { return port_; }
  int metrics_port() const { return metrics_port_; }
  int http_port() const { return http_port_; }  // 0 without --http-listen
  pid_t pid() const { return pid_; }
  std::string address() const;
  std::shared_ptr<grpc::Channel> Channel() const;

  // Sends a signal to the child.
  void Signal(int sig) const;
  // Waits for the child to exit; nullopt on timeout. Returns the exit code
  // (or 128 + signal).
  std::optional<int> WaitExit(std::chrono::milliseconds timeout);

 private:
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  int port_ = 0;
  int metrics_port_ = 0;
  int http_port_ = 0;
  bool exited_ = false;
  std::string error_;
};

// Waits until grpc.health.v1 Check("") answers SERVING; false on timeout.
bool WaitServing(const std::shared_ptr<grpc::Channel>& channel,
                 std::chrono::milliseconds timeout);

// GET http://127.0.0.1:port/path; returns the body ("" on failure).
std::string HttpGet(int port, const std::string& path);

// The value of the exposition-format series whose line starts with
// `name{` and contains every `label="value"` given; nullopt when absent.
std::optional<double> MetricValue(const std::string& exposition,
                                  const std::string& name,
                                  const std::vector<std::string>& labels);

// Runs the server binary with `args` to completion; returns exit code and
// combined output.
int RunServerBinary(const std::vector<std::string>& args, std::string* output);

}  // namespace ridgeline::testing
