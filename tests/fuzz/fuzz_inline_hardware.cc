// Fuzz target: inline hardware (HardwareSpec.description), the part of a
// request a client fills with arbitrary numbers. The input is a v1.Hardware
// in protobuf's binary encoding; it is analysed as Analyze (Llama-3-8B) and
// as AnalyzeKernel (a decode-attention kernel and a GEMM) would.
#include <cstddef>
#include <cstdint>

#include "fuzz_backend.h"
#include "ridgeline/v1/ridgeline.pb.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)ridgeline::fuzz::FuzzBackend();  // load plugins outside the timer
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ridgeline::v1::Hardware hw;
  if (!hw.ParseFromArray(data, static_cast<int>(size))) return 0;

  ridgeline::v1::AnalyzeRequest analyze;
  analyze.mutable_model()->set_catalog_id("llama-3-8b");
  *analyze.mutable_hardware()->mutable_description() = hw;
  analyze.mutable_workload()->set_batch(8);
  analyze.mutable_workload()->set_prompt_tokens(512);
  analyze.mutable_workload()->set_generated_tokens(64);
  ridgeline::fuzz::CallRpc(/*Analyze*/ 0, analyze, /*json_response=*/false);

  ridgeline::v1::AnalyzeKernelRequest kernel;
  *kernel.mutable_hardware()->mutable_description() = hw;
  kernel.mutable_decode_attention()->set_batch(16);
  kernel.mutable_decode_attention()->set_kv_length(4096);
  ridgeline::fuzz::CallRpc(/*AnalyzeKernel*/ 6, kernel, false);
  kernel.mutable_gemm()->set_m(64);
  kernel.mutable_gemm()->set_n(4096);
  kernel.mutable_gemm()->set_k(4096);
  ridgeline::fuzz::CallRpc(/*AnalyzeKernel*/ 6, kernel, false);
  return 0;
}
