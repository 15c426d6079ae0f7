#include "ridgeline/serving/stability.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_format.h"

namespace ridgeline::serving {

Backlog MeasureBacklog(std::span<const Wait> waits) {
  Backlog b;
  if (waits.empty()) return b;
  double first = std::numeric_limits<double>::infinity();
  double last = -first;
  for (const Wait& w : waits) {
    first = std::min(first, w.arrival);
    last = std::max(last, w.arrival);
  }
  if (!(last > first)) return b;
  const double mid = 0.5 * (first + last);
  // The time integral of the waiting count over a window is the sum of
  // each request's waiting interval clipped to it.
  auto overlap = [](const Wait& w, double lo, double hi) {
    return std::max(0.0, std::min(w.admitted, hi) - std::max(w.arrival, lo));
  };
  double a = 0, c = 0;
  for (const Wait& w : waits) {
    a += overlap(w, first, mid);
    c += overlap(w, mid, last);
  }
  const double half = mid - first;
  b.first_half = a / half;
  b.second_half = c / half;
  b.growing = b.second_half >
              kBacklogGrowthFactor * b.first_half + kBacklogSlackRequests;
  return b;
}

std::string UnstableWarning(const Backlog& b) {
  return absl::StrFormat(
      "unstable: the queue grows without bound (%.1f requests waiting on "
      "average over the first half of the arrivals, %.1f over the second); "
      "its percentiles grow with the run's length: the rate exceeds what the "
      "replica serves",
      b.first_half, b.second_half);
}

}  // namespace ridgeline::serving
