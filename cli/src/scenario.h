// The scenario flags analyze, sweep and kernel share (formats, calibration,
// parallelism, placement pins, economics) and the files they read.
#pragma once

#include <string>
#include <vector>

#include "common.h"
#include "flags.h"
#include "ridgeline/engine/ranges.h"
#include "ridgeline/v1/ridgeline.pb.h"

namespace ridgeline::cli {

const std::vector<FlagSpec>& ScenarioFlags();

// Pins and economics: ranges are checked by the service, which names the
// field; here only the number syntax.
Outcome FillPlacementAndEconomics(const ParsedFlags& flags,
                                  v1::PlacementPins* placement,
                                  v1::EconomicsOverrides* economics);

// --profile/--framework and the analysis options.
Outcome FillCommon(const ParsedFlags& flags, v1::AnalysisOptions* options,
                   v1::Calibration* calibration);

// --pipeline-parallel, --micro-batches, --expert-parallel, --data-parallel,
// --attention-data-parallel (combinations are the service's to check).
Outcome FillParallelismFlags(const ParsedFlags& flags, v1::Parallelism* p);

// ScenarioFlags() into the fields AnalyzeRequest and SweepRequest share.
template <typename Request>
Outcome FillScenarioFlags(const ParsedFlags& flags, Request* request) {
  if (Outcome o = FillPlacementAndEconomics(flags, request->mutable_placement(),
                                            request->mutable_economics())) {
    return o;
  }
  // Divisibility by the model's heads is the service's to check.
  absl::StatusOr<std::optional<int64_t>> tp = flags.GetInt(
      "tensor-parallel", engine::ranges::kTensorParallel.lo,
      engine::ranges::kTensorParallel.hi);
  if (!tp.ok()) return Usage(tp.status());
  if (*tp) {
    request->mutable_parallelism()->set_tensor_parallel(static_cast<int32_t>(**tp));
  }
  if (Outcome o = FillParallelismFlags(flags, request->mutable_parallelism())) {
    return o;
  }
  return FillCommon(flags, request->mutable_options(),
                    request->mutable_calibration());
}

// --hardware-file: a ridgeline.v1.Hardware in proto JSON, or the output of
// `hardware show ID --format json` as is.
Outcome ReadHardwareFile(const std::string& path, v1::Hardware* hardware);

// Exactly one of --hardware ID or --hardware-file FILE.json.
Outcome FillHardware(const ParsedFlags& flags, v1::HardwareSpec* hardware);

// --model-config: a Hugging Face config.json, named after its file.
Outcome ReadModelConfig(const std::string& path, v1::ModelSpec* model);

}  // namespace ridgeline::cli
