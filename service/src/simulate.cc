// Backend::Simulate: the online serving simulation of one replica, N
// aggregated replicas behind a router, or a prefill pool and a decode pool,
// from a v1::SimulateRequest. The math is serving/'s.
#include "ridgeline/serving/simulate.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/service/backend.h"
#include "ridgeline/service/request_scenario.h"
#include "ridgeline/serving/capacity.h"
#include "ridgeline/serving/deployment.h"
#include "ridgeline/serving/engine_step_cost.h"
#include "ridgeline/serving/kv_transfer.h"
#include "ridgeline/serving/parallelism.h"
#include "ridgeline/serving/router.h"
#include "ridgeline/serving/stability.h"
#include "ridgeline/serving/throughput.h"
#include "ridgeline/serving/trace.h"
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

void ToProto(const serving::SimulationResult& r, v1::SimulateResponse* resp) {
  resp->set_requests(r.requests);
  resp->set_steps(r.steps);
  resp->set_duration_seconds(r.duration_seconds);
  ToProto(r.ttft, resp->mutable_ttft());
  ToProto(r.tpot, resp->mutable_tpot());
  ToProto(r.itl, resp->mutable_itl());
  ToProto(r.e2e, resp->mutable_e2e());
  ToProto(r.queue, resp->mutable_queue());
  resp->set_requests_per_second(r.requests_per_second);
  resp->set_output_tokens_per_second(r.output_tokens_per_second);
  resp->set_input_tokens_per_second(r.input_tokens_per_second);
  resp->set_mean_running(r.mean_running);
  resp->set_kv_usage_mean(r.kv_usage_mean);
  resp->set_kv_usage_peak(r.kv_usage_peak);
  resp->set_max_waiting(r.max_waiting);
  resp->set_stable(r.stable);
  resp->set_backlog_first_half(r.backlog.first_half);
  resp->set_backlog_second_half(r.backlog.second_half);
  resp->set_prefill_tokens_saved(r.prefill_tokens_saved);
  resp->set_prefix_hit_rate(r.prefix_hit_rate);
  resp->set_kv_offload_hit_rate(r.kv_offload_hit_rate);
  resp->set_preemptions(r.preemptions);
  resp->set_swapped_preemptions(r.swapped_preemptions);
  for (const serving::SimulationResult::TierUse& u : r.kv_tiers) {
    v1::KvTierUse* t = resp->add_kv_tiers();
    t->set_name(u.name);
    t->set_capacity_tokens(u.capacity_tokens);
    t->set_usage_mean(u.usage_mean);
    t->set_usage_peak(u.usage_peak);
  }
  if (!r.stable) resp->add_warnings(serving::UnstableWarning(r.backlog));
  serving_convert::ToProto(r.timeline, resp->mutable_timeline());
}

// A pool of a disaggregated request: hardware set, tensor_parallel and
// replicas in range; errors name "<pool>.<field>".
absl::Status CheckPool(const v1::SimulatePool& p, const std::string& name) {
  if (!p.has_hardware()) {
    return Bad(name + ".hardware", "set: one of platform_id or description",
               "unset");
  }
  if (p.has_tensor_parallel() &&
      (p.tensor_parallel() < 1 || p.tensor_parallel() > 256)) {
    return Bad(name + ".tensor_parallel", "in [1, 256]",
               absl::StrCat(p.tensor_parallel()));
  }
  if (p.has_replicas() &&
      (p.replicas() < 1 || p.replicas() > serving::kMaxReplicasPerPool)) {
    return Bad(name + ".replicas",
               absl::StrCat("in [1, ", serving::kMaxReplicasPerPool, "]"),
               absl::StrCat(p.replicas()));
  }
  return absl::OkStatus();
}

// One pool's model of a replica: its scenario, KV capacity, step cost and
// scheduler limits.
struct BuiltPool {
  engine::Scenario scenario;
  serving::KvCapacity kv;
  std::unique_ptr<serving::EngineStepCost> cost;
  serving::ServingLimits limits;
};

}  // namespace

