// Evaluates the points of a Space: hardware and deployment axes applied to
// the base scenario, timed by the engine, judged by the metrics of
// objectives.h.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "ridgeline/engine/result.h"
#include "ridgeline/explore/objectives.h"
#include "ridgeline/explore/space.h"

namespace ridgeline::explore {

struct PointOutcome {
  MetricValues metrics;
  bool fits = true;
  // Some weights, KV cache or activations sit off the device (host memory
  // over a link, flash): fits, but read at the link's bandwidth.
  bool spilled = false;
  // (required bytes - capacity of all tiers) / capacity, >= 0.
  double memory_overflow = 0;
};

// The metrics of one analysis of `s` (objectives.h has the formulas);
// `die_area_mm2` is the point's stated area (NaN: none, the per-mm2
// metrics are then unknown).
void MetricsFromAnalysis(const engine::AnalysisResult& r,
                         const engine::Scenario& s, PointOutcome* out,
                         double die_area_mm2 = kUnknown);

// Holds per-thread scratch (a hardware copy, the engine's op tables per
// deployment combination): one per thread; the Space must outlive it.
class SpaceEvaluator {
 public:
  static absl::StatusOr<SpaceEvaluator> Create(const Space& space);
  SpaceEvaluator(SpaceEvaluator&&) noexcept;
  SpaceEvaluator& operator=(SpaceEvaluator&&) noexcept;
  ~SpaceEvaluator();

  // The point at grid index `index` (< space.Grid().total()). Errors from
  // the engine (a format the part cannot execute, a tensor-parallel degree
  // the model does not divide) are returned, not hidden.
  absl::Status Evaluate(uint64_t index, PointOutcome* out);
  // The same with explicit axis digits.
  absl::Status EvaluateDigits(const uint64_t* digits, PointOutcome* out);
  // The full scenario of a point (for sensitivity and reports).
  engine::Scenario ScenarioAt(const uint64_t* digits) const;

 private:
  struct Impl;
  explicit SpaceEvaluator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ridgeline::explore
