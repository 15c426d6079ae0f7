// The outcome of one analysis. Plain data.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ridgeline/engine/formats.h"
#include "ridgeline/engine/hardware.h"
#include "ridgeline/engine/prices.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::engine {

enum class Phase : uint8_t { kPrefill = 0, kDecode };
std::string_view PhaseName(Phase p);  // "prefill", "decode"

enum class Bound : uint8_t { kCompute = 0, kMemory, kOverhead, kInterconnect };
// "compute", "memory", "overhead", "interconnect"
std::string_view BoundName(Bound b);

enum class OpKind : uint8_t {
  kEmbedding = 0,
  kNorm,  // RMSNorm / LayerNorm before attention and FFN
  kQProjection,
  kKProjection,
  kVProjection,
  kMlaQDown,  // MLA latent projections
  kMlaQUp,
  kMlaKvDown,
  kMlaKvUp,  // non-absorbed only
  kRope,
  kQk,  // Q K^T (unfused attention)
  kSoftmax,
  kAttentionV,
  kFlashAttention,  // fused QK^T + softmax + AV
  kOutProjection,
  kResidualAdd,
  kFfnUpGate,      // gated FFN up+gate (plain FFN: up)
  kFfnActivation,  // SiLU/GELU and gating multiply
  kFfnDown,
  kMoeRouter,
  kMoeRoutedExperts,  // up+gate+down of the touched routed experts
  kMoeSharedExperts,
  kFinalNorm,
  kLmHead,
  kAllReduce,          // tensor parallelism: sum partial outputs over devices
  kPipelineSend,       // pipeline parallelism: activations to the next stage
  kAllToAll,           // expert parallelism: token dispatch and combine
  kLinearReplacement,  // Nemotron NAS: attention or FFN replaced by one matmul
  // Recurrent mixers (Mamba-2, linear attention) and DeepSeek Sparse
  // Attention; formulas and sources in operators_recurrent.cc.
  kMambaInProjection,  // hidden -> z, x, B, C, dt
  kShortConv,          // depthwise causal conv1d (+ SiLU)
  kSsmScan,            // SSD: chunked scan (prefill), state update (decode)
  kGatedNorm,          // RMSNorm of the mixer output times its gate
  kLinearAttentionInProjection,  // hidden -> q, k, v, gates
  kLinearAttention,       // chunked (prefill) / recurrent (decode) update
  kDsaIndexerProjection,  // index queries, index key, head weights
  kDsaIndexerScore,       // every query x every cached index key, top-k
  kLoraAdapters,       // LoRA: shrink + expand matmuls of the step's adapters
  kDraftInputFusion,   // MTP / EAGLE head: [embedding; hidden] -> hidden
};
inline constexpr int kOpKindCount = 38;
std::string_view OpKindName(OpKind k);  // snake_case: "q_projection", "flash_attention", ...

// Bytes read and written, by operand class and memory tier.
struct Traffic {
  double read = 0;
  double write = 0;
};
using TrafficTable =
    std::array<std::array<Traffic, kMaxTiers>, kOperandClassCount>;

// One operator in one step (or summed over a phase), totalled over the
// `layers` layers it occurs in.
struct OpResult {
  OpKind kind;
  OpClass op_class;
  // Layer variant, "" when all layers are alike: "sliding" / "global"
  // (Gemma-2), "dense" / "moe" (DeepSeek first dense layers).
  std::string_view layer_group;
  int64_t layers = 1;       // instances in the step (1 for embedding / LM head)
  MathType math;            // the type it executed in
  double flops = 0;
  TrafficTable traffic{};   // bytes
  double bytes = 0;         // sum of traffic
  double intensity = 0;     // flops / bytes
  double compute_seconds = 0;
  double memory_seconds = 0;
  // Bytes over the device-to-device link / its bandwidth (all-reduce only).
  double interconnect_seconds = 0;
  double overhead_seconds = 0;  // kernel launch / per-kernel overhead
  double seconds = 0;  // max(compute, memory, interconnect) + overhead
  Bound bound = Bound::kMemory;
  int executed_in_tier = -1;    // -1: the compute unit; else a PIM tier index
  double attained_flops_per_second = 0;
};

