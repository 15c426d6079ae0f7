// Builder of OpCost entries for the operator graph (operators.cc and
// operators_recurrent.cc). Internal to the engine; not thread-safe (one per
// graph being built).
#pragma once

#include <algorithm>
#include <cmath>
#include <string_view>

#include "operators.h"

namespace ridgeline::engine::internal {

// Bytes one instance of an op moves, per operand class and direction.
struct OpTraffic {
  double weights_read = 0;
  double activations_read = 0;
  double activations_written = 0;
  double kv_read = 0;
  double kv_written = 0;
};

// A value-initialised op: new ops are copied from it, which compilers do
// with vector moves, where value-initialising in place takes a `rep stos`
// (a fifth of building a step's graph).
inline const OpCost kBlankOp{};

// Builder for the ops of one layer group (or of the whole model).
class Emitter {
 public:
  Emitter(const GraphContext& g, OpList* out) : g_(g), out_(out) {}

  // The layer group the following ops belong to (-1: none).
  void set_group_index(int i) { group_index_ = i; }

  OpClass MatmulClass(double rows) const {
    return rows <= static_cast<double>(g_.options.gemv_max_tokens)
               ? OpClass::kGemv
               : OpClass::kGemm;
  }

  // Per-instance amounts (`flops`, `traffic`); multiplied by `layers` here.
  OpCost& Add(OpKind kind, OpClass cls, std::string_view group, int64_t layers,
              int kernels, MathType math, double rows, double flops,
              const OpTraffic& traffic) {
    OpCost& op = out_->emplace_back(kBlankOp);
    op.kind = kind;
    op.op_class = cls;
    op.layer_group = group;
    op.group_index = group_index_;
    op.layers = layers;
    op.kernels_per_layer = kernels;
    op.math = math;
    // Rounded half up (truncation of a non-negative value), as std::llround,
    // without its libm call.
    op.rows = static_cast<int64_t>(std::max(rows, 0.0) + 0.5);
    const double l = static_cast<double>(layers);
    op.flops = flops * l;
    op.read[kWeights] = traffic.weights_read * l;
    op.read[kAct] = traffic.activations_read * l;
    op.read[kKv] = traffic.kv_read * l;
    op.write[kAct] = traffic.activations_written * l;
    op.write[kKv] = traffic.kv_written * l;
    return op;
  }

  // `count` all-reduces per layer of `rows` x `width` activations over
  // g.tensor_parallel devices (ring: each device sends and receives
  // 2 (tp - 1) / tp of the buffer, so 4 (tp - 1) / tp of it crosses its
  // link, which the interconnect bandwidth counts in both directions). The
  // local sums are (tp - 1) / tp adds per element; the buffer is read and
  // written once.
  void AllReduce(std::string_view group, int64_t layers, int count, double rows,
                 double width) {
    const double tp = static_cast<double>(g_.tensor_parallel);
    const double elements = count * rows * width;
    const double buffer = elements * g_.act_bytes;
    OpCost& op =
        Add(OpKind::kAllReduce, OpClass::kElementwise, group, layers, count,
            g_.elementwise_math, rows, (tp - 1) / tp * elements,
            {.activations_read = buffer, .activations_written = buffer});
    op.link_bytes = 4 * (tp - 1) / tp * buffer * static_cast<double>(layers);
    op.collective = Collective::kAllReduce;
    op.group = g_.tensor_parallel;
    op.call_bytes = rows * width * g_.act_bytes;
    op.calls = static_cast<double>(count) * static_cast<double>(layers);
  }

  // Expert parallelism: dispatch and combine, two all-to-alls per layer.
  // Of `visits` token-expert visits (rows of `width` activations) the
  // (ep - 1) / ep that go to other devices are sent, and as many arrive;
  // combine sends the expert outputs back the same way.
  void AllToAll(std::string_view group, int64_t layers, double visits,
                double width) {
    const double ep = static_cast<double>(g_.expert_parallel);
    const double sent = visits * (ep - 1) / ep * width * g_.act_bytes;
    OpCost& op =
        Add(OpKind::kAllToAll, OpClass::kElementwise, group, layers, 2,
            g_.elementwise_math, visits, 0,
            {.activations_read = 2 * sent, .activations_written = 2 * sent});
    op.link_bytes = 4 * sent * static_cast<double>(layers);
    op.collective = Collective::kAllToAll;
    op.group = g_.expert_parallel;
    op.call_bytes = sent;
    op.calls = 2 * static_cast<double>(layers);
  }

  // Pipeline parallelism: the step's hidden states (rows x width, activation
  // precision) go from each stage to the next, stages - 1 sends in turn.
  // The graph holds every layer once: its times summed are a token's trip
  // through all stages (decode's per-token latency).
  void PipelineSends(double rows, double width) {
    const double message = rows * width * g_.act_bytes;
    const double sends = static_cast<double>(g_.pipeline_parallel - 1);
    OpCost& op = Add(OpKind::kPipelineSend, OpClass::kElementwise, "", 1, 1,
                     g_.elementwise_math, rows, 0,
                     {.activations_read = sends * message,
                      .activations_written = sends * message});
    op.link_bytes = 2 * sends * message;  // sent by one, received by the next
    op.collective = Collective::kSend;
    op.group = g_.replica_devices;
    op.call_bytes = message;
    op.calls = sends;
  }

  // A weight-bearing matmul: rows x k by k x n, input and output in
  // activation precision.
  OpCost& Matmul(OpKind kind, std::string_view group, int64_t layers,
                 double rows, double k, double n) {
    OpCost& op = Add(kind, MatmulClass(rows), group, layers, 1, g_.matmul_math,
                     rows, 2 * rows * k * n,
                     {.weights_read = k * n * g_.weight_bytes,
                      .activations_read = rows * k * g_.act_bytes,
                      .activations_written = rows * n * g_.act_bytes});
    op.pim_candidate = true;
    op.dominant = OperandClass::kWeights;
    op.dequantized = g_.weights_dequantized;
    return op;
  }

 private:
  const GraphContext& g_;
  OpList* out_;
  int group_index_ = -1;
};

}  // namespace ridgeline::engine::internal
