// Who may call what, for every frontend: ONE table of the methods the
// server answers, each open or protected by the bearer token
// (--auth-token-file). Protected: every method that computes. Open: health,
// the catalog (it lists what plugins and models exist, computes nothing and
// costs microseconds) and server reflection (the schema is public), so
// probes and the web UI's pickers need no secret. gRPC handlers and HTTP
// routes both ask Authorize() with the gRPC method name, so the two
// transports cannot disagree; a method missing from the table is
// protected. Plain data; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "ridgeline/service/auth.h"

namespace ridgeline::service {

enum class Access { kOpen, kProtected };

struct MethodAccess {
  std::string_view
      method;  // gRPC full name: "/ridgeline.v1.RidgelineService/Analyze"
  Access access;
};

// Every method the server serves, RidgelineService's in proto order (a unit
// test checks them against the service descriptor), then health and
// reflection.
const std::vector<MethodAccess>& AccessTable();

// The table's entry for `full_method`; kProtected for one not in it.
Access AccessOf(std::string_view full_method);

// "/ridgeline.v1.RidgelineService/" + `method`.
std::string RidgelineMethod(std::string_view method);

// OK when `full_method` is open, `auth` is null or disabled, or
// `authorization` (the "authorization" metadata or HTTP header) is
// "Bearer <token>"; otherwise UNAUTHENTICATED naming the method and what it
// needs.
absl::Status Authorize(const BearerAuth* auth, std::string_view full_method,
                       std::string_view authorization);

}  // namespace ridgeline::service
