#include "serving_flags.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ridgeline::cli {

std::optional<v1::TokenLengths> ParseLengths(const std::string& text) {
  v1::TokenLengths out;
  if (text.find(':') != std::string::npos) {
    for (absl::string_view item : absl::StrSplit(text, ',')) {
      std::vector<std::string> vw = absl::StrSplit(item, ':');
      int64_t v;
      double w;
      if (vw.size() != 2 || !absl::SimpleAtoi(vw[0], &v) ||
          !absl::SimpleAtod(vw[1], &w)) {
        return std::nullopt;
      }
      out.mutable_histogram()->add_values(v);
      out.mutable_histogram()->add_weights(w);
    }
    return out;
  }
  if (size_t dots = text.find(".."); dots != std::string::npos) {
    int64_t lo, hi;
    if (!absl::SimpleAtoi(text.substr(0, dots), &lo) ||
        !absl::SimpleAtoi(text.substr(dots + 2), &hi)) {
      return std::nullopt;
    }
    out.mutable_uniform()->set_min(lo);
    out.mutable_uniform()->set_max(hi);
    return out;
  }
  int64_t v;
  if (!absl::SimpleAtoi(text, &v)) return std::nullopt;
  out.set_fixed(v);
  return out;
}

std::optional<v1::Formats> ParseFormatSet(const std::string& text) {
  std::vector<std::string> parts = absl::StrSplit(text, '/');
  if (parts.size() > 3 || parts[0].empty()) return std::nullopt;
  v1::Formats f;
  f.set_weights(parts[0]);
  f.set_activations(parts.size() > 1 ? parts[1] : parts[0]);
  f.set_kv_cache(parts.size() > 2 ? parts[2] : f.activations());
  return f;
}

}  // namespace ridgeline::cli
