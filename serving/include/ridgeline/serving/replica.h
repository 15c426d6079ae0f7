// One replica's event loop (vLLM's EngineCore): each iteration retires the
// micro-batches that have left the last stage, asks the scheduler for the
// next step and times it with the StepCost (the engine's StepEvaluator in
// the service). With S pipeline stages up to S micro-batches are in flight,
// one per slot (vLLM's virtual engines): a request is bound to the slot
// that admits it, a slot launches its next micro-batch once its previous
// one has left the last stage, and launches are at least one pipeline
// interval apart. Requests come from outside (a router, a KV hand-off);
// a deployment (deployment.h) interleaves its replicas' iterations and the
// arrivals in time order. Thread-compatible.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "ridgeline/serving/capacity.h"
#include "ridgeline/serving/decode_cohort.h"
#include "ridgeline/serving/kv_cache.h"
#include "ridgeline/serving/prompt_content.h"
#include "ridgeline/serving/request_state.h"
#include "ridgeline/serving/scheduler.h"
#include "ridgeline/serving/step_cost.h"

namespace ridgeline::serving {

// What the replicas of one simulation share: the step count against its cap
// and the cancellation poll (every 1024 steps), and the progress the errors
// report.
struct RunControl {
  int64_t steps = 0;
  int64_t max_steps = 0;
  std::string max_steps_name;
  std::function<bool()> stop;  // may be empty
  int64_t done = 0;            // requests finished
  int64_t total = 0;
  // What the prompts share (the prefix caches' keys); may be null.
  const PromptContent* content = nullptr;
};

struct ReplicaStats {
  int64_t steps = 0;
  int64_t max_waiting = 0;
  double kv_usage_peak = 0;    // at step launches, 0..1
  double running_seconds = 0;  // sum of sequences x step time
  double busy_seconds = 0;     // union of in-flight spans
};

class Replica {
 public:
  // Called when a request's stage ends on this replica (its stage_target
  // reached), at `t`, with the duration of the step that ended it. It may
  // Enqueue (on any replica) but must not change the finished request.
  using StageDone =
      std::function<void(int64_t request, double t, double step_seconds)>;

  // `cost`, `scheduler`, `requests` and `control` outlive the replica.
  Replica(const StepCost& cost, const ServingLimits& limits,
          const Scheduler& scheduler, std::vector<RequestState>& requests,
          RunControl& control, StageDone on_stage_done);

  // Queues a request at `at` (>= the last iteration's time), its `reserve`
  // and `stage_target` set.
  void Enqueue(int64_t request, double at);
  // When the next iteration runs; infinity when idle until an Enqueue.
  double NextEventTime() const { return std::max(now_, next_launch_); }
  // One iteration. Errors: RESOURCE_EXHAUSTED past the step cap,
  // DEADLINE_EXCEEDED when `control.stop` says so, INTERNAL on a step time
  // that is not finite and > 0, the StepCost's.
  absl::Status Iterate();
  // Runs on, after an Iterate, the iterations that can only repeat its
  // batch: one slot whose cohort steps alone (nobody else running, nobody
  // admitted, nobody finishing at the next retire), launches back to back,
  // each before `horizon` (the deployment's next arrival, KV landing or
  // other replica's iteration). They are exactly the iterations the event
  // loop would run next, without asking the scheduler again (the
  // Scheduler's contract: the same state builds the same batch).
  absl::Status Coast(double horizon);
  // Whether the next iteration is such a one (whatever the horizon).
  bool Coasts() const;

  // Tokens still to compute for its requests (prompt left + tokens left).
  int64_t outstanding_tokens() const { return outstanding_; }
  const ReplicaStats& stats() const { return stats_; }
  // Its KV blocks (usage and the usage integral).
  const KvBlockCache& kv() const { return kv_; }
  // (inter-token gap, decode tokens with it), folded by gap.
  std::vector<std::pair<double, int64_t>>& itl() { return itl_; }

 private:
  absl::Status Launch(size_t slot);
  void Retire(size_t slot);
  void RetireUntil(double t);
  void AddGap(double gap, int64_t tokens);
  void FoldItl();

  const StepCost& cost_;
  ServingLimits limits_;
  const Scheduler& scheduler_;
  std::vector<RequestState>& reqs_;
  RunControl& control_;
  StageDone on_stage_done_;
  KvBlockCache kv_;

  std::vector<int64_t> waiting_;
  size_t head_ = 0;
  // Per slot: running requests (less its cohort's), the micro-batch in flight,
  // when it leaves the last stage (< 0: none in flight) and its step time.
  std::vector<std::vector<int64_t>> running_;
  std::vector<Batch> batches_;
  std::vector<double> done_at_;
  std::vector<double> step_seconds_;
  // Per slot: its decoders in lockstep (decode_cohort.h), when used.
  std::vector<DecodeCohort> cohorts_;
  bool use_cohort_ = false;
  std::vector<int64_t> cohort_finished_;  // reused per Retire
  int64_t running_total_ = 0;
  int64_t admissions_ = 0;  // the next running order
  int64_t outstanding_ = 0;

  double now_ = 0;
  double iteration_time_ = 0;
  double next_launch_ = 0;         // the first stage takes a micro-batch again
  bool wakes_on_arrival_ = false;  // idle with a slot free
  size_t next_slot_ = 0;           // round robin
  double busy_until_ = 0;
  ReplicaStats stats_;
  // Folded whenever it doubles: a run of 2e7 steps held 320 MB of gaps
  // (issue 26) while the step times, cached by shape, take few values.
  std::vector<std::pair<double, int64_t>> itl_;
  size_t itl_fold_at_ = 1 << 16;
};

}  // namespace ridgeline::serving
