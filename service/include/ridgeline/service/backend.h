// The transport-independent core of the Ridgeline service: validates v1
// requests, converts them to engine scenarios, runs the engine and converts
// results back. The gRPC server and the in-process CLI both call it, so both
// give identical answers.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ridgeline/calibration/profiles.h"
#include "ridgeline/engine/scenario.h"
#include "ridgeline/engine/work.h"
#include "ridgeline/plugin_host/registry.h"
#include "ridgeline/serving/pod_latency.h"
#include "ridgeline/v1/ridgeline.pb.h"

namespace ridgeline::serving {
struct ServingConfig;
struct SimulationConfig;
enum class KvOverlap;
}  // namespace ridgeline::serving

namespace ridgeline::service {

// Server-side caps on what one request may ask for.
struct Limits {
  int64_t max_sweep_points =
      100000;  // points per Sweep request (before sharding)
  // Explore: grid points per request (in its shard), and points when every
  // point is streamed (include_all); worker threads per request.
  int64_t max_explore_points = 100'000'000;  // --max-explore-points
  int64_t max_explore_all_points = 1'000'000;
  int explore_threads = 2;
  // Distinct objective vectors an Explore's front may hold (ties fold into
  // one entry, pareto.h); more is RESOURCE_EXHAUSTED. Each costs ~100 B per
  // worker thread, twice (compaction doubles).
  int64_t max_explore_front_points = 100'000;  // --max-explore-front-points
  // Bytes of one inline config.json (ModelSpec.hf_config_json). Parsing
  // costs ~20x its size in memory, so this is capped apart from the message
  // size (issue 14, defect 9). More is RESOURCE_EXHAUSTED.
  int64_t max_inline_config_bytes = 1 << 20;
  // Estimated cost of one scenario, in token-layers (EstimateRequestCost:
  // its size, batch x (prompt + generated tokens) x layers, plus the steps
  // the engine times one by one). More is RESOURCE_EXHAUSTED naming the
  // limit (for a Sweep: its largest point, checked before any point is
  // sent; for an Explore: its largest deployment).
  double max_request_cost = 1e12;
  // Simulate and Plan: the sequence-steps (one sequence in one simulated
  // step) all simulations of one request are estimated to run
  // (simulations x requests x serving::SequenceStepsPerRequest); more is
  // RESOURCE_EXHAUSTED before any simulation runs.
  double max_sequence_steps = 2e9;  // --max-sequence-steps
  // Estimated peak memory of one request's working set (Simulate, Plan,
  // Explore with include_all or NSGA-II), bytes; more is
  // RESOURCE_EXHAUSTED before the work starts.
  int64_t max_request_memory_bytes = int64_t{256} << 20;
  // Plan candidates (deployments) per request, at most
  // serving::kMaxPlanCandidates.
  int64_t max_plan_candidates = 512;  // --max-plan-candidates
  // Expensive calls (Plan, Simulate, Explore, ExploreSensitivity) running
  // at once over all clients; one more is RESOURCE_EXHAUSTED at once (not
  // queued). 0 = unlimited.
  int64_t max_concurrent_expensive_calls = 0;
};

// Admission of expensive calls: at most `max` hold a Slot at once.
// Releasing a Slot also returns the call's freed heap to the system
// (malloc_trim), so a large call's memory does not stay resident.
// Thread-safe.
class ExpensiveCallGate {
 public:
  explicit ExpensiveCallGate(int64_t max) : max_(max) {}
  class Slot {
   public:
    Slot(Slot&& o) noexcept : gate_(o.gate_) { o.gate_ = nullptr; }
    Slot& operator=(Slot&&) = delete;
    ~Slot();

   private:
    friend class ExpensiveCallGate;
    explicit Slot(ExpensiveCallGate* g) : gate_(g) {}
    ExpensiveCallGate* gate_;
  };
  // RESOURCE_EXHAUSTED naming `method` and --max-concurrent-expensive-calls
  // when `max` calls hold a slot.
  absl::StatusOr<Slot> Enter(absl::string_view method);
  int64_t in_use() const { return in_use_.load(); }

