// StepEvaluator: single forward steps of one scenario (see step.h).
#include "ridgeline/engine/step.h"

#include <memory>
#include <optional>
#include <utility>

#include "operators.h"
#include "prepare.h"
#include "ridgeline/engine/status_macros.h"
#include "roofline.h"
#include "validate_util.h"

namespace ridgeline::engine {

using internal::BuildDecode;
using internal::DominantBound;
using internal::Evaluator;
using internal::OpList;
using internal::Prepared;
using internal::StepShape;
using internal::TimeStep;

// The scenario (owned: the graph context and evaluator point into it), what
// Prepare built from it, and the evaluator. Immutable once built.
struct StepEvaluator::Impl {
  explicit Impl(const Scenario& scenario) : s(scenario) {}
  Scenario s;
  Prepared prep;
  std::optional<Evaluator> ev;
  int tiers = 0;

  StepTiming Finish(Phase phase, int64_t batch, int64_t tokens, int64_t kv,
                    const OpList& ops, const OpList* slope) const {
    StepTiming st;
    st.phase = phase;
    st.batch = batch;
    st.tokens = tokens;
    st.kv_length = kv;
    // A scheduler's step: the per-request cost is the scheduler's to add
    // once per admitted request (chunked prefill would pay it per chunk).
    const StepTotals tot =
        TimeStep(ops, slope, kv, ev->per_step(), *ev, prep.place, tiers,
                 nullptr, &st.overhead_seconds);
    st.flops = tot.flops;
    st.bytes = tot.bytes;
    st.compute_seconds = tot.compute_seconds;
    st.memory_seconds = tot.memory_seconds;
    st.interconnect_seconds = tot.interconnect_seconds;
    st.seconds = tot.seconds;
    st.bound = DominantBound(st.compute_seconds, st.memory_seconds,
                             st.interconnect_seconds, st.overhead_seconds);
    return st;
  }
};

absl::StatusOr<StepEvaluator> StepEvaluator::Create(const Scenario& scenario) {
  RETURN_IF_ERROR(ValidateScenario(scenario));
  auto impl = std::make_shared<Impl>(scenario);
  RETURN_IF_ERROR(Prepare(impl->s, &impl->prep));
  impl->ev.emplace(impl->s, impl->prep.place);
  impl->tiers = static_cast<int>(impl->s.hardware.tiers.size());
  return StepEvaluator(std::move(impl));
}

absl::StatusOr<StepTiming> StepEvaluator::Decode(int64_t batch,
                                                 int64_t kv_length) const {
  RETURN_IF_ERROR(internal::CheckIntRange("batch", batch, 1, 65536));
  RETURN_IF_ERROR(
      internal::CheckIntRange("kv_length", kv_length, 1, 10'000'000));
  OpList base, slope;
  BuildDecode(impl_->prep.g, batch, kv_length, &base, &slope);
  return impl_->Finish(Phase::kDecode, batch, batch, kv_length, base, &slope);
}

absl::StatusOr<StepTiming> StepEvaluator::Prefill(int64_t batch,
                                                  int64_t prompt_tokens) const {
  RETURN_IF_ERROR(internal::CheckIntRange("batch", batch, 1, 65536));
  RETURN_IF_ERROR(
      internal::CheckIntRange("prompt_tokens", prompt_tokens, 1, 10'000'000));
  OpList ops;
  internal::BuildStepOps(
      impl_->prep.g, StepShape{batch, prompt_tokens, prompt_tokens, -1}, &ops);
  return impl_->Finish(Phase::kPrefill, batch, batch * prompt_tokens,
                       prompt_tokens, ops, nullptr);
}

const MemoryFootprint& StepEvaluator::memory() const {
  return impl_->prep.memory;
}

}  // namespace ridgeline::engine
