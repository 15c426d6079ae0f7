// RunServer: loads the plugins, starts the gRPC, HTTP and metrics listeners
// and drains on SIGTERM.
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

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/impl/server_builder_option.h"
#include "grpcpp/impl/server_builder_plugin.h"
#include "grpcpp/resource_quota.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"
#include "llmd_predictor.h"
#include "prometheus/exposer.h"
#include "ridgeline/calibration/profiles.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/plugin_host/hosted_plugin.h"
#include "ridgeline/plugin_host/plugin_library.h"
#include "ridgeline/plugin_host/registry.h"
#include "ridgeline/service/auth.h"
#include "ridgeline/service/http_frontend.h"
#include "ridgeline/service/status.h"
#include "staged_tls.h"
#include "stream_limits.h"
#include "work_pool.h"

#ifndef RIDGELINE_VERSION
#define RIDGELINE_VERSION "0.0.0"
#endif

namespace ridgeline::service {

namespace {

constexpr char kServiceName[] = "ridgeline.v1.RidgelineService";

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

// Counts the calls in progress, every service's (health, reflection and
// streams included): an interceptor lives as long as its call.
class CallCounter final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo*) override {
    return new Counted(&calls_);
  }
  int64_t calls() const { return calls_.load(); }

 private:
  class Counted final : public grpc::experimental::Interceptor {
   public:
    explicit Counted(std::atomic<int64_t>* calls) : calls_(calls) {
      calls_->fetch_add(1);
    }
    ~Counted() override { calls_->fetch_sub(1); }
    void Intercept(grpc::experimental::InterceptorBatchMethods* m) override {
      m->Proceed();
    }

   private:
    std::atomic<int64_t>* calls_;
  };
  std::atomic<int64_t> calls_{0};
};

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

// SIGHUP: the token file is read again (a bad one keeps the current token,
// logged); the gRPC port's copies of the TLS files are refreshed (applied
// within StagedTlsFiles::kPollSeconds) and the HTTP port re-reads them at
// its next handshake.
void Reload(BearerAuth& auth, StagedTlsFiles* grpc_tls, HttpFrontend* http) {
  if (auth.enabled()) {
    const absl::Status s = auth.Reload();
    Log(s.ok() ? std::string("SIGHUP: token file reloaded")
               : absl::StrCat("SIGHUP: token kept: ", s.message()));
  }
  if (grpc_tls != nullptr) {
    const absl::Status s = grpc_tls->Refresh();
    Log(s.ok() ? std::string("SIGHUP: TLS files reloaded")
               : absl::StrCat("SIGHUP: TLS files kept: ", s.message()));
  }
  if (http != nullptr) http->ReloadTls();
}

// Blocks the signals the server handles, before any thread exists, so every
// thread inherits the mask and only the sigwait thread ever sees them:
// SIGTERM and SIGINT drain, SIGHUP reloads the token and TLS files, SIGUSR1
// and SIGUSR2 are logged and ignored (their default action kills).
sigset_t BlockHandledSignals() {
  sigset_t handled;
  sigemptyset(&handled);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2}) {
    sigaddset(&handled, sig);
  }
  pthread_sigmask(SIG_BLOCK, &handled, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return handled;
}

// Waits for SIGTERM or SIGINT (returned); SIGHUP reloads on the way.
int WaitForStopSignal(const sigset_t& handled, BearerAuth& auth,
                      StagedTlsFiles* grpc_tls, HttpFrontend* http) {
  int sig = 0;
  while (sigwait(&handled, &sig) != 0 || (sig != SIGTERM && sig != SIGINT)) {
    if (sig == SIGHUP) {
      Reload(auth, grpc_tls, http);
    } else {
      Log(absl::StrCat("signal ", sig,
                       " ignored (SIGHUP reloads the token and TLS files; "
                       "SIGTERM or SIGINT stops)"));
    }
  }
  return sig;
}

