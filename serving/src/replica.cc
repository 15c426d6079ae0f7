#include "ridgeline/serving/replica.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "ridgeline/engine/status_macros.h"

namespace ridgeline::serving {

Replica::Replica(const StepCost& cost, const ServingLimits& limits,
                 const Scheduler& scheduler,
                 std::vector<RequestState>& requests, RunControl& control,
                 StageDone on_stage_done)
    : cost_(cost),
      limits_(limits),
      scheduler_(scheduler),
      reqs_(requests),
      control_(control),
      on_stage_done_(std::move(on_stage_done)),
      kv_(limits.kv_capacity_tokens, limits.block_size, control.content,
          limits.prefix_caching, limits.offload_tiers, limits.recompute),
      running_(static_cast<size_t>(limits.pipeline_stages)),
      batches_(static_cast<size_t>(limits.pipeline_stages)),
      done_at_(static_cast<size_t>(limits.pipeline_stages), -1),
      step_seconds_(static_cast<size_t>(limits.pipeline_stages), 0),
      cohorts_(static_cast<size_t>(limits.pipeline_stages)),
      use_cohort_(limits.preemption == Preemption::kOff &&
                  cost.folds_decodes()) {
  // Idle until the first request.
  now_ = std::numeric_limits<double>::infinity();
  wakes_on_arrival_ = true;
}

void Replica::Enqueue(int64_t request, double at) {
  const RequestState& r = reqs_[request];
  waiting_.push_back(request);
  outstanding_ += (r.prompt - r.prefilled) + (r.stage_target - r.generated);
  // An idle replica with a slot free wakes at the arrival.
  if (wakes_on_arrival_) now_ = std::min(now_, std::max(at, iteration_time_));
}

// A gap equal to the last one adds to it: steps of one shape repeat their
// time, so most gaps come in runs.
void Replica::AddGap(double gap, int64_t tokens) {
  if (!itl_.empty() && itl_.back().first == gap) {
    itl_.back().second += tokens;
  } else {
    itl_.emplace_back(gap, tokens);
  }
}

void Replica::FoldItl() {
  std::sort(itl_.begin(), itl_.end());
  size_t w = 0;
  for (size_t r = 0; r < itl_.size(); ++r) {
    if (w > 0 && itl_[w - 1].first == itl_[r].first) {
      itl_[w - 1].second += itl_[r].second;
    } else {
      itl_[w++] = itl_[r];
    }
  }
  itl_.resize(w);
  itl_.shrink_to_fit();
  itl_fold_at_ = std::max<size_t>(1 << 16, 2 * w);
}

// The micro-batch of slot k leaves the last stage at done_at_[k]. Members
// are retired in batch order; the cohort's finishers in running order
// among the decode pass's members.
void Replica::Retire(size_t k) {
  const double t = done_at_[k];
  done_at_[k] = -1;
  const Batch& batch = batches_[k];
  DecodeCohort& cohort = cohorts_[k];
  int64_t decoded = 0;
  double gap = 0;
  bool any_finished = false;
  auto finish = [&](int64_t i) {
    RequestState& r = reqs_[i];
    r.finish = t;
    // Every token's KV but the last one's is written: a later turn's
    // prompt finds the answer too.
    kv_.Register(i, r, r.prompt + r.generated - 1, t);
    kv_.Release(i, r, t);
    --running_total_;
    any_finished = true;
    on_stage_done_(i, t, step_seconds_[k]);
  };
  cohort_finished_.clear();
  if (batch.cohort.count > 0) {
    AddGap(t - cohort.last_token(), batch.cohort.count);
    outstanding_ -= batch.cohort.count;
    cohort.Advance(t, reqs_, cohort_finished_);
  }
  size_t f = 0;
  auto cohort_finishers_before = [&](int64_t order) {
    while (f < cohort_finished_.size() &&
           reqs_[cohort_finished_[f]].running_order < order) {
      finish(cohort_finished_[f++]);
    }
  };
  constexpr int64_t kAll = std::numeric_limits<int64_t>::max();
  for (size_t j = 0; j < batch.members.size(); ++j) {
    const BatchMember& m = batch.members[j];
    RequestState& r = reqs_[m.request];
    if (j >= batch.decodes_begin && j < batch.decodes_end) {
      cohort_finishers_before(r.running_order);
    } else if (j == batch.decodes_end) {
      cohort_finishers_before(kAll);
    }
    if (m.decode) {
      const double g = t - r.last_token;
      if (decoded > 0 && g != gap) {
        AddGap(gap, decoded);
        decoded = 0;
      }
      gap = g;
      ++decoded;
      ++r.generated;
      r.last_token = t;
      --outstanding_;
    } else {
      r.prefilled += m.tokens;
      outstanding_ -= m.tokens;
      kv_.Register(m.request, r, r.prefilled, t);
      if (r.prefilled == PrefillTarget(r)) {
        if (r.recompute == 0) {
          r.generated = 1;
          r.first = t;
        } else {
          // A preempted request caught up: its next token, after the gap
          // the preemption made (in the inter-token gaps and TPOT).
          AddGap(t - r.last_token, 1);
          ++r.generated;
          r.prefilled = r.prompt;
          r.recompute = 0;
        }
        r.last_token = t;
        --outstanding_;
      }
    }
    if (r.generated == r.stage_target && r.finish < 0 &&
        r.prefilled == r.prompt) {
      finish(m.request);
    }
  }
  cohort_finishers_before(kAll);
  if (decoded > 0) AddGap(gap, decoded);
  if (itl_.size() >= itl_fold_at_) FoldItl();
  // Decoders whose token came with the cohort's (or who start one) join
  // it: from the next step on they cost nothing one by one.
  const bool joins =
      use_cohort_ && (cohort.size() == 0 || cohort.last_token() == t);
  if (any_finished || joins) {
    std::erase_if(running_[k], [&](int64_t i) {
      const RequestState& r = reqs_[i];
      if (r.finish >= 0) return true;
      if (!joins || InPrefill(r) || r.last_token != t) return false;
      cohort.Join(i, r);
      return true;
    });
  }
}

// Retires, in order of leaving, every micro-batch out by `t`.
void Replica::RetireUntil(double t) {
  const size_t slots = done_at_.size();
  for (;;) {
    size_t first = slots;
    for (size_t k = 0; k < slots; ++k) {
      if (done_at_[k] >= 0 && done_at_[k] <= t &&
          (first == slots || done_at_[k] < done_at_[first])) {
        first = k;
      }
    }
    if (first == slots) return;
    Retire(first);
  }
}

absl::Status Replica::Iterate() {
  wakes_on_arrival_ = false;
  now_ = std::max(now_, next_launch_);
  iteration_time_ = now_;
  RetireUntil(now_);
  stats_.max_waiting = std::max<int64_t>(
      stats_.max_waiting, static_cast<int64_t>(waiting_.size() - head_));
  const size_t slots = done_at_.size();
  const SchedulerLimits sched{
      limits_.max_num_seqs, limits_.max_num_batched_tokens, limits_.preemption};
  size_t launched = slots;
  bool any_free = false;
  for (size_t j = 0; j < slots && launched == slots; ++j) {
    const size_t k = (next_slot_ + j) % slots;
    if (done_at_[k] >= 0) continue;  // its micro-batch is in flight
    any_free = true;
    SchedulerView view{reqs_,
                       running_[k],
                       waiting_,
                       head_,
                       running_total_,
                       admissions_,
                       kv_,
                       use_cohort_ ? &cohorts_[k] : nullptr,
                       now_};
    const int64_t hits_before = kv_.hit_tokens();
    scheduler_.Schedule(sched, view, batches_[k]);
    // Cached prompt tokens are not computed; preempted ones are again.
    outstanding_ -= kv_.hit_tokens() - hits_before;
    outstanding_ += view.preempted_tokens;
    if (!batches_[k].empty()) launched = k;
  }
  if (launched == slots) {
    // Nothing to launch now: wait for a micro-batch to leave the last
    // stage or, with a slot free, the next arrival (Enqueue).
    double next = std::numeric_limits<double>::infinity();
    for (size_t k = 0; k < slots; ++k) {
      if (done_at_[k] >= 0) next = std::min(next, done_at_[k]);
    }
    wakes_on_arrival_ = any_free;
    now_ = std::max(now_, next);
    return absl::OkStatus();
  }
  return Launch(launched);
}

// The micro-batch just scheduled in `slot` starts now: counted against the
// step cap, timed, and in flight until now + its step time.
absl::Status Replica::Launch(size_t slot) {
  if (++control_.steps > control_.max_steps) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "simulation stopped after ", control_.max_steps, " steps (the limit, ",
        control_.max_steps_name, ") with ", control_.done, " of ",
        control_.total, " requests finished; simulate fewer requests"));
  }
  if ((control_.steps & 1023) == 0 && control_.stop && control_.stop()) {
    return absl::DeadlineExceededError(
        absl::StrCat("simulation stopped at step ", control_.steps, " (",
                     control_.done, " of ", control_.total,
                     " requests finished): deadline exceeded or cancelled"));
  }
  ++stats_.steps;
  const Batch& batch = batches_[slot];
  ASSIGN_OR_RETURN(StepTime t,
                   batch.cohort.count > 0
                       ? cost_.TimeFolded(batch.sequences, batch.cohort)
                       : cost_.Time(batch.sequences));
  // Blocks reloaded from an offload tier, and swapped KV, move before the
  // step computes past them (kv_offload.h).
  if (const double reload = kv_.TakeTransferSeconds(); reload > 0) {
    t.seconds += reload;
    if (t.interval_seconds > 0) t.interval_seconds += reload;
  }
  if (!(t.seconds > 0) || !std::isfinite(t.seconds) ||
      !std::isfinite(t.interval_seconds)) {
    return absl::InternalError(absl::StrCat("simulation: step time ", t.seconds,
                                            " s, interval ", t.interval_seconds,
                                            " s"));
  }
  // A stage never takes longer than the whole traversal.
  const double interval = t.interval_seconds > 0
                              ? std::min(t.interval_seconds, t.seconds)
                              : t.seconds;
  done_at_[slot] = now_ + t.seconds;
  step_seconds_[slot] = t.seconds;
  next_launch_ = now_ + interval;
  next_slot_ = (slot + 1) % done_at_.size();
  stats_.busy_seconds += done_at_[slot] - std::max(now_, busy_until_);
  busy_until_ = std::max(busy_until_, done_at_[slot]);
  stats_.running_seconds += static_cast<double>(batch.size()) * t.seconds;
  stats_.kv_usage_peak = std::max(stats_.kv_usage_peak, kv_.usage());
  return absl::OkStatus();
}

bool Replica::Coasts() const {
  // Launches back to back (the interval is the step), nothing but the
  // cohort running, and its next retire finishes nobody.
  return use_cohort_ && done_at_.size() == 1 && done_at_[0] >= 0 &&
         done_at_[0] == next_launch_ && batches_[0].sequences.empty() &&
         batches_[0].cohort.count > 0 && running_[0].empty() &&
         cohorts_[0].steps_to_next_finish() > 1;
}

absl::Status Replica::Coast(double horizon) {
  while (Coasts() && done_at_[0] < horizon) {
    now_ = iteration_time_ = done_at_[0];
    Retire(0);
    // What the scheduler would build again: the same cohort, one token on.
    batches_[0].cohort.context_sum = cohorts_[0].context_sum();
    RETURN_IF_ERROR(Launch(0));
  }
  return absl::OkStatus();
}

}  // namespace ridgeline::serving
