#include "plan_emit.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/service/request_scenario.h"
#include "ridgeline/serving/deploy_emit.h"
#include "serving_convert.h"

namespace ridgeline::service {
namespace {

using serving_convert::Bad;

bool KnownEmit(const std::string& e) {
  return e == "vllm" || e == "sglang" || e == "kubernetes";
}

serving::ServingEngine EngineOf(const v1::PlanRequest& req) {
  const std::string& e = req.emit() == "kubernetes" ? req.emit_engine()
                                                    : req.emit();
  return e == "sglang" ? serving::ServingEngine::kSglang
                       : serving::ServingEngine::kVllm;
}

// The Kubernetes extended resource of the vendors' device plugins
// (NVIDIA/k8s-device-plugin: nvidia.com/gpu; ROCm/k8s-device-plugin:
// amd.com/gpu); "" for the rest.
std::string DeviceResource(const std::string& vendor) {
  if (vendor == "NVIDIA") return "nvidia.com/gpu";
  if (vendor == "AMD") return "amd.com/gpu";
  return "";
}

absl::Status EmitError(const std::string& field, const std::string& message) {
  return engine::WithFieldPath(
      absl::InvalidArgumentError(absl::StrCat(field, ": ", message)), field);
}

}  // namespace

absl::Status CheckEmit(const v1::PlanRequest& req,
                       const engine::ModelConfig& model) {
  if (req.emit().empty()) return absl::OkStatus();
  if (!KnownEmit(req.emit())) {
    return Bad("emit", "one of \"\", \"vllm\", \"sglang\", \"kubernetes\"",
               request::Quote(req.emit()));
  }
  const std::string& engine = req.emit_engine();
  if (!engine.empty() && engine != "vllm" && engine != "sglang") {
    return Bad("emit_engine", "one of \"\" (vllm), \"vllm\", \"sglang\"",
               request::Quote(engine));
  }
  if (req.emit_model().empty() && model.source.empty()) {
    return Bad("emit_model",
               "a Hugging Face id or path of the weights (an inline config "
               "names none)",
               "\"\"");
  }
  const v1::SpeculativeDecoding& spec = req.options().speculative();
  if (spec.method() == "eagle" && req.emit_draft_model().empty()) {
    return Bad("emit_draft_model",
               "a Hugging Face id or path of the EAGLE-3 head the engine "
               "loads beside the model (options.speculative is eagle)",
               "\"\"");
  }
  if (!req.emit_draft_model().empty() &&
      (spec.method() != "draft" && spec.method() != "eagle")) {
    return Bad("emit_draft_model",
               "empty unless options.speculative.method is draft or eagle",
               request::Quote(req.emit_draft_model()));
  }
  if (req.has_emit_row() && req.emit_row() < 1) {
    return Bad("emit_row", ">= 1 (a row of deployments)",
               absl::StrCat(req.emit_row()));
  }
  return absl::OkStatus();
}

absl::Status EmitDeployment(const v1::PlanRequest& req,
                            const serving::PlanInput& in,
                            const engine::ModelConfig& model,
                            v1::PlanResponse* resp) {
  if (req.emit().empty()) return absl::OkStatus();
  const int rows = resp->deployments_size();
  int row = 1;
  if (req.has_emit_row()) {
    row = req.emit_row();
    if (row > rows) {
      return Bad("emit_row", absl::StrCat("in [1, ", rows, "]"),
                 absl::StrCat(row));
    }
  } else if (rows == 0 || !resp->deployments(0).meets_slo()) {
    return engine::WithFieldPath(
        absl::FailedPreconditionError(
            "emit: no deployment meets the SLO; pick one with emit_row "
            "(--emit-row N)"),
        "emit");
  }
  const v1::PlanDeployment& d = resp->deployments(row - 1);
  const std::string what =
      d.mode() == "disaggregated"
          ? absl::StrCat("row ", row, " (prefill ", d.prefill_replicas(),
                         " x ", d.prefill_hardware_id(), " TP ",
                         d.prefill_tensor_parallel(), " + decode ",
                         d.decode_replicas(), " x ", d.decode_hardware_id(),
                         " TP ", d.decode_tensor_parallel(), " ", d.formats(),
                         ")")
          : absl::StrCat("row ", row, " (", d.hardware_id(), " TP ",
                         d.tensor_parallel(), " PP ",
                         std::max<int64_t>(1, d.pipeline_parallel()), " EP ",
                         std::max<int64_t>(1, d.expert_parallel()), " ",
                         d.formats(), ")");
  if (!d.feasible()) {
    return EmitError("emit_row",
                     absl::StrCat(what, " is not feasible: ", d.why()));
  }
  // One pool per role: the aggregated row's replicas, or its prefill and
  // decode pools (hardware, TP and replicas of each; one stage, no EP).
  const std::vector<std::string> f = absl::StrSplit(d.formats(), '/');
  auto make_pool = [&](const std::string& role, const std::string& hw_id,
                       int64_t replicas, int64_t tp, int64_t pp,
                       int64_t ep) -> absl::StatusOr<serving::DeployPool> {
    const engine::Hardware* hw = nullptr;
    for (const auto* list : {&in.candidates, &in.prefill_pools, &in.decode_pools}) {
      for (const serving::Candidate& c : *list) {
        if (c.scenario.hardware.id == hw_id) hw = &c.scenario.hardware;
      }
    }
    if (hw == nullptr) {
      return absl::InternalError(
          absl::StrCat("emit: no candidate hardware ", hw_id));
    }
    serving::DeployPool pool;
    pool.role = role;
    pool.hardware_id = hw_id;
    pool.device_resource = DeviceResource(hw->vendor);
    pool.replicas = replicas;
    pool.tensor_parallel = tp;
    pool.pipeline_parallel = std::max<int64_t>(1, pp);
    pool.expert_parallel = std::max<int64_t>(1, ep);
    pool.devices_per_node = hw->devices_per_node;
    if (f.size() == 3) {
      pool.weights = f[0];
      pool.activations = f[1];
      pool.kv_cache = f[2];
    }
    pool.memory_fraction = in.serving.memory_fraction;
    pool.max_num_seqs = in.serving.max_num_seqs;
    pool.max_num_batched_tokens = in.serving.max_num_batched_tokens;
    pool.block_size = in.serving.block_size;
    pool.prefix_caching = in.serving.prefix_caching;
    return pool;
  };
  std::vector<serving::DeployPool> pools;
  if (d.mode() == "disaggregated") {
    ASSIGN_OR_RETURN(serving::DeployPool p,
                     make_pool("prefill", d.prefill_hardware_id(),
                               d.prefill_replicas(),
                               d.prefill_tensor_parallel(), 1, 1));
    ASSIGN_OR_RETURN(serving::DeployPool q,
                     make_pool("decode", d.decode_hardware_id(),
                               d.decode_replicas(), d.decode_tensor_parallel(),
                               1, 1));
    pools = {p, q};
  } else {
    ASSIGN_OR_RETURN(serving::DeployPool p,
                     make_pool("", d.hardware_id(), d.replicas(),
                               d.tensor_parallel(), d.pipeline_parallel(),
                               d.expert_parallel()));
    pools = {p};
  }

  serving::DeployPlan plan;
  plan.model = req.emit_model().empty() ? model.source : req.emit_model();
  if (const v1::SpeculativeDecoding& spec = req.options().speculative();
      !spec.method().empty() && spec.method() != "none") {
    serving::DeploySpeculation s;
    s.method = spec.method();
    s.tokens = spec.tokens();
    s.draft_model = req.emit_draft_model();
    if (s.method == "draft" && s.draft_model.empty()) {
      // The catalog draft's repository (the plan already found it).
      absl::StatusOr<engine::ModelConfig> draft =
          engine::FindModel(spec.draft_model());
      if (draft.ok()) s.draft_model = draft->source;
    }
    plan.speculative = s;
  }
  plan.pools = std::move(pools);
  plan.image = req.emit_image();
  plan.notes.push_back(absl::StrCat(
      "ridgeline plan: ", what, ", ", d.replicas(), " replica",
      d.replicas() == 1 ? "" : "s", ", ", d.devices(), " device",
      d.devices() == 1 ? "" : "s", "; p90 TTFT ",
      absl::StrFormat("%.4g", d.ttft_p90_seconds() * 1e3), " ms, TPOT ",
      absl::StrFormat("%.4g", d.tpot_p90_seconds() * 1e3), " ms at ",
      absl::StrFormat("%.4g", req.traffic().rate()),
      req.traffic().sessions().turns() > 1
          ? absl::StrCat(" sessions/s of ", req.traffic().sessions().turns(),
                         " turns")
          : " req/s",
      d.meets_slo() ? "" : " (MISSES the SLO)"));
  if (d.profile().empty()) {
    plan.notes.push_back(
        "timed by the pure roofline: an upper bound on speed, so a lower "
        "bound on replicas");
  }
  if (req.serving().has_kv_offload() && req.serving().kv_offload() != "off") {
    // The vLLM the flag list is read from has no offload flag (only
    // connectors); SGLang's hierarchical cache sizes differ from a tier's.
    plan.notes.push_back(absl::StrCat(
        "planned with KV offload (", req.serving().kv_offload(),
        "), which these commands do not configure: add vLLM's offloading "
        "connector (e.g. LMCache) or SGLang's --enable-hierarchical-cache "
        "to match"));
  }
  const serving::ServingEngine engine = EngineOf(req);
  absl::StatusOr<std::string> text =
      req.emit() == "kubernetes" ? serving::EmitKubernetes(engine, plan)
                                 : serving::EmitCommands(engine, plan);
  if (!text.ok()) {
    return EmitError("emit", absl::StrCat(what, ": ", text.status().message()));
  }
  resp->set_emitted(*text);
  resp->set_emitted_row(row);
  return absl::OkStatus();
}

}  // namespace ridgeline::service
