// The scheduler's inner loop: the roofline time of one forward step, without
// a whole analysis around it. Steps pay the per-step and per-kernel
// overheads; efficiency.per_request_overhead_seconds is the scheduler's to
// add once per admitted request.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ridgeline/engine/result.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::engine {

// One sequence of a mixed step (continuous batching, chunked prefill).
struct StepSequence {
  // Tokens already in this sequence's KV cache before the step,
  // 0..10,000,000 (0 for a prompt's first chunk).
  int64_t context_tokens = 0;
  // Tokens the step adds: 1 = a decode token, N = a prefill chunk of N
  // tokens; 1..10,000,000.
  int64_t new_tokens = 1;
};

// One forward pass: totals over its ops, in the units of StepTotals.
struct StepTiming {
  Phase phase = Phase::kDecode;
  int64_t batch = 0;      // sequences in the step
  int64_t tokens = 0;     // tokens processed (batch x new tokens per sequence)
  int64_t kv_length = 0;  // context length after the step
  double flops = 0;
  double bytes = 0;             // all tiers and operand classes
  double compute_seconds = 0;   // sum over ops
  double memory_seconds = 0;    // sum over ops
  double interconnect_seconds = 0;  // sum over ops (tensor parallelism)
  double overhead_seconds = 0;  // per-kernel overheads + per-step overhead
  double seconds = 0;           // sum over ops + per-step overhead
  // The roof that dominates the summed times: overhead when it exceeds
  // every sum, else the largest of interconnect, compute (when > 0) and
  // memory.
  Bound bound = Bound::kMemory;
  // Step(): the longest context after the step exceeds the model's
  // max_context (computed anyway; callers warn, as Analyze does).
  bool beyond_model_context = false;
  // Pipeline parallelism: `seconds` is the step's latency through every
  // stage in turn; this is the steady-state interval between steps once the
  // pipeline is full (every stage busy with another step): the slowest
  // stage's ops plus its send to the next stage plus the per-step overhead,
  // so a full pipeline finishes 1 / interval steps per second. Stage s of p
  // runs layers [floor(s L / p), floor((s + 1) L / p)), the embedding runs
  // on the first, the final norm and LM head on the last. Equals `seconds`
  // without pipeline parallelism.
  double pipeline_interval_seconds = 0;
  int64_t pipeline_slowest_stage = 0;  // that stage, 0-based
  // Step(): bytes the step reads or writes in tiers off the device (host
  // memory over a link, flash): what the placement spilled. 0 when
  // everything it touches is on the device.
  double off_device_bytes = 0;
  // Step(): the step's new tokens exceed the capacity's max_step_tokens, so
  // its activations exceed what the placement reserved (timed as placed).
  bool beyond_step_reservation = false;
  // Speculative decoding (options.speculative). A decode sequence's step is
  // k draft forwards (draft_seconds) and one target pass over its k + 1
  // tokens (verify_seconds: weights read once, attention over context +
  // k + 1, K/V written for all k + 1 slots as the runtimes' kernels do;
  // rejected ones are overwritten later). The totals above cover both;
  // each decode sequence gains accepted_tokens_per_sequence tokens in
  // expectation (ExpectedTokensPerStep). Without speculation: 1, 0 and
  // `seconds`. Prefill chunks also run through the draft (it needs their
  // KV / hidden states).
  double accepted_tokens_per_sequence = 1;
  double draft_seconds = 0;
  double verify_seconds = 0;
};

// What a scheduler's placement reserves room for: the KV cache of
// `max_sequences` sequences at `max_context_tokens` each, and the
// activations of the largest step the scheduler sends, `max_step_tokens`
// new tokens (its token budget per step, vLLM's max_num_batched_tokens),
// not of a prefill of every sequence at once. Activations are placed on the
// device ahead of the KV cache (a runtime allocates its activation
// workspace first and gives the KV cache what is left), so a KV cache too
// large for the device spills, not the activations.
struct StepCapacity {
  int64_t max_sequences = 1;         // 1..65536
  int64_t max_context_tokens = 4096;  // 1..10,000,000
  int64_t max_step_tokens = 8192;     // 1..10,000,000
};
inline constexpr int64_t kDefaultMaxStepTokens = 8192;

