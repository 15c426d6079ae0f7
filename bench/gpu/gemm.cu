// GEMM rate per data type through cuBLAS (fp16, bf16, int8) and cuBLASLt
// (fp8 e4m3, sm_89+). Weights (B) are rotated between calls so skinny GEMMs
// stream them from device memory instead of L2.
// Usage: ridgeline-gpu-gemm --hardware-id ID [--out FILE] [--warmup N] [--repeats N]
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <string>

#include "bench_common.h"

#define RL_CUBLAS(call)                                                   \
  do {                                                                    \
    cublasStatus_t rl_st = (call);                                        \
    if (rl_st != CUBLAS_STATUS_SUCCESS) {                                 \
      std::fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__,     \
                   __LINE__, #call, static_cast<int>(rl_st));             \
      std::exit(1);                                                       \
    }                                                                     \
  } while (0)

namespace {

constexpr char kUsage[] =
    "usage: ridgeline-gpu-gemm --hardware-id ID [--out FILE] [--warmup N] "
    "[--repeats N]\n";

struct Type {
  const char* name;   // measurement weight_format
  int bits;
  cudaDataType_t ab;  // A and B
  cudaDataType_t c;   // output
  cublasComputeType_t compute;
  bool lt;            // cuBLASLt (fp8)
  int min_cc;         // minimum compute capability x10
};

}  // namespace

