#include "http_router.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "http_body.h"
#include "http_metrics.h"
#include "http_stream.h"
#include "openapi.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/service/auth_policy.h"
#include "ridgeline/service/http_frontend.h"
#include "ridgeline/service/status.h"

namespace ridgeline::service {

using Clock = std::chrono::steady_clock;
using google::protobuf::Message;

// An RPC reachable over HTTP. Exactly one of `unary` / `stream` is set.
struct HttpRouter::Route {
  std::string method;  // "Analyze"
  std::function<std::unique_ptr<Message>()> new_request;
  // `stop` says the request's deadline passed or the server is stopping:
  // long work polls it and ends with CANCELLED.
  using Stop = std::function<bool()>;
  std::function<absl::StatusOr<std::unique_ptr<Message>>(
      const Backend&, const Message&, const Stop& stop)>
      unary;
  std::function<absl::Status(const Backend&, const Message&,
                             const std::function<bool(const Message&)>&,
                             const Stop& stop)>
      stream;
};

namespace {

using Route = HttpRouter::Route;

template <typename Req, typename Resp, typename F>
Route Unary(std::string method, F f) {
  Route r;
  r.method = std::move(method);
  r.new_request = [] { return std::make_unique<Req>(); };
  r.unary =
      [f](const Backend& b, const Message& m,
          const Route::Stop& stop) -> absl::StatusOr<std::unique_ptr<Message>> {
    absl::StatusOr<Resp> resp = f(b, static_cast<const Req&>(m), stop);
    if (!resp.ok()) return resp.status();
    return std::make_unique<Resp>(std::move(*resp));
  };
  return r;
}

template <typename Req, typename Item, typename F>
Route Streaming(std::string method, F f) {
  Route r;
  r.method = std::move(method);
  r.new_request = [] { return std::make_unique<Req>(); };
  r.stream = [f](const Backend& b, const Message& m,
                 const std::function<bool(const Message&)>& emit,
                 const Route::Stop& stop) {
    return f(
        b, static_cast<const Req&>(m),
        [&emit](const Item& item) { return emit(item); }, stop);
  };
  return r;
}

// Every RPC of RidgelineService, one line each. A new RPC adds its line
// here (a unit test checks the table against the service descriptor).
const std::vector<Route>& Routes() {
  static const std::vector<Route>* routes = new std::vector<Route>{
      Unary<v1::AnalyzeRequest, v1::AnalyzeResponse>(
          "Analyze",
          [](auto& b, auto& r,
             auto& stop) -> absl::StatusOr<v1::AnalyzeResponse> {
            v1::AnalyzeResponse resp;
            absl::Status st = b.Analyze(r, &resp, stop);
            if (!st.ok()) return st;
            return resp;
          }),
      Streaming<v1::SweepRequest, v1::SweepPoint>(
          "Sweep",
          [](auto& b, auto& r, auto emit, auto&) { return b.Sweep(r, emit); }),
      Unary<v1::ListHardwareRequest, v1::ListHardwareResponse>(
          "ListHardware",
          [](auto& b, auto& r, auto&) { return b.ListHardware(r); }),
      Unary<v1::GetHardwareRequest, v1::GetHardwareResponse>(
          "GetHardware",
          [](auto& b, auto& r, auto&) { return b.GetHardware(r); }),
      Unary<v1::ListModelsRequest, v1::ListModelsResponse>(
          "ListModels",
          [](auto& b, auto& r, auto&) { return b.ListModels(r); }),
      Unary<v1::GetModelRequest, v1::GetModelResponse>(
          "GetModel", [](auto& b, auto& r, auto&) { return b.GetModel(r); }),
      Unary<v1::AnalyzeKernelRequest, v1::AnalyzeKernelResponse>(
          "AnalyzeKernel",
          [](auto& b, auto& r,
             auto& stop) -> absl::StatusOr<v1::AnalyzeKernelResponse> {
            v1::AnalyzeKernelResponse resp;
            absl::Status st = b.AnalyzeKernel(r, &resp, stop);
            if (!st.ok()) return st;
            return resp;
          }),
      Unary<v1::StepTimeRequest, v1::StepTimeResponse>(
          "StepTime",
          [](auto& b, auto& r,
             auto& stop) -> absl::StatusOr<v1::StepTimeResponse> {
            v1::StepTimeResponse resp;
            absl::Status st = b.StepTime(r, &resp, stop);
            if (!st.ok()) return st;
            return resp;
          }),
      Streaming<v1::ExploreRequest, v1::ExploreResponse>(
          "Explore", [](auto& b, auto& r, auto emit,
                        auto& stop) { return b.Explore(r, emit, stop); }),
      Unary<v1::PlanRequest, v1::PlanResponse>(
          "Plan", [](auto& b, auto& r, auto& stop) { return b.Plan(r, stop); }),
      Unary<v1::SimulateRequest, v1::SimulateResponse>(
          "Simulate",
          [](auto& b, auto& r, auto& stop) { return b.Simulate(r, stop); }),
      Unary<v1::ExploreSensitivityRequest, v1::ExploreSensitivityResponse>(
          "ExploreSensitivity",
          [](auto& b, auto& r, auto&) { return b.ExploreSensitivity(r); }),
  };
  return *routes;
}

const Route* FindRoute(absl::string_view method) {
  for (const Route& r : Routes()) {
    if (r.method == method) return &r;
  }
  return nullptr;
}

constexpr char kV1Prefix[] = "/v1/";
constexpr char kGrpcPrefix[] = "/ridgeline.v1.RidgelineService/";
// Lines a stream computes ahead of a slow client.
constexpr size_t kStreamQueueLines = 16;
// The request headers a cross-origin page may send (CORS preflight).
constexpr char kCorsRequestHeaders[] =
    "Authorization, Content-Type, grpc-timeout";

// The RPC name of an API path ("" for any other path), and whether the path
// is under an API prefix at all.
absl::string_view MethodOfPath(absl::string_view path, bool* api = nullptr) {
  for (absl::string_view prefix : {kV1Prefix, kGrpcPrefix}) {
    if (absl::StartsWith(path, prefix)) {
      if (api != nullptr) *api = true;
      return path.substr(prefix.size());
    }
  }
  if (api != nullptr) *api = false;
  return "";
}

// Proto3 JSON, every field printed (a default value too: `"fits": false`,
// tier 0), names in lowerCamelCase as the canonical mapping has them.
std::string ToJson(const Message& m) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  std::string out;
  if (!google::protobuf::util::MessageToJsonString(m, &out, options).ok()) {
    return "{}";
  }
  return out;
}

google::protobuf::Struct ErrorStruct(const absl::Status& s) {
  google::protobuf::Struct e;
  auto& f = *e.mutable_fields();
  f["code"].set_string_value(absl::StatusCodeToString(s.code()));
  f["message"].set_string_value(std::string(s.message()));
  // The path the error carries as data; the message's leading path for
  // errors built without one (the frontend's own).
  std::optional<std::string> path = engine::FieldPathOf(s);
  f["field"].set_string_value(path ? *path : FieldOf(s.message()));
  return e;
}

// {"code": ..., "message": ..., "field": ...} with `http_status`, or the
// code's own status when 0.
HttpResponse JsonError(const absl::Status& s, int http_status = 0) {
  HttpResponse res;
  res.status = http_status != 0 ? http_status : HttpStatusOf(s.code());
  res.content_type = "application/json";
  res.body = ToJson(ErrorStruct(s));
  return res;
}

HttpResponse Text(int status, std::string body) {
  HttpResponse res;
  res.status = status;
  res.content_type = "text/plain";
  res.body = std::move(body);
  return res;
}

// Why a POST names no route: not a method of the service, a
// client-streaming one, or one not mapped yet.
std::string NoRouteMessage(absl::string_view name) {
  const google::protobuf::ServiceDescriptor* sd =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
          "ridgeline.v1.RidgelineService");
  const google::protobuf::MethodDescriptor* md =
      sd == nullptr ? nullptr : sd->FindMethodByName(std::string(name));
  if (md == nullptr) {
    return absl::StrCat("unknown method \"", name.substr(0, 64),
                        "\" of ridgeline.v1.RidgelineService");
  }
  if (md->client_streaming()) {
    return absl::StrCat(name, " streams requests: use gRPC (no HTTP mapping)");
  }
  return absl::StrCat(name, " is not served over HTTP yet: use gRPC");
}