absl::StatusOr<v1::SimulateResponse> Backend::Simulate(
    const v1::SimulateRequest& req, const std::function<bool()>& stop) const {
  if (!req.has_model()) {
    return Bad("model", "set: one of catalog_id or hf_config_json", "unset");
  }
  // Disaggregated: a prefill pool and a decode pool, both or neither.
  const bool split = req.has_prefill() || req.has_decode();
  if (req.has_decode() && !req.has_prefill()) {
    return Bad("prefill",
               "set when decode is set (a disaggregated deployment has a "
               "prefill and a decode pool)",
               "unset");
  }
  if (req.has_prefill() && !req.has_decode()) {
    return Bad("decode",
               "set when prefill is set (a disaggregated deployment has a "
               "prefill and a decode pool)",
               "unset");
  }
  if (!req.has_hardware() && !split) {
    return Bad("hardware", "set: one of platform_id or description", "unset");
  }
  if (split) {
    RETURN_IF_ERROR(CheckPool(req.prefill(), "prefill"));
    RETURN_IF_ERROR(CheckPool(req.decode(), "decode"));
  }
  const int64_t replicas = req.has_replicas() ? req.replicas() : 1;
  if (replicas < 1 || replicas > serving::kMaxReplicasPerPool) {
    return Bad("replicas",
               absl::StrCat("in [1, ", serving::kMaxReplicasPerPool, "]"),
               absl::StrCat(replicas));
  }
  const std::string router =
      req.router().empty() ? std::string("round-robin") : req.router();
  RETURN_IF_ERROR(serving::MakeRouter(router, 0, "router").status());
  ASSIGN_OR_RETURN(const serving::KvOverlap overlap,
                   serving::ParseKvOverlap(req.kv_transfer_overlap().empty()
                                               ? std::string("after-prefill")
                                               : req.kv_transfer_overlap()));
  engine::Scenario s;
  ASSIGN_OR_RETURN(s.model, serving_convert::Model(req.model()));
  // Disaggregated without `hardware`: the prefill pool's part stands for
  // the checks every pool shares.
  ASSIGN_OR_RETURN(
      s.hardware,
      serving_convert::Hardware(
          *registry_,
          req.has_hardware() ? req.hardware() : req.prefill().hardware(),
          req.has_hardware() ? "hardware" : "prefill.hardware"));
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
  const std::string extrapolation =
      serving_convert::ExtrapolationFloor(cal, &s);
  RETURN_IF_ERROR(engine::ValidateScenario(s));

  ASSIGN_OR_RETURN(serving::ServingConfig config,
                   serving_convert::ServingConfigOf(req.serving()));

  serving::SimulationConfig sim;
  const v1::SimulateTraffic& t = req.traffic();
  // A trace with its own lengths needs no distributions (any given are
  // still checked).
  const bool trace_lengths =
      t.has_trace() && t.trace().prompt_tokens_size() > 0;
  if (!trace_lengths || t.has_prompt_tokens()) {
    ASSIGN_OR_RETURN(
        sim.prompt,
        serving_convert::Lengths(t.prompt_tokens(), "traffic.prompt_tokens"));
  }
  if (!trace_lengths || t.has_generated_tokens()) {
    ASSIGN_OR_RETURN(sim.generated,
                     serving_convert::Lengths(t.generated_tokens(),
                                              "traffic.generated_tokens"));
  }
  switch (t.arrivals_case()) {
    case v1::SimulateTraffic::kRate:
      sim.arrivals.kind = serving::Arrivals::Kind::kPoisson;
      sim.arrivals.rate = t.rate();
      break;
    case v1::SimulateTraffic::kConcurrency:
      sim.arrivals.kind = serving::Arrivals::Kind::kConcurrency;
      sim.arrivals.concurrency = t.concurrency();
      break;
    case v1::SimulateTraffic::kTrace: {
      ASSIGN_OR_RETURN(sim.arrivals, serving_convert::TraceArrivals(t.trace()));
      break;
    }
    case v1::SimulateTraffic::ARRIVALS_NOT_SET:
      return Bad("traffic", "set: one of rate, concurrency or trace", "unset");
  }
  sim.requests = req.has_requests() ? req.requests() : 1000;
  if (t.has_shared_prefix_tokens()) {
    sim.shared_prefix_tokens = t.shared_prefix_tokens();
  }
  if (t.has_sessions()) {
    sim.sessions.turns = t.sessions().turns();
    sim.sessions.think_seconds = t.sessions().think_time_seconds();
  }
  if (req.has_seed()) sim.seed = req.seed();
  sim.stop = stop;
  sim.timeline_buckets = serving::kMaxTimelineBuckets;
  // Lengths and limits are checked with their field names before the
  // engine runs (the limits' KV capacity is filled in below).
  sim.limits.kv_capacity_tokens = 1;
  sim.limits.block_size = config.block_size;
  RETURN_IF_ERROR(serving::ValidateSimulationConfig(sim));
  // Cost and memory before any engine work (issue 26: 1,000,000 requests
  // of 100,000 tokens at concurrency 1 ran 2.4 CPU-s and 611 MB first).
  // With attention ranks, rank 0 alone is simulated, for as many requests.
  // The longest request (a trace's, a session's last turn) is priced as
  // one Analyze of it would be (--max-request-cost).
  {
    engine::Scenario longest = s;
    longest.options.suggestions = false;
    longest.workload = {1, serving::MaxPromptTokens(sim),
                        serving::MaxGeneratedTokens(sim)};
    RETURN_IF_ERROR(CheckRequestCost(CostInputsOf(longest), limits_));
  }
  const int64_t n = serving::SimulatedRequests(sim);
  const double per_request = serving::SequenceStepsPerRequest(
      serving::MeanPromptTokens(sim), serving::MeanGeneratedTokens(sim),
      config.max_num_batched_tokens);
  RETURN_IF_ERROR(CheckSequenceSteps(
      "simulate", static_cast<double>(n) * per_request,
      absl::StrCat(n, " requests x ", per_request,
                   " sequence-steps a request (mean generated tokens + "
                   "prompt chunks of serving.max_num_batched_tokens - 1)"),
      limits_));
  const double content_bytes = serving::PromptContentBytes(sim);
  RETURN_IF_ERROR(CheckRequestMemory(
      "simulate",
      static_cast<double>(n) * serving::kBytesPerSimulatedRequest +
          content_bytes,
      content_bytes > 0
          ? absl::StrCat(n, " requests x ", serving::kBytesPerSimulatedRequest,
                         " bytes + ", content_bytes, " bytes of prompt blocks")
          : absl::StrCat(n, " requests x ", serving::kBytesPerSimulatedRequest,
                         " bytes"),
      limits_));
  // Steps never outnumber sequence-steps: the same budget caps the run.
  sim.max_steps =
      static_cast<int64_t>(std::min<double>(limits_.max_sequence_steps, 9e18));
  sim.max_steps_name = "--max-sequence-steps";
  ASSIGN_OR_RETURN(ExpensiveCallGate::Slot slot, gate_->Enter("simulate"));

  const int64_t prompt =
      std::max<int64_t>(1, std::llround(serving::MeanPromptTokens(sim)));
  const int64_t gen =
      std::max<int64_t>(1, std::llround(serving::MeanGeneratedTokens(sim)));
  if (split) {
    return SimulateDisaggregated(req, s, config, sim, prompt, gen, router,
                                 overlap);
  }
  ASSIGN_OR_RETURN(serving::KvCapacity kv,
                   serving::ComputeKvCapacity(s, config, prompt, gen));
  if (!kv.fits) return absl::FailedPreconditionError(kv.not_fitting);
  s.workload = serving::EngineStepCost::ServingWorkload(
      kv.max_concurrency, prompt, gen, config.max_num_batched_tokens);
  ASSIGN_OR_RETURN(std::unique_ptr<serving::EngineStepCost> cost,
                   serving::EngineStepCost::Create(s));
  sim.limits = serving::LimitsOf(config, kv);
  // The offline maximum counts a shared prefix as cached, as the plan does
  // (a session's history is not: it depends on the think times).
  ASSIGN_OR_RETURN(
      serving::OfflineThroughput off,
      serving::MaxThroughput(
          *cost, sim.limits, kv.max_concurrency, prompt, gen,
          engine::ReplicaDevices(s.parallelism),
          config.prefix_caching
              ? serving::CachedSharedPrefixTokens(sim.shared_prefix_tokens,
                                                  prompt, config.block_size)
              : 0));
  v1::SimulateResponse resp;
  try {
    if (replicas == 1) {
      ASSIGN_OR_RETURN(serving::SimulationResult r,
                       serving::Simulate(*cost, sim));
      ToProto(r, &resp);
    } else {
      // N replicas behind the router: one pool of the same replica.
      serving::DeploymentSpec d;
      d.pools.push_back(
          {"aggregated", cost.get(), sim.limits, replicas, router});
      ASSIGN_OR_RETURN(serving::DeploymentResult r,
                       serving::SimulateDeployment(d, sim));
      ToProto(r.overall, &resp);
      v1::SimulatePoolResult* pool = resp.add_pools();
      pool->set_name("aggregated");
      pool->set_hardware(s.hardware.id);
      pool->set_tensor_parallel(s.parallelism.tensor_parallel);
      pool->set_replicas(replicas);
      pool->set_utilization(r.pools[0].utilization);
      pool->set_kv_usage_mean(r.pools[0].kv_usage_mean);
      pool->set_mean_running(r.pools[0].mean_running);
      pool->set_kv_capacity_tokens(kv.kv_capacity_tokens);
      pool->set_steps(r.pools[0].steps);
    }
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("simulation fault: ", e.what()));
  }
  resp.set_mode("aggregated");
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
    if (!extrapolation.empty()) resp.add_warnings(extrapolation);
  }
  // The replicas' offline maximum adds up (each has its own devices).
  resp.set_offline_max_output_tokens_per_second(off.output_tokens_per_second *
                                                static_cast<double>(replicas));
  resp.set_limiting_resource(off.limiting_resource);
  return resp;
}

