#include "ridgeline/service/http_frontend.h"

#include <filesystem>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "http_metrics.h"
#include "http_router.h"
#include "http_server.h"
#include "http_tls.h"
#include "ridgeline/plugin_host/registry.h"

namespace ridgeline::service {

int HttpStatusOf(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted:
      return 409;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kCancelled:
      return 499;
    case absl::StatusCode::kUnimplemented:
      return 501;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

std::string FieldOf(absl::string_view message) {
  auto is_path = [](absl::string_view p) {
    if (p.empty()) return false;
    for (char c : p) {
      if (!(absl::ascii_isalnum(c) || c == '_' || c == '.' || c == '[' ||
            c == ']' || c == '-')) {
        return false;
      }
    }
    return true;
  };
  // "workload.batch: must be ..." (the Backend's range errors).
  if (const size_t colon = message.find(": ");
      colon != absl::string_view::npos && is_path(message.substr(0, colon))) {
    return std::string(message.substr(0, colon));
  }
  // "parallelism.tensor_parallel must divide ..." (engine rules that name
  // the field as the subject): a dotted path as the first word.
  const absl::string_view word = message.substr(0, message.find(' '));
  if (word.size() < message.size() && is_path(word) &&
      word.find('.') != absl::string_view::npos) {
    return std::string(word);
  }
  return "";
}

absl::StatusOr<double> ParseGrpcTimeout(absl::string_view value) {
  auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "grpc-timeout: must be 1..8 digits and a unit H, M, S, m, u or n "
        "(e.g. \"500m\"); got \"",
        value.substr(0, 32), "\""));
  };
  if (value.size() < 2 || value.size() > 9) return bad();
  int64_t n = 0;
  if (!absl::SimpleAtoi(value.substr(0, value.size() - 1), &n) || n < 0) {
    return bad();
  }
  for (char c : value.substr(0, value.size() - 1)) {
    if (!absl::ascii_isdigit(c)) return bad();
  }
  switch (value.back()) {
    case 'H':
      return n * 3600.0;
    case 'M':
      return n * 60.0;
    case 'S':
      return static_cast<double>(n);
    case 'm':
      return n * 1e-3;
    case 'u':
      return n * 1e-6;
    case 'n':
      return n * 1e-9;
    default:
      return bad();
  }
}

std::string DefaultWebDir() {
  std::error_code ec;
  for (const std::filesystem::path& dir :
       {plugin_host::InstallPrefixPath(RIDGELINE_WEB_INSTALL_DIR),
        std::filesystem::path(RIDGELINE_SOURCE_WEB_DIR),
        std::filesystem::path(RIDGELINE_DEFAULT_WEB_DIR)}) {
    if (!dir.empty() &&
        std::filesystem::is_regular_file(dir / "index.html", ec)) {
      return dir.string();
    }
  }
  return "";
}

HttpFrontend::HttpFrontend(HttpOptions options,
                           std::function<const Backend*()> backend,
                           Metrics* metrics)
    : options_(std::move(options)),
      backend_(std::move(backend)),
      metrics_(metrics) {
  if (metrics_ != nullptr) {
    http_metrics_ = std::make_unique<HttpMetrics>(*metrics_->registry());
  }
}

HttpFrontend::~HttpFrontend() { Stop(); }

absl::StatusOr<int> HttpFrontend::Start() {
  HttpRouterOptions routing;
  if (!options_.web_dir.empty()) {
    // Files are served from the folder's real path, and only files whose
    // own real path is inside it.
    std::error_code ec;
    const std::filesystem::path root =
        std::filesystem::canonical(options_.web_dir, ec);
    if (ec || !std::filesystem::is_directory(root, ec)) {
      return absl::InvalidArgumentError(
          absl::StrCat("web UI folder not found: ", options_.web_dir));
    }
    routing.web_root = root.string();
  }
  routing.auth = options_.auth;
  routing.timeout_seconds = options_.timeout_seconds;
  routing.allowed_origins = options_.allowed_origins;
  router_ =
      std::make_unique<HttpRouter>(std::move(routing), backend_, metrics_,
                                   http_metrics_.get(), &draining_, &stopping_);

  HttpServerOptions server;
  const size_t colon = options_.listen.rfind(':');
  server.host = options_.listen.substr(0, colon);
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(options_.listen.substr(colon + 1), &server.port)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "HTTP listen address: expected HOST:PORT, got ", options_.listen));
  }
  if (server.host.size() >= 2 && server.host.front() == '[' &&
      server.host.back() == ']') {
    server.host = server.host.substr(1, server.host.size() - 2);
  }
  server.limits.max_body_bytes = options_.max_body_bytes;
  server.threads = options_.threads;
  server.max_connections = options_.max_connections;
  server.read_timeout_seconds = options_.read_timeout_seconds;
  if (options_.tls.enabled()) {
    absl::StatusOr<std::unique_ptr<HttpTls>> tls =
        HttpTls::Create(options_.tls);
    if (!tls.ok()) return tls.status();
    tls_ = *std::move(tls);
    server.tls_setup = [this](ssl_ctx_st* ctx) { return tls_->Setup(ctx); };
  }
  server_ = std::make_unique<HttpServer>(std::move(server), *router_);
  return server_->Start();
}

void HttpFrontend::ReloadTls() {
  if (tls_ != nullptr) tls_->ReloadAtNextHandshake();
}

void HttpFrontend::Stop() {
  stopping_.store(true);
  draining_.store(true);
  if (server_ != nullptr) server_->Stop();
}

}  // namespace ridgeline::service
