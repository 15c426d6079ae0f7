// Hypervolume (hypervolume.h).
#include "ridgeline/explore/hypervolume.h"

#include <algorithm>
#include <limits>
#include <cmath>
#include <random>

namespace ridgeline::explore {
namespace {

// Area dominated by 2-D points below the reference (rx, ry).
double Area2(std::vector<std::pair<double, double>> pts, double rx, double ry) {
  std::sort(pts.begin(), pts.end());
  double area = 0;
  double best_y = ry;
  for (const auto& [x, y] : pts) {
    if (x >= rx || y >= best_y) continue;
    // Each point's strip is from its x to the reference, at the height it
    // improves over the points to its left.
    area += (rx - x) * (best_y - y);
    best_y = y;
  }
  return area;
}

}  // namespace

Hypervolume ComputeHypervolume(const PointSet& front,
                               const std::vector<double>& ref,
                               uint64_t samples, uint64_t seed) {
  Hypervolume hv;
  const int d = front.dims;
  std::vector<size_t> inside;
  for (size_t i = 0; i < front.size(); ++i) {
    bool ok = true;
    for (int k = 0; k < d; ++k) ok = ok && front.row(i)[k] < ref[k];
    if (ok) inside.push_back(i);
  }
  if (inside.empty() || d == 0) return hv;
  if (d == 1) {
    double best = ref[0];
    for (size_t i : inside) best = std::min(best, front.row(i)[0]);
    hv.value = ref[0] - best;
    return hv;
  }
  if (d == 2) {
    std::vector<std::pair<double, double>> pts;
    for (size_t i : inside) pts.emplace_back(front.row(i)[0], front.row(i)[1]);
    hv.value = Area2(std::move(pts), ref[0], ref[1]);
    return hv;
  }
  if (d == 3) {
    // Slice along the third objective: between consecutive z levels the
    // dominated cross-section is the 2-D area of the points at or below.
    std::vector<size_t> by_z = inside;
    std::sort(by_z.begin(), by_z.end(), [&](size_t a, size_t b) {
      return front.row(a)[2] < front.row(b)[2];
    });
    std::vector<std::pair<double, double>> active;
    for (size_t k = 0; k < by_z.size(); ++k) {
      const double* r = front.row(by_z[k]);
      active.emplace_back(r[0], r[1]);
      const double z_next =
          k + 1 < by_z.size() ? front.row(by_z[k + 1])[2] : ref[2];
      if (z_next > r[2]) hv.value += Area2(active, ref[0], ref[1]) * (z_next - r[2]);
    }
    return hv;
  }
  // Monte-Carlo in the box [ideal, reference].
  hv.exact = false;
  std::vector<double> lo(d, std::numeric_limits<double>::infinity());
  for (size_t i : inside) {
    for (int k = 0; k < d; ++k) lo[k] = std::min(lo[k], front.row(i)[k]);
  }
  double box = 1;
  for (int k = 0; k < d; ++k) box *= ref[k] - lo[k];
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> x(d);
  uint64_t hits = 0;
  for (uint64_t s = 0; s < samples; ++s) {
    for (int k = 0; k < d; ++k) x[k] = lo[k] + u(rng) * (ref[k] - lo[k]);
    for (size_t i : inside) {
      const double* r = front.row(i);
      bool dom = true;
      for (int k = 0; k < d && dom; ++k) dom = r[k] <= x[k];
      if (dom) {
        ++hits;
        break;
      }
    }
  }
  hv.value = box * static_cast<double>(hits) / static_cast<double>(samples);
  return hv;
}

}  // namespace ridgeline::explore

namespace ridgeline::explore {

std::vector<double> FrontReference(const PointSet& front) {
  const int d = front.dims;
  std::vector<double> lo(d, std::numeric_limits<double>::infinity());
  std::vector<double> hi(d, -std::numeric_limits<double>::infinity());
  for (size_t i = 0; i < front.size(); ++i) {
    for (int k = 0; k < d; ++k) {
      lo[k] = std::min(lo[k], front.row(i)[k]);
      hi[k] = std::max(hi[k], front.row(i)[k]);
    }
  }
  std::vector<double> ref(d, 0);
  for (int k = 0; k < d; ++k) {
    double margin = 0.1 * (hi[k] - lo[k]);
    if (!(margin > 0)) margin = hi[k] != 0 ? 0.1 * std::abs(hi[k]) : 1;
    ref[k] = hi[k] + margin;
  }
  return ref;
}

Hypervolume FrontHypervolume(const PointSet& front) {
  if (front.size() == 0) return Hypervolume{};
  const uint64_t samples = std::clamp<uint64_t>(
      20'000'000 / front.size(), 1000, 200000);
  return ComputeHypervolume(front, FrontReference(front), samples);
}

}  // namespace ridgeline::explore
