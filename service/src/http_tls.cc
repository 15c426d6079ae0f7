#include "http_tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ridgeline::service {

struct HttpTls::Material {
  std::string text;  // the PEM files as read: a change means reload
  X509* leaf = nullptr;
  STACK_OF(X509)* chain = nullptr;  // intermediates after the leaf
  EVP_PKEY* key = nullptr;
  X509_STORE* client_ca = nullptr;  // null without mutual TLS

  Material() = default;
  Material(const Material&) = delete;
  Material& operator=(const Material&) = delete;
  ~Material() {
    X509_free(leaf);
    sk_X509_pop_free(chain, X509_free);
    EVP_PKEY_free(key);
    X509_STORE_free(client_ca);
  }
};

namespace {

using Clock = std::chrono::steady_clock;

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
std::unique_ptr<BIO, BioFree> Bio(const std::string& pem) {
  return std::unique_ptr<BIO, BioFree>(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

std::string OpenSslError() {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "no usable PEM block";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

absl::StatusOr<std::shared_ptr<const HttpTls::Material>> Parse(
    const TlsSettings& s, const TlsPem& pem) {
  auto bad = [](const std::string& flag, const std::string& path,
                const std::string& why) {
    return absl::FailedPreconditionError(
        absl::StrCat(flag, ": \"", path, "\": ", why));
  };
  auto m = std::make_shared<HttpTls::Material>();
  m->text = absl::StrCat(pem.cert_chain, pem.private_key, pem.client_ca);
  auto certs = Bio(pem.cert_chain);
  m->leaf = PEM_read_bio_X509(certs.get(), nullptr, nullptr, nullptr);
  if (m->leaf == nullptr) return bad("--tls-cert", s.cert_path, OpenSslError());
  m->chain = sk_X509_new_null();
  while (X509* x = PEM_read_bio_X509(certs.get(), nullptr, nullptr, nullptr)) {
    sk_X509_push(m->chain, x);
  }
  ERR_clear_error();  // the end of the file reads as an error
  auto key = Bio(pem.private_key);
  m->key = PEM_read_bio_PrivateKey(key.get(), nullptr, nullptr, nullptr);
  if (m->key == nullptr) return bad("--tls-key", s.key_path, OpenSslError());
  if (X509_check_private_key(m->leaf, m->key) != 1) {
    ERR_clear_error();
    return bad("--tls-key", s.key_path,
               "does not match the certificate of --tls-cert");
  }
  if (s.mutual()) {
    m->client_ca = X509_STORE_new();
    auto cas = Bio(pem.client_ca);
    int n = 0;
    while (X509* x = PEM_read_bio_X509(cas.get(), nullptr, nullptr, nullptr)) {
      X509_STORE_add_cert(m->client_ca, x);
      X509_free(x);
      ++n;
    }
    ERR_clear_error();
    if (n == 0) {
      return bad("--tls-client-ca", s.client_ca_path, "no certificate in it");
    }
  }
  return std::shared_ptr<const HttpTls::Material>(std::move(m));
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             Clock::now().time_since_epoch())
      .count();
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpTls>> HttpTls::Create(TlsSettings settings) {
  absl::StatusOr<TlsPem> pem = LoadTlsPem(settings);
  if (!pem.ok()) return pem.status();
  absl::StatusOr<std::shared_ptr<const Material>> m = Parse(settings, *pem);
  if (!m.ok()) return m.status();
  std::unique_ptr<HttpTls> tls(new HttpTls(std::move(settings)));
  tls->current_ = *std::move(m);
  tls->next_check_ns_ = NowNs() + tls->settings_.reload_seconds * 1000000000;
  return tls;
}

HttpTls::~HttpTls() = default;

bool HttpTls::Setup(ssl_ctx_st* ctx) {
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) return false;
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_TICKET |
                               SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_cert_cb(ctx, &HttpTls::OnCertificate, this);
  if (settings_.mutual()) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                       nullptr);
  }
  return true;
}

// Called in each handshake before the server's certificate is sent (and
// before the client's is asked for): this connection's certificate, key,
// chain and client CA store are the current files'.
int HttpTls::OnCertificate(ssl_st* ssl, void* self) {
  auto* tls = static_cast<HttpTls*>(self);
  tls->MaybeReload();
  std::shared_ptr<const Material> m = tls->current();
  // Each call takes its own reference; `m` may go once the handshake holds.
  if (SSL_use_certificate(ssl, m->leaf) != 1 ||
      SSL_use_PrivateKey(ssl, m->key) != 1 ||
      SSL_set1_chain(ssl, m->chain) != 1) {
    return 0;
  }
  if (m->client_ca != nullptr &&
      SSL_set1_verify_cert_store(ssl, m->client_ca) != 1) {
    return 0;
  }
  return 1;
}

std::shared_ptr<const HttpTls::Material> HttpTls::current() {
  std::lock_guard<std::mutex> lock(mu_);
  return current_;
}

void HttpTls::MaybeReload() {
  const int64_t now = NowNs();
  if (now < next_check_ns_.load()) return;
  std::unique_lock<std::mutex> reload(reload_mu_, std::try_to_lock);
  if (!reload.owns_lock()) return;  // another handshake is re-reading
  next_check_ns_ = now + settings_.reload_seconds * 1000000000;
  absl::StatusOr<TlsPem> pem = LoadTlsPem(settings_);
  absl::Status failed;
  if (pem.ok()) {
    if (absl::StrCat(pem->cert_chain, pem->private_key, pem->client_ca) ==
        current()->text) {
      return;  // unchanged
    }
    absl::StatusOr<std::shared_ptr<const Material>> m = Parse(settings_, *pem);
    if (m.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      current_ = *std::move(m);
      std::fprintf(stderr, "ridgeline-server: HTTPS certificate reloaded\n");
      return;
    }
    failed = m.status();
  } else {
    failed = pem.status();
  }
  // Half-written files during a rotation are normal: keep serving the
  // previous pair and look again next period.
  std::fprintf(stderr,
               "ridgeline-server: HTTPS certificate reload failed, keeping "
               "the previous one: %s\n",
               std::string(failed.message()).c_str());
}

}  // namespace ridgeline::service
