#include "ridgeline/serving/pod_latency.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/serving/engine_step_cost.h"

namespace ridgeline::serving {
namespace {

// The placement and the KV capacity are those of a replica holding
// sequences of this nominal length; the capacity in tokens hardly depends
// on it (only the step's activations do, through the budget).
constexpr int64_t kNominalPrompt = 2048;
constexpr int64_t kNominalGenerated = 256;

absl::Status Bad(const char* field, const std::string& want, double got) {
  return engine::WithFieldPath(absl::InvalidArgumentError(absl::StrCat(
                                   field, ": must be ", want, "; got ", got)),
                               field);
}

}  // namespace

absl::StatusOr<std::unique_ptr<PodLatencyModel>> PodLatencyModel::Create(
    engine::Scenario scenario, const ServingConfig& config) {
  RETURN_IF_ERROR(ValidateServingConfig(config));
  ASSIGN_OR_RETURN(
      KvCapacity kv,
      ComputeKvCapacity(scenario, config, kNominalPrompt, kNominalGenerated));
  if (!kv.fits) return absl::FailedPreconditionError(kv.not_fitting);
  scenario.workload = EngineStepCost::ServingWorkload(
      std::max<int64_t>(1, kv.max_concurrency), kNominalPrompt,
      kNominalGenerated, config.max_num_batched_tokens);
  ASSIGN_OR_RETURN(std::unique_ptr<EngineStepCost> cost,
                   EngineStepCost::Create(scenario));
  return Create(std::move(cost), kv.kv_capacity_tokens, config);
}

absl::StatusOr<std::unique_ptr<PodLatencyModel>> PodLatencyModel::Create(
    std::unique_ptr<StepCost> cost, int64_t kv_capacity_tokens,
    const ServingConfig& config) {
  RETURN_IF_ERROR(ValidateServingConfig(config));
  if (cost == nullptr || kv_capacity_tokens < 1) {
    return absl::InvalidArgumentError(
        "a step model and a KV capacity of at least one token");
  }
  std::unique_ptr<PodLatencyModel> m(new PodLatencyModel());
  m->cost_ = std::move(cost);
  m->kv_capacity_tokens_ = kv_capacity_tokens;
  m->budget_ = config.max_num_batched_tokens;
  m->max_num_seqs_ = config.max_num_seqs;
  return m;
}

absl::StatusOr<PodLatency> PodLatencyModel::Predict(
    const PodState& state) const {
  std::lock_guard<std::mutex> lock(mu_);
  return PredictLocked(state);
}

absl::Status PodLatencyModel::PredictMany(std::span<const PodState> states,
                                          std::vector<PodLatency>* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  out->resize(states.size());
  for (size_t i = 0; i < states.size(); ++i) {
    ASSIGN_OR_RETURN((*out)[i], PredictLocked(states[i]));
  }
  return absl::OkStatus();
}

absl::StatusOr<PodLatency> PodLatencyModel::PredictLocked(
    const PodState& s) const {
  if (!(s.kv_cache_fraction >= 0 && s.kv_cache_fraction <= 1)) {
    return Bad("kv_cache_percentage", "in [0, 1]", s.kv_cache_fraction);
  }
  if (!(s.prefix_cache_score >= 0 && s.prefix_cache_score <= 1)) {
    return Bad("prefix_cache_score", "in [0, 1]", s.prefix_cache_score);
  }
  if (s.input_tokens < 0)
    return Bad("input_token_length", ">= 0", s.input_tokens);
  if (s.waiting < 0) return Bad("num_request_waiting", ">= 0", s.waiting);
  if (s.running < 0) return Bad("num_request_running", ">= 0", s.running);
  if (s.tokens_generated < 0) {
    return Bad("num_tokens_generated", ">= 0", s.tokens_generated);
  }
  // A batch never holds more than the runtime admits, and a context never
  // exceeds what the KV cache holds: clamp rather than time a step that
  // cannot exist (the gateway's counts may include requests vLLM queues).
  const int64_t running = std::min(s.running, max_num_seqs_ - 1);
  const double used = s.kv_cache_fraction * kv_capacity_tokens_;
  const int64_t decode_context =
      running > 0 ? static_cast<int64_t>(used / running) : 0;
  const int64_t input = std::min(s.input_tokens, kv_capacity_tokens_);
  const int64_t own_context =
      std::min(input + s.tokens_generated, kv_capacity_tokens_);
  // Prefill chunks share the budget with the running decodes.
  const int64_t chunk = std::max<int64_t>(1, budget_ - running - 1);
  const int64_t chunk_context = input / 2;

  auto step = [&](int64_t decodes, int64_t decodes_context, int64_t extra_ctx,
                  int64_t prefill) -> absl::StatusOr<double> {
    step_.clear();
    for (int64_t i = 0; i < decodes; ++i) {
      step_.push_back({decodes_context, 1});
    }
    if (extra_ctx >= 0) step_.push_back({extra_ctx, 1});
    if (prefill > 0) step_.push_back({chunk_context, prefill});
    if (step_.empty()) return 0.0;
    ASSIGN_OR_RETURN(StepTime t, cost_->Time(step_));
    return t.seconds;
  };

  PodLatency out;
  // TTFT: the queue's prefill, then this request's uncached input.
  const double own_prefill =
      std::ceil(static_cast<double>(input) * (1 - s.prefix_cache_score));
  const double ahead = static_cast<double>(s.waiting) * input + own_prefill;
  const double tokens = std::max(1.0, ahead);
  const double full_steps = std::floor(tokens / chunk);
  const int64_t remainder = static_cast<int64_t>(tokens - full_steps * chunk);
  if (full_steps > 0) {
    ASSIGN_OR_RETURN(double t, step(running, decode_context, -1, chunk));
    out.ttft_seconds += full_steps * t;
  }
  if (remainder > 0) {
    ASSIGN_OR_RETURN(double t, step(running, decode_context, -1, remainder));
    out.ttft_seconds += t;
  }
  // TPOT: this request decoding beside the running ones, and a prefill
  // chunk in the step while requests wait.
  const int64_t queued_prefill =
      s.waiting > 0
          ? std::min<int64_t>(chunk, s.waiting * std::max<int64_t>(input, 1))
          : 0;
  ASSIGN_OR_RETURN(out.tpot_seconds,
                   step(running, decode_context, own_context, queued_prefill));
  return out;
}

}  // namespace ridgeline::serving
