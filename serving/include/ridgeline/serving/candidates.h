// Plan's candidate space (serving::CandidateSpace): which deployments a plan
// sizes. Aggregated candidates are parts x pipeline stages x (tensor-parallel
// degree or expert-parallel degree) x format sets; disaggregated candidates
// are prefill pools (part x TP x formats) paired with decode pools (part x
// TP x formats) of the same format set, their P:D replica ratio searched up
// to max_pool_replicas:max_pool_replicas when they are sized
// (disaggregated_plan.h). The defaults (TP 1, 2, 4, 8; bf16 and fp8) and
// the cap on candidates live here, once; the service only resolves parts
// and calibrations and translates messages. Plain data, thread-compatible.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::serving {

struct Candidate;
struct PlanInput;

// The most candidates (aggregated candidates + prefill pools + decode
// pools) one plan sizes; servers may set a lower limit.
inline constexpr int64_t kMaxPlanCandidates = 512;
// Tensor-parallel degrees tried when none are given (those the model's
// heads cannot be split over are dropped).
inline constexpr int64_t kDefaultTensorParallel[] = {1, 2, 4, 8};
// The largest P and D of a P:D replica ratio when none is given.
inline constexpr int64_t kDefaultMaxPoolReplicas = 8;
inline constexpr int64_t kMaxPoolReplicasLimit = 64;

// bf16 everywhere, then fp8 weights, activations and KV cache.
std::vector<engine::Precision> DefaultPlanPrecisions();
// "weights/activations/kv", e.g. "fp8/fp8/fp8".
std::string FormatsLabel(const engine::Precision& p);

enum class DisaggregatedMode { kAuto, kOn, kOff };
// "auto", "on", "off" ("" = "off": requests that predate the field plan
// as before; the CLI's default is "auto"); INVALID_ARGUMENT naming `field`, the
// allowed values and the value otherwise.
absl::StatusOr<DisaggregatedMode> ParseDisaggregatedMode(
    absl::string_view mode, absl::string_view field);

// One resolved candidate part: its hardware, calibration and prices.
struct PlanPart {
  engine::Hardware hardware;
  engine::Efficiency efficiency;  // empty: pure roofline
  bool fp16_accumulation = false;
  engine::Economics economics;   // with the part's price overrides
  std::string profile_fallback;  // as Deployment::profile_fallback
  // The calibration's say on one replica shape of this part (a profile
  // fitted elsewhere: its extrapolation floor on the scenario, and the
  // warning to show, else ""). Unset: nothing to adjust.
  std::function<std::string(engine::Scenario*)> adjust;
};

// The axes as asked for; empty lists take the defaults. Field names in
// errors are the Plan request's ("candidates.tensor_parallel[2]").
struct CandidateAxes {
  std::vector<int64_t> tensor_parallel;       // default kDefaultTensorParallel
  std::vector<int64_t> pipeline_parallel;     // default {1}
  std::vector<int64_t> expert_parallel;       // default {1}
  std::vector<engine::Precision> precisions;  // default DefaultPlanPrecisions
  DisaggregatedMode mode = DisaggregatedMode::kOff;
  std::vector<int64_t> prefill_tensor_parallel;  // default tensor_parallel
  std::vector<int64_t> decode_tensor_parallel;   // default tensor_parallel
  int64_t max_pool_replicas = kDefaultMaxPoolReplicas;  // 1..64
};

class CandidateSpace {
 public:
  // Checks every list entry against the model (INVALID_ARGUMENT naming
  // "candidates.<list>[i]", the allowed values and the value) and fills
  // the defaults.
  static absl::StatusOr<CandidateSpace> Create(const engine::ModelConfig& model,
                                               CandidateAxes axes);

  bool aggregated() const { return axes_.mode != DisaggregatedMode::kOn; }
  bool disaggregated() const { return axes_.mode != DisaggregatedMode::kOff; }
  const CandidateAxes& axes() const { return axes_; }

  // An upper bound on the candidates Enumerate makes from this many parts
  // per list (before default degrees the heads do not divide are dropped),
  // so a caller can refuse a request before resolving any part.
  double UpperBound(size_t parts, size_t prefill_parts,
                    size_t decode_parts) const;

  // Appends to in->candidates, in->prefill_pools and in->decode_pools the
  // candidates of `base` (model, options; its hardware, parallelism,
  // precision, efficiency and economics are replaced) on these parts, and
  // sets in->max_pool_replicas.
  void Enumerate(const engine::Scenario& base, std::span<const PlanPart> parts,
                 std::span<const PlanPart> prefill_parts,
                 std::span<const PlanPart> decode_parts, PlanInput* in) const;

 private:
  CandidateSpace() = default;
  // The replica shapes of one aggregated part: pipeline stages x (TP, or EP
  // with attention data-parallel).
  std::vector<engine::Parallelism> ReplicaShapes() const;
  // Appends one candidate per format set of `part` at `parallelism`,
  // unless `tp_defaulted` and the heads cannot be split that way.
  void AddShape(const engine::Scenario& base, const PlanPart& part,
                const engine::Parallelism& parallelism, bool tp_defaulted,
                std::vector<Candidate>* out,
                std::vector<std::string>* warnings) const;

  engine::ModelConfig model_;
  CandidateAxes axes_;
  bool default_tp_ = false;  // tensor_parallel was not given
  bool default_prefill_tp_ = false;
  bool default_decode_tp_ = false;
};

}  // namespace ridgeline::serving
