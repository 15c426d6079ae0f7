// Fuzz target: the Hugging Face config.json reader, reached as a client
// reaches it: an Analyze whose model is the input as an inline config.json
// (ModelSpec.hf_config_json), on a real plugin platform. A config that
// parses is then analysed, so hostile dimensions meet the engine too.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_backend.h"
#include "ridgeline/v1/ridgeline.pb.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)ridgeline::fuzz::FuzzBackend();  // load plugins outside the timer
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ridgeline::v1::AnalyzeRequest request;
  request.mutable_model()->set_hf_config_json(
      std::string(reinterpret_cast<const char*>(data), size));
  request.mutable_model()->set_id("fuzz");
  request.mutable_hardware()->set_platform_id("nvidia-h100-sxm-80gb");
  request.mutable_workload()->set_batch(4);
  request.mutable_workload()->set_prompt_tokens(256);
  request.mutable_workload()->set_generated_tokens(32);
  ridgeline::fuzz::CallRpc(/*Analyze*/ 0, request, /*json_response=*/false);
  return 0;
}
