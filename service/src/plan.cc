// Backend::Plan: validates a v1::PlanRequest, builds one serving::Candidate
// per hardware x pipeline stages x (tensor-parallel degree or
// expert-parallel degree) x format set, runs serving::Plan
// and converts the deployments back. The math is serving/'s.
#include "ridgeline/serving/plan.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "plan_emit.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/engine/ranges.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/service/backend.h"
#include "ridgeline/service/convert.h"
#include "ridgeline/service/request_scenario.h"
#include "ridgeline/serving/candidates.h"
#include "ridgeline/serving/plan.h"
#include "ridgeline/serving/slo_search.h"
#include "ridgeline/serving/trace.h"
#include "serving_convert.h"

namespace ridgeline::service {
namespace {

using serving_convert::Bad;
using serving_convert::Economics;
using serving_convert::FormatsLabel;
using serving_convert::Lengths;
using serving_convert::Model;
using serving_convert::Precision;
using serving_convert::Prefixed;

constexpr int kMaxPlanHardware = 64;
constexpr int kMaxPlanFormats = 16;

void ToProto(const serving::Deployment& d, v1::PlanDeployment* out) {
  out->set_hardware_id(d.hardware_id);
  out->set_tensor_parallel(d.tensor_parallel);
  out->set_pipeline_parallel(d.pipeline_parallel);
  out->set_expert_parallel(d.expert_parallel);
  out->set_formats(d.formats);
  out->set_profile(d.profile);
  out->set_profile_fallback(d.profile_fallback);
  out->set_feasible(d.feasible);
  out->set_meets_slo(d.meets_slo);
  out->set_stable(d.stable);
  out->set_simulated_requests(d.simulated_requests);
  out->set_why(d.why);
  out->set_replicas(d.replicas);
  out->set_devices(d.devices);
  out->set_max_rate_per_replica(d.max_rate_per_replica);
  out->set_ttft_p90_seconds(d.ttft_p90_seconds);
  out->set_tpot_p90_seconds(d.tpot_p90_seconds);
  out->set_e2e_p90_seconds(d.e2e_p90_seconds);
  out->set_ttft_headroom(d.ttft_headroom);
  out->set_tpot_headroom(d.tpot_headroom);
  out->set_max_concurrency(d.max_concurrency);
  out->set_kv_capacity_tokens(d.kv_capacity_tokens);
  out->set_offline_output_tokens_per_second(d.offline_output_tokens_per_second);
  out->set_limiting_resource(d.limiting_resource);
  if (d.usd_per_mtoken) out->set_usd_per_mtoken(*d.usd_per_mtoken);
  out->set_cost_basis(d.cost_basis);
  out->set_price_source(d.price_source);
  if (d.joules_per_token) out->set_joules_per_token(*d.joules_per_token);
  if (d.g_co2e_per_mtoken) out->set_g_co2e_per_mtoken(*d.g_co2e_per_mtoken);
  out->set_pareto(d.pareto);
  out->set_bound_devices(d.bound_devices);
  out->set_bound_warning(d.bound_warning);
  out->set_mode(d.disaggregated ? "disaggregated" : "aggregated");
  if (!d.disaggregated) return;
  out->set_prefill_hardware_id(d.prefill_hardware_id);
  out->set_prefill_tensor_parallel(d.prefill_tensor_parallel);
  out->set_prefill_replicas(d.prefill_replicas);
  out->set_decode_hardware_id(d.decode_hardware_id);
  out->set_decode_tensor_parallel(d.decode_tensor_parallel);
  out->set_decode_replicas(d.decode_replicas);
  if (d.kv_transfer_p90_seconds) {
    out->set_kv_transfer_p90_seconds(*d.kv_transfer_p90_seconds);
  }
  out->set_kv_link(d.kv_link);
  out->set_prefill_max_rate_per_replica(d.prefill_max_rate_per_replica);
  out->set_decode_max_rate_per_replica(d.decode_max_rate_per_replica);
}

// The candidate cap: a field (candidates) and a flag (--max-plan-candidates).
absl::Status TooManyCandidates(double n, const Limits& limits) {
  return engine::WithFieldPath(
      absl::ResourceExhaustedError(absl::StrCat(
          "candidates: ", n,
          " deployments (hardware x pipeline_parallel x (tensor_parallel or "
          "expert_parallel) x formats) exceed the server's limit of ",
          limits.max_plan_candidates, " (--max-plan-candidates)")),
      "candidates");
}

// pricing.<name>_by_hardware["<id>"].
std::string EntryPath(absl::string_view map, absl::string_view id) {
  return absl::StrCat("pricing.", map, "[", request::Quote(id), "]");
}

absl::Status CheckPricing(const v1::PlanPricing& p) {
  using engine::ranges::kPriceUsd;
  using engine::ranges::kUsdPerDeviceHour;
  if (p.has_usd_per_device_hour()) {
    RETURN_IF_ERROR(request::CheckDouble("pricing.usd_per_device_hour",
                                         p.usd_per_device_hour(),
                                         kUsdPerDeviceHour));
  }
  if (p.has_price_usd()) {
    RETURN_IF_ERROR(
        request::CheckDouble("pricing.price_usd", p.price_usd(), kPriceUsd));
  }
  for (const auto& [id, v] : p.usd_per_device_hour_by_hardware()) {
    RETURN_IF_ERROR(request::CheckDouble(
        EntryPath("usd_per_device_hour_by_hardware", id), v,
        kUsdPerDeviceHour));
  }
  for (const auto& [id, v] : p.price_usd_by_hardware()) {
    RETURN_IF_ERROR(request::CheckDouble(
        EntryPath("price_usd_by_hardware", id), v, kPriceUsd));
  }
  return absl::OkStatus();
}

// The request's prices for part `id`: its own entry, else the value for
// every candidate (engine::DevicePriceOf decides which applies).
engine::Economics PartEconomics(const engine::Economics& econ,
                                const v1::PlanPricing& p,
                                const std::string& id) {
  engine::Economics e = econ;
  if (auto it = p.usd_per_device_hour_by_hardware().find(id);
      it != p.usd_per_device_hour_by_hardware().end()) {
    e.usd_per_device_hour = it->second;
  } else if (p.has_usd_per_device_hour()) {
    e.usd_per_device_hour = p.usd_per_device_hour();
  }
  if (auto it = p.price_usd_by_hardware().find(id);
      it != p.price_usd_by_hardware().end()) {
    e.price_usd = it->second;
  } else if (p.has_price_usd()) {
    e.price_usd = p.price_usd();
  }
  return e;
}

// A per-part price for a part that is not a candidate is a typo: say so.
absl::Status CheckPricedParts(const v1::PlanPricing& p,
                              const std::vector<std::string>& ids) {
  for (const auto* map : {&p.usd_per_device_hour_by_hardware(),
                          &p.price_usd_by_hardware()}) {
    for (const auto& [id, v] : *map) {
      if (std::find(ids.begin(), ids.end(), id) != ids.end()) continue;
      return request::OutOfRange(
          EntryPath(map == &p.price_usd_by_hardware()
                        ? "price_usd_by_hardware"
                        : "usd_per_device_hour_by_hardware",
                    id),
          absl::StrCat("keyed by a candidate hardware id (",
                       absl::StrJoin(ids, ", "), ")"),
          request::Quote(id));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckHardwareList(
    absl::string_view field,
    const google::protobuf::RepeatedPtrField<v1::HardwareSpec>& list,
    bool required) {
  if ((required && list.empty()) || list.size() > kMaxPlanHardware) {
    return Bad(field,
               required ? "1..64 hardware entries" : "0..64 hardware entries",
               absl::StrCat(list.size()));
  }
  return absl::OkStatus();
}

// One candidate part: the hardware and its calibration (a framework with
// no profile for it: an error, or the pure roofline with
// candidates.profile_fallback "roofline"). Notes how the profile was
// matched (one note per match) and its warnings.
absl::StatusOr<serving::PlanPart> ResolvePart(
    const plugin_host::HardwareRegistry& registry,
    const calibration::ProfileStore& profiles, const v1::PlanCandidates& cand,
    const v1::HardwareSpec& spec, const std::string& path,
    const engine::AnalysisOptions& options,
    std::vector<std::pair<std::string, std::string>>* calibration_notes,
    v1::PlanResponse* resp) {
  const std::string& fallback = cand.profile_fallback();
  serving::PlanPart part;
  ASSIGN_OR_RETURN(part.hardware,
                   serving_convert::Hardware(registry, spec, path));
  const engine::Hardware& hw = part.hardware;
  ASSIGN_OR_RETURN(serving_convert::Calibrated cal,
                   serving_convert::Calibration(profiles, cand.calibration(),
                                                hw, "candidates"));
  part.efficiency = cal.efficiency;
  part.fp16_accumulation = cal.fp16_accumulation;
  // A serving profile fitted on another deployment: its floor and warning
  // per replica shape (the profile outlives the plan: the store owns it).
  part.adjust = [cal](engine::Scenario* s) {
    return serving_convert::ExtrapolationFloor(cal, s);
  };
  // One runtime per plan: a hardware the framework has no profile for
  // gets the pure roofline when asked for, never another runtime's.
  if (cand.calibration().selector_case() == v1::Calibration::kFramework &&
      !options.pure_roofline && cal.selected_by != "framework-match") {
    if (fallback != "roofline") {
      return request::OutOfRange(
          "candidates.calibration.framework",
          absl::StrCat(
              "a framework with a profile for every candidate hardware "
              "(one runtime per plan); ",
              request::Quote(cand.calibration().framework()), " has none for ",
              hw.id,
              cal.profile_name.empty()
                  ? std::string()
                  : absl::StrCat(" (the nearest is ", cal.profile_name,
                                 ", another runtime's)"),
              "; set candidates.profile_fallback \"roofline\" to plan it on "
              "the pure roofline"),
          request::Quote(cand.calibration().framework()));
    }
    part.efficiency = engine::Efficiency{};
    part.fp16_accumulation = false;
    part.profile_fallback = "roofline";
    cal.match = absl::StrCat("no \"", cand.calibration().framework(),
                             "\" profile: pure roofline (profile_fallback)");
    cal.warning.clear();
  }
  if (!cal.match.empty() && !options.pure_roofline) {
    auto same =
        std::find_if(calibration_notes->begin(), calibration_notes->end(),
                     [&](const auto& n) { return n.second == cal.match; });
    if (same == calibration_notes->end()) {
      calibration_notes->push_back({hw.id, cal.match});
    } else if (!absl::StrContains(absl::StrCat(", ", same->first, ", "),
                                  absl::StrCat(", ", hw.id, ", "))) {
      absl::StrAppend(&same->first, ", ", hw.id);
    }
  }
  if (!cal.warning.empty() && !options.pure_roofline) {
    const std::string w = absl::StrCat(hw.id, ": ", cal.warning);
    if (std::find(resp->warnings().begin(), resp->warnings().end(), w) ==
        resp->warnings().end()) {
      resp->add_warnings(w);
    }
  }
  return part;
}

// What a plan made of a trace: its requests, their reuse, the rate.
std::string TraceNote(const serving::PlanInput& in, bool own_rate) {
  const serving::Arrivals& trace = in.traffic.trace;
  const std::string rate = absl::StrCat(
      in.traffic.rate, " requests/s (",
      own_rate ? "the trace's own mean rate" : "traffic.rate", ")");
  if (trace.own_requests() == 0) {
    return absl::StrCat(
        "trace: its arrival times give only the rate, ", rate,
        "; lengths from traffic.prompt_tokens / generated_tokens");
  }
  std::string reuse;
  if (!trace.content.empty()) {
    const serving::MeanPrompt mean = serving::MeanPromptOf(
        in.traffic, /*prefix_caching=*/true, in.serving.block_size);
    reuse = absl::StrCat(
        ", at most ", mean.cached, " of them cached (ideal prefix reuse, ",
        in.serving.prefix_caching ? "each replica taken to see the trace's "
                                    "reuse: requests sharing a prefix routed "
                                    "together"
                                  : "unused: serving.prefix_caching is off",
        ")");
  }
  return absl::StrCat(
      "trace: ", trace.own_requests(),
      " requests in their order with their lengths (mean prompt ",
      std::llround(in.traffic.prompt.Mean()), reuse, ", mean generated ",
      std::llround(in.traffic.generated.Mean()),
      " tokens), re-timed as Poisson arrivals at the searched rate; served at ",
      rate, "; each run replays ",
      in.requests >= static_cast<int64_t>(trace.own_requests())
          ? std::string("all of them")
          : absl::StrCat("the first ", in.requests,
                         " of them (requests; more when steady state needs "
                         "them)"));
}

}  // namespace

absl::StatusOr<v1::PlanResponse> Backend::Plan(
    const v1::PlanRequest& req, const std::function<bool()>& stop) const {
  if (!req.has_model()) {
    return Bad("model", "set: one of catalog_id or hf_config_json", "unset");
  }
  ASSIGN_OR_RETURN(engine::ModelConfig model, Model(req.model()));
  RETURN_IF_ERROR(CheckEmit(req, model));
  serving::PlanInput in;
  in.stop = stop;
  const v1::PlanTraffic& t = req.traffic();
  in.traffic.rate = t.rate();
  // A trace with its own lengths needs no distributions (any given are
  // still checked, then replaced by the trace's).
  const bool trace_lengths =
      t.has_trace() && t.trace().prompt_tokens_size() > 0;
  if (!trace_lengths || t.has_prompt_tokens()) {
    ASSIGN_OR_RETURN(in.traffic.prompt,
                     Lengths(t.prompt_tokens(), "traffic.prompt_tokens"));
  }
  if (!trace_lengths || t.has_generated_tokens()) {
    ASSIGN_OR_RETURN(in.traffic.generated,
                     Lengths(t.generated_tokens(), "traffic.generated_tokens"));
  }
  if (t.has_trace()) {
    ASSIGN_OR_RETURN(serving::Arrivals trace,
                     serving_convert::TraceArrivals(t.trace()));
    if (t.rate() == 0) {
      ASSIGN_OR_RETURN(in.traffic.rate, serving::TraceMeanRate(trace.times));
    }
    if (trace.times.empty() ||
        trace.times.size() > static_cast<size_t>(serving::kMaxPlanRequests)) {
      return Bad("traffic.trace.arrival_seconds",
                 absl::StrCat("1..", serving::kMaxPlanRequests, " arrivals"),
                 absl::StrCat(trace.times.size()));
    }
    serving::SetTraceRequests(std::move(trace), &in.traffic);
    const size_t own = in.traffic.trace.own_requests();
    if (!req.has_requests() && own > 0) {
      in.requests = static_cast<int64_t>(own);
    }
  }
  in.traffic.shared_prefix_tokens = req.traffic().shared_prefix_tokens();
  if (req.traffic().has_sessions()) {
    in.traffic.sessions.turns = req.traffic().sessions().turns();
    in.traffic.sessions.think_seconds =
        req.traffic().sessions().think_time_seconds();
  }
  in.slo = {req.slo().ttft_p90_seconds(), req.slo().tpot_p90_seconds()};
  ASSIGN_OR_RETURN(in.serving, serving_convert::ServingConfigOf(req.serving()));
  if (req.has_requests()) in.requests = req.requests();
  if (req.has_max_utilization()) in.max_utilization = req.max_utilization();
  if (req.has_seed()) in.seed = req.seed();
  engine::Economics econ = engine::DefaultEconomics();
  RETURN_IF_ERROR(Economics(req.economics(), &econ));
  RETURN_IF_ERROR(CheckPricing(req.pricing()));
  const std::string& fallback = req.candidates().profile_fallback();
  if (!fallback.empty() && fallback != "none" && fallback != "roofline") {
    return Bad("candidates.profile_fallback",
               "\"\" or \"none\" (no fallback) or \"roofline\"",
               request::Quote(fallback));
  }

  const v1::PlanCandidates& cand = req.candidates();
  ASSIGN_OR_RETURN(serving::DisaggregatedMode mode,
                   serving::ParseDisaggregatedMode(cand.disaggregated(),
                                                   "candidates.disaggregated"));
  RETURN_IF_ERROR(CheckHardwareList("candidates.hardware", cand.hardware(),
                                    /*required=*/true));
  for (const auto& [field, list] :
       {std::pair{"candidates.prefill_hardware", &cand.prefill_hardware()},
        std::pair{"candidates.decode_hardware", &cand.decode_hardware()}}) {
    RETURN_IF_ERROR(CheckHardwareList(field, *list, /*required=*/false));
    if (mode == serving::DisaggregatedMode::kOff && !list->empty()) {
      return Bad(field,
                 "empty with candidates.disaggregated \"off\" (pools are "
                 "disaggregated candidates)",
                 absl::StrCat(list->size(), " entries"));
    }
  }
  if (mode == serving::DisaggregatedMode::kOn &&
      !cand.decode_hardware().empty() && cand.prefill_hardware().empty()) {
    return Bad("candidates.prefill_hardware",
               "set when candidates.decode_hardware is, with "
               "candidates.disaggregated \"on\" (1..64 hardware entries)",
               "0 entries");
  }
  if (cand.formats_size() > kMaxPlanFormats) {
    return Bad("candidates.formats", "0..16 format sets",
               absl::StrCat(cand.formats_size()));
  }
  serving::CandidateAxes axes;
  axes.mode = mode;
  axes.tensor_parallel.assign(cand.tensor_parallel().begin(),
                              cand.tensor_parallel().end());
  axes.pipeline_parallel.assign(cand.pipeline_parallel().begin(),
                                cand.pipeline_parallel().end());
  axes.expert_parallel.assign(cand.expert_parallel().begin(),
                              cand.expert_parallel().end());
  axes.prefill_tensor_parallel.assign(cand.prefill_tensor_parallel().begin(),
                                      cand.prefill_tensor_parallel().end());
  axes.decode_tensor_parallel.assign(cand.decode_tensor_parallel().begin(),
                                     cand.decode_tensor_parallel().end());
  if (cand.has_max_pool_replicas()) {
    axes.max_pool_replicas = cand.max_pool_replicas();
  }
  for (int i = 0; i < cand.formats_size(); ++i) {
    ASSIGN_OR_RETURN(engine::Precision p,
                     Precision(cand.formats(i),
                               absl::StrCat("candidates.formats[", i, "]")));
    axes.precisions.push_back(std::move(p));
  }
  ASSIGN_OR_RETURN(serving::CandidateSpace space,
                   serving::CandidateSpace::Create(model, std::move(axes)));
  // The pools' parts default to the hardware list.
  const auto& prefill_specs = cand.prefill_hardware().empty()
                                  ? cand.hardware()
                                  : cand.prefill_hardware();
  const auto& decode_specs =
      cand.decode_hardware().empty() ? cand.hardware() : cand.decode_hardware();
  // (The exact cap, after the default degrees the heads do not divide are
  // dropped, is below; this one keeps the enumeration bounded.)
  const double planned = space.UpperBound(
      cand.hardware_size(), prefill_specs.size(), decode_specs.size());
  if (planned > 64.0 * static_cast<double>(limits_.max_plan_candidates)) {
    return TooManyCandidates(planned, limits_);
  }
  engine::AnalysisOptions options;
  options.suggestions = false;
  if (req.options().has_flash_attention()) {
    options.flash_attention = req.options().flash_attention();
  }
  if (req.options().has_pure_roofline()) {
    options.pure_roofline = req.options().pure_roofline();
  }
  RETURN_IF_ERROR(request::ApplyDecodeVariants(req.options(), &options));
  v1::PlanResponse resp;
  resp.set_model_id(model.id);
  // How each hardware's profile was matched: (hardware ids, match).
  std::vector<std::pair<std::string, std::string>> calibration_notes;
  std::vector<std::string> part_ids;  // resolved, as the pricing keys
  // Resolves one list's parts (each part's calibration noted once).
  auto resolve =
      [&](absl::string_view field,
          const google::protobuf::RepeatedPtrField<v1::HardwareSpec>& specs)
      -> absl::StatusOr<std::vector<serving::PlanPart>> {
    std::vector<serving::PlanPart> parts;
    for (int h = 0; h < specs.size(); ++h) {
      ASSIGN_OR_RETURN(serving::PlanPart part,
                       ResolvePart(*registry_, *profiles_, cand, specs[h],
                                   absl::StrCat(field, "[", h, "]"), options,
                                   &calibration_notes, &resp));
      part.economics = PartEconomics(econ, req.pricing(), part.hardware.id);
      if (std::find(part_ids.begin(), part_ids.end(), part.hardware.id) ==
          part_ids.end()) {
        part_ids.push_back(part.hardware.id);
      }
      parts.push_back(std::move(part));
    }
    return parts;
  };
  std::vector<serving::PlanPart> parts, prefill_parts, decode_parts;
  if (space.aggregated()) {
    ASSIGN_OR_RETURN(parts, resolve("candidates.hardware", cand.hardware()));
  }
  if (space.disaggregated()) {
    ASSIGN_OR_RETURN(prefill_parts, resolve(cand.prefill_hardware().empty()
                                                ? "candidates.hardware"
                                                : "candidates.prefill_hardware",
                                            prefill_specs));
    ASSIGN_OR_RETURN(decode_parts, resolve(cand.decode_hardware().empty()
                                               ? "candidates.hardware"
                                               : "candidates.decode_hardware",
                                           decode_specs));
  }
  engine::Scenario base;
  base.model = model;
  base.options = options;
  space.Enumerate(base, parts, prefill_parts, decode_parts, &in);
  for (const std::string& w : in.warnings) {
    if (std::find(resp.warnings().begin(), resp.warnings().end(), w) ==
        resp.warnings().end()) {
      resp.add_warnings(w);
    }
  }
  RETURN_IF_ERROR(CheckPricedParts(req.pricing(), part_ids));
  const size_t sized =
      in.candidates.size() + in.prefill_pools.size() + in.decode_pools.size();
  if (static_cast<int64_t>(sized) > limits_.max_plan_candidates) {
    return TooManyCandidates(static_cast<double>(sized), limits_);
  }
  RETURN_IF_ERROR(serving::ValidatePlanInput(in));
  // Cost and memory before any simulation (issue 26: 248 candidates x
  // 100,000 requests burned 59 CPU-s with no deadline).
  const double simulations =
      static_cast<double>(sized) * (serving::SloSearchSimulations() + 1);
  const double per_request = serving::SequenceStepsPerRequest(
      in.traffic.prompt.Mean(), in.traffic.generated.Mean(),
      in.serving.max_num_batched_tokens);
  // Runs are lengthened to steady state (slo_search.h): at most
  // SteadyStateRequests of the most sequences a replica may run.
  // (A trace's runs replay at most its requests.)
  const size_t own = in.traffic.trace.own_requests();
  int64_t per_run =
      serving::SteadyStateRequests(in.requests, in.serving.max_num_seqs);
  if (own > 0) per_run = std::min(per_run, static_cast<int64_t>(own));
  const std::string requests_factor = absl::StrCat(
      per_run, " requests a run (simulation.requests, lengthened to ",
      serving::kSteadyStateTurnovers,
      " turnovers of serving.max_num_seqs sequences",
      own > 0 ? ", at most the trace's" : "", ")");
  RETURN_IF_ERROR(CheckSequenceSteps(
      "plan", simulations * static_cast<double>(per_run) * per_request,
      absl::StrCat(sized, " candidates and pools x ",
                   serving::SloSearchSimulations() + 1,
                   " simulations (the SLO search and the sizing run) x ",
                   requests_factor, " x ", per_request,
                   " sequence-steps a request (mean generated tokens + "
                   "prompt chunks of serving.max_num_batched_tokens - 1)"),
      limits_));
  const int64_t at_once = serving::PlanThreads(sized);
  // Each simulation holds its copy of the trace's requests: 8-byte
  // lengths, chain hashes and indices.
  const serving::Arrivals& trace = in.traffic.trace;
  const double trace_bytes =
      8.0 * static_cast<double>(
                trace.prompt_tokens.size() + trace.generated_tokens.size() +
                trace.content.chains.size() + trace.content.begin.size());
  RETURN_IF_ERROR(CheckRequestMemory(
      "plan",
      static_cast<double>(at_once) *
          (static_cast<double>(per_run) * serving::kBytesPerSimulatedRequest +
           trace_bytes),
      absl::StrCat(at_once, " simulations at once x (", requests_factor, " x ",
                   serving::kBytesPerSimulatedRequest, " bytes",
                   trace_bytes > 0
                       ? absl::StrCat(" + the trace's ", trace_bytes, " bytes")
                       : "",
                   ")"),
      limits_));
  ASSIGN_OR_RETURN(ExpensiveCallGate::Slot slot, gate_->Enter("plan"));
  absl::StatusOr<serving::PlanResult> plan = absl::InternalError("");
  try {
    plan = serving::Plan(in);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("planner fault: ", e.what()));
  }
  if (!plan.ok()) return plan.status();
  for (const serving::Deployment& d : plan->deployments) {
    ToProto(d, resp.add_deployments());
  }
  for (const int i : plan->pareto) resp.add_pareto(i);
  resp.set_headline(plan->headline);
  for (const std::string& w : plan->warnings) resp.add_warnings(w);
  resp.set_simulations(plan->simulations);
  resp.add_notes(
      "serving model: continuous batching, paged KV cache at memory "
      "fraction " + absl::StrCat(in.serving.memory_fraction) +
      ", max_num_seqs " + absl::StrCat(in.serving.max_num_seqs) +
      ", max_num_batched_tokens " +
      absl::StrCat(in.serving.max_num_batched_tokens) +
      "; mixed steps timed by the engine's StepEvaluator::Step");
  if (cand.calibration().selector_case() ==
          v1::Calibration::SELECTOR_NOT_SET ||
      options.pure_roofline) {
    resp.add_notes(
        "no calibration: pure roofline step times, an upper bound on speed "
        "(so a lower bound on devices and cost)");
  }
  resp.add_notes(serving::StabilityNote(in.max_utilization));
  if (t.has_trace()) resp.add_notes(TraceNote(in, t.rate() == 0));
  resp.add_notes(
      "J/token from board power x time (an upper bound); rental prices are "
      "dated on-demand list prices (see price_source)");
  for (const auto& [ids, match] : calibration_notes) {
    resp.add_notes(absl::StrCat("calibration on ", ids, ": ", match));
  }
  RETURN_IF_ERROR(EmitDeployment(req, in, model, &resp));
  return resp;
}

}  // namespace ridgeline::service
