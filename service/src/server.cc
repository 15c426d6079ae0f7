#include "ridgeline/service/server.h"

#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "google/protobuf/arena.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/resource_quota.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"
#include "grpcpp/impl/server_builder_option.h"
#include "grpcpp/impl/server_builder_plugin.h"
#include "grpcpp/support/message_allocator.h"
#include "prometheus/exposer.h"
#include "ridgeline/calibration/profiles.h"
#include "ridgeline/plugin_host/isolated_check.h"
#include "ridgeline/plugin_host/plugin_library.h"
#include "ridgeline/plugin_host/registry.h"
#include "ridgeline/service/auth.h"
#include "ridgeline/service/http_frontend.h"
#include "ridgeline/service/status.h"
#include "sweep_streams.h"
#include "work_pool.h"

#ifndef RIDGELINE_VERSION
#define RIDGELINE_VERSION "0.0.0"
#endif

namespace ridgeline::service {
namespace {

constexpr char kServiceName[] = "ridgeline.v1.RidgelineService";
constexpr int kMaxServerThreads = 256;

grpc::Status NotReady() {
  return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                      "hardware plugins are still loading; retry shortly");
}

// One configurable setting: flag, environment variable, help.
struct FlagSpec {
  const char* flag;
  const char* env;
  const char* help;
  // Applies a textual value; returns an error naming `source`.
  std::function<absl::Status(ServerConfig*, absl::string_view value,
                             absl::string_view source)>
      apply;
};

absl::Status BadValue(absl::string_view source, absl::string_view range,
                      absl::string_view value) {
  return absl::InvalidArgumentError(absl::StrCat(
      source, ": must be ", range, "; got \"", value.substr(0, 128), "\""));
}

auto StringSetting(std::string ServerConfig::*field, bool is_address) {
  return [field, is_address](ServerConfig* c, absl::string_view v,
                             absl::string_view source) -> absl::Status {
    if (is_address) {
      const size_t colon = v.rfind(':');
      int port = -1;
      if (colon == absl::string_view::npos ||
          !absl::SimpleAtoi(v.substr(colon + 1), &port) || port < 0 ||
          port > 65535) {
        if (!((field == &ServerConfig::metrics_listen ||
               field == &ServerConfig::http_listen) &&
              (v.empty() || v == "off"))) {
          return BadValue(source, "HOST:PORT with PORT in [0, 65535]", v);
        }
      }
    }
    c->*field = std::string(v);
    return absl::OkStatus();
  };
}

auto IntSetting(int64_t ServerConfig::*field, int64_t lo, int64_t hi) {
  return [=](ServerConfig* c, absl::string_view v,
             absl::string_view source) -> absl::Status {
    int64_t x = 0;
    if (!absl::SimpleAtoi(v, &x) || x < lo || x > hi) {
      return BadValue(source,
                      absl::StrCat("an integer in [", lo, ", ", hi, "]"), v);
    }
    c->*field = x;
    return absl::OkStatus();
  };
}

auto BoolSetting(bool ServerConfig::*field) {
  return [=](ServerConfig* c, absl::string_view v,
             absl::string_view source) -> absl::Status {
    if (v == "true" || v == "1") {
      c->*field = true;
    } else if (v == "false" || v == "0") {
      c->*field = false;
    } else {
      return BadValue(source, "true or false", v);
    }
    return absl::OkStatus();
  };
}

auto TlsPath(std::string TlsSettings::*field) {
  return [=](ServerConfig* c, absl::string_view v,
             absl::string_view) -> absl::Status {
    c->tls.*field = std::string(v);
    return absl::OkStatus();
  };
}

auto DoubleSetting(double ServerConfig::*field, double lo, double hi) {
  return [=](ServerConfig* c, absl::string_view v,
             absl::string_view source) -> absl::Status {
    double x = 0;
    if (!absl::SimpleAtod(v, &x) || !(x >= lo && x <= hi)) {
      return BadValue(source, absl::StrCat("a number in [", lo, ", ", hi, "]"),
                      v);
    }
    c->*field = x;
    return absl::OkStatus();
  };
}

const std::vector<FlagSpec>& Flags() {
  static const std::vector<FlagSpec>* flags = new std::vector<FlagSpec>{
      {"listen", "RIDGELINE_LISTEN",
       "gRPC address HOST:PORT (default 0.0.0.0:50051). Port 0 picks a free "
       "port; the bound address is printed as \"listening on HOST:PORT\".",
       StringSetting(&ServerConfig::listen, true)},
      {"metrics-listen", "RIDGELINE_METRICS_LISTEN",
       "Prometheus /metrics address HOST:PORT (default 0.0.0.0:9464); port 0 "
       "picks a free port, printed as \"metrics listening on HOST:PORT\"; "
       "\"off\" disables metrics.",
       StringSetting(&ServerConfig::metrics_listen, true)},
      {"http-listen", "RIDGELINE_HTTP_LISTEN",
       "HTTP/JSON API and web UI address HOST:PORT (default off); port 0 "
       "picks a free port, printed as \"http listening on HOST:PORT\". "
       "Serves POST /v1/<Method>, GET /healthz, /readyz and the UI at /.",
       StringSetting(&ServerConfig::http_listen, true)},
      {"web-dir", "RIDGELINE_WEB_DIR",
       "Folder of the web UI's static files (default: the installed web "
       "folder, or the source tree's web/ for an uninstalled binary).",
       StringSetting(&ServerConfig::web_dir, false)},
      {"plugin-dir", "RIDGELINE_PLUGIN_DIR",
       "Folder of hardware plugin .so files (default: the installed plugin "
       "folder, or the build tree's for an uninstalled binary).",
       StringSetting(&ServerConfig::plugin_dir, false)},
      {"profile-dir", "RIDGELINE_PROFILE_DIR",
       "Folder of calibration profiles (default: the installed profiles).",
       StringSetting(&ServerConfig::profile_dir, false)},
      {"max-sweep-points", "RIDGELINE_MAX_SWEEP_POINTS",
       "Most points one Sweep request (or shard) may ask for; more is "
       "RESOURCE_EXHAUSTED. 1..100000000, default 100000.",
       IntSetting(&ServerConfig::max_sweep_points, 1, 100'000'000)},
      {"max-message-bytes", "RIDGELINE_MAX_MESSAGE_BYTES",
       "Largest request message accepted, bytes. 1024..1073741824, default "
       "4194304.",
       IntSetting(&ServerConfig::max_message_bytes, 1024, 1 << 30)},
      {"shutdown-grace-seconds", "RIDGELINE_SHUTDOWN_GRACE_SECONDS",
       "On SIGTERM/SIGINT: health goes NOT_SERVING, in-flight RPCs get this "
       "long to finish, then are cancelled. 0..3600, default 10.",
       DoubleSetting(&ServerConfig::shutdown_grace_seconds, 0, 3600)},
      {"plugin-load-delay-ms", "RIDGELINE_PLUGIN_LOAD_DELAY_MS",
       "Wait this long before loading plugins (testing readiness probes). "
       "0..600000, default 0.",
       IntSetting(&ServerConfig::plugin_load_delay_ms, 0, 600'000)},
      {"max-inline-config-bytes", "RIDGELINE_MAX_INLINE_CONFIG_BYTES",
       "Largest inline config.json (ModelSpec.hf_config_json) accepted, bytes; "
       "more is RESOURCE_EXHAUSTED. Parsing costs ~20x this in memory. "
       "1024..1073741824, default 1048576.",
       IntSetting(&ServerConfig::max_inline_config_bytes, 1024, 1 << 30)},
      {"max-request-cost", "RIDGELINE_MAX_REQUEST_COST",
       "Largest estimated cost of one scenario, batch x (prompt + generated "
       "tokens) x layers; more is RESOURCE_EXHAUSTED. 1..1e18, default 1e12.",
       DoubleSetting(&ServerConfig::max_request_cost, 1, 1e18)},
      {"work-threads", "RIDGELINE_WORK_THREADS",
       "Threads running Analyze/AnalyzeKernel (health checks and cheap calls "
       "never wait for them). 0..1024, default 0 = one per CPU core.",
       IntSetting(&ServerConfig::work_threads, 0, 1024)},
      {"max-queued-calls", "RIDGELINE_MAX_QUEUED_CALLS",
       "Analyze/AnalyzeKernel calls that may wait for a work thread; more "
       "are RESOURCE_EXHAUSTED. 1..1000000, default 1024.",
       IntSetting(&ServerConfig::max_queued_calls, 1, 1'000'000)},
      {"max-sweep-streams", "RIDGELINE_MAX_SWEEP_STREAMS",
       "Sweep streams open at once, all clients; more are RESOURCE_EXHAUSTED. "
       "1..100000, default 64.",
       IntSetting(&ServerConfig::max_sweep_streams, 1, 100'000)},
      {"max-sweep-streams-per-client", "RIDGELINE_MAX_SWEEP_STREAMS_PER_CLIENT",
       "Sweep streams open at once from one client IP address. 1..100000, "
       "default 8.",
       IntSetting(&ServerConfig::max_sweep_streams_per_client, 1, 100'000)},
      {"sweep-write-timeout-seconds", "RIDGELINE_SWEEP_WRITE_TIMEOUT_SECONDS",
       "A Sweep whose client has not read a point for this long is "
       "cancelled, freeing its thread. 0.05..86400, default 30.",
       DoubleSetting(&ServerConfig::sweep_write_timeout_seconds, 0.05, 86400)},
      {"max-connection-idle-seconds", "RIDGELINE_MAX_CONNECTION_IDLE_SECONDS",
       "Close a client connection with no call for this long (GOAWAY; "
       "clients reconnect on their next call). 0 = never. 0..86400, default "
       "300.",
       DoubleSetting(&ServerConfig::max_connection_idle_seconds, 0, 86400)},
      {"max-connection-age-seconds", "RIDGELINE_MAX_CONNECTION_AGE_SECONDS",
       "Close every connection after this long (GOAWAY, then the grace "
       "below), so clients reconnect and rebalance onto new replicas. 0 = "
       "unlimited. 0..604800, default 0.",
       DoubleSetting(&ServerConfig::max_connection_age_seconds, 0, 604800)},
      {"max-connection-age-grace-seconds",
       "RIDGELINE_MAX_CONNECTION_AGE_GRACE_SECONDS",
       "Calls on a connection past its age get this long to finish. "
       "0..86400, default 30.",
       DoubleSetting(&ServerConfig::max_connection_age_grace_seconds, 0,
                     86400)},
      {"plugin-check-timeout-seconds", "RIDGELINE_PLUGIN_CHECK_TIMEOUT_SECONDS",
       "Each plugin is first loaded and exercised in a child process; one "
       "that crashes there, or takes longer than this, is refused. 0 = no "
       "child check. 0..3600, default 10.",
       DoubleSetting(&ServerConfig::plugin_check_timeout_seconds, 0, 3600)},
      {"tls-cert", "RIDGELINE_TLS_CERT",
       "PEM certificate chain: serve gRPC over TLS (default: plaintext). "
       "Re-read every --tls-reload-seconds.",
       TlsPath(&TlsSettings::cert_path)},
      {"tls-key", "RIDGELINE_TLS_KEY", "PEM private key of --tls-cert.",
       TlsPath(&TlsSettings::key_path)},
      {"tls-client-ca", "RIDGELINE_TLS_CLIENT_CA",
       "PEM CA bundle: require mutual TLS; clients without a certificate "
       "signed by it are refused at the handshake.",
       TlsPath(&TlsSettings::client_ca_path)},
      {"tls-reload-seconds", "RIDGELINE_TLS_RELOAD_SECONDS",
       "How often the TLS files are re-read (rotation without restart). "
       "1..86400, default 60.",
       [](ServerConfig* c, absl::string_view v,
          absl::string_view source) -> absl::Status {
         int64_t x = 0;
         if (!absl::SimpleAtoi(v, &x) || x < 1 || x > 86400) {
           return BadValue(source, "an integer in [1, 86400]", v);
         }
         c->tls.reload_seconds = x;
         return absl::OkStatus();
       }},
      {"auth-token-file", "RIDGELINE_AUTH_TOKEN_FILE",
       "File whose first line is a bearer token: Analyze, AnalyzeKernel and "
       "Sweep then need \"authorization: Bearer <token>\" (else "
       "UNAUTHENTICATED). Default: no authentication.",
       StringSetting(&ServerConfig::auth_token_file, false)},
      {"reflection", "RIDGELINE_REFLECTION",
       "Serve gRPC server reflection: true or false, default true.",
       BoolSetting(&ServerConfig::reflection)},
  };
  return *flags;
}

// "0.0.0.0:0" + 41234 -> "0.0.0.0:41234".
std::string WithPort(absl::string_view address, int port) {
  const size_t colon = address.rfind(':');
  return absl::StrCat(address.substr(0, colon), ":", port);
}

void Log(absl::string_view line) {
  std::fprintf(stderr, "ridgeline-server: %.*s\n",
               static_cast<int>(line.size()), line.data());
  std::fflush(stderr);
}

}  // namespace

absl::StatusOr<ServerConfig> ParseServerConfig(
    int argc, const char* const* argv,
    const std::function<const char*(const char*)>& getenv, bool* help) {
  ServerConfig c;
  *help = false;
  for (const FlagSpec& f : Flags()) {
    if (const char* v = getenv(f.env); v != nullptr) {
      absl::Status s = f.apply(&c, v, f.env);
      if (!s.ok()) return s;
    }
  }
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      *help = true;
      return c;
    }
    if (arg.substr(0, 2) != "--") {
      return absl::InvalidArgumentError(absl::StrCat(
          "unexpected argument \"", arg.substr(0, 128), "\"; see --help"));
    }
    arg.remove_prefix(2);
    absl::string_view name = arg, value;
    bool has_value = false;
    if (size_t eq = arg.find('='); eq != absl::string_view::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    const FlagSpec* spec = nullptr;
    for (const FlagSpec& f : Flags()) {
      if (name == f.flag) spec = &f;
    }
    if (spec == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag --", name.substr(0, 128), "; see --help"));
    }
    if (!has_value) {
      if (i + 1 >= argc) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, ": missing value"));
      }
      value = argv[++i];
    }
    absl::Status s = spec->apply(&c, value, absl::StrCat("--", name));
    if (!s.ok()) return s;
  }
  return c;
}

std::string ServerUsage() {
  std::string out =
      "Usage: ridgeline-server [--flag=value ...]\n\n"
      "Serves the ridgeline.v1.RidgelineService gRPC API (with grpc.health.v1 "
      "and server\nreflection) and Prometheus metrics. Each flag can also be "
      "set by the environment\nvariable shown; a flag wins over its "
      "variable.\n\n";
  for (const FlagSpec& f : Flags()) {
    absl::StrAppend(&out, "  --", f.flag, " (", f.env, ")\n      ", f.help,
                    "\n");
  }
  absl::StrAppend(&out,
                  "  --help, -h\n      Print this text and exit.\n\n"
                  "SIGTERM/SIGINT: health NOT_SERVING, drain for the grace "
                  "period, exit 0.\n");
  return out;
}

template <typename Request, typename Response>
class ArenaMessageAllocator final
    : public grpc::MessageAllocator<Request, Response> {
 public:
  ~ArenaMessageAllocator() override {
    for (Holder* h : free_) delete h;
  }

  grpc::MessageHolder<Request, Response>* AllocateMessages() override {
    Holder* h = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        h = free_.back();
        free_.pop_back();
      }
    }
    if (h == nullptr) h = new Holder(this);
    h->Create();
    return h;
  }