HttpResponse MethodNotAllowed(const HttpRequest& req, std::string allow) {
  HttpResponse res =
      JsonError(absl::UnimplementedError(absl::StrCat(
                    req.method.substr(0, 16), " ", req.Path().substr(0, 128),
                    ": method not allowed; use ", allow)),
                405);
  res.headers.emplace_back("Allow", std::move(allow));
  return res;
}

// The media type of a Content-Type value, lower case, without parameters.
std::string MediaType(absl::string_view content_type) {
  return absl::AsciiStrToLower(absl::StripAsciiWhitespace(
      content_type.substr(0, content_type.find(';'))));
}

std::string ContentTypeOfFile(const std::filesystem::path& p) {
  static const std::vector<std::pair<absl::string_view, absl::string_view>>
      types = {{".html", "text/html; charset=utf-8"},
               {".js", "text/javascript; charset=utf-8"},
               {".mjs", "text/javascript; charset=utf-8"},
               {".css", "text/css; charset=utf-8"},
               {".json", "application/json"},
               {".svg", "image/svg+xml"},
               {".png", "image/png"},
               {".ico", "image/x-icon"},
               {".woff2", "font/woff2"},
               {".map", "application/json"},
               {".txt", "text/plain; charset=utf-8"}};
  const std::string ext = absl::AsciiStrToLower(p.extension().string());
  for (const auto& [e, type] : types) {
    if (e == ext) return std::string(type);
  }
  return "application/octet-stream";
}

