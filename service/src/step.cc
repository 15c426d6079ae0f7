// StepTime and StepTimeStream: the scheduler's step-time API. Validates the
// steps, runs engine::StepEvaluator::Step and converts the timings back.
// Math is the engine's; here only ranges, field paths and conversion.
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/engine/step.h"
#include "ridgeline/engine/work.h"
#include "ridgeline/service/backend.h"
#include "ridgeline/engine/ranges.h"
#include "ridgeline/service/convert.h"
#include "ridgeline/service/request_scenario.h"

namespace ridgeline::service {
namespace {

constexpr int kMaxSteps = 4096;        // per request / stream message
constexpr int kMaxSequences = 65536;   // per step
// Context and new tokens per sequence: the engine's token range.
constexpr int64_t kMaxTokens = engine::ranges::kPromptTokens.hi;

using request::OutOfRange;

// "steps[3]": built only when a step has something to report (the hot
// path of a stream formats nothing).
std::string StepPath(int index) { return absl::StrCat("steps[", index, "]"); }

// One sequence's two numbers against their ranges; `what` names the
// element on error ("sequences[17].context_tokens" or
// "context_tokens[17]", after "steps[3].").
template <typename Name>
absl::Status CheckSequence(int64_t context, int64_t added, int index,
                           Name&& what) {
  // One unsigned compare per bound: negative values wrap past the top.
  if (static_cast<uint64_t>(context) > static_cast<uint64_t>(kMaxTokens)) {
    return OutOfRange(absl::StrCat(StepPath(index), ".", what(true)),
                      absl::StrCat("in [0, ", kMaxTokens, "]"),
                      absl::StrCat(context));
  }
  if (static_cast<uint64_t>(added) - 1 >= static_cast<uint64_t>(kMaxTokens)) {
    return OutOfRange(absl::StrCat(StepPath(index), ".", what(false)),
                      absl::StrCat("in [1, ", kMaxTokens, "]"),
                      absl::StrCat(added));
  }
  return absl::OkStatus();
}

absl::Status CheckCount(int n, int index, absl::string_view field) {
  if (n >= 1 && n <= kMaxSequences) return absl::OkStatus();
  return OutOfRange(absl::StrCat(StepPath(index), ".", field),
                    absl::StrCat("1..", kMaxSequences, " sequences"),
                    absl::StrCat(n, " sequences"));
}

// Checks step `index` and copies it into `seqs`, from `sequences` or from
// the two columns. Errors name "steps[3].sequences[17].context_tokens" (or
// "steps[3].context_tokens[17]"), the range and the value.
absl::Status ReadStep(const v1::Step& step, int index,
                      std::vector<engine::StepSequence>* seqs) {
  const int columns = step.context_tokens_size();
  if (columns > 0 || step.new_tokens_size() > 0) {
    if (step.sequences_size() > 0) {
      return OutOfRange(
          absl::StrCat(StepPath(index), ".context_tokens"),
          "empty when sequences is set (a step gives its sequences one way)",
          absl::StrCat(columns, " values beside ", step.sequences_size(),
                       " sequences"));
    }
    RETURN_IF_ERROR(CheckCount(columns, index, "context_tokens"));
    if (step.new_tokens_size() != columns) {
      return OutOfRange(absl::StrCat(StepPath(index), ".new_tokens"),
                        absl::StrCat(columns, " values (one per context_tokens)"),
                        absl::StrCat(step.new_tokens_size(), " values"));
    }
    seqs->resize(static_cast<size_t>(columns));
    engine::StepSequence* out = seqs->data();
    const int64_t* context = step.context_tokens().data();
    const int64_t* added = step.new_tokens().data();
    for (int j = 0; j < columns; ++j) {
      RETURN_IF_ERROR(CheckSequence(context[j], added[j], index, [j](bool c) {
        return absl::StrCat(c ? "context_tokens[" : "new_tokens[", j, "]");
      }));
      out[j] = {context[j], added[j]};
    }
    return absl::OkStatus();
  }
  const int n = step.sequences_size();
  RETURN_IF_ERROR(CheckCount(n, index, "sequences"));
  seqs->resize(static_cast<size_t>(n));
  engine::StepSequence* out = seqs->data();
  for (int j = 0; j < n; ++j) {
    const v1::StepSequence& s = step.sequences(j);
    const int64_t context = s.context_tokens(), added = s.new_tokens();
    RETURN_IF_ERROR(CheckSequence(context, added, index, [j](bool c) {
      return absl::StrCat("sequences[", j, "].",
                          c ? "context_tokens" : "new_tokens");
    }));
    out[j] = {context, added};
  }
  return absl::OkStatus();
}

absl::Status CheckStepCount(int n) {
  if (n >= 1 && n <= kMaxSteps) return absl::OkStatus();
  return OutOfRange("steps", absl::StrCat("1..", kMaxSteps, " steps"),
                    absl::StrCat(n, " steps"));
}

class Session final : public Backend::StepSession {
 public:
  Session(engine::StepEvaluator ev, v1::CalibrationUsed used, bool pure,
          int64_t max_context, int64_t max_step_tokens,
          std::function<bool()> should_stop)
      : ev_(std::move(ev)),
        used_(std::move(used)),
        pure_(pure),
        max_context_(max_context),
        max_step_tokens_(max_step_tokens),
        should_stop_(std::move(should_stop)) {}