// A plugin folder someone named must exist: a typo would otherwise serve
// an empty (or smaller) catalog and report SERVING.
absl::Status CheckNamedPluginDirs(const ServerConfig& cfg) {
  std::vector<std::pair<std::string, std::string>> named;  // flag, folder
  if (!cfg.plugin_dir.empty())
    named.emplace_back("--plugin-dir", cfg.plugin_dir);
  for (const std::string& dir : cfg.extra_plugin_dirs) {
    named.emplace_back("--extra-plugin-dir", dir);
  }
  for (const auto& [flag, dir] : named) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
      return absl::NotFoundError(
          absl::StrCat(flag, ": plugin folder '", dir,
                       "' does not exist or is not a directory"));
    }
  }
  return absl::OkStatus();
}

// The limits of a streaming method other than Sweep: its flags, and the
// shared --stream-idle-timeout-seconds.
StreamLimits IdleStreamLimits(const ServerConfig& cfg, const char* method,
                              int64_t total, int64_t per_client,
                              const char* total_flag,
                              const char* per_client_flag) {
  StreamLimits l;
  l.method = method;
  l.max_streams = total;
  l.max_streams_per_client = per_client;
  l.idle_timeout_seconds = cfg.stream_idle_timeout_seconds;
  l.max_streams_flag = total_flag;
  l.per_client_flag = per_client_flag;
  l.idle_timeout_flag = "--stream-idle-timeout-seconds";
  return l;
}

std::function<void(const std::string&)> LogIdleCut(const ServerConfig& cfg,
                                                   const char* method) {
  return [&cfg, method](const std::string& client) {
    Log(absl::StrCat(method, " stream of ", client,
                     " cancelled: it neither read nor sent for ",
                     cfg.stream_idle_timeout_seconds,
                     " s (--stream-idle-timeout-seconds)"));
  };
}

// The plugin folders (--plugin-dir or the installed one, then each
// --extra-plugin-dir) read into one registry. A long-running server logs
// every outcome (loaded and refused), so its log says which plugin files it
// serves. Plugins run in host processes (hosted_plugin.h), never in this
// one; a load that hangs is cut at its timeout, or at once by `stop`.
std::shared_ptr<const plugin_host::HardwareRegistry> LoadPluginFolders(
    const ServerConfig& cfg, const std::filesystem::path& plugin_dir,
    const absl::Notification& stop) {
  plugin_host::HardwareRegistry::PluginReader reader;
  if (cfg.plugin_check_timeout_seconds > 0) {
    plugin_host::HostOptions host;
    host.exe = std::filesystem::read_symlink("/proc/self/exe");
    host.load_timeout_seconds = cfg.plugin_check_timeout_seconds;
    host.cancelled = [&stop] { return stop.HasBeenNotified(); };
    reader = [host](const std::filesystem::path& plugin,
                    plugin_host::PluginContents* out) {
      return plugin_host::ReadPluginHosted(plugin, host, out);
    };
  }
  std::vector<std::filesystem::path> dirs = {plugin_dir};
  dirs.insert(dirs.end(), cfg.extra_plugin_dirs.begin(),
              cfg.extra_plugin_dirs.end());
  return plugin_host::HardwareRegistry::LoadDirectories(
      dirs, plugin_host::LoadLog::kAll, reader);
}

// Profiles are small local files: load them first and refuse to start on
// a bad one rather than serve with a silently missing profile.
absl::StatusOr<std::shared_ptr<const calibration::ProfileStore>> LoadProfiles(
    const ServerConfig& cfg) {
  const std::filesystem::path profile_dir =
      cfg.profile_dir.empty() ? calibration::DefaultProfileDir()
                              : std::filesystem::path(cfg.profile_dir);
  absl::StatusOr<std::shared_ptr<const calibration::ProfileStore>> profiles =
      calibration::ProfileStore::LoadDirectory(
          profile_dir, cfg.profile_dir.empty()
                           ? calibration::ProfileStore::IfMissing::kEmpty
                           : calibration::ProfileStore::IfMissing::kError);
  if (!profiles.ok()) {
    return absl::Status(
        profiles.status().code(),
        absl::StrCat("cannot load profiles from ", profile_dir.string(), ": ",
                     profiles.status().ToString()));
  }
  return profiles;
}

