// Exact Pareto fronts over 1..16 objectives, all minimised (callers negate
// the ones to maximise).
//
// Definitions (what "exact" means here):
// - a dominates b when a <= b in every objective and a < b in at least one;
// - the front of a set is every point that no point of the set dominates.
// Ties and duplicates: points with identical objective vectors do not
// dominate each other, so duplicates are either all on the front or all
// off it; nothing is dropped for being equal. Because dominance is
// transitive, front(A u B) = front(front(A) u front(B)): fronts of shards
// merge exactly (MergeFronts).
// NaN compares false with everything and would break transitivity, so the
// caller must keep points with a NaN objective out (explore/ marks them
// infeasible).
//
// Algorithms: 1 objective: the minima; 2: sort + one sweep (skyline),
// O(n log n); 3: sort + a staircase of the last two objectives in an
// ordered map, O(n log n); 4 and more: Sort-Filter-Skyline (Chomicki et al.,
// ICDE 2003): points sorted by a key that every dominator precedes (sum of
// range-normalised objectives, then lexicographic), each checked only
// against the front found so far (a dominated point's dominator is earlier
// and, by transitivity, some front point dominates it), with the last
// dominator moved to the front of the check. O(n log n + n * |front| * d)
// worst case; dominated points usually fall at the first check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ridgeline::explore {

// Objective vectors stored row-major: point i is values[i*dims .. +dims).
struct PointSet {
  int dims = 0;
  std::vector<double> values;
  size_t size() const { return dims > 0 ? values.size() / dims : 0; }
  const double* row(size_t i) const { return values.data() + i * dims; }
  void Add(const double* v) { values.insert(values.end(), v, v + dims); }
};

// True when a dominates b (minimisation), see above.
bool Dominates(const double* a, const double* b, int dims);

// Indices (into `points`) of the front, ascending. Exact; no NaN allowed.
std::vector<size_t> ParetoFront(const PointSet& points);

// Reference O(n^2 d) front, for tests.
std::vector<size_t> ParetoFrontBruteForce(const PointSet& points);

// Keeps a running front as points stream in: Add() in any order, then
// Front(). Add drops a point at once when a point of the last compacted
// front (while it has at most 64 points) dominates it. Memory stays
// O(front) only when Compact() is called now and then (it recomputes the
// front of what is held). Not thread-safe.
class FrontAccumulator {
 public:
  explicit FrontAccumulator(int dims) { held_.dims = dims; }
  // `id` is the caller's name for the point (e.g. its grid index).
  void Add(const double* v, uint64_t id);
  // Reduces what is held to its front; cheap when called with geometric
  // spacing (Add does so itself when the held set doubles).
  void Compact();
  // The front: ids and vectors, ordered by id.
  struct Entry {
    uint64_t id;
    std::vector<double> values;
  };
  std::vector<Entry> Front();
  size_t held() const { return ids_.size(); }

 private:
  PointSet held_;
  std::vector<uint64_t> ids_;
  size_t next_compact_ = 4096;
  // held_'s first front_prefix_ points are the front of the last Compact.
  size_t front_prefix_ = 0;
  static constexpr size_t kPrefilterMax = 64;
};

}  // namespace ridgeline::explore
