// Range checks shared by ValidateHardware and ValidateScenario. Messages
// follow one form: "<path> must be <range>, got <value>".
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ridgeline/engine/field_path.h"

namespace ridgeline::engine::internal {

inline absl::string_view Av(std::string_view s) { return {s.data(), s.size()}; }

inline bool IsPositive(double value, bool allow_zero) {
  return std::isfinite(value) && (allow_zero ? value >= 0 : value > 0);
}

// `value` must be finite and > 0 (or >= 0 when `allow_zero`).
inline absl::Status CheckPositive(std::string_view path, double value,
                                  bool allow_zero = false) {
  if (IsPositive(value, allow_zero)) return absl::OkStatus();
  return WithFieldPath(
      absl::InvalidArgumentError(
          absl::StrFormat("%s must be finite and %s 0, got %g", Av(path),
                          allow_zero ? ">=" : ">", value)),
      path);
}

// CheckPositive for hot paths: `path()` (returning the field path) runs
// only when the check fails, so valid input builds no strings.
template <typename PathFn>
absl::Status CheckPositiveLazy(const PathFn& path, double value,
                               bool allow_zero = false) {
  if (IsPositive(value, allow_zero)) return absl::OkStatus();
  return CheckPositive(path(), value, allow_zero);
}

inline absl::Status CheckDoubleRange(std::string_view path, double value,
                                     double lo, double hi,
                                     bool lo_open = false) {
  const bool ok = std::isfinite(value) &&
                  (lo_open ? value > lo : value >= lo) && value <= hi;
  if (ok) return absl::OkStatus();
  return WithFieldPath(
      absl::InvalidArgumentError(absl::StrFormat("%s must be in %c%g, %g], got %g",
                                                 Av(path), lo_open ? '(' : '[',
                                                 lo, hi, value)),
      path);
}

inline absl::Status CheckIntRange(std::string_view path, int64_t value,
                                  int64_t lo, int64_t hi) {
  if (value >= lo && value <= hi) return absl::OkStatus();
  return WithFieldPath(absl::InvalidArgumentError(absl::StrCat(
                           Av(path), " must be in [", lo, ", ", hi, "], got ",
                           value)),
                       path);
}

}  // namespace ridgeline::engine::internal
