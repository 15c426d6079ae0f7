// TLS of the HTTP port with the gRPC port's files and rotation: --tls-cert
// and --tls-key, --tls-client-ca for mutual TLS (a client without a
// certificate the CA signed fails the handshake), and the files re-read at
// most every --tls-reload-seconds so a rotated certificate applies to new
// connections without a restart. The OpenSSL types stay in the .cc.
// Thread-safe: handshakes on any number of threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>

#include "absl/status/statusor.h"
#include "ridgeline/service/tls.h"

struct ssl_ctx_st;
struct ssl_st;

namespace ridgeline::service {

class HttpTls {
 public:
  // Reads and checks the files now (the key must match the certificate):
  // FAILED_PRECONDITION naming the flag and path when one cannot be used.
  static absl::StatusOr<std::unique_ptr<HttpTls>> Create(TlsSettings settings);
  ~HttpTls();

  // Configures a server context: TLS 1.2 or later, no session resumption
  // (every connection is checked against the current files), the
  // certificate chosen per handshake, and with a client CA the peer's
  // certificate required and verified.
  bool Setup(ssl_ctx_st* ctx);
  // The files are re-read at the next handshake (SIGHUP), whatever
  // reload_seconds say.
  void ReloadAtNextHandshake() { next_check_ns_.store(0); }

  struct Material;  // parsed certificate, chain, key and client CA store

 private:
  explicit HttpTls(TlsSettings settings) : settings_(std::move(settings)) {}
  static int OnCertificate(ssl_st* ssl, void* self);
  // Re-reads the files when reload_seconds have passed since the last
  // look; a pair that does not parse or match keeps the previous one.
  void MaybeReload();
  std::shared_ptr<const Material> current();

  const TlsSettings settings_;
  std::mutex mu_;                               // guards current_
  std::shared_ptr<const Material> current_;
  std::mutex reload_mu_;                        // one reload at a time
  std::atomic<int64_t> next_check_ns_{0};       // steady clock
};

}  // namespace ridgeline::service