 private:
  const int64_t max_;
  std::atomic<int64_t> in_use_{0};
};

// RESOURCE_EXHAUSTED when `bytes`, the estimated memory of a request's
// working set (`factors` spells its product), exceeds
// limits.max_request_memory_bytes; names the estimate, factors and flag.
absl::Status CheckRequestMemory(absl::string_view what, double bytes,
                                absl::string_view factors,
                                const Limits& limits);
// RESOURCE_EXHAUSTED when `sequence_steps` (`factors` spells the product)
// exceeds limits.max_sequence_steps.
absl::Status CheckSequenceSteps(absl::string_view what, double sequence_steps,
                                absl::string_view factors,
                                const Limits& limits);
// Returns the heap's free memory to the system (glibc malloc_trim).
void ReleaseFreeMemory();

// RESOURCE_EXHAUSTED when `spec` is an inline config.json longer than the
// limit; `path` is the spec's field path ("model", "models[2]").
absl::Status CheckInlineConfigSize(const v1::ModelSpec& spec,
                                   absl::string_view path, const Limits& limits);
// What the request-cost estimate weighs (service/src/request_limits.cc, the
// one place of the estimate): the scenario's size and the steps the engine
// times one graph at a time, for every analysis the request runs.
struct CostInputs {
  int64_t batch = 1;
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  int64_t layers = 0;  // bounds the layer groups a step's graph walks
  engine::TimedSteps steps;
  int64_t prefill_chunk_tokens = 0;  // as asked (0: the default), to name it
  // 1, plus explore::kMaxSuggestionAnalyses when suggestions are on.
  int64_t analyses = 1;
};
// Each step timed beyond the first prefill step (a prefill chunk, a decode
// step walked under a plugin hook) costs the engine about what 10^4 tokens
// of one layer are charged: measured, a 1-token prefill chunk of
// llama-2-7b (32 layers) takes ~0.3 us of CPU, ~1e-8 s per step-layer, so
// the default limit of 1e12 allows ~1 CPU-second of stepping.
inline constexpr double kTokenLayersPerStepLayer = 1e4;
// In token-layers: batch x (prompt + generated) x layers + analyses x
// (prefill_chunks - 1 + walked_decode_steps) x layers x
// kTokenLayersPerStepLayer.
double EstimateRequestCost(const CostInputs& in);
// The inputs of a resolved scenario (calibration applied, options set).
CostInputs CostInputsOf(const engine::Scenario& s);
// RESOURCE_EXHAUSTED when EstimateRequestCost(in) exceeds
// limits.max_request_cost; the message names the fields, the estimate and
// its factors, the limit and its flag.
absl::Status CheckRequestCost(const CostInputs& in, const Limits& limits);

// Optional observer of the engine work the backend does (metrics). Called
// from the request thread; implementations must be thread-safe.
class BackendObserver {
 public:
  virtual ~BackendObserver() = default;
  // One engine analysis finished. kind: "analyze", "sweep" or "kernel".
  // engine_seconds: wall time inside engine::Analyze.
  virtual void OnAnalysis(std::string_view kind, double engine_seconds,
                          bool ok) = 0;
  // How a request's calibration was chosen (once per Analyze or
  // AnalyzeKernel, once per hardware entry of a Sweep): "profile",
  // "framework-match", "hardware-match" or "none" (CalibrationUsed).
  virtual void OnCalibration(std::string_view /*selected_by*/) {}
};

// Immutable after construction; every method is const and thread-safe.
// Holds shared ownership of the registry and profile store.
class Backend {
 public:
  // `registry` and `profiles` must not be null (an empty store is fine).
  // `observer` may be null; if set it must outlive the Backend.
  Backend(std::shared_ptr<const plugin_host::HardwareRegistry> registry,
          std::shared_ptr<const calibration::ProfileStore> profiles,
          Limits limits, BackendObserver* observer = nullptr);