 private:
  // A FULL Analyze response (4 steps x 14 ops) takes ~40 KB of arena; the
  // first block is inline so a recycled holder allocates nothing.
  static constexpr size_t kInitialBlock = 64 << 10;
  // Idle holders kept for reuse; more than this are freed (bounded memory
  // after a burst).
  static constexpr size_t kMaxFree = 256;

  class Holder final : public grpc::MessageHolder<Request, Response> {
   public:
    explicit Holder(ArenaMessageAllocator* owner)
        : owner_(owner), arena_(Options(block_.get())) {}
    void Create() {
      this->set_request(
          google::protobuf::Arena::CreateMessage<Request>(&arena_));
      this->set_response(
          google::protobuf::Arena::CreateMessage<Response>(&arena_));
    }
    void Release() override {
      // Frees every block but the inline first one, and runs destructors.
      arena_.Reset();
      owner_->Recycle(this);
    }

   private:
    static google::protobuf::ArenaOptions Options(char* block) {
      google::protobuf::ArenaOptions o;
      o.initial_block = block;
      o.initial_block_size = kInitialBlock;
      return o;
    }
    ArenaMessageAllocator* owner_;
    std::unique_ptr<char[]> block_{new char[kInitialBlock]};
    google::protobuf::Arena arena_;
  };

