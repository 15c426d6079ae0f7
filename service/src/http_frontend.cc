#include "ridgeline/service/http_frontend.h"

#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "http_metrics.h"
#include "http_stream.h"
#include "http_tls.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/plugin_host/registry.h"
#include "ridgeline/service/auth_policy.h"

namespace ridgeline::service {
namespace {

using Clock = std::chrono::steady_clock;
using google::protobuf::Message;

// An RPC reachable over HTTP. Exactly one of `unary` / `stream` is set.
struct Route {
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

template <typename Req, typename Resp, typename F>
Route Unary(std::string method, F f) {
  Route r;
  r.method = std::move(method);
  r.new_request = [] { return std::make_unique<Req>(); };
  r.unary = [f](const Backend& b, const Message& m, const Route::Stop& stop)
      -> absl::StatusOr<std::unique_ptr<Message>> {
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
    return f(b, static_cast<const Req&>(m),
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
          [](auto& b, auto& r, auto& stop) -> absl::StatusOr<v1::AnalyzeResponse> {
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
          [](auto& b, auto& r, auto& stop) -> absl::StatusOr<v1::StepTimeResponse> {
            v1::StepTimeResponse resp;
            absl::Status st = b.StepTime(r, &resp, stop);
            if (!st.ok()) return st;
            return resp;
          }),
      Streaming<v1::ExploreRequest, v1::ExploreResponse>(
          "Explore", [](auto& b, auto& r, auto emit, auto& stop) {
            return b.Explore(r, emit, stop);
          }),
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
// Lines a stream computes ahead of a slow client.
constexpr size_t kStreamQueueLines = 16;
constexpr char kGrpcPrefix[] = "/ridgeline.v1.RidgelineService/";

// The RPC name of an API path, or "" for any other path.
absl::string_view MethodOfPath(absl::string_view path) {
  for (absl::string_view prefix : {kV1Prefix, kGrpcPrefix}) {
    if (absl::StartsWith(path, prefix)) return path.substr(prefix.size());
  }
  return "";
}

// The metrics label of a request: a bounded set of values.
std::string MetricsMethod(const httplib::Request& req) {
  if (req.path == "/healthz") return "healthz";
  if (req.path == "/readyz") return "readyz";
  if (const Route* r = FindRoute(MethodOfPath(req.path)); r != nullptr) {
    return r->method;
  }
  return req.method == "GET" || req.method == "HEAD" ? "static" : "unknown";
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

void SetError(httplib::Response& res, const absl::Status& s) {
  res.status = HttpStatusOf(s.code());
  res.set_content(ToJson(ErrorStruct(s)), "application/json");
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

}  // namespace

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
  if (options_.tls.enabled()) {
    absl::StatusOr<std::unique_ptr<HttpTls>> tls = HttpTls::Create(options_.tls);
    if (!tls.ok()) return tls.status();
    tls_ = *std::move(tls);
    server_ = std::make_unique<httplib::SSLServer>(
        [this](SSL_CTX& ctx) { return tls_->Setup(&ctx); });
    if (!server_->is_valid()) {
      return absl::InternalError("cannot set up TLS for the HTTP port");
    }
  } else {
    server_ = std::make_unique<httplib::Server>();
  }
  httplib::Server& svr = *server_;
  const int threads = options_.threads;
  svr.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // Same cap as gRPC's max receive message size; larger bodies get 413
  // (the error handler below gives them the JSON error body).
  svr.set_payload_max_length(static_cast<size_t>(options_.max_body_bytes));
  // A browser reuses a few connections for many requests.
  svr.set_keep_alive_max_count(1000);
  // cpp-httplib writes a response's headers and body separately; with
  // Nagle's algorithm the body then waits for the client's delayed ACK of
  // the headers (~40 ms per request on a kept-alive connection: 88 ms p50
  // against 2 ms of handling, measured with ridgeline_loadgen).
  svr.set_tcp_nodelay(true);
  // cpp-httplib's default sets SO_REUSEPORT: a second server could bind the
  // same port and the kernel would split connections between the two. With
  // SO_REUSEADDR only, a restart still binds at once (no TIME_WAIT wait)
  // while a port some process listens on is refused.
  svr.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });

  svr.set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty())
          return httplib::Server::HandlerResponse::Unhandled;
        absl::Status s;
        if (res.status == 413) {
          s = absl::ResourceExhaustedError(
              "request: body larger than the server's max-message-bytes");
        } else if (res.status == 404) {
          s = absl::NotFoundError(
              absl::StrCat("no such path: ", req.path.substr(0, 128)));
        } else {
          s = absl::UnknownError(absl::StrCat("HTTP ", res.status));
        }
        const int status = res.status;
        res.set_content(ToJson(ErrorStruct(s)), "application/json");
        res.status = status;  // 413 stays 413 (RESOURCE_EXHAUSTED would be 429)
        return httplib::Server::HandlerResponse::Handled;
      }));
  svr.set_logger(
      [this](const httplib::Request& req, const httplib::Response& res) {
        if (http_metrics_ == nullptr) return;
        // RPC durations are observed by their handlers; this counts every
        // request, including those answered before a handler ran (413, 404).
        http_metrics_->Count(MetricsMethod(req), res.status);
      });

