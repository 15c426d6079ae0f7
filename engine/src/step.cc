// StepEvaluator: single forward steps of one scenario (see step.h).
#include "ridgeline/engine/step.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "operators.h"
#include "pipeline.h"
#include "prepare.h"
#include "ridgeline/engine/ranges.h"
#include "ridgeline/engine/status_macros.h"
#include "roofline.h"
#include "speculative_draft.h"
#include "validate_util.h"

namespace ridgeline::engine {

using internal::BuildDecode;
using internal::DominantBound;
using internal::Evaluator;
using internal::OpList;
using internal::Prepared;
using internal::StepShape;
using internal::TimeStep;

// The scenario (owned: the graph context and evaluator point into it), what
// Prepare built from it, and the evaluator. Immutable once built.
struct StepEvaluator::Impl {
  explicit Impl(const Scenario& scenario) : s(scenario) {}
  Scenario s;
  Prepared prep;
  std::optional<Evaluator> ev;
  int tiers = 0;
  internal::StageLayers stages;  // empty without pipeline parallelism
  // Per operand class: the share of its bytes off the device (host link,
  // flash); any_off_device when one is > 0.
  std::array<double, kOperandClassCount> off_device{};
  bool any_off_device = false;
  int64_t max_step_tokens = 0;  // 0: no reservation given (Create(scenario))
  // Speculative decoding: the draft's evaluator, k and the expected tokens
  // per decode sequence and step. Unset draft: none.
  std::optional<StepEvaluator> draft;
  double draft_shared_bytes = 0;  // internal::DraftSharedBytes
  int64_t spec_k = 0;
  double spec_tokens = 1;
  // The attention geometry a mixed step's per-sequence sums need: the
  // window (or chunk) of the sliding (chunked) layers (0: none) and DSA's
  // top-k (0: none).
  double window = 0;
  bool chunked = false;
  double topk = 0;

  // Adds a sequence of `added` new tokens ending at `len` to `mix`
  // (operators.h, MixedAttention).
  void AddToMix(double added, double len, bool decodes,
                internal::MixedAttention* mix) const {
    mix->tokens += added;
    mix->pairs[0] += internal::CausalPairs(added, len, 0);
    mix->keys[0] += len;
    if (topk > 0) {
      mix->pairs[internal::kMixedSparse] +=
          internal::CausalPairs(added, len, topk);
      mix->keys[internal::kMixedSparse] +=
          internal::SparseKeysSeen(added, len, topk);
    }
    if (decodes) mix->decode_sequences += 1;
    if (window > 0) {
      mix->pairs[1] += internal::CausalPairs(added, len, window, chunked);
      mix->keys[1] += internal::KeysSeen(added, len, window, chunked);
    }
  }
  // True when every sequence's attention terms are affine in its context
  // (no window, no top-k), so decode sequences can be summed as a count
  // and a total context (AddDecodes) instead of one by one.
  bool Affine() const { return window <= 0 && topk <= 0; }
  // Adds `count` decode sequences of `added` new tokens each, over
  // `contexts` cached tokens in all: AddToMix's sums for an affine
  // geometry, exact in doubles while the sums are integers below 2^53.
  static void AddDecodes(double count, double contexts, double added,
                         internal::MixedAttention* mix) {
    mix->tokens += count * added;
    mix->pairs[0] += added * contexts + count * added * (added + 1) / 2;
    mix->keys[0] += contexts + count * added;
    mix->decode_sequences += count;
  }
  // A mixed step of `n` sequences from its attention sums: one graph
  // whatever their number.
  StepTiming TimeMixed(const internal::MixedAttention& mix, int64_t n,
                       int64_t tokens, int64_t longest, bool decode,
                       std::vector<OpResult>* ops_out) const {
    StepShape shape{n, 1, longest, -1};
    shape.mixed = &mix;
    OpList ops;
    internal::BuildStepOps(prep.g, shape, &ops);
    StepTiming st = Finish(decode ? Phase::kDecode : Phase::kPrefill, n, tokens,
                           longest, ops, nullptr, ops_out);
    const int64_t max_context = s.model.max_context;
    st.beyond_model_context = max_context > 0 && longest > max_context;
    st.beyond_step_reservation =
        max_step_tokens > 0 && tokens > max_step_tokens;
    if (any_off_device) {
      for (const internal::OpCost& op : ops) {
        for (int c = 0; c < kOperandClassCount; ++c) {
          st.off_device_bytes += (op.read[c] + op.write[c]) * off_device[c];
        }
      }
    }
    return st;
  }

