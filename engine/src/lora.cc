// LoRA target modules as text (lora.h).
#include "ridgeline/engine/lora.h"

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "ridgeline/engine/field_path.h"
#include "validate_util.h"

namespace ridgeline::engine {
namespace {

constexpr std::array<std::pair<std::string_view, uint32_t>, 7> kModules = {{
    {"q", kLoraQ},
    {"k", kLoraK},
    {"v", kLoraV},
    {"o", kLoraO},
    {"gate", kLoraGate},
    {"up", kLoraUp},
    {"down", kLoraDown},
}};

}  // namespace

absl::StatusOr<uint32_t> ParseLoraModules(std::string_view text,
                                          std::string_view field) {
  if (text == "all") return kAllLoraModules;
  uint32_t bits = 0;
  for (absl::string_view name : absl::StrSplit(internal::Av(text), ',')) {
    uint32_t bit = 0;
    for (const auto& [n, b] : kModules) {
      if (name == internal::Av(n)) bit = b;
    }
    if (bit == 0) {
      return WithFieldPath(
          absl::InvalidArgumentError(absl::StrCat(
              internal::Av(field),
              " must be a comma-separated subset of q,k,v,o,gate,up,down (or "
              "all), got \"",
              name, "\" in \"", internal::Av(text), "\"")),
          field);
    }
    bits |= bit;
  }
  return bits;
}

std::string LoraModulesText(uint32_t modules) {
  std::vector<absl::string_view> names;
  for (const auto& [n, b] : kModules) {
    if ((modules & b) != 0) names.push_back(internal::Av(n));
  }
  return absl::StrJoin(names, ",");
}

}  // namespace ridgeline::engine
