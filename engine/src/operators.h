// The operator graph of one forward step, as FLOPs and bytes per operand
// class, before placement and timing. Internal to the engine.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "collectives.h"
#include "ridgeline/engine/result.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::engine::internal {

// FLOPs per attention score for the softmax (max, subtract, exp, sum,
// divide), and the FLOPs of fused attention over `scores` (query, key)
// pairs: QK^T (2 x dqk) + softmax + score x V (2 x dv). The operator graph
// and the kernel models count attention with these.
inline constexpr double kSoftmaxFlopsPerScore = 5;
inline double AttentionFlops(double scores, double dqk, double dv) {
  return scores * (2 * dqk + 2 * dv + kSoftmaxFlopsPerScore);
}

// Operand class indices into per-class arrays (OpCost::read, ...).
inline constexpr int kWeights = static_cast<int>(OperandClass::kWeights);
inline constexpr int kKv = static_cast<int>(OperandClass::kKvCache);
inline constexpr int kAct = static_cast<int>(OperandClass::kActivations);

// Layers that share one shape. Names are "" when all layers are alike.
struct LayerGroup {
  std::string_view name;
  int64_t layers = 0;
  bool moe = false;
  // Sliding window in tokens, or the chunk size of chunked layers
  // (spec.chunked); 0 = global attention.
  int64_t window = 0;
  // The layers' shape (attention and FFN kinds, KV heads, FFN width).
  LayerSpec spec;
};

// The resolved inputs of the graph: model, byte widths, math types.
struct GraphContext {
  // The model as one device holds it: the tensor-parallel shard
  // (TensorParallelShard) when parallelism.tensor_parallel > 1.
  const ModelConfig* model = nullptr;
  int64_t tensor_parallel = 1;
  int64_t pipeline_parallel = 1;  // stages; > 1 adds the stage-to-stage sends
  int64_t replica_devices = 1;    // the group pipeline sends cross
  // Attention data-parallel expert parallelism: devices of the group (1:
  // none). The graph is one device's; its experts see `expert_parallel`
  // times its tokens.
  int64_t expert_parallel = 1;
  AnalysisOptions options;
  double weight_bytes = 2;  // per element
  double act_bytes = 2;
  double kv_bytes = 2;
  MathType matmul_math = MathType::kBf16;     // executed on the compute unit
  // The weights' format has no native math (GGUF, intN-gG): weight-bearing
  // matmuls dequantise them in the kernel (Efficiency::
  // dequantized_compute_share).
  bool weights_dequantized = false;
  MathType attention_math = MathType::kBf16;  // activation precision
  MathType elementwise_math = MathType::kBf16;
  // Uniform models: at most 4, (dense, MoE) x (global, sliding), inline.
  // Per-layer models (ModelConfig::layers) have one group per distinct
  // LayerSpec, in order of first appearance.
  absl::InlinedVector<LayerGroup, 4> groups;
};

// Builds the context: groups, byte widths, executed math types. Errors when
// the hardware has no peak for the math the formats need. `model` is what
// the graph is built from (s.model, or its tensor-parallel shard); it must
// outlive the context.
absl::StatusOr<GraphContext> MakeGraphContext(const Scenario& s,
                                              const ModelConfig& model);

// Index into g.groups of the group decoder layer `layer` (0-based) belongs
// to: its (moe, window) combination.
int GroupOfLayer(const GraphContext& g, int64_t layer);

// One device's share of `m` under tensor parallelism `tp`: attention heads,
// KV heads (at least 1: fewer than tp are replicated), FFN and expert widths
// and the vocabulary divided by tp (rounded up); hidden size, norms, MLA
// latents and routers replicated.
ModelConfig TensorParallelShard(const ModelConfig& m, int64_t tp);

