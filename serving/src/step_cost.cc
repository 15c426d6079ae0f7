#include "ridgeline/serving/step_cost.h"

namespace ridgeline::serving {

absl::StatusOr<StepTime> StepCost::TimeFolded(
    std::span<const SequenceInStep> sequences, FoldedDecodes folded) const {
  if (folded.count == 0) return Time(sequences);
  return absl::FailedPreconditionError(
      "step model: decodes given by count, but this model times sequences "
      "one by one (folds_decodes() is false)");
}

}  // namespace ridgeline::serving
