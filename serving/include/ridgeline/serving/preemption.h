// What a replica does when its KV cache runs out mid-decode (scheduler.h).
#pragma once

#include <string_view>

#include "absl/status/statusor.h"

namespace ridgeline::serving {

enum class Preemption {
  kOff,        // each request reserves its whole life: nothing is preempted
  kRecompute,  // blocks as tokens come; the preempted one recomputes (V1)
  kSwap,       // as kRecompute, its KV kept in the first offload tier (V0)
};

// "off", "recompute", "swap"; INVALID_ARGUMENT naming serving.preemption.
absl::StatusOr<Preemption> ParsePreemption(std::string_view name);
std::string_view PreemptionName(Preemption p);

}  // namespace ridgeline::serving
