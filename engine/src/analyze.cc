// Analyze(): prefill and every decode step of one scenario, then the
// bottleneck and economy (suggestions: explore/suggestions.h).
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
#include "collectives.h"
#include "decode_sum.h"
#include "economy.h"
#include "operators.h"
#include "prepare.h"
#include "report.h"
#include "ridgeline/engine/status_macros.h"
#include "roofline.h"
#include "speculative_phase.h"
#include "stop.h"

namespace ridgeline::engine {
namespace internal {

absl::StatusOr<AnalysisResult> AnalyzeValidated(const Scenario& s, bool full) {
  Prepared prep;
  RETURN_IF_ERROR(Prepare(s, &prep));
  return AnalyzePrepared(s, &prep, full ? Detail::kFull : Detail::kCompare);
}

absl::StatusOr<AnalysisResult> AnalyzePrepared(const Scenario& s,
                                               Prepared* prep_ptr,
                                               Detail detail,
                                               PointTallies* tallies) {
  Prepared& prep = *prep_ptr;
  // Per-op results feed the economy; the rest only the full report.
  const bool per_op = detail == Detail::kEconomy || detail == Detail::kFull;
  // Design points: the economy from tallies, without per-op results.
  const bool tally = detail == Detail::kPoint;
  EnergyTally prefill_energy, decode_energy;
  const bool full = detail == Detail::kFull;
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
  r.parameters = CountParameters(s.model);
  if (r.memory.fits && !r.memory.spilled.empty()) {
    r.warnings.push_back(absl::StrCat(
        "fits, but off the device: ", r.memory.spilled,
        "; those bytes move at the link's bandwidth every step they are read"));
  }
  // Inline ECC keeps its check bits in the tier's own DRAM (nvidia-smi
  // shows 15/16 of an L40S with ECC on). The fits check keeps the physical
  // capacity, as ECC can be turned off; an answer that needs it off says so.
  for (const TierUsage& u : r.memory.tiers) {
    const double share = hw.tiers[static_cast<size_t>(u.tier)].inline_ecc_share;
    const double usable = u.capacity_bytes * (1 - share);
    if (r.memory.fits && share > 0 && u.used_bytes > usable) {
      r.warnings.push_back(absl::StrFormat(
          "%s holds %.1f GB, more than the %.1f GB of its %.1f GB usable with "
          "inline ECC on, as the part ships (%.4g of it holds check bits): it "
          "fits only with ECC turned off",
          u.name, u.used_bytes / 1e9, usable / 1e9, u.capacity_bytes / 1e9,
          share));
    }
  }
  if (s.parallelism.tensor_parallel > 1 &&
      !hw.interconnect_bytes_per_second.has_value()) {
    r.warnings.push_back(
        "tensor parallelism on hardware without a published interconnect "
        "bandwidth: all-reduce traffic is not timed, so the result is an "
        "upper bound on speed that ignores communication");
  }
  {
    // Collectives over an unpublished link cost no time (collectives.h).
    const Parallelism& par = s.parallelism;
    const int64_t groups[] = {par.tensor_parallel, par.expert_parallel,
                              par.pipeline_parallel > 1 ? ReplicaDevices(par)
                                                        : 1};
    bool out_unknown = false, up_unknown_pp = false;
    for (int64_t group : groups) {
      if (group <= 1) continue;
      const Link link = LinkFor(hw, group);
      if (link.scale_out && link.bytes_per_second <= 0) out_unknown = true;
    }
    if (par.pipeline_parallel > 1 &&
        LinkFor(hw, ReplicaDevices(par)).bytes_per_second <= 0) {
      up_unknown_pp = true;
    }
    if (out_unknown) {
      r.warnings.push_back(absl::StrFormat(
          "a parallel group spans nodes (hardware.devices_per_node = %d) but "
          "the hardware publishes no scale-out bandwidth: collectives across "
          "nodes are not timed, so the result is an upper bound on speed",
          hw.devices_per_node.value_or(0)));
    } else if (up_unknown_pp) {
      r.warnings.push_back(
          "pipeline parallelism on hardware without a published interconnect "
          "bandwidth: stage-to-stage sends are not timed, so the result is an "
          "upper bound on speed");
    }
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
  if (!r.compute_roof_known) {
    r.warnings.push_back(absl::StrCat(
        "compute roof unknown for ", hw.id,
        ": ttft_seconds, prefill_tokens_per_second and e2e_seconds count the "
        "memory roof only (a lower bound on time, an upper bound on speed), "
        "not a prediction"));
  }
  const double matmul_peak =
      hw.peak_ops_per_second[static_cast<int>(g.matmul_math)].value_or(0);
  r.ridge_point =
      matmul_peak / hw.tiers[place.weight_tier].read_bandwidth_bytes_per_second;

  const Evaluator ev(s, place);
  r.pure_roofline = ev.pure();

  // Prefill: one step over batch x prompt tokens.
  if (per_op) {
    r.prefill = EvaluateStep(Phase::kPrefill, batch * prompt, prompt,
                             prep.prefill, nullptr, ev, place, tiers);
  } else {
    r.prefill.phase = Phase::kPrefill;
    r.prefill.tokens = batch * prompt;
    r.prefill.kv_length = prompt;
    r.prefill.totals =
        TimeStep(prep.prefill, nullptr, prompt, ev.prefill_fixed(), ev, place,
                 tiers, nullptr, nullptr, tally ? &prefill_energy : nullptr);
  }
  // One more per-step overhead for every chunk after the first.
  r.prefill.steps = prep.prefill_chunks;
  r.prefill.totals.seconds +=
      static_cast<double>(prep.prefill_chunks - 1) * ev.per_step();
  r.ttft_seconds = r.prefill.totals.seconds;
  // Pipeline prefill: m micro-batches through p stages take m + p - 1 stage
  // slots of (prefill / m) / p each (micro-batch time taken as 1/m of the
  // batch's: an upper bound on speed), so TTFT = prefill (m + p - 1) /
  // (m p) = prefill / p x (1 + bubble), bubble = (p - 1) / m.
  if (const int64_t pp = s.parallelism.pipeline_parallel; pp > 1) {
    const double p = static_cast<double>(pp);
    const double m = static_cast<double>(s.parallelism.pipeline_micro_batches > 0
                                             ? s.parallelism.pipeline_micro_batches
                                             : pp);
    r.pipeline_bubble_fraction = (p - 1) / m;
    r.ttft_seconds = r.prefill.totals.seconds * (m + p - 1) / (m * p);
  }
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
    // Summed in closed form per regime (decode_sum.h), not step by step.
    DecodeSums sums;
    StopPoll stop(s.options.should_stop);
    if (!SumDecodeSteps(dec0, slope, linear.data(), linear.size(), prompt,
                        decode_steps, const_seconds, ev, &sums, &stop)) {
      return StoppedError();
    }
    const auto& acc = sums.acc;
    r.tpot_first_seconds = sums.first;
    r.tpot_last_seconds = sums.last;
    const double total = sums.total;
    const double steps = static_cast<double>(decode_steps);
    r.decode.kv_length = prompt + decode_steps;
    if (per_op) {
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

    }
    if (tally) {
      for (size_t i = 0; i < dec0.size(); ++i) {
        if (linear_index[i] < 0) {
          const Timing& t = const_timing[i];
          TallyOp(dec0[i].flops, t.math, t.tier, dec0[i].read, dec0[i].write,
                  place.frac, tiers, steps, &decode_energy);
        } else {
          const OpAccumulator& a = acc[linear_index[i]];
          TallyOp(a.flops, a.last.math, a.last.tier, a.read, a.write,
                  place.frac, tiers, 1, &decode_energy);
        }
      }
    }
    if (full) {
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
  ApplyLoraColdLoads(s, prep, &r);
  RETURN_IF_ERROR(ApplySpeculative(s, &r));
  r.e2e_seconds = r.ttft_seconds + r.decode.totals.seconds;
  // Data-parallel replicas serve their own requests side by side.
  // With data-parallel attention every device of the expert group serves
  // its own batch (the workload's), so they add up too.
  const double replicas =
      static_cast<double>(s.parallelism.data_parallel) *
      (s.parallelism.attention_data_parallel
           ? static_cast<double>(s.parallelism.expert_parallel)
           : 1.0);
  r.devices = TotalDevices(s.parallelism);
  r.deployment_prefill_tokens_per_second =
      replicas * r.prefill_tokens_per_second;
  r.deployment_decode_tokens_per_second =
      replicas * r.decode_tokens_per_second_total;
  if (detail == Detail::kEconomy) ComputeEconomy(s, &r);
  if (tally) {
    prefill_energy.seconds = r.ttft_seconds;
    decode_energy.seconds = r.decode.totals.seconds;
    FinishEconomy(s, prefill_energy, decode_energy, r.e2e_seconds, &r.economy);
    if (tallies != nullptr) *tallies = {prefill_energy, decode_energy};
  }
  if (!full) return r;

  ComputeBottleneck(&r, decode_steps > 0);
  ComputeEconomy(s, &r);
  return r;
}

}  // namespace internal

absl::StatusOr<AnalysisResult> Analyze(const Scenario& scenario) {
  RETURN_IF_ERROR(ValidateScenario(scenario));
  return internal::AnalyzeValidated(scenario, true);
}

absl::StatusOr<AnalysisResult> AnalyzeForComparison(const Scenario& scenario) {
  RETURN_IF_ERROR(ValidateScenario(scenario));
  return internal::AnalyzeValidated(scenario, false);
}

}  // namespace ridgeline::engine
