// Explore request -> ExploreSpec (explore_spec.h). No math here.
#include "explore_spec.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/status_macros.h"

namespace ridgeline::service {
namespace {

constexpr int kMaxSpecChars = 4096;  // one vary / objective / constraint
constexpr int kMaxConstraints = 32;

absl::Status TooLong(absl::string_view field, size_t n) {
  return engine::WithFieldPath(
      absl::InvalidArgumentError(absl::StrCat(
          field, ": at most ", kMaxSpecChars, " characters, got ", n)),
      std::string(field.data(), field.size()));
}

}  // namespace

absl::Status ExploreSpaceFromRequest(const Backend& backend,
                                     const v1::ExploreRequest& req,
                                     explore::ExploreSpec* spec) {
  // The base scenario: the request's scenario fields, as Analyze reads them.
  v1::AnalyzeRequest base;
  if (req.has_model()) *base.mutable_model() = req.model();
  if (req.has_hardware()) *base.mutable_hardware() = req.hardware();
  if (req.has_workload()) *base.mutable_workload() = req.workload();
  if (req.has_formats()) *base.mutable_formats() = req.formats();
  if (req.has_placement()) *base.mutable_placement() = req.placement();
  if (req.has_options()) *base.mutable_options() = req.options();
  if (req.has_calibration()) *base.mutable_calibration() = req.calibration();
  if (req.has_economics()) *base.mutable_economics() = req.economics();
  if (req.has_parallelism()) *base.mutable_parallelism() = req.parallelism();
  if (!req.has_model()) {
    return engine::WithFieldPath(absl::InvalidArgumentError(
        "model: must be set (catalog_id or hf_config_json)"), "model");
  }
  if (!req.has_hardware()) {
    return engine::WithFieldPath(absl::InvalidArgumentError(
        "hardware: must be set: one of platform_id or description (the base "
        "part)"), "hardware");
  }
  // Explore runs no suggestions: the base's cost counts none.
  base.mutable_options()->set_suggestions(false);
  RETURN_IF_ERROR(backend.ResolveScenario(base, &spec->space.base));
  spec->space.base.options.suggestions = false;

  if (req.vary_size() > static_cast<int>(explore::kMaxAxes)) {
    return engine::WithFieldPath(absl::ResourceExhaustedError(absl::StrCat(
        "vary: ", req.vary_size(), " axes exceed the cap of ",
        explore::kMaxAxes)), "vary");
  }
  for (int i = 0; i < req.vary_size(); ++i) {
    const std::string field = absl::StrCat("vary[", i, "]");
    if (req.vary(i).size() > kMaxSpecChars) return TooLong(field, req.vary(i).size());
    ASSIGN_OR_RETURN(explore::Axis a, explore::ParseAxis(req.vary(i), field));
    // A hypothetical part (any hardware axis) has no rental quote: the
    // base part's dated list price (engine/prices.h) is for the real one,
    // so designs are priced by purchase price (a price axis) or energy.
    if (a.hardware()) {
      spec->space.base.economics.list_rental_price = false;
    }
    spec->space.axes.push_back(std::move(a));
  }
  // A deployment axis re-prepares its points: the cost cap applies to the
  // largest deployment as it does to one Analyze (the hardware axes only
  // re-time a precomputed op table, nanoseconds a point, capped by
  // --max-explore-points).
  engine::Scenario largest = spec->space.base;
  for (const explore::Axis& a : spec->space.axes) {
    if (a.values.empty()) continue;
    // Values are range-checked later; clamp so the estimate is finite.
    const double top = std::min(a.values.back(), 1e9);
    const int64_t v = static_cast<int64_t>(std::llround(top));
    if (a.kind == explore::AxisKind::kBatch) largest.workload.batch = v;
    if (a.kind == explore::AxisKind::kPrompt) largest.workload.prompt_tokens = v;
    if (a.kind == explore::AxisKind::kGen) largest.workload.generated_tokens = v;
  }
  RETURN_IF_ERROR(CheckRequestCost(CostInputsOf(largest), backend.limits()));
  for (int i = 0; i < req.objectives_size(); ++i) {
    const std::string field = absl::StrCat("objectives[", i, "]");
    if (req.objectives(i).size() > kMaxSpecChars)
      return TooLong(field, req.objectives(i).size());
    ASSIGN_OR_RETURN(explore::Objective o,
                     explore::ParseObjective(req.objectives(i), field));
    spec->objectives.push_back(std::move(o));
  }
  if (req.constraints_size() > kMaxConstraints) {
    return engine::WithFieldPath(absl::InvalidArgumentError(absl::StrCat(
        "constraints: at most ", kMaxConstraints, " entries, got ",
        req.constraints_size())), "constraints");
  }
  for (int i = 0; i < req.constraints_size(); ++i) {
    const std::string field = absl::StrCat("constraints[", i, "]");
    if (req.constraints(i).size() > kMaxSpecChars)
      return TooLong(field, req.constraints(i).size());
    ASSIGN_OR_RETURN(explore::Constraint c,
                     explore::ParseConstraint(req.constraints(i), field));
    spec->constraints.push_back(std::move(c));
  }
  return absl::OkStatus();
}

}  // namespace ridgeline::service
