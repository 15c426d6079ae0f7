// Exact Pareto fronts over 1..16 objectives, all minimised (callers negate
// the ones to maximise).
//
// Definitions (what "exact" means here):
// - a dominates b when a <= b in every objective and a < b in at least one;
// - the front of a set is every point that no point of the set dominates.
// Ties and duplicates: points with identical objective vectors do not
// dominate each other, so duplicates are either all on the front or all
// off it; ParetoFront drops nothing for being equal (FrontAccumulator
// folds equal vectors into one entry with a count, see there). Because
// dominance is transitive, front(A u B) = front(front(A) u front(B)): fronts of
// shards merge exactly (MergeFronts). NaN compares false with everything and
// would break transitivity, so the caller must keep points with a NaN objective
// out (explore/ marks them infeasible).
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

// How many members of one tie group (points with identical objective
// vectors) a front lists: the ones with the lowest ids. The rest are
// counted, not listed (see FrontAccumulator).
inline constexpr size_t kMaxListedTies = 16;

// Keeps a running front as points stream in: Add() in any order, then
// Front(). Memory is bounded by the number of distinct objective vectors
// on the front, not by the number of points on it:
// - Tie rule: points with identical objective vectors are one entry,
//   carrying their count (`ties`) and the `max_listed` lowest of their ids
//   (`ids`, ascending; `id` = ids[0], the representative). A grid where no
//   axis changes an objective is then a front of one entry, not of every
//   point (issue 26: a tied front of 9e6 points held 2.2 GB).
// - Shard merging stays exact under the rule: the lowest k ids of a union
//   are the lowest k of the union of each part's lowest k, and counts add;
//   merging entries with Add(const Entry&) gives the entries of the whole.
// - max_entries (0 = unlimited) caps the distinct vectors held: once a
//   compacted front has more, exceeded() is true and Add ignores points
//   (the caller refuses the request; see explore::Explore).
// Add drops a point at once when a point of the last compacted front
// (while it has at most 64 points) dominates it, and folds it into that
// point's entry when it equals it. Compact() (called by Add when the held
// set doubles) recomputes the front of what is held. Not thread-safe.
class FrontAccumulator {
 public:
  explicit FrontAccumulator(int dims, size_t max_entries = 0,
                            size_t max_listed = kMaxListedTies)
      : max_entries_(max_entries), max_listed_(max_listed) {
    held_.dims = dims;
  }
  struct Entry {
    uint64_t id = 0;  // the lowest id of the group (ids[0])
    std::vector<double> values;
    uint64_t ties = 1;          // points with these values
    std::vector<uint64_t> ids;  // the lowest min(ties, max_listed), ascending
  };
  // `id` is the caller's name for the point (e.g. its grid index).
  void Add(const double* v, uint64_t id);
  // Merges an entry of another accumulator (shards, threads).
  void Add(const Entry& e);
  // Reduces what is held to its front, one entry per distinct vector;
  // cheap when called with geometric spacing (Add does so itself).
  void Compact();
  // The front: one entry per distinct objective vector, ordered by id.
  std::vector<Entry> Front();
  // Entries held (the front after Compact, plus points added since).
  size_t held() const { return ids_.size(); }
  // A compaction found more than max_entries distinct front vectors.
  bool exceeded() const { return exceeded_; }

 private:
  void Push(const double* v, uint64_t ties, std::vector<uint64_t> ids);
  void MaybeCompact();
  PointSet held_;
  std::vector<uint64_t> ids_;                  // lowest id per entry
  std::vector<uint64_t> ties_;                 // points per entry
  std::vector<std::vector<uint64_t>> listed_;  // ids beyond ids_[i], sorted
  size_t max_entries_;
  size_t max_listed_;
  bool exceeded_ = false;
  size_t next_compact_ = 4096;
  // held_'s first front_prefix_ points are the front of the last Compact.
  size_t front_prefix_ = 0;
  static constexpr size_t kPrefilterMax = 64;
};

// The listed ids of `a` and `b` (each ascending), merged: the lowest
// `max_listed`, ascending.
std::vector<uint64_t> MergeListedIds(const std::vector<uint64_t>& a,
                                     const std::vector<uint64_t>& b,
                                     size_t max_listed);

}  // namespace ridgeline::explore