int main(int argc, char** argv) {
  rl_bench::Args args = rl_bench::ParseArgs(argc, argv, kUsage);
  rl_bench::CsvWriter csv(args);
  cudaDeviceProp prop{};
  RL_CUDA(cudaGetDeviceProperties(&prop, 0));
  const int cc = prop.major * 10 + prop.minor;
  cublasHandle_t handle;
  RL_CUBLAS(cublasCreate(&handle));
  cublasLtHandle_t lt;
  RL_CUBLAS(cublasLtCreate(&lt));
  void* workspace = nullptr;
  const size_t workspace_bytes = size_t{64} << 20;
  RL_CUDA(cudaMalloc(&workspace, workspace_bytes));

  const Type types[] = {
      {"fp16", 16, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, false, 70},
      {"bf16", 16, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, false, 80},
      {"int8", 8, CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I, false, 75},
      {"fp8", 8, CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, true, 89},
  };
  const int64_t n = 8192, k = 8192;
  int id = 0;
  for (const Type& t : types) {
    if (cc < t.min_cc) {
      std::fprintf(stderr, "skipping %s: needs sm_%d, device is sm_%d\n", t.name, t.min_cc, cc);
      continue;
    }
    const size_t elem = t.bits / 8;
    const size_t c_elem = t.c == CUDA_R_32I ? 4 : 2;
    for (int64_t m : {1, 16, 64, 256, 1024, 4096, 8192}) {
      const size_t b_bytes = size_t(k) * n * elem;
      const int copies = rl_bench::RotationCopies(b_bytes);
      std::vector<void*> b(copies);
      for (auto& p : b) {
        RL_CUDA(cudaMalloc(&p, b_bytes));
        RL_CUDA(cudaMemset(p, 0, b_bytes));
      }
      void *a = nullptr, *c = nullptr;
      // int8 needs m padded to a multiple of 4 for the IMMA path.
      const int64_t m_alloc = (m + 3) / 4 * 4;
      RL_CUDA(cudaMalloc(&a, size_t(m_alloc) * k * elem));
      RL_CUDA(cudaMemset(a, 0, size_t(m_alloc) * k * elem));
      RL_CUDA(cudaMalloc(&c, size_t(m_alloc) * n * c_elem));
      float alpha_f = 1, beta_f = 0;
      int32_t alpha_i = 1, beta_i = 0;
      const void* alpha = t.compute == CUBLAS_COMPUTE_32I ? static_cast<const void*>(&alpha_i) : &alpha_f;
      const void* beta = t.compute == CUBLAS_COMPUTE_32I ? static_cast<const void*>(&beta_i) : &beta_f;
      const int64_t mm = t.compute == CUBLAS_COMPUTE_32I ? m_alloc : m;

      // Column-major: C^T[n x m] = B^T[n x k] * A^T[k x m], i.e. "TN" with B
      // as the transposed operand (the layout fp8 requires).
      cublasLtMatmulDesc_t desc = nullptr;
      cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
      cublasLtMatmulHeuristicResult_t heur{};
      if (t.lt) {
        RL_CUBLAS(cublasLtMatmulDescCreate(&desc, t.compute, CUDA_R_32F));
        cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
        RL_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
        RL_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
        RL_CUBLAS(cublasLtMatrixLayoutCreate(&la, t.ab, k, n, k));   // weights, transposed
        RL_CUBLAS(cublasLtMatrixLayoutCreate(&lb, t.ab, k, mm, k));  // activations
        RL_CUBLAS(cublasLtMatrixLayoutCreate(&lc, t.c, n, mm, n));
        cublasLtMatmulPreference_t pref;
        RL_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
        RL_CUBLAS(cublasLtMatmulPreferenceSetAttribute(
            pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes, sizeof(workspace_bytes)));
        int found = 0;
        RL_CUBLAS(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 1, &heur, &found));
        RL_CUBLAS(cublasLtMatmulPreferenceDestroy(pref));
        if (found == 0) {
          std::fprintf(stderr, "skipping %s m=%lld: no cuBLASLt algorithm\n", t.name, (long long)m);
          for (auto& p : b) RL_CUDA(cudaFree(p));
          RL_CUDA(cudaFree(a));
          RL_CUDA(cudaFree(c));
          continue;
        }
      }
      double s = rl_bench::MedianSeconds(args, [&](int i) {
        void* w = b[i % copies];
        if (t.lt) {
          RL_CUBLAS(cublasLtMatmul(lt, desc, alpha, w, la, a, lb, beta, c, lc, c, lc,
                                   &heur.algo, workspace, workspace_bytes, 0));
        } else {
          RL_CUBLAS(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, mm, k, alpha, w, t.ab, k,
                                 a, t.ab, k, beta, c, t.c, n, t.compute, CUBLAS_GEMM_DEFAULT));
        }
      });
      if (t.lt) {
        cublasLtMatrixLayoutDestroy(la);
        cublasLtMatrixLayoutDestroy(lb);
        cublasLtMatrixLayoutDestroy(lc);
        cublasLtMatmulDescDestroy(desc);
      }
      rl_bench::Row r;
      r.id = "gm" + std::to_string(++id);
      r.model_id = "gemm-kernel";
      r.weight_format = t.name;
      r.weight_bits = std::to_string(t.bits);
      r.kv_format = "n/a";
      r.batch = m;
      r.prompt_len = 0;
      r.framework = t.lt ? "ridgeline-gpu-bench-cublaslt" : "ridgeline-gpu-bench-cublas";
      r.value = s * 1e6;
      const double tflops = 2.0 * double(mm) * n * k / s / 1e12;
      r.note = "kernel shape: GEMM M=" + std::to_string(mm) + " N=" + std::to_string(n) +
               " K=" + std::to_string(k) + "; TFLOPS=" + std::to_string(tflops) +
               "; weights rotated over " + std::to_string(copies) +
               " copies (inputs rotated, cold cache); CUDA events, median of " +
               std::to_string(args.repeats) + " after " + std::to_string(args.warmup) +
               " warm-up calls";
      csv.Write(r);
      for (auto& p : b) RL_CUDA(cudaFree(p));
      RL_CUDA(cudaFree(a));
      RL_CUDA(cudaFree(c));
    }
  }
  RL_CUDA(cudaFree(workspace));
  cublasLtDestroy(lt);
  cublasDestroy(handle);
  return 0;
}
