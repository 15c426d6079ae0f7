// `ridgeline kernel attention|gemm`: one kernel call, predicted time beside
// the roofline bound (the AnalyzeKernel RPC).
#pragma once

#include <vector>

#include "common.h"
#include "flags.h"

namespace ridgeline::cli {

std::vector<FlagSpec> KernelFlags();
Outcome KernelCommand(Context& ctx);

}  // namespace ridgeline::cli
