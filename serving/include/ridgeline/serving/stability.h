// Whether a simulated queue is stable: a percentile from a run whose
// backlog still grows is not a result (it grows with the run's length).
//
// The backlog is the number of requests waiting (arrived, not yet
// admitted), averaged over time. A stable queue's backlog is stationary
// once the replica has filled, so the second half of the arrival window
// holds about what the first half holds; an unstable queue (arrivals
// faster than the replica serves) grows linearly, so the second half's
// mean backlog is about three times the first half's (g T / 4 against
// 3 g T / 4 for growth g over a window T), and more when the growth starts
// only once the batch is full. The rule:
//
//   growing  <=>  second_half > kBacklogGrowthFactor x first_half
//                               + kBacklogSlackRequests
//
// The factor sits between the two cases (a replica filling from empty
// makes the first half a little lighter even when stable); the slack keeps
// a burst of a few requests (seen at 90 % load) from counting as growth.
#pragma once

#include <span>
#include <string>

namespace ridgeline::serving {

inline constexpr double kBacklogGrowthFactor = 1.5;
inline constexpr double kBacklogSlackRequests = 3.0;

// One request's wait: seconds from the run's start.
struct Wait {
  double arrival = 0;
  double admitted = 0;  // >= arrival
};

struct Backlog {
  // Mean requests waiting over [first arrival, middle] and [middle, last
  // arrival] of the arrival window (after the last arrival nothing arrives
  // and the queue only drains).
  double first_half = 0;
  double second_half = 0;
  bool growing = false;  // the rule above
};

// `waits` in any order; an empty or instantaneous arrival window (one
// arrival time) has no backlog to grow.
Backlog MeasureBacklog(std::span<const Wait> waits);

// "unstable: the queue grows without bound (...)": what a growing backlog
// means, for warnings and a rejected rate's reason.
std::string UnstableWarning(const Backlog& b);

}  // namespace ridgeline::serving
