// The HTTP/JSON frontend's request handling, transport-free: a request as
// the server read it (method, target, headers, decoded body) in, a response
// out. Routes every RPC of RidgelineService, the probes and the web UI's
// static files; checks the bearer token, the Content-Type and Origin
// (cross-origin POSTs), the grpc-timeout deadline and the JSON's nesting.
// The server (http_server.h) owns sockets, limits and timeouts; the fuzz
// target drives the same router without a socket. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ridgeline/service/auth.h"
#include "ridgeline/service/backend.h"
#include "ridgeline/service/metrics.h"

namespace ridgeline::service {

class HttpMetrics;

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query as sent: "/v1/Analyze"
  HttpHeaders headers;
  std::string body;  // Content-Encoding already undone
  bool tls = false;  // arrived on the HTTPS port: same-origin is https://

  // The first header named `name` (case-insensitive), "" when absent.
  absl::string_view Header(absl::string_view name) const;
  bool HasHeader(absl::string_view name) const;
  // The target without its query string.
  absl::string_view Path() const;
};

// The body of a streaming response: serialized lines pulled without
// blocking, so a server can write them from an event loop.
class HttpStream {
 public:
  virtual ~HttpStream() = default;
  enum class Poll { kLine, kPending, kEnd };
  // kLine: *line is the next one. kPending: none yet (the wakeup will run).
  // kEnd: the body is complete.
  virtual Poll TryNext(std::string* line) = 0;
  // `wake` runs (on any thread) when TryNext may have something new.
  virtual void SetWakeup(std::function<void()> wake) = 0;
  // The client went away: the call stops within one item.
  virtual void Cancel() = 0;
};

struct HttpResponse {
  int status = 200;
  std::string content_type;
  std::string body;
  HttpHeaders headers;  // beyond Content-Type and Content-Length
  // Set: the body is these lines, sent chunked (body is unused).
  std::shared_ptr<HttpStream> stream;
};

// What the server asks of the code above it.
class HttpHandler {
 public:
  virtual ~HttpHandler() = default;
  // Answers without computing (probes, files, refusals): the server calls
  // Handle for these on its I/O threads, and the rest on its work pool.
  virtual bool Quick(const HttpRequest& req) const = 0;
  virtual HttpResponse Handle(const HttpRequest& req) const = 0;
  // The server's own refusal (413, 415, 431, 400, 503) as a JSON error.
  virtual HttpResponse Refuse(int http_status,
                              const absl::Status& why) const = 0;
  // Every answer, for http_server_requests_total; `req` is null when the
  // request line could not be read.
  virtual void Answered(const HttpRequest* req, int http_status) const = 0;
};

struct HttpRouterOptions {
  // The web UI's folder, already its real path ("" = no UI).
  std::string web_root;
  // Bearer-token check of every API request; null or disabled: all pass.
  const BearerAuth* auth = nullptr;
  double timeout_seconds = 300;  // HttpOptions::timeout_seconds
  // Origins (scheme://host[:port]) whose pages may call the API, besides
  // the server's own; "*" allows every origin.
  std::vector<std::string> allowed_origins;
};

class HttpRouter : public HttpHandler {
 public:
  // `backend` returns the Backend once plugins are loaded (null before);
  // `metrics` and `http_metrics` may be null; the flags must outlive this.
  HttpRouter(HttpRouterOptions options, std::function<const Backend*()> backend,
             Metrics* metrics, HttpMetrics* http_metrics,
             const std::atomic<bool>* draining,
             const std::atomic<bool>* stopping);

  bool Quick(const HttpRequest& req) const override;
  HttpResponse Handle(const HttpRequest& req) const override;
  HttpResponse Refuse(int http_status, const absl::Status& why) const override;
  void Answered(const HttpRequest* req, int http_status) const override;

  // The single auth decision of an API call (the bearer token, as gRPC's
  // "authorization: Bearer <token>" metadata): OK or UNAUTHENTICATED.
  absl::Status AuthorizeHttp(absl::string_view rpc,
                             const HttpRequest& req) const;

  struct Route;  // one RPC's mapping (http_router.cc)

 private:
  HttpResponse HandleRpc(const Route& route, const HttpRequest& req) const;
  HttpResponse HandleStatic(const HttpRequest& req) const;
  // OK, or PERMISSION_DENIED when the request carries an Origin that is
  // neither the server's own nor allowed.
  absl::Status CheckOrigin(const HttpRequest& req) const;
  // The CORS headers for an allowed foreign Origin (none otherwise).
  HttpHeaders CorsHeaders(const HttpRequest& req) const;

  const HttpRouterOptions options_;
  const std::function<const Backend*()> backend_;
  Metrics* const metrics_;
  HttpMetrics* const http_metrics_;
  const std::atomic<bool>* const draining_;
  const std::atomic<bool>* const stopping_;
  // GET /openapi.json, generated once from the descriptors (openapi.h).
  const std::string openapi_json_;
};

}  // namespace ridgeline::service