struct StepTotals {
  double flops = 0;
  double bytes = 0;
  double compute_seconds = 0;  // sum over ops
  double memory_seconds = 0;   // sum over ops
  double interconnect_seconds = 0;  // sum over ops (tensor parallelism)
  double seconds = 0;          // sum over ops + per-step overhead
};

// One forward pass, or a phase summed over its steps.
struct StepResult {
  Phase phase;
  int64_t steps = 1;         // forward passes summed here
  int64_t tokens = 0;        // tokens processed per step (batch x new tokens)
  int64_t kv_length = 0;     // context length at the (last) step
  std::vector<OpResult> ops;
  StepTotals totals;
};

struct TierUsage {
  int tier = 0;
  std::string name;
  double capacity_bytes = 0;
  // Bytes that sit in this tier: weights, KV (longest context), peak
  // activations. Never more than capacity_bytes in all.
  std::array<double, kOperandClassCount> bytes{};
  double used_bytes = 0;
  // Bytes that would have to sit here but do not fit (a pinned class beyond
  // its tier's room; an unpinned class beyond every tier, counted at the
  // last tier, where it is timed as if it were): how much is missing.
  std::array<double, kOperandClassCount> missing_bytes{};
};

struct MemoryFootprint {
  std::vector<TierUsage> tiers;
  std::array<double, kOperandClassCount> required_bytes{};
  // Of required_bytes[kKvCache]: recurrent state (Mamba-2, linear
  // attention), constant per sequence whatever its context.
  double state_bytes = 0;
  bool fits = true;
  std::string not_fitting;  // "" or why: "weights need 140.0 GB; 80.0 GB free in all tiers"
  // "" or where each operand class sits off the device (host memory over a
  // link, flash), e.g. "weights 3.2 GB of 16.1 GB (20%) in host DRAM over
  // PCIe 4.0 x16 (32.0 GB/s)": "fits" then still means slow.
  std::string spilled;
  // Per operand class: some of its bytes sit off the device (the classes
  // `spilled` names).
  std::array<bool, kOperandClassCount> off_device{};
};

struct Bottleneck {
  Phase phase;
  OpKind op;
  std::string_view layer_group;
  Bound bound;
  double share_of_phase_time = 0;  // 0..1
  double intensity = 0;            // flops/byte of that op
  double ridge_point = 0;          // flops/byte where its roofs meet; 0 = unknown
  std::string text;                // one sentence with the numbers
};

struct Suggestion {
  std::string kind;    // "weights-format", "kv-format", "batch", "tier"
  std::string change;  // "weights int4-g128", "batch 24", "weights in HBM"
  std::string metric;  // "decode_tokens_per_second", "ttft_seconds", ...
  double before = 0;
  double after = 0;
  double gain = 0;     // improvement factor, > 1 is better
  std::string text;    // "int4 weights: 3.4x decode tok/s"
};

enum class EnergyMethod : uint8_t {
  kPerOpAndByte = 0,  // FLOPs x J/op + bytes x J/byte + idle power x time
  kBoardPower,        // TDP x time: an upper bound when per-op energy is unknown
  kUnknown,
};
std::string_view EnergyMethodName(EnergyMethod m);

struct Economy {
  EnergyMethod energy_method = EnergyMethod::kUnknown;
  std::optional<double> prefill_joules;
  std::optional<double> decode_joules;
  std::optional<double> joules_per_output_token;
  std::optional<double> usd_per_million_output_tokens;     // needs price or power
  // What usd_per_million_output_tokens charges the devices at (prices.h):
  // kNone when it is unset.
  CostBasis cost_basis = CostBasis::kNone;
  std::optional<double> g_co2e_per_million_output_tokens;  // needs power
  // What the figures leave out ("price unknown: $/Mtoken counts energy
  // only; ..."), "" when complete.
  std::string note;
};

