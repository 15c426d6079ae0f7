// The scheduler of one replica (vLLM's Scheduler): which running requests
// step next, and which waiting ones are admitted, under the chunked-prefill
// token budget (max_num_batched_tokens), max_num_seqs and the KV blocks
// free. A policy is an object: vLLM's decode-first order and an SGLang-like
// prefill-first order are two instances, and a new policy is a new class.
// Admission is FIFO (a request that does not fit blocks those behind it).
//
// KV: by default a request reserves its whole life at admission
// (TensorRT-LLM's GUARANTEED_NO_EVICT), so nothing is preempted. With
// preemption "recompute" (vLLM V1's allocation), admission takes the blocks of
// the prefill only and a decode takes a block when its token crosses into
// one; when none is free, the running request admitted last is preempted:
// its blocks are freed (the cached ones stay cached), it goes back to the
// head of the queue, and when admitted again it prefills its prompt and
// the tokens it had generated (the prefix cache may hold them), the last
// position giving its next token. No request is admitted in a step that
// preempted, as in vLLM. Preemption by swap (vLLM V0's preemption_mode
// "swap") allocates the same way but moves the preempted request's KV to
// the first offload tier (KvBlockCache::SwapOut) and, admitted again, it
// carries on where it stopped once the KV is back; when that tier has no
// room (or the part none) it is preempted by recompute instead.
// Stateless between calls; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ridgeline/serving/decode_cohort.h"
#include "ridgeline/serving/kv_cache.h"
#include "ridgeline/serving/preemption.h"
#include "ridgeline/serving/request_state.h"
#include "ridgeline/serving/step_cost.h"

namespace ridgeline::serving {

// One request's share of a step: a decode token or a prefill chunk.
struct BatchMember {
  int64_t request = 0;
  int64_t tokens = 1;
  bool decode = true;
};

// The step a scheduler builds: members and, in the same order, the shapes
// the StepCost times, plus, when `cohort` > 0, every member of the slot's
// DecodeCohort (one token each). The decode pass's members are
// members[decodes_begin, decodes_end), where the cohort's stand among
// them in running order.
struct Batch {
  std::vector<BatchMember> members;
  std::vector<SequenceInStep> sequences;
  FoldedDecodes cohort;
  size_t decodes_begin = 0, decodes_end = 0;
  void Clear() {
    members.clear();
    sequences.clear();
    cohort = {};
    decodes_begin = decodes_end = 0;
  }
  bool empty() const { return sequences.empty() && cohort.count == 0; }
  int64_t size() const {
    return static_cast<int64_t>(sequences.size()) + cohort.count;
  }
};

// What a scheduler reads and changes: the replica's requests, the running
// requests of the slot (micro-batch) being built (in running order; those
// in the slot's cohort, when it has one, are not listed), the replica's
// FIFO queue (waiting[head..] not yet admitted), its KV cache, its running
// count and admission count (the next running order).
struct SchedulerView {
  std::vector<RequestState>& requests;
  std::vector<int64_t>& running;
  std::vector<int64_t>& waiting;
  size_t& head;
  int64_t& running_total;
  int64_t& admissions;
  KvBlockCache& kv;
  DecodeCohort* cohort = nullptr;  // null: every decoder listed in running
  double now = 0;
  // running[admitted_from..] were admitted by this step (set by Admit).
  size_t admitted_from = SIZE_MAX;
  // Out: tokens to compute again for the requests this step preempted.
  int64_t preempted_tokens = 0;
  int64_t preemptions = 0;
};

struct SchedulerLimits {
  int64_t max_num_seqs = 256;
  int64_t max_num_batched_tokens = 8192;
  Preemption preemption = Preemption::kOff;  // ServingLimits'
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual std::string_view name() const = 0;
  // Fills `batch` (cleared first) for one step at view.now; admits from the
  // queue (KV allocated, `admitted` set on a first admission). Empty:
  // nothing to run. A function of the view's state, not of view.now: the
  // same requests, queue, KV and cohort build the same batch (a replica
  // steps a lone cohort on without asking again, Replica::Coast).
  virtual void Schedule(const SchedulerLimits& limits, SchedulerView& view,
                        Batch& batch) const = 0;
};

// vLLM: every running decode first (one token each), then chunks of started
// prefills, then admissions, so a running request is never starved.
class DecodeFirstScheduler final : public Scheduler {
 public:
  std::string_view name() const override { return "decode-first"; }
  void Schedule(const SchedulerLimits& limits, SchedulerView& view,
                Batch& batch) const override;
};

// SGLang-like: started prefills, then admissions, then decodes with what
// budget is left: the time to first token before the decode rate.
class PrefillFirstScheduler final : public Scheduler {
 public:
  std::string_view name() const override { return "prefill-first"; }
  void Schedule(const SchedulerLimits& limits, SchedulerView& view,
                Batch& batch) const override;
};

// "decode-first" or "prefill-first"; INVALID_ARGUMENT naming `field`, the
// allowed values and the value.
absl::StatusOr<std::unique_ptr<Scheduler>> MakeScheduler(
    std::string_view name, std::string_view field);

}  // namespace ridgeline::serving
