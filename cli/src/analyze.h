// `ridgeline analyze`: one scenario (the Analyze RPC) as a summary and
// per-op roofline tables, CSV or JSON. `step` reuses its scenario flags.
#pragma once

#include <vector>

#include "common.h"
#include "flags.h"
#include "ridgeline/v1/ridgeline.pb.h"

namespace ridgeline::cli {

std::vector<FlagSpec> AnalyzeFlags();

// analyze's flags into `request`; usage errors name the flag.
Outcome BuildAnalyze(const ParsedFlags& flags, v1::AnalyzeRequest* request);

Outcome Analyze(Context& ctx);

}  // namespace ridgeline::cli