// One operator in one step, all `layers` instances together.
struct OpCost {
  OpKind kind;
  OpClass op_class;
  std::string_view layer_group;
  // Index into GraphContext::groups of the decoder layers this op belongs
  // to; -1 for the ops outside them (embedding and its all-reduce, final
  // norm, LM head, pipeline sends).
  int group_index = -1;
  int64_t layers = 1;
  int kernels_per_layer = 1;  // kernels launched per instance
  MathType math;
  int64_t rows = 0;  // tokens per matmul (GEMM vs GEMV; OpShape::tokens)
  double flops = 0;
  std::array<double, kOperandClassCount> read{};
  std::array<double, kOperandClassCount> write{};
  // Bytes this device sends plus receives over the interconnect (all-reduce).
  double link_bytes = 0;
  // The collective that traffic is (collectives.h): kind, the devices of
  // its group, the bytes of one call and the calls in this op (per layer
  // count x layers). The roofline times it on the link the group crosses.
  Collective collective = Collective::kNone;
  int64_t group = 1;
  double call_bytes = 0;
  double calls = 0;
  // Attention-like ops whose cost grows with the KV length (linearly in
  // decode, where `window` caps it).
  bool kv_dependent = false;
  int64_t window = 0;
  bool chunked = false;  // `window` is a chunk size (chunked attention)
  // Operand whose home tier decides where processing-in-memory could run it;
  // only weight-bearing matmuls and attention qualify.
  bool pim_candidate = false;
  OperandClass dominant = OperandClass::kWeights;
  // A weight-bearing matmul that dequantises its weights in the kernel
  // (GraphContext::weights_dequantized).
  bool dequantized = false;
};

// The shape of one step: `seqs` sequences each adding `new_tokens` tokens.
// For KV-dependent ops either `kv_length` (context after the step; the
// causal pairs and the window follow from it) or, when `linear_x` >= 0, the
// decode form with exactly `linear_x` keys read and attended per query (used
// to get the per-step linear coefficients).
struct MixedAttention;
struct StepShape {
  int64_t seqs = 1;
  int64_t new_tokens = 1;
  int64_t kv_length = 1;
  double linear_x = -1;
  // A mixed step (StepEvaluator::Step): sequences at their own contexts.
  // When set, the step's tokens and attention sums come from here and
  // new_tokens / kv_length / linear_x are unused; seqs is the sequence count.
  const MixedAttention* mixed = nullptr;
};

// The per-sequence terms of a mixed step's attention, summed over its
// sequences: a sequence of n new tokens over c cached adds CausalPairs(n,
// c + n, w) pairs and KeysSeen(n, c + n, w) keys (w = 0: no window, c + n).
// Index 0: global layers; 1: sliding-window (or chunked) layers; 2: DSA's
// sparse attention (each query attends to at most index_topk keys: pairs
// CausalPairs(n, c + n, topk), keys min(c + n, n x topk)).
struct MixedAttention {
  double tokens = 0;  // new tokens of the step (sum over sequences)
  // Sequences adding one token to a non-empty cache: recurrent layers run
  // their recurrent form for them, the chunked form for the others.
  double decode_sequences = 0;
  std::array<double, 3> pairs{};
  std::array<double, 3> keys{};
};
inline constexpr int kMixedSparse = 2;

// Keys DSA's sparse attention reads for `n` new queries ending at
// `kv_length`: the union of their top-k sets, at most the context.
inline double SparseKeysSeen(double n, double kv_length, double topk) {
  return std::min(kv_length, n * topk);
}

// The ops of one step. Inline capacity covers every catalog model (14 ops
// for a dense model, about 30 for two layer groups with unfused attention),
// so building a step allocates nothing; larger graphs spill to the heap.
inline constexpr size_t kInlineOps = 32;
using OpList = absl::InlinedVector<OpCost, kInlineOps>;

// Appends every op of the step in execution order.
void BuildStepOps(const GraphContext& g, const StepShape& shape, OpList* out);
void BuildStepOps(const GraphContext& g, const StepShape& shape,
                  std::vector<OpCost>* out);

// Expected distinct routed experts touched by `tokens` tokens each choosing
// top-k of E experts under uniform routing: E * (1 - (1 - k/E)^tokens).
double ExpectedExpertsTouched(double experts, double top_k, double tokens);