// Evaluates single forward steps of one scenario. Create() validates the
// scenario and does everything that does not depend on the step: graph
// context (formats, executed math types, layer groups), placement and
// efficiency. Each call then builds and times that step's ops, allocating
// nothing.
//
// Results equal the corresponding step of Analyze(scenario):
// Decode(b, L) is decode_first_step of a scenario with batch b and prompt
// L - 1 (same formulas, same order of summation); Prefill(b, p) is its
// prefill. Placement is fixed at Create() from scenario.workload (the KV
// cache at its longest context, as Analyze places it): calls with another
// batch or length move bytes from the tiers that placement chose.
// scenario.options.suggestions is ignored.
//
// Thread safety: the methods are const and share no mutable state, so one
// evaluator may be used from many threads at once (a hardware efficiency
// hook, if any, must itself be thread-safe, as for Analyze). Copies are
// cheap and share the immutable state.
class StepEvaluator {
 public:
  // Errors: those of Analyze (INVALID_ARGUMENT naming the field,
  // UNIMPLEMENTED when the hardware lacks the math).
  static absl::StatusOr<StepEvaluator> Create(const Scenario& scenario);
  // The same for a scheduler: scenario.workload is replaced by the
  // reservation of `capacity` (see StepCapacity); pins still win. Errors
  // also name "capacity.max_sequences" / ".max_context_tokens" /
  // ".max_step_tokens" out of range.
  static absl::StatusOr<StepEvaluator> Create(const Scenario& scenario,
                                              const StepCapacity& capacity);

  // The workload whose placement is `capacity`'s reservation: batch
  // max_sequences, prompt + generated - 1 = max_context_tokens (the KV
  // cache), and a prompt of about max_step_tokens / max_sequences tokens
  // (the largest step's activations).
  static Workload ReservationWorkload(const StepCapacity& capacity);

  // One decode step of `batch` sequences (1..65536), each adding one token
  // to a context that then holds `kv_length` tokens (1..10,000,000). With
  // speculation: the speculative step from that context (the verify pass
  // ends at kv_length + k; drafts at kv_length .. kv_length + k - 1).
  absl::StatusOr<StepTiming> Decode(int64_t batch, int64_t kv_length) const;

  // The prefill of `batch` sequences of `prompt_tokens` tokens each
  // (1..10,000,000).
  absl::StatusOr<StepTiming> Prefill(int64_t batch,
                                     int64_t prompt_tokens) const;

  // One step of a real batch: every sequence at its own context.
  // Linear layers (projections, FFN, experts, norms) see the step's total
  // tokens; attention sees each sequence at its own context: a decode token
  // over c cached reads c + 1 keys, a prefill chunk of n over c cached
  // scores n (c + (n + 1) / 2) causal pairs and reads c + n keys (sliding
  // and chunked layers fewer); MoE's expected distinct experts follow the
  // step's total tokens; the LM head runs on one row per sequence. Attention
  // is aggregated (sums of pairs and keys), so a step costs the same number
  // of ops whatever its batch. A step of one sequence equals Decode(1, c+1)
  // (new = 1) or Prefill(1, n) (c = 0). 1..65536 sequences; errors are
  // INVALID_ARGUMENT naming "sequences[17].context_tokens", the range and
  // the value. With `ops`, also the per-op results (their sums are the
  // totals; with speculation the target pass's only). With speculation a
  // decode sequence (new 1 over context > 0) is verified as k + 1 tokens;
  // the first draft forward sees the step's sequences as given, the k - 1
  // more the decode sequences at their mean context.
  absl::StatusOr<StepTiming> Step(
      absl::Span<const StepSequence> sequences,
      std::vector<OpResult>* ops = nullptr) const;

  // The placement every call uses (weights, KV and activations per tier).
  const MemoryFootprint& memory() const;
  // With speculation: the draft's own placement (a head's includes the
  // embedding and LM head it shares); nullptr without.
  const MemoryFootprint* draft_memory() const;
  // With speculation: the draft's weights on one device beside the
  // target's (a head's less the embedding and LM head it shares with the
  // target); 0 without.
  double draft_weights_bytes() const;

  struct Impl;  // internal (analyze.cc)

 private:
  // Create()'s work; max_step_tokens 0: no reservation to warn against.
  static absl::StatusOr<StepEvaluator> Build(const Scenario& scenario,
                                             int64_t max_step_tokens);
  explicit StepEvaluator(std::shared_ptr<const Impl> impl)
      : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace ridgeline::engine