  // Adds a draft forward to a speculative step's totals.
  static void AddDraft(const StepTiming& d, StepTiming* st) {
    st->draft_seconds += d.seconds;
    st->flops += d.flops;
    st->bytes += d.bytes;
    st->compute_seconds += d.compute_seconds;
    st->memory_seconds += d.memory_seconds;
    st->interconnect_seconds += d.interconnect_seconds;
    st->overhead_seconds += d.overhead_seconds;
    st->seconds += d.seconds;
    st->pipeline_interval_seconds += d.seconds;
    st->off_device_bytes += d.off_device_bytes;
  }
  // A decode step of `seqs` sequences ending at `kv` tokens, built as one
  // graph (no per-key slope: the draft's forwards need only their total).
  StepTiming Uniform(int64_t seqs, int64_t kv) const {
    OpList ops;
    internal::BuildStepOps(prep.g, StepShape{seqs, 1, kv, -1}, &ops);
    return Finish(Phase::kDecode, seqs, seqs, kv, ops, nullptr);
  }
  static void Scale(double n, StepTiming* t) {
    t->flops *= n;
    t->bytes *= n;
    t->compute_seconds *= n;
    t->memory_seconds *= n;
    t->interconnect_seconds *= n;
    t->overhead_seconds *= n;
    t->seconds *= n;
    t->off_device_bytes *= n;
  }
  static void FinishSpeculative(double tokens, StepTiming* st) {
    st->accepted_tokens_per_sequence = tokens;
    st->bound = DominantBound(st->compute_seconds, st->memory_seconds,
                              st->interconnect_seconds, st->overhead_seconds);
  }

