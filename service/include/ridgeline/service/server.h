// The gRPC front of the Ridgeline service: configuration (flags with
// environment-variable equivalents), the RidgelineService implementation
// over a Backend, and RunServer(), which owns the whole server lifecycle
// (bind, load plugins, health, metrics, signals, drain).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "ridgeline/service/backend.h"
#include "ridgeline/service/metrics.h"
#include "ridgeline/service/tls.h"
#include "ridgeline/v1/ridgeline.grpc.pb.h"

namespace ridgeline::service {

struct ServerConfig {
  std::string listen = "0.0.0.0:50051";
  std::string metrics_listen = "0.0.0.0:9464";  // "" or "off": no metrics
  std::string http_listen;  // "" or "off": no HTTP/JSON API and web UI
  // HTTP requests' deadline without a grpc-timeout header, and the longest
  // one may ask for; 0 = none (HttpOptions::timeout_seconds).
  double http_timeout_seconds = 300;
  // The HTTP port's slow-client bounds and cross-origin allow-list
  // (HttpOptions::read_timeout_seconds, max_connections, allowed_origins;
  // the list comma-separated).
  double http_read_timeout_seconds = 20;
  int64_t http_max_connections = 1024;
  std::string http_allowed_origins;
  std::string web_dir;      // "" = DefaultWebDir()
  // llm-d latency-predictor endpoint (llmd_predictor.h); "" or "off": none.
  std::string llmd_predictor_listen;
  std::string llmd_model;
  std::string llmd_hardware;
  int64_t llmd_tensor_parallel = 1;
  std::string llmd_framework;
  std::string plugin_dir;   // "" = plugin_host::DefaultPluginDir()
  // Loaded after plugin_dir, in this order (--extra-plugin-dir).
  std::vector<std::string> extra_plugin_dirs;
  std::string profile_dir;  // "" = calibration::DefaultProfileDir()
  int64_t max_sweep_points = 100000;
  int64_t max_message_bytes = 4 << 20;  // gRPC's own default receive cap
  double shutdown_grace_seconds = 10;
  // Delays plugin loading (for observing readiness in tests and probes).
  int64_t plugin_load_delay_ms = 0;

  // Limits and faults (issue 14); see service/README.md.
  double plugin_check_timeout_seconds = 10;  // 0: in process, no isolation
  int64_t max_inline_config_bytes = 1 << 20;
  double max_request_cost = 1e12;  // token-layers, see Limits
  int64_t work_threads = 0;        // 0: one per CPU core
  int64_t max_queued_calls = 1024;
  int64_t max_sweep_streams = 64;
  int64_t max_sweep_streams_per_client = 8;
  double sweep_write_timeout_seconds = 30;
  // Explore and StepTimeStream streams: the same kind of bounds (issue 26).
  // The three totals together stay within kStreamThreadBudget.
  int64_t max_explore_streams = 32;
  int64_t max_explore_streams_per_client = 8;
  int64_t max_step_streams = 64;
  int64_t max_step_streams_per_client = 8;
  // An Explore or StepTimeStream whose client has neither read nor sent for
  // this long while the server waits on it is cancelled.
  double stream_idle_timeout_seconds = 60;
  double max_connection_idle_seconds = 300;  // 0: never closed for idleness
  double max_connection_age_seconds = 0;     // 0: unlimited
  double max_connection_age_grace_seconds = 30;

  // Cost, memory and concurrency of expensive calls (issue 26); see Limits
  // and docs/operations.md "Limits".
  int64_t max_explore_points = 100'000'000;
  int64_t max_explore_all_points = 1'000'000;
  int64_t max_explore_front_points = 100'000;
  double max_sequence_steps = 2e9;
  int64_t max_request_memory_bytes = int64_t{256} << 20;
  int64_t max_plan_candidates = 512;
  int64_t max_concurrent_expensive_calls = 0;  // 0: one per CPU core
  // Deadline of a unary gRPC call that sets none; 0 = none.
  double grpc_default_timeout_seconds = 300;

