// Exact Pareto fronts (see pareto.h for the definitions and algorithms).
#include "ridgeline/explore/pareto.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <utility>

namespace ridgeline::explore {
namespace {

// Lexicographic order of rows; every dominator precedes what it dominates.
bool LexLess(const double* a, const double* b, int d) {
  for (int k = 0; k < d; ++k) {
    if (a[k] < b[k]) return true;
    if (b[k] < a[k]) return false;
  }
  return false;
}

std::vector<size_t> LexOrder(const PointSet& p) {
  std::vector<size_t> order(p.size());
  std::iota(order.begin(), order.end(), size_t{0});
  const int d = p.dims;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return LexLess(p.row(a), p.row(b), d);
  });
  return order;
}

std::vector<size_t> Front1(const PointSet& p) {
  double best = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < p.size(); ++i) best = std::min(best, p.row(i)[0]);
  std::vector<size_t> out;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p.row(i)[0] == best) out.push_back(i);
  }
  return out;
}

// In lexicographic order every earlier q has q0 <= p0, so p is dominated
// iff some earlier q != p has q1 <= p1: track the least q1 seen and the q0
// of its first (lexicographically least) holder.
std::vector<size_t> Front2(const PointSet& p) {
  std::vector<size_t> out;
  const std::vector<size_t> order = LexOrder(p);
  double best1 = std::numeric_limits<double>::infinity();
  double best0 = std::numeric_limits<double>::infinity();
  for (size_t i : order) {
    const double* r = p.row(i);
    const bool dominated = r[1] > best1 || (r[1] == best1 && best0 < r[0]);
    if (dominated) continue;
    out.push_back(i);
    if (r[1] < best1) {
      best1 = r[1];
      best0 = r[0];
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Lexicographic order again; the staircase holds the non-dominated (q1, q2)
// pairs of the front so far (q1 ascending, q2 strictly descending), each
// with the least q0 that reached it.
std::vector<size_t> Front3(const PointSet& p) {
  std::vector<size_t> out;
  const std::vector<size_t> order = LexOrder(p);
  struct Step {
    double q2, q0;
  };
  std::map<double, Step> stair;  // q1 -> (q2, q0)
  for (size_t i : order) {
    const double* r = p.row(i);
    auto it = stair.upper_bound(r[1]);  // first q1 > p1
    bool dominated = false;
    if (it != stair.begin()) {
      const auto prev = std::prev(it);  // largest q1 <= p1: least q2 there
      const Step& s = prev->second;
      if (s.q2 < r[2]) {
        dominated = true;
      } else if (s.q2 == r[2]) {
        // Equal q2: dominated unless the holder equals p in all three.
        dominated = prev->first < r[1] || s.q0 < r[0];
      }
    }
    if (dominated) continue;
    out.push_back(i);
    // Insert (p1, p2) unless that exact pair is already held, then drop the
    // pairs it dominates in 2-D (q1 >= p1 and q2 >= p2, not equal).
    auto [pos, inserted] = stair.try_emplace(r[1], Step{r[2], r[0]});
    if (!inserted) {
      if (pos->second.q2 == r[2]) continue;  // p duplicates the holder
      pos->second = Step{r[2], r[0]};        // same q1, lower q2
    }
    auto next = std::next(pos);
    while (next != stair.end() && next->second.q2 >= r[2]) {
      next = stair.erase(next);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<size_t> FrontSfs(const PointSet& p) {
  const int d = p.dims;
  const size_t n = p.size();
  // Range-normalised sum: monotone in every objective (positive scales,
  // rounding is monotone), so a dominator's key is <= its victim's; equal
  // keys fall back to lexicographic order, which dominators also precede.
  std::vector<double> lo(d, std::numeric_limits<double>::infinity());
  std::vector<double> hi(d, -std::numeric_limits<double>::infinity());
  for (size_t i = 0; i < n; ++i) {
    for (int k = 0; k < d; ++k) {
      lo[k] = std::min(lo[k], p.row(i)[k]);
      hi[k] = std::max(hi[k], p.row(i)[k]);
    }
  }
  std::vector<double> scale(d, 1);
  for (int k = 0; k < d; ++k) {
    const double range = hi[k] - lo[k];
    scale[k] = range > 0 && range < std::numeric_limits<double>::infinity()
                   ? 1 / range
                   : 1;
  }
  std::vector<double> key(n, 0);
  for (size_t i = 0; i < n; ++i) {
    double s = 0;
    for (int k = 0; k < d; ++k) s += (p.row(i)[k] - lo[k]) * scale[k];
    key[i] = s;
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (key[a] != key[b]) return key[a] < key[b];
    if (LexLess(p.row(a), p.row(b), d)) return true;
    if (LexLess(p.row(b), p.row(a), d)) return false;
    return a < b;
  });
  // Front rows copied contiguously for the inner loop.
  std::vector<double> front;
  std::vector<size_t> out;
  for (size_t i : order) {
    const double* r = p.row(i);
    const size_t m = out.size();
    bool dominated = false;
    for (size_t j = 0; j < m; ++j) {
      if (Dominates(&front[j * d], r, d)) {
        dominated = true;
        // Move the dominator to the front of the check: the next points in
        // key order are often dominated by the same one.
        if (j > 0) {
          std::swap_ranges(&front[j * d], &front[j * d] + d, &front[0]);
          std::swap(out[j], out[0]);
        }
        break;
      }
    }
    if (dominated) continue;
    front.insert(front.end(), r, r + d);
    out.push_back(i);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

bool Dominates(const double* a, const double* b, int dims) {
  bool strict = false;
  for (int k = 0; k < dims; ++k) {
    if (a[k] > b[k]) return false;
    if (a[k] < b[k]) strict = true;
  }
  return strict;
}

std::vector<size_t> ParetoFront(const PointSet& points) {
  if (points.size() == 0) return {};
  switch (points.dims) {
    case 1:
      return Front1(points);
    case 2:
      return Front2(points);
    case 3:
      return Front3(points);
    default:
      return FrontSfs(points);
  }
}

std::vector<size_t> ParetoFrontBruteForce(const PointSet& points) {
  std::vector<size_t> out;
  const size_t n = points.size();
  for (size_t i = 0; i < n; ++i) {
    bool dominated = false;
    for (size_t j = 0; j < n && !dominated; ++j) {
      dominated = Dominates(points.row(j), points.row(i), points.dims);
    }
    if (!dominated) out.push_back(i);
  }
  return out;
}

std::vector<uint64_t> MergeListedIds(const std::vector<uint64_t>& a,
                                     const std::vector<uint64_t>& b,
                                     size_t max_listed) {
  std::vector<uint64_t> out;
  out.reserve(std::min(a.size() + b.size(), max_listed));
  size_t i = 0, j = 0;
  while (out.size() < max_listed && (i < a.size() || j < b.size())) {
    uint64_t next;
    if (j == b.size() || (i < a.size() && a[i] <= b[j])) {
      next = a[i++];
    } else {
      next = b[j++];
    }
    if (out.empty() || out.back() != next) out.push_back(next);
  }
  return out;
}

void FrontAccumulator::Push(const double* v, uint64_t ties,
                            std::vector<uint64_t> ids) {
  held_.Add(v);
  ids_.push_back(ids.front());
  ties_.push_back(ties);
  ids.erase(ids.begin());
  listed_.push_back(std::move(ids));
}

void FrontAccumulator::MaybeCompact() {
  if (ids_.size() >= next_compact_) {
    Compact();
    next_compact_ = std::max<size_t>(4096, 2 * ids_.size());
  }
}

void FrontAccumulator::Add(const double* v, uint64_t id) {
  if (exceeded_) return;
  // A point dominated by one of the last compaction's front can never be
  // on the front (transitivity): drop it now; one equal to such a point
  // joins its entry. Checked only while that front is small, where it
  // settles most points for a few comparisons.
  const int d = held_.dims;
  if (front_prefix_ <= kPrefilterMax) {
    for (size_t i = 0; i < front_prefix_; ++i) {
      const double* r = held_.row(i);
      if (std::equal(r, r + d, v)) {
        ++ties_[i];
        if (id < ids_[i]) std::swap(id, ids_[i]);
        std::vector<uint64_t>& l = listed_[i];
        if (l.size() + 1 < max_listed_ || (!l.empty() && id < l.back())) {
          auto at = std::lower_bound(l.begin(), l.end(), id);
          if (at == l.end() || *at != id) l.insert(at, id);
          if (l.size() + 1 > max_listed_) l.pop_back();
        }
        return;
      }
      if (Dominates(r, v, d)) return;
    }
  }
  Push(v, 1, {id});
  MaybeCompact();
}

void FrontAccumulator::Add(const Entry& e) {
  if (exceeded_ || e.ids.empty()) return;
  Push(e.values.data(), e.ties,
       std::vector<uint64_t>(
           e.ids.begin(), e.ids.begin() + static_cast<std::ptrdiff_t>(std::min(
                                              e.ids.size(), max_listed_))));
  MaybeCompact();
}

void FrontAccumulator::Compact() {
  const int d = held_.dims;
  std::vector<size_t> keep = ParetoFront(held_);
  // Equal vectors are all on the front or all off it: fold each group of
  // the front into one entry (lexicographic order puts a group together).
  std::sort(keep.begin(), keep.end(), [&](size_t a, size_t b) {
    if (LexLess(held_.row(a), held_.row(b), d)) return true;
    if (LexLess(held_.row(b), held_.row(a), d)) return false;
    return ids_[a] < ids_[b];
  });
  PointSet kept;
  kept.dims = d;
  std::vector<uint64_t> ids, ties;
  std::vector<std::vector<uint64_t>> listed;
  for (size_t n = 0; n < keep.size();) {
    const size_t first = keep[n];
    const double* r = held_.row(first);
    uint64_t count = 0;
    std::vector<uint64_t> members;
    size_t m = n;
    for (; m < keep.size() && std::equal(r, r + d, held_.row(keep[m])); ++m) {
      const size_t k = keep[m];
      count += ties_[k];
      std::vector<uint64_t> own;
      own.reserve(1 + listed_[k].size());
      own.push_back(ids_[k]);
      own.insert(own.end(), listed_[k].begin(), listed_[k].end());
      members = MergeListedIds(members, own, max_listed_);
    }
    kept.Add(r);
    ids.push_back(members.front());
    ties.push_back(count);
    members.erase(members.begin());
    listed.push_back(std::move(members));
    n = m;
  }
  held_ = std::move(kept);
  ids_ = std::move(ids);
  ties_ = std::move(ties);
  listed_ = std::move(listed);
  front_prefix_ = ids_.size();
  if (max_entries_ > 0 && ids_.size() > max_entries_) exceeded_ = true;
}

std::vector<FrontAccumulator::Entry> FrontAccumulator::Front() {
  Compact();
  std::vector<Entry> out;
  out.reserve(ids_.size());
  for (size_t i = 0; i < ids_.size(); ++i) {
    Entry e;
    e.id = ids_[i];
    e.values.assign(held_.row(i), held_.row(i) + held_.dims);
    e.ties = ties_[i];
    e.ids.reserve(1 + listed_[i].size());
    e.ids.push_back(ids_[i]);
    e.ids.insert(e.ids.end(), listed_[i].begin(), listed_[i].end());
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(),
            [](const Entry& a, const Entry& b) { return a.id < b.id; });
  return out;
}

}  // namespace ridgeline::explore
