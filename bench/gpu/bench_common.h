// Shared by the GPU micro-benchmarks: error checks, event timing (median of
// repeats after warm-up) and CSV rows in the measurement schema
// (data/measurements/calibration.csv; see data/README.md).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#define RL_CUDA(call)                                                      \
  do {                                                                     \
    cudaError_t rl_err = (call);                                           \
    if (rl_err != cudaSuccess) {                                           \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,   \
                   cudaGetErrorString(rl_err));                            \
      std::exit(1);                                                        \
    }                                                                      \
  } while (0)

namespace rl_bench {

struct Args {
  std::string hardware_id;  // --hardware-id, as in hardware_specs.csv (required)
  std::string out;          // --out FILE (default stdout)
  int warmup = 10;
  int repeats = 50;
};

[[noreturn]] inline void UsageError(const std::string& why, const char* usage) {
  std::fprintf(stderr, "%s\n%s", why.c_str(), usage);
  std::exit(2);
}

// An integer flag value in [lo, hi], or a usage error naming the flag.
inline int ParseInt(const std::string& flag, const std::string& text, int lo, int hi,
                    const char* usage) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || v < lo || v > hi) {
    UsageError(flag + ": must be an integer in [" + std::to_string(lo) + ", " +
                   std::to_string(hi) + "], got \"" + text + "\"",
               usage);
  }
  return static_cast<int>(v);
}

// Flags as `--flag VALUE` or `--flag=VALUE`; --help prints the usage to
// stdout and exits 0; usage errors exit 2. Then checks for a CUDA device
// (exit 1 with the reason), so a machine without one writes no output file.
inline Args ParseArgs(int argc, char** argv, const char* usage) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string f = argv[i];
    if (f == "--help" || f == "-h") {
      std::fputs(usage, stdout);
      std::exit(0);
    }
    std::string inline_value;
    bool has_inline = false;
    if (const size_t eq = f.find('='); f.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = f.substr(eq + 1);
      f = f.substr(0, eq);
      has_inline = true;
    }
    auto value = [&]() -> std::string {
      if (has_inline) return inline_value;
      if (i + 1 >= argc) UsageError(f + " needs a value", usage);
      return argv[++i];
    };
    if (f == "--hardware-id") a.hardware_id = value();
    else if (f == "--out") a.out = value();
    else if (f == "--warmup") a.warmup = ParseInt(f, value(), 0, 100000, usage);
    else if (f == "--repeats") a.repeats = ParseInt(f, value(), 1, 100000, usage);
    else UsageError("unknown flag " + f, usage);
  }
  if (a.hardware_id.empty()) {
    UsageError("--hardware-id is required (the part's id in hardware_specs.csv, e.g. "
               "nvidia-h200-sxm-141gb)",
               usage);
  }
  int devices = 0;
  if (cudaError_t err = cudaGetDeviceCount(&devices); err != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "no usable CUDA device: %s\n",
                 err != cudaSuccess ? cudaGetErrorString(err) : "none found");
    std::exit(1);
  }
  return a;
}

// Median seconds of `repeats` timed calls after `warmup` untimed ones. Each
// call gets its own index so callers can rotate inputs.
inline double MedianSeconds(const Args& a, const std::function<void(int)>& call) {
  for (int i = 0; i < a.warmup; ++i) call(i);
  RL_CUDA(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  RL_CUDA(cudaEventCreate(&start));
  RL_CUDA(cudaEventCreate(&stop));
  std::vector<float> ms(a.repeats);
  for (int i = 0; i < a.repeats; ++i) {
    RL_CUDA(cudaEventRecord(start));
    call(a.warmup + i);
    RL_CUDA(cudaEventRecord(stop));
    RL_CUDA(cudaEventSynchronize(stop));
    RL_CUDA(cudaEventElapsedTime(&ms[i], start, stop));
  }
  RL_CUDA(cudaEventDestroy(start));
  RL_CUDA(cudaEventDestroy(stop));
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  const double med = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  return med / 1e3;
}

// Copies of a buffer so that consecutive calls touch different memory and a
// cache (L2: 50 MB on H100/H200, 96 MB on L40S) cannot hold them.
inline int RotationCopies(size_t bytes_per_copy, size_t min_total = size_t{512} << 20) {
  size_t copies = (min_total + bytes_per_copy - 1) / bytes_per_copy;
  return static_cast<int>(std::clamp<size_t>(copies, 2, 64));
}

inline std::string Quote(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) {
    if (c == '"') o += '"';
    o += c;
  }
  return o + "\"";
}

struct Row {
  std::string id, model_id, weight_format, weight_bits, kv_format;
  long long batch = 1, prompt_len = 0, gen_len = 1;
  std::string framework, metric = "kernel_us";
  double value = 0;
  std::string unit = "us";
  std::string note;
};

class CsvWriter {
 public:
  explicit CsvWriter(const Args& a) : args_(a) {
    f_ = a.out.empty() ? stdout : std::fopen(a.out.c_str(), "w");
    if (!f_) {
      std::fprintf(stderr, "cannot open %s\n", a.out.c_str());
      std::exit(1);
    }
    std::fprintf(f_,
                 "id,hardware_id,device_count,tensor_parallel,model_id,weight_format,"
                 "weight_bits_effective,kv_format,batch,prompt_len,gen_len,framework,"
                 "metric,value,unit,usable,source,note\n");
    cudaDeviceProp p{};
    RL_CUDA(cudaGetDeviceProperties(&p, 0));
    int rt = 0;
    RL_CUDA(cudaRuntimeGetVersion(&rt));
    device_ = p.name;
    source_ = "ridgeline bench/gpu on " + device_ + ", CUDA runtime " +
              std::to_string(rt / 1000) + "." + std::to_string((rt % 1000) / 10);
  }
  ~CsvWriter() {
    if (f_ && f_ != stdout) std::fclose(f_);
  }
  const std::string& device() const { return device_; }
  void Write(const Row& r) {
    std::fprintf(f_, "%s,%s,1,1,%s,%s,%s,%s,%lld,%lld,%lld,%s,%s,%.6g,%s,1,%s,%s\n",
                 r.id.c_str(), Quote(args_.hardware_id).c_str(), r.model_id.c_str(),
                 r.weight_format.c_str(), r.weight_bits.c_str(), r.kv_format.c_str(),
                 r.batch, r.prompt_len, r.gen_len, r.framework.c_str(), r.metric.c_str(),
                 r.value, r.unit.c_str(), Quote(source_).c_str(),
                 Quote("device: " + device_ + "; " + r.note).c_str());
    std::fflush(f_);
  }

 private:
  Args args_;
  FILE* f_ = nullptr;
  std::string device_, source_;
};

}  // namespace rl_bench
