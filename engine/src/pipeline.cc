// Pipeline stages of one step (see pipeline.h).
#include "pipeline.h"

#include <algorithm>

namespace ridgeline::engine::internal {

StageLayers SplitStages(const GraphContext& g, int64_t stages) {
  const int64_t layers = g.model->num_layers;
  StageLayers out(static_cast<size_t>(stages),
                  absl::InlinedVector<int64_t, 4>(g.groups.size(), 0));
  for (int64_t s = 0; s < stages; ++s) {
    for (int64_t l = s * layers / stages; l < (s + 1) * layers / stages; ++l) {
      const int grp = GroupOfLayer(g, l);
      if (grp >= 0) ++out[static_cast<size_t>(s)][static_cast<size_t>(grp)];
    }
  }
  return out;
}

PipelineInterval PipelineIntervalOf(const OpList& ops, const OpList* slope,
                                    int64_t kv_length, double fixed,
                                    const Evaluator& ev,
                                    const StageLayers& stages,
                                    const GraphContext& g) {
  const size_t p = stages.size();
  absl::InlinedVector<double, 16> stage(p, fixed);
  double send = 0;  // one stage boundary's send
  OpCost at;
  for (size_t i = 0; i < ops.size(); ++i) {
    const OpCost* op = &ops[i];
    // KV-dependent decode ops at the step's context, as TimeStep times them.
    if (slope != nullptr && op->kv_dependent) {
      at = *op;
      OpAt(*op, (*slope)[i], KeysRead(*op, kv_length), &at);
      op = &at;
    }
    const double t = ev.Time(*op).seconds;
    if (op->group_index >= 0) {
      const double group_layers =
          static_cast<double>(g.groups[static_cast<size_t>(op->group_index)]
                                  .layers);
      for (size_t s = 0; s < p; ++s) {
        stage[s] += t *
                    static_cast<double>(
                        stages[s][static_cast<size_t>(op->group_index)]) /
                    group_layers;
      }
    } else if (op->kind == OpKind::kPipelineSend) {
      send = op->calls > 0 ? t / op->calls : 0;
    } else if (op->kind == OpKind::kFinalNorm || op->kind == OpKind::kLmHead) {
      stage[p - 1] += t;
    } else {
      stage[0] += t;  // the embedding and its all-reduce
    }
  }
  PipelineInterval best;
  for (size_t s = 0; s < p; ++s) {
    const double with_send = stage[s] + (s + 1 < p ? send : 0);
    if (with_send > best.seconds) {
      best.seconds = with_send;
      best.stage = static_cast<int64_t>(s);
    }
  }
  return best;
}

}  // namespace ridgeline::engine::internal