  void Recycle(Holder* h) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (free_.size() < kMaxFree) {
        free_.push_back(h);
        return;
      }
    }
    delete h;
  }

  std::mutex mu_;
  std::vector<Holder*> free_;  // guarded by mu_
};

RidgelineServiceImpl::RidgelineServiceImpl(Metrics* metrics,
                                           ServiceRuntime runtime)
    : metrics_(metrics),
      runtime_(runtime),
      analyze_allocator_(
          std::make_unique<ArenaMessageAllocator<v1::AnalyzeRequest,
                                                 v1::AnalyzeResponse>>()) {
  SetMessageAllocatorFor_Analyze(analyze_allocator_.get());
}

RidgelineServiceImpl::~RidgelineServiceImpl() = default;

grpc::Status RidgelineServiceImpl::Admit(grpc::ServerContextBase* ctx,
                                         bool expensive) const {
  if (draining_.load()) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        "the server is shutting down; retry on another "
                        "replica");
  }
  if (std::chrono::system_clock::now() >= ctx->deadline()) {
    return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                        "the call's deadline passed before it started");
  }
  if (expensive && runtime_.auth != nullptr && runtime_.auth->enabled()) {
    const auto& md = ctx->client_metadata();
    const auto it = md.find("authorization");
    const std::string_view value =
        it == md.end() ? std::string_view()
                       : std::string_view(it->second.data(), it->second.size());
    if (!runtime_.auth->Check(value)) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          "this method needs \"authorization: Bearer "
                          "<token>\" with the server's token");
    }
  }
  return grpc::Status::OK;
}