  absl::StatusOr<v1::AnalyzeResponse> Analyze(
      const v1::AnalyzeRequest& request) const;
  // The same, built in place into `*response` (which may live on a protobuf
  // Arena, as the gRPC server's do: no copy between arenas). On error
  // `*response` is unspecified. `should_stop` (may be empty) is polled by
  // the engine's long loops; true ends the call with CANCELLED (the
  // frontend says DEADLINE_EXCEEDED when that is why).
  absl::Status Analyze(const v1::AnalyzeRequest& request,
                       v1::AnalyzeResponse* response,
                       const std::function<bool()>& should_stop = {}) const;

  // One kernel call (decode attention or GEMM): the calibrated time and the
  // pure roofline bound.
  absl::StatusOr<v1::AnalyzeKernelResponse> AnalyzeKernel(
      const v1::AnalyzeKernelRequest& request) const;
  // `should_stop` (may be empty) is asked before each of the two kernel
  // evaluations: true ends the call with engine::StoppedError (CANCELLED).
  absl::Status AnalyzeKernel(const v1::AnalyzeKernelRequest& request,
                             v1::AnalyzeKernelResponse* response,
                             const std::function<bool()>& should_stop = {}) const;

  // Validates the whole request first (INVALID_ARGUMENT / NOT_FOUND /
  // RESOURCE_EXHAUSTED before any point is emitted), then emits each point
  // of this shard in the stable order documented in the .proto. `emit`
  // returns false to stop (client gone, deadline): Sweep then returns
  // CANCELLED. Errors confined to one point are reported in the point.
  absl::Status Sweep(
      const v1::SweepRequest& request,
      const std::function<bool(const v1::SweepPoint&)>& emit) const;

  absl::StatusOr<v1::ListHardwareResponse> ListHardware(
      const v1::ListHardwareRequest& request) const;
  absl::StatusOr<v1::GetHardwareResponse> GetHardware(
      const v1::GetHardwareRequest& request) const;
  absl::StatusOr<v1::ListModelsResponse> ListModels(
      const v1::ListModelsRequest& request) const;
  absl::StatusOr<v1::GetModelResponse> GetModel(
      const v1::GetModelRequest& request) const;

  // ---- Step time (service/src/step.cc) ----

  // StepTime: every step of the request against one scenario. A bad step
  // fails the whole call with INVALID_ARGUMENT naming
  // "steps[3].sequences[17].context_tokens", the range and the value.
  // `should_stop` (may be empty) is polled while the scenario is prepared
  // and before every step: true ends the call with engine::StoppedError
  // (CANCELLED; the frontend says DEADLINE_EXCEEDED when that is why).
  absl::Status StepTime(const v1::StepTimeRequest& request,
                        v1::StepTimeResponse* response,
                        const std::function<bool()>& should_stop = {}) const;

  // A StepTimeStream's state: the scenario of its first message, resolved
  // and prepared once. Thread-compatible (one per stream); Answer is const.
  class StepSession {
   public:
    virtual ~StepSession() = default;
    // Answers `steps` into `response` (one result per step, in order). A
    // bad step is answered in its result (error_code = INVALID_ARGUMENT,
    // error_message naming "steps[i]..."); the session stays usable. Steps
    // after the session's should_stop said stop are answered CANCELLED.
    virtual void Answer(const v1::StepTimeStreamRequest& request,
                        v1::StepTimeResponse* response) const = 0;
  };
  // INVALID_ARGUMENT / NOT_FOUND naming "scenario.<field>" for a bad
  // scenario (the stream then ends with it).
  // `should_stop` (may be empty; must outlive the session) is polled while
  // the scenario is prepared (CANCELLED) and before every step.
  absl::StatusOr<std::unique_ptr<StepSession>> OpenStepSession(
      const v1::StepScenario& scenario,
      const std::function<bool()>& should_stop = {}) const;

