// Shared harness of the backend fuzz targets: the Backend as the server
// builds it (the build tree's real plugin .so files, the source tree's
// calibration profiles) and one call per RPC, each as the server makes it.
// Limits are the service's own caps, set small so that one input costs
// milliseconds: a legitimately slow request is refused (RESOURCE_EXHAUSTED)
// or stopped by its deadline, never reported as a fuzzer timeout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "google/protobuf/message.h"
#include "ridgeline/calibration/profiles.h"
#include "ridgeline/service/backend.h"

namespace ridgeline::fuzz {

// Built once per process (plugins load once, as in the server).
const service::Backend& FuzzBackend();
// The calibration profiles FuzzBackend() uses.
const calibration::ProfileStore& FuzzProfiles();

// The RPCs of RidgelineService that take one request message (the streaming
// StepTimeStream is one message: its scenario opens the session, its steps
// are answered).
inline constexpr std::string_view kRpcNames[] = {
    "Analyze",       "Sweep",     "ListHardware", "GetHardware",
    "ListModels",    "GetModel",  "AnalyzeKernel", "StepTime",
    "StepTimeStream", "Explore",  "Plan",          "Simulate"};
inline constexpr size_t kRpcCount = std::size(kRpcNames);

// A fresh, empty request message of RPC `rpc` (index into kRpcNames).
std::unique_ptr<google::protobuf::Message> NewRequest(size_t rpc);

// Calls the backend with `request` (of NewRequest(rpc)'s type) as the
// server does, with a 0.25 s deadline for the calls that poll one; serialises
// the response (binary, or canonical JSON as the HTTP frontend does) as the
// frontends would. Returns nothing: every status is a valid outcome.
void CallRpc(size_t rpc, const google::protobuf::Message& request,
             bool json_response);

}  // namespace ridgeline::fuzz
