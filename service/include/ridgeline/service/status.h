// The one place absl::Status becomes a grpc::Status.
#pragma once

#include "absl/status/status.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/status.h"

namespace ridgeline::service {

// Trailing-metadata key carrying an error's field path
// (engine::FieldPathOf), e.g. "workload.batch".
inline constexpr char kFieldPathMetadataKey[] = "ridgeline-field-path";

// Same code (absl and gRPC share the canonical numbering), same message.
// With `ctx`, an error's field path is also sent as trailing metadata
// kFieldPathMetadataKey, so clients need not parse the message.
grpc::Status ToGrpcStatus(const absl::Status& status,
                          grpc::ServerContextBase* ctx = nullptr);

}  // namespace ridgeline::service
