#include "ridgeline/serving/engine_step_cost.h"

#include <algorithm>
#include <utility>

#include "ridgeline/engine/status_macros.h"

namespace ridgeline::serving {

absl::StatusOr<std::unique_ptr<EngineStepCost>> EngineStepCost::Create(
    const engine::Scenario& scenario) {
  engine::Scenario s = scenario;
  s.options.suggestions = false;
  // Placement as ComputeKvCapacity's: a micro-batch is one step.
  s.parallelism.pipeline_micro_batches = 1;
  ASSIGN_OR_RETURN(engine::StepEvaluator e, engine::StepEvaluator::Create(s));
  const double floor = s.efficiency.min_speed_fraction;
  std::optional<engine::StepEvaluator> bound;
  if (floor > 0 && !s.options.pure_roofline) {
    engine::Scenario pure = s;
    pure.options.pure_roofline = true;
    ASSIGN_OR_RETURN(bound, engine::StepEvaluator::Create(pure));
  }
  return std::unique_ptr<EngineStepCost>(
      new EngineStepCost(std::move(e), std::move(bound), floor));
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

absl::StatusOr<StepTime> EngineStepCost::TimeFolded(
    std::span<const SequenceInStep> sequences, FoldedDecodes folded) const {
  // A lone cohort's next step (one more token each) mostly has the last
  // decode-only step's key: answered without building or hashing one.
  if (sequences.empty() && folded.count == last_decode_.count &&
      folded.context_sum >= last_decode_.context_sum_from &&
      folded.context_sum < last_decode_.context_sum_to) {
    return last_decode_.time;
  }
  constexpr int64_t q = kContextQuantum;
  auto nearest = [](int64_t v) { return (v + q / 2) / q * q; };
  int64_t decode = folded.count;
  // Exact in doubles (integers below 2^53), whatever the order.
  double context_sum = static_cast<double>(folded.context_sum);
  key_.assign(2, 0);
  for (const SequenceInStep& s : sequences) {
    if (s.new_tokens == 1 && s.context_tokens > 0) {
      ++decode;
      context_sum += static_cast<double>(s.context_tokens);
    } else {
      key_.push_back(nearest(s.context_tokens));
      key_.push_back((s.new_tokens + q - 1) / q * q);
    }
  }
  // The decodes' mean context, rounded (at least 1 in the key).
  const int64_t mean_context =
      decode > 0 ? nearest(static_cast<int64_t>(
                       context_sum / static_cast<double>(decode)))
                 : 0;
  key_[0] = decode;
  key_[1] = decode > 0 ? std::max<int64_t>(1, mean_context) : 0;
  if (key_.size() > 4) {  // chunks as (context, tokens) pairs, sorted
    std::vector<std::pair<int64_t, int64_t>> chunks;
    for (size_t i = 2; i < key_.size(); i += 2) {
      chunks.emplace_back(key_[i], key_[i + 1]);
    }
    std::sort(chunks.begin(), chunks.end());
    for (size_t i = 0; i < chunks.size(); ++i) {
      key_[2 + 2 * i] = chunks[i].first;
      key_[3 + 2 * i] = chunks[i].second;
    }
  }
  const bool decode_only = key_.size() == 2;
  // Decode-only steps of this count whose summed context S gives this key:
  // floor(S / count) in [mean - q/2, mean + q/2).
  auto remember = [&](const StepTime& t) {
    if (!decode_only || decode == 0) return;
    last_decode_ = {decode, (mean_context - q / 2) * decode,
                    (mean_context + q / 2) * decode, t};
  };
  if (auto it = cache_.find(key_); it != cache_.end()) {
    remember(it->second);
    return it->second;
  }
  batch_.assign(static_cast<size_t>(decode),
                engine::StepSequence{key_[1], 1});
  for (size_t i = 2; i < key_.size(); i += 2) {
    batch_.push_back(engine::StepSequence{key_[i], key_[i + 1]});
  }
  ASSIGN_OR_RETURN(engine::StepTiming t, evaluator_.Step(batch_));
  // Speculative decoding: the replica advances each decode sequence one
  // token per step, so a decode-only step is charged per expected accepted
  // token (its time / E): TPOT and throughput in expectation. A step with
  // prefill chunks is charged in full (TTFT exact; its decode tokens are
  // then counted as one each, a pessimistic bound for them).
  const double per_token = decode_only ? t.accepted_tokens_per_sequence : 1;
  StepTime out{t.seconds / per_token, t.bound,
               t.pipeline_interval_seconds / per_token};
  if (bound_) {
    // The floor: no slower than the bound's step at the profile's slowest
    // measured share of it.
    ASSIGN_OR_RETURN(engine::StepTiming b, bound_->Step(batch_));
    const double b_per = decode_only ? b.accepted_tokens_per_sequence : 1;
    out.seconds =
        std::min(out.seconds, b.seconds / b_per / min_speed_fraction_);
    out.interval_seconds =
        std::min(out.interval_seconds,
                 b.pipeline_interval_seconds / b_per / min_speed_fraction_);
  }
  cache_.emplace(key_, out);
  remember(out);
  return out;
}

}  // namespace ridgeline::serving
