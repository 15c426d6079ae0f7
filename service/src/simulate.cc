// Backend::Simulate: one replica's online serving simulation from a
// v1::SimulateRequest. The math is serving/'s.
#include "ridgeline/serving/simulate.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/service/backend.h"
#include "ridgeline/service/request_scenario.h"
#include "ridgeline/serving/capacity.h"
#include "ridgeline/serving/engine_step_cost.h"
#include "ridgeline/serving/parallelism.h"
#include "ridgeline/serving/stability.h"
#include "ridgeline/serving/throughput.h"
#include "serving_convert.h"

namespace ridgeline::service {
namespace {

using serving_convert::Bad;

void ToProto(const serving::Percentiles& p, v1::LatencyPercentiles* out) {
  out->set_p50_seconds(p.p50);
  out->set_p90_seconds(p.p90);
  out->set_p99_seconds(p.p99);
  out->set_mean_seconds(p.mean);
}

}  // namespace

absl::StatusOr<v1::SimulateResponse> Backend::Simulate(
    const v1::SimulateRequest& req, const std::function<bool()>& stop) const {
  if (!req.has_model()) {
    return Bad("model", "set: one of catalog_id or hf_config_json", "unset");
  }
  if (!req.has_hardware()) {
    return Bad("hardware", "set: one of platform_id or description", "unset");
  }
  engine::Scenario s;
  ASSIGN_OR_RETURN(s.model, serving_convert::Model(req.model()));
  ASSIGN_OR_RETURN(s.hardware, serving_convert::Hardware(
                                   *registry_, req.hardware(), "hardware"));
  ASSIGN_OR_RETURN(s.precision,
                   serving_convert::Precision(req.formats(), "formats"));
  const v1::Parallelism& par = req.parallelism();
  if (par.has_tensor_parallel()) {
    const int64_t tp = par.tensor_parallel();
    if (tp < 1 || tp > 256) {
      return Bad("parallelism.tensor_parallel", "in [1, 256]",
                 absl::StrCat(tp));
    }
    s.parallelism.tensor_parallel = tp;
  }
  // One replica: pipeline stages and attention data-parallel expert
  // parallelism under the serving rules (serving/parallelism.h); the
  // engine checks the combination.
  if (par.has_pipeline_parallel()) {
    RETURN_IF_ERROR(serving::CheckPipelineStages(
        s.model, par.pipeline_parallel(), "parallelism.pipeline_parallel"));
    s.parallelism.pipeline_parallel = par.pipeline_parallel();
  }
  if (par.has_expert_parallel()) {
    RETURN_IF_ERROR(serving::CheckExpertParallel(
        s.model, par.expert_parallel(), "parallelism.expert_parallel"));
    s.parallelism.expert_parallel = par.expert_parallel();
  }
  if (par.has_attention_data_parallel()) {
    s.parallelism.attention_data_parallel = par.attention_data_parallel();
  }
  if (s.parallelism.expert_parallel > 1 &&
      !s.parallelism.attention_data_parallel &&
      s.parallelism.expert_parallel != s.parallelism.tensor_parallel) {
    return Bad("parallelism.attention_data_parallel",
               "true when expert_parallel > 1 differs from tensor_parallel "
               "(the attention replicated over the expert-parallel group)",
               "false");
  }
  ASSIGN_OR_RETURN(serving_convert::Calibrated cal,
                   serving_convert::Calibration(*profiles_, req.calibration(),
                                                s.hardware, "calibration"));
  s.efficiency = cal.efficiency;
  s.options.fp16_accumulation = cal.fp16_accumulation;
  s.options.suggestions = false;
  if (req.options().has_flash_attention()) {
    s.options.flash_attention = req.options().flash_attention();
  }
  if (req.options().has_pure_roofline() && req.options().pure_roofline()) {
    s.options.pure_roofline = true;
    s.efficiency = engine::Efficiency{};
  }
  RETURN_IF_ERROR(request::ApplyDecodeVariants(req.options(), &s.options));
  RETURN_IF_ERROR(engine::ValidateScenario(s));

  serving::ServingConfig config;
  const v1::ServingOptions& so = req.serving();
  if (so.has_memory_fraction()) config.memory_fraction = so.memory_fraction();
  if (so.has_max_num_seqs()) config.max_num_seqs = so.max_num_seqs();
  if (so.has_max_num_batched_tokens()) {
    config.max_num_batched_tokens = so.max_num_batched_tokens();
  }
  if (so.has_block_size()) config.block_size = so.block_size();
  RETURN_IF_ERROR(serving::ValidateServingConfig(config));

  serving::SimulationConfig sim;
  const v1::SimulateTraffic& t = req.traffic();
  ASSIGN_OR_RETURN(sim.prompt, serving_convert::Lengths(
                                   t.prompt_tokens(), "traffic.prompt_tokens"));
  ASSIGN_OR_RETURN(sim.generated,
                   serving_convert::Lengths(t.generated_tokens(),
                                            "traffic.generated_tokens"));
  switch (t.arrivals_case()) {
    case v1::SimulateTraffic::kRate:
      sim.arrivals.kind = serving::Arrivals::Kind::kPoisson;
      sim.arrivals.rate = t.rate();
      break;
    case v1::SimulateTraffic::kConcurrency:
      sim.arrivals.kind = serving::Arrivals::Kind::kConcurrency;
      sim.arrivals.concurrency = t.concurrency();
      break;
    case v1::SimulateTraffic::kTrace:
      sim.arrivals.kind = serving::Arrivals::Kind::kTrace;
      sim.arrivals.times.assign(t.trace().arrival_seconds().begin(),
                                t.trace().arrival_seconds().end());
      break;
    case v1::SimulateTraffic::ARRIVALS_NOT_SET:
      return Bad("traffic", "set: one of rate, concurrency or trace", "unset");
  }
  sim.requests = req.has_requests() ? req.requests() : 1000;
  if (req.has_seed()) sim.seed = req.seed();
  sim.stop = stop;
  sim.timeline_buckets = serving::kMaxTimelineBuckets;
  // Lengths and limits are checked with their field names before the
  // engine runs (the limits' KV capacity is filled in below).
  sim.limits.kv_capacity_tokens = 1;
  RETURN_IF_ERROR(serving::ValidateSimulationConfig(sim));
  // Cost and memory before any engine work (issue 26: 1,000,000 requests
  // of 100,000 tokens at concurrency 1 ran 2.4 CPU-s and 611 MB first).
  // With attention ranks, rank 0 alone is simulated, for as many requests.
  const int64_t n = serving::SimulatedRequests(sim);
  const double per_request = serving::SequenceStepsPerRequest(
      sim.prompt.Mean(), sim.generated.Mean(), config.max_num_batched_tokens);
  RETURN_IF_ERROR(CheckSequenceSteps(
      "simulate", static_cast<double>(n) * per_request,
      absl::StrCat(n, " requests x ", per_request,
                   " sequence-steps a request (mean generated tokens + "
                   "prompt chunks of serving.max_num_batched_tokens - 1)"),
      limits_));
  RETURN_IF_ERROR(CheckRequestMemory(
      "simulate", static_cast<double>(n) * serving::kBytesPerSimulatedRequest,
      absl::StrCat(n, " requests x ", serving::kBytesPerSimulatedRequest,
                   " bytes"),
      limits_));
  // Steps never outnumber sequence-steps: the same budget caps the run.
  sim.max_steps =
      static_cast<int64_t>(std::min<double>(limits_.max_sequence_steps, 9e18));
  sim.max_steps_name = "--max-sequence-steps";
  ASSIGN_OR_RETURN(ExpensiveCallGate::Slot slot, gate_->Enter("simulate"));

  const int64_t prompt =
      std::max<int64_t>(1, std::llround(sim.prompt.Mean()));
  const int64_t gen =
      std::max<int64_t>(1, std::llround(sim.generated.Mean()));
  ASSIGN_OR_RETURN(serving::KvCapacity kv,
                   serving::ComputeKvCapacity(s, config, prompt, gen));
  if (!kv.fits) return absl::FailedPreconditionError(kv.not_fitting);
  s.workload = serving::EngineStepCost::ServingWorkload(
      kv.max_concurrency, prompt, gen, config.max_num_batched_tokens);
  ASSIGN_OR_RETURN(std::unique_ptr<serving::EngineStepCost> cost,
                   serving::EngineStepCost::Create(s));
  sim.limits = serving::LimitsOf(config, kv);
  ASSIGN_OR_RETURN(serving::OfflineThroughput off,
                   serving::MaxThroughput(*cost, sim.limits,
                                          kv.max_concurrency, prompt, gen,
                                          engine::ReplicaDevices(
                                              s.parallelism)));
  absl::StatusOr<serving::SimulationResult> r = absl::InternalError("");
  try {
    r = serving::Simulate(*cost, sim);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("simulation fault: ", e.what()));
  }
  if (!r.ok()) return r.status();
  v1::SimulateResponse resp;
  resp.set_requests(r->requests);
  resp.set_steps(r->steps);
  resp.set_duration_seconds(r->duration_seconds);
  ToProto(r->ttft, resp.mutable_ttft());
  ToProto(r->tpot, resp.mutable_tpot());
  ToProto(r->itl, resp.mutable_itl());
  ToProto(r->e2e, resp.mutable_e2e());
  ToProto(r->queue, resp.mutable_queue());
  resp.set_requests_per_second(r->requests_per_second);
  resp.set_output_tokens_per_second(r->output_tokens_per_second);
  resp.set_input_tokens_per_second(r->input_tokens_per_second);
  resp.set_mean_running(r->mean_running);
  resp.set_kv_usage_mean(r->kv_usage_mean);
  resp.set_kv_usage_peak(r->kv_usage_peak);
  resp.set_max_waiting(r->max_waiting);
  resp.set_stable(r->stable);
  resp.set_backlog_first_half(r->backlog.first_half);
  resp.set_backlog_second_half(r->backlog.second_half);
  if (!r->stable) resp.add_warnings(serving::UnstableWarning(r->backlog));
  resp.set_kv_capacity_tokens(kv.kv_capacity_tokens);
  resp.set_max_concurrency(kv.max_concurrency);
  resp.set_profile(s.efficiency.profile_name);
  v1::CalibrationUsed* used = resp.mutable_calibration();
  used->set_profile_name(s.efficiency.profile_name);
  used->set_fitted_from(s.efficiency.profile_name.empty() ? "" : cal.fitted_from);
  used->set_selected_by(s.efficiency.profile_name.empty() ? "none" : cal.selected_by);
  if (!s.options.pure_roofline) {  // else no calibration was applied
    used->set_match(cal.match);
    used->set_warning(cal.warning);
    if (!cal.warning.empty()) resp.add_warnings(cal.warning);
  }
  resp.set_offline_max_output_tokens_per_second(off.output_tokens_per_second);
  resp.set_limiting_resource(off.limiting_resource);
  serving_convert::ToProto(r->timeline, resp.mutable_timeline());
  return resp;
}

}  // namespace ridgeline::service