  StepTiming Finish(Phase phase, int64_t batch, int64_t tokens, int64_t kv,
                    const OpList& ops, const OpList* slope,
                    std::vector<OpResult>* ops_out = nullptr) const {
    StepTiming st;
    st.phase = phase;
    st.batch = batch;
    st.tokens = tokens;
    st.kv_length = kv;
    // A scheduler's step: the per-request cost is the scheduler's to add
    // once per admitted request (chunked prefill would pay it per chunk).
    const StepTotals tot =
        TimeStep(ops, slope, kv, ev->per_step(), *ev, prep.place, tiers,
                 ops_out, &st.overhead_seconds);
    st.flops = tot.flops;
    st.bytes = tot.bytes;
    st.compute_seconds = tot.compute_seconds;
    st.memory_seconds = tot.memory_seconds;
    st.interconnect_seconds = tot.interconnect_seconds;
    st.seconds = tot.seconds;
    st.bound = DominantBound(st.compute_seconds, st.memory_seconds,
                             st.interconnect_seconds, st.overhead_seconds);
    st.pipeline_interval_seconds = st.seconds;
    st.verify_seconds = st.seconds;
    if (!stages.empty()) {
      const internal::PipelineInterval pi = internal::PipelineIntervalOf(
          ops, slope, kv, ev->per_step(), *ev, stages, prep.g);
      st.pipeline_interval_seconds = pi.seconds;
      st.pipeline_slowest_stage = pi.stage;
    }
    return st;
  }
};

absl::StatusOr<StepEvaluator> StepEvaluator::Create(const Scenario& scenario) {
  return Build(scenario, 0);
}

absl::StatusOr<StepEvaluator> StepEvaluator::Build(const Scenario& scenario,
                                                   int64_t max_step_tokens) {
  RETURN_IF_ERROR(ValidateScenario(scenario));
  auto impl = std::make_shared<Impl>(scenario);
  impl->max_step_tokens = max_step_tokens;
  RETURN_IF_ERROR(Prepare(impl->s, &impl->prep));
  impl->ev.emplace(impl->s, impl->prep.place);
  impl->tiers = static_cast<int>(impl->s.hardware.tiers.size());
  if (const int64_t pp = impl->s.parallelism.pipeline_parallel; pp > 1) {
    impl->stages = internal::SplitStages(impl->prep.g, pp);
  }
  for (const internal::LayerGroup& grp : impl->prep.g.groups) {
    if (grp.window > 0) {
      impl->window = static_cast<double>(grp.window);
      impl->chunked = grp.spec.chunked;
    }
  }
  if (impl->prep.g.model->dsa.has_value()) {
    impl->topk = static_cast<double>(impl->prep.g.model->dsa->index_topk);
  }
  for (int c = 0; c < kOperandClassCount; ++c) {
    for (int t = 0; t < impl->tiers; ++t) {
      const TierKind kind = impl->s.hardware.tiers[t].kind;
      if (kind == TierKind::kHostLink || kind == TierKind::kFlash) {
        impl->off_device[c] += impl->prep.place.frac[c][t];
      }
    }
    impl->any_off_device = impl->any_off_device || impl->off_device[c] > 0;
  }
  if (const SpeculativeDecoding& spec = impl->s.options.speculative;
      spec.enabled()) {
    ASSIGN_OR_RETURN(Scenario draft, internal::DraftScenario(impl->s));
    ASSIGN_OR_RETURN(StepEvaluator ev, Build(draft, max_step_tokens));
    RETURN_IF_ERROR(internal::CheckDraftFits(
        impl->s, impl->prep.memory,
        internal::DraftExtraBytes(draft, ev.memory(), spec.method)));
    impl->draft.emplace(std::move(ev));
    impl->draft_shared_bytes = internal::DraftSharedBytes(draft, spec.method);
    impl->spec_k = spec.tokens;
    impl->spec_tokens = ExpectedTokensPerStep(spec);
  }
  return StepEvaluator(std::move(impl));
}

Workload StepEvaluator::ReservationWorkload(const StepCapacity& capacity) {
  const int64_t context = capacity.max_context_tokens;
  const int64_t prompt = std::clamp<int64_t>(
      capacity.max_step_tokens / std::max<int64_t>(capacity.max_sequences, 1),
      1, context);
  return {capacity.max_sequences, prompt, context + 1 - prompt};
}

absl::StatusOr<StepEvaluator> StepEvaluator::Create(
    const Scenario& scenario, const StepCapacity& capacity) {
  RETURN_IF_ERROR(internal::CheckIntRange("capacity.max_sequences",
                                          capacity.max_sequences, 1, 65536));
  RETURN_IF_ERROR(internal::CheckIntRange("capacity.max_context_tokens",
                                          capacity.max_context_tokens, 1,
                                          ranges::kPromptTokens.hi));
  RETURN_IF_ERROR(internal::CheckIntRange(
      "capacity.max_step_tokens", capacity.max_step_tokens, 1, 10'000'000));
  Scenario s = scenario;
  s.workload = ReservationWorkload(capacity);
  // The activation workspace on the device before the KV cache: pinned to
  // the first device-memory tier (pins are placed first), unless pinned.
  PlacementPins& pins = s.pins;
  constexpr int kAct = static_cast<int>(OperandClass::kActivations);
  if (!pins.tier[kAct].has_value()) {
    for (size_t t = 0; t < s.hardware.tiers.size(); ++t) {
      const TierKind k = s.hardware.tiers[t].kind;
      if (k == TierKind::kHbm || k == TierKind::kGddr ||
          k == TierKind::kLpddr || k == TierKind::kDdr ||
          k == TierKind::kUnified) {
        pins.tier[kAct] = static_cast<int>(t);
        break;
      }
    }
  }
  return Build(s, capacity.max_step_tokens);
}

absl::StatusOr<StepTiming> StepEvaluator::Decode(int64_t batch,
                                                 int64_t kv_length) const {
  RETURN_IF_ERROR(internal::CheckIntRange("batch", batch, 1, 65536));
  RETURN_IF_ERROR(
      internal::CheckIntRange("kv_length", kv_length, 1, 10'000'000));
  if (impl_->draft.has_value()) {
    // Verify: k + 1 tokens per sequence over the cached kv_length - 1.
    const int64_t k = impl_->spec_k;
    OpList ops;
    internal::BuildStepOps(impl_->prep.g,
                           StepShape{batch, k + 1, kv_length + k, -1}, &ops);
    StepTiming st = impl_->Finish(Phase::kDecode, batch, batch * (k + 1),
                                  kv_length + k, ops, nullptr);
    // The first draft forward at kv_length, the k - 1 more as Step() times
    // them (once, at the middle one's context).
    Impl::AddDraft(impl_->draft->impl_->Uniform(batch, kv_length), &st);
    if (k > 1) {
      StepTiming more = impl_->draft->impl_->Uniform(
          batch,
          static_cast<int64_t>(std::llround(static_cast<double>(kv_length) +
                                            static_cast<double>(k) / 2)));
      Impl::Scale(static_cast<double>(k - 1), &more);
      Impl::AddDraft(more, &st);
    }
    Impl::FinishSpeculative(impl_->spec_tokens, &st);
    return st;
  }
  OpList base, slope;
  BuildDecode(impl_->prep.g, batch, kv_length, &base, &slope);
  return impl_->Finish(Phase::kDecode, batch, batch, kv_length, base, &slope);
}

absl::StatusOr<StepTiming> StepEvaluator::Prefill(int64_t batch,
                                                  int64_t prompt_tokens) const {
  RETURN_IF_ERROR(internal::CheckIntRange("batch", batch, 1, 65536));
  RETURN_IF_ERROR(
      internal::CheckIntRange("prompt_tokens", prompt_tokens, 1, 10'000'000));
  OpList ops;
  internal::BuildStepOps(
      impl_->prep.g, StepShape{batch, prompt_tokens, prompt_tokens, -1}, &ops);
  StepTiming st = impl_->Finish(Phase::kPrefill, batch, batch * prompt_tokens,
                                prompt_tokens, ops, nullptr);
  if (impl_->draft.has_value()) {
    // The draft prefills the prompt too (its KV, or a head's hidden states).
    ASSIGN_OR_RETURN(StepTiming d, impl_->draft->Prefill(batch, prompt_tokens));
    Impl::AddDraft(d, &st);
    Impl::FinishSpeculative(1, &st);
  }
  return st;
}

absl::StatusOr<StepTiming> StepEvaluator::Step(
    absl::Span<const StepSequence> sequences,
    std::vector<OpResult>* ops_out) const {
  constexpr int64_t kMaxSequences = 65536;
  constexpr int64_t kMaxTokens = 10'000'000;
  const int64_t n = static_cast<int64_t>(sequences.size());
  if (n < 1 || n > kMaxSequences) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sequences must hold 1..", kMaxSequences, " sequences, got ", n));
  }
  // Attention as sums of per-sequence terms (operators.h, MixedAttention):
  // one pass over the sequences, then one graph whatever their number. With
  // speculation the same pass sums the draft's first forward (the step as
  // given) and the target verifies k + 1 tokens of every decode sequence.
  const Impl* draft =
      impl_->draft.has_value() ? impl_->draft->impl_.get() : nullptr;
  internal::MixedAttention mix, draft_mix;
  int64_t tokens = 0, longest = 0, draft_tokens = 0, draft_longest = 0;
  bool decode = true;
  int64_t decoding = 0;
  double decode_contexts = 0;  // cached tokens of the decode sequences
  // Decode sequences are summed as a count and their contexts when both
  // geometries allow it (the common case, and most of a serving step).
  const bool affine = impl_->Affine() && (draft == nullptr || draft->Affine());
  const int64_t verified = draft != nullptr ? impl_->spec_k + 1 : 1;
  for (int64_t i = 0; i < n; ++i) {
    const StepSequence& q = sequences[static_cast<size_t>(i)];
    if (q.context_tokens < 0 || q.context_tokens > kMaxTokens) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sequences[", i, "].context_tokens must be in [0, ", kMaxTokens,
          "], got ", q.context_tokens));
    }
    if (q.new_tokens < 1 || q.new_tokens > kMaxTokens) {
      return absl::InvalidArgumentError(
          absl::StrCat("sequences[", i, "].new_tokens must be in [1, ",
                       kMaxTokens, "], got ", q.new_tokens));
    }
    // A first token over an empty cache is a (one-token) prefill, as
    // Prefill(1, 1) counts it.
    const bool decodes = q.new_tokens == 1 && q.context_tokens > 0;
    const int64_t new_tokens = decodes ? verified : q.new_tokens;
    tokens += new_tokens;
    longest = std::max(longest, q.context_tokens + new_tokens);
    decode = decode && decodes;
    if (draft != nullptr) {
      draft_tokens += q.new_tokens;
      draft_longest = std::max(draft_longest, q.context_tokens + q.new_tokens);
    }
    if (decodes) {
      ++decoding;
      decode_contexts += static_cast<double>(q.context_tokens);
      if (affine) continue;
    }
    impl_->AddToMix(static_cast<double>(new_tokens),
                    static_cast<double>(q.context_tokens + new_tokens), decodes,
                    &mix);
    if (draft != nullptr) {
      draft->AddToMix(static_cast<double>(q.new_tokens),
                      static_cast<double>(q.context_tokens + q.new_tokens),
                      decodes, &draft_mix);
    }
  }
  const double decode_count = static_cast<double>(decoding);
  if (affine) {
    Impl::AddDecodes(decode_count, decode_contexts,
                     static_cast<double>(verified), &mix);
    if (draft != nullptr) {
      Impl::AddDecodes(decode_count, decode_contexts, 1, &draft_mix);
    }
  }
  StepTiming st = impl_->TimeMixed(mix, n, tokens, longest, decode, ops_out);
  if (draft != nullptr) {
    // The first draft forward over the step as given, then k - 1 more for
    // the decode sequences (at their mean context, as a serving cost model
    // folds them).
    Impl::AddDraft(draft->TimeMixed(draft_mix, n, draft_tokens, draft_longest,
                                    decode, nullptr),
                   &st);
    if (decoding > 0 && impl_->spec_k > 1) {
      // The k - 1 more forwards differ only in their keys, which grow by
      // one per forward: timed once at the middle one's context (exact
      // while they share a roofline regime, attention being affine in the
      // keys) and counted k - 1 times: one evaluation whatever k.
      const double k = static_cast<double>(impl_->spec_k);
      const auto middle = static_cast<int64_t>(std::llround(
          (decode_contexts + decode_count) / decode_count + k / 2));
      StepTiming more = draft->Uniform(decoding, middle);
      Impl::Scale(k - 1, &more);
      Impl::AddDraft(more, &st);
    }
    Impl::FinishSpeculative(decoding > 0 ? impl_->spec_tokens : 1, &st);
  }
  return st;
}

const MemoryFootprint& StepEvaluator::memory() const {
  return impl_->prep.memory;
}

const MemoryFootprint* StepEvaluator::draft_memory() const {
  return impl_->draft.has_value() ? &impl_->draft->memory() : nullptr;
}

double StepEvaluator::draft_weights_bytes() const {
  if (!impl_->draft.has_value()) return 0;
  const double weights =
      impl_->draft->memory()
          .required_bytes[static_cast<int>(OperandClass::kWeights)];
  return std::max(weights - impl_->draft_shared_bytes, 0.0);
}

}  // namespace ridgeline::engine
