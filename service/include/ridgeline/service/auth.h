// Optional bearer-token authentication (--auth-token-file): the token is
// read from a file once at start; a call passes when it carries
// "authorization: Bearer <token>". The comparison takes the same time
// whatever the bytes, so timing does not reveal a prefix. Shared by the
// frontends. Immutable after construction; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace ridgeline::service {

class BearerAuth {
 public:
  // Disabled: every call passes.
  BearerAuth() = default;
  // The file's first line (surrounding whitespace dropped) is the token;
  // FAILED_PRECONDITION when unreadable, INVALID_ARGUMENT when it has fewer
  // than 16 characters.
  static absl::StatusOr<BearerAuth> FromFile(const std::string& path);

  bool enabled() const { return !token_.empty(); }
  // True when disabled, or `authorization` is "Bearer <token>".
  bool Check(std::string_view authorization) const;

 private:
  std::string token_;
};

}  // namespace ridgeline::service