// Speculative decoding over the decode phase (options.speculative). The
// decode phase of G = generated - 1 tokens takes G / E speculative steps in
// expectation (E = accepted_tokens_per_step), step j starting at context
// prompt + 1 + j E; their time is the trapezoid over 9 contexts evenly
// spaced from the first step's to the last's (exact where the step time is
// affine in the context, as it is within one roofline regime).
struct SpeculativeSummary {
  bool enabled = false;
  std::string method;                   // "mtp:1", "draft:llama-3.2-1b:4"
  double accepted_tokens_per_step = 1;  // E, per sequence
  double steps = 0;                     // G / E
  double draft_seconds_per_step = 0;    // mean over the steps
  double verify_seconds_per_step = 0;   // mean over the steps
  double draft_prefill_seconds = 0;     // the draft over the prompt (in TTFT)
  double draft_bytes = 0;  // the draft beside the target, per device
  // Plain decode's mean TPOT, and it over the speculative mean TPOT (> 1:
  // speculation pays).
  double baseline_tpot_mean_seconds = 0;
  double speedup = 1;
};

// LoRA adapters (options.lora): their memory and cold loads.
struct LoraSummary {
  bool enabled = false;
  double adapter_bytes = 0;   // one adapter, per device
  double resident_bytes = 0;  // adapters x adapter_bytes (in the weights)
  // One cold adapter over the host link; 0 when the hardware has none.
  double cold_load_seconds = 0;
  // cold_fraction x cold_load_seconds: the expected TTFT it adds (included).
  double ttft_added_seconds = 0;
};

struct AnalysisResult {
  std::string model_id;
  std::string hardware_id;
  MathType matmul_math;       // executed math type of the matmuls
  double ridge_point = 0;     // flops/byte: matmul peak / weight-tier bandwidth;
                              // 0 when the compute roof is unknown

  StepResult prefill;
  StepResult decode;              // all decode steps summed per op
  StepResult decode_first_step;   // kv_length = prompt + 1... see analyze.cc
  StepResult decode_last_step;

  double ttft_seconds = 0;
  double tpot_mean_seconds = 0;
  double tpot_first_seconds = 0;
  double tpot_last_seconds = 0;
  double e2e_seconds = 0;
  double prefill_tokens_per_second = 0;            // batch x prompt / ttft
  double decode_tokens_per_second_per_sequence = 0; // 1 / tpot_mean
  double decode_tokens_per_second_total = 0;        // batch / tpot_mean

  // The whole model's (not a tensor-parallel shard's) parameter counts.
  ParameterCounts parameters;
  // Parallelism (Scenario::parallelism). Every time above is one replica's
  // latency; data-parallel replicas add throughput, not speed.
  int64_t devices = 1;  // all replicas: data x pipeline x stage devices
  double deployment_prefill_tokens_per_second = 0;  // replicas x prefill
  double deployment_decode_tokens_per_second = 0;   // replicas x decode total
  // Pipeline prefill: the idle share (stages - 1) / micro_batches; TTFT =
  // prefill totals x (micro_batches + stages - 1) / (micro_batches x
  // stages). 0 without pipeline parallelism.
  double pipeline_bubble_fraction = 0;

  MemoryFootprint memory;
  Bottleneck bottleneck;
  std::vector<Suggestion> suggestions;
  Economy economy;
  bool pure_roofline = true;  // no efficiency factors or overheads applied
  // False when the hardware publishes no compute peak at all: every op's
  // compute_seconds is 0, times are memory-roof times (still an upper bound
  // on speed, but compute-bound phases such as prefill are not bounded from
  // below by compute), ridge_point is 0 and no op is reported compute-bound.
  bool compute_roof_known = true;
  // What the caller should know but is not an error, one sentence each:
  // e.g. prompt + generated tokens beyond the model's max_context (RoPE
  // scaling may allow it; the model's quality there is not modelled).
  std::vector<std::string> warnings;
  SpeculativeSummary speculative;
  LoraSummary lora;
};

}  // namespace ridgeline::engine
