#include "ridgeline/service/auth.h"

#include <fstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace ridgeline::service {

absl::StatusOr<BearerAuth> BearerAuth::FromFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::FailedPreconditionError(
        absl::StrCat("--auth-token-file: cannot read \"", path, "\""));
  }
  std::string line;
  std::getline(in, line);
  BearerAuth auth;
  auth.token_ = std::string(absl::StripAsciiWhitespace(line));
  if (auth.token_.size() < 16) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--auth-token-file: the token in \"", path,
        "\" must have at least 16 characters; got ", auth.token_.size()));
  }
  return auth;
}

bool BearerAuth::Check(std::string_view authorization) const {
  if (token_.empty()) return true;
  constexpr std::string_view kScheme = "Bearer ";
  if (authorization.substr(0, kScheme.size()) != kScheme) return false;
  const std::string_view given = authorization.substr(kScheme.size());
  // Constant time in the token's bytes: every byte is compared, and a
  // length mismatch only flips the result.
  unsigned char diff = given.size() == token_.size() ? 0 : 1;
  for (size_t i = 0; i < token_.size(); ++i) {
    const unsigned char g =
        i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    diff |= g ^ static_cast<unsigned char>(token_[i]);
  }
  return diff == 0;
}

}  // namespace ridgeline::service