absl::StatusOr<v1::SimulateResponse> Backend::SimulateDisaggregated(
    const v1::SimulateRequest& req, const engine::Scenario& base,
    const serving::ServingConfig& config, serving::SimulationConfig sim,
    int64_t prompt, int64_t gen, const std::string& router,
    serving::KvOverlap overlap) const {
  // Each pool: the shared model, formats and options on its own part and
  // tensor parallelism, calibrated for its part.
  auto build = [&](const v1::SimulatePool& p,
                   const std::string& name) -> absl::StatusOr<BuiltPool> {
    BuiltPool b;
    b.scenario = base;
    engine::Scenario& ps = b.scenario;
    ASSIGN_OR_RETURN(ps.hardware,
                     serving_convert::Hardware(*registry_, p.hardware(),
                                               name + ".hardware"));
    ps.parallelism.tensor_parallel =
        p.has_tensor_parallel() ? p.tensor_parallel() : 1;
    ASSIGN_OR_RETURN(serving_convert::Calibrated cal,
                     serving_convert::Calibration(*profiles_, req.calibration(),
                                                  ps.hardware, "calibration"));
    ps.efficiency =
        ps.options.pure_roofline ? engine::Efficiency{} : cal.efficiency;
    if (absl::Status st = engine::ValidateScenario(ps); !st.ok()) {
      return engine::PrefixFieldPath(name, st);
    }
    ASSIGN_OR_RETURN(b.kv, serving::ComputeKvCapacity(ps, config, prompt, gen));
    if (!b.kv.fits) {
      // Infeasible, with the reason: bad input for a simulation.
      return engine::WithFieldPath(
          absl::InvalidArgumentError(
              absl::StrCat(name, ".tensor_parallel: must let one ", name,
                           " replica hold the model and a sequence's KV; got ",
                           ps.parallelism.tensor_parallel, " on ",
                           ps.hardware.id, " (", b.kv.not_fitting, ")")),
          name + ".tensor_parallel");
    }
    ps.workload = serving::EngineStepCost::ServingWorkload(
        b.kv.max_concurrency, prompt, gen, config.max_num_batched_tokens);
    ASSIGN_OR_RETURN(b.cost, serving::EngineStepCost::Create(ps));
    b.limits = serving::LimitsOf(config, b.kv);
    return b;
  };
  ASSIGN_OR_RETURN(BuiltPool prefill, build(req.prefill(), "prefill"));
  ASSIGN_OR_RETURN(BuiltPool decode, build(req.decode(), "decode"));

  serving::KvHandoff handoff;
  handoff.link = serving::KvLinkBetween(
      {&prefill.scenario.hardware,
       engine::ReplicaDevices(prefill.scenario.parallelism)},
      {&decode.scenario.hardware,
       engine::ReplicaDevices(decode.scenario.parallelism)});
  if (!handoff.link.known) {
    return engine::WithFieldPath(
        absl::InvalidArgumentError(absl::StrCat(
            "decode.hardware: must have a known link from the prefill pool "
            "for the KV transfer; got ",
            handoff.link.unknown_reason)),
        "decode.hardware");
  }
  // KV per token of the mean prompt on each side's devices.
  const double tokens = static_cast<double>(prompt);
  ASSIGN_OR_RETURN(double sent,
                   serving::KvBytesPerDevice(prefill.scenario, prompt));
  ASSIGN_OR_RETURN(double received,
                   serving::KvBytesPerDevice(decode.scenario, prompt));
  handoff.prefill_bytes_per_token = sent / tokens;
  handoff.decode_bytes_per_token = received / tokens;
  handoff.overlap = overlap;
  handoff.layers = base.model.num_layers;

  const int64_t prefill_replicas =
      req.prefill().has_replicas() ? req.prefill().replicas() : 1;
  const int64_t decode_replicas =
      req.decode().has_replicas() ? req.decode().replicas() : 1;
  serving::DeploymentSpec d;
  d.pools.push_back({"prefill", prefill.cost.get(), prefill.limits,
                     prefill_replicas, router});
  d.pools.push_back(
      {"decode", decode.cost.get(), decode.limits, decode_replicas, router});
  d.handoff = handoff;
  sim.limits = decode.limits;
  v1::SimulateResponse resp;
  try {
    ASSIGN_OR_RETURN(serving::DeploymentResult r,
                     serving::SimulateDeployment(d, sim));
    ToProto(r.overall, &resp);
    resp.set_kv_transfer_p50_seconds(r.kv_transfer_seconds.p50);
    resp.set_kv_transfer_p90_seconds(r.kv_transfer_seconds.p90);
    const BuiltPool* built[] = {&prefill, &decode};
    for (size_t i = 0; i < r.pools.size(); ++i) {
      v1::SimulatePoolResult* pool = resp.add_pools();
      pool->set_name(r.pools[i].name);
      pool->set_hardware(built[i]->scenario.hardware.id);
      pool->set_tensor_parallel(built[i]->scenario.parallelism.tensor_parallel);
      pool->set_replicas(r.pools[i].replicas);
      pool->set_utilization(r.pools[i].utilization);
      pool->set_kv_usage_mean(r.pools[i].kv_usage_mean);
      pool->set_mean_running(r.pools[i].mean_running);
      pool->set_kv_capacity_tokens(built[i]->kv.kv_capacity_tokens);
      pool->set_steps(r.pools[i].steps);
    }
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("simulation fault: ", e.what()));
  }
  resp.set_mode("disaggregated");
  resp.set_kv_link(std::string(serving::KvLinkLevelName(handoff.link.level)));
  if (!handoff.link.latency_known) {
    resp.add_warnings(absl::StrCat(
        "kv_transfer: no source gives the ",
        std::string(serving::KvLinkLevelName(handoff.link.level)),
        " link's latency; the transfer counts bandwidth only (a lower bound)"));
  }
  // The decode pool holds a request to its end.
  resp.set_kv_capacity_tokens(decode.kv.kv_capacity_tokens);
  resp.set_max_concurrency(decode.kv.max_concurrency);
  resp.set_profile(decode.scenario.efficiency.profile_name);
  return resp;
}

}  // namespace ridgeline::service
