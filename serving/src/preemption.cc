#include "ridgeline/serving/preemption.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "ridgeline/engine/field_path.h"

namespace ridgeline::serving {

absl::StatusOr<Preemption> ParsePreemption(std::string_view name) {
  if (name == "off") return Preemption::kOff;
  if (name == "recompute") return Preemption::kRecompute;
  if (name == "swap") return Preemption::kSwap;
  return engine::WithFieldPath(
      absl::InvalidArgumentError(absl::StrCat(
          "serving.preemption: must be off, recompute or swap; got \"",
          std::string(name), "\"")),
      "serving.preemption");
}

std::string_view PreemptionName(Preemption p) {
  switch (p) {
    case Preemption::kOff:
      return "off";
    case Preemption::kRecompute:
      return "recompute";
    case Preemption::kSwap:
      return "swap";
  }
  return "off";
}

}  // namespace ridgeline::serving
