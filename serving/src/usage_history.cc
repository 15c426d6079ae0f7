#include "ridgeline/serving/usage_history.h"

#include <algorithm>
#include <cmath>

namespace ridgeline::serving {

void UsageHistory::Merge() {
  const size_t n = slots_.size();
  for (size_t k = 0; k < n / 2; ++k)
    slots_[k] = slots_[2 * k] + slots_[2 * k + 1];
  if (n % 2 == 1) slots_[n / 2] = slots_[n - 1];
  slots_.resize((n + 1) / 2);
  width_ *= 2;
}

void UsageHistory::Add(double from, double to, double value) {
  if (!(to > from) || value == 0) return;
  if (width_ == 0) {
    origin_ = from;
    // A first guess that doubles as needed: a slot per millisecond.
    width_ = 1e-3;
  }
  while (to - origin_ > kSlots * width_) Merge();
  end_ = to;
  const double a = (from - origin_) / width_, b = (to - origin_) / width_;
  const auto last =
      static_cast<size_t>(std::min<double>(std::ceil(b), kSlots) - 1);
  if (slots_.size() <= last) slots_.resize(last + 1, 0);
  for (auto k = static_cast<size_t>(std::max(0.0, std::floor(a))); k <= last;
       ++k) {
    const double lo = std::max(a, static_cast<double>(k));
    const double hi = std::min(b, static_cast<double>(k + 1));
    if (hi > lo) slots_[k] += value * (hi - lo) * width_;
  }
}

double UsageHistory::Integral(double from, double to) const {
  if (width_ == 0 || !(to > from)) return 0;
  const double a = std::max(0.0, (from - origin_) / width_);
  const double b = (to - origin_) / width_;
  const double end = (end_ - origin_) / width_;
  double sum = 0;
  for (auto k = static_cast<size_t>(std::floor(a));
       k < slots_.size() && static_cast<double>(k) < b; ++k) {
    // The last slot holds time only up to the last Add.
    const double top = std::min(static_cast<double>(k + 1), end);
    const double lo = std::max(a, static_cast<double>(k));
    const double hi = std::min(b, top);
    if (hi > lo) sum += slots_[k] * (hi - lo) / (top - static_cast<double>(k));
  }
  return sum;
}

}  // namespace ridgeline::serving