void RidgelineServiceImpl::Offload(grpc::ServerUnaryReactor* reactor,
                                   std::function<void()> work) {
  in_flight_.fetch_add(1);
  if (runtime_.pool == nullptr) {
    work();
    return;
  }
  if (!runtime_.pool->TrySubmit(work)) {
    reactor->Finish(grpc::Status(
        grpc::StatusCode::RESOURCE_EXHAUSTED,
        absl::StrCat("the server is busy: ", runtime_.pool->max_queued(),
                     " calls already wait for its ", runtime_.pool->threads(),
                     " work threads (--max-queued-calls); retry with "
                     "backoff")));
    Done();
  }
}

namespace {

// Runs one unary call to completion on the calling (callback) thread.
template <typename Response, typename Call>
grpc::ServerUnaryReactor* Unary(const RidgelineServiceImpl* impl,
                                grpc::CallbackServerContext* ctx,
                                const Backend* backend, Response* resp,
                                Call call) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  if (grpc::Status s = impl->Admit(ctx, false); !s.ok()) {
    reactor->Finish(s);
    return reactor;
  }
  if (backend == nullptr) {
    reactor->Finish(NotReady());
    return reactor;
  }
  absl::StatusOr<Response> r = call(*backend);
  if (r.ok()) *resp = std::move(*r);
  reactor->Finish(ToGrpcStatus(r.status(), ctx));
  return reactor;
}

// As Unary, but the backend builds the response in place (on the call's
// arena).
template <typename Response, typename Call>
grpc::ServerUnaryReactor* UnaryInPlace(grpc::CallbackServerContext* ctx,
                                       const Backend* backend, Response* resp,
                                       Call call) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  if (backend == nullptr) {
    reactor->Finish(NotReady());
    return reactor;
  }
  absl::Status s = call(*backend);
  if (!s.ok()) resp->Clear();
  reactor->Finish(ToGrpcStatus(s, ctx));
  return reactor;
}

}  // namespace

namespace {

// An engine-bound unary call: admitted on the callback thread, computed on
// the work pool. A call whose deadline passes or whose client goes away
// while it waits is answered without running the engine.
template <typename Response, typename Call>
grpc::ServerUnaryReactor* Offloaded(RidgelineServiceImpl* impl,
                                    grpc::CallbackServerContext* ctx,
                                    const Backend* backend, Response* resp,
                                    Call call) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  if (grpc::Status s = impl->Admit(ctx, true); !s.ok()) {
    reactor->Finish(s);
    return reactor;
  }
  if (backend == nullptr) {
    reactor->Finish(NotReady());
    return reactor;
  }
  impl->Offload(reactor, [impl, ctx, backend, resp, reactor, call] {
    if (std::chrono::system_clock::now() >= ctx->deadline()) {
      reactor->Finish(
          grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                       "the call's deadline passed while it waited for a "
                       "work thread"));
    } else if (ctx->IsCancelled()) {
      reactor->Finish(grpc::Status(grpc::StatusCode::CANCELLED,
                                   "the client cancelled the call"));
    } else {
      absl::Status s = call(*backend);
      if (!s.ok()) resp->Clear();
      reactor->Finish(ToGrpcStatus(s, ctx));
    }
    impl->Done();
  });
  return reactor;
}

}  // namespace

