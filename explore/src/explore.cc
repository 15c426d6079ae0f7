// Exhaustive exploration (explore.h): shard points evaluated in chunks by
// worker threads, each keeping the front of its feasible points; the
// fronts merge exactly (pareto.h), so the result does not depend on the
// number of threads or the chunking.
#include "ridgeline/explore/explore.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <limits>
#include <mutex>
#include <numeric>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "av.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/explore/evaluate.h"
#include "ridgeline/explore/hypervolume.h"
#include "ridgeline/explore/pareto.h"

namespace ridgeline::explore {

using internal::Av;
namespace {

constexpr uint64_t kChunk = 4096;

std::string PointName(const Space& space, uint64_t index) {
  const MixedRadix grid = space.Grid();
  std::vector<uint64_t> d(grid.size());
  grid.Decode(index, d.data());
  std::string out = absl::StrCat("point ", index, " (");
  for (size_t k = 0; k < d.size(); ++k) {
    absl::StrAppend(&out, k ? ", " : "", space.axes[k].name, "=",
                    space.axes[k].Label(d[k]));
  }
  return out + ")";
}

// RESOURCE_EXHAUSTED: the front holds more distinct objective vectors than
// spec.max_front_points.
absl::Status FrontTooLarge(const ExploreSpec& spec, uint64_t evaluated) {
  return absl::ResourceExhaustedError(absl::StrCat(
      "explore: the Pareto front has more than ", spec.max_front_points,
      " distinct objective vectors (after ", evaluated,
      " points evaluated); ask for fewer or coarser axes, fewer objectives, "
      "or a constraint"));
}

// The rows of `front`: each entry's listed members (to_row(entry, index)),
// by index; `unlisted` (may be null) adds the members not listed.
template <typename ToRow>
std::vector<PointRow> FrontRows(
    const std::vector<FrontAccumulator::Entry>& front, const ToRow& to_row,
    uint64_t* unlisted) {
  std::vector<PointRow> rows;
  for (const auto& e : front) {
    for (uint64_t id : e.ids) rows.push_back(to_row(e, id));
    if (unlisted != nullptr) *unlisted += e.ties - e.ids.size();
  }
  std::sort(rows.begin(), rows.end(), [](const PointRow& a, const PointRow& b) {
    return a.index < b.index;
  });
  return rows;
}

}  // namespace

absl::Status ValidateSpec(const ExploreSpec& spec) {
  const size_t n = spec.objectives.size();
  if (n < static_cast<size_t>(kMinObjectives) ||
      n > static_cast<size_t>(kMaxObjectives)) {
    return internal::AtField(absl::InvalidArgumentError(absl::StrCat(
        "objectives: want ", kMinObjectives, "..", kMaxObjectives,
        " objectives, got ", n)), "objectives");
  }
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (spec.objectives[i].metric == spec.objectives[j].metric) {
        return internal::AtField(
            absl::InvalidArgumentError(absl::StrCat(
                "objectives[", i, "]: ", spec.objectives[i].name,
                " given twice")),
            absl::StrCat("objectives[", i, "]"));
      }
    }
  }
  if (spec.shard.count < 1 || spec.shard.count > kMaxShards ||
      spec.shard.index >= spec.shard.count) {
    return internal::AtField(absl::InvalidArgumentError(absl::StrCat(
        "shard: want i/n with 0 <= i < n <= ", kMaxShards, ", got ",
        spec.shard.index, "/", spec.shard.count)), "shard");
  }
  return ValidateSpace(spec.space);
}

void MarkFront(const std::vector<Objective>& objectives,
               std::vector<PointRow>* rows) {
  PointSet set;
  set.dims = static_cast<int>(objectives.size());
  std::vector<size_t> where;
  std::vector<double> v(objectives.size());
  for (size_t i = 0; i < rows->size(); ++i) {
    PointRow& r = (*rows)[i];
    r.pareto = false;
    if (!r.feasible) continue;
    for (size_t k = 0; k < objectives.size(); ++k) {
      v[k] = objectives[k].maximize ? -r.objectives[k] : r.objectives[k];
    }
    set.Add(v.data());
    where.push_back(i);
  }
  for (size_t i : ParetoFront(set)) (*rows)[where[i]].pareto = true;
}

