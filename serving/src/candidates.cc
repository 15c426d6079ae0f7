#include "ridgeline/serving/candidates.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/serving/parallelism.h"
#include "ridgeline/serving/plan.h"

namespace ridgeline::serving {
namespace {

absl::Status Bad(absl::string_view field, absl::string_view range,
                 absl::string_view got) {
  return engine::WithFieldPath(absl::InvalidArgumentError(absl::StrCat(
                                   field, ": must be ", range, "; got ", got)),
                               std::string_view(field.data(), field.size()));
}

// Empty: `defaults`; else each entry in [1, 256], named in errors.
absl::Status TensorParallelList(absl::string_view field,
                                std::vector<int64_t>* list,
                                std::span<const int64_t> defaults) {
  if (list->empty()) list->assign(defaults.begin(), defaults.end());
  for (size_t i = 0; i < list->size(); ++i) {
    if ((*list)[i] < 1 || (*list)[i] > 256) {
      return Bad(absl::StrCat(field, "[", i, "]"), "in [1, 256]",
                 absl::StrCat((*list)[i]));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<engine::Precision> DefaultPlanPrecisions() {
  engine::Precision fp8;
  fp8.weights = fp8.activations = fp8.kv_cache =
      engine::ParseNumberFormat("fp8").value();
  return {engine::DefaultPrecision(), fp8};
}

std::string FormatsLabel(const engine::Precision& p) {
  return absl::StrCat(p.weights.name, "/", p.activations.name, "/",
                      p.kv_cache.name);
}

absl::StatusOr<DisaggregatedMode> ParseDisaggregatedMode(
    absl::string_view mode, absl::string_view field) {
  // Unset: aggregated only, so a request that predates the field plans as
  // before (the CLI sends "auto", its default).
  if (mode.empty() || mode == "off") return DisaggregatedMode::kOff;
  if (mode == "auto") return DisaggregatedMode::kAuto;
  if (mode == "on") return DisaggregatedMode::kOn;
  return Bad(field, "one of \"auto\", \"on\", \"off\" (or unset: off)",
             absl::StrCat("\"", mode, "\""));
}

absl::StatusOr<CandidateSpace> CandidateSpace::Create(
    const engine::ModelConfig& model, CandidateAxes axes) {
  CandidateSpace space;
  space.default_tp_ = axes.tensor_parallel.empty();
  RETURN_IF_ERROR(TensorParallelList("candidates.tensor_parallel",
                                     &axes.tensor_parallel,
                                     kDefaultTensorParallel));
  // The pools' lists default to the tensor_parallel list (and to its
  // dropping of default degrees the heads do not divide).
  space.default_prefill_tp_ =
      axes.prefill_tensor_parallel.empty() ? space.default_tp_ : false;
  space.default_decode_tp_ =
      axes.decode_tensor_parallel.empty() ? space.default_tp_ : false;
  RETURN_IF_ERROR(TensorParallelList("candidates.prefill_tensor_parallel",
                                     &axes.prefill_tensor_parallel,
                                     axes.tensor_parallel));
  RETURN_IF_ERROR(TensorParallelList("candidates.decode_tensor_parallel",
                                     &axes.decode_tensor_parallel,
                                     axes.tensor_parallel));
  // Pipeline and expert parallelism: the serving rules (stages divide the
  // layers; experts only for MoE models) name the list entry.
  if (axes.pipeline_parallel.empty()) axes.pipeline_parallel = {1};
  for (size_t i = 0; i < axes.pipeline_parallel.size(); ++i) {
    RETURN_IF_ERROR(CheckPipelineStages(
        model, axes.pipeline_parallel[i],
        absl::StrCat("candidates.pipeline_parallel[", i, "]")));
  }
  if (axes.expert_parallel.empty()) axes.expert_parallel = {1};
  for (size_t i = 0; i < axes.expert_parallel.size(); ++i) {
    RETURN_IF_ERROR(CheckExpertParallel(
        model, axes.expert_parallel[i],
        absl::StrCat("candidates.expert_parallel[", i, "]")));
  }
  if (axes.precisions.empty()) axes.precisions = DefaultPlanPrecisions();
  if (axes.max_pool_replicas < 1 ||
      axes.max_pool_replicas > kMaxPoolReplicasLimit) {
    return Bad("candidates.max_pool_replicas",
               absl::StrCat("in [1, ", kMaxPoolReplicasLimit,
                            "] (the largest P and D of a P:D ratio)"),
               absl::StrCat(axes.max_pool_replicas));
  }
  space.model_ = model;
  space.axes_ = std::move(axes);
  return space;
}

std::vector<engine::Parallelism> CandidateSpace::ReplicaShapes() const {
  // One replica shape per (tensor, expert) choice: EP 1 pairs with every
  // tensor-parallel degree, EP e > 1 is attention data-parallel (TP 1).
  std::vector<engine::Parallelism> shapes;
  for (const int64_t pp : axes_.pipeline_parallel) {
    for (const int64_t ep : axes_.expert_parallel) {
      if (ep > 1) {
        shapes.push_back(ReplicaParallelism(1, pp, ep));
        continue;
      }
      for (const int64_t tp : axes_.tensor_parallel) {
        shapes.push_back(ReplicaParallelism(tp, pp, 1));
      }
    }
  }
  return shapes;
}

double CandidateSpace::UpperBound(size_t parts, size_t prefill_parts,
                                  size_t decode_parts) const {
  const auto& eps = axes_.expert_parallel;
  const double shapes_per_stage =
      static_cast<double>(std::count_if(eps.begin(), eps.end(),
                                        [](int64_t e) { return e > 1; })) +
      static_cast<double>(std::count(eps.begin(), eps.end(), 1)) *
          static_cast<double>(axes_.tensor_parallel.size());
  const double formats = static_cast<double>(axes_.precisions.size());
  double n = 0;
  if (aggregated()) {
    n += static_cast<double>(parts) *
         static_cast<double>(axes_.pipeline_parallel.size()) *
         shapes_per_stage * formats;
  }
  if (disaggregated()) {
    n += (static_cast<double>(prefill_parts) *
              static_cast<double>(axes_.prefill_tensor_parallel.size()) +
          static_cast<double>(decode_parts) *
              static_cast<double>(axes_.decode_tensor_parallel.size())) *
         formats;
  }
  return n;
}

void CandidateSpace::AddShape(const engine::Scenario& base,
                              const PlanPart& part,
                              const engine::Parallelism& parallelism,
                              bool tp_defaulted,
                              std::vector<Candidate>* out,
                              std::vector<std::string>* warnings) const {
  engine::Scenario s = base;
  s.model = model_;
  s.hardware = part.hardware;
  s.parallelism = parallelism;
  s.efficiency = part.efficiency;
  s.economics = part.economics;
  s.options.fp16_accumulation = part.fp16_accumulation;
  if (s.options.pure_roofline) s.efficiency = engine::Efficiency{};
  if (part.adjust && part.profile_fallback.empty()) {
    const std::string w = part.adjust(&s);
    if (!w.empty() &&
        std::find(warnings->begin(), warnings->end(), w) == warnings->end()) {
      warnings->push_back(w);
    }
  }
  // Degrees the model's heads cannot be split over are skipped when they
  // are the defaults, reported (as the candidate's why) when asked for.
  if (tp_defaulted && parallelism.tensor_parallel > 1 &&
      !engine::ValidateScenario(s).ok()) {
    return;
  }
  for (const engine::Precision& p : axes_.precisions) {
    s.precision = p;
    out->push_back({s, FormatsLabel(p), part.profile_fallback});
  }
}

void CandidateSpace::Enumerate(const engine::Scenario& base,
                               std::span<const PlanPart> parts,
                               std::span<const PlanPart> prefill_parts,
                               std::span<const PlanPart> decode_parts,
                               PlanInput* in) const {
  in->max_pool_replicas = axes_.max_pool_replicas;
  if (aggregated()) {
    const std::vector<engine::Parallelism> shapes = ReplicaShapes();
    for (const PlanPart& part : parts) {
      for (const engine::Parallelism& par : shapes) {
        AddShape(base, part, par, default_tp_, &in->candidates, &in->warnings);
      }
    }
  }
  if (!disaggregated()) return;
  // A pool's replica: one stage, no expert parallelism.
  for (const PlanPart& part : prefill_parts) {
    for (const int64_t tp : axes_.prefill_tensor_parallel) {
      AddShape(base, part, ReplicaParallelism(tp, 1, 1), default_prefill_tp_,
               &in->prefill_pools, &in->warnings);
    }
  }
  for (const PlanPart& part : decode_parts) {
    for (const int64_t tp : axes_.decode_tensor_parallel) {
      AddShape(base, part, ReplicaParallelism(tp, 1, 1), default_decode_tp_,
               &in->decode_pools, &in->warnings);
    }
  }
}

}  // namespace ridgeline::serving
