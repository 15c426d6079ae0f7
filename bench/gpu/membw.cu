// Device memory bandwidth: a streaming read kernel and a device-to-device
// copy, over buffers far larger than L2, rotated between calls.
// Usage: ridgeline-gpu-membw --hardware-id ID [--out FILE] [--warmup N] [--repeats N]
#include <cstdint>
#include <string>

#include "bench_common.h"

namespace {

constexpr char kUsage[] =
    "usage: ridgeline-gpu-membw --hardware-id ID [--out FILE] [--warmup N] "
    "[--repeats N]\n";

// Sums 16-byte words; the sink write (never taken for zeroed input) keeps the
// loads from being optimised away.
__global__ void ReadKernel(const uint4* __restrict__ in, size_t n, unsigned* sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    uint4 v = in[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0xdeadbeefu) *sink = acc;
}

}  // namespace

int main(int argc, char** argv) {
  rl_bench::Args args = rl_bench::ParseArgs(argc, argv, kUsage);
  rl_bench::CsvWriter csv(args);
  cudaDeviceProp prop{};
  RL_CUDA(cudaGetDeviceProperties(&prop, 0));
  unsigned* sink = nullptr;
  RL_CUDA(cudaMalloc(&sink, sizeof(unsigned)));
  int id = 0;
  for (size_t mib : {size_t{256}, size_t{1024}}) {
    const size_t bytes = mib << 20;
    const int copies = 2;  // each already >= 5x the largest L2
    std::vector<char*> buf(copies * 2);
    for (auto& b : buf) {
      RL_CUDA(cudaMalloc(&b, bytes));
      RL_CUDA(cudaMemset(b, 0, bytes));
    }
    const size_t words = bytes / sizeof(uint4);
    const int blocks = prop.multiProcessorCount * 8;
    double read_s = rl_bench::MedianSeconds(args, [&](int i) {
      ReadKernel<<<blocks, 512>>>(reinterpret_cast<const uint4*>(buf[i % copies]), words, sink);
    });
    RL_CUDA(cudaGetLastError());
    double copy_s = rl_bench::MedianSeconds(args, [&](int i) {
      RL_CUDA(cudaMemcpyAsync(buf[copies + i % copies], buf[i % copies], bytes,
                              cudaMemcpyDeviceToDevice));
    });
    for (auto [name, seconds, moved] :
         {std::tuple{"memory-read-kernel", read_s, double(bytes)},
          std::tuple{"memory-copy-kernel", copy_s, 2.0 * double(bytes)}}) {
      rl_bench::Row r;
      r.id = "bw" + std::to_string(++id);
      r.model_id = name;
      r.weight_format = "n/a";
      r.kv_format = "n/a";
      r.framework = "ridgeline-gpu-bench";
      r.value = seconds * 1e6;
      r.note = "bytes moved (read + written)=" + std::to_string(static_cast<long long>(moved)) +
               "; GB/s=" + std::to_string(moved / seconds / 1e9) +
               "; inputs rotated (cold cache); CUDA events, median of " +
               std::to_string(args.repeats) + " after " + std::to_string(args.warmup) +
               " warm-up calls";
      csv.Write(r);
    }
    for (auto& b : buf) RL_CUDA(cudaFree(b));
  }
  RL_CUDA(cudaFree(sink));
  return 0;
}
