// A quantity over time (an offload tier's tokens), kept as its integral in
// at most kSlots equal slots from its first use: when time runs past the
// last slot, neighbouring slots merge and the width doubles, so memory is
// bounded whatever the run's length and each slot's integral is exact.
// Reading back spreads a slot's integral evenly over it (the last one up to
// the last Add's end), so a mean over an interval is exact to within a
// slot at each end (a slot is at most 2 / kSlots of the history's length).
// Thread-compatible.
#pragma once

#include <vector>

namespace ridgeline::serving {

class UsageHistory {
 public:
  static constexpr int kSlots = 512;

  // `value` held over [from, to); times only grow from call to call.
  void Add(double from, double to, double value);
  // The integral of the value over [from, to).
  double Integral(double from, double to) const;

 private:
  void Merge();  // pairs of slots into one, the width doubled

  double origin_ = 0;
  double width_ = 0;  // 0: nothing added yet
  double end_ = 0;    // the last Add's end
  std::vector<double> slots_;
};

}  // namespace ridgeline::serving
