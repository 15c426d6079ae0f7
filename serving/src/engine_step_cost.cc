#include "ridgeline/serving/engine_step_cost.h"

#include <algorithm>
#include <utility>

#include "ridgeline/engine/status_macros.h"

namespace ridgeline::serving {

absl::StatusOr<std::unique_ptr<EngineStepCost>> EngineStepCost::Create(
    const engine::Scenario& scenario) {
  engine::Scenario s = scenario;
  s.options.suggestions = false;
  ASSIGN_OR_RETURN(engine::StepEvaluator e, engine::StepEvaluator::Create(s));
  return std::unique_ptr<EngineStepCost>(new EngineStepCost(std::move(e)));
}

engine::Workload EngineStepCost::ServingWorkload(int64_t sequences,
                                                 int64_t prompt_tokens,
                                                 int64_t generated_tokens,
                                                 int64_t step_tokens) {
  const int64_t context = prompt_tokens + std::max<int64_t>(generated_tokens, 1);
  sequences = std::max<int64_t>(sequences, 1);
  // sequences x prompt' ~ step_tokens, prompt' + generated' = context.
  const int64_t prompt =
      std::clamp<int64_t>(step_tokens / sequences, 1, context - 1);
  return {sequences, prompt, context - prompt};
}

absl::StatusOr<StepTime> EngineStepCost::Time(
    std::span<const SequenceInStep> sequences) const {
  int64_t decode = 0;
  int64_t prefill = 0;
  double context_sum = 0;
  for (const SequenceInStep& s : sequences) {
    if (s.new_tokens == 1 && s.context_tokens > 0) {
      ++decode;
      context_sum += static_cast<double>(s.context_tokens);
    } else {
      prefill += s.new_tokens;
    }
  }
  constexpr int64_t q = kContextQuantum;
  const int64_t context =
      decode > 0
          ? (static_cast<int64_t>(context_sum / static_cast<double>(decode)) +
             q / 2) / q * q
          : 0;
  const int64_t chunk = (prefill + q - 1) / q * q;
  const auto key = std::make_tuple(decode, context, chunk);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  ASSIGN_OR_RETURN(StepTime t, Compute(decode, context, chunk));
  cache_.emplace(key, t);
  return t;
}

absl::StatusOr<StepTime> EngineStepCost::Compute(int64_t decode,
                                                 int64_t context,
                                                 int64_t prefill) const {
  if (decode == 0) {
    ASSIGN_OR_RETURN(engine::StepTiming p, evaluator_.Prefill(1, prefill));
    return StepTime{p.seconds, p.bound};
  }
  // Decode(b, L): L is the context after the step.
  const int64_t kv_after = std::max<int64_t>(context, 1) + 1;
  ASSIGN_OR_RETURN(engine::StepTiming d, evaluator_.Decode(decode, kv_after));
  if (prefill == 0) return StepTime{d.seconds, d.bound};
  ASSIGN_OR_RETURN(engine::StepTiming d0, evaluator_.Decode(decode, 1));
  ASSIGN_OR_RETURN(engine::StepTiming p, evaluator_.Prefill(1, prefill));
  const bool prefill_dominates = p.seconds >= d0.seconds;
  const double attention = std::max(d.seconds - d0.seconds, 0.0);
  StepTime t;
  t.seconds = std::max(d0.seconds, p.seconds) + attention;
  t.bound = prefill_dominates && p.seconds >= attention ? p.bound : d.bound;
  return t;
}

}  // namespace ridgeline::serving
