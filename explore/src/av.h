// std::string_view -> absl::string_view (Debian's abseil has its own
// string_view type, which StrCat takes). Internal to explore/.
#pragma once

#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"

namespace ridgeline::explore::internal {
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
