// Graph, footprint and placement of a scenario (see prepare.h).
#include "prepare.h"

#include <algorithm>
#include <array>

#include "ridgeline/engine/status_macros.h"

namespace ridgeline::engine::internal {

absl::Status Prepare(const Scenario& s, Prepared* p) {
  const int64_t tp = s.parallelism.tensor_parallel;
  if (tp > 1) p->shard = internal::TensorParallelShard(s.model, tp);
  ASSIGN_OR_RETURN(p->g,
                   internal::MakeGraphContext(s, tp > 1 ? p->shard : s.model));
  const GraphContext& g = p->g;
  const int64_t batch = s.workload.batch;
  const int64_t prompt = s.workload.prompt_tokens;
  const int64_t decode_steps =
      std::max<int64_t>(s.workload.generated_tokens - 1, 0);

  // Graphs: the prefill step, and decode as base + per-key slope.
  internal::BuildStepOps(g, StepShape{batch, prompt, prompt, -1}, &p->prefill);
  BuildDecode(g, batch, prompt + 1, &p->dec0, &p->slope);

  // Footprint: weights, KV at the longest context, peak activations (the
  // largest single op's inputs and outputs plus the residual stream).
  std::array<double, kOperandClassCount> need{};
  need[kWeights] = CountParameters(*g.model).total * g.weight_bytes;
  need[kKv] = static_cast<double>(batch) *
              internal::KvBytesPerSequence(
                  g, static_cast<double>(prompt + decode_steps));
  auto peak_acts = [&](const OpList& ops, double tokens) {
    double peak = 0;
    for (const OpCost& op : ops) {
      peak = std::max(peak, (op.read[kAct] + op.write[kAct]) /
                                static_cast<double>(op.layers));
    }
    return peak + tokens * s.model.hidden_size * g.act_bytes;
  };
  need[kAct] = peak_acts(p->prefill, static_cast<double>(batch * prompt));
  if (decode_steps > 0) {
    // Decode activations at the longest context (unfused scores grow with
    // it): base + x * slope at the last step.
    OpList last = p->dec0;
    for (size_t i = 0; i < last.size(); ++i) {
      if (!last[i].kv_dependent) continue;
      OpAt(p->dec0[i], p->slope[i], KeysRead(p->dec0[i], prompt + decode_steps),
           &last[i]);
    }
    need[kAct] =
        std::max(need[kAct], peak_acts(last, static_cast<double>(batch)));
  }
  p->memory = Place(s.hardware, s.pins, need, &p->place);
  return absl::OkStatus();
}

}  // namespace ridgeline::engine::internal