// Keys of a chunked layer that queries at positions 0 .. p - 1 see in
// total: query q sees (q mod c) + 1 keys (its own chunk up to itself), so
// each full chunk adds c(c + 1)/2 and the partial one r(r + 1)/2.
inline double ChunkedPrefixPairs(double p, double chunk) {
  const double full = std::floor(p / chunk);
  const double r = p - full * chunk;
  return full * chunk * (chunk + 1) / 2 + r * (r + 1) / 2;
}

// Causal (query, key) pairs per sequence and head when `n` new tokens are
// added to a context that ends at `kv_length`, each query seeing at most
// `window` keys (0: no window), or, `chunked`, only the keys of its own
// chunk of `window` tokens. Inline: a mixed step sums it per sequence.
inline double CausalPairs(double n, double kv_length, double window,
                          bool chunked = false) {
  const double prior = std::max(kv_length - n, 0.0);
  if (window <= 0) return n * prior + n * (n + 1) / 2;
  if (chunked) {
    return ChunkedPrefixPairs(kv_length, window) -
           ChunkedPrefixPairs(prior, window);
  }
  // Queries 1..k still see their whole context (prior + i <= window).
  const double k = std::clamp(window - prior, 0.0, n);
  return k * prior + k * (k + 1) / 2 + (n - k) * window;
}

// Keys any of `n` new queries ending at `kv_length` can see, so the keys a
// step reads once each: the whole context, the last window + n - 1 of it,
// or (chunked) those from the start of the first query's chunk. Decode
// (n = 1) on a chunked layer: ((kv_length - 1) mod chunk) + 1.
inline double KeysSeen(double n, double kv_length, double window,
                       bool chunked = false) {
  if (window <= 0) return kv_length;
  if (chunked) {
    const double prior = std::max(kv_length - n, 0.0);
    return kv_length - std::floor(prior / window) * window;
  }
  return std::min(kv_length, window + n - 1);
}

// KV-cache bytes stored per sequence at context length `tokens`, sliding
// layers capped at their window, chunked layers at one chunk (the most a
// runtime that keeps only the current chunk holds at any point up to
// `tokens`; vLLM allocates chunked layers that way), plus the recurrent
// layers' constant state (StateBytesPerSequence).
double KvBytesPerSequence(const GraphContext& g, double tokens);
// Recurrent state (Mamba-2, linear attention) one sequence keeps, in KV-cache
// precision; 0 for a model without recurrent layers.
double StateBytesPerSequence(const GraphContext& g);

// Decode: a KV-dependent op at step context L is base + x * slope with x
// the keys read (the window caps it).
double KeysRead(const OpCost& op, int64_t kv_length);
// The most keys the op reads at any decode step of context kv_first ..
// kv_last (the last one unless a chunked layer starts a new chunk).
double PeakKeysRead(const OpCost& op, int64_t kv_first, int64_t kv_last);

// LoRA on one layer of `grp` (the device's shard): the input and output
// widths of the target modules it wraps, summed over those modules. The
// shrink matmul is in x rank, the expand rank x out.
struct LoraWidths {
  double in = 0;
  double out = 0;
};
LoraWidths LoraWidthsOf(const GraphContext& g, const LayerGroup& grp);
// One adapter's bytes on one device (every layer, every target module, in
// activation precision); 0 without LoRA.
double LoraBytesPerAdapter(const GraphContext& g);

// `out` = base + x * slope (FLOPs and traffic; other fields untouched).
void OpAt(const OpCost& base, const OpCost& slope, double x, OpCost* out);

// The decode graph of `batch` sequences as `base` (no keys read) and, for
// the KV-dependent ops, `slope` (per key read); other ops' slope entries are
// unused. Every decode step of Analyze and StepEvaluator::Decode come from
// here.
void BuildDecode(const GraphContext& g, int64_t batch, int64_t kv_length,
                 OpList* base, OpList* slope);

}  // namespace ridgeline::engine::internal
