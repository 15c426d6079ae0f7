#include "ridgeline/service/metrics.h"

#include <chrono>
#include <map>

#include "google/protobuf/descriptor.h"
#include "grpcpp/server_context.h"

namespace ridgeline::service {
namespace {

// CalibrationUsed.selected_by values, each a pre-created series.
constexpr std::array<std::string_view, 4> kCalibrationSelections = {
    "profile", "framework-match", "hardware-match", "none"};

using grpc::experimental::InterceptionHookPoints;
using grpc::experimental::ServerRpcInfo;

constexpr int kCodeCount = 17;  // grpc::StatusCode OK..UNAUTHENTICATED

// The names grpc-ecosystem/go-grpc-prometheus prints (Go's codes.Code
// strings), so dashboards built for it work unchanged.
const char* CodeName(int code) {
  static constexpr const char* kNames[kCodeCount] = {"OK",
                                                     "Canceled",
                                                     "Unknown",
                                                     "InvalidArgument",
                                                     "DeadlineExceeded",
                                                     "NotFound",
                                                     "AlreadyExists",
                                                     "PermissionDenied",
                                                     "ResourceExhausted",
                                                     "FailedPrecondition",
                                                     "Aborted",
                                                     "OutOfRange",
                                                     "Unimplemented",
                                                     "Internal",
                                                     "Unavailable",
                                                     "DataLoss",
                                                     "Unauthenticated"};
  return kNames[code];
}

MethodInfo Split(std::string_view full_name, std::string type) {
  MethodInfo m;
  m.full_name = std::string(full_name);
  m.type = std::move(type);
  std::string_view rest = full_name;
  if (!rest.empty() && rest.front() == '/') rest.remove_prefix(1);
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos) {
    m.service = "unknown";
    m.method = std::string(rest);
  } else {
    m.service = std::string(rest.substr(0, slash));
    m.method = std::string(rest.substr(slash + 1));
  }
  return m;
}

// Latency buckets in seconds: 50 us .. 10 s, roughly x2.5 apart, so both a
// microsecond Analyze and a long Sweep land in a useful bucket.
prometheus::Histogram::BucketBoundaries RpcBuckets() {
  return {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
          0.05,    0.1,    0.25,    0.5,    1,     2.5,    5,     10};
}
prometheus::Histogram::BucketBoundaries EngineBuckets() {
  return {0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001,
          0.0025,   0.005,   0.01,     0.025,   0.05,   0.1,     0.25,   1};
}

class MetricsInterceptor : public grpc::experimental::Interceptor {
 public:
  MetricsInterceptor(const Metrics::PerMethod& m, bool single_request,
                     grpc::ServerContextBase* context)
      : m_(m),
        single_request_(single_request),
        context_(context),
        start_(std::chrono::steady_clock::now()) {}
  ~MetricsInterceptor() override {
    // A call torn down without sending a status (server shut down, client
    // gone) still counts as handled.
    if (!done_) Record(grpc::StatusCode::CANCELLED);
  }

  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::POST_RECV_INITIAL_METADATA)) {
      m_.started->Increment();
    }
    // gRPC answers a request that does not parse as the method's message
    // with UNIMPLEMENTED (callback unary) or INTERNAL (sync streaming) and no
    // message; it is the client's fault, so say so.
    if (single_request_ &&
        methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::POST_RECV_MESSAGE) &&
        !received_) {
      received_ = true;
      unparsable_ = methods->GetRecvMessage() == nullptr;
    }
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::PRE_SEND_STATUS)) {
      grpc::Status status = methods->GetSendStatus();
      // A call whose deadline passed before its message arrived has no
      // message either (gRPC then answers UNIMPLEMENTED, as for bytes that
      // do not parse); it is not a bad request. The server's copy of the
      // deadline is taken from the rounded-up grpc-timeout header on
      // arrival, so it lags the client's by up to a millisecond: a
      // message-less call within a second of its deadline is counted as an
      // expired deadline.
      const bool near_deadline =
          context_ != nullptr &&
          context_->deadline() - std::chrono::system_clock::now() <
              std::chrono::seconds(1);
      if (unparsable_ && context_ != nullptr &&
          (near_deadline || context_->IsCancelled())) {
        status = near_deadline
                     ? grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                                    "the call's deadline passed before its "
                                    "request arrived")
                     : grpc::Status(grpc::StatusCode::CANCELLED,
                                    "the client cancelled the call before "
                                    "its request arrived");
        methods->ModifySendStatus(status);
      } else if (unparsable_ &&
          (status.error_code() == grpc::StatusCode::UNIMPLEMENTED ||
           status.error_code() == grpc::StatusCode::INTERNAL)) {
        status = grpc::Status(
            grpc::StatusCode::INVALID_ARGUMENT,
            "request: not a valid serialized protobuf of the method's "
            "request message");
        methods->ModifySendStatus(status);
      }
      Record(status.error_code());
    }
    methods->Proceed();
  }

 private:
  void Record(grpc::StatusCode code) {
    if (done_) return;
    done_ = true;
    int c = static_cast<int>(code);
    if (c < 0 || c >= kCodeCount)
      c = static_cast<int>(grpc::StatusCode::UNKNOWN);
    m_.handled[c]->Increment();
    const std::chrono::duration<double> d =
        std::chrono::steady_clock::now() - start_;
    m_.seconds->Observe(d.count());
  }

  const Metrics::PerMethod& m_;
  const bool single_request_;  // unary or server streaming
  grpc::ServerContextBase* const context_;  // the call's; may be null
  const std::chrono::steady_clock::time_point start_;
  bool done_ = false;
  bool received_ = false;
  bool unparsable_ = false;
};

