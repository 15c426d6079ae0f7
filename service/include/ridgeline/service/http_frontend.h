// The HTTP/JSON frontend of the Ridgeline service: the same Backend as gRPC,
// reached with plain HTTP (curl, a notebook, the web UI), plus the UI's
// static files and /healthz, /readyz probes.
//
//   POST /v1/<Method>                         unary: canonical proto3 JSON in,
//   POST /ridgeline.v1.RidgelineService/<Method>  JSON out (fields at their
//                                             default printed too)
//   streaming methods (Sweep, ...)            the same paths; the response is
//                                             newline-delimited JSON, one
//                                             message per line
//   GET  /healthz, /readyz                    liveness; readiness (plugins
//                                             loaded and not draining)
//   GET  /...                                 the web UI (static files:
//                                             regular files under the
//                                             folder's real path only)
//   GET  on an RPC's path                     405, Allow: POST
//
// An API POST must say Content-Type: application/json (else 415), so a
// browser preflights it; one carrying an Origin other than the server's own
// or an allowed one is refused 403 (a page cannot start work on a local
// server). Bodies, headers, nesting and slow clients are bounded as
// http_server.h and http_body.h say.
//
// Errors: the gRPC code mapped to an HTTP status (HttpStatusOf) with a body
// {"code": "INVALID_ARGUMENT", "message": ..., "field": "workload.batch"}.
// Deadline: the `grpc-timeout` request header, in gRPC's own format
// ("500m", "2S"); requests are capped at the same byte size as gRPC's.
// Thread-safe; one instance per server.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ridgeline/service/auth.h"
#include "ridgeline/service/backend.h"
#include "ridgeline/service/metrics.h"
#include "ridgeline/service/tls.h"

namespace ridgeline::service {

class HttpMetrics;
class HttpRouter;
class HttpServer;
class HttpTls;

struct HttpOptions {
  std::string listen;                // HOST:PORT; port 0 picks a free one
  int64_t max_body_bytes = 4 << 20;  // larger bodies: 413
  std::string web_dir;               // "" = no UI (API and probes only)
  int threads = 16;                  // requests computing at once
  // Connections open at once; more are closed at accept.
  int max_connections = 1024;
  // Each request, head and body, must arrive within this many seconds of
  // the connection's previous response (or of its accept); an idle,
  // slow or stalled connection is closed at it.
  double read_timeout_seconds = 20;
  // Origins (scheme://host[:port]) whose pages may call the API besides the
  // server's own; "*" allows any. Requests without Origin always may.
  std::vector<std::string> allowed_origins;
  // Bearer-token check of every API request (not the UI's files or the
  // probes); null or disabled: every request passes. Must outlive this.
  const BearerAuth* auth = nullptr;
  // The gRPC port's TLS files: set (cert_path), the port serves HTTPS only,
  // with mutual TLS when client_ca_path is set; re-read every
  // reload_seconds like gRPC's.
  TlsSettings tls;
  // Deadline of a unary request without a grpc-timeout header, and the
  // longest one may ask for; 0 = none. Past it the call ends 504 (engine
  // work stops within a few steps). Streams end when their client goes.
  double timeout_seconds = 300;
};

// The HTTP status for a canonical (gRPC) code: Google's published mapping
// (google/rpc/code.proto): INVALID_ARGUMENT, FAILED_PRECONDITION and
// OUT_OF_RANGE 400, NOT_FOUND 404, RESOURCE_EXHAUSTED 429, CANCELLED 499,
// UNIMPLEMENTED 501, UNAVAILABLE 503, DEADLINE_EXCEEDED 504, others 500.
int HttpStatusOf(absl::StatusCode code);

// The field path an error message names, for errors that carry none as a
// payload (engine::FieldPathOf is asked first): a leading
// "workload.batch: ..." or a dotted first word. "" when none.
std::string FieldOf(absl::string_view message);

// Parses a gRPC-format timeout ("<1..8 digits><H|M|S|m|u|n>") into seconds.
absl::StatusOr<double> ParseGrpcTimeout(absl::string_view value);

// The folder of the UI's static files: the installed one beside the running
// executable (PREFIX/share/ridgeline/web), else the source tree's web/
// (uninstalled binaries), else the configured install prefix's. "" if none
// exists.
std::string DefaultWebDir();

// The RPC names the frontend routes, in table order.
std::vector<std::string> HttpMethods();

class HttpFrontend {
 public:
  // `backend` returns the Backend once plugins are loaded (null before);
  // `metrics` may be null and must outlive this object.
  HttpFrontend(HttpOptions options, std::function<const Backend*()> backend,
               Metrics* metrics);
  ~HttpFrontend();

  // Binds and starts serving on a thread of its own; returns the bound port.
  // FAILED_PRECONDITION naming the flag when a TLS file cannot be used.
  absl::StatusOr<int> Start();
  // Readiness goes false (/readyz answers 503); requests keep being served.
  void BeginDrain() { draining_.store(true); }
  // With TLS, the files are re-read at the next handshake (SIGHUP).
  void ReloadTls();
  // Stops accepting, cancels streaming responses and joins every thread.
  void Stop();

 private:
  HttpOptions options_;
  std::function<const Backend*()> backend_;
  Metrics* metrics_;
  std::unique_ptr<HttpMetrics> http_metrics_;
  std::unique_ptr<HttpTls> tls_;  // null: plain HTTP
  std::unique_ptr<HttpRouter> router_;
  std::unique_ptr<HttpServer> server_;  // destroyed before the router
  std::atomic<bool> draining_{false};
  std::atomic<bool> stopping_{false};
};

}  // namespace ridgeline::service
