// Fuzz target: every RPC's request as the gRPC server receives it. The first
// byte picks the RPC (kRpcNames), the rest is the request message in
// protobuf's binary encoding, parsed as the server parses it, then handed to
// the Backend.
#include <cstddef>
#include <cstdint>

#include "fuzz_backend.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)ridgeline::fuzz::FuzzBackend();  // load plugins outside the timer
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t rpc = data[0] % ridgeline::fuzz::kRpcCount;
  auto request = ridgeline::fuzz::NewRequest(rpc);
  if (!request->ParseFromArray(data + 1, static_cast<int>(size - 1))) return 0;
  ridgeline::fuzz::CallRpc(rpc, *request, /*json_response=*/false);
  return 0;
}
