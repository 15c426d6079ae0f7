// PlanRequest.emit: the deployment files of one planned deployment. Checks
// the emit fields before planning (a typo fails before minutes of
// simulation), then turns the chosen PlanDeployment, the candidate's
// hardware and the simulated scheduler into a serving::DeployPlan and the
// emitter's text (serving/deploy_emit.h). No math here.
#pragma once

#include "absl/status/status.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/serving/plan.h"
#include "ridgeline/v1/ridgeline.pb.h"

namespace ridgeline::service {

// INVALID_ARGUMENT naming emit, emit_engine or emit_model.
absl::Status CheckEmit(const v1::PlanRequest& req,
                       const engine::ModelConfig& model);

// Fills resp->emitted and resp->emitted_row when req.emit is set.
absl::Status EmitDeployment(const v1::PlanRequest& req,
                            const serving::PlanInput& in,
                            const engine::ModelConfig& model,
                            v1::PlanResponse* resp);

}  // namespace ridgeline::service
