// Analyze(): prefill and every decode step of one scenario, then the
// bottleneck, economy and suggestions.
//
// decode_first_step is the step at KV length prompt + 1 (it feeds the token
// the prefill emitted); decode_last_step is at prompt + generated - 1.
#include "ridgeline/engine/analyze.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_format.h"
#include "analysis.h"
#include "economy.h"
#include "operators.h"
#include "prepare.h"
#include "report.h"
#include "ridgeline/engine/status_macros.h"
#include "roofline.h"
#include "suggestions.h"

namespace ridgeline::engine {
namespace internal {
namespace {

// Running sums of one KV-dependent op over the decode steps.
struct OpAccumulator {
  double flops = 0;
  std::array<double, kOperandClassCount> read{}, write{};
  double compute = 0, memory = 0, overhead = 0, seconds = 0;
  Timing last;
};

}  // namespace

absl::StatusOr<AnalysisResult> AnalyzeValidated(const Scenario& s, bool full) {
  Prepared prep;
  RETURN_IF_ERROR(Prepare(s, &prep));
  const GraphContext& g = prep.g;
  const PlacementInfo& place = prep.place;
  const OpList& dec0 = prep.dec0;
  const OpList& slope = prep.slope;
  const Hardware& hw = s.hardware;
  const int tiers = static_cast<int>(hw.tiers.size());
  const int64_t batch = s.workload.batch;
  const int64_t prompt = s.workload.prompt_tokens;
  const int64_t generated = s.workload.generated_tokens;
  const int64_t decode_steps = std::max<int64_t>(generated - 1, 0);

  AnalysisResult r;
  r.model_id = s.model.id;
  r.hardware_id = hw.id;
  r.matmul_math = g.matmul_math;
  r.memory = std::move(prep.memory);
  if (s.parallelism.tensor_parallel > 1 &&
      !hw.interconnect_bytes_per_second.has_value()) {
    r.warnings.push_back(
        "tensor parallelism on hardware without a published interconnect "
        "bandwidth: all-reduce traffic is not timed, so the result is an "
        "upper bound on speed that ignores communication");
  }
  if (s.model.max_context > 0 && prompt + generated > s.model.max_context) {
    r.warnings.push_back(absl::StrFormat(
        "prompt + generated tokens (%d) exceed the model's max_context (%d, "
        "max_position_embeddings): the timing is computed, but the model "
        "may not support this length without RoPE scaling",
        prompt + generated, s.model.max_context));
  }
  // MakeGraphContext only lets a matmul type without an executing peak
  // through when the hardware has no peak at all.
  r.compute_roof_known =
      ExecutedMathType(hw.peak_ops_per_second, g.matmul_math).has_value();
  const double matmul_peak =
      hw.peak_ops_per_second[static_cast<int>(g.matmul_math)].value_or(0);
  r.ridge_point =
      matmul_peak / hw.tiers[place.weight_tier].read_bandwidth_bytes_per_second;

  const Evaluator ev(s, place);
  r.pure_roofline = ev.pure();

  // Prefill: one step over batch x prompt tokens.
  if (full) {
    r.prefill = EvaluateStep(Phase::kPrefill, batch * prompt, prompt,
                             prep.prefill, nullptr, ev, place, tiers);
  } else {
    r.prefill.phase = Phase::kPrefill;
    r.prefill.tokens = batch * prompt;
    r.prefill.kv_length = prompt;
    r.prefill.totals =
        TimeStep(prep.prefill, nullptr, prompt, ev.prefill_fixed(), ev, place,
                 tiers, nullptr, nullptr);
  }
  r.ttft_seconds = r.prefill.totals.seconds;
  r.prefill_tokens_per_second =
      r.ttft_seconds > 0 ? static_cast<double>(batch * prompt) / r.ttft_seconds
                         : 0;

  // Decode: ops that do not depend on the KV length are timed once; the
  // KV-dependent ones at every step's own context length.
  r.decode.phase = r.decode_first_step.phase = r.decode_last_step.phase =
      Phase::kDecode;
  r.decode.tokens = r.decode_first_step.tokens = r.decode_last_step.tokens =
      batch;
  r.decode.steps = decode_steps;
  absl::InlinedVector<int, internal::kInlineOps> linear;  // op indices
  absl::InlinedVector<int, internal::kInlineOps> linear_index(dec0.size(), -1);
  absl::InlinedVector<Timing, internal::kInlineOps> const_timing(dec0.size());
  double const_seconds = ev.per_step();
  for (size_t i = 0; i < dec0.size(); ++i) {
    if (dec0[i].kv_dependent) {
      linear_index[i] = static_cast<int>(linear.size());
      linear.push_back(static_cast<int>(i));
    } else {
      const_timing[i] = ev.Time(dec0[i]);
      const_seconds += const_timing[i].seconds;
    }
  }
  if (decode_steps > 0) {
    absl::InlinedVector<OpAccumulator, internal::kInlineOps> acc(linear.size());
    OpList scratch;
    for (int i : linear) scratch.push_back(dec0[i]);
    // Raw pointers: the inline/heap branch of InlinedVector's operator[]
    // stays out of the per-step loop.
    const OpCost* base_ops = dec0.data();
    const OpCost* slope_ops = slope.data();
    const int* lin = linear.data();
    OpCost* step_ops = scratch.data();
    OpAccumulator* sums = acc.data();
    const size_t n_linear = linear.size();
    double total = 0;
    for (int64_t i = 1; i <= decode_steps; ++i) {
      const int64_t kv = prompt + i;
      double step = const_seconds;
      for (size_t j = 0; j < n_linear; ++j) {
        OpCost& op = step_ops[j];
        OpAt(base_ops[lin[j]], slope_ops[lin[j]], KeysRead(op, kv), &op);
        const Timing t = ev.Time(op);
        OpAccumulator& a = sums[j];
        a.flops += op.flops;
        for (int c = 0; c < kOperandClassCount; ++c) {
          a.read[c] += op.read[c];
          a.write[c] += op.write[c];
        }
        a.compute += t.compute;
        a.memory += t.memory;
        a.overhead += t.overhead;
        a.seconds += t.seconds;
        a.last = t;
        step += t.seconds;
      }
      if (i == 1) r.tpot_first_seconds = step;
      if (i == decode_steps) r.tpot_last_seconds = step;
      total += step;
    }
    const double steps = static_cast<double>(decode_steps);
    r.decode.kv_length = prompt + decode_steps;
    if (full) {
      // Per-op sums over all steps.
      r.decode.ops.reserve(dec0.size());
      for (size_t i = 0; i < dec0.size(); ++i) {
        if (linear_index[i] < 0) {
          r.decode.ops.push_back(
              MakeOpResult(dec0[i], const_timing[i], place, tiers, steps));
        } else {
          const OpAccumulator& a = acc[linear_index[i]];
          OpCost sum = dec0[i];
          sum.flops = a.flops;
          sum.read = a.read;
          sum.write = a.write;
          Timing t = a.last;
          t.compute = a.compute;
          t.memory = a.memory;
          t.overhead = a.overhead;
          t.seconds = a.seconds;
          t.bound = DominantBound(t.compute, t.memory, 0, t.overhead);
          r.decode.ops.push_back(MakeOpResult(sum, t, place, tiers, 1));
        }
        AddTotals(AmountsOf(r.decode.ops.back()), &r.decode.totals);
      }

      // The first and last steps in full (the same step when there is one).
      r.decode_first_step = EvaluateStep(Phase::kDecode, batch, prompt + 1,
                                         dec0, &slope, ev, place, tiers);
      r.decode_last_step =
          decode_steps == 1
              ? r.decode_first_step
              : EvaluateStep(Phase::kDecode, batch, prompt + decode_steps, dec0,
                             &slope, ev, place, tiers);
    }
    r.decode.totals.seconds = total;  // includes the per-step overheads
    r.tpot_mean_seconds = total / steps;
    r.decode_tokens_per_second_per_sequence = 1 / r.tpot_mean_seconds;
    r.decode_tokens_per_second_total =
        static_cast<double>(batch) / r.tpot_mean_seconds;
  }
  r.e2e_seconds = r.ttft_seconds + r.decode.totals.seconds;
  if (!full) return r;

  ComputeBottleneck(&r, decode_steps > 0);
  ComputeEconomy(s, &r);
  if (s.options.suggestions) ComputeSuggestions(s, &r);
  return r;
}

}  // namespace internal

absl::StatusOr<AnalysisResult> Analyze(const Scenario& scenario) {
  RETURN_IF_ERROR(ValidateScenario(scenario));
  return internal::AnalyzeValidated(scenario, true);
}

}  // namespace ridgeline::engine
