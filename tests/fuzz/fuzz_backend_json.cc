// Fuzz target: every RPC's request as the HTTP/JSON frontend receives it.
// The input is "<Method>\n<body>": the method name of POST /v1/<Method>
// (kRpcNames), a newline, then the proto3 JSON body, parsed with the
// frontend's options (unknown fields are errors) and handed to the Backend;
// the response is printed as canonical JSON, as the frontend answers.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_backend.h"
#include "google/protobuf/util/json_util.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)ridgeline::fuzz::FuzzBackend();  // load plugins outside the timer
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  if (newline == std::string_view::npos) return 0;
  const std::string_view method = input.substr(0, newline);
  std::string_view body = input.substr(newline + 1);
  if (body.empty()) body = "{}";  // an empty body is the empty message
  for (size_t rpc = 0; rpc < ridgeline::fuzz::kRpcCount; ++rpc) {
    if (ridgeline::fuzz::kRpcNames[rpc] != method) continue;
    auto request = ridgeline::fuzz::NewRequest(rpc);
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;
    if (!google::protobuf::util::JsonStringToMessage(
             google::protobuf::StringPiece(body.data(), body.size()),
             request.get(), options)
             .ok()) {
      return 0;
    }
    ridgeline::fuzz::CallRpc(rpc, *request, /*json_response=*/true);
    return 0;
  }
  return 0;
}
