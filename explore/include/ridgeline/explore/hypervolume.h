// Hypervolume of a front (minimisation): the volume of the region that the
// front dominates and that dominates the reference point. Points not
// strictly better than the reference in every objective add nothing.
// Exact for 1..3 objectives (sweep; O(n log n) for 2, O(n^2) for 3);
// above, a Monte-Carlo estimate with a fixed seed (reproducible) and
// `samples` draws in the box [ideal, reference].
#pragma once

#include <cstdint>
#include <vector>

#include "ridgeline/explore/pareto.h"

namespace ridgeline::explore {

struct Hypervolume {
  double value = 0;
  bool exact = true;
};

Hypervolume ComputeHypervolume(const PointSet& front,
                               const std::vector<double>& reference,
                               uint64_t samples = 200000,
                               uint64_t seed = 12345);

}  // namespace ridgeline::explore

namespace ridgeline::explore {

// The reference point a front's reported hypervolume uses: per objective,
// the front's worst value plus 10 % of its range (or of |value|, or 1, when
// the range is 0). It depends on the front only, so a merged front reports
// the same hypervolume as the single process.
std::vector<double> FrontReference(const PointSet& front);

// ComputeHypervolume at FrontReference, with Monte-Carlo samples scaled so
// samples x front size stays near 2e7 (1,000..200,000 samples).
Hypervolume FrontHypervolume(const PointSet& front);

}  // namespace ridgeline::explore
