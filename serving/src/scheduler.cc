#include "ridgeline/serving/scheduler.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "ridgeline/engine/field_path.h"

namespace ridgeline::serving {
namespace {

// Preempts the slot's last running request (scheduler.h): its KV swapped
// out or to be recomputed, its blocks freed, its share of the batch taken
// back, the queue's head again.
void PreemptLast(const SchedulerLimits& limits, SchedulerView& v, Batch& batch,
                 int64_t& budget) {
  const int64_t i = v.running.back();
  v.running.pop_back();
  --v.running_total;
  for (size_t k = batch.members.size(); k-- > 0;) {
    if (batch.members[k].request != i) continue;
    budget += batch.members[k].tokens;
    batch.members.erase(batch.members.begin() + static_cast<ptrdiff_t>(k));
    batch.sequences.erase(batch.sequences.begin() + static_cast<ptrdiff_t>(k));
  }
  RequestState& r = v.requests[i];
  ++r.preemptions;
  ++v.preemptions;
  // Swapped out, its KV comes back at admission and nothing is computed
  // again; otherwise what it had computed is computed again.
  const bool swapped =
      limits.preemption == Preemption::kSwap && v.kv.SwapOut(r, v.now);
  v.kv.Release(i, r, v.now);
  r.reserve = 0;
  if (!swapped) {
    if (InPrefill(r)) {
      v.preempted_tokens += r.prefilled;
    } else {
      // Its prompt and generated tokens are fed again (their last position
      // gives the next token, one of the tokens still to come).
      v.preempted_tokens += r.prompt + r.generated;
      r.recompute = r.generated;
    }
    r.prefilled = 0;
  }
  if (v.head > 0) {
    v.waiting[--v.head] = i;
  } else {
    v.waiting.insert(v.waiting.begin(), i);
  }
}

// One decode token for each running request past its prefill (the
// cohort's all at once when the budget holds every decoder; else it
// dissolves and they go one by one, in running order); with lazy
// allocation its KV slot first, preempting the last admitted if need be.
// A request admitted by this step has its token from Admit.
void AddDecodes(const SchedulerLimits& limits, SchedulerView& v, Batch& batch,
                int64_t& budget) {
  batch.decodes_begin = batch.members.size();
  auto listed = [&] { return std::min(v.running.size(), v.admitted_from); };
  if (v.cohort != nullptr && v.cohort->size() > 0 && budget > 0) {
    int64_t decoders = v.cohort->size();
    for (size_t k = 0; k < listed(); ++k) {
      if (!InPrefill(v.requests[v.running[k]])) ++decoders;
    }
    if (decoders <= budget) {
      batch.cohort = {v.cohort->size(), v.cohort->context_sum()};
      budget -= v.cohort->size();
    } else {
      const int64_t members = v.cohort->size();
      v.cohort->Dissolve(v.requests, v.running);
      // They rank before this step's admissions.
      if (v.admitted_from != SIZE_MAX) {
        v.admitted_from += static_cast<size_t>(members);
      }
    }
  }
  for (size_t k = 0; k < listed(); ++k) {
    const int64_t i = v.running[k];
    RequestState& r = v.requests[i];
    if (InPrefill(r) || budget == 0) continue;
    if (limits.preemption != Preemption::kOff) {
      bool preempted_itself = false;
      while (!v.kv.Grow(r, r.prompt + r.generated, v.now)) {
        preempted_itself = v.running.back() == i;
        PreemptLast(limits, v, batch, budget);
        if (preempted_itself) break;
      }
      if (preempted_itself) break;  // it was the last one
    }
    batch.sequences.push_back({r.prompt + r.generated - 1, 1});
    batch.members.push_back({i, 1, true});
    --budget;
  }
  batch.decodes_end = batch.members.size();
}

// The next chunk of each running request still in its prefill.
void AddPrefillChunks(SchedulerView& v, Batch& batch, int64_t& budget) {
  for (const int64_t i : v.running) {
    const RequestState& r = v.requests[i];
    if (!InPrefill(r) || budget == 0) continue;
    const int64_t chunk = std::min(PrefillTarget(r) - r.prefilled, budget);
    batch.sequences.push_back({r.prefilled, chunk});
    batch.members.push_back({i, chunk, false});
    budget -= chunk;
  }
}

// FIFO admissions while a sequence slot, the KV blocks and budget last. A
// request whose KV came from elsewhere (its prefill done) starts decoding.
void Admit(const SchedulerLimits& limits, SchedulerView& v, Batch& batch,
           int64_t& budget) {
  if (v.preemptions > 0) return;  // vLLM admits nothing in such a step
  v.admitted_from = std::min(v.admitted_from, v.running.size());
  while (v.head < v.waiting.size() && budget > 0 &&
         v.running_total < limits.max_num_seqs) {
    const int64_t i = v.waiting[v.head];
    RequestState& r = v.requests[i];
    // The blocks it takes now: its whole life on this replica or, with
    // lazy allocation, those of what it computes now.
    r.reserve = v.kv.SlotsFor(limits.preemption == Preemption::kOff
                                  ? r.prompt + r.stage_target - 1
                              : InPrefill(r) ? PrefillTarget(r)
                                             : r.prompt + r.generated);
    // FIFO; a cached prefix is taken here (r.prefilled moves past it).
    if (!v.kv.TryAdmit(i, r, v.now)) break;
    if (r.admitted < 0) r.admitted = v.now;
    r.running_order = v.admissions++;
    v.running.push_back(i);
    ++v.running_total;
    if (InPrefill(r)) {
      const int64_t chunk = std::min(PrefillTarget(r) - r.prefilled, budget);
      batch.sequences.push_back({r.prefilled, chunk});
      batch.members.push_back({i, chunk, false});
      budget -= chunk;
    } else {
      batch.sequences.push_back({r.prompt + r.generated - 1, 1});
      batch.members.push_back({i, 1, true});
      --budget;
    }
    ++v.head;
  }
}

}  // namespace

void DecodeFirstScheduler::Schedule(const SchedulerLimits& limits,
                                    SchedulerView& view, Batch& batch) const {
  batch.Clear();
  int64_t budget = limits.max_num_batched_tokens;
  AddDecodes(limits, view, batch, budget);
  AddPrefillChunks(view, batch, budget);
  Admit(limits, view, batch, budget);
}

void PrefillFirstScheduler::Schedule(const SchedulerLimits& limits,
                                     SchedulerView& view, Batch& batch) const {
  batch.Clear();
  int64_t budget = limits.max_num_batched_tokens;
  AddPrefillChunks(view, batch, budget);
  Admit(limits, view, batch, budget);
  AddDecodes(limits, view, batch, budget);
}

absl::StatusOr<std::unique_ptr<Scheduler>> MakeScheduler(
    std::string_view name, std::string_view field) {
  if (name == "decode-first") return std::make_unique<DecodeFirstScheduler>();
  if (name == "prefill-first") return std::make_unique<PrefillFirstScheduler>();
  return engine::WithFieldPath(
      absl::InvalidArgumentError(absl::StrCat(
          std::string(field), ": must be decode-first or prefill-first; got \"",
          std::string(name), "\"")),
      field);
}

}  // namespace ridgeline::serving
