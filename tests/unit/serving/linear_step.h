// A step cost for hand goldens: a fixed time a step plus a time per new
// token (prefill chunk tokens, one per decode), whatever the contexts;
// every step's sequences are recorded (the golden reads them back).
#pragma once

#include <span>
#include <vector>

#include "ridgeline/serving/step_cost.h"

namespace ridgeline::serving::testing {

class LinearStep final : public StepCost {
 public:
  // Defaults: 10 ms + 1 ms a new token.
  explicit LinearStep(double base_seconds = 0.010,
                      double per_token_seconds = 0.001)
      : base_(base_seconds), per_token_(per_token_seconds) {}
  absl::StatusOr<StepTime> Time(
      std::span<const SequenceInStep> seqs) const override {
    steps.emplace_back(seqs.begin(), seqs.end());
    int64_t tokens = 0;
    for (const SequenceInStep& s : seqs) tokens += s.new_tokens;
    return StepTime{base_ + per_token_ * static_cast<double>(tokens),
                    engine::Bound::kMemory};
  }
  mutable std::vector<std::vector<SequenceInStep>> steps;

 private:
  double base_, per_token_;
};

}  // namespace ridgeline::serving::testing