// The metrics port (null when --metrics-listen is empty or "off"); prints
// "metrics listening on HOST:PORT".
absl::StatusOr<std::unique_ptr<prometheus::Exposer>> StartMetrics(
    const ServerConfig& cfg, Metrics& metrics) {
  std::unique_ptr<prometheus::Exposer> exposer;
  if (cfg.metrics_listen.empty() || cfg.metrics_listen == "off") return exposer;
  try {
    exposer = std::make_unique<prometheus::Exposer>(cfg.metrics_listen);
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen for metrics on ", cfg.metrics_listen, ": ", e.what()));
  }
  exposer->RegisterCollectable(metrics.registry());
  const std::vector<int> ports = exposer->GetListeningPorts();
  std::printf(
      "metrics listening on %s\n",
      WithPort(cfg.metrics_listen, ports.empty() ? 0 : ports[0]).c_str());
  std::fflush(stdout);
  return exposer;
}

}  // namespace

// llm-d's latency-predictor API (--llmd-predictor-listen), started and
// announced on stdout; null when off.
absl::StatusOr<std::unique_ptr<LlmdPredictorServer>> StartLlmdPredictor(
    const ServerConfig& cfg) {
  if (cfg.llmd_predictor_listen.empty() || cfg.llmd_predictor_listen == "off") {
    return nullptr;
  }
  auto llmd = std::make_unique<LlmdPredictorServer>(
      LlmdPredictorOptions{cfg.llmd_model, cfg.llmd_hardware,
                           cfg.llmd_tensor_parallel, cfg.llmd_framework},
      cfg.llmd_predictor_listen, cfg.max_message_bytes,
      cfg.http_read_timeout_seconds);
  absl::StatusOr<int> port = llmd->Start();
  if (!port.ok()) return port.status();
  std::printf("llmd predictor listening on %s\n",
              WithPort(cfg.llmd_predictor_listen, *port).c_str());
  std::fflush(stdout);
  return llmd;
}

// What the start reads before it listens: TLS and token files, the named
// plugin folders and the profiles, so a bad one stops the start with its
// reason instead of failing every handshake or call later.
struct StartupFiles {
  BearerAuth auth;
  std::shared_ptr<const calibration::ProfileStore> profiles;
};
absl::StatusOr<StartupFiles> ReadStartupFiles(const ServerConfig& cfg) {
  RETURN_IF_ERROR(LoadTlsPem(cfg.tls).status());
  StartupFiles f;
  if (!cfg.auth_token_file.empty()) {
    ASSIGN_OR_RETURN(f.auth, BearerAuth::FromFile(cfg.auth_token_file));
  }
  RETURN_IF_ERROR(CheckNamedPluginDirs(cfg));
  ASSIGN_OR_RETURN(f.profiles, LoadProfiles(cfg));
  return f;
}

// gRPC reads private copies of the TLS files that SIGHUP and the reload
// period refresh (staged_tls.h); without a writable temporary folder
// (null) it watches the files themselves, and SIGHUP does not reach it.
std::unique_ptr<StagedTlsFiles> StageGrpcTls(const TlsSettings& tls) {
  if (!tls.enabled()) return nullptr;
  absl::StatusOr<std::unique_ptr<StagedTlsFiles>> staged =
      StagedTlsFiles::Create(tls);
  if (staged.ok()) return *std::move(staged);
  Log(absl::StrCat(
      "gRPC watches the TLS files in place (SIGHUP will not reload them): ",
      staged.status().message()));
  return nullptr;
}

// The gRPC port's message, socket, connection-lifetime and thread limits.
void SetConnectionOptions(const ServerConfig& cfg,
                          grpc::ServerBuilder& builder) {
  builder.SetMaxReceiveMessageSize(static_cast<int>(cfg.max_message_bytes));
  // gRPC sets SO_REUSEPORT by default: a second server on the same port
  // would then bind too and the kernel would split connections between the
  // two. Without it the second bind fails (as the metrics port's does).
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
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
}

