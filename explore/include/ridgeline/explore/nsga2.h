// NSGA-II (Deb et al., IEEE TEC 2002) over the grid of a Space, for spaces
// too large to enumerate. Genes are axis digits. Seeded and reproducible:
// the same spec and seed give the same result (std::mt19937_64, integer
// draws, a fixed evaluation order; one thread).
//
// Constraint handling by violation size (Deb's constrained domination): a
// feasible point beats an infeasible one; of two infeasible points the one
// with the smaller Violation() wins; two feasible points compare by Pareto
// dominance. Selection: binary tournament on (rank, crowding distance);
// crossover: uniform per axis with probability 0.9 per pair; mutation: each
// gene with probability 1/axes moves by a random step of up to a fifth of
// its radix (at least 1), clamped. Evaluations are cached by grid index.
// Hypervolume per generation: of the feasible first front, at a reference
// fixed from the first generation's feasible points (their worst values
// plus 10 % of the range); exact for 2-3 objectives, Monte-Carlo with a
// fixed seed above (hypervolume.h).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "ridgeline/explore/explore.h"

namespace ridgeline::explore {

struct Nsga2Options {
  int population = 64;   // 4..4096, even
  int generations = 50;  // 1..10000
  uint64_t seed = 1;
};

struct Nsga2Generation {
  int generation = 0;
  uint64_t evaluations = 0;  // distinct points evaluated so far
  size_t front_size = 0;     // feasible non-dominated points in population
  double hypervolume = 0;
  bool hypervolume_exact = true;
};

// Memory per distinct point evaluated (the run caches every one: a hash
// node with its genes, <= 16 axes x 8 B, and objectives, <= 6 x 8 B, each
// on the heap), rounded up. A run evaluates at most
// population x (generations + 1) points.
inline constexpr double kBytesPerNsga2Evaluation = 384;

struct Nsga2Result {
  // Feasible non-dominated points found, by index, under the tie rule
  // (pareto.h: a group of equal vectors lists its kMaxListedTies lowest).
  std::vector<PointRow> front;
  uint64_t front_size = 0;  // points on that front, every tie counted
  std::vector<Nsga2Generation> generations;
  uint64_t evaluations = 0;  // distinct points evaluated
  uint64_t feasible = 0;     // of those, the feasible ones
  double seconds = 0;        // wall time of the search
};

// Called after each generation (0 = the initial population) with its
// figures and `front_so_far`: the front of every feasible point evaluated
// so far, by index, which is the result's front if the run stopped there
// (the last call's is the result's). Returns false to stop early.
using Nsga2Callback = std::function<bool(
    const Nsga2Generation&, const std::vector<PointRow>& front_so_far)>;

// spec.shard, resume_from and keep_all are ignored. Stopped by
// `on_generation` (optional): CANCELLED.
absl::StatusOr<Nsga2Result> RunNsga2(const ExploreSpec& spec,
                                     const Nsga2Options& options,
                                     const Nsga2Callback& on_generation = {});

}  // namespace ridgeline::explore
