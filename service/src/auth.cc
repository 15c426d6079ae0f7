#include "ridgeline/service/auth.h"

#include <fstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace ridgeline::service {

absl::StatusOr<std::string> BearerAuth::ReadToken(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::FailedPreconditionError(
        absl::StrCat("--auth-token-file: cannot read \"", path, "\""));
  }
  std::string line;
  std::getline(in, line);
  std::string token(absl::StripAsciiWhitespace(line));
  if (token.size() < 16) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--auth-token-file: the token in \"", path,
        "\" must have at least 16 characters; got ", token.size()));
  }
  return token;
}

absl::StatusOr<BearerAuth> BearerAuth::FromFile(const std::string& path) {
  absl::StatusOr<std::string> token = ReadToken(path);
  if (!token.ok()) return token.status();
  BearerAuth auth;
  auth.state_ = std::make_unique<State>();
  auth.state_->path = path;
  auth.state_->token = *std::move(token);
  return auth;
}

absl::Status BearerAuth::Reload() {
  if (state_ == nullptr) return absl::OkStatus();
  absl::StatusOr<std::string> token = ReadToken(state_->path);
  if (!token.ok()) return token.status();
  absl::MutexLock lock(&state_->mu);
  state_->token = *std::move(token);
  return absl::OkStatus();
}

bool BearerAuth::Check(std::string_view authorization) const {
  if (state_ == nullptr) return true;
  constexpr std::string_view kScheme = "Bearer ";
  if (authorization.substr(0, kScheme.size()) != kScheme) return false;
  const std::string_view given = authorization.substr(kScheme.size());
  absl::ReaderMutexLock lock(&state_->mu);
  const std::string& token = state_->token;
  // Constant time in the token's bytes: every byte is compared, and a
  // length mismatch only flips the result.
  unsigned char diff = given.size() == token.size() ? 0 : 1;
  for (size_t i = 0; i < token.size(); ++i) {
    const unsigned char g =
        i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    diff |= g ^ static_cast<unsigned char>(token[i]);
  }
  return diff == 0;
}

}  // namespace ridgeline::service
