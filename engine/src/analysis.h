// The analysis of one validated scenario, in full or reduced to what a
// what-if comparison needs. Internal to the engine; Analyze() is the public
// entry point.
#pragma once

#include "absl/status/statusor.h"
#include "economy.h"
#include "prepare.h"
#include "ridgeline/engine/result.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::engine::internal {

// `full`: everything; otherwise only what a suggestion compares (fit,
// TTFT, TPOT and throughput): no per-op results, first/last steps,
// bottleneck, economy or suggestions. `s` must be valid.
absl::StatusOr<AnalysisResult> AnalyzeValidated(const Scenario& s, bool full);

// How much of the analysis to build from a Prepared scenario.
enum class Detail {
  kCompare,  // what AnalyzeValidated(s, false) gives
  kPoint,    // + the economy, from energy tallies (no per-op results)
  kEconomy,  // + per-op prefill and decode results and the economy
  kFull,     // everything (AnalyzeValidated(s, true))
};
// The energy tallies of a kPoint analysis, from which FinishEconomy
// derives its economy (design points re-price from them).
struct PointTallies {
  EnergyTally prefill, decode;
};
// The analysis of `s` from `prep` (Prepare(s) or a placement redone for
// s.hardware); moves prep->memory into the result. With kPoint and
// `tallies`, the tallies the economy came from are copied there. CANCELLED
// (StoppedError) when s.options.should_stop stopped it.
absl::StatusOr<AnalysisResult> AnalyzePrepared(const Scenario& s,
                                               Prepared* prep, Detail detail,
                                               PointTallies* tallies = nullptr);

}  // namespace ridgeline::engine::internal
