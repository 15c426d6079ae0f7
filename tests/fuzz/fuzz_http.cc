// Fuzz target: the HTTP frontend from raw request bytes, as a socket
// delivers them: the server's parser and limits (request line, headers,
// Content-Length or chunked body, Content-Encoding undone within the cap:
// ParseHttpRequest), then the router (probes, static files from the source
// tree's web/, CORS and Content-Type checks, JSON nesting, every RPC route
// against the real Backend). A streaming answer is drained to its end.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <thread>

#include "fuzz_backend.h"
#include "http_router.h"
#include "http_server.h"

namespace {

using ridgeline::service::HttpLimits;
using ridgeline::service::HttpResponse;
using ridgeline::service::HttpRouter;
using ridgeline::service::HttpRouterOptions;
using ridgeline::service::HttpStream;

const std::atomic<bool> kNotDraining{false};
const std::atomic<bool> kNotStopping{false};

const HttpRouter& Router() {
  static const HttpRouter* router = [] {
    HttpRouterOptions options;
    options.web_root =
        std::filesystem::canonical(RIDGELINE_FUZZ_WEB_DIR).string();
    options.timeout_seconds = 0.25;  // as fuzz_backend's calls
    options.allowed_origins = {"http://ui.example:8080"};
    return new HttpRouter(
        options, [] { return &ridgeline::fuzz::FuzzBackend(); },
        /*metrics=*/nullptr, /*http_metrics=*/nullptr, &kNotDraining,
        &kNotStopping);
  }();
  return *router;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)ridgeline::fuzz::FuzzBackend();  // load plugins outside the timer
  (void)Router();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  HttpLimits limits;
  limits.max_body_bytes = 64 << 10;  // a small cap: bombs stop early
  ridgeline::service::ParsedHttpRequest parsed =
      ridgeline::service::ParseHttpRequest(
          absl::string_view(input.data(), input.size()), limits);
  if (parsed.refuse < 0) return 0;  // incomplete: the server reads on
  const HttpRouter& router = Router();
  if (parsed.refuse > 0) {
    HttpResponse r = router.Refuse(parsed.refuse, parsed.why);
    router.Answered(nullptr, r.status);
    return 0;
  }
  HttpResponse r = router.Handle(parsed.request);
  router.Answered(&parsed.request, r.status);
  if (r.stream != nullptr) {
    std::string line;
    for (;;) {
      const HttpStream::Poll p = r.stream->TryNext(&line);
      if (p == HttpStream::Poll::kEnd) break;
      if (p == HttpStream::Poll::kPending) std::this_thread::yield();
    }
  }
  return 0;
}