// "%2e%2E" and friends decoded; nullopt for a malformed escape or a NUL.
std::optional<std::string> PercentDecode(absl::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    if (i + 2 >= s.size() || !absl::ascii_isxdigit(s[i + 1]) ||
        !absl::ascii_isxdigit(s[i + 2])) {
      return std::nullopt;
    }
    auto hex = [](char c) {
      return absl::ascii_isdigit(c) ? c - '0'
                                    : absl::ascii_tolower(c) - 'a' + 10;
    };
    out.push_back(static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2])));
    i += 2;
  }
  if (out.find('\0') != std::string::npos) return std::nullopt;
  return out;
}

// A streaming RPC's lines, then its status as a last line when it did not
// complete: {"error": {"code": ..., "message": ..., "field": ...}}.
class RelayStream : public HttpStream {
 public:
  RelayStream(std::unique_ptr<StreamRelay> relay,
              std::shared_ptr<std::atomic<bool>> gone,
              std::function<bool()> expired, const std::atomic<bool>* stopping,
              Metrics* sweep_metrics, std::function<void()> observe)
      : relay_(std::move(relay)),
        gone_(std::move(gone)),
        expired_(std::move(expired)),
        stopping_(stopping),
        sweep_metrics_(sweep_metrics),
        observe_(std::move(observe)) {}

  Poll TryNext(std::string* line) override {
    if (ended_) return Poll::kEnd;
    bool ended = false;
    if (relay_->TryNext(line, &ended)) {
      if (sweep_metrics_ != nullptr) sweep_metrics_->OnSweepPointSent();
      return Poll::kLine;
    }
    if (!ended) return Poll::kPending;
    ended_ = true;
    observe_();
    absl::Status s = relay_->status();
    if (absl::IsCancelled(s) && expired_()) {
      s = absl::DeadlineExceededError("stream stopped: the deadline passed");
    } else if (absl::IsCancelled(s) && stopping_->load()) {
      s = absl::UnavailableError("stream stopped: the server is shutting down");
    }
    if (s.ok()) return Poll::kEnd;
    google::protobuf::Struct error_line;
    *(*error_line.mutable_fields())["error"].mutable_struct_value() =
        ErrorStruct(s);
    *line = ToJson(error_line) + "\n";
    return Poll::kLine;
  }

  void SetWakeup(std::function<void()> wake) override {
    relay_->SetWakeup(std::move(wake));
  }

  void Cancel() override {
    gone_->store(true);  // the engine's long loops stop too
    relay_->Cancel();
    if (!ended_) {
      ended_ = true;
      observe_();
    }
  }

 private:
  const std::unique_ptr<StreamRelay> relay_;
  const std::shared_ptr<std::atomic<bool>> gone_;
  const std::function<bool()> expired_;
  const std::atomic<bool>* const stopping_;
  Metrics* const sweep_metrics_;  // null: not a Sweep, or no metrics
  const std::function<void()> observe_;
  bool ended_ = false;  // the consumer's (one thread at a time)
};

}  // namespace

absl::string_view HttpRequest::Header(absl::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (absl::EqualsIgnoreCase(k, name)) return v;
  }
  return "";
}

