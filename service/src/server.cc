#include "ridgeline/service/server.h"

#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <mutex>
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
#include "grpcpp/support/message_allocator.h"
#include "prometheus/exposer.h"
#include "ridgeline/calibration/profiles.h"
#include "ridgeline/plugin_host/registry.h"
#include "ridgeline/service/status.h"

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
        if (!(field == &ServerConfig::metrics_listen &&
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

RidgelineServiceImpl::RidgelineServiceImpl(Metrics* metrics)
    : metrics_(metrics),
      analyze_allocator_(
          std::make_unique<ArenaMessageAllocator<v1::AnalyzeRequest,
                                                 v1::AnalyzeResponse>>()) {
  SetMessageAllocatorFor_Analyze(analyze_allocator_.get());
}

RidgelineServiceImpl::~RidgelineServiceImpl() = default;

namespace {

// Runs one unary call to completion on the calling (callback) thread.
template <typename Response, typename Call>
grpc::ServerUnaryReactor* Unary(grpc::CallbackServerContext* ctx,
                                const Backend* backend, Response* resp,
                                Call call) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  if (backend == nullptr) {
    reactor->Finish(NotReady());
    return reactor;
  }
  absl::StatusOr<Response> r = call(*backend);
  if (r.ok()) *resp = std::move(*r);
  reactor->Finish(ToGrpcStatus(r.status()));
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
  reactor->Finish(ToGrpcStatus(s));
  return reactor;
}

}  // namespace

grpc::ServerUnaryReactor* RidgelineServiceImpl::Analyze(
    grpc::CallbackServerContext* ctx, const v1::AnalyzeRequest* req,
    v1::AnalyzeResponse* resp) {
  return UnaryInPlace(
      ctx, backend_.load(), resp,
      [req, resp](const Backend& b) { return b.Analyze(*req, resp); });
}

grpc::ServerUnaryReactor* RidgelineServiceImpl::AnalyzeKernel(
    grpc::CallbackServerContext* ctx, const v1::AnalyzeKernelRequest* req,
    v1::AnalyzeKernelResponse* resp) {
  return UnaryInPlace(
      ctx, backend_.load(), resp,
      [req, resp](const Backend& b) { return b.AnalyzeKernel(*req, resp); });
}

grpc::ServerUnaryReactor* RidgelineServiceImpl::ListHardware(
    grpc::CallbackServerContext* ctx, const v1::ListHardwareRequest* req,
    v1::ListHardwareResponse* resp) {
  return Unary(ctx, backend_.load(), resp,
               [req](const Backend& b) { return b.ListHardware(*req); });
}

grpc::ServerUnaryReactor* RidgelineServiceImpl::GetHardware(
    grpc::CallbackServerContext* ctx, const v1::GetHardwareRequest* req,
    v1::GetHardwareResponse* resp) {
  return Unary(ctx, backend_.load(), resp,
               [req](const Backend& b) { return b.GetHardware(*req); });
}

grpc::ServerUnaryReactor* RidgelineServiceImpl::ListModels(
    grpc::CallbackServerContext* ctx, const v1::ListModelsRequest* req,
    v1::ListModelsResponse* resp) {
  return Unary(ctx, backend_.load(), resp,
               [req](const Backend& b) { return b.ListModels(*req); });
}

grpc::ServerUnaryReactor* RidgelineServiceImpl::GetModel(
    grpc::CallbackServerContext* ctx, const v1::GetModelRequest* req,
    v1::GetModelResponse* resp) {
  return Unary(ctx, backend_.load(), resp,
               [req](const Backend& b) { return b.GetModel(*req); });
}

grpc::Status RidgelineServiceImpl::Sweep(
    grpc::ServerContext* ctx, const v1::SweepRequest* req,
    grpc::ServerWriter<v1::SweepPoint>* writer) {
  const Backend* b = backend_.load();
  if (b == nullptr) return NotReady();
  absl::Status s = b->Sweep(*req, [&](const v1::SweepPoint& p) {
    // Checked between points so a cancelled or expired sweep stops within
    // one point's engine time.
    if (ctx->IsCancelled()) return false;
    if (!writer->Write(p)) return false;
    if (metrics_ != nullptr) metrics_->OnSweepPointSent();
    return true;
  });
  if (absl::IsCancelled(s) &&
      std::chrono::system_clock::now() >= ctx->deadline()) {
    return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                        "sweep stopped: the deadline passed");
  }
  return ToGrpcStatus(s);
}

grpc::Status RidgelineServiceImpl::Plan(grpc::ServerContext* ctx,
                                        const v1::PlanRequest* req,
                                        v1::PlanResponse* resp) {
  const Backend* b = backend_.load();
  if (b == nullptr) return NotReady();
  // Polled by the simulations: the client went away or the deadline passed.
  absl::StatusOr<v1::PlanResponse> r = b->Plan(*req, [ctx] {
    return ctx->IsCancelled() ||
           std::chrono::system_clock::now() >= ctx->deadline();
  });
  if (r.ok()) *resp = std::move(*r);
  return ToGrpcStatus(r.status());
}

grpc::Status RidgelineServiceImpl::Simulate(grpc::ServerContext* ctx,
                                            const v1::SimulateRequest* req,
                                            v1::SimulateResponse* resp) {
  const Backend* b = backend_.load();
  if (b == nullptr) return NotReady();
  absl::StatusOr<v1::SimulateResponse> r = b->Simulate(*req, [ctx] {
    return ctx->IsCancelled() ||
           std::chrono::system_clock::now() >= ctx->deadline();
  });
  if (r.ok()) *resp = std::move(*r);
  return ToGrpcStatus(r.status());
}

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

  RidgelineServiceImpl impl(&metrics);
  std::unique_ptr<Backend> backend;  // outlives the server below

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(cfg.listen, grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(&impl);
  builder.SetMaxReceiveMessageSize(static_cast<int>(cfg.max_message_bytes));
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
    std::shared_ptr<const plugin_host::HardwareRegistry> registry =
        plugin_host::HardwareRegistry::LoadDirectory(
            plugin_dir, plugin_host::LoadLog::kAll);
    metrics.OnPluginsLoaded(*registry);
    int loaded = 0;
    for (const plugin_host::LoadOutcome& o : registry->outcomes()) {
      if (o.loaded) ++loaded;
    }
    Limits limits;
    limits.max_sweep_points = cfg.max_sweep_points;
    backend = std::make_unique<Backend>(std::move(registry), *profiles, limits,
                                        &metrics);
    impl.SetBackend(backend.get());
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
    stop.Notify();
    server->Shutdown(
        std::chrono::system_clock::now() +
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::duration<double>(cfg.shutdown_grace_seconds)));
  });

  server->Wait();
  signaller.join();
  loader.join();
  Log("stopped");
  return 0;
}

}  // namespace ridgeline::service
