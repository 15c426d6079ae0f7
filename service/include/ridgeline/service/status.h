// The one place absl::Status becomes a grpc::Status.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/status.h"

namespace ridgeline::service {

// Longest status message sent. The status travels in HTTP/2 trailers, and
// clients refuse metadata past their limit (8 KiB by default) with
// RESOURCE_EXHAUSTED, which would hide the real code (issue 14, defect 8).
inline constexpr size_t kMaxStatusMessageBytes = 2048;

// `message` cut to kMaxStatusMessageBytes on a UTF-8 boundary, saying so.
std::string BoundedMessage(absl::string_view message);

// Trailing-metadata key carrying an error's field path
// (engine::FieldPathOf), e.g. "workload.batch".
inline constexpr char kFieldPathMetadataKey[] = "ridgeline-field-path";

// The UNAVAILABLE message of every call a server answers before its plugins
// have loaded (gRPC and HTTP alike); `ridgeline --server` waits through it.
inline constexpr char kNotReadyMessage[] =
    "hardware plugins are still loading; retry shortly";

// Same code (absl and gRPC share the canonical numbering), same message up
// to kMaxStatusMessageBytes.
// With `ctx`, an error's field path is also sent as trailing metadata
// kFieldPathMetadataKey, so clients need not parse the message.
grpc::Status ToGrpcStatus(const absl::Status& status,
                          grpc::ServerContextBase* ctx = nullptr);

}  // namespace ridgeline::service