  svr.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  svr.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    if (backend_() == nullptr || backend_()->registry().platforms().empty()) {
      res.status = 503;
      res.set_content("not ready: no hardware platform is loaded (yet)\n",
                      "text/plain");
    } else if (draining_.load()) {
      res.status = 503;
      res.set_content("not ready: draining\n", "text/plain");
    } else {
      res.set_content("ready\n", "text/plain");
    }
  });

  auto handle = [this](const httplib::Request& req, httplib::Response& res) {
    const Clock::time_point start = Clock::now();
    const absl::string_view name = MethodOfPath(req.path);
    const Route* route = FindRoute(name);
    auto observe = [this, start, route] {
      if (http_metrics_ != nullptr && route != nullptr) {
        http_metrics_->Observe(
            route->method,
            std::chrono::duration<double>(Clock::now() - start).count());
      }
    };
    if (route == nullptr) {
      SetError(res, absl::UnimplementedError(NoRouteMessage(name)));
      return;
    }
    // The same table and token as gRPC's (auth_policy.h).
    if (absl::Status s =
            Authorize(options_.auth, RidgelineMethod(route->method),
                      req.get_header_value("Authorization"));
        !s.ok()) {
      SetError(res, s);
      observe();
      return;
    }
    // The request's grpc-timeout header; for a unary call at most
    // --http-timeout-seconds, also its deadline without the header: every
    // unary call ends, even one whose client went away (cpp-httplib 0.11
    // cannot tell a unary handler that its connection closed). A stream
    // notices a gone client at its next write, so only its header bounds it.
    std::optional<Clock::time_point> deadline;
    if (options_.timeout_seconds > 0 && route->unary) {
      deadline = start + std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(
                                 options_.timeout_seconds));
    }
    if (req.has_header("grpc-timeout")) {
      absl::StatusOr<double> t =
          ParseGrpcTimeout(req.get_header_value("grpc-timeout"));
      if (!t.ok()) {
        SetError(res, t.status());
        observe();
        return;
      }
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
    // Polled by the engine's long loops: the deadline, or the server
    // stopping.
    const Route::Stop stop = [this, expired] {
      return stopping_.load() || expired();
    };
    const Backend* backend = backend_();
    if (backend == nullptr) {
      SetError(res, absl::UnavailableError(
                        "hardware plugins are still loading; retry shortly"));
      observe();
      return;
    }
    std::shared_ptr<Message> request = route->new_request();
    google::protobuf::util::JsonParseOptions parse;
    parse.ignore_unknown_fields = false;  // a typo is an error, not a default
    const std::string& body = req.body.empty() ? std::string("{}") : req.body;
    if (auto s = google::protobuf::util::JsonStringToMessage(
            body, request.get(), parse);
        !s.ok()) {
      SetError(res, absl::InvalidArgumentError(
                        absl::StrCat("request: not the proto3 JSON of ",
                                     request->GetDescriptor()->full_name(),
                                     ": ", s.message().as_string())));
      observe();
      return;
    }
    if (expired()) {
      SetError(res, absl::DeadlineExceededError("the deadline passed"));
      observe();
      return;
    }

    if (route->unary) {
      absl::StatusOr<std::unique_ptr<Message>> r =
          route->unary(*backend, *request, stop);
      if ((r.ok() || absl::IsCancelled(r.status())) && expired()) {
        r = absl::DeadlineExceededError(
            "the deadline passed (grpc-timeout or --http-timeout-seconds)");
      } else if (absl::IsCancelled(r.status()) && stopping_.load()) {
        r = absl::UnavailableError("stopped: the server is shutting down");
      }
      if (!r.ok()) {
        SetError(res, r.status());
      } else {
        res.set_content(ToJson(**r), "application/json");
      }
      observe();
      return;
    }

    // Streaming: a request that fails validation must get its HTTP status,
    // but headers go out before the first line. The call runs once, on a
    // relay thread, and the headers wait for its first item or its end
    // (the Backend validates the whole request before emitting anything).
    auto relay = std::make_shared<StreamRelay>(
        kStreamQueueLines,
        [this, backend, request, route, expired,
         stop](const StreamRelay::Emit& emit) {
          return route->stream(
              *backend, *request,
              [&](const Message& m) {
                // Checked between items: an expired deadline or a stopping
                // server ends the stream within one item (a gone client
                // cancels the relay).
                if (stopping_.load() || expired()) return false;
                return emit(ToJson(m) + "\n");
              },
              stop);
        });
    if (absl::Status first = relay->WaitFirst();
        !first.ok() && !absl::IsCancelled(first)) {
      SetError(res, first);
      observe();
      return;
    }
    const bool sweep = route->method == "Sweep";
    res.set_chunked_content_provider(
        "application/x-ndjson",
        [this, relay, expired, observe, sweep](size_t, httplib::DataSink& sink) {
          std::string line;
          bool client_gone = false;
          while (relay->Next(&line)) {
            if (!sink.is_writable() || !sink.write(line.data(), line.size())) {
              client_gone = true;
              break;
            }
            if (sweep && metrics_ != nullptr) metrics_->OnSweepPointSent();
          }
          if (client_gone) {
            relay->Cancel();
            observe();
            return false;
          }
          absl::Status s = relay->status();
          if (absl::IsCancelled(s) && expired()) {
            s = absl::DeadlineExceededError(
                "stream stopped: the deadline passed");
          } else if (absl::IsCancelled(s) && stopping_.load()) {
            s = absl::UnavailableError(
                "stream stopped: the server is shutting down");
          }
          // The status is the last line when the stream did not complete:
          // {"error": {"code": ..., "message": ..., "field": ...}}.
          if (!s.ok() && sink.is_writable()) {
            google::protobuf::Struct error_line;
            *(*error_line.mutable_fields())["error"].mutable_struct_value() =
                ErrorStruct(s);
            const std::string text = ToJson(error_line) + "\n";
            sink.write(text.data(), text.size());
          }
          sink.done();
          observe();
          return true;
        });
  };
  for (const char* prefix : {kV1Prefix, kGrpcPrefix}) {
    svr.Post(absl::StrCat(prefix, "([A-Za-z0-9_]+)"), handle);
  }

  if (!options_.web_dir.empty() &&
      !svr.set_mount_point("/", options_.web_dir)) {
    return absl::InvalidArgumentError(
        absl::StrCat("web UI folder not found: ", options_.web_dir));
  }

  const size_t colon = options_.listen.rfind(':');
  std::string host = options_.listen.substr(0, colon);
  int port = 0;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(options_.listen.substr(colon + 1), &port)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "HTTP listen address: expected HOST:PORT, got ", options_.listen));
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const int bound = port == 0 ? svr.bind_to_any_port(host)
                              : (svr.bind_to_port(host, port) ? port : -1);
  if (bound <= 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen for HTTP on ", options_.listen));
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  return bound;
}

void HttpFrontend::ReloadTls() {
  if (tls_ != nullptr) tls_->ReloadAtNextHandshake();
}

void HttpFrontend::Stop() {
  stopping_.store(true);
  draining_.store(true);
  if (server_ != nullptr) server_->stop();
  if (thread_.joinable()) thread_.join();
}

std::vector<std::string> HttpMethods() {
  std::vector<std::string> out;
  for (const Route& r : Routes()) out.push_back(r.method);
  return out;
}

}  // namespace ridgeline::service
