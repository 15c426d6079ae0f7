// Backend::Plan: validates a v1::PlanRequest, builds one serving::Candidate
// per hardware x pipeline stages x (tensor-parallel degree or
// expert-parallel degree) x format set, runs serving::Plan
// and converts the deployments back. The math is serving/'s.
#include <algorithm>
#include <cmath>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/serving/parallelism.h"
#include "ridgeline/serving/plan.h"
#include "ridgeline/serving/prices.h"
#include "ridgeline/service/backend.h"
#include "ridgeline/service/convert.h"
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
}

}  // namespace

absl::StatusOr<v1::PlanResponse> Backend::Plan(
    const v1::PlanRequest& req, const std::function<bool()>& stop) const {
  if (!req.has_model()) {
    return Bad("model", "set: one of catalog_id or hf_config_json", "unset");
  }
  ASSIGN_OR_RETURN(engine::ModelConfig model, Model(req.model()));
  serving::PlanInput in;
  in.stop = stop;
  in.traffic.rate = req.traffic().rate();
  ASSIGN_OR_RETURN(in.traffic.prompt, Lengths(req.traffic().prompt_tokens(),
                                              "traffic.prompt_tokens"));
  ASSIGN_OR_RETURN(in.traffic.generated,
                   Lengths(req.traffic().generated_tokens(),
                           "traffic.generated_tokens"));
  in.slo = {req.slo().ttft_p90_seconds(), req.slo().tpot_p90_seconds()};
  const v1::ServingOptions& so = req.serving();
  if (so.has_memory_fraction()) in.serving.memory_fraction = so.memory_fraction();
  if (so.has_max_num_seqs()) in.serving.max_num_seqs = so.max_num_seqs();
  if (so.has_max_num_batched_tokens()) {
    in.serving.max_num_batched_tokens = so.max_num_batched_tokens();
  }
  if (so.has_block_size()) in.serving.block_size = so.block_size();
  if (req.pricing().has_usd_per_device_hour()) {
    in.prices.usd_per_device_hour = req.pricing().usd_per_device_hour();
  }
  if (req.pricing().has_price_usd()) {
    in.prices.price_usd = req.pricing().price_usd();
  }
  if (req.has_requests()) in.requests = req.requests();
  if (req.has_max_utilization()) in.max_utilization = req.max_utilization();
  if (req.has_seed()) in.seed = req.seed();
  engine::Economics econ = engine::DefaultEconomics();
  RETURN_IF_ERROR(Economics(req.economics(), &econ));

  const v1::PlanCandidates& cand = req.candidates();
  if (cand.hardware_size() < 1 || cand.hardware_size() > kMaxPlanHardware) {
    return Bad("candidates.hardware", "1..64 hardware entries",
               absl::StrCat(cand.hardware_size()));
  }
  if (cand.formats_size() > kMaxPlanFormats) {
    return Bad("candidates.formats", "0..16 format sets",
               absl::StrCat(cand.formats_size()));
  }
  std::vector<int64_t> tps(cand.tensor_parallel().begin(),
                           cand.tensor_parallel().end());
  const bool default_tps = tps.empty();
  if (default_tps) tps = {1, 2, 4, 8};
  for (size_t i = 0; i < tps.size(); ++i) {
    if (tps[i] < 1 || tps[i] > 256) {
      return Bad(absl::StrCat("candidates.tensor_parallel[", i, "]"),
                 "in [1, 256]", absl::StrCat(tps[i]));
    }
  }
  // Pipeline and expert parallelism: the serving rules (stages divide the
  // layers; experts only for MoE models) name the list entry.
  std::vector<int64_t> pps(cand.pipeline_parallel().begin(),
                           cand.pipeline_parallel().end());
  if (pps.empty()) pps = {1};
  for (size_t i = 0; i < pps.size(); ++i) {
    RETURN_IF_ERROR(serving::CheckPipelineStages(
        model, pps[i], absl::StrCat("candidates.pipeline_parallel[", i, "]")));
  }
  std::vector<int64_t> eps(cand.expert_parallel().begin(),
                           cand.expert_parallel().end());
  if (eps.empty()) eps = {1};
  for (size_t i = 0; i < eps.size(); ++i) {
    RETURN_IF_ERROR(serving::CheckExpertParallel(
        model, eps[i], absl::StrCat("candidates.expert_parallel[", i, "]")));
  }
  // One replica shape per (tensor, expert) choice: EP 1 pairs with every
  // tensor-parallel degree, EP e > 1 is attention data-parallel (TP 1).
  // Size first: the lists multiply (and come from the wire).
  const double shapes_per_stage_count =
      static_cast<double>(std::count_if(eps.begin(), eps.end(),
                                        [](int64_t e) { return e > 1; })) +
      static_cast<double>(std::count(eps.begin(), eps.end(), 1)) *
          static_cast<double>(tps.size());
  const double planned =
      static_cast<double>(cand.hardware_size()) *
      static_cast<double>(pps.size()) * shapes_per_stage_count *
      static_cast<double>(std::max(cand.formats_size(), 2));
  // (The exact cap, after the default degrees the heads do not divide are
  // dropped, is below; this one keeps the enumeration bounded.)
  if (planned > 64.0 * serving::kMaxPlanCandidates) {
    return Bad("candidates", "at most 512 deployments (hardware x "
               "pipeline_parallel x (tensor_parallel or expert_parallel) x "
               "formats)",
               absl::StrCat(planned));
  }
  std::vector<engine::Parallelism> replica_shapes;
  for (const int64_t pp : pps) {
    for (const int64_t ep : eps) {
      if (ep > 1) {
        replica_shapes.push_back(serving::ReplicaParallelism(1, pp, ep));
        continue;
      }
      for (const int64_t tp : tps) {
        replica_shapes.push_back(serving::ReplicaParallelism(tp, pp, 1));
      }
    }
  }
  std::vector<engine::Precision> precisions;
  if (cand.formats_size() == 0) {
    precisions.push_back(engine::DefaultPrecision());
    engine::Precision fp8;
    fp8.weights = fp8.activations = fp8.kv_cache =
        engine::ParseNumberFormat("fp8").value();
    precisions.push_back(fp8);
  }
  for (int i = 0; i < cand.formats_size(); ++i) {
    ASSIGN_OR_RETURN(engine::Precision p,
                     Precision(cand.formats(i),
                               absl::StrCat("candidates.formats[", i, "]")));
    precisions.push_back(std::move(p));
  }
  engine::AnalysisOptions options;
  options.suggestions = false;
  if (req.options().has_flash_attention()) {
    options.flash_attention = req.options().flash_attention();
  }
  if (req.options().has_pure_roofline()) {
    options.pure_roofline = req.options().pure_roofline();
  }
  v1::PlanResponse resp;
  resp.set_model_id(model.id);
  // How each hardware's profile was matched: (hardware ids, match).
  std::vector<std::pair<std::string, std::string>> calibration_notes;
  for (int h = 0; h < cand.hardware_size(); ++h) {
    const std::string path = absl::StrCat("candidates.hardware[", h, "]");
    const v1::HardwareSpec& spec = cand.hardware(h);
    ASSIGN_OR_RETURN(engine::Hardware hw,
                     serving_convert::Hardware(*registry_, spec, path));
    ASSIGN_OR_RETURN(serving_convert::Calibrated cal,
                     serving_convert::Calibration(
                         *profiles_, cand.calibration(), hw,
                         "candidates"));
    const engine::Efficiency& eff = cal.efficiency;
    const bool fp16_acc = cal.fp16_accumulation;
    if (!cal.match.empty() && !options.pure_roofline) {
      auto same = std::find_if(
          calibration_notes.begin(), calibration_notes.end(),
          [&](const auto& n) { return n.second == cal.match; });
      if (same == calibration_notes.end()) {
        calibration_notes.push_back({hw.id, cal.match});
      } else {
        absl::StrAppend(&same->first, ", ", hw.id);
      }
    }
    if (!cal.warning.empty() && !options.pure_roofline) {
      resp.add_warnings(absl::StrCat(hw.id, ": ", cal.warning));
    }
    for (const engine::Parallelism& par : replica_shapes) {
      engine::Scenario s;
      s.model = model;
      s.hardware = hw;
      s.parallelism = par;
      s.efficiency = eff;
      s.economics = econ;
      s.options = options;
      s.options.fp16_accumulation = fp16_acc;
      if (s.options.pure_roofline) s.efficiency = engine::Efficiency{};
      // Degrees the model's heads cannot be split over are skipped when
      // they are the defaults, reported when asked for.
      const absl::Status valid = engine::ValidateScenario(s);
      if (!valid.ok() && default_tps && par.tensor_parallel > 1) continue;
      for (const engine::Precision& p : precisions) {
        s.precision = p;
        in.candidates.push_back({s, FormatsLabel(p)});
      }
    }
  }
  if (in.candidates.size() > static_cast<size_t>(serving::kMaxPlanCandidates)) {
    return Bad("candidates", "at most 512 deployments (hardware x "
               "pipeline_parallel x (tensor_parallel or expert_parallel) x "
               "formats)",
               absl::StrCat(in.candidates.size()));
  }
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
  resp.add_notes(
      "J/token from board power x time (an upper bound); rental prices are "
      "dated on-demand list prices (see price_source)");
  for (const auto& [ids, match] : calibration_notes) {
    resp.add_notes(absl::StrCat("calibration on ", ids, ": ", match));
  }
  return resp;
}

}  // namespace ridgeline::service
