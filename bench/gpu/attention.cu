// Decode-attention sweep: one query token per sequence against a KV cache of
// kv_len tokens (the single_decode / batch_decode kernel FlashInfer
// benchmarks), over q heads, kv heads (MHA and GQA), head dim, KV length and
// batch. fp16 q/k/v, fp32 softmax and accumulation. The KV cache is rotated
// over copies totalling >= 512 MiB so L2 cannot hold it between calls.
// Usage: ridgeline-gpu-attention --hardware-id ID [--out FILE] [--warmup N] [--repeats N]
#include <cuda_fp16.h>

#include <cfloat>
#include <cmath>
#include <string>

#include "bench_common.h"

namespace {

constexpr char kUsage[] =
    "usage: ridgeline-gpu-attention --hardware-id ID [--out FILE] [--warmup N] "
    "[--repeats N]\n";
constexpr int kWarps = 4;
constexpr int kMaxDim = 256;

// One block per (sequence, q head). Each warp walks every kWarps-th KV
// position; its 32 lanes split the head dim so K and V rows are read
// coalesced. Online softmax per warp, merged through shared memory.
// Layout: q[b][hq][d], k/v[b][len][hkv][d] (FlashInfer "NHD"), o like q.
template <int D>
__global__ void DecodeAttention(const half* __restrict__ q, const half* __restrict__ k,
                                const half* __restrict__ v, half* __restrict__ o,
                                int len, int hq, int hkv, float scale) {
  constexpr int kPer = D / 32;  // elements per lane
  const int b = blockIdx.x / hq, h = blockIdx.x % hq, kvh = h / (hq / hkv);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float qr[kPer], acc[kPer];
  for (int j = 0; j < kPer; ++j) {
    qr[j] = __half2float(q[(size_t(b) * hq + h) * D + lane * kPer + j]) * scale;
    acc[j] = 0;
  }
  float m = -FLT_MAX, l = 0;
  for (int t = warp; t < len; t += kWarps) {
    const size_t base = ((size_t(b) * len + t) * hkv + kvh) * D + lane * kPer;
    float s = 0;
    for (int j = 0; j < kPer; ++j) s += qr[j] * __half2float(k[base + j]);
    for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
    const float m_new = fmaxf(m, s);
    const float corr = __expf(m - m_new), p = __expf(s - m_new);
    l = l * corr + p;
    for (int j = 0; j < kPer; ++j) acc[j] = acc[j] * corr + p * __half2float(v[base + j]);
    m = m_new;
  }
  __shared__ float sm[kWarps], sl[kWarps], sacc[kWarps][D];
  if (lane == 0) {
    sm[warp] = m;
    sl[warp] = l;
  }
  for (int j = 0; j < kPer; ++j) sacc[warp][lane * kPer + j] = acc[j];
  __syncthreads();
  if (warp == 0) {
    float gm = -FLT_MAX;
    for (int w = 0; w < kWarps; ++w) gm = fmaxf(gm, sm[w]);
    float gl = 0;
    for (int w = 0; w < kWarps; ++w) gl += sl[w] * __expf(sm[w] - gm);
    for (int j = 0; j < kPer; ++j) {
      float r = 0;
      for (int w = 0; w < kWarps; ++w) r += sacc[w][lane * kPer + j] * __expf(sm[w] - gm);
      o[(size_t(b) * hq + h) * D + lane * kPer + j] = __float2half(r / gl);
    }
  }
}

void Launch(int d, int batch, int hq, int hkv, int len, const half* q, const half* k,
            const half* v, half* o) {
  const float scale = 1.0f / std::sqrt(float(d));
  const dim3 grid(batch * hq), block(kWarps * 32);
  switch (d) {
    case 64: DecodeAttention<64><<<grid, block>>>(q, k, v, o, len, hq, hkv, scale); break;
    case 128: DecodeAttention<128><<<grid, block>>>(q, k, v, o, len, hq, hkv, scale); break;
    case 256: DecodeAttention<256><<<grid, block>>>(q, k, v, o, len, hq, hkv, scale); break;
    default: std::fprintf(stderr, "head_dim %d unsupported\n", d); std::exit(2);
  }
}

}  // namespace

int main(int argc, char** argv) {
  rl_bench::Args args = rl_bench::ParseArgs(argc, argv, kUsage);
  rl_bench::CsvWriter csv(args);
  static_assert(kMaxDim == 256);
  int id = 0;
  struct Heads { int q, kv; };
  for (Heads heads : {Heads{32, 32}, Heads{32, 8}}) {
    for (int d : {64, 128, 256}) {
      for (int batch : {1, 8, 32}) {
        for (int len : {512, 1024, 2048, 4096, 8192, 16384, 32768}) {
          const size_t kv_elems = size_t(batch) * len * heads.kv * d;
          const size_t kv_bytes = kv_elems * sizeof(half);
          if (kv_bytes > (size_t{4} << 30)) continue;  // keep the sweep minutes long
          const int copies = rl_bench::RotationCopies(2 * kv_bytes);
          std::vector<half*> k(copies), v(copies);
          for (int c = 0; c < copies; ++c) {
            RL_CUDA(cudaMalloc(&k[c], kv_bytes));
            RL_CUDA(cudaMalloc(&v[c], kv_bytes));
            RL_CUDA(cudaMemset(k[c], 0, kv_bytes));
            RL_CUDA(cudaMemset(v[c], 0, kv_bytes));
          }
          half *q = nullptr, *o = nullptr;
          const size_t q_bytes = size_t(batch) * heads.q * d * sizeof(half);
          RL_CUDA(cudaMalloc(&q, q_bytes));
          RL_CUDA(cudaMalloc(&o, q_bytes));
          RL_CUDA(cudaMemset(q, 0, q_bytes));
          const double s = rl_bench::MedianSeconds(args, [&](int i) {
            Launch(d, batch, heads.q, heads.kv, len, q, k[i % copies], v[i % copies], o);
          });
          RL_CUDA(cudaGetLastError());
          rl_bench::Row r;
          r.id = "at" + std::to_string(++id);
          r.model_id = "attention-decode-kernel";
          r.weight_format = "fp16";
          r.kv_format = "fp16";
          r.batch = batch;
          r.prompt_len = len;
          r.framework = "ridgeline-gpu-bench-attention";
          r.value = s * 1e6;
          r.note = "kernel shape: attention op only: " + std::to_string(heads.q) +
                   " q heads = " + std::to_string(heads.kv) + " kv heads, head_dim " +
                   std::to_string(d) + "; kv_len = prompt_len = " + std::to_string(len) +
                   ", one query token per sequence; KV inputs rotated over " +
                   std::to_string(copies) + " copies (cold cache); CUDA events (device "
                   "time, no host launch overhead), median of " +
                   std::to_string(args.repeats) + " after " + std::to_string(args.warmup) +
                   " warm-up calls";
          csv.Write(r);
          for (int c = 0; c < copies; ++c) {
            RL_CUDA(cudaFree(k[c]));
            RL_CUDA(cudaFree(v[c]));
          }
          RL_CUDA(cudaFree(q));
          RL_CUDA(cudaFree(o));
        }
      }
    }
  }
  return 0;
}
