// `ridgeline step`: the time of one forward step of a real batch (every
// sequence at its own context). The scenario flags are analyze's;
// this file reads the steps and prints the answer.
#pragma once

#include <ostream>
#include <vector>

#include "absl/status/status.h"
#include "common.h"
#include "flags.h"
#include "ridgeline/v1/ridgeline.pb.h"

namespace ridgeline::cli {

// --seq CONTEXT:NEW (repeatable; all of them form one step) and --per-op.
std::vector<FlagSpec> StepOwnFlags();

// The one step of the --seq flags into `request` (with per_op). Errors
// (INVALID_ARGUMENT, a usage error) name the flag and the value; ranges
// are the service's to check.
absl::Status FillStep(const ParsedFlags& flags, v1::StepTimeRequest* request);

// The scenario part of an AnalyzeRequest built from analyze's flags.
void StepScenarioFrom(const v1::AnalyzeRequest& from, v1::StepScenario* to);

// Table: the step's totals and split, then (with --per-op) its ops. CSV: one
// row per step (or per op with --per-op). JSON is the caller's (proto3 JSON).
void PrintStepTable(const v1::StepTimeResponse& response, bool csv,
                    std::ostream& out);

// analyze's scenario flags (less its workload and economics) and --seq.
std::vector<FlagSpec> StepFlags();
Outcome StepCommand(Context& ctx);

}  // namespace ridgeline::cli
