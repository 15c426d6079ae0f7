// The gRPC port's TLS files as gRPC reads them: private copies that the
// server refreshes from the configured files every --tls-reload-seconds and
// on SIGHUP. gRPC 1.51's FileWatcherCertificateProvider can only poll on a
// period and has no call to re-read now, so it polls the copies every
// second and a refresh applies within a second. The copies live in a fresh
// folder (mode 0700, files 0600) under $TMPDIR or /tmp, removed when this
// object is destroyed. Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ridgeline/service/tls.h"

namespace ridgeline::service {

class StagedTlsFiles {
 public:
  // The polling period of the provider reading the copies.
  static constexpr int kPollSeconds = 1;

  // Creates the folder and copies `configured` (which must be enabled; its
  // files as LoadTlsPem checks them).
  static absl::StatusOr<std::unique_ptr<StagedTlsFiles>> Create(
      TlsSettings configured);
  ~StagedTlsFiles();

  // The copies' paths, polled every kPollSeconds.
  const TlsSettings& staged() const { return staged_; }

  // Reads the configured files again; when they hold usable PEM blocks and
  // changed, replaces the copies (key first, each by an atomic rename).
  // An error names the flag and path; the copies then stay as they were.
  absl::Status Refresh();

 private:
  StagedTlsFiles(TlsSettings configured, std::string dir);

  const TlsSettings configured_;
  const std::string dir_;
  TlsSettings staged_;
  std::mutex mu_;  // one refresh at a time; guards last_
  TlsPem last_;
};

}  // namespace ridgeline::service
