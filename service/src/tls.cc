#include "ridgeline/service/tls.h"

#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace ridgeline::service {
namespace {

absl::StatusOr<std::string> ReadPem(const std::string& flag,
                                    const std::string& path,
                                    const char* block) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::FailedPreconditionError(
        absl::StrCat(flag, ": cannot read \"", path, "\""));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string pem = ss.str();
  if (!absl::StrContains(pem, "-----BEGIN ") ||
      !absl::StrContains(pem, block)) {
    return absl::FailedPreconditionError(
        absl::StrCat(flag, ": \"", path, "\" holds no PEM ", block, " block"));
  }
  return pem;
}

}  // namespace

absl::StatusOr<TlsPem> LoadTlsPem(const TlsSettings& s) {
  TlsPem pem;
  if (!s.enabled()) {
    if (!s.key_path.empty() || !s.client_ca_path.empty()) {
      return absl::InvalidArgumentError(
          "--tls-key and --tls-client-ca need --tls-cert");
    }
    return pem;
  }
  if (s.key_path.empty()) {
    return absl::InvalidArgumentError("--tls-cert needs --tls-key");
  }
  absl::StatusOr<std::string> cert =
      ReadPem("--tls-cert", s.cert_path, "CERTIFICATE");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key =
      ReadPem("--tls-key", s.key_path, "PRIVATE KEY");
  if (!key.ok()) return key.status();
  pem.cert_chain = *std::move(cert);
  pem.private_key = *std::move(key);
  if (s.mutual()) {
    absl::StatusOr<std::string> ca =
        ReadPem("--tls-client-ca", s.client_ca_path, "CERTIFICATE");
    if (!ca.ok()) return ca.status();
    pem.client_ca = *std::move(ca);
  }
  return pem;
}

}  // namespace ridgeline::service
