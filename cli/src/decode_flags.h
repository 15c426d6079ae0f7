// --speculative / --acceptance and the --lora-* flags: the decode variants
// analyze, step, sweep, simulate and plan share (docs/speculative.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "flags.h"
#include "ridgeline/v1/ridgeline.pb.h"

namespace ridgeline::cli {

const std::vector<FlagSpec>& DecodeVariantFlags();

// Into options.speculative / options.lora. Only the syntax here (the
// method's form, numbers); the service checks the ranges and names the
// field. Returns the error message, or nullopt.
std::optional<std::string> FillDecodeVariants(const ParsedFlags& flags,
                                              v1::AnalysisOptions* options);

}  // namespace ridgeline::cli
