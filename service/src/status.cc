#include "ridgeline/service/status.h"

#include <string>

namespace ridgeline::service {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  // absl::StatusCode and grpc::StatusCode share the canonical numbering
  // (google.rpc.Code), so the cast is exact for every defined code.
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

}  // namespace ridgeline::service