  // Asked before every step: a step is one graph (and, under a plugin's
  // hook, one hook call per op), so a stopped call ends within one step.
  bool Stopped() const { return should_stop_ && should_stop_(); }

  // One step into `out`; an invalid step is the returned error (out unset).
  absl::Status Time(const v1::Step& step, int index, bool per_op,
                    std::vector<engine::StepSequence>* seqs,
                    std::vector<engine::OpResult>* ops,
                    v1::StepTimeResult* out) const {
    RETURN_IF_ERROR(ReadStep(step, index, seqs));
    ops->clear();
    absl::StatusOr<engine::StepTiming> t = ev_.Step(*seqs, per_op ? ops : nullptr);
    if (!t.ok()) return request::Prefixed(StepPath(index), t.status());
    out->set_seconds(t->seconds);
    out->set_compute_seconds(t->compute_seconds);
    out->set_memory_seconds(t->memory_seconds);
    out->set_interconnect_seconds(t->interconnect_seconds);
    out->set_overhead_seconds(t->overhead_seconds);
    const std::string_view bound = engine::BoundName(t->bound);
    out->set_bound(bound.data(), bound.size());
    out->set_flops(t->flops);
    out->set_bytes(t->bytes);
    out->set_sequences(t->batch);
    out->set_tokens(t->tokens);
    out->set_pipeline_interval_seconds(t->pipeline_interval_seconds);
    out->set_pipeline_slowest_stage(t->pipeline_slowest_stage);
    if (t->draft_seconds > 0) {  // speculative: else 1, 0 and `seconds`
      out->set_accepted_tokens_per_sequence(t->accepted_tokens_per_sequence);
      out->set_draft_seconds(t->draft_seconds);
      out->set_verify_seconds(t->verify_seconds);
    }
    if (per_op) {
      out->mutable_ops()->Reserve(static_cast<int>(ops->size()));
      for (const engine::OpResult& op : *ops) ToProto(op, out->add_ops());
    }
    if (t->beyond_model_context) Warn(*seqs, StepPath(index), out);
    if (t->off_device_bytes > 0) {
      out->set_off_device_bytes(t->off_device_bytes);
      out->add_warnings(absl::StrFormat(
          "%s: %.2f GB of the step's %.2f GB are off the device (%s): "
          "reserve fewer sequences or shorter contexts "
          "(scenario.capacity)",
          StepPath(index), t->off_device_bytes / 1e9, t->bytes / 1e9,
          ev_.memory().spilled));
    }
    if (t->beyond_step_reservation) {
      out->add_warnings(absl::StrCat(
          StepPath(index), ": ", t->tokens,
          " new tokens exceed scenario.capacity.max_step_tokens (",
          max_step_tokens_,
          "): its activations exceed the reservation; timed as placed"));
    }
    return absl::OkStatus();
  }

  void Answer(const v1::StepTimeStreamRequest& req,
              v1::StepTimeResponse* resp) const override {
    resp->set_id(req.id());
    *resp->mutable_calibration() = used_;
    resp->set_pure_roofline(pure_);
    if (!spilled().empty()) resp->set_spilled(spilled());
    const absl::Status count = CheckStepCount(req.steps_size());
    std::vector<engine::StepSequence> seqs;
    std::vector<engine::OpResult> ops;
    if (!count.ok()) {
      // No step to carry it: one result holds the error.
      v1::StepTimeResult* r = resp->add_steps();
      r->set_error_code(static_cast<int32_t>(count.code()));
      r->set_error_message(std::string(count.message()));
      return;
    }
    resp->mutable_steps()->Reserve(req.steps_size());
    for (int i = 0; i < req.steps_size(); ++i) {
      v1::StepTimeResult* r = resp->add_steps();
      const absl::Status s = Stopped() ? engine::StoppedError()
                                       : Time(req.steps(i), i, req.per_op(),
                                              &seqs, &ops, r);
      if (!s.ok()) {
        r->Clear();
        r->set_error_code(static_cast<int32_t>(s.code()));
        r->set_error_message(std::string(s.message()));
      }
    }
  }

