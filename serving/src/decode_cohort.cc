#include "ridgeline/serving/decode_cohort.h"

#include <algorithm>
#include <iterator>

namespace ridgeline::serving {

void DecodeCohort::Join(int64_t request, const RequestState& r) {
  if (finishing_.empty()) last_token_ = r.last_token;
  finishing_.emplace(steps_ + (r.stage_target - r.generated), r.running_order,
                     request);
  context_sum_ += r.prompt + r.generated - 1;
}

void DecodeCohort::Advance(double t, std::vector<RequestState>& requests,
                           std::vector<int64_t>& finished) {
  ++steps_;
  context_sum_ += size();
  last_token_ = t;
  // Ties leave in running order (the tuple's second key).
  while (!finishing_.empty() && std::get<0>(finishing_.top()) == steps_) {
    const int64_t i = std::get<2>(finishing_.top());
    finishing_.pop();
    RequestState& r = requests[i];
    r.generated = r.stage_target;
    r.last_token = t;
    context_sum_ -= r.prompt + r.generated - 1;
    finished.push_back(i);
  }
}

void DecodeCohort::Dissolve(std::vector<RequestState>& requests,
                            std::vector<int64_t>& running) {
  const auto merged_from = static_cast<ptrdiff_t>(running.size());
  while (!finishing_.empty()) {
    const auto [at, order, i] = finishing_.top();
    finishing_.pop();
    RequestState& r = requests[i];
    r.generated = r.stage_target - (at - steps_);
    r.last_token = last_token_;
    running.push_back(i);
  }
  context_sum_ = 0;
  auto by_order = [&](int64_t a, int64_t b) {
    return requests[a].running_order < requests[b].running_order;
  };
  std::sort(running.begin() + merged_from, running.end(), by_order);
  std::inplace_merge(running.begin(), running.begin() + merged_from,
                     running.end(), by_order);
}

}  // namespace ridgeline::serving
