// One request's progress through a simulated deployment: the record the
// scheduler, the replica event loop and the deployment's hand-offs share.
// Times are seconds on the simulation's clock (-1: not yet). Plain data.
#pragma once

#include <cstdint>

namespace ridgeline::serving {

struct RequestState {
  double arrival = 0;
  double admitted = -1;  // first admission (a prefill replica's if split)
  double first = -1;     // first token
  double finish = -1;    // this stage's end; the request's at its last
  int64_t prompt = 0;
  int64_t generated_target = 0;
  int64_t prefilled = 0;
  int64_t generated = 0;
  // KV tokens held on the current replica from admission to its stage end
  // (whole blocks).
  int64_t reserve = 0;
  double last_token = -1;  // when its latest token appeared
  // The generated count at which the current replica is done with it:
  // generated_target, or 1 on a prefill replica of a split deployment.
  int64_t stage_target = 0;
  // Prefix caching (kv_cache.h): the leading prompt blocks whose cache
  // entries it holds on the current replica, and the prompt tokens its
  // admission found cached (their prefill skipped).
  int64_t cached_blocks = 0;
  int64_t prefix_hit_tokens = 0;
  int64_t offload_hit_tokens = 0;  // of those, reloaded from offload tiers
  // Preemption by recompute (scheduler.h): the generated tokens a preempted
  // request feeds back with its prompt when it is admitted again (0 when
  // none), and how often it was preempted.
  int64_t recompute = 0;
  int64_t preemptions = 0;
  // Preemption by swap: the KV tokens it has in the swap tier while
  // preempted (0 when none), and how often its KV was swapped out.
  int64_t swapped_tokens = 0;
  int64_t swaps = 0;
  // Its place in the current replica's running order: the replica's
  // admission count when it was (last) admitted.
  int64_t running_order = 0;
};

// The tokens a request's prefill computes: its prompt, and after a
// preemption its generated tokens too.
inline int64_t PrefillTarget(const RequestState& r) {
  return r.prompt + r.recompute;
}
inline bool InPrefill(const RequestState& r) {
  return r.prefilled < PrefillTarget(r);
}

}  // namespace ridgeline::serving