  // Capacity planning (service/src/plan.cc). `stop` (may be empty) is
  // polled during the simulations: true ends the call with
  // DEADLINE_EXCEEDED.
  absl::StatusOr<v1::PlanResponse> Plan(
      const v1::PlanRequest& request,
      const std::function<bool()>& stop = {}) const;
  // The online simulation of one replica, N replicas behind a router, or a
  // prefill pool and a decode pool (service/src/simulate.cc); `stop` as
  // for Plan.
  absl::StatusOr<v1::SimulateResponse> Simulate(
      const v1::SimulateRequest& request,
      const std::function<bool()>& stop = {}) const;

  const Limits& limits() const { return limits_; }

  // The llm-d latency predictor's model of one pod
  // (service/src/llmd_scenario.cc): a catalog model on a catalog platform
  // at `tensor_parallel`, default formats, with the serving calibration
  // Simulate picks for `framework` ("" = the pure roofline). Errors name
  // the server flag (llmd-model, llmd-hardware, llmd-tensor-parallel,
  // llmd-framework) as their field path.
  struct PodModel {
    std::unique_ptr<serving::PodLatencyModel> model;
    std::string calibration;  // the profile applied, "" = pure roofline
    std::string warning;      // when it is not the framework's own
  };
  absl::StatusOr<PodModel> PodLatencyModelFor(
      const std::string& model_id, const std::string& hardware_id,
      int64_t tensor_parallel, const std::string& framework) const;

  // The scenario an AnalyzeRequest describes (validated, calibration
  // applied), as Analyze builds it. Explore's base scenario comes from here.
  absl::Status ResolveScenario(const v1::AnalyzeRequest& request,
                               engine::Scenario* scenario) const;

  // Design-space exploration (service/src/explore.cc): validates the whole
  // request (INVALID_ARGUMENT naming the field, RESOURCE_EXHAUSTED past the
  // caps) before any message, then emits progress messages, the points (the
  // front, or all with include_all, by index) and one summary. `emit`
  // returns false to stop (client gone, deadline): Explore then returns
  // CANCELLED. `should_stop` (optional) is polled between reports, so a
  // cancelled or expired call stops within ~20 ms of engine time.
  absl::Status Explore(
      const v1::ExploreRequest& request,
      const std::function<bool(const v1::ExploreResponse&)>& emit,
      const std::function<bool()>& should_stop = {}) const;
  const plugin_host::HardwareRegistry& registry() const { return *registry_; }

  // Sensitivity at one point of an Explore space
  // (service/src/explore_sensitivity.cc): INVALID_ARGUMENT naming the field
  // ("space.vary[1]", "index") for a bad request.
  absl::StatusOr<v1::ExploreSensitivityResponse> ExploreSensitivity(
      const v1::ExploreSensitivityRequest& request) const;

 private:
  // Simulate's prefill + decode pools (service/src/simulate.cc).
  absl::StatusOr<v1::SimulateResponse> SimulateDisaggregated(
      const v1::SimulateRequest& req, const engine::Scenario& base,
      const serving::ServingConfig& config, serving::SimulationConfig sim,
      int64_t prompt, int64_t gen, const std::string& router,
      serving::KvOverlap overlap) const;
  // Analyze's resolution of model, hardware, formats, placement, options,
  // parallelism and calibration; `path` prefixes field names ("scenario").
  absl::Status ResolveStepScenario(const v1::StepScenario& in,
                                   absl::string_view path, engine::Scenario* s,
                                   v1::CalibrationUsed* used) const;

  std::shared_ptr<const plugin_host::HardwareRegistry> registry_;
  std::shared_ptr<const calibration::ProfileStore> profiles_;
  Limits limits_;
  BackendObserver* observer_;
  std::shared_ptr<ExpensiveCallGate> gate_;
};

}  // namespace ridgeline::service