grpc::ServerUnaryReactor* RidgelineServiceImpl::Analyze(
    grpc::CallbackServerContext* ctx, const v1::AnalyzeRequest* req,
    v1::AnalyzeResponse* resp) {
  return Offloaded(
      this, ctx, backend_.load(), resp,
      [req, resp](const Backend& b) { return b.Analyze(*req, resp); });
}

grpc::ServerUnaryReactor* RidgelineServiceImpl::AnalyzeKernel(
    grpc::CallbackServerContext* ctx, const v1::AnalyzeKernelRequest* req,
    v1::AnalyzeKernelResponse* resp) {
  return Offloaded(
      this, ctx, backend_.load(), resp,
      [req, resp](const Backend& b) { return b.AnalyzeKernel(*req, resp); });
}

grpc::ServerUnaryReactor* RidgelineServiceImpl::ListHardware(
    grpc::CallbackServerContext* ctx, const v1::ListHardwareRequest* req,
    v1::ListHardwareResponse* resp) {
  return Unary(this, ctx, backend_.load(), resp,
               [req](const Backend& b) { return b.ListHardware(*req); });
}

grpc::ServerUnaryReactor* RidgelineServiceImpl::GetHardware(
    grpc::CallbackServerContext* ctx, const v1::GetHardwareRequest* req,
    v1::GetHardwareResponse* resp) {
  return Unary(this, ctx, backend_.load(), resp,
               [req](const Backend& b) { return b.GetHardware(*req); });
}

grpc::ServerUnaryReactor* RidgelineServiceImpl::ListModels(
    grpc::CallbackServerContext* ctx, const v1::ListModelsRequest* req,
    v1::ListModelsResponse* resp) {
  return Unary(this, ctx, backend_.load(), resp,
               [req](const Backend& b) { return b.ListModels(*req); });
}

grpc::ServerUnaryReactor* RidgelineServiceImpl::GetModel(
    grpc::CallbackServerContext* ctx, const v1::GetModelRequest* req,
    v1::GetModelResponse* resp) {
  return Unary(this, ctx, backend_.load(), resp,
               [req](const Backend& b) { return b.GetModel(*req); });
}

grpc::Status RidgelineServiceImpl::Sweep(
    grpc::ServerContext* ctx, const v1::SweepRequest* req,
    grpc::ServerWriter<v1::SweepPoint>* writer) {
  if (grpc::Status s = Admit(ctx, true); !s.ok()) return s;
  const Backend* b = backend_.load();
  if (b == nullptr) return NotReady();
  std::optional<SweepStreams::Stream> stream;
  if (runtime_.sweep_streams != nullptr) {
    absl::StatusOr<SweepStreams::Stream> admitted =
        runtime_.sweep_streams->Admit(ctx);
    if (!admitted.ok()) return ToGrpcStatus(admitted.status(), ctx);
    stream.emplace(*std::move(admitted));
  }
  absl::Status s = b->Sweep(*req, [&](const v1::SweepPoint& p) {
    // Checked between points so a cancelled or expired sweep stops within
    // one point's engine time.
    if (ctx->IsCancelled() ||
        std::chrono::system_clock::now() >= ctx->deadline()) {
      return false;
    }
    // A client that stops reading blocks Write once its flow-control window
    // is full; the watchdog cancels it after --sweep-write-timeout-seconds.
    if (stream) stream->BeginWrite();
    const bool written = writer->Write(p);
    if (stream) stream->EndWrite();
    if (!written) return false;
    if (metrics_ != nullptr) metrics_->OnSweepPointSent();
    return true;
  });
  if (absl::IsCancelled(s) &&
      std::chrono::system_clock::now() >= ctx->deadline()) {
    return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                        "sweep stopped: the deadline passed");
  }
  return ToGrpcStatus(s, ctx);
}

grpc::Status RidgelineServiceImpl::StepTime(grpc::ServerContext* ctx,
                                            const v1::StepTimeRequest* req,
                                            v1::StepTimeResponse* resp) {
  const Backend* b = backend_.load();
  if (b == nullptr) return NotReady();
  if (ctx->IsCancelled()) {
    return grpc::Status(grpc::StatusCode::CANCELLED, "step time: cancelled");
  }
  absl::Status s = b->StepTime(*req, resp);
  if (!s.ok()) resp->Clear();
  return ToGrpcStatus(s, ctx);
}

// The first message carries the scenario (a bad one ends the stream with
// its error); every message's steps are answered in order, a bad step in
// its own result. Ends when the client half-closes, cancels or the
// deadline passes.
grpc::Status RidgelineServiceImpl::StepTimeStream(
    grpc::ServerContext* ctx,
    grpc::ServerReaderWriter<v1::StepTimeResponse, v1::StepTimeStreamRequest>*
        stream) {
  const Backend* b = backend_.load();
  if (b == nullptr) return NotReady();
  auto stopped = [ctx]() -> grpc::Status {
    if (std::chrono::system_clock::now() >= ctx->deadline()) {
      return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                          "step stream stopped: the deadline passed");
    }
    return grpc::Status(grpc::StatusCode::CANCELLED,
                        "step stream stopped: the client cancelled");
  };
  v1::StepTimeStreamRequest req;
  if (!stream->Read(&req)) {
    return ctx->IsCancelled() ? stopped() : grpc::Status::OK;
  }
  if (!req.has_scenario()) {
    return ToGrpcStatus(absl::InvalidArgumentError(
        "scenario: must be set in the stream's first message; got unset"));
  }
  absl::StatusOr<std::unique_ptr<Backend::StepSession>> session =
      b->OpenStepSession(req.scenario());
  if (!session.ok()) return ToGrpcStatus(session.status(), ctx);
  v1::StepTimeResponse resp;
  bool first = true;
  do {
    if (ctx->IsCancelled()) return stopped();
    resp.Clear();
    if (!first && req.has_scenario()) {
      // Only the first message sets the scenario; this one is refused in
      // its answer and the stream goes on.
      resp.set_id(req.id());
      v1::StepTimeResult* r = resp.add_steps();
      r->set_error_code(static_cast<int32_t>(absl::StatusCode::kInvalidArgument));
      r->set_error_message(
          "scenario: must be unset after the stream's first message; got set");
    } else if (first && req.steps_size() == 0) {
      first = false;
      continue;  // the scenario alone: nothing to answer yet
    } else {
      (*session)->Answer(req, &resp);
    }
    first = false;
    if (!stream->Write(resp)) return stopped();
  } while (stream->Read(&req));
  return ctx->IsCancelled() ? stopped() : grpc::Status::OK;
}

