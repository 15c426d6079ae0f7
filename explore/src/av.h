// std::string_view -> absl::string_view (Debian's abseil has its own
// string_view type, which StrCat takes). Internal to explore/.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ridgeline/engine/field_path.h"

namespace ridgeline::explore::internal {
// The error with its request field path as a payload (engine/field_path.h).
inline absl::Status AtField(absl::Status st, std::string_view path) {
  return engine::WithFieldPath(std::move(st), path);
}
inline absl::string_view Av(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}
// Splits on `sep`; "" gives one empty piece.
inline std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (;;) {
    const size_t p = s.find(sep);
    out.push_back(s.substr(0, p));
    if (p == std::string_view::npos) return out;
    s = s.substr(p + 1);
  }
}
}  // namespace ridgeline::explore::internal
