// Engine results and descriptions -> ridgeline.v1 messages. Pure functions
// of their arguments; thread-safe. The other direction (requests -> engine
// inputs) is request_scenario.h.
#pragma once

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ridgeline/engine/hardware.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/engine/result.h"
#include "ridgeline/v1/ridgeline.pb.h"

namespace ridgeline::service {

void ToProto(const engine::PerMathType& in, v1::PerMathType* out);

void ToProto(const engine::Hardware& in, v1::Hardware* out);

void ToProto(const engine::ModelConfig& in, v1::Model* out);
// `view` BASIC leaves out the per-op tables (StepResult.ops); UNSPECIFIED
// means FULL.
void ToProto(const engine::StepResult& in, v1::StepResult* out,
             v1::AnalysisView view = v1::ANALYSIS_VIEW_FULL);
void ToProto(const engine::AnalysisResult& in, v1::AnalysisResult* out,
             v1::AnalysisView view = v1::ANALYSIS_VIEW_FULL);

}  // namespace ridgeline::service