grpc::Status RidgelineServiceImpl::Explore(
    grpc::ServerContext* ctx, const v1::ExploreRequest* req,
    grpc::ServerWriter<v1::ExploreResponse>* writer) {
  if (grpc::Status s = Admit(ctx, true); !s.ok()) return s;
  const Backend* b = backend_.load();
  if (b == nullptr) return NotReady();
  auto stop = [ctx] {
    return ctx->IsCancelled() ||
           std::chrono::system_clock::now() >= ctx->deadline();
  };
  absl::Status s = b->Explore(
      *req,
      [&](const v1::ExploreResponse& m) {
        if (stop()) return false;
        return writer->Write(m);
      },
      stop);
  if (absl::IsCancelled(s) &&
      std::chrono::system_clock::now() >= ctx->deadline()) {
    return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                        "explore stopped: the deadline passed");
  }
  return ToGrpcStatus(s, ctx);
}

grpc::Status RidgelineServiceImpl::Plan(grpc::ServerContext* ctx,
                                        const v1::PlanRequest* req,
                                        v1::PlanResponse* resp) {
  if (grpc::Status s = Admit(ctx, true); !s.ok()) return s;
  const Backend* b = backend_.load();
  if (b == nullptr) return NotReady();
  // Polled by the simulations: the client went away or the deadline passed.
  absl::StatusOr<v1::PlanResponse> r = b->Plan(*req, [ctx] {
    return ctx->IsCancelled() ||
           std::chrono::system_clock::now() >= ctx->deadline();
  });
  if (r.ok()) *resp = std::move(*r);
  return ToGrpcStatus(r.status(), ctx);
}

grpc::Status RidgelineServiceImpl::Simulate(grpc::ServerContext* ctx,
                                            const v1::SimulateRequest* req,
                                            v1::SimulateResponse* resp) {
  if (grpc::Status s = Admit(ctx, true); !s.ok()) return s;
  const Backend* b = backend_.load();
  if (b == nullptr) return NotReady();
  absl::StatusOr<v1::SimulateResponse> r = b->Simulate(*req, [ctx] {
    return ctx->IsCancelled() ||
           std::chrono::system_clock::now() >= ctx->deadline();
  });
  if (r.ok()) *resp = std::move(*r);
  return ToGrpcStatus(r.status(), ctx);
}

namespace {

// Removes the reflection plugin that linking grpc++_reflection registers.
class NoReflection final : public grpc::ServerBuilderOption {
 public:
  void UpdateArguments(grpc::ChannelArguments*) override {}
  void UpdatePlugins(
      std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>* plugins)
      override {
    plugins->erase(
        std::remove_if(plugins->begin(), plugins->end(),
                       [](const std::unique_ptr<grpc::ServerBuilderPlugin>& p) {
                         // "proto_server_reflection" in gRPC 1.51.
                         return p->name().find("reflection") !=
                                std::string::npos;
                       }),
        plugins->end());
  }
};

// Plaintext, TLS or mutual TLS. The provider re-reads the files every
// reload_seconds, so rotated certificates apply to new connections.
std::shared_ptr<grpc::ServerCredentials> ServerCredentialsFor(
    const TlsSettings& tls) {
  if (!tls.enabled()) return grpc::InsecureServerCredentials();
  auto provider =
      std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
          tls.key_path, tls.cert_path, tls.client_ca_path,
          static_cast<unsigned int>(tls.reload_seconds));
  grpc::experimental::TlsServerCredentialsOptions options(provider);
  options.watch_identity_key_cert_pairs();
  if (tls.mutual()) {
    options.watch_root_certs();
    options.set_cert_request_type(
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  } else {
    options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  }
  return grpc::experimental::TlsServerCredentials(options);
}

// Each connection holds a descriptor; the common soft limit of 1024 runs
// out at about a thousand clients, after which accept fails. The hard
// limit is what the operator allows, so take all of it.
void RaiseOpenFileLimit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
  const rlim_t before = lim.rlim_cur;
  if (lim.rlim_cur == lim.rlim_max) return;
  lim.rlim_cur = lim.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &lim) == 0) {
    Log(absl::StrCat("open-file limit raised from ", before, " to ",
                     lim.rlim_cur));
  }
}

}  // namespace

