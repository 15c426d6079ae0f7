// The running decoders of one replica slot that step in lockstep: every
// step that includes the cohort gives each member one token, and their
// latest tokens appeared together. Held as a count, a summed context and
// the members' finishing steps, so a step costs O(1) plus O(log n) per
// member that finishes, not O(members): the plan's simulations step
// batches of hundreds of decoders for 10^5 steps (issue 22).
//
// A member's generated count is implicit (what its finishing step says is
// left); it is written back to its RequestState when it finishes or when
// the cohort dissolves (the scheduler cannot give every member a token).
// Used only where nothing can preempt a decoder (Preemption::kOff: a
// preemption takes a KV block per decode token) and the step model times
// decodes by count and summed context (StepCost::folds_decodes).
// Thread-compatible.
#pragma once

#include <cstdint>
#include <limits>
#include <queue>
#include <tuple>
#include <vector>

#include "ridgeline/serving/request_state.h"

namespace ridgeline::serving {

class DecodeCohort {
 public:
  int64_t size() const { return static_cast<int64_t>(finishing_.size()); }
  // Sum over members of prompt + generated - 1: the KV they hold before
  // the next step.
  int64_t context_sum() const { return context_sum_; }
  // When the members' latest token appeared (-1: never stepped).
  double last_token() const { return last_token_; }
  // Steps until its first member finishes (Advance returns it); INT64_MAX
  // when empty.
  int64_t steps_to_next_finish() const {
    return finishing_.empty() ? std::numeric_limits<int64_t>::max()
                              : std::get<0>(finishing_.top()) - steps_;
  }

  // Whether request `r`, decoding and not finished, can join now: its
  // latest token appeared with the members' (or the cohort is empty).
  bool CanJoin(const RequestState& r) const {
    return finishing_.empty() || r.last_token == last_token_;
  }
  // `request` (CanJoin) joins: its generated count and last token are the
  // cohort's from now on.
  void Join(int64_t request, const RequestState& r);

  // The step that included every member ended at `t`: each member has one
  // more token. Appends the members that reached their stage target to
  // `finished` in running order, their RequestState updated and removed
  // from the cohort.
  void Advance(double t, std::vector<RequestState>& requests,
               std::vector<int64_t>& finished);

  // Every member leaves, its RequestState written back; appended to
  // `running` in running order (RequestState::running_order), which is
  // then merged with what `running` held (sorted by that order).
  void Dissolve(std::vector<RequestState>& requests,
                std::vector<int64_t>& running);

 private:
  // (step at which it reaches its stage target, running order, request).
  using Finish = std::tuple<int64_t, int64_t, int64_t>;
  int64_t steps_ = 0;  // steps the cohort took
  int64_t context_sum_ = 0;
  double last_token_ = -1;
  std::priority_queue<Finish, std::vector<Finish>, std::greater<>> finishing_;
};

}  // namespace ridgeline::serving
