#include "staged_tls.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace ridgeline::service {
namespace {

// Writes `text` to `path` (mode 0600) by a rename, so a reader sees the old
// file or the new one, never a part.
absl::Status WriteAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".new";
  const int fd =
      open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  bool ok = fd >= 0;
  for (size_t done = 0; ok && done < text.size();) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  if (fd >= 0 && close(fd) != 0) ok = false;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    unlink(tmp.c_str());
    return absl::InternalError(absl::StrCat("cannot write \"", path, "\""));
  }
  return absl::OkStatus();
}

}  // namespace

StagedTlsFiles::StagedTlsFiles(TlsSettings configured, std::string dir)
    : configured_(std::move(configured)), dir_(std::move(dir)) {
  staged_ = configured_;
  staged_.key_path = dir_ + "/key.pem";
  staged_.cert_path = dir_ + "/cert.pem";
  if (configured_.mutual()) staged_.client_ca_path = dir_ + "/client-ca.pem";
  staged_.reload_seconds = kPollSeconds;
}

absl::StatusOr<std::unique_ptr<StagedTlsFiles>> StagedTlsFiles::Create(
    TlsSettings configured) {
  const char* tmpdir = getenv("TMPDIR");
  std::string pattern =
      absl::StrCat(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp",
                   "/ridgeline-tls-XXXXXX");
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {  // mode 0700
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create a private folder like ", pattern));
  }
  std::unique_ptr<StagedTlsFiles> s(
      new StagedTlsFiles(std::move(configured), buf.data()));
  if (absl::Status st = s->Refresh(); !st.ok()) return st;
  return s;
}

StagedTlsFiles::~StagedTlsFiles() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

absl::Status StagedTlsFiles::Refresh() {
  absl::StatusOr<TlsPem> pem = LoadTlsPem(configured_);
  if (!pem.ok()) return pem.status();
  std::lock_guard<std::mutex> lock(mu_);
  if (pem->private_key == last_.private_key &&
      pem->cert_chain == last_.cert_chain &&
      pem->client_ca == last_.client_ca) {
    return absl::OkStatus();
  }
  // The key first: gRPC ignores a key that does not match the certificate
  // until the matching certificate arrives.
  for (const auto& [path, text] :
       {std::pair{staged_.key_path, &pem->private_key},
        std::pair{staged_.cert_path, &pem->cert_chain},
        std::pair{staged_.client_ca_path, &pem->client_ca}}) {
    if (path.empty()) continue;
    if (absl::Status s = WriteAtomically(path, *text); !s.ok()) return s;
  }
  last_ = *std::move(pem);
  return absl::OkStatus();
}

}  // namespace ridgeline::service
