// The decode phase summed over its steps. A KV-dependent op at step i reads
// x = min(prompt + i, window) keys; its FLOPs and bytes are affine in x,
// so (with the efficiency fixed: no plugin hook) each of its roofs is an
// affine line in x, and within one regime (an interval of x where the order
// of the lines does not change: compute vs memory, on the compute unit or
// in a PIM tier, against the interconnect) its time is affine too. The sum
// over the steps of a regime is then an arithmetic series: n x (first +
// last) / 2. Regime boundaries are the crossings of the lines, found
// analytically; the window caps x, after which every step is the same. A
// chunked layer reads x = ((prompt + i - 1) mod chunk) + 1: a sawtooth whose
// full chunks are alike, so one chunk is summed and repeated.
// Cost: O(KV-dependent ops x regimes), independent of the generated length.
// Equal to the step-by-step loop to floating-point rounding (relative
// 1e-9 for up to 10^7 steps; tests compare both on random scenarios).
// With a plugin efficiency hook the loop runs instead. Internal.
#pragma once

#include <array>
#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "operators.h"
#include "roofline.h"
#include "stop.h"

namespace ridgeline::engine::internal {

// Sums of one KV-dependent op over the decode steps.
struct OpAccumulator {
  double flops = 0;
  std::array<double, kOperandClassCount> read{}, write{};
  double compute = 0, memory = 0, overhead = 0, seconds = 0;
  Timing last;  // at the last step
};

struct DecodeSums {
  absl::InlinedVector<OpAccumulator, kInlineOps> acc;  // per linear op
  double total = 0;       // seconds of all steps (const_seconds included)
  double first = 0;       // seconds of the first step (KV prompt + 1)
  double last = 0;        // seconds of the last step (KV prompt + steps)
};

// `linear`: indices into dec0/slope of the KV-dependent ops;
// `const_seconds`: what every step pays besides them (the other ops and the
// per-step overhead). steps >= 1. `stop` (may be null) is ticked per step
// of the loop; false when it stopped the sum (*out is then partial).
bool SumDecodeSteps(const OpList& dec0, const OpList& slope,
                    const int* linear, size_t n_linear, int64_t prompt,
                    int64_t steps, double const_seconds, const Evaluator& ev,
                    DecodeSums* out, StopPoll* stop = nullptr);

// The reference: every step evaluated (what SumDecodeSteps replaces).
bool SumDecodeStepsLoop(const OpList& dec0, const OpList& slope,
                        const int* linear, size_t n_linear, int64_t prompt,
                        int64_t steps, double const_seconds,
                        const Evaluator& ev, DecodeSums* out,
                        StopPoll* stop = nullptr);

}  // namespace ridgeline::engine::internal
