// Test harness: runs the real ridgeline-server binary as a child process on
// 127.0.0.1 with ports 0, reads the bound ports from its stdout, and kills
// it when destroyed. Also a tiny HTTP GET for the metrics port. Not
// thread-safe; one per test.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
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
  // On failure, ok() is false and error() says why. `address_space_bytes`
  // > 0: the child runs under that RLIMIT_AS (as `prlimit --as` would).
  explicit ServerProcess(const std::vector<std::string>& extra_args = {},
                         uint64_t address_space_bytes = 0);
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

// How many times slower than an optimised build the binaries under test run:
// RIDGELINE_TEST_TIME_SCALE (scripts/sanitize.sh sets it for ASan + UBSan,
// which run 2-5x slower), at least 1; 1 when unset or not a number.
double TimeScale();

// A time limit that bounds how fast the server answers (a 100 ms probe, a
// startup wait), stretched by TimeScale(). Limits that are part of the
// behaviour under test (a server flag, a deadline the server must enforce)
// are never scaled.
std::chrono::milliseconds Scaled(std::chrono::milliseconds d);

}  // namespace ridgeline::testing
