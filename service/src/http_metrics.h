// Prometheus series of the HTTP/JSON frontend, registered on the server's
// registry beside the grpc_server_* ones:
//   http_server_requests_total{method, code}   requests answered, by route
//                                              and HTTP status
//   http_server_request_duration_seconds{method}  request to last byte
// `method` is the RPC name ("Analyze", "Sweep"), or "healthz", "readyz",
// "static", "unknown": a bounded set, so label cardinality stays low.
// Thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace ridgeline::service {

class HttpMetrics {
 public:
  explicit HttpMetrics(prometheus::Registry& registry);
  // One request answered (every request, API or not).
  void Count(std::string_view method, int http_status);
  // One RPC's time, request received to last byte sent.
  void Observe(std::string_view method, double seconds);

 private:
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& seconds_;
};

}  // namespace ridgeline::service
