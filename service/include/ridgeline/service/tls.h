// TLS settings of a listening port, shared by every frontend (gRPC here; the
// HTTP frontend reuses the same flags and loader). Plain data plus a loader
// of the PEM files; no gRPC or HTTP types.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace ridgeline::service {

// Paths as given by --tls-cert / --tls-key / --tls-client-ca (or
// RIDGELINE_TLS_CERT / _KEY / _CLIENT_CA). All empty: plaintext.
struct TlsSettings {
  std::string cert_path;       // PEM certificate chain, leaf first
  std::string key_path;        // PEM private key of the leaf
  std::string client_ca_path;  // PEM CA bundle; set: clients must present a
                               // certificate it signed (mutual TLS)
  // The files are re-read this often; a changed certificate applies to new
  // connections without a restart (rotation by cert-manager, Secrets).
  int64_t reload_seconds = 60;

  bool enabled() const { return !cert_path.empty(); }
  bool mutual() const { return !client_ca_path.empty(); }
};

// The files' contents, read now.
struct TlsPem {
  std::string cert_chain;
  std::string private_key;
  std::string client_ca;  // "" without mutual TLS
};

// INVALID_ARGUMENT naming the flag when the settings are inconsistent (a
// key without a certificate, a client CA without both) and
// FAILED_PRECONDITION naming the path when a file cannot be read or holds no
// PEM block of the expected kind.
absl::StatusOr<TlsPem> LoadTlsPem(const TlsSettings& settings);

}  // namespace ridgeline::service
