// Mixed-radix enumeration and shard parsing (see grid.h).
#include "ridgeline/explore/grid.h"

#include <charconv>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "av.h"

namespace ridgeline::explore {

using internal::Av;

MixedRadix::MixedRadix(std::vector<uint64_t> radices)
    : radices_(std::move(radices)) {
  for (uint64_t r : radices_) total_ *= r;
}

void MixedRadix::Decode(uint64_t index, uint64_t* digits) const {
  for (size_t k = radices_.size(); k-- > 0;) {
    digits[k] = index % radices_[k];
    index /= radices_[k];
  }
}

uint64_t MixedRadix::Encode(const uint64_t* digits) const {
  uint64_t index = 0;
  for (size_t k = 0; k < radices_.size(); ++k) {
    index = index * radices_[k] + digits[k];
  }
  return index;
}

absl::StatusOr<Shard> ParseShard(std::string_view text,
                                 std::string_view field) {
  auto bad = [&] {
    return internal::AtField(absl::InvalidArgumentError(absl::StrCat(
        Av(field), ": want i/n with 0 <= i < n <= ", kMaxShards, ", got \"", Av(text),
        "\"")), field);
  };
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return bad();
  Shard s;
  const std::string_view a = text.substr(0, slash), b = text.substr(slash + 1);
  auto num = [](std::string_view t, uint64_t* v) {
    const auto r = std::from_chars(t.data(), t.data() + t.size(), *v);
    return !t.empty() && r.ec == std::errc() && r.ptr == t.data() + t.size();
  };
  if (!num(a, &s.index) || !num(b, &s.count)) return bad();
  if (s.count < 1 || s.count > kMaxShards || s.index >= s.count) return bad();
  return s;
}

}  // namespace ridgeline::explore
