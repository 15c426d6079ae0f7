// The one place absl::Status becomes a grpc::Status.
#pragma once

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace ridgeline::service {

// Same code (absl and gRPC share the canonical numbering), same message.
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace ridgeline::service