bool HttpRequest::HasHeader(absl::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (absl::EqualsIgnoreCase(k, name)) return true;
  }
  return false;
}

absl::string_view HttpRequest::Path() const {
  absl::string_view t = target;
  return t.substr(0, t.find('?'));
}

HttpRouter::HttpRouter(HttpRouterOptions options,
                       std::function<const Backend*()> backend,
                       Metrics* metrics, HttpMetrics* http_metrics,
                       const std::atomic<bool>* draining,
                       const std::atomic<bool>* stopping)
    : options_(std::move(options)),
      backend_(std::move(backend)),
      metrics_(metrics),
      http_metrics_(http_metrics),
      draining_(draining),
      stopping_(stopping),
      openapi_json_(OpenApiJson(HttpMethods())) {}

bool HttpRouter::Quick(const HttpRequest& req) const {
  return !(req.method == "POST" && FindRoute(MethodOfPath(req.Path())));
}

HttpResponse HttpRouter::Refuse(int http_status,
                                const absl::Status& why) const {
  return JsonError(why, http_status);
}

void HttpRouter::Answered(const HttpRequest* req, int http_status) const {
  if (http_metrics_ == nullptr) return;
  // A bounded set of labels: the RPC, the probes, static or unknown.
  std::string method = "unknown";
  if (req != nullptr) {
    const absl::string_view path = req->Path();
    if (path == "/healthz") {
      method = "healthz";
    } else if (path == "/readyz") {
      method = "readyz";
    } else if (path == "/openapi.json") {
      method = "openapi";
    } else if (const Route* r = FindRoute(MethodOfPath(path)); r != nullptr) {
      method = r->method;
    } else if (req->method == "GET" || req->method == "HEAD") {
      method = "static";
    }
  }
  http_metrics_->Count(method, http_status);
}

absl::Status HttpRouter::AuthorizeHttp(absl::string_view rpc,
                                       const HttpRequest& req) const {
  // The same table and token as gRPC's (auth_policy.h).
  const absl::string_view authorization = req.Header("Authorization");
  return Authorize(options_.auth,
                   RidgelineMethod(std::string_view(rpc.data(), rpc.size())),
                   std::string_view(authorization.data(), authorization.size()));
}

absl::Status HttpRouter::CheckOrigin(const HttpRequest& req) const {
  if (!req.HasHeader("Origin")) return absl::OkStatus();  // not a browser's
  const absl::string_view origin = req.Header("Origin");
  const std::string own =
      absl::StrCat(req.tls ? "https://" : "http://", req.Header("Host"));
  if (absl::EqualsIgnoreCase(origin, own)) return absl::OkStatus();
  for (const std::string& allowed : options_.allowed_origins) {
    if (allowed == "*" || absl::EqualsIgnoreCase(origin, allowed)) {
      return absl::OkStatus();
    }
  }
  return absl::PermissionDeniedError(absl::StrCat(
      "Origin: \"", origin.substr(0, 128),
      "\" is neither this server's origin nor in --http-allowed-origins"));
}

HttpHeaders HttpRouter::CorsHeaders(const HttpRequest& req) const {
  HttpHeaders h;
  if (!req.HasHeader("Origin") || !CheckOrigin(req).ok()) return h;
  h.emplace_back("Access-Control-Allow-Origin",
                 std::string(req.Header("Origin")));
  h.emplace_back("Vary", "Origin");
  return h;
}