int RunServer(const ServerConfig& cfg) {
  // Block before any thread exists so every thread inherits the mask and
  // only the sigwait thread below ever sees these signals.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // gRPC's locks are absl::Mutex; Debian's absl builds with deadlock
  // detection on, which keeps a lock graph on every Lock/Unlock (~4% of an
  // Analyze's CPU in a profile). A diagnostic, not a safety feature.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  RaiseOpenFileLimit();

  // TLS and token files are read now, so a bad path stops the start with a
  // reason instead of failing every handshake later.
  absl::StatusOr<TlsPem> tls_pem = LoadTlsPem(cfg.tls);
  if (!tls_pem.ok()) {
    Log(std::string(tls_pem.status().message()));
    return 1;
  }
  BearerAuth auth;
  if (!cfg.auth_token_file.empty()) {
    absl::StatusOr<BearerAuth> a = BearerAuth::FromFile(cfg.auth_token_file);
    if (!a.ok()) {
      Log(std::string(a.status().message()));
      return 1;
    }
    auth = *std::move(a);
  }

  // Profiles are small local files: load them first and refuse to start on
  // a bad one rather than serve with a silently missing profile.
  const std::filesystem::path profile_dir =
      cfg.profile_dir.empty() ? calibration::DefaultProfileDir()
                              : std::filesystem::path(cfg.profile_dir);
  absl::StatusOr<std::shared_ptr<const calibration::ProfileStore>> profiles =
      calibration::ProfileStore::LoadDirectory(
          profile_dir, cfg.profile_dir.empty()
                           ? calibration::ProfileStore::IfMissing::kEmpty
                           : calibration::ProfileStore::IfMissing::kError);
  if (!profiles.ok()) {
    Log(absl::StrCat("cannot load profiles from ", profile_dir.string(), ": ",
                     profiles.status().ToString()));
    return 1;
  }

  std::vector<MethodInfo> methods = MethodsOf(kServiceName);
  for (MethodInfo& m : StandardServiceMethods()) methods.push_back(m);
  Metrics metrics(RIDGELINE_VERSION, methods);

  std::unique_ptr<prometheus::Exposer> exposer;
  if (!cfg.metrics_listen.empty() && cfg.metrics_listen != "off") {
    try {
      exposer = std::make_unique<prometheus::Exposer>(cfg.metrics_listen);
    } catch (const std::exception& e) {
      Log(absl::StrCat("cannot listen for metrics on ", cfg.metrics_listen,
                       ": ", e.what()));
      return 1;
    }
    exposer->RegisterCollectable(metrics.registry());
    const std::vector<int> ports = exposer->GetListeningPorts();
    std::printf(
        "metrics listening on %s\n",
        WithPort(cfg.metrics_listen, ports.empty() ? 0 : ports[0]).c_str());
    std::fflush(stdout);
  }

  plugin_host::SetHookFaultObserver(
      [&metrics](const std::string& plugin, const char* kind) {
        metrics.OnHookFault(plugin, kind);
      });
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  WorkPool pool(cfg.work_threads > 0 ? static_cast<int>(cfg.work_threads)
                                     : std::max(cores, 2),
                static_cast<size_t>(cfg.max_queued_calls));
  SweepStreamLimits stream_limits;
  stream_limits.max_streams = cfg.max_sweep_streams;
  stream_limits.max_streams_per_client = cfg.max_sweep_streams_per_client;
  stream_limits.write_timeout_seconds = cfg.sweep_write_timeout_seconds;
  SweepStreams sweep_streams(stream_limits, [&](const std::string& client) {
    metrics.OnSweepWriteTimeout();
    Log(absl::StrCat("sweep to ", client, " cancelled: no point read for ",
                     cfg.sweep_write_timeout_seconds,
                     " s (--sweep-write-timeout-seconds)"));
  });
  ServiceRuntime runtime;
  runtime.pool = &pool;
  runtime.sweep_streams = &sweep_streams;
  runtime.auth = &auth;
  RidgelineServiceImpl impl(&metrics, runtime);
  std::unique_ptr<Backend> backend;  // outlives the server below

  // The HTTP/JSON frontend over the same Backend (declared after it, so
  // destroyed first).
  std::atomic<const Backend*> http_backend{nullptr};
  std::unique_ptr<HttpFrontend> http;
  if (!cfg.http_listen.empty() && cfg.http_listen != "off") {
    // Plain HTTP next to a TLS-only gRPC port would undo what TLS was
    // configured for: refuse rather than serve it in the clear.
    if (cfg.tls.enabled()) {
      Log("--http-listen serves plain HTTP only; with --tls-cert, put it "
          "behind a TLS-terminating proxy or leave it off");
      return 1;
    }
    HttpOptions options;
    options.auth = &auth;
    options.listen = cfg.http_listen;
    options.max_body_bytes = cfg.max_message_bytes;
    options.web_dir = cfg.web_dir.empty() ? DefaultWebDir() : cfg.web_dir;
    http = std::make_unique<HttpFrontend>(
        options, [&http_backend] { return http_backend.load(); }, &metrics);
    absl::StatusOr<int> http_port = http->Start();
    if (!http_port.ok()) {
      Log(http_port.status().message());
      return 1;
    }
    Log(options.web_dir.empty()
            ? std::string("no web UI folder found; serving the API only")
            : absl::StrCat("web UI from ", options.web_dir));
    std::printf("http listening on %s\n",
                WithPort(cfg.http_listen, *http_port).c_str());
    std::fflush(stdout);
  }

  grpc::EnableDefaultHealthCheckService(true);
  if (cfg.reflection) grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  // Linking the reflection library registers its plugin for every builder;
  // --reflection=false removes it from this one.
  if (!cfg.reflection) builder.SetOption(std::make_unique<NoReflection>());
  int port = 0;
  builder.AddListeningPort(cfg.listen, ServerCredentialsFor(cfg.tls), &port);
  builder.RegisterService(&impl);
  builder.SetMaxReceiveMessageSize(static_cast<int>(cfg.max_message_bytes));
  // Idle connections hold a file descriptor each: close them (issue 14,
  // defect 4). A maximum age makes clients reconnect, which spreads them
  // over replicas added since (client-side round_robin, headless Service).
  auto ms = [](double seconds) {
    return static_cast<int>(std::min(seconds * 1000, 2e9));
  };
  if (cfg.max_connection_idle_seconds > 0) {
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS,
                               ms(cfg.max_connection_idle_seconds));
  }
  if (cfg.max_connection_age_seconds > 0) {
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS,
                               ms(cfg.max_connection_age_seconds));
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
                               ms(cfg.max_connection_age_grace_seconds));
  }
  // Bounds the synchronous Sweep handlers' threads: past this many
  // concurrent sweeps new ones get RESOURCE_EXHAUSTED instead of the process
  // running out of threads.
  grpc::ResourceQuota quota("ridgeline-server");
  quota.SetMaxThreads(kMaxServerThreads);
  builder.SetResourceQuota(quota);
  std::vector<
      std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      interceptors;
  interceptors.push_back(metrics.NewInterceptorFactory());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    Log(absl::StrCat("cannot listen on ", cfg.listen));
    return 1;
  }
  grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService();
  std::mutex health_mu;
  bool stopping = false;  // guarded by health_mu
  auto set_serving = [&](bool serving) {
    std::lock_guard<std::mutex> lock(health_mu);
    if (stopping && serving) return;
    health->SetServingStatus(serving);
    health->SetServingStatus(kServiceName, serving);
  };
  set_serving(false);
  std::printf("listening on %s\n", WithPort(cfg.listen, port).c_str());
  std::fflush(stdout);

  absl::Notification stop;
  absl::Notification exited;
  std::thread forced_exit;
  std::thread loader([&] {
    if (stop.WaitForNotificationWithTimeout(
            absl::Milliseconds(cfg.plugin_load_delay_ms))) {
      return;
    }
    const std::filesystem::path plugin_dir =
        cfg.plugin_dir.empty() ? plugin_host::DefaultPluginDir()
                               : std::filesystem::path(cfg.plugin_dir);
    // A long-running server logs every outcome (loaded and refused), so
    // its log says which plugin files it serves.
    plugin_host::HardwareRegistry::PreCheck precheck;
    if (cfg.plugin_check_timeout_seconds > 0) {
      plugin_host::ChildCheck check;
      check.exe = std::filesystem::read_symlink("/proc/self/exe");
      check.timeout_seconds = cfg.plugin_check_timeout_seconds;
      precheck = [check](const std::filesystem::path& plugin) {
        return plugin_host::CheckPluginInChild(plugin, check);
      };
    }
    std::shared_ptr<const plugin_host::HardwareRegistry> registry =
        plugin_host::HardwareRegistry::LoadDirectory(
            plugin_dir, plugin_host::LoadLog::kAll, precheck);
    metrics.OnPluginsLoaded(*registry);
    int loaded = 0;
    for (const plugin_host::LoadOutcome& o : registry->outcomes()) {
      if (o.loaded) ++loaded;
    }
    Limits limits;
    limits.max_sweep_points = cfg.max_sweep_points;
    limits.max_inline_config_bytes = cfg.max_inline_config_bytes;
    limits.max_request_cost = cfg.max_request_cost;
    backend = std::make_unique<Backend>(std::move(registry), *profiles, limits,
                                        &metrics);
    impl.SetBackend(backend.get());
    http_backend.store(backend.get());
    set_serving(true);
    Log(absl::StrCat("serving: ", loaded, " plugins, ",
                     backend->registry().platforms().size(), " platforms from ",
                     plugin_dir.string(), "; ", (*profiles)->profiles().size(),
                     " profiles"));
  });

  std::thread signaller([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    Log(absl::StrCat("signal ", sig, ": draining for up to ",
                     cfg.shutdown_grace_seconds, " s"));
    {
      std::lock_guard<std::mutex> lock(health_mu);
      stopping = true;
      health->SetServingStatus(false);
      health->SetServingStatus(kServiceName, false);
    }
    if (http != nullptr) http->BeginDrain();
    stop.Notify();
    const auto deadline =
        std::chrono::system_clock::now() +
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::duration<double>(cfg.shutdown_grace_seconds));
    // New calls get UNAVAILABLE (clients retry that elsewhere) while the
    // admitted unary calls finish; gRPC's own Shutdown would cancel calls
    // it had received but not yet dispatched (issue 14, defect 7).
    impl.StartDraining();
    while (impl.InFlight() > 0 && std::chrono::system_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    // An engine call cannot be interrupted: if one still runs well past the
    // grace, exit anyway rather than hold the pod in Terminating.
    forced_exit = std::thread([&, deadline] {
      if (!exited.WaitForNotificationWithTimeout(
              absl::FromChrono(deadline - std::chrono::system_clock::now()) +
              absl::Seconds(2))) {
        Log(absl::StrCat("forced exit: ", impl.InFlight(),
                         " calls still computing past the grace period"));
        std::fflush(nullptr);
        _exit(0);
      }
    });
    // Streams get what is left of the grace, then are cancelled.
    server->Shutdown(deadline);
  });

  server->Wait();
  exited.Notify();
  signaller.join();
  if (forced_exit.joinable()) forced_exit.join();
  loader.join();
  plugin_host::SetHookFaultObserver(nullptr);
  if (http != nullptr) http->Stop();
  Log("stopped");
  return 0;
}

}  // namespace ridgeline::service