namespace {

// The HTTP/JSON frontend over the Backend `backend` will point to
// (nullptr: none with --http-listen off or empty).
absl::StatusOr<std::unique_ptr<HttpFrontend>> StartHttp(
    const ServerConfig& cfg, BearerAuth& auth, Metrics& metrics,
    const std::atomic<const Backend*>& backend) {
  if (cfg.http_listen.empty() || cfg.http_listen == "off") return nullptr;
  HttpOptions options;
  options.tls = cfg.tls;  // HTTPS (and mTLS) with the gRPC port's files
  options.auth = &auth;
  options.listen = cfg.http_listen;
  options.max_body_bytes = cfg.max_message_bytes;
  options.timeout_seconds = cfg.http_timeout_seconds;
  options.read_timeout_seconds = cfg.http_read_timeout_seconds;
  options.max_connections = static_cast<int>(cfg.http_max_connections);
  for (absl::string_view origin :
       absl::StrSplit(cfg.http_allowed_origins, ',', absl::SkipWhitespace())) {
    options.allowed_origins.emplace_back(absl::StripAsciiWhitespace(origin));
  }
  options.web_dir = cfg.web_dir.empty() ? DefaultWebDir() : cfg.web_dir;
  auto http = std::make_unique<HttpFrontend>(
      options, [&backend] { return backend.load(); }, &metrics);
  absl::StatusOr<int> port = http->Start();
  if (!port.ok()) return port.status();
  Log(options.web_dir.empty()
          ? std::string("no web UI folder found; serving the API only")
          : absl::StrCat("web UI from ", options.web_dir));
  std::printf("http listening on %s\n",
              WithPort(cfg.http_listen, *port).c_str());
  std::fflush(stdout);
  return http;
}

// The gRPC server of `service` on cfg.listen (`port` the one bound), with
// the metrics and call-counting interceptors (`calls`: owned by the
// server); nullptr when it cannot listen.
std::unique_ptr<grpc::Server> StartGrpc(const ServerConfig& cfg,
                                        const StagedTlsFiles* staged_tls,
                                        grpc::Service& service,
                                        Metrics& metrics, int* port,
                                        const CallCounter** calls) {
  grpc::EnableDefaultHealthCheckService(true);
  if (cfg.reflection)
    grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  // Linking the reflection library registers its plugin for every builder;
  // --reflection=false removes it from this one.
  if (!cfg.reflection) builder.SetOption(std::make_unique<NoReflection>());
  builder.AddListeningPort(
      cfg.listen,
      ServerCredentialsFor(staged_tls != nullptr ? staged_tls->staged()
                                                 : cfg.tls),
      port);
  builder.RegisterService(&service);
  SetConnectionOptions(cfg, builder);
  std::vector<
      std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      interceptors;
  interceptors.push_back(metrics.NewInterceptorFactory());
  auto call_counter = std::make_unique<CallCounter>();
  *calls = call_counter.get();
  interceptors.push_back(std::move(call_counter));
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  return server != nullptr && *port != 0 ? std::move(server) : nullptr;
}

// Drains within cfg.shutdown_grace_seconds: new calls are refused, the
// admitted unary calls finish, then the streams; a call still computing
// well past the grace ends the process (`forced_exit`, until `exited`).
void DrainAndShutdown(const ServerConfig& cfg, RidgelineServiceImpl& impl,
                      const CallCounter& calls, grpc::Server& server,
                      absl::Notification& exited, std::thread* forced_exit) {
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
  *forced_exit = std::thread([&impl, &exited, deadline] {
    if (!exited.WaitForNotificationWithTimeout(
            absl::FromChrono(deadline - std::chrono::system_clock::now()) +
            absl::Seconds(2))) {
      Log(absl::StrCat("forced exit: ", impl.InFlight(),
                       " calls still computing past the grace period"));
      std::fflush(nullptr);
      _exit(0);
    }
  });
  // Streams get what is left of the grace. Once no call is left, stop at
  // once: gRPC's Shutdown sends GOAWAY but then waits for every client to
  // close its connection, and an idle one held the exit for seconds
  // (issue 26); past the deadline (or now) it closes them.
  while (calls.calls() > 0 && std::chrono::system_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  server.Shutdown(std::min(deadline, std::chrono::system_clock::now()));
}

}  // namespace

int RunServer(const ServerConfig& cfg) {
  const sigset_t handled = BlockHandledSignals();
  // gRPC's locks are absl::Mutex; Debian's absl builds with deadlock
  // detection on, which keeps a lock graph on every Lock/Unlock (~4% of an
  // Analyze's CPU in a profile). A diagnostic, not a safety feature.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  RaiseOpenFileLimit();

  absl::StatusOr<StartupFiles> files = ReadStartupFiles(cfg);
  if (!files.ok()) {
    Log(std::string(files.status().message()));
    return 1;
  }
  BearerAuth& auth = files->auth;

  std::vector<MethodInfo> methods = MethodsOf(kServiceName);
  for (MethodInfo& m : StandardServiceMethods()) methods.push_back(m);
  Metrics metrics(RIDGELINE_VERSION, methods);

  absl::StatusOr<std::unique_ptr<prometheus::Exposer>> exposer =
      StartMetrics(cfg, metrics);
  if (!exposer.ok()) {
    Log(std::string(exposer.status().message()));
    return 1;
  }

  plugin_host::SetHookFaultObserver(
      [&metrics](const std::string& plugin, const char* kind) {
        metrics.OnHookFault(plugin, kind);
      });
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  WorkPool pool(cfg.work_threads > 0 ? static_cast<int>(cfg.work_threads)
                                     : std::max(cores, 2),
                static_cast<size_t>(cfg.max_queued_calls));
  StreamLimits sweep_limits;  // the defaults name Sweep's flags
  sweep_limits.max_streams = cfg.max_sweep_streams;
  sweep_limits.max_streams_per_client = cfg.max_sweep_streams_per_client;
  sweep_limits.idle_timeout_seconds = cfg.sweep_write_timeout_seconds;
  StreamLimiter sweep_streams(sweep_limits, [&](const std::string& client) {
    metrics.OnSweepWriteTimeout();
    Log(absl::StrCat("sweep to ", client, " cancelled: no point read for ",
                     cfg.sweep_write_timeout_seconds,
                     " s (--sweep-write-timeout-seconds)"));
  });
  StreamLimiter explore_streams(
      IdleStreamLimits(cfg, "Explore", cfg.max_explore_streams,
                       cfg.max_explore_streams_per_client,
                       "--max-explore-streams",
                       "--max-explore-streams-per-client"),
      LogIdleCut(cfg, "Explore"));
  StreamLimiter step_streams(
      IdleStreamLimits(cfg, "StepTimeStream", cfg.max_step_streams,
                       cfg.max_step_streams_per_client, "--max-step-streams",
                       "--max-step-streams-per-client"),
      LogIdleCut(cfg, "StepTimeStream"));
  ServiceRuntime runtime;
  runtime.pool = &pool;
  runtime.sweep_streams = &sweep_streams;
  runtime.explore_streams = &explore_streams;
  runtime.step_streams = &step_streams;
  runtime.default_timeout_seconds = cfg.grpc_default_timeout_seconds;
  runtime.auth = &auth;
  RidgelineServiceImpl impl(&metrics, runtime);
  std::unique_ptr<Backend> backend;  // outlives the server below

  // The HTTP/JSON frontend over the same Backend (declared after it, so
  // destroyed first).
  std::atomic<const Backend*> http_backend{nullptr};
  absl::StatusOr<std::unique_ptr<HttpFrontend>> http_started =
      StartHttp(cfg, auth, metrics, http_backend);
  if (!http_started.ok()) {
    Log(http_started.status().message());
    return 1;
  }
  std::unique_ptr<HttpFrontend> http = *std::move(http_started);

  // llm-d's latency-predictor API on its own port (503 until the pod model
  // is built from the loaded plugins, below).
  absl::StatusOr<std::unique_ptr<LlmdPredictorServer>> llmd_started =
      StartLlmdPredictor(cfg);
  if (!llmd_started.ok()) {
    Log(llmd_started.status().message());
    return 1;
  }
  std::unique_ptr<LlmdPredictorServer> llmd = *std::move(llmd_started);

  std::unique_ptr<StagedTlsFiles> grpc_tls = StageGrpcTls(cfg.tls);

  int port = 0;
  const CallCounter* calls = nullptr;  // owned by the server
  std::unique_ptr<grpc::Server> server =
      StartGrpc(cfg, grpc_tls.get(), impl, metrics, &port, &calls);
  if (server == nullptr) {
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
  std::thread tls_refresher;
  if (grpc_tls != nullptr) {
    tls_refresher = std::thread([&] {
      while (!stop.WaitForNotificationWithTimeout(
          absl::Seconds(cfg.tls.reload_seconds))) {
        if (absl::Status s = grpc_tls->Refresh(); !s.ok()) {
          Log(absl::StrCat("TLS files kept: ", s.message()));
        }
      }
    });
  }
  std::thread forced_exit;
  std::thread loader([&] {
    if (stop.WaitForNotificationWithTimeout(
            absl::Milliseconds(cfg.plugin_load_delay_ms))) {
      return;
    }
    const std::filesystem::path plugin_dir =
        cfg.plugin_dir.empty() ? plugin_host::DefaultPluginDir()
                               : std::filesystem::path(cfg.plugin_dir);
    std::shared_ptr<const plugin_host::HardwareRegistry> registry =
        LoadPluginFolders(cfg, plugin_dir, stop);
    metrics.OnPluginsLoaded(*registry);
    int loaded = 0;
    for (const plugin_host::LoadOutcome& o : registry->outcomes()) {
      if (o.loaded) ++loaded;
    }
    const Limits limits = LimitsFromConfig(cfg);
    backend = std::make_unique<Backend>(std::move(registry), files->profiles,
                                        limits, &metrics);
    impl.SetBackend(backend.get());
    http_backend.store(backend.get());
    if (llmd != nullptr) {
      if (absl::Status st = llmd->SetBackend(*backend); !st.ok()) {
        Log(absl::StrCat("llmd predictor not ready: ", st.message()));
      }
    }
    // Ready only with at least one platform: a replica whose plugins all
    // failed must not take traffic (it would answer NOT_FOUND for every id).
    const bool any_platform = !backend->registry().platforms().empty();
    set_serving(any_platform);
    if (!any_platform) {
      Log(absl::StrCat("not ready: no hardware platform loaded from ",
                       plugin_dir.string(), " (see the refusals above)"));
    }
    Log(absl::StrCat(any_platform ? "serving: " : "loaded: ", loaded,
                     " plugins, ", backend->registry().platforms().size(),
                     " platforms from ", plugin_dir.string(), "; ",
                     files->profiles->profiles().size(), " profiles"));
  });

  std::thread signaller([&] {
    const int sig =
        WaitForStopSignal(handled, auth, grpc_tls.get(), http.get());
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
    DrainAndShutdown(cfg, impl, *calls, *server, exited, &forced_exit);
  });

  server->Wait();
  signaller.join();
  if (tls_refresher.joinable()) tls_refresher.join();
  // A load still running is cut by `stop` (hosted) or, in process, by the
  // forced exit above: `exited` is only told once the loader is done.
  loader.join();
  exited.Notify();
  if (forced_exit.joinable()) forced_exit.join();
  plugin_host::SetHookFaultObserver(nullptr);
  if (http != nullptr) http->Stop();
  if (llmd != nullptr) llmd->Stop();
  Log("stopped");
  return 0;
}

}  // namespace ridgeline::service
