// `ridgeline sweep`: the cartesian product of models, hardware, formats and
// workloads (the Sweep RPC); json prints one point per line.
#pragma once

#include <vector>

#include "common.h"
#include "flags.h"

namespace ridgeline::cli {

std::vector<FlagSpec> SweepFlags();
Outcome Sweep(Context& ctx);

}  // namespace ridgeline::cli
