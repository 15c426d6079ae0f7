// What every `ridgeline` command shares: exit codes, the outcome of a
// command, error messages that name the flag, output formats, the common
// flags and the client they choose (in-process or --server).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client.h"
#include "flags.h"
#include "google/protobuf/message.h"
#include "table.h"

namespace ridgeline::cli {

// Exit codes (see cli.h).
constexpr int kOk = 0;
constexpr int kFailed = 1;
constexpr int kUsage = 2;

enum class Format { kTable, kJson, kCsv };

// A usage error (exit 2) or a failed command (exit 1), with its message.
struct Failure {
  int code;
  std::string message;
};
using Outcome = std::optional<Failure>;

Failure Usage(const absl::Status& status);
Failure Usage(std::string message);

// A usage error when the command got a positional argument: analyze and
// sweep take flags only.
Outcome NoPositional(const ParsedFlags& flags);

// A failed request (exit 1): the status code and message, and the flag
// that sets the field the error names (from its field path).
Failure Failed(const absl::Status& status);

// The canonical proto3 JSON mapping, with every field printed even at its
// default (see common.cc).
std::string Json(const google::protobuf::Message& message);

// Full precision for machine-readable output.
std::string Raw(double value);

// The whole of a regular file; the error names `flag`.
absl::StatusOr<std::string> ReadFile(const char* flag, const std::string& path);

// --server, --plugin-dir, --profile-dir, --format, --timeout, --help.
const std::vector<FlagSpec>& CommonFlags();

struct Context {
  const ParsedFlags& flags;
  Format format = Format::kTable;
  std::unique_ptr<Client> client;
  std::ostream& out;
  std::ostream& err;
  TableStyle style() const {
    return format == Format::kCsv ? TableStyle::kCsv : TableStyle::kText;
  }
  bool csv() const { return format == Format::kCsv; }
};

// The client the common flags ask for: --server HOST:PORT with each RPC's
// deadline from --timeout (default `default_timeout`), or in-process with
// --plugin-dir / --profile-dir. A bad --server or --timeout is a usage
// error.
Outcome ClientFor(const ParsedFlags& flags,
                  std::chrono::seconds default_timeout,
                  std::unique_ptr<Client>* client);

// Reads --format and makes the client the common flags ask for (deadline
// 60 s); --plugin-dir or --profile-dir beside --server is a usage error.
Outcome MakeClient(Context& ctx);

}  // namespace ridgeline::cli