  // Security; see docs/operations.md "Security".
  TlsSettings tls;
  std::string auth_token_file;  // "": no authentication
  bool reflection = true;
};

// gRPC's synchronous threads (the streams' handlers and the long unary
// calls) are capped at kMaxServerThreads; the streams' totals may take at
// most kStreamThreadBudget of them, so unary calls always find a thread.
inline constexpr int kMaxServerThreads = 256;
inline constexpr int kStreamThreadBudget = 192;

// Environment first, then flags ("--name=value" or "--name value"). `getenv`
// is injected for tests. Sets *help and returns defaults for --help / -h.
// Errors name the flag (or variable), the allowed range and the value.
absl::StatusOr<ServerConfig> ParseServerConfig(
    int argc, const char* const* argv,
    const std::function<const char*(const char*)>& getenv, bool* help);

// The --help text: every flag, its variable, default and range.
std::string ServerUsage();

// The Backend's limits the settings ask for (0 concurrent expensive calls:
// one per CPU core, at least 2).
Limits LimitsFromConfig(const ServerConfig& cfg);

// The unary methods use gRPC's callback API (they are short and CPU-bound:
// running them on the completion threads avoids a thread hop per call);
// Sweep stays synchronous because it runs long and blocks on flow control.
using RidgelineServiceBase = v1::RidgelineService::WithCallbackMethod_StepTime<
    v1::RidgelineService::WithCallbackMethod_Analyze<
        v1::RidgelineService::WithCallbackMethod_ListHardware<
            v1::RidgelineService::WithCallbackMethod_GetHardware<
                v1::RidgelineService::WithCallbackMethod_ListModels<
                    v1::RidgelineService::WithCallbackMethod_GetModel<
                        v1::RidgelineService::WithCallbackMethod_AnalyzeKernel<
                            v1::RidgelineService::Service>>>>>>>;

// Allocates each call's request and response on a protobuf Arena, and
// recycles the arenas: parsing the request and building the (10 KB, ~600
// field) Analyze response then cost bump allocations instead of hundreds of
// mallocs and frees. Thread-safe.
template <typename Request, typename Response>
class ArenaMessageAllocator;

class WorkPool;
class StreamLimiter;
class BearerAuth;

// What a RidgelineServiceImpl admits and where it runs the engine. Every
// pointer may be null (no pool: calls run on gRPC's callback threads; no
// limiter: that method's streams are unbounded; no auth: every call passes)
// and must outlive the service.
struct ServiceRuntime {
  WorkPool* pool = nullptr;
  StreamLimiter* sweep_streams = nullptr;
  StreamLimiter* explore_streams = nullptr;
  StreamLimiter* step_streams = nullptr;
  const BearerAuth* auth = nullptr;
  // Deadline of a unary call whose client set none; 0 = none
  // (--grpc-default-timeout-seconds).
  double default_timeout_seconds = 0;
};

// RidgelineService over a Backend that appears once plugins are loaded;
// until then every RPC returns UNAVAILABLE. Thread-safe.
class RidgelineServiceImpl final : public RidgelineServiceBase {
 public:
  // `metrics` may be null; if set it must outlive this object.
  explicit RidgelineServiceImpl(Metrics* metrics,
                                ServiceRuntime runtime = ServiceRuntime());
  ~RidgelineServiceImpl() override;

  // Publishes the backend; it must outlive every RPC (i.e. the server).
  void SetBackend(const Backend* backend) { backend_.store(backend); }

  // From now on new calls get UNAVAILABLE ("shutting down"); calls already
  // admitted run to completion.
  void StartDraining() { draining_.store(true); }
  // Unary calls admitted and not yet finished.
  int64_t InFlight() const { return in_flight_.load(); }

  // Common admission of a call to `method` (its name in RidgelineService,
  // "Analyze"): UNAVAILABLE while draining, DEADLINE_EXCEEDED when its
  // deadline has passed, UNAUTHENTICATED when auth_policy.h's table protects
  // the method and the bearer token is missing or wrong. OK: admitted.
  // Every handler calls it first.
  grpc::Status Admit(grpc::ServerContextBase* ctx,
                     std::string_view method) const;
  // The deadline a unary call runs under: its client's, or, when the
  // client set none, now + runtime.default_timeout_seconds (call it when
  // the call starts).
  std::chrono::system_clock::time_point UnaryDeadline(
      const grpc::ServerContextBase* ctx) const;
  // Runs `work` (which must call reactor->Finish) on the work pool, counted
  // in InFlight() until `done` runs; RESOURCE_EXHAUSTED when the queue is
  // full. For the engine-bound unary methods other files add too.
  void Offload(grpc::ServerUnaryReactor* reactor,
               std::function<void()> work);
  // Call when an offloaded call has finished (after reactor->Finish).
  void Done() { in_flight_.fetch_sub(1); }

