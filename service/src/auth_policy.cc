#include "ridgeline/service/auth_policy.h"

#include <string>

namespace ridgeline::service {

const std::vector<MethodAccess>& AccessTable() {
  static const std::vector<MethodAccess>* table = new std::vector<MethodAccess>{
      {"/ridgeline.v1.RidgelineService/Analyze", Access::kProtected},
      {"/ridgeline.v1.RidgelineService/Sweep", Access::kProtected},
      {"/ridgeline.v1.RidgelineService/ListHardware", Access::kOpen},
      {"/ridgeline.v1.RidgelineService/GetHardware", Access::kOpen},
      {"/ridgeline.v1.RidgelineService/ListModels", Access::kOpen},
      {"/ridgeline.v1.RidgelineService/GetModel", Access::kOpen},
      {"/ridgeline.v1.RidgelineService/AnalyzeKernel", Access::kProtected},
      {"/ridgeline.v1.RidgelineService/StepTime", Access::kProtected},
      {"/ridgeline.v1.RidgelineService/StepTimeStream", Access::kProtected},
      {"/ridgeline.v1.RidgelineService/Explore", Access::kProtected},
      {"/ridgeline.v1.RidgelineService/Plan", Access::kProtected},
      {"/ridgeline.v1.RidgelineService/Simulate", Access::kProtected},
      {"/ridgeline.v1.RidgelineService/ExploreSensitivity", Access::kProtected},
      {"/grpc.health.v1.Health/Check", Access::kOpen},
      {"/grpc.health.v1.Health/Watch", Access::kOpen},
      {"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
       Access::kOpen},
  };
  return *table;
}

Access AccessOf(std::string_view full_method) {
  for (const MethodAccess& m : AccessTable()) {
    if (m.method == full_method) return m.access;
  }
  return Access::kProtected;
}

std::string RidgelineMethod(std::string_view method) {
  return std::string("/ridgeline.v1.RidgelineService/").append(method);
}

absl::Status Authorize(const BearerAuth* auth, std::string_view full_method,
                       std::string_view authorization) {
  if (auth == nullptr || !auth->enabled() ||
      AccessOf(full_method) == Access::kOpen || auth->Check(authorization)) {
    return absl::OkStatus();
  }
  // std::string_view is not absl's here (Debian's absl), hence no StrCat.
  return absl::UnauthenticatedError(
      std::string(full_method.substr(0, 128))
          .append(" needs \"authorization: Bearer <token>\" with the "
                  "server's token (--auth-token-file); ")
          .append(authorization.empty() ? "none was sent"
                                        : "the one sent is wrong"));
}

}  // namespace ridgeline::service
