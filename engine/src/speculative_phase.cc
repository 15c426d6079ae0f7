// The decode phase as speculative steps; LoRA cold loads (speculative_phase.h).
#include "speculative_phase.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "operators.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/engine/step.h"
#include "speculative_draft.h"

namespace ridgeline::engine::internal {

absl::Status ApplySpeculative(const Scenario& s, AnalysisResult* r) {
  const SpeculativeDecoding& spec = s.options.speculative;
  if (!spec.enabled()) return absl::OkStatus();
  Scenario v = s;
  v.options.suggestions = false;
  ASSIGN_OR_RETURN(StepEvaluator ev, StepEvaluator::Create(v));
  SpeculativeSummary& o = r->speculative;
  o.enabled = true;
  o.method = SpeculativeMethodText(spec);
  const double e = ExpectedTokensPerStep(spec);
  o.accepted_tokens_per_step = e;
  if (const MemoryFootprint* dm = ev.draft_memory(); dm != nullptr) {
    ASSIGN_OR_RETURN(Scenario draft, DraftScenario(v));
    o.draft_bytes = DraftExtraBytes(draft, *dm, spec.method);
  }
  const int64_t batch = s.workload.batch;
  const int64_t prompt = s.workload.prompt_tokens;
  ASSIGN_OR_RETURN(StepTiming pre, ev.Prefill(batch, prompt));
  o.draft_prefill_seconds = pre.draft_seconds;
  r->ttft_seconds += pre.draft_seconds;
  r->prefill_tokens_per_second =
      r->ttft_seconds > 0
          ? static_cast<double>(batch * prompt) / r->ttft_seconds
          : 0;
  const int64_t decode_tokens =
      std::max<int64_t>(s.workload.generated_tokens - 1, 0);
  if (decode_tokens == 0) return absl::OkStatus();
  const double g = static_cast<double>(decode_tokens);
  const double steps = g / e;
  o.steps = steps;
  const double first = static_cast<double>(prompt + 1);
  const double last = std::min(first + std::max(steps - 1, 0.0) * e,
                               static_cast<double>(prompt) + g);
  constexpr int kIntervals = 8;
  const int intervals = last > first ? kIntervals : 0;
  double seconds = 0, draft = 0, verify = 0;
  StepTiming at_first, at_last;
  for (int i = 0; i <= intervals; ++i) {
    const double x =
        intervals == 0 ? first : first + (last - first) * i / intervals;
    ASSIGN_OR_RETURN(StepTiming t,
                     ev.Decode(batch, static_cast<int64_t>(std::llround(x))));
    const double w = intervals == 0               ? 1
                     : (i == 0 || i == intervals) ? 0.5 / intervals
                                                  : 1.0 / intervals;
    seconds += w * t.seconds;
    draft += w * t.draft_seconds;
    verify += w * t.verify_seconds;
    if (i == 0) at_first = t;
    at_last = t;
  }
  o.draft_seconds_per_step = draft;
  o.verify_seconds_per_step = verify;
  o.baseline_tpot_mean_seconds = r->tpot_mean_seconds;
  const double total = steps * seconds;
  r->decode.totals.seconds = total;
  r->tpot_first_seconds = at_first.seconds / e;
  r->tpot_last_seconds = at_last.seconds / e;
  r->tpot_mean_seconds = total / g;
  r->decode_tokens_per_second_per_sequence = 1 / r->tpot_mean_seconds;
  r->decode_tokens_per_second_total =
      static_cast<double>(batch) / r->tpot_mean_seconds;
  o.speedup = o.baseline_tpot_mean_seconds / r->tpot_mean_seconds;
  r->warnings.push_back(absl::StrFormat(
      "speculative decoding %s: %.2f tokens per step per sequence, TPOT "
      "%.3g ms vs %.3g ms plain (%.2fx); TTFT includes the draft's prefill. "
      "Per-op decode results, first/last decode steps, the bottleneck and "
      "the energy figures are plain decode's",
      o.method, e, r->tpot_mean_seconds * 1e3,
      o.baseline_tpot_mean_seconds * 1e3, o.speedup));
  return absl::OkStatus();
}

void ApplyLoraColdLoads(const Scenario& s, const Prepared& prep,
                        AnalysisResult* r) {
  const LoraAdapters& lora = s.options.lora;
  if (!lora.enabled()) return;
  LoraSummary& o = r->lora;
  o.enabled = true;
  o.adapter_bytes = LoraBytesPerAdapter(prep.g);
  o.resident_bytes = static_cast<double>(lora.adapters) * o.adapter_bytes;
  if (lora.cold_fraction <= 0) return;
  double link = 0;
  for (const MemoryTier& t : s.hardware.tiers) {
    if (t.kind == TierKind::kHostLink) {
      link = t.read_bandwidth_bytes_per_second;
      break;
    }
  }
  if (link <= 0) {
    r->warnings.push_back(absl::StrCat(
        "options.lora.cold_fraction: ", s.hardware.id,
        " describes no host-link tier, so cold adapter loads are not timed"));
    return;
  }
  // A cold request waits for its adapter before its first token.
  o.cold_load_seconds = o.adapter_bytes / link;
  o.ttft_added_seconds = lora.cold_fraction * o.cold_load_seconds;
  r->ttft_seconds += o.ttft_added_seconds;
  r->prefill_tokens_per_second =
      r->ttft_seconds > 0
          ? static_cast<double>(s.workload.batch * s.workload.prompt_tokens) /
                r->ttft_seconds
          : 0;
}

}  // namespace ridgeline::engine::internal