  grpc::ServerUnaryReactor* Analyze(grpc::CallbackServerContext* ctx,
                                    const v1::AnalyzeRequest* req,
                                    v1::AnalyzeResponse* resp) override;
  grpc::Status Sweep(grpc::ServerContext* ctx, const v1::SweepRequest* req,
                     grpc::ServerWriter<v1::SweepPoint>* writer) override;
  // Synchronous like Sweep (long, streamed); service/src/explore.cc's
  // Backend::Explore does the work.
  grpc::Status Explore(grpc::ServerContext* ctx, const v1::ExploreRequest* req,
                       grpc::ServerWriter<v1::ExploreResponse>* writer) override;
  grpc::ServerUnaryReactor* ListHardware(
      grpc::CallbackServerContext* ctx, const v1::ListHardwareRequest* req,
      v1::ListHardwareResponse* resp) override;
  grpc::ServerUnaryReactor* GetHardware(grpc::CallbackServerContext* ctx,
                                        const v1::GetHardwareRequest* req,
                                        v1::GetHardwareResponse* resp) override;
  grpc::ServerUnaryReactor* ListModels(grpc::CallbackServerContext* ctx,
                                       const v1::ListModelsRequest* req,
                                       v1::ListModelsResponse* resp) override;
  grpc::ServerUnaryReactor* GetModel(grpc::CallbackServerContext* ctx,
                                     const v1::GetModelRequest* req,
                                     v1::GetModelResponse* resp) override;
  grpc::ServerUnaryReactor* AnalyzeKernel(
      grpc::CallbackServerContext* ctx, const v1::AnalyzeKernelRequest* req,
      v1::AnalyzeKernelResponse* resp) override;
  // Engine-bound like Analyze: computed on the work pool.
  grpc::ServerUnaryReactor* StepTime(grpc::CallbackServerContext* ctx,
                                     const v1::StepTimeRequest* req,
                                     v1::StepTimeResponse* resp) override;
  // Synchronous: a stream lives as long as its scheduler loop and blocks on
  // reads (bounded by the step stream limits and the idle timeout).
  grpc::Status StepTimeStream(
      grpc::ServerContext* ctx,
      grpc::ServerReaderWriter<v1::StepTimeResponse, v1::StepTimeStreamRequest>*
          stream) override;
  // Synchronous like Sweep: a plan runs many simulations (seconds).
  grpc::Status Plan(grpc::ServerContext* ctx, const v1::PlanRequest* req,
                    v1::PlanResponse* resp) override;
  grpc::Status Simulate(grpc::ServerContext* ctx,
                        const v1::SimulateRequest* req,
                        v1::SimulateResponse* resp) override;
  // Synchronous: a few engine analyses per axis (milliseconds).
  grpc::Status ExploreSensitivity(
      grpc::ServerContext* ctx, const v1::ExploreSensitivityRequest* req,
      v1::ExploreSensitivityResponse* resp) override;

 private:
  std::atomic<const Backend*> backend_{nullptr};
  Metrics* metrics_;
  ServiceRuntime runtime_;
  std::atomic<bool> draining_{false};
  std::atomic<int64_t> in_flight_{0};
  std::unique_ptr<
      ArenaMessageAllocator<v1::AnalyzeRequest, v1::AnalyzeResponse>>
      analyze_allocator_;
};

// Runs the server until SIGTERM or SIGINT, then drains and returns the
// process exit code (0 after a clean drain). Prints
// "metrics listening on HOST:PORT", "http listening on HOST:PORT" (when
// enabled) and "listening on HOST:PORT" on stdout, in that order, once
// bound (the real port when 0 was asked). SIGTERM/SIGINT must not be
// handled elsewhere in the process; RunServer blocks them in the calling
// thread before starting any other thread.
int RunServer(const ServerConfig& config);

}  // namespace ridgeline::service
