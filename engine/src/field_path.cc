// Field paths as Status payloads (see field_path.h).
#include "ridgeline/engine/field_path.h"

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace ridgeline::engine {
namespace {

absl::string_view Av(std::string_view s) { return {s.data(), s.size()}; }

}  // namespace

absl::Status WithFieldPath(absl::Status status, std::string_view path) {
  if (status.ok()) return status;
  status.SetPayload(Av(kFieldPathTypeUrl), absl::Cord(Av(path)));
  return status;
}

std::optional<std::string> FieldPathOf(const absl::Status& status) {
  const auto p = status.GetPayload(Av(kFieldPathTypeUrl));
  if (!p.has_value()) return std::nullopt;
  return std::string(*p);
}

absl::Status PrefixFieldPath(std::string_view prefix,
                             const absl::Status& status) {
  if (status.ok()) return status;
  absl::Status out(status.code(),
                   absl::StrCat(Av(prefix), ": ", status.message()));
  std::string path(prefix);
  if (std::optional<std::string> inner = FieldPathOf(status)) {
    const bool has_prefix =
        absl::StartsWith(*inner, Av(prefix)) &&
        (inner->size() == prefix.size() || (*inner)[prefix.size()] == '.' ||
         (*inner)[prefix.size()] == '[');
    path = has_prefix ? *inner : absl::StrCat(Av(prefix), ".", *inner);
  }
  return WithFieldPath(std::move(out), path);
}

}  // namespace ridgeline::engine
