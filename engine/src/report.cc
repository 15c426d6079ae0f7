// The bottleneck sentence (see report.h).
#include "report.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "validate_util.h"

namespace ridgeline::engine::internal {

void ComputeBottleneck(AnalysisResult* r, bool decode) {
  const StepResult& step = decode ? r->decode : r->prefill;
  Bottleneck& b = r->bottleneck;
  b.phase = step.phase;
  const OpResult* worst = nullptr;
  for (const OpResult& op : step.ops) {
    if (worst == nullptr || op.seconds > worst->seconds) worst = &op;
  }
  if (worst == nullptr) return;
  b.op = worst->kind;
  b.layer_group = worst->layer_group;
  b.bound = worst->bound;
  b.share_of_phase_time =
      step.totals.seconds > 0 ? worst->seconds / step.totals.seconds : 0;
  b.intensity = worst->intensity;
  // Where this op's two roofs meet: attained compute roof over attained
  // memory roof = intensity * memory_s / compute_s.
  b.ridge_point =
      worst->compute_seconds > 0 && worst->bytes > 0
          ? worst->intensity * worst->memory_seconds / worst->compute_seconds
          : r->ridge_point;
  const std::string group =
      worst->layer_group.empty()
          ? std::string()
          : absl::StrCat(" (", Av(worst->layer_group), " layers)");
  std::string where;
  switch (b.bound) {
    case Bound::kMemory:
      if (!r->compute_roof_known && worst->compute_seconds == 0) {
        // No peak is published: neither a ridge point nor a compute bound
        // can be stated, only that memory alone takes this long.
        b.ridge_point = 0;
        where = absl::StrFormat(
            "memory time at %.3g FLOP/byte; the compute roof is unknown (no "
            "published peak), so this is a lower bound on its time",
            b.intensity);
        break;
      }
      where = absl::StrFormat(
          "memory-bound at %.3g FLOP/byte, %.3gx below its ridge point of "
          "%.3g FLOP/byte",
          b.intensity, b.intensity > 0 ? b.ridge_point / b.intensity : 0,
          b.ridge_point);
      break;
    case Bound::kCompute:
      where = absl::StrFormat(
          "compute-bound at %.3g FLOP/byte, above its ridge point of %.3g "
          "FLOP/byte",
          b.intensity, b.ridge_point);
      break;
    case Bound::kOverhead:
      where = absl::StrFormat(
          "overhead-bound: %.3g s of kernel overhead exceed both roofs",
          worst->overhead_seconds);
      break;
    case Bound::kInterconnect:
      where = absl::StrFormat(
          "interconnect-bound: %.3g s of all-reduce traffic over the "
          "device-to-device link",
          worst->interconnect_seconds);
      break;
  }
  b.text = absl::StrFormat(
      "%s is limited by %s%s: %.1f%% of %s time (%.3g s), %s%s.",
      Av(PhaseName(b.phase)), Av(OpKindName(b.op)), group,
      100 * b.share_of_phase_time, Av(PhaseName(b.phase)), worst->seconds,
      where,
      worst->executed_in_tier >= 0
          ? absl::StrCat(", run in memory tier ", worst->executed_in_tier)
          : std::string());
  // The calibration's fixed costs (per step, per request) belong to no op;
  // say so when they outweigh the worst op.
  double op_seconds = 0;
  for (const OpResult& op : step.ops) op_seconds += op.seconds;
  const double fixed = step.totals.seconds - op_seconds;
  if (fixed > worst->seconds) {
    absl::StrAppend(
        &b.text,
        absl::StrFormat(" Fixed overhead (per step%s) takes more: %.1f%% "
                        "(%.3g s).",
                        b.phase == Phase::kPrefill ? " and per request" : "",
                        100 * fixed / step.totals.seconds, fixed));
  }
}

}  // namespace ridgeline::engine::internal