std::vector<PointRow> MergeShardFronts(
    const std::vector<Objective>& objectives,
    const std::vector<std::vector<PointRow>>& shards, uint64_t* unlisted) {
  const int dims = static_cast<int>(objectives.size());
  auto minimised = [&](const PointRow& r) {
    std::vector<double> v(dims);
    for (int k = 0; k < dims; ++k) {
      v[k] = objectives[k].maximize ? -r.objectives[k] : r.objectives[k];
    }
    return v;
  };
  FrontAccumulator all(dims);
  for (const std::vector<PointRow>& rows : shards) {
    // A shard's listed members of one group share its vector and count:
    // one entry per group (its rows arrive by index, the group's ascending).
    std::vector<std::pair<std::vector<double>, const PointRow*>> group;
    for (const PointRow& r : rows) {
      if (!r.feasible || !r.pareto) continue;
      group.emplace_back(minimised(r), &r);
    }
    std::stable_sort(
        group.begin(), group.end(),
        [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < group.size();) {
      FrontAccumulator::Entry e;
      e.values = group[i].first;
      e.ties = group[i].second->ties;
      size_t j = i;
      for (; j < group.size() && group[j].first == e.values; ++j) {
        e.ids.push_back(group[j].second->index);
      }
      std::sort(e.ids.begin(), e.ids.end());
      e.id = e.ids.front();
      all.Add(e);
      i = j;
    }
  }
  const std::vector<FrontAccumulator::Entry> front = all.Front();
  auto to_row = [&](const FrontAccumulator::Entry& e, uint64_t id) {
    PointRow r;
    r.index = id;
    r.ties = e.ties;
    r.objectives.resize(dims);
    for (int k = 0; k < dims; ++k) {
      r.objectives[k] = objectives[k].maximize ? -e.values[k] : e.values[k];
    }
    r.feasible = r.fits = r.pareto = true;
    return r;
  };
  if (unlisted != nullptr) *unlisted = 0;
  return FrontRows(front, to_row, unlisted);
}

absl::StatusOr<ExploreResult> Explore(const ExploreSpec& spec,
                                      const ExploreCallbacks& cb,
                                      int threads) {
  RETURN_IF_ERROR(ValidateSpec(spec));
  const auto start = std::chrono::steady_clock::now();
  ExploreResult res;
  const MixedRadix grid = spec.space.Grid();
  res.total_points = grid.total();
  // The shard's points from resume_from on, as positions 0..shard_points-1:
  // position p is grid index first + p * count.
  const Shard sh = spec.shard;
  uint64_t first = sh.index;
  if (spec.resume_from > first) {
    first += (spec.resume_from - first + sh.count - 1) / sh.count * sh.count;
  }
  res.shard_points =
      first < res.total_points ? (res.total_points - 1 - first) / sh.count + 1
                               : 0;
  const uint64_t chunks = (res.shard_points + kChunk - 1) / kChunk;
  if (threads <= 0) {
    threads = static_cast<int>(
        std::clamp<unsigned>(std::thread::hardware_concurrency(), 1, 8));
  }
  threads = static_cast<int>(
      std::min<uint64_t>(static_cast<uint64_t>(threads), std::max<uint64_t>(chunks, 1)));

  const int dims = static_cast<int>(spec.objectives.size());
  std::vector<std::vector<PointRow>> chunk_rows(spec.keep_all ? chunks : 0);
  std::vector<FrontAccumulator> fronts(
      threads, FrontAccumulator(dims, spec.max_front_points));
  std::vector<uint64_t> feasible(threads, 0);
  std::atomic<uint64_t> next_chunk{0}, done{0};
  std::atomic<bool> stop{false};
  std::mutex err_mu;
  absl::Status error;
  // Provisional fronts: each worker publishes its front after each chunk.
  const bool provisional = cb.progress && cb.provisional_front;
  std::mutex pub_mu;
  std::vector<std::vector<FrontAccumulator::Entry>> published(threads);
  // A worker whose front is too large to publish cheaply (and to send).
  std::vector<char> oversized(threads, 0);
  uint64_t pub_version = 0, pub_points = 0;  // points the published fronts cover

  std::vector<SpaceEvaluator> evaluators;
  for (int t = 0; t < threads; ++t) {
    ASSIGN_OR_RETURN(SpaceEvaluator e, SpaceEvaluator::Create(spec.space));
    evaluators.push_back(std::move(e));
  }

  auto work = [&](int t) {
    SpaceEvaluator& ev = evaluators[t];
    PointOutcome out;
    std::vector<double> v(dims);
    // Unsharded runs visit consecutive indices: step the digits like an
    // odometer instead of dividing the index by every radix.
    std::vector<uint64_t> digits(grid.size());
    for (;;) {
      const uint64_t c = next_chunk.fetch_add(1);
      if (c >= chunks || stop.load(std::memory_order_relaxed)) return;
      const uint64_t p_end = std::min(res.shard_points, (c + 1) * kChunk);
      std::vector<PointRow>* rows = spec.keep_all ? &chunk_rows[c] : nullptr;
      if (rows != nullptr) rows->reserve(p_end - c * kChunk);
      if (sh.count == 1) grid.Decode(first + c * kChunk, digits.data());
      for (uint64_t p = c * kChunk; p < p_end; ++p) {
        // A cancelled run stops within 64 points, not a whole chunk.
        if ((p & 63) == 0 && stop.load(std::memory_order_relaxed)) return;
        const uint64_t index = first + p * sh.count;
        absl::Status st;
        if (sh.count == 1) {
          if (p > c * kChunk) {
            for (size_t k = digits.size(); k-- > 0;) {
              if (++digits[k] < grid.radix(k)) break;
              digits[k] = 0;
            }
          }
          st = ev.EvaluateDigits(digits.data(), &out);
        } else {
          st = ev.Evaluate(index, &out);
        }
        if (!st.ok()) {
          std::lock_guard<std::mutex> lock(err_mu);
          if (error.ok()) {
            error = absl::Status(
                st.code(), absl::StrCat(PointName(spec.space, index), ": ",
                                        st.message()));
          }
          stop = true;
          return;
        }
        const double viol = Violation(out.metrics, out.fits, out.memory_overflow,
                                      spec.objectives, spec.constraints);
        MinimisedObjectives(out.metrics, spec.objectives, v.data());
        const bool ok = viol == 0;
        if (ok) {
          ++feasible[t];
          fronts[t].Add(v.data(), index);
        }
        if (rows != nullptr) {
          PointRow r;
          r.index = index;
          r.objectives.resize(dims);
          for (int k = 0; k < dims; ++k) {
            r.objectives[k] = out.metrics[static_cast<int>(spec.objectives[k].metric)];
          }
          r.feasible = ok;
          r.fits = out.fits;
          r.spilled = out.spilled;
          r.violation = viol;
          rows->push_back(std::move(r));
        }
      }
      if (fronts[t].exceeded()) {
        std::lock_guard<std::mutex> lock(err_mu);
        if (error.ok()) error = FrontTooLarge(spec, done.load());
        stop = true;
        return;
      }
      if (provisional) {
        // Compacting a large front after every chunk would cost O(front)
        // a chunk; such a front is not sent anyway.
        const bool small = fronts[t].held() <= cb.provisional_max + kChunk;
        std::vector<FrontAccumulator::Entry> f;
        if (small) f = fronts[t].Front();
        std::lock_guard<std::mutex> lock(pub_mu);
        published[t] = std::move(f);
        oversized[t] = !small;
        ++pub_version;
        pub_points += p_end - c * kChunk;
      }
      done.fetch_add(p_end - c * kChunk);
    }
  };
  auto to_row = [&](const FrontAccumulator::Entry& e, uint64_t id) {
    PointRow r;
    r.index = id;
    r.ties = e.ties;
    r.objectives.resize(dims);
    for (int k = 0; k < dims; ++k) {
      r.objectives[k] =
          spec.objectives[k].maximize ? -e.values[k] : e.values[k];
    }
    r.feasible = r.fits = r.pareto = true;
    return r;
  };
  // A front keeps objective values only: whether a front point spilled is
  // asked again of the engine (a front is small; each point costs about a
  // microsecond). `ev` is the calling thread's own.
  auto mark_spilled = [&](SpaceEvaluator& ev,
                          std::vector<PointRow>* rows) -> absl::Status {
    PointOutcome out;
    for (PointRow& r : *rows) {
      RETURN_IF_ERROR(ev.Evaluate(r.index, &out));
      r.spilled = out.spilled;
    }
    return absl::OkStatus();
  };
  // The front of what the workers published; false when it is unchanged
  // or too large to send. The reporting thread evaluates with its own.
  std::unique_ptr<SpaceEvaluator> reporter;
  if (provisional) {
    ASSIGN_OR_RETURN(SpaceEvaluator e, SpaceEvaluator::Create(spec.space));
    reporter = std::make_unique<SpaceEvaluator>(std::move(e));
  }
  uint64_t seen_version = 0;
  std::vector<uint64_t> last_sent;
  auto provisional_rows = [&](std::vector<PointRow>* rows, uint64_t* covered) {
    FrontAccumulator merged(dims);
    {
      std::lock_guard<std::mutex> lock(pub_mu);
      if (pub_version == seen_version) return false;
      seen_version = pub_version;
      *covered = pub_points;
      for (int t = 0; t < threads; ++t) {
        if (oversized[t]) return false;
        for (const auto& e : published[t]) merged.Add(e);
      }
    }
    std::vector<PointRow> listed = FrontRows(merged.Front(), to_row, nullptr);
    std::vector<uint64_t> ids;
    for (const auto& r : listed) ids.push_back(r.index);
    if (ids == last_sent || listed.size() > cb.provisional_max) return false;
    last_sent = std::move(ids);
    for (auto& r : listed) rows->push_back(std::move(r));
    return mark_spilled(*reporter, rows).ok();
  };

  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
  if (!cb.progress) {
    work(0);
  } else {
    // The caller's thread reports progress; with one thread it also works
    // (one chunk at a time between reports).
    std::thread own;
    if (threads >= 1) own = std::thread(work, 0);
    uint64_t reported = 0;
    for (;;) {
      const uint64_t d = done.load();
      const bool finished = d >= res.shard_points || stop.load();
      if (finished || d - reported >= cb.progress_every) {
        reported = d;
        if (!cb.progress(d, res.shard_points)) stop = true;
        std::vector<PointRow> rows;
        uint64_t covered = 0;
        if (provisional && !finished && !stop.load() &&
            provisional_rows(&rows, &covered) &&
            !cb.provisional_front(covered, rows)) {
          stop = true;
        }
      }
      if (cb.should_stop && cb.should_stop()) stop = true;
      if (finished || stop.load()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    own.join();
  }
  for (std::thread& th : pool) th.join();
  if (!error.ok()) return error;
  res.evaluated = done.load();
  if (stop.load() || res.evaluated < res.shard_points) {
    return absl::CancelledError(absl::StrCat(
        "explore stopped after ", res.evaluated, " of ", res.shard_points,
        " points: cancelled or past the deadline"));
  }

  // Merge the per-thread fronts (exact: front of the union of fronts, and
  // the tie rule merges exactly too).
  FrontAccumulator all(dims, spec.max_front_points);
  for (int t = 0; t < threads; ++t) {
    res.feasible += feasible[t];
    for (const auto& e : fronts[t].Front()) all.Add(e);
    fronts[t] = FrontAccumulator(dims);  // frees it
  }
  const std::vector<FrontAccumulator::Entry> front = all.Front();
  if (all.exceeded()) return FrontTooLarge(spec, res.evaluated);
  PointSet fset;
  fset.dims = dims;
  for (const auto& e : front) {
    fset.Add(e.values.data());
    res.front_size += e.ties;
  }
  if (spec.keep_all) {
    for (auto& rows : chunk_rows) {
      for (PointRow& r : rows) res.rows.push_back(std::move(r));
      std::vector<PointRow>().swap(rows);
    }
    // Every point is a row: mark each feasible one whose vector is on the
    // front (ties included), found by binary search in the sorted front.
    std::vector<size_t> by_value(front.size());
    std::iota(by_value.begin(), by_value.end(), size_t{0});
    auto less = [dims](const std::vector<double>& a, const double* b) {
      return std::lexicographical_compare(a.begin(), a.end(), b, b + dims);
    };
    std::sort(by_value.begin(), by_value.end(), [&](size_t a, size_t b) {
      return less(front[a].values, front[b].values.data());
    });
    std::vector<double> v(dims);
    for (PointRow& r : res.rows) {
      if (!r.feasible) continue;
      for (int k = 0; k < dims; ++k) {
        v[k] = spec.objectives[k].maximize ? -r.objectives[k] : r.objectives[k];
      }
      auto at = std::lower_bound(
          by_value.begin(), by_value.end(), v.data(),
          [&](size_t a, const double* b) { return less(front[a].values, b); });
      if (at != by_value.end() &&
          std::equal(v.begin(), v.end(), front[*at].values.begin())) {
        r.pareto = true;
        r.ties = front[*at].ties;
      }
    }
  } else {
    res.rows = FrontRows(front, to_row, &res.front_unlisted);
    RETURN_IF_ERROR(mark_spilled(evaluators[0], &res.rows));
  }
  const Hypervolume hv = FrontHypervolume(fset);
  res.hypervolume = hv.value;
  res.hypervolume_exact = hv.exact;
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                              start)
                    .count();
  return res;
}

}  // namespace ridgeline::explore
