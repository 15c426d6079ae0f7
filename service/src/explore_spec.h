// Explore request fields -> explore::ExploreSpec, shared by Explore and
// ExploreSensitivity: the base scenario (through the translation Analyze
// uses), the axes, objectives and constraints. Errors are INVALID_ARGUMENT
// (RESOURCE_EXHAUSTED past the axis cap) with the request's field path.
// Internal to the service.
#pragma once

#include "absl/status/status.h"
#include "ridgeline/explore/explore.h"
#include "ridgeline/service/backend.h"
#include "ridgeline/v1/ridgeline.pb.h"

namespace ridgeline::service {

// Fills spec->space, objectives and constraints; leaves shard, resume and
// keep_all as they are. Does not check the objective count (ValidateSpec).
absl::Status ExploreSpaceFromRequest(const Backend& backend,
                                     const v1::ExploreRequest& req,
                                     explore::ExploreSpec* spec);

}  // namespace ridgeline::service
