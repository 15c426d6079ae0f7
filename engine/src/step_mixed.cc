// Temporary: StepEvaluator::Step lands with the analysis split.
#include "ridgeline/engine/step.h"

namespace ridgeline::engine {

absl::StatusOr<StepTiming> StepEvaluator::Step(
    absl::Span<const StepSequence>, std::vector<OpResult>*) const {
  return absl::UnimplementedError("StepEvaluator::Step: not yet implemented");
}

}  // namespace ridgeline::engine
