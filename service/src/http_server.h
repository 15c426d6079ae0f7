// The HTTP/1.1 server of the HTTP/JSON frontend, on Boost.Beast and
// Boost.Asio: a few I/O threads serve every connection with non-blocking
// reads and writes, so a slow or idle client holds a socket and a small
// buffer, never a thread. Requests that compute (HttpHandler::Quick false)
// run on a bounded work pool; probes, files and refusals are answered on the
// I/O threads. A slow client cannot hold a worker: the pool only ever sees
// requests whose whole body has arrived.
//
// Limits, each checked as bytes arrive:
//   request line + headers   max_header_bytes and max_header_count: 431
//   body                     max_body_bytes, on the wire (Content-Length or
//                            chunked) and again after Content-Encoding: 413
//   each request, head and body, must arrive within read_timeout_seconds of
//   the connection's previous response (or of its accept): else it is closed
//   each response write      write_timeout_seconds
//   connections              max_connections open at once; more are closed
//                            at accept
// Thread-safe; Start once, Stop once (the destructor stops).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "http_router.h"

struct ssl_ctx_st;

namespace ridgeline::service {

struct HttpLimits {
  int64_t max_body_bytes = 4 << 20;
  uint32_t max_header_bytes = 64 << 10;
  int max_header_count = 100;
};

struct HttpServerOptions {
  std::string host;  // numeric address or name to bind
  int port = 0;      // 0 picks a free port
  HttpLimits limits;
  int threads = 16;          // requests computing at once
  size_t max_queued = 1024;  // waiting for a worker; more get 503
  int io_threads = 2;
  int max_connections = 1024;
  double read_timeout_seconds = 20;
  double write_timeout_seconds = 60;
  int max_requests_per_connection = 1000;  // keep-alive
  // Set: the port serves HTTPS only; called once on the server's context.
  std::function<bool(ssl_ctx_st*)> tls_setup;
};

class HttpServer {
 public:
  // `handler` must outlive this object.
  HttpServer(HttpServerOptions options, const HttpHandler& handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds (a port another process listens on is refused: no SO_REUSEPORT)
  // and starts the threads; returns the bound port.
  absl::StatusOr<int> Start();
  // Stops accepting, closes every connection (streams are cancelled) and
  // joins every thread.
  void Stop();
  // Connections open now.
  int connections() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The outcome of parsing one request from bytes in memory, with the limits
// and checks the server applies to a socket's bytes: `refuse` 0 and
// `request` set, or the HTTP status the server would refuse with (400, 413,
// 415, 431) and `why`; -1 when the bytes end before the request does.
struct ParsedHttpRequest {
  int refuse = 0;
  absl::Status why;
  HttpRequest request;
  bool keep_alive = false;
};
ParsedHttpRequest ParseHttpRequest(absl::string_view bytes,
                                   const HttpLimits& limits, bool tls = false);

}  // namespace ridgeline::service
