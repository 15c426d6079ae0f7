// One scenario on many variants of its hardware (design-space exploration).
// For a fixed model, workload, formats, parallelism and options, every op's
// FLOPs and bytes do not depend on the hardware's numbers; only placement
// and the roofline division do. A DesignPointModel builds the operator
// graph once (prefill ops, decode as base + per-key slope, the footprint)
// and then evaluates the hardware as it is now: placement, roofline times
// with the decode steps summed in closed form, and the economy. The result
// equals Analyze() of the same scenario (suggestions off) to floating-point
// rounding, without per-op tables, first/last decode steps and bottleneck.
//
// The hardware may change numbers only: the same tiers (count, kind, PIM
// presence) and the same set of published peaks as at Create (the math the
// formats execute in is resolved once). Not thread-safe (one per thread);
// cheap to evaluate, allocation-light.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ridgeline/engine/result.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::engine {

class DesignPointModel {
 public:
  // Validates `base` (INVALID_ARGUMENT naming the field) and builds the
  // graph (UNIMPLEMENTED when the hardware cannot execute the formats).
  static absl::StatusOr<DesignPointModel> Create(const Scenario& base);
  DesignPointModel(DesignPointModel&&) noexcept;
  DesignPointModel& operator=(DesignPointModel&&) noexcept;
  ~DesignPointModel();

  // The hardware the next Evaluate() uses; change its numbers in place.
  Hardware& hardware();
  const Scenario& scenario() const;

  // Analysis of the scenario on hardware(): fits, footprint, TTFT, TPOT,
  // e2e, throughput and economy (no per-op tables). Errors:
  // FAILED_PRECONDITION when the hardware's shape changed (see above);
  // INVALID_ARGUMENT when a number is out of range (ValidateHardware).
  absl::Status Evaluate(AnalysisResult* out);

  // Re-derives out->economy for hardware() whose price or board power
  // (tdp_watts) changed since the last successful Evaluate(out), and
  // nothing else: neither enters the timing, so the result equals a fresh
  // Evaluate bit for bit, at the cost of the economy alone.
  // FAILED_PRECONDITION without a previous Evaluate.
  absl::Status Reprice(AnalysisResult* out);

 private:
  struct Impl;
  explicit DesignPointModel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ridgeline::engine
