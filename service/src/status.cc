#include "ridgeline/service/status.h"

#include <optional>
#include <string>
#include <string_view>

#include "ridgeline/engine/field_path.h"

namespace ridgeline::service {

std::string BoundedMessage(absl::string_view message) {
  if (message.size() <= kMaxStatusMessageBytes) return std::string(message);
  size_t end = kMaxStatusMessageBytes;
  // Cut on a UTF-8 character boundary.
  while (end > 0 &&
         (static_cast<unsigned char>(message[end]) & 0xC0) == 0x80) {
    --end;
  }
  std::string out(message.substr(0, end));
  out += "... [message truncated from ";
  out += std::to_string(message.size());
  out += " bytes]";
  return out;
}

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
                      BoundedMessage(status.message()));
}

}  // namespace ridgeline::service
