#include "ridgeline/serving/scheduler.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "ridgeline/engine/field_path.h"

namespace ridgeline::serving {
namespace {

// One decode token for each running request past its prefill.
void AddDecodes(SchedulerView& v, Batch& batch, int64_t& budget) {
  for (const int64_t i : v.running) {
    const RequestState& r = v.requests[i];
    if (r.prefilled < r.prompt || budget == 0) continue;
    batch.sequences.push_back({r.prompt + r.generated - 1, 1});
    batch.members.push_back({i, 1, true});
    --budget;
  }
}

// The next chunk of each running request still in its prefill.
void AddPrefillChunks(SchedulerView& v, Batch& batch, int64_t& budget) {
  for (const int64_t i : v.running) {
    const RequestState& r = v.requests[i];
    if (r.prefilled >= r.prompt || budget == 0) continue;
    const int64_t chunk = std::min(r.prompt - r.prefilled, budget);
    batch.sequences.push_back({r.prefilled, chunk});
    batch.members.push_back({i, chunk, false});
    budget -= chunk;
  }
}

// FIFO admissions while a sequence slot, the KV blocks and budget last. A
// request whose KV came from elsewhere (its prefill done) starts decoding.
void Admit(const SchedulerLimits& limits, SchedulerView& v, Batch& batch,
           int64_t& budget) {
  while (v.head < v.waiting.size() && budget > 0 &&
         v.running_total < limits.max_num_seqs) {
    const int64_t i = v.waiting[v.head];
    RequestState& r = v.requests[i];
    // FIFO; a cached prefix is taken here (r.prefilled moves past it).
    if (!v.kv.TryAdmit(i, r, v.now)) break;
    if (r.admitted < 0) r.admitted = v.now;
    v.running.push_back(i);
    ++v.running_total;
    if (r.prefilled < r.prompt) {
      const int64_t chunk = std::min(r.prompt - r.prefilled, budget);
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
  AddDecodes(view, batch, budget);
  AddPrefillChunks(view, batch, budget);
  Admit(limits, view, batch, budget);
}

void PrefillFirstScheduler::Schedule(const SchedulerLimits& limits,
                                     SchedulerView& view, Batch& batch) const {
  batch.Clear();
  int64_t budget = limits.max_num_batched_tokens;
  AddPrefillChunks(view, batch, budget);
  Admit(limits, view, batch, budget);
  AddDecodes(view, batch, budget);
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