HttpResponse HttpRouter::Handle(const HttpRequest& req) const {
  const absl::string_view path = req.Path();
  const bool get = req.method == "GET" || req.method == "HEAD";
  if (path == "/healthz" || path == "/readyz") {
    if (!get) return MethodNotAllowed(req, "GET, HEAD");
    if (path == "/healthz") return Text(200, "ok\n");
    if (backend_() == nullptr || backend_()->registry().platforms().empty()) {
      return Text(503, "not ready: no hardware platform is loaded (yet)\n");
    }
    if (draining_->load()) return Text(503, "not ready: draining\n");
    return Text(200, "ready\n");
  }
  if (path == "/openapi.json") {
    // The API's description, like the UI's files: no token needed.
    if (!get) return MethodNotAllowed(req, "GET, HEAD");
    HttpResponse res;
    res.content_type = "application/json";
    res.body = openapi_json_;
    return res;
  }
  bool api = false;
  const absl::string_view name = MethodOfPath(path, &api);
  if (api) {
    const Route* route = FindRoute(name);
    if (route != nullptr && req.method == "OPTIONS") {
      // A CORS preflight: allowed origins learn what they may send.
      if (absl::Status s = CheckOrigin(req); !s.ok()) return JsonError(s);
      HttpResponse res;
      res.status = 204;
      res.headers = CorsHeaders(req);
      res.headers.emplace_back("Access-Control-Allow-Methods", "POST");
      res.headers.emplace_back("Access-Control-Allow-Headers",
                               kCorsRequestHeaders);
      res.headers.emplace_back("Access-Control-Max-Age", "600");
      res.headers.emplace_back("Allow", "POST, OPTIONS");
      return res;
    }
    if (route != nullptr && req.method != "POST") {
      return MethodNotAllowed(req, "POST");
    }
    if (route != nullptr) {
      HttpResponse res = HandleRpc(*route, req);
      for (auto& h : CorsHeaders(req)) res.headers.push_back(std::move(h));
      return res;
    }
    if (req.method == "POST") {
      return JsonError(absl::UnimplementedError(NoRouteMessage(name)));
    }
  }
  if (get) return HandleStatic(req);
  return JsonError(
      absl::NotFoundError(absl::StrCat("no such path: ", path.substr(0, 128))));
}

HttpResponse HttpRouter::HandleStatic(const HttpRequest& req) const {
  auto not_found = [&req] {
    return JsonError(absl::NotFoundError(
        absl::StrCat("no such path: ", req.Path().substr(0, 128))));
  };
  if (options_.web_root.empty()) return not_found();
  std::optional<std::string> rel = PercentDecode(req.Path());
  if (!rel.has_value() || rel->empty() || rel->front() != '/') {
    return not_found();
  }
  if (rel->back() == '/') *rel += "index.html";
  namespace fs = std::filesystem;
  const fs::path asked = fs::path(*rel).relative_path();
  for (const fs::path& part : asked) {
    if (part == "..") return not_found();
  }
  // Only regular files whose real path (every symlink resolved) is inside
  // the folder's real path: a link to /etc/passwd is not served.
  std::error_code ec;
  fs::path real = fs::canonical(fs::path(options_.web_root) / asked, ec);
  if (!ec && fs::is_directory(real, ec)) {
    real = fs::canonical(real / "index.html", ec);
  }
  if (ec || !absl::StartsWith(real.string(), options_.web_root + "/") ||
      !fs::is_regular_file(real, ec)) {
    return not_found();
  }
  std::ifstream in(real, std::ios::binary);
  if (!in) return not_found();
  std::ostringstream text;
  text << in.rdbuf();
  HttpResponse res;
  res.status = 200;
  res.content_type = ContentTypeOfFile(real);
  res.body = std::move(text).str();
  return res;
}

