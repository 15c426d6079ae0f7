#include "http_metrics.h"

#include <string>

#include "ridgeline/service/metrics.h"

namespace ridgeline::service {

HttpMetrics::HttpMetrics(prometheus::Registry& registry)
    : requests_(prometheus::BuildCounter()
                    .Name("http_server_requests_total")
                    .Help("HTTP requests answered, by method (RPC name, "
                          "healthz, readyz, static, unknown) and status code.")
                    .Register(registry)),
      seconds_(prometheus::BuildHistogram()
                   .Name("http_server_request_duration_seconds")
                   .Help("Time from HTTP request to response sent, in "
                         "seconds, by method.")
                   .Register(registry)) {}

// Family::Add is thread-safe and returns the existing series for known
// labels; methods and statuses are bounded sets.
void HttpMetrics::Count(std::string_view method, int http_status) {
  requests_
      .Add({{"method", std::string(method)},
            {"code", std::to_string(http_status)}})
      .Increment();
}

void HttpMetrics::Observe(std::string_view method, double seconds) {
  seconds_.Add({{"method", std::string(method)}}, RpcLatencyBuckets())
      .Observe(seconds);
}

}  // namespace ridgeline::service
