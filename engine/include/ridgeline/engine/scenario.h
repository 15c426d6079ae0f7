// Everything one analysis needs: model, hardware, workload, formats,
// placement pins, efficiency (calibration) and economics.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "ridgeline/engine/formats.h"
#include "ridgeline/engine/hardware.h"
#include "ridgeline/engine/kernel_model.h"
#include "ridgeline/engine/lora.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/engine/speculative.h"

namespace ridgeline::engine {

struct Workload {
  int64_t batch = 1;              // sequences decoded together, 1..65536
  int64_t prompt_tokens = 512;    // per sequence, 1..10,000,000
  int64_t generated_tokens = 128; // per sequence, 0..10,000,000 (0: prefill only)
};

struct Precision {
  NumberFormat weights;      // default bf16
  NumberFormat activations;  // default bf16
  NumberFormat kv_cache;     // default bf16
};
Precision DefaultPrecision();  // bf16 / bf16 / bf16

enum class OperandClass : uint8_t { kWeights = 0, kKvCache, kActivations };
inline constexpr int kOperandClassCount = 3;
std::string_view OperandClassName(OperandClass c);  // "weights", "kv_cache", "activations"

// Optional tier index per operand class; unset = fastest tier with room.
// Pinned classes are placed first, then unpinned ones (weights, KV cache,
// activations) fill the fastest tiers with room and spill to slower ones.
struct PlacementPins {
  std::array<std::optional<int>, kOperandClassCount> tier;
};

// Efficiency factors and overheads, usually from a calibration profile.
// Defaults are the pure roofline: the result is an upper bound on speed.
struct Efficiency {
  std::array<double, kOpClassCount> compute{1, 1, 1, 1};  // (0, 1] per OpClass
  std::array<double, kOpClassCount> memory{1, 1, 1, 1};   // (0, 1] per OpClass
  double per_step_overhead_seconds = 0;    // once per forward pass
  // Once per request batch, before its first token (admission, input upload,
  // the first sampling sync): part of TTFT, not of the decode steps.
  double per_request_overhead_seconds = 0;
  double per_kernel_overhead_seconds = 0;  // per op instance per layer
  // (0, 1]: the share of the published link bandwidth a runtime's
  // collectives reach (NCCL's bus bandwidth runs below the link's rate);
  // collective time is divided by it. Fitted by serving profiles.
  double link = 1;
  // Seconds per collective call (all-reduce, all-gather, all-to-all, send),
  // >= 0: its launch and the synchronisation of the group, paid after the
  // op (not hidden under the link time). Fitted by serving profiles.
  double collective_call_seconds = 0;
  // [0, 1]: how the sustained share of the compute peak follows the part's
  // power per unit of peak (power_limit.h). A part whose TDP is small next
  // to its peak rate runs its math units below the clock the peak assumes.
  // The compute etas hold at 1 W per peak TFLOP/s; an op in math m on a part
  // of TDP P runs at min(1, eta_c x (P / peak_m / 1 W per TFLOP/s)^this).
  // 0 = none, and none on a part without a published TDP. Fitted on prefill
  // rows that span parts (calibration::FitEfficiency).
  double compute_power_exponent = 0;
  // (0, 1]: the compute eta of weight-bearing matmuls whose weights have no
  // native math (GGUF, intN-gG: dequantised in the kernel) is this share of
  // the class's eta; per weight format where fitted (a k-quant's super-block
  // scales cost more than gguf-q4_0's one scale per block), this for the
  // others. 1 = no penalty.
  double dequantized_compute_share = 1;
  std::map<std::string, double> dequantized_compute_share_by_format;
  // The share for weights stored in `weight_format` (NumberFormat::name).
  double DequantizedComputeShare(const std::string& weight_format) const {
    auto it = dequantized_compute_share_by_format.find(weight_format);
    return it != dequantized_compute_share_by_format.end()
               ? it->second
               : dequantized_compute_share;
  }
  // The memory etas were fitted net of inline ECC's check bits: memory
  // traffic then moves at (1 - MemoryTier::inline_ecc_share) of each
  // tier's rate before the eta applies (the part as shipped, ECC on where
  // that is its default). False (default, and the bound): the raw rate.
  bool inline_ecc = false;
  // Per-call costs and shape efficiencies fitted from kernel tables
  // (kernel_model.h); when present they replace the per-class etas and the
  // per-kernel overhead for the kernels and the operator graph.
  KernelModel kernel;
  std::string profile_name;                // "" = none (pure roofline)
  // (0, 1]: a serving step is never timed slower than the pure roofline's
  // step / this (serving::EngineStepCost), the floor of a profile used
  // where it was not fitted; 0 = no floor.
  double min_speed_fraction = 0;
};

// Defaults for energy, cost and carbon; each default's source is beside its
// definition in scenario.cc.
struct Economics {
  double electricity_usd_per_kwh;
  double pue;
  double grid_g_co2e_per_kwh;
  double amortization_years;
  double utilization;  // fraction of wall time the device serves requests
  // Device price overrides for this scenario's part (a request's, per
  // part): a rental price wins over a purchase price. Unset: the part's
  // dated rental list price, else its purchase price (DevicePriceOf,
  // prices.h).
  std::optional<double> usd_per_device_hour;  // ranges::kUsdPerDeviceHour
  std::optional<double> price_usd;            // ranges::kPriceUsd, per device
  // false: the rental list is not consulted: a hypothetical part (an
  // explore design with hardware axes) costs its purchase price or energy.
  bool list_rental_price = true;
};
Economics DefaultEconomics();

struct AnalysisOptions {
  bool flash_attention = true;  // one fused op instead of QK^T, softmax, AV
  bool mla_absorbed = true;     // MLA with W_UK/W_UV absorbed into Q/O
  // What-if suggestions (extra evaluations): read by Analyze's callers,
  // which add them with explore::AddSuggestions; Analyze itself ignores it.
  bool suggestions = true;
  // Ignore calibration and plugin hooks: pure roofline (the speed bound).
  bool pure_roofline = false;
  // Tokens per step below which a matmul counts as GEMV/skinny GEMM.
  int64_t gemv_max_tokens = 64;
  // FP16 matmuls accumulate in FP16 (as llama.cpp's cuBLAS path does): they
  // run at the hardware's fp16-acc16 peak where it has one (GeForce: twice
  // its FP16 rate, which is the FP32-accumulate rate), else at FP16.
  bool fp16_accumulation = false;
  // Prompt tokens per sequence per prefill step (chunked prefill). 0 = the
  // default: the whole prompt when its activations fit beside the weights
  // and KV cache, else kDefaultPrefillChunkTokens. The activation footprint
  // is the largest chunk's; TTFT changes only by the attention's re-read of
  // earlier chunks' KV and by one per-step overhead per chunk.
  int64_t prefill_chunk_tokens = 0;
  // Asked by the long loops (decode steps walked one by one under a plugin
  // hook, prefill chunks, suggestions' re-analyses) whether to stop: the
  // caller's deadline passed or it went away. True ends the analysis with
  // CANCELLED (the caller knows which of the two it was). Empty: never
  // stops. Polled every few steps from the analysing thread; must be
  // thread-safe and cheap.
  std::function<bool()> should_stop;
  // Decode with a draft and one verifying target pass per step (off by
  // default). Errors name "options.speculative.*".
  SpeculativeDecoding speculative;
  // LoRA adapters on the base model (off by default; "options.lora.*").
  LoraAdapters lora;
};

// The chunk runtimes use when a prompt is processed in pieces (checked in
// the sources):
// - llama.cpp common/common.h (ggml-org/llama.cpp at 001d906a):
//   `n_batch = 2048; // logical batch size for prompt processing`
//   (`--batch-size`), split into `n_ubatch = 512` physical batches;
// - vLLM vllm/engine/arg_utils.py (vllm-project/vllm at 99d7eb5d, the
//   v0.11 line), EngineArgs defaults with chunked prefill:
//   max_num_batched_tokens 2048 for `vllm serve` (OPENAI_API_SERVER) on
//   GPUs under 70 GiB and on A100, 8192 on larger ones (H100, MI300X); 8192
//   / 16384 for the offline LLM class.
// 2048 is llama.cpp's logical batch and `vllm serve`'s budget below 70 GiB;
// a runtime with larger chunks holds more activations but re-reads less KV.
inline constexpr int64_t kDefaultPrefillChunkTokens = 2048;

// How many devices serve the model together. Tensor parallelism (Megatron
// style): attention heads, FFN / expert width and the vocabulary are split
// over the devices, norms and the residual stream are replicated, and each
// layer all-reduces its attention and FFN outputs over the interconnect
// (plus one all-reduce of the vocabulary-parallel embedding per step). Every
// time, byte and capacity in a result is per device; energy, cost and
// carbon cover all devices.
struct Parallelism {
  // 1..256; must divide the attention heads, and the KV heads must divide
  // or be divided by it (fewer KV heads than devices are replicated).
  int64_t tensor_parallel = 1;
  // Pipeline stages, 1..256 and <= the model's layers: each stage holds
  // ceil(layers / stages) layers on its own tensor-parallel group.
  int64_t pipeline_parallel = 1;
  // Prefill micro-batches per pipeline, 1..65536; 0 = one per stage.
  int64_t pipeline_micro_batches = 0;
  // Devices the routed experts are spread over, 1..256 (divides experts).
  // Without attention_data_parallel it equals tensor_parallel (or is 1):
  // experts spread over the tensor-parallel devices cost, in expectation,
  // what tensor-sliced experts cost, so the graph is tensor parallelism's.
  int64_t expert_parallel = 1;
  // DeepSeek-V3 style (tensor_parallel 1): each of the expert_parallel
  // devices runs the whole attention on its own batch, and the workload's
  // batch (a step's sequences) is ONE device's; the others run alike. Each
  // device holds experts / ep routed experts, which see the tokens of all
  // ep devices; tokens go to their experts' devices and back with two
  // all-to-alls per MoE layer.
  bool attention_data_parallel = false;
  // Whole replicas, 1..65536: throughput adds up, latency does not.
  int64_t data_parallel = 1;
};

// Devices of one pipeline stage (max of the tensor- and expert-parallel
// groups), of one replica (stages x stage devices) and of the deployment
// (replicas x replica devices).
int64_t StageDevices(const Parallelism& p);
int64_t ReplicaDevices(const Parallelism& p);
int64_t TotalDevices(const Parallelism& p);

struct Scenario {
  ModelConfig model;
  Hardware hardware;
  Workload workload;
  Parallelism parallelism;
  Precision precision = DefaultPrecision();
  PlacementPins pins;
  Efficiency efficiency;
  Economics economics = DefaultEconomics();
  AnalysisOptions options;
};

// INVALID_ARGUMENT naming "workload.batch" etc. with the allowed range and
// the value received. Also validates model and hardware.
absl::Status ValidateScenario(const Scenario& s);
// The parallelism part of ValidateScenario (model and hardware already
// valid): ranges, experts dividing, stages <= layers, groups in whole nodes.
absl::Status ValidateParallelism(const Scenario& s);

}  // namespace ridgeline::engine
