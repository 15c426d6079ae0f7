#include "ridgeline/serving/throughput.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ridgeline/engine/status_macros.h"

namespace ridgeline::serving {
namespace {

// The steady state's c prefill tokens per step, shaped as the scheduler
// sends them: c / P whole prompts of P tokens (each attends over its own
// causal context only: one chunk of c tokens would score c^2/2 pairs, not
// (c/P) P^2/2), and the remaining r = c mod P tokens as a chunk at context
// (P - r) / 2, whose r ((P - r)/2 + (r + 1)/2) = r (P + 1) / 2 pairs are the
// fraction r / P of a whole prompt's P (P + 1) / 2. So the step scores the
// average c (P + 1) / 2 causal pairs, whether prompts arrive whole or chunked.
// A cached prefix of h tokens: each prompt computes q = P - h tokens after
// context h, so the same holds with q for P, every context shifted by h.
void AddPrefill(int64_t c, int64_t prompt, int64_t cached,
                std::vector<SequenceInStep>* step) {
  const int64_t q = prompt - cached;
  for (int64_t k = 0; k < c / q; ++k) step->push_back({cached, q});
  if (const int64_t r = c % q; r > 0) {
    step->push_back({cached + (q - r) / 2, r});
  }
}

}  // namespace

int64_t CachedSharedPrefixTokens(int64_t shared_prefix_tokens,
                                 int64_t prompt_tokens, int64_t block_size) {
  const int64_t shared = std::min(shared_prefix_tokens, prompt_tokens - 1);
  if (shared <= 0 || block_size < 1) return 0;
  return shared / block_size * block_size;
}

absl::StatusOr<OfflineThroughput> MaxThroughput(
    const StepCost& cost, const ServingLimits& limits, int64_t max_concurrency,
    int64_t prompt_tokens, int64_t generated_tokens, int64_t devices,
    int64_t cached_prompt_tokens) {
  if (prompt_tokens < 1 || generated_tokens < 1 || max_concurrency < 1 ||
      devices < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "throughput: prompt_tokens, generated_tokens, max_concurrency and "
        "devices must be >= 1; got ",
        prompt_tokens, ", ", generated_tokens, ", ", max_concurrency, ", ",
        devices));
  }
  if (cached_prompt_tokens < 0 || cached_prompt_tokens >= prompt_tokens) {
    return absl::InvalidArgumentError(absl::StrCat(
        "throughput: cached_prompt_tokens must be in [0, prompt_tokens); got ",
        cached_prompt_tokens, " of ", prompt_tokens));
  }
  // Computed prompt tokens per request (the cached prefix is not).
  const double p = static_cast<double>(prompt_tokens - cached_prompt_tokens);
  const double g1 = static_cast<double>(generated_tokens - 1);
  const double budget = static_cast<double>(limits.max_num_batched_tokens);
  OfflineThroughput out;
  out.concurrency_limited_by =
      max_concurrency < limits.max_num_seqs ? "kv_capacity" : "max_num_seqs";
  // Pipeline: the sequences split evenly over the micro-batches in flight
  // (no more micro-batches than sequences), each with its own budget.
  out.micro_batches = std::clamp<int64_t>(limits.pipeline_stages, 1,
                                          max_concurrency);
  const double per_batch = static_cast<double>(max_concurrency /
                                               out.micro_batches);
  std::vector<SequenceInStep> step;
  if (generated_tokens == 1) {
    out.prefill_tokens =
        static_cast<int64_t>(std::min(budget, per_batch * p));
    AddPrefill(out.prefill_tokens, prompt_tokens, cached_prompt_tokens, &step);
  } else {
    const double by_budget = budget * g1 / (p + g1);
    double d = per_batch;
    if (by_budget < d) {
      d = by_budget;
      out.concurrency_limited_by = "max_num_batched_tokens";
    }
    out.decode_sequences = std::max<int64_t>(1, static_cast<int64_t>(d));
    out.prefill_tokens = static_cast<int64_t>(
        std::llround(static_cast<double>(out.decode_sequences) * p / g1));
    // Decode sequences at their mean context over a request's life.
    const int64_t context =
        prompt_tokens + (generated_tokens - 1) / 2;
    step.assign(out.decode_sequences, SequenceInStep{context, 1});
    AddPrefill(out.prefill_tokens, prompt_tokens, cached_prompt_tokens, &step);
  }
  ASSIGN_OR_RETURN(StepTime t, cost.Time(step));
  if (!(t.seconds > 0)) {
    return absl::InternalError("throughput: the step model returned 0 s");
  }
  out.step_seconds = t.seconds;
  out.step_bound = t.bound;
  // m micro-batches circulate: each leaves the last stage `seconds` after
  // its launch, launches are `interval` apart, so each micro-batch comes
  // round every max(m x interval, seconds). m = 1: the step time.
  const double interval = t.interval_seconds > 0
                              ? std::min(t.interval_seconds, t.seconds)
                              : t.seconds;
  const double m = static_cast<double>(out.micro_batches);
  out.cycle_seconds = std::max(m * interval, t.seconds);
  out.limiting_resource = out.concurrency_limited_by == "kv_capacity"
                              ? "kv_capacity"
                              : std::string(engine::BoundName(t.bound));
  if (generated_tokens == 1) {
    out.requests_per_second = m * static_cast<double>(out.prefill_tokens) /
                              (p * out.cycle_seconds);
  } else {
    out.requests_per_second = m * static_cast<double>(out.decode_sequences) /
                              (g1 * out.cycle_seconds);
  }
  // Attention ranks: e alike.
  out.requests_per_second *= static_cast<double>(limits.attention_ranks);
  out.output_tokens_per_second =
      out.requests_per_second * static_cast<double>(generated_tokens);
  out.output_tokens_per_second_per_device =
      out.output_tokens_per_second / static_cast<double>(devices);
  return out;
}

}  // namespace ridgeline::serving