  const v1::CalibrationUsed& used() const { return used_; }
  const std::string& spilled() const { return ev_.memory().spilled; }
  bool pure() const { return pure_; }

 private:
  // Names the first sequence past the model's window (and how many more):
  // computed anyway, as Analyze does.
  void Warn(const std::vector<engine::StepSequence>& seqs,
            absl::string_view path, v1::StepTimeResult* out) const {
    int first = -1, count = 0;
    for (size_t j = 0; j < seqs.size(); ++j) {
      if (seqs[j].context_tokens + seqs[j].new_tokens > max_context_) {
        if (first < 0) first = static_cast<int>(j);
        ++count;
      }
    }
    if (first < 0) return;
    const engine::StepSequence& s = seqs[static_cast<size_t>(first)];
    out->add_warnings(absl::StrCat(
        path, ".sequences[", first, "]: context_tokens + new_tokens (",
        s.context_tokens + s.new_tokens, ") exceed the model's max_context (",
        max_context_, "); computed anyway",
        count > 1 ? absl::StrCat(" (", count - 1, " more sequences do too)")
                  : ""));
  }

  engine::StepEvaluator ev_;
  v1::CalibrationUsed used_;
  bool pure_;
  int64_t max_context_;
  int64_t max_step_tokens_;
  std::function<bool()> should_stop_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Backend::StepSession>> Backend::OpenStepSession(
    const v1::StepScenario& scenario,
    const std::function<bool()>& should_stop) const {
  engine::Scenario s;
  v1::CalibrationUsed used;
  RETURN_IF_ERROR(ResolveStepScenario(scenario, "scenario", &s, &used));
  // Prepare polls it while it chunks the capacity's prefill.
  s.options.should_stop = should_stop;
  // ResolveStepScenario checked the two sizes it put in the workload.
  engine::StepCapacity capacity;
  capacity.max_sequences = s.workload.batch;
  capacity.max_context_tokens = s.workload.prompt_tokens;
  capacity.max_step_tokens = engine::kDefaultMaxStepTokens;
  if (scenario.capacity().has_max_step_tokens()) {
    capacity.max_step_tokens = scenario.capacity().max_step_tokens();
    if (capacity.max_step_tokens < 1 ||
        capacity.max_step_tokens > kMaxTokens) {
      return OutOfRange("scenario.capacity.max_step_tokens",
                        absl::StrCat("in [1, ", kMaxTokens, "]"),
                        absl::StrCat(capacity.max_step_tokens));
    }
  }
  absl::StatusOr<engine::StepEvaluator> ev =
      engine::StepEvaluator::Create(s, capacity);
  if (!ev.ok()) {
    if (absl::IsCancelled(ev.status())) return ev.status();
    return request::Prefixed("scenario", ev.status());
  }
  // The bound: no profile applied and no plugin hook consulted.
  const bool pure = s.options.pure_roofline ||
                    (used.profile_name().empty() && !s.hardware.efficiency_hook);
  const int64_t max_context = s.model.max_context > 0
                                  ? s.model.max_context
                                  : std::numeric_limits<int64_t>::max();
  return std::make_unique<Session>(std::move(*ev), std::move(used), pure,
                                   max_context, capacity.max_step_tokens,
                                   should_stop);
}

absl::Status Backend::StepTime(const v1::StepTimeRequest& req,
                               v1::StepTimeResponse* resp,
                               const std::function<bool()>& should_stop) const {
  if (!req.has_scenario()) {
    return OutOfRange("scenario", "set (model and hardware at least)",
                      "unset");
  }
  RETURN_IF_ERROR(CheckStepCount(req.steps_size()));
  ASSIGN_OR_RETURN(std::unique_ptr<StepSession> base,
                   OpenStepSession(req.scenario(), should_stop));
  const auto& session = static_cast<const Session&>(*base);
  *resp->mutable_calibration() = session.used();
  resp->set_pure_roofline(session.pure());
  if (!session.spilled().empty()) resp->set_spilled(session.spilled());
  resp->mutable_steps()->Reserve(req.steps_size());
  std::vector<engine::StepSequence> seqs;
  std::vector<engine::OpResult> ops;
  for (int i = 0; i < req.steps_size(); ++i) {
    if (session.Stopped()) return engine::StoppedError();
    RETURN_IF_ERROR(session.Time(req.steps(i), i, req.per_op(), &seqs, &ops,
                                 resp->add_steps()));
  }
  return absl::OkStatus();
}

}  // namespace ridgeline::service
