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
#include "grpcpp/resource_quota.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"
#include "grpcpp/impl/server_builder_option.h"
#include "grpcpp/impl/server_builder_plugin.h"
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
    HttpOptions options;
    options.tls = cfg.tls;  // HTTPS (and mTLS) with the gRPC port's files
    options.auth = &auth;
    options.listen = cfg.http_listen;
    options.max_body_bytes = cfg.max_message_bytes;
    options.timeout_seconds = cfg.http_timeout_seconds;
    options.read_timeout_seconds = cfg.http_read_timeout_seconds;
    options.max_connections = static_cast<int>(cfg.http_max_connections);
    for (absl::string_view origin : absl::StrSplit(
             cfg.http_allowed_origins, ',', absl::SkipWhitespace())) {
      options.allowed_origins.emplace_back(absl::StripAsciiWhitespace(origin));
    }
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
