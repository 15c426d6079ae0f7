// Prometheus metrics of the server: the grpc_server_* families (fed by one
// gRPC interceptor) and the ridgeline_* domain metrics. Owns its
// prometheus::Registry; the caller exposes it (prometheus::Exposer).
// Thread-safe: counters are atomic and the per-method table is immutable
// after construction.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "grpcpp/support/server_interceptor.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "ridgeline/plugin_host/registry.h"
#include "ridgeline/service/backend.h"

namespace ridgeline::service {

// One RPC method as the interceptor sees it.
struct MethodInfo {
  std::string full_name;  // "/ridgeline.v1.RidgelineService/Analyze"
  std::string service;    // "ridgeline.v1.RidgelineService"
  std::string method;     // "Analyze"
  std::string type;  // "unary", "server_stream", "client_stream", "bidi_stream"
};

class Metrics : public BackendObserver {
 public:
  // `methods`: every method whose series are pre-created at zero for every
  // gRPC code. Calls to any other method name (a client can send any) share
  // one "unknown" series, keeping label cardinality bounded.
  Metrics(std::string_view version, const std::vector<MethodInfo>& methods);

  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  // A factory for grpc::ServerBuilder::experimental().SetInterceptorCreators.
  // Its interceptors reference *this, which must outlive the server.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
  NewInterceptorFactory();

  // BackendObserver.
  void OnAnalysis(std::string_view kind, double engine_seconds,
                  bool ok) override;
  void OnCalibration(std::string_view selected_by) override;

  void OnSweepPointSent() { sweep_points_->Increment(); }
  // A Sweep cancelled because its client stopped reading.
  void OnSweepWriteTimeout() { sweep_write_timeouts_->Increment(); }
  void OnPluginsLoaded(const plugin_host::HardwareRegistry& registry);
  // An efficiency hook's answer was not used (plugin_host's
  // HookFaultObserver).
  void OnHookFault(const std::string& plugin, const char* kind);

  // Used by the interceptor.
  struct PerMethod {
    prometheus::Counter* started = nullptr;
    std::array<prometheus::Counter*, 17> handled{};  // by grpc::StatusCode
    prometheus::Histogram* seconds = nullptr;
  };
  const PerMethod& ForMethod(absl::string_view full_name) const;

 private:
  PerMethod Create(const MethodInfo& m);

  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& started_;
  prometheus::Family<prometheus::Counter>& handled_;
  prometheus::Family<prometheus::Histogram>& handling_seconds_;
  prometheus::Family<prometheus::Counter>& analyses_;
  prometheus::Counter* analyses_analyze_;
  prometheus::Counter* analyses_sweep_;
  prometheus::Counter* analyses_kernel_;
  prometheus::Counter* sweep_points_;
  prometheus::Counter* sweep_write_timeouts_;
  // By selected_by, in the order of kCalibrationSelections (metrics.cc).
  std::array<prometheus::Counter*, 4> calibration_selections_{};
  prometheus::Histogram* engine_seconds_;
  prometheus::Gauge* plugins_loaded_;
  prometheus::Family<prometheus::Counter>& plugin_loads_;
  prometheus::Family<prometheus::Counter>& hook_faults_;

  absl::flat_hash_map<std::string, PerMethod> known_;  // immutable
  PerMethod unknown_;
};

// The methods of a service in the generated descriptor pool, for
// pre-creating series.
std::vector<MethodInfo> MethodsOf(std::string_view service_full_name);
// grpc.health.v1.Health and the server reflection service (their
// descriptors are not in the generated pool).
std::vector<MethodInfo> StandardServiceMethods();

}  // namespace ridgeline::service
