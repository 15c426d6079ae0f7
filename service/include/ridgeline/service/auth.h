// Optional bearer-token authentication (--auth-token-file): the token is
// read from a file at start and again on Reload() (SIGHUP); a call passes
// when it carries "authorization: Bearer <token>". The comparison takes the
// same time whatever the bytes, so timing does not reveal a prefix. Which
// calls need the token is auth_policy.h's table. Shared by the frontends;
// thread-safe (Check and Reload may run concurrently).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace ridgeline::service {

class BearerAuth {
 public:
  // Disabled: every call passes.
  BearerAuth() = default;
  // The file's first line (surrounding whitespace dropped) is the token;
  // FAILED_PRECONDITION when unreadable, INVALID_ARGUMENT when it has fewer
  // than 16 characters.
  static absl::StatusOr<BearerAuth> FromFile(const std::string& path);

  bool enabled() const { return state_ != nullptr; }
  // True when disabled, or `authorization` is "Bearer <token>".
  bool Check(std::string_view authorization) const;
  // Re-reads the file given to FromFile: from now on only its token passes.
  // On an error (as FromFile's) the current token stays. OK when disabled.
  absl::Status Reload();

 private:
  struct State {
    std::string path;
    mutable absl::Mutex mu;
    std::string token;  // guarded by mu
  };
  static absl::StatusOr<std::string> ReadToken(const std::string& path);
  std::unique_ptr<State> state_;  // null: disabled
};

}  // namespace ridgeline::service
