#include "ridgeline/calibration/validation.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <regex>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "ridgeline/engine/analyze.h"
#include "ridgeline/engine/formats.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/engine/step.h"

namespace ridgeline::calibration {
namespace {

// Qualcomm Genie's prompt-processor graph: 128 tokens per iteration
// (github:quic/ai-hub-models@52c080d, llama_v3_* info.yaml: "up to 128
// tokens = one prompt-processor iteration"; its TTFT for a 4096-token prompt
// is 32 x the 128-token one).
constexpr int64_t kGeniePromptIterationTokens = 128;
// llama.cpp's physical batch (n_ubatch) default, the chunk
// engine::kDefaultPrefillChunkTokens cites.
constexpr int64_t kLlamaCppUbatchTokens = 512;

absl::Status Skip(const std::string& why) { return absl::FailedPreconditionError(why); }
std::string Msg(const absl::Status& st) { return std::string(st.message()); }

// Stand-ins for measured models the catalog lacks, with why the shapes are
// the same; used only when the catalog has no entry of that id.
std::string ModelAlias(std::string_view id) {
  // CodeLlama-7B is Llama-2-7B's architecture (vocab 32016 vs 32000).
  if (id == "codellama-7b") return "llama-2-7b";
  return std::string(id);
}

bool IsVersionLike(std::string_view part) {
  if (part.empty()) return false;
  if (std::isdigit(static_cast<unsigned char>(part[0]))) return true;
  if (part.size() > 1 && (part[0] == 'v' || part[0] == 'V') &&
      std::isdigit(static_cast<unsigned char>(part[1])))
    return true;
  // "sm70", "pr7487": architecture or pull-request tags.
  for (std::string_view tag : {"sm", "pr"}) {
    if (part.size() > tag.size() && part.substr(0, tag.size()) == tag &&
        std::isdigit(static_cast<unsigned char>(part[tag.size()])))
      return true;
  }
  return false;
}

absl::StatusOr<engine::NumberFormat> WeightFormat(const MeasurementRow& row) {
  const std::string f = absl::AsciiStrToLower(row.weight_format);
  absl::StatusOr<engine::NumberFormat> base = engine::ParseNumberFormat(f);
  if (!row.weight_bits_effective.has_value()) return base;
  // The row's effective bits are the honest bytes per weight whatever the
  // format: a GGUF file size includes block scales and the layers kept at
  // higher precision; a w4a16 checkpoint with one fp16 scale per 32 weights
  // is 4.5 bits. The format still says which math consumes the weights.
  const bool gguf = f.rfind("gguf-", 0) == 0;
  if (!base.ok() && !gguf) return base.status();
  engine::NumberFormat nf;
  nf.name = f;
  nf.bits = *row.weight_bits_effective;
  nf.native_math = base.ok() ? base->native_math : std::nullopt;
  return nf;
}

// Whether `profile` lists row `id` among the rows it was fitted on
// ("...; rows: m291 m292" in fitted_from, as FitProfiles writes it).
bool FittedOn(const Profile& profile, std::string_view id) {
  const size_t at = profile.fitted_from.find("rows:");
  if (at == std::string::npos) return false;
  const absl::string_view want(id.data(), id.size());
  for (absl::string_view word :
       absl::StrSplit(absl::string_view(profile.fitted_from).substr(at + 5),
                      ' ', absl::SkipEmpty())) {
    if (word == want) return true;
  }
  return false;
}

std::optional<int64_t> FindInt(const std::string& text, const std::regex& re,
                               int group = 1) {
  std::smatch m;
  if (!std::regex_search(text, m, re)) return std::nullopt;
  // SimpleAtoi, not stoll: a number past int64 in a note is a bad row (not
  // found), not an uncaught out_of_range (found by fuzz_measurements_csv).
  int64_t v = 0;
  if (!absl::SimpleAtoi(m[group].str(), &v)) return std::nullopt;
  return v;
}

}  // namespace

std::string_view RegimeName(Regime r) {
  switch (r) {
    case Regime::kDecode: return "decode";
    case Regime::kPrefill: return "prefill";
    case Regime::kMixed: return "mixed";
    case Regime::kAttentionKernel: return "attention-kernel";
    case Regime::kGemmKernel: return "gemm-kernel";
    case Regime::kMemoryKernel: return "memory-kernel";
  }
  return "?";
}

std::string FrameworkKey(std::string_view framework) {
  std::vector<std::string> kept;
  const std::vector<std::string> parts =
      absl::StrSplit(std::string(framework), '-');
  for (const std::string& part : parts) {
    if (IsVersionLike(part)) break;
    kept.emplace_back(part);
  }
  std::string key = absl::StrJoin(kept, "-");
  return key.empty() ? std::string(framework) : key;
}

bool BeatsBound(bool higher_is_faster, double measured, double bound) {
  return higher_is_faster ? measured > bound * (1 + kSoundnessTolerance)
                          : measured * (1 + kSoundnessTolerance) < bound;
}

double ToSeconds(const PreparedRow& p, double v) {
  const MeasurementRow& r = p.row;
  if (r.metric == "throughput_tok_s") {
    // Seconds for the whole static batch: batch x gen tokens at v tok/s.
    return static_cast<double>(*r.batch) * static_cast<double>(*r.gen_len) / v;
  }
  if (r.metric == "prefill_tok_s") {
    // The whole prefill (so a fixed per-request cost is in seconds).
    return static_cast<double>(p.scenario.workload.batch) *
           static_cast<double>(p.scenario.workload.prompt_tokens) / v;
  }
  if (r.unit == "tok/s") return 1.0 / v;
  if (r.unit == "ms") return v / 1e3;
  if (r.unit == "us") return v / 1e6;
  return v;
}

absl::StatusOr<PreparedRow> PrepareRow(const MeasurementRow& row,
                                       const HardwareLookup& lookup) {
  if (!row.usable) {
    const std::string why = row.note.substr(0, row.note.find(';'));
    return Skip(absl::StrCat("usable=0", why.empty() ? "" : ": ", why));
  }
  // Multi-device runs are modelled as tensor parallelism over all devices;
  // other splits (pipeline, data parallel, unstated) are not.
  if (row.device_count != 1 && row.tensor_parallel != row.device_count) {
    return Skip(absl::StrFormat(
        "multi-device run (%d devices) without tensor parallelism over all of "
        "them (tensor_parallel %s); only that split is modelled",
        row.device_count,
        row.tensor_parallel ? absl::StrCat(*row.tensor_parallel) : "not stated"));
  }
  PreparedRow p;
  p.row = row;
  p.framework_key = FrameworkKey(row.framework);
  const std::string& m = row.metric;
  const bool memory_kernel = row.model_id == "memory-read-kernel" ||
                             row.model_id == "memory-copy-kernel";
  const bool kernel = row.model_id == "attention-decode-kernel" ||
                      row.model_id == "gemm-kernel" || memory_kernel;
  if (kernel != (m == "kernel_us")) {
    return Skip(absl::StrCat("metric ", m, " does not fit model_id ", row.model_id));
  }
  if (m == "decode_tok_s" || m == "tpot_ms") {
    p.regime = Regime::kDecode;
  } else if (m == "prefill_tok_s" || m == "ttft_ms") {
    p.regime = Regime::kPrefill;
  } else if (m == "throughput_tok_s" || m == "e2e_latency_ms") {
    p.regime = Regime::kMixed;
  } else if (m == "kernel_us") {
    p.regime = memory_kernel                   ? Regime::kMemoryKernel
               : row.model_id == "gemm-kernel" ? Regime::kGemmKernel
                                               : Regime::kAttentionKernel;
  } else {
    return Skip(absl::StrCat("metric ", m, " has no definition to model"));
  }
  const std::string expected_unit =
      m == "kernel_us" ? "us" : (absl::EndsWith(m, "_ms") ? "ms" : "tok/s");
  if (row.unit != expected_unit) {
    return Skip(absl::StrFormat("unit %s does not match metric %s (expected %s)",
                                row.unit, m, expected_unit));
  }
  p.higher_is_faster = row.unit == "tok/s";

  absl::StatusOr<engine::Hardware> hw = lookup(row.hardware_id);
  if (!hw.ok()) {
    return Skip(absl::StrCat("hardware: ", hw.status().message()));
  }
  p.family = hw->family;
  p.memory_technology = DeviceMemoryTechnology(*hw);
  // No published peak ("compute roof unknown"): the engine bounds only
  // memory time, which is a real bound for memory-bound metrics (decode,
  // decode-attention kernels) but says nothing of compute-bound ones.
  const bool roof_known =
      std::any_of(hw->peak_ops_per_second.begin(), hw->peak_ops_per_second.end(),
                  [](const std::optional<double>& v) { return v.has_value(); });
  if (!roof_known &&
      (p.regime == Regime::kPrefill || p.regime == Regime::kMixed ||
       p.regime == Regime::kGemmKernel)) {
    return Skip(absl::StrCat("compute roof unknown for ", row.hardware_id));
  }

  if (p.regime == Regime::kAttentionKernel) {
    static const std::regex kQKv(R"((\d+) q heads = (\d+) kv heads)");
    static const std::regex kHeads(R"((\d+) heads)");
    static const std::regex kDim(R"(head_dim (\d+))");
    std::smatch match;
    if (std::regex_search(row.note, match, kQKv)) {
      p.attention.num_q_heads = std::stoll(match[1].str());
      p.attention.num_kv_heads = std::stoll(match[2].str());
    } else if (auto h = FindInt(row.note, kHeads)) {
      p.attention.num_q_heads = p.attention.num_kv_heads = *h;
    } else {
      return Skip("attention kernel shape: no heads in note");
    }
    std::optional<int64_t> dim = FindInt(row.note, kDim);
    if (!dim) return Skip("attention kernel shape: no head_dim in note");
    p.attention.head_dim = *dim;
    if (!row.prompt_len) return Skip("attention kernel: prompt_len (KV length) blank");
    p.attention.kv_length = *row.prompt_len;
    p.attention.batch = row.batch.value_or(1);
    absl::StatusOr<engine::NumberFormat> dtype =
        engine::ParseNumberFormat(absl::AsciiStrToLower(row.weight_format));
    if (!dtype.ok()) return Skip(Msg(dtype.status()));
    p.attention.dtype = *dtype;
    // Micro-benchmarks that rotate inputs say so; published FlashInfer runs
    // call the kernel on the same tensors, so the KV stays in L2 if it fits.
    p.kernel_options.warm_cache = row.note.find("rotated") == std::string::npos;
    if (auto st = engine::ValidateDecodeAttentionShape(p.attention); !st.ok())
      return Skip(Msg(st));
  } else if (p.regime == Regime::kGemmKernel) {
    static const std::regex kM(R"(M=(\d+))"), kN(R"(N=(\d+))"), kK(R"(K=(\d+))");
    auto mm = FindInt(row.note, kM), nn = FindInt(row.note, kN),
         kk = FindInt(row.note, kK);
    if (!mm || !nn || !kk) return Skip("gemm kernel shape: no M=, N=, K= in note");
    p.gemm.m = *mm;
    p.gemm.n = *nn;
    p.gemm.k = *kk;
    absl::StatusOr<engine::NumberFormat> f =
        engine::ParseNumberFormat(absl::AsciiStrToLower(row.weight_format));
    if (!f.ok()) return Skip(Msg(f.status()));
    p.gemm.a = *f;
    p.gemm.b = *f;
    p.kernel_options.warm_cache = row.note.find("rotated") == std::string::npos;
    if (auto st = engine::ValidateGemmShape(p.gemm); !st.ok()) return Skip(Msg(st));
  } else if (p.regime == Regime::kMemoryKernel) {
    // bench/gpu membw: "bytes moved (read + written)=N"; a copy's N counts the
    // buffer twice (read once, written once), a read kernel's once.
    static const std::regex kMoved(R"(bytes moved \(read \+ written\)=(\d+))");
    std::optional<int64_t> moved = FindInt(row.note, kMoved);
    if (!moved) return Skip("memory kernel: no \"bytes moved (read + written)=\" in note");
    p.memory.copy = row.model_id == "memory-copy-kernel";
    p.memory.bytes = p.memory.copy ? *moved / 2 : *moved;
    p.kernel_options.warm_cache = row.note.find("rotated") == std::string::npos;
    if (auto st = engine::ValidateMemoryKernelShape(p.memory); !st.ok()) return Skip(Msg(st));
  }
  if (kernel) {
    p.scenario.hardware = *std::move(hw);
    return p;
  }

  absl::StatusOr<engine::ModelConfig> model = engine::FindModel(row.model_id);
  if (!model.ok() && ModelAlias(row.model_id) != row.model_id) {
    model = engine::FindModel(ModelAlias(row.model_id));
  }
  if (!model.ok()) return Skip(absl::StrCat("model: ", model.status().message()));
  absl::StatusOr<engine::NumberFormat> weights = WeightFormat(row);
  if (!weights.ok()) return Skip(absl::StrCat("weight_format: ", weights.status().message()));

  engine::Scenario& s = p.scenario;
  s.model = *std::move(model);
  s.parallelism.tensor_parallel = row.device_count;
  s.hardware = *std::move(hw);
  s.options.suggestions = false;
  s.precision = engine::DefaultPrecision();
  s.precision.weights = *weights;
  // W8A8 FP8 engines (TensorRT-LLM --enable_fp8, Gaudi FP8) run fp8 math;
  // everything else computes in fp16 (llama.cpp dequantises, W4A16).
  const bool fp8 = weights->name == "fp8" || absl::StartsWith(weights->name, "fp8");
  absl::StatusOr<engine::NumberFormat> act =
      engine::ParseNumberFormat(fp8 ? "fp8" : "fp16");
  if (!act.ok()) return Skip(Msg(act.status()));
  s.precision.activations = *act;
  std::string kv = absl::AsciiStrToLower(row.kv_format);
  if (kv.empty() || kv == "unknown" || kv == "n/a") {
    // Unstated: FP8 recipes (Gaudi, TensorRT-LLM) also quantise the KV cache,
    // and a bound must assume the narrowest format the run could have used;
    // otherwise fp16, the runtimes' default.
    kv = fp8 ? "fp8" : "fp16";
  }
  absl::StatusOr<engine::NumberFormat> kvf = engine::ParseNumberFormat(kv);
  if (!kvf.ok()) return Skip(absl::StrCat("kv_format: ", kvf.status().message()));
  s.precision.kv_cache = *kvf;

  // llama.cpp's CUDA backend runs fp16 and dequantised GEMMs through cuBLAS
  // with CUBLAS_COMPUTE_16F (fp16 accumulation; github:ggerganov/llama.cpp
  // ggml-cuda.cu, ggml_cuda_op_mul_mat_cublas): GeForce parts do that at
  // twice their FP32-accumulate rate.
  s.options.fp16_accumulation = p.framework_key == "llama.cpp-cuda";
  // llama-bench ran without flash attention (`-fa` defaulted to 0 in every
  // build the rows cite, May 2024 and earlier): the graph materialises
  // K^T Q, softmax and the score x V product as separate ops, so the score
  // matrix is written and read between them (the engine's unfused
  // attention). At pp4096 that traffic is what makes a 4096-token prompt
  // slower per token than a 512-token one (RTX 4090 fp16: 6,531 vs 9,382
  // tok/s).
  const bool llama_cpp = absl::StartsWith(p.framework_key, "llama.cpp");
  if (llama_cpp) s.options.flash_attention = false;

  engine::Workload& w = s.workload;
  if (!row.batch) return Skip("batch not stated (runtime-chosen)");
  w.batch = *row.batch;
  const int64_t prompt = row.prompt_len.value_or(0);
  const int64_t gen = row.gen_len.value_or(0);
  if (m == "decode_tok_s") {
    // llama.cpp tgN decodes N tokens from an empty context: one prompt token,
    // N further steps. Qualcomm "response rate" gives no lengths: a 128-token
    // prompt (one prompt-processor iteration) and 128 steps.
    if (prompt == 0 && gen > 0) {
      w.prompt_tokens = 1;
      w.generated_tokens = gen + 1;
    } else {
      w.prompt_tokens = prompt > 0 ? prompt : 128;
      w.generated_tokens = (gen > 0 ? gen : 128) + 1;
    }
  } else if (m == "tpot_ms") {
    w.prompt_tokens = std::max<int64_t>(prompt, 1);
    w.generated_tokens = std::max<int64_t>(gen, 2);
  } else if (m == "prefill_tok_s") {
    if (prompt <= 0) return Skip("prefill_tok_s without prompt_len");
    w.prompt_tokens = prompt;
    w.generated_tokens = 0;
    // llama.cpp computes a prompt in physical batches of n_ubatch = 512
    // tokens (common/common.h, ggml-org/llama.cpp at 001d906a), each a
    // forward pass over the weights and the KV of the batches before it.
    if (llama_cpp) p.prompt_iteration_tokens = kLlamaCppUbatchTokens;
  } else if (m == "ttft_ms") {
    if (prompt <= 0) return Skip("ttft_ms without prompt_len");
    w.prompt_tokens = prompt;
    w.generated_tokens = 1;
    // Genie's prompt processor is a fixed 128-token graph run once per 128
    // prompt tokens ("up to 128 tokens = one prompt-processor iteration",
    // AI Hub info.yaml, quoted in the rows' notes), each iteration a whole
    // forward pass that streams the weights again.
    if (p.framework_key == "qualcomm-genie-qnn") {
      p.prompt_iteration_tokens = kGeniePromptIterationTokens;
    }
  } else {  // throughput, e2e
    if (prompt <= 0 || gen <= 0) return Skip(absl::StrCat(m, " needs prompt_len and gen_len"));
    w.prompt_tokens = prompt;
    w.generated_tokens = gen;
  }
  // A prompt in passes is the engine's chunked prefill (each chunk a
  // forward pass that streams the layers' weights again and reads the KV of
  // the chunks before it, placed for one chunk's activations): the scenario
  // `ridgeline analyze --prefill-chunk-tokens N` times, bound and
  // prediction alike.
  s.options.prefill_chunk_tokens = p.prompt_iteration_tokens;
  if (auto st = engine::ValidateScenario(s); !st.ok()) return Skip(Msg(st));
  return p;
}

absl::StatusOr<engine::KernelCost> KernelCostOf(const PreparedRow& p,
                                                const engine::Efficiency& efficiency,
                                                bool pure) {
  engine::KernelOptions o = p.kernel_options;
  o.pure_roofline = pure;
  const engine::Hardware& hw = p.scenario.hardware;
  switch (p.regime) {
    case Regime::kAttentionKernel:
      return engine::DecodeAttentionKernel(p.attention, hw, efficiency, o);
    case Regime::kGemmKernel:
      return engine::GemmKernel(p.gemm, hw, efficiency, o);
    default:
      return engine::MemoryKernel(p.memory, hw, efficiency, o);
  }
}

bool IsKernel(Regime r) {
  return r == Regime::kAttentionKernel || r == Regime::kGemmKernel ||
         r == Regime::kMemoryKernel;
}

absl::StatusOr<RowRoofs> PureRoofs(const PreparedRow& p) {
  RowRoofs out;
  double compute = 0, memory = 0;
  if (IsKernel(p.regime)) {
    absl::StatusOr<engine::KernelCost> c = KernelCostOf(p, engine::Efficiency{}, true);
    if (!c.ok()) return c.status();
    out.op_class = c->op_class;
    compute = c->compute_seconds;
    memory = c->memory_seconds;
  } else {
    engine::Scenario s = p.scenario;
    s.efficiency = engine::Efficiency{};
    s.options.pure_roofline = true;
    s.options.suggestions = false;
    // A prompt run in fixed passes sits where one pass sits.
    if (p.prompt_iteration_tokens > 0) {
      s.workload.prompt_tokens =
          std::min(s.workload.prompt_tokens, p.prompt_iteration_tokens);
    }
    absl::StatusOr<engine::AnalysisResult> res = engine::Analyze(s);
    if (!res.ok()) return res.status();
    const engine::StepTotals& t =
        p.regime == Regime::kPrefill ? res->prefill.totals : res->decode.totals;
    compute = t.compute_seconds;
    memory = t.memory_seconds;
  }
  out.compute_to_memory = memory > 0 ? compute / memory : 0;
  return out;
}

absl::StatusOr<double> PredictRow(const PreparedRow& p,
                                  const engine::Efficiency& efficiency,
                                  bool pure) {
  const MeasurementRow& r = p.row;
  if (IsKernel(p.regime)) {
    absl::StatusOr<engine::KernelCost> c = KernelCostOf(p, efficiency, pure);
    if (!c.ok()) return c.status();
    return c->seconds * 1e6;
  }
  engine::Scenario s = p.scenario;
  s.efficiency = pure ? engine::Efficiency{} : efficiency;
  s.options.pure_roofline = pure;
  absl::StatusOr<engine::AnalysisResult> res = engine::Analyze(s);
  if (!res.ok()) return res.status();
  if (!res->memory.fits) {
    return absl::FailedPreconditionError(
        absl::StrCat("does not fit: ", res->memory.not_fitting));
  }
  const std::string& m = r.metric;
  double v = 0;
  if (m == "decode_tok_s") {
    v = res->decode_tokens_per_second_per_sequence;
  } else if (m == "tpot_ms") {
    v = res->tpot_mean_seconds * 1e3;
  } else if (m == "prefill_tok_s") {
    v = res->prefill_tokens_per_second;
  } else if (m == "ttft_ms") {
    v = res->ttft_seconds * 1e3;
  } else if (m == "throughput_tok_s") {
    // Static batching: all output tokens over the whole run, prefill included.
    v = res->e2e_seconds > 0 ? static_cast<double>(s.workload.batch) *
                                   static_cast<double>(s.workload.generated_tokens) /
                                   res->e2e_seconds
                             : 0;
  } else if (m == "e2e_latency_ms") {
    v = res->e2e_seconds * 1e3;
  }
  if (!(v > 0) || !std::isfinite(v)) {
    return absl::InternalError(absl::StrCat("engine returned ", v, " for ", m));
  }
  return v;
}

RowResult EvaluatePrepared(const PreparedRow& p, const ProfileStore* profiles) {
  RowResult out;
  const MeasurementRow& r = p.row;
  out.id = r.id;
  out.metric = r.metric;
  out.unit = r.unit;
  out.measured = r.value;
  out.hardware_id = r.hardware_id;
  out.family = p.family;
  out.framework = p.framework_key;
  // Kernel rows: one pure cost gives the bound and whether it is one (a
  // warm call whose operands fit an on-chip tier of unpublished bandwidth
  // is not bounded by device memory: RowResult::bound_unknown).
  absl::StatusOr<double> bound = absl::InternalError("");
  bool bound_unknown = false;
  if (IsKernel(p.regime)) {
    absl::StatusOr<engine::KernelCost> c =
        KernelCostOf(p, engine::Efficiency{}, true);
    bound = c.ok() ? absl::StatusOr<double>(c->seconds * 1e6) : c.status();
    bound_unknown = c.ok() && c->onchip_bandwidth_unknown;
  } else {
    bound = PredictRow(p, engine::Efficiency{}, true);
  }
  if (!bound.ok()) {
    out.status = std::string(bound.status().message());
    return out;
  }
  engine::Efficiency eff;
  // Kernel rows: a kernel profile (kernels/) first, then the others.
  const Profile* profile =
      profiles && IsKernel(p.regime)
          ? profiles->kernels().Match(r.hardware_id, p.family, r.framework,
                                      p.memory_technology)
          : nullptr;
  // Only for the framework asked: a kernel table of one runtime says
  // nothing of another runtime's kernels.
  if (profile != nullptr && !SameFramework(profile->framework, r.framework)) {
    profile = nullptr;
  }
  if (profile == nullptr && profiles != nullptr) {
    profile = profiles->Match(r.hardware_id, p.family, r.framework,
                              p.memory_technology);
  }
  if (profile) {
    eff = profile->efficiency;
    out.profile = profile->name;
    out.in_sample = FittedOn(*profile, r.id);
  }
  absl::StatusOr<double> pred = profile ? PredictRow(p, eff, false) : bound;
  if (!pred.ok()) {
    out.status = std::string(pred.status().message());
    return out;
  }
  out.bound_unknown = bound_unknown;
  if (!out.bound_unknown) out.bound = *bound;
  out.predicted = *pred;
  out.ape = std::abs(*pred - r.value) / r.value;
  out.beats_bound =
      !out.bound_unknown && BeatsBound(p.higher_is_faster, r.value, *bound);
  out.evaluated = true;
  out.status = "ok";
  return out;
}

std::vector<RowResult> EvaluateRows(const std::vector<MeasurementRow>& rows,
                                    const HardwareLookup& lookup,
                                    const ProfileStore* profiles) {
  std::vector<RowResult> out;
  out.reserve(rows.size());
  for (const MeasurementRow& r : rows) {
    absl::StatusOr<PreparedRow> p = PrepareRow(r, lookup);
    if (!p.ok()) {
      RowResult skipped;
      skipped.id = r.id;
      skipped.metric = r.metric;
      skipped.unit = r.unit;
      skipped.measured = r.value;
      skipped.hardware_id = r.hardware_id;
      skipped.framework = FrameworkKey(r.framework);
      skipped.status = std::string(p.status().message());
      out.push_back(std::move(skipped));
      continue;
    }
    out.push_back(EvaluatePrepared(*p, profiles));
  }
  return out;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  // Nearest rank: the smallest value with at least p of the data at or below.
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
  rank = std::clamp<size_t>(rank, 1, v.size());
  return v[rank - 1];
}

namespace {

GroupStats Stats(std::string name, const std::vector<const RowResult*>& rows) {
  GroupStats g;
  g.name = std::move(name);
  std::vector<double> apes;
  int sound = 0;
  for (const RowResult* r : rows) {
    apes.push_back(*r->ape);
    if (r->bound_unknown) continue;
    ++g.bound_known;
    if (!r->beats_bound) ++sound;
  }
  g.evaluated = static_cast<int>(rows.size());
  g.median_ape = Median(apes);
  g.p90_ape = Percentile(apes, 0.9);
  g.soundness =
      g.bound_known == 0 ? 1.0 : static_cast<double>(sound) / g.bound_known;
  return g;
}

std::vector<GroupStats> GroupBy(const std::vector<const RowResult*>& rows,
                                std::string RowResult::*key) {
  std::map<std::string, std::vector<const RowResult*>> groups;
  for (const RowResult* r : rows) groups[r->*key].push_back(r);
  std::vector<GroupStats> out;
  for (auto& [name, members] : groups) out.push_back(Stats(name, members));
  return out;
}

std::string Num(std::optional<double> v) {
  if (!v) return "";
  return absl::StrFormat("%.6g", *v);
}

}  // namespace

Summary Summarize(const std::vector<RowResult>& results) {
  Summary s;
  std::vector<const RowResult*> ok;
  for (const RowResult& r : results) {
    if (r.evaluated) {
      ok.push_back(&r);
      if (r.in_sample) ++s.in_sample;
      if (r.beats_bound) s.beats_bound.push_back(r);
    } else {
      ++s.skipped;
    }
  }
  s.evaluated = static_cast<int>(ok.size());
  s.overall = Stats("all", ok);
  std::vector<const RowResult*> whole;
  for (const RowResult* r : ok) {
    if (r->metric != "kernel_us") whole.push_back(r);
  }
  if (!whole.empty() && whole.size() < ok.size()) {
    s.end_to_end = Stats("end-to-end (not kernel_us)", whole);
  }
  s.by_metric = GroupBy(ok, &RowResult::metric);
  s.by_family = GroupBy(ok, &RowResult::family);
  s.by_framework = GroupBy(ok, &RowResult::framework);
  return s;
}

void WriteCsv(const std::vector<RowResult>& results, std::ostream& out) {
  out << "id,metric,unit,measured,predicted,bound,ape,status\n";
  for (const RowResult& r : results) {
    out << CsvField(r.id) << ',' << CsvField(r.metric) << ',' << CsvField(r.unit)
        << ',' << Num(r.measured) << ',' << Num(r.predicted) << ','
        << Num(r.bound) << ',' << Num(r.ape) << ',' << CsvField(r.status) << '\n';
  }
}

namespace {
nlohmann::json StatsJson(const GroupStats& g) {
  return {{"name", g.name},
          {"evaluated", g.evaluated},
          {"median_ape", g.median_ape},
          {"p90_ape", g.p90_ape},
          {"soundness", g.soundness},
          {"bound_known", g.bound_known}};
}
nlohmann::json StatsListJson(const std::vector<GroupStats>& v) {
  nlohmann::json a = nlohmann::json::array();
  for (const GroupStats& g : v) a.push_back(StatsJson(g));
  return a;
}
nlohmann::json OptJson(std::optional<double> v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}
}  // namespace

void WriteJson(const std::vector<RowResult>& results, const Summary& summary,
               std::ostream& out) {
  nlohmann::json rows = nlohmann::json::array();
  for (const RowResult& r : results) {
    rows.push_back({{"id", r.id},
                    {"metric", r.metric},
                    {"unit", r.unit},
                    {"measured", r.measured},
                    {"predicted", OptJson(r.predicted)},
                    {"bound", OptJson(r.bound)},
                    {"ape", OptJson(r.ape)},
                    {"status", r.status},
                    {"hardware_id", r.hardware_id},
                    {"family", r.family},
                    {"framework", r.framework},
                    {"profile", r.profile},
                    {"beats_bound", r.beats_bound},
                    {"bound_unknown", r.bound_unknown},
                    {"in_sample", r.in_sample}});
  }
  nlohmann::json beats = nlohmann::json::array();
  for (const RowResult& r : summary.beats_bound) beats.push_back(r.id);
  nlohmann::json j = {
      {"rows", rows},
      {"summary",
       {{"evaluated", summary.evaluated},
        {"skipped", summary.skipped},
        {"in_sample", summary.in_sample},
        {"overall", StatsJson(summary.overall)},
        {"end_to_end", summary.end_to_end ? StatsJson(*summary.end_to_end)
                                          : nlohmann::json()},
        {"by_metric", StatsListJson(summary.by_metric)},
        {"by_family", StatsListJson(summary.by_family)},
        {"by_framework", StatsListJson(summary.by_framework)},
        {"beats_bound", beats}}}};
  out << j.dump(2) << '\n';
}

void WriteTable(const std::vector<RowResult>& results, const Summary& summary,
                std::ostream& out) {
  if (!results.empty()) {
    out << absl::StrFormat("%-6s %-16s %-5s %12s %12s %12s %7s  %s\n", "id",
                           "metric", "unit", "measured", "predicted", "bound",
                           "ape", "status");
  }
  for (const RowResult& r : results) {
    out << absl::StrFormat(
        "%-6s %-16s %-5s %12s %12s %12s %7s  %s\n", r.id, r.metric, r.unit,
        Num(r.measured), Num(r.predicted), Num(r.bound),
        r.ape ? absl::StrFormat("%.1f%%", *r.ape * 100) : "", r.status);
  }
  auto print_group = [&](const GroupStats& g) {
    out << absl::StrFormat("  %-28s n=%-4d median APE %6.1f%%  p90 APE %6.1f%%  sound %6.1f%%\n",
                           g.name, g.evaluated, g.median_ape * 100, g.p90_ape * 100,
                           g.soundness * 100);
  };
  out << absl::StrFormat("\nevaluated %d, skipped %d\n", summary.evaluated,
                         summary.skipped);
  print_group(summary.overall);
  if (summary.end_to_end) print_group(*summary.end_to_end);
  if (summary.overall.bound_known < summary.evaluated) {
    out << absl::StrFormat(
        "bound unknown for %d rows: their operands fit an on-chip tier (L2) "
        "whose bandwidth no source gives, so they are left out of soundness "
        "(bound column empty)\n",
        summary.evaluated - summary.overall.bound_known);
  }
  if (summary.in_sample > 0) {
    out << absl::StrFormat(
        "in-sample: %d of %d evaluated rows were predicted by a profile fitted "
        "on them, so these errors are in-sample (optimistic); "
        "--cross-validate prints leave-one-platform-out figures\n",
        summary.in_sample, summary.evaluated);
  }
  out << "by metric:\n";
  for (const auto& g : summary.by_metric) print_group(g);
  out << "by hardware family:\n";
  for (const auto& g : summary.by_family) print_group(g);
  out << "by framework:\n";
  for (const auto& g : summary.by_framework) print_group(g);
  out << "rows whose measurement beats the bound by more than 5%:";
  if (summary.beats_bound.empty()) out << " none";
  out << '\n';
  for (const RowResult& r : summary.beats_bound) {
    out << absl::StrFormat("  %s %s %s measured %s %s, bound %s (see docs/validation.md)\n",
                           r.id, r.hardware_id, r.metric, Num(r.measured), r.unit,
                           Num(r.bound));
  }
}

}  // namespace ridgeline::calibration
