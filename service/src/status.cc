#include "ridgeline/service/status.h"

#include <optional>
#include <string>

#include "ridgeline/engine/field_path.h"

namespace ridgeline::service {

grpc::Status ToGrpcStatus(const absl::Status& status,
                          grpc::ServerContextBase* ctx) {
  if (status.ok()) return grpc::Status::OK;
  if (ctx != nullptr) {
    if (std::optional<std::string> path = engine::FieldPathOf(status)) {
      ctx->AddTrailingMetadata(kFieldPathMetadataKey, *path);
    }
  }
  // absl::StatusCode and grpc::StatusCode share the canonical numbering
  // (google.rpc.Code), so the cast is exact for every defined code.
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

}  // namespace ridgeline::service