HttpResponse HttpRouter::HandleRpc(const Route& route,
                                   const HttpRequest& req) const {
  const Clock::time_point start = Clock::now();
  auto observe = [this, start, method = route.method] {
    if (http_metrics_ != nullptr) {
      http_metrics_->Observe(
          method, std::chrono::duration<double>(Clock::now() - start).count());
    }
  };
  auto fail = [&observe](const absl::Status& s, int http_status = 0) {
    observe();
    return JsonError(s, http_status);
  };
  // A page on another site may POST here: only its own server's pages and
  // the allowed origins' may, and only as JSON, which a browser sends only
  // after a CORS preflight the page's origin must pass.
  if (absl::Status s = CheckOrigin(req); !s.ok()) return fail(s);
  if (const std::string type = MediaType(req.Header("Content-Type"));
      type != "application/json") {
    return fail(absl::InvalidArgumentError(absl::StrCat(
                    "Content-Type: must be application/json; got \"",
                    type.substr(0, 64), "\"")),
                415);
  }
  if (absl::Status s = AuthorizeHttp(route.method, req); !s.ok()) {
    return fail(s);
  }
  // The request's grpc-timeout header; for a unary call at most
  // --http-timeout-seconds, also its deadline without the header: every
  // unary call ends, even one whose client went away. A stream notices a
  // gone client at its next write, so only its header bounds it.
  std::optional<Clock::time_point> deadline;
  if (options_.timeout_seconds > 0 && route.unary) {
    deadline =
        start + std::chrono::duration_cast<Clock::duration>(
                    std::chrono::duration<double>(options_.timeout_seconds));
  }
  if (req.HasHeader("grpc-timeout")) {
    absl::StatusOr<double> t = ParseGrpcTimeout(req.Header("grpc-timeout"));
    if (!t.ok()) return fail(t.status());
    // Up to 99999999H (11,400 years) is valid, but the clock's
    // nanoseconds end 292 years from its epoch: such a timeout overflowed
    // into an immediate 504 (issue 26). Past 10 years it means "none".
    constexpr double kNoDeadline = 10 * 365.25 * 86400;
    const Clock::time_point asked =
        *t >= kNoDeadline
            ? Clock::time_point::max()
            : start + std::chrono::duration_cast<Clock::duration>(
                          std::chrono::duration<double>(*t));
    if (!deadline.has_value() || asked < *deadline) deadline = asked;
  }
  auto expired = [deadline] {
    return deadline.has_value() && Clock::now() >= *deadline;
  };
  // Polled by the engine's long loops: the deadline, the server stopping,
  // or (streams) the client gone.
  const std::atomic<bool>* stopping = stopping_;
  auto gone = std::make_shared<std::atomic<bool>>(false);
  const Route::Stop stop = [stopping, expired, gone] {
    return stopping->load() || expired() || gone->load();
  };
  const Backend* backend = backend_();
  if (backend == nullptr) {
    return fail(absl::UnavailableError(kNotReadyMessage));
  }
  absl::string_view body = req.body;
  if (body.empty()) body = "{}";  // the empty message
  if (absl::Status s = CheckJsonNesting(body, kMaxJsonDepth); !s.ok()) {
    return fail(s);
  }
  std::shared_ptr<Message> request = route.new_request();
  google::protobuf::util::JsonParseOptions parse;
  parse.ignore_unknown_fields = false;  // a typo is an error, not a default
  if (auto s = google::protobuf::util::JsonStringToMessage(
          google::protobuf::StringPiece(body.data(), body.size()),
          request.get(), parse);
      !s.ok()) {
    return fail(absl::InvalidArgumentError(absl::StrCat(
        "request: not the proto3 JSON of ",
        request->GetDescriptor()->full_name(), ": ", s.message().as_string())));
  }
  if (expired())
    return fail(absl::DeadlineExceededError("the deadline passed"));

  if (route.unary) {
    absl::StatusOr<std::unique_ptr<Message>> r =
        route.unary(*backend, *request, stop);
    if ((r.ok() || absl::IsCancelled(r.status())) && expired()) {
      r = absl::DeadlineExceededError(
          "the deadline passed (grpc-timeout or --http-timeout-seconds)");
    } else if (absl::IsCancelled(r.status()) && stopping_->load()) {
      r = absl::UnavailableError("stopped: the server is shutting down");
    }
    if (!r.ok()) return fail(r.status());
    observe();
    HttpResponse res;
    res.content_type = "application/json";
    res.body = ToJson(**r);
    return res;
  }

  // Streaming: a request that fails validation must get its HTTP status,
  // but headers go out before the first line. The call runs once, on a
  // relay thread, and the headers wait for its first item or its end (the
  // Backend validates the whole request before emitting anything).
  auto relay = std::make_unique<StreamRelay>(
      kStreamQueueLines, [backend, request, &route, expired, stop,
                          stopping](const StreamRelay::Emit& emit) {
        return route.stream(
            *backend, *request,
            [&](const Message& m) {
              // Checked between items: an expired deadline or a stopping
              // server ends the stream within one item (a gone client
              // cancels the relay).
              if (stopping->load() || expired()) return false;
              return emit(ToJson(m) + "\n");
            },
            stop);
      });
  if (absl::Status first = relay->WaitFirst();
      !first.ok() && !absl::IsCancelled(first)) {
    return fail(first);
  }
  HttpResponse res;
  res.content_type = "application/x-ndjson";
  res.stream = std::make_shared<RelayStream>(
      std::move(relay), gone, expired, stopping_,
      route.method == "Sweep" ? metrics_ : nullptr, observe);
  return res;
}

std::vector<std::string> HttpMethods() {
  std::vector<std::string> out;
  for (const Route& r : Routes()) out.push_back(r.method);
  return out;
}

}  // namespace ridgeline::service
