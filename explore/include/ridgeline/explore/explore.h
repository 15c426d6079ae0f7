// Exhaustive exploration of a Space: every point of a shard evaluated,
// judged against the constraints, reduced to the exact joint Pareto front
// of the objectives over the feasible points.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ridgeline/explore/grid.h"
#include "ridgeline/explore/objectives.h"
#include "ridgeline/explore/space.h"

namespace ridgeline::explore {

struct ExploreSpec {
  Space space;
  std::vector<Objective> objectives;    // 2..6
  std::vector<Constraint> constraints;  // fits is always applied
  Shard shard;
  uint64_t resume_from = 0;  // first grid index to evaluate (resumable)
  bool keep_all = false;     // keep every point, not only the front
  // Distinct objective vectors the front may hold (per worker, and in all);
  // past it Explore stops with RESOURCE_EXHAUSTED. 0 = unlimited. Ties do
  // not count: see FrontAccumulator's tie rule (pareto.h).
  uint64_t max_front_points = 0;
};

// Checks objectives (2..6, no duplicates) and the space.
absl::Status ValidateSpec(const ExploreSpec& spec);

struct PointRow {
  uint64_t index = 0;               // grid index
  std::vector<double> objectives;   // natural values (not negated), per spec
  bool feasible = false;            // fits, constraints hold, all known
  bool fits = false;
  bool spilled = false;             // fits, with bytes off the device
  bool pareto = false;              // on the front of this run's points
  double violation = 0;
  // On the front: the points with this objective vector (1 = no tie). A
  // front lists at most kMaxListedTies of a group, the lowest indices.
  uint64_t ties = 1;
};

struct ExploreResult {
  uint64_t total_points = 0;   // of the whole grid
  uint64_t shard_points = 0;   // in this shard (from resume_from on)
  uint64_t evaluated = 0;
  uint64_t feasible = 0;
  // keep_all: every evaluated point; else the front only. By index.
  std::vector<PointRow> rows;
  size_t front_size = 0;  // points on the front, every tie counted
  // Front points not in `rows` (a tie group lists its kMaxListedTies lowest
  // indices; with keep_all every point is a row and this is 0).
  uint64_t front_unlisted = 0;
  double hypervolume = 0;      // of the front, see hypervolume.h
  bool hypervolume_exact = true;
  double seconds = 0;  // wall time of the run
};

// Memory a keep_all run holds per point: a PointRow (~64 B), its
// objectives on the heap (<= 6 x 8 B + the allocator's 16 B) and the
// moment both the chunk's and the result's copies exist; rounded up.
inline constexpr double kBytesPerKeptPoint = 256;

// Provisional fronts larger than this are not streamed (they would cost
// more to send than they tell).
inline constexpr size_t kProvisionalFrontMax = 4096;

struct ExploreCallbacks {
  // Called about every `progress_every` points (and at the end) with
  // (evaluated, shard_points). Return false to stop (cancel, deadline):
  // Explore then returns CANCELLED.
  std::function<bool(uint64_t, uint64_t)> progress;
  uint64_t progress_every = 65536;
  // Polled about every 20 ms when set (with progress): true stops the run
  // (CANCELLED) without waiting for the next progress report.
  std::function<bool()> should_stop;
  // Optional, with progress: the front of the feasible points evaluated so
  // far, by index (rows as in a front-only result), called just after a
  // progress report when it changed since the last call. Provisional: any
  // point not yet evaluated may dominate some of it (a grid has no order
  // in which a point is known to settle before the end), so it replaces
  // the previous one; the result's front is final. Skipped while the front
  // has more than `provisional_max` points. Return false to stop.
  // Arguments: the points the front covers (with one thread, the first
  // that many of the shard's points; with more, whole chunks of 4096 in
  // the order workers finished them), the rows.
  std::function<bool(uint64_t, const std::vector<PointRow>&)>
      provisional_front;
  size_t provisional_max = kProvisionalFrontMax;
};

// Evaluates with `threads` workers (0: one per core, at most 8); the
// result does not depend on the thread count.
absl::StatusOr<ExploreResult> Explore(const ExploreSpec& spec,
                                      const ExploreCallbacks& callbacks = {},
                                      int threads = 1);

// Recomputes `pareto` over the feasible rows (exact; for merging shard
// outputs: the front of the union of shard fronts is the global front).
// Every row whose vector is on the front is marked, ties included.
void MarkFront(const std::vector<Objective>& objectives,
               std::vector<PointRow>* rows);

// The front of several shards' fronts (rows as Explore returns them, each
// with its `ties`), under the tie rule: exactly the rows one run over the
// union would return (groups merged across shards: counts add, the lowest
// kMaxListedTies indices listed), by index. `unlisted` (may be null) gets
// the front points not listed.
std::vector<PointRow> MergeShardFronts(
    const std::vector<Objective>& objectives,
    const std::vector<std::vector<PointRow>>& shards, uint64_t* unlisted);

}  // namespace ridgeline::explore