class MetricsInterceptorFactory
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit MetricsInterceptorFactory(Metrics* metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      ServerRpcInfo* info) override {
    using Type = ServerRpcInfo::Type;
    return new MetricsInterceptor(
        metrics_->ForMethod(info->method()),
        info->type() == Type::UNARY || info->type() == Type::SERVER_STREAMING,
        info->server_context());
  }

 private:
  Metrics* metrics_;
};

}  // namespace

prometheus::Histogram::BucketBoundaries RpcLatencyBuckets() {
  return RpcBuckets();
}

std::vector<MethodInfo> MethodsOf(std::string_view service_full_name) {
  std::vector<MethodInfo> out;
  const google::protobuf::ServiceDescriptor* sd =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
          std::string(service_full_name));
  if (sd == nullptr) return out;
  for (int i = 0; i < sd->method_count(); ++i) {
    const google::protobuf::MethodDescriptor* md = sd->method(i);
    std::string type =
        md->client_streaming()
            ? (md->server_streaming() ? "bidi_stream" : "client_stream")
            : (md->server_streaming() ? "server_stream" : "unary");
    out.push_back(
        Split(std::string("/") + sd->full_name() + "/" + md->name(), type));
  }
  return out;
}

std::vector<MethodInfo> StandardServiceMethods() {
  return {
      Split("/grpc.health.v1.Health/Check", "unary"),
      Split("/grpc.health.v1.Health/Watch", "server_stream"),
      Split("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
            "bidi_stream"),
  };
}

