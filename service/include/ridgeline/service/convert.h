// Conversions between engine types and ridgeline.v1 messages. Pure functions
// of their arguments; thread-safe. Validation lives in the Backend; these
// only translate (FromProto returns INVALID_ARGUMENT for unknown kind names,
// naming `path`).
#pragma once

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ridgeline/engine/hardware.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/engine/result.h"
#include "ridgeline/v1/ridgeline.pb.h"

namespace ridgeline::service {

void ToProto(const engine::PerMathType& in, v1::PerMathType* out);
engine::PerMathType FromProto(const v1::PerMathType& in);

void ToProto(const engine::Hardware& in, v1::Hardware* out);
// `path` prefixes error field names, e.g. "hardware.description".
absl::StatusOr<engine::Hardware> FromProto(const v1::Hardware& in,
                                           absl::string_view path);

void ToProto(const engine::ModelConfig& in, v1::Model* out);
void ToProto(const engine::OpResult& in, v1::OpResult* out);
// `view` BASIC leaves out the per-op tables (StepResult.ops); UNSPECIFIED
// means FULL.
void ToProto(const engine::StepResult& in, v1::StepResult* out,
             v1::AnalysisView view = v1::ANALYSIS_VIEW_FULL);
void ToProto(const engine::AnalysisResult& in, v1::AnalysisResult* out,
             v1::AnalysisView view = v1::ANALYSIS_VIEW_FULL);

}  // namespace ridgeline::service
