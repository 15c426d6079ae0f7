// Roofline timing of op results and whole steps (see roofline.h).
#include "roofline.h"

namespace ridgeline::engine::internal {

double OpBytes(const OpCost& op, const PlacementInfo& p, int tiers,
               double scale) {
  double bytes = 0;
  for (int c = 0; c < kOperandClassCount; ++c) {
    for (int tier = 0; tier < tiers; ++tier) {
      const double f = p.frac[c][tier];
      if (f == 0) continue;
      bytes += op.read[c] * f * scale + op.write[c] * f * scale;
    }
  }
  return bytes;
}

OpResult MakeOpResult(const OpCost& op, const Timing& t, const PlacementInfo& p,
                      int tiers, double scale) {
  OpResult r;
  r.kind = op.kind;
  r.op_class = op.op_class;
  r.layer_group = op.layer_group;
  r.layers = op.layers;
  r.math = t.math;
  r.flops = op.flops * scale;
  for (int c = 0; c < kOperandClassCount; ++c) {
    for (int tier = 0; tier < tiers; ++tier) {
      const double f = p.frac[c][tier];
      if (f == 0) continue;
      r.traffic[c][tier].read = op.read[c] * f * scale;
      r.traffic[c][tier].write = op.write[c] * f * scale;
    }
  }
  r.bytes = OpBytes(op, p, tiers, scale);
  r.intensity = r.bytes > 0 ? r.flops / r.bytes : 0;
  r.compute_seconds = t.compute * scale;
  r.memory_seconds = t.memory * scale;
  r.interconnect_seconds = t.link * scale;
  r.overhead_seconds = t.overhead * scale;
  r.seconds = t.seconds * scale;
  r.bound = t.bound;
  r.executed_in_tier = t.tier;
  r.attained_flops_per_second = r.seconds > 0 ? r.flops / r.seconds : 0;
  return r;
}

OpAmounts AmountsOf(const OpResult& r) {
  return OpAmounts{.flops = r.flops,
                   .bytes = r.bytes,
                   .compute = r.compute_seconds,
                   .memory = r.memory_seconds,
                   .link = r.interconnect_seconds,
                   .seconds = r.seconds};
}

StepTotals TimeStep(const OpList& ops, const OpList* slope, int64_t kv_length,
                    double fixed, const Evaluator& ev, const PlacementInfo& p,
                    int tiers, std::vector<OpResult>* ops_out,
                    double* overhead) {
  StepTotals tot;
  double over = fixed;
  OpCost at;
  for (size_t i = 0; i < ops.size(); ++i) {
    const OpCost* op = &ops[i];
    if (slope != nullptr && op->kv_dependent) {
      at = *op;
      OpAt(*op, (*slope)[i], KeysRead(*op, kv_length), &at);
      op = &at;
    }
    const Timing t = ev.Time(*op);
    if (ops_out != nullptr)
      ops_out->push_back(MakeOpResult(*op, t, p, tiers, 1));
    // What AmountsOf(MakeOpResult(op, t, p, tiers, 1)) gives.
    AddTotals(OpAmounts{.flops = op->flops,
                        .bytes = OpBytes(*op, p, tiers, 1),
                        .compute = t.compute,
                        .memory = t.memory,
                        .link = t.link,
                        .seconds = t.seconds},
              &tot);
    over += t.overhead;
  }
  tot.seconds += fixed;
  if (overhead != nullptr) *overhead = over;
  return tot;
}

StepResult EvaluateStep(Phase phase, int64_t tokens, int64_t kv_length,
                        const OpList& ops, const OpList* slope,
                        const Evaluator& ev, const PlacementInfo& p,
                        int tiers) {
  StepResult s;
  s.phase = phase;
  s.steps = 1;
  s.tokens = tokens;
  s.kv_length = kv_length;
  s.ops.reserve(ops.size());
  const double fixed =
      phase == Phase::kPrefill ? ev.prefill_fixed() : ev.per_step();
  s.totals =
      TimeStep(ops, slope, kv_length, fixed, ev, p, tiers, &s.ops, nullptr);
  return s;
}

}  // namespace ridgeline::engine::internal