Metrics::Metrics(std::string_view version,
                 const std::vector<MethodInfo>& methods)
    : registry_(std::make_shared<prometheus::Registry>()),
      started_(prometheus::BuildCounter()
                   .Name("grpc_server_started_total")
                   .Help("RPCs started on the server.")
                   .Register(*registry_)),
      handled_(prometheus::BuildCounter()
                   .Name("grpc_server_handled_total")
                   .Help("RPCs completed on the server, by status code.")
                   .Register(*registry_)),
      handling_seconds_(prometheus::BuildHistogram()
                            .Name("grpc_server_handling_seconds")
                            .Help("Time from RPC start to status sent, in "
                                  "seconds.")
                            .Register(*registry_)),
      analyses_(
          prometheus::BuildCounter()
              .Name("ridgeline_analyses_total")
              .Help("Engine analyses run, by kind (analyze, sweep, kernel).")
              .Register(*registry_)),
      analyses_analyze_(&analyses_.Add({{"kind", "analyze"}})),
      analyses_sweep_(&analyses_.Add({{"kind", "sweep"}})),
      analyses_kernel_(&analyses_.Add({{"kind", "kernel"}})),
      sweep_points_(&prometheus::BuildCounter()
                         .Name("ridgeline_sweep_points_total")
                         .Help("Sweep points streamed to clients.")
                         .Register(*registry_)
                         .Add({})),
      sweep_write_timeouts_(
          &prometheus::BuildCounter()
               .Name("ridgeline_sweep_write_timeouts_total")
               .Help("Sweep streams cancelled because the client read no "
                     "point for --sweep-write-timeout-seconds.")
               .Register(*registry_)
               .Add({})),
      engine_seconds_(&prometheus::BuildHistogram()
                           .Name("ridgeline_engine_seconds")
                           .Help("Wall time of one engine analysis, in "
                                 "seconds.")
                           .Register(*registry_)
                           .Add({}, EngineBuckets())),
      plugins_loaded_(&prometheus::BuildGauge()
                           .Name("ridgeline_plugins_loaded")
                           .Help("Hardware plugins loaded.")
                           .Register(*registry_)
                           .Add({})),
      plugin_loads_(prometheus::BuildCounter()
                        .Name("ridgeline_plugin_loads_total")
                        .Help("Plugin load attempts, by family and outcome "
                              "(loaded, refused).")
                        .Register(*registry_)),
      hook_faults_(prometheus::BuildCounter()
                       .Name("ridgeline_plugin_hook_faults_total")
                       .Help("Efficiency-hook answers not used (engine "
                             "defaults used instead), by plugin file and "
                             "kind (error, not_finite, out_of_range, host_failed).")
                       .Register(*registry_)) {
  prometheus::BuildGauge()
      .Name("ridgeline_build_info")
      .Help("Build information; the value is always 1.")
      .Register(*registry_)
      .Add({{"version", std::string(version)}})
      .Set(1);
  auto& selections = prometheus::BuildCounter()
                         .Name("ridgeline_calibration_selections_total")
                         .Help("How requests' calibration was chosen, by "
                               "selected_by (profile, framework-match, "
                               "hardware-match, none).")
                         .Register(*registry_);
  for (size_t i = 0; i < kCalibrationSelections.size(); ++i) {
    calibration_selections_[i] = &selections.Add(
        {{"selected_by", std::string(kCalibrationSelections[i])}});
  }
  for (const MethodInfo& m : methods) known_.emplace(m.full_name, Create(m));
  MethodInfo unknown;
  unknown.service = "unknown";
  unknown.method = "unknown";
  unknown.type = "unknown";
  unknown_ = Create(unknown);
}

Metrics::PerMethod Metrics::Create(const MethodInfo& m) {
  PerMethod pm;
  const std::map<std::string, std::string> base = {{"grpc_service", m.service},
                                                   {"grpc_method", m.method},
                                                   {"grpc_type", m.type}};
  pm.started = &started_.Add(base);
  for (int c = 0; c < kCodeCount; ++c) {
    auto labels = base;
    labels["grpc_code"] = CodeName(c);
    pm.handled[c] = &handled_.Add(labels);
  }
  pm.seconds = &handling_seconds_.Add(base, RpcBuckets());
  return pm;
}

const Metrics::PerMethod& Metrics::ForMethod(
    absl::string_view full_name) const {
  if (auto it = known_.find(full_name); it != known_.end()) return it->second;
  return unknown_;
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
Metrics::NewInterceptorFactory() {
  return std::make_unique<MetricsInterceptorFactory>(this);
}

void Metrics::OnAnalysis(std::string_view kind, double engine_seconds,
                         bool /*ok*/) {
  (kind == "sweep"    ? analyses_sweep_
   : kind == "kernel" ? analyses_kernel_
                      : analyses_analyze_)
      ->Increment();
  engine_seconds_->Observe(engine_seconds);
}

void Metrics::OnCalibration(std::string_view selected_by) {
  for (size_t i = 0; i < kCalibrationSelections.size(); ++i) {
    if (kCalibrationSelections[i] == selected_by) {
      calibration_selections_[i]->Increment();
      return;
    }
  }
}

void Metrics::OnHookFault(const std::string& plugin, const char* kind) {
  // Family::Add is thread-safe and returns the existing series; plugins are
  // few, so the label set stays small.
  hook_faults_.Add({{"plugin", plugin}, {"kind", kind}}).Increment();
}

void Metrics::OnPluginsLoaded(const plugin_host::HardwareRegistry& registry) {
  int loaded = 0;
  for (const plugin_host::LoadOutcome& o : registry.outcomes()) {
    if (o.loaded) ++loaded;
    plugin_loads_
        .Add({{"family", o.family.empty() ? "unknown" : o.family},
              {"outcome", o.loaded ? "loaded" : "refused"}})
        .Increment();
  }
  plugins_loaded_->Set(loaded);
}

}  // namespace ridgeline::service
