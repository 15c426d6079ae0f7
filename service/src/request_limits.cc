// Server-side caps on what one request may cost (issue 14, defects 2 and 9)
// and the one estimate of that cost: checked before any engine work, so a
// hostile request is refused for the price of reading a few fields.
#include <malloc.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ridgeline/engine/work.h"
#include "ridgeline/explore/suggestions.h"
#include "ridgeline/service/backend.h"

namespace ridgeline::service {

absl::Status CheckInlineConfigSize(const v1::ModelSpec& spec,
                                   absl::string_view path,
                                   const Limits& limits) {
  if (spec.source_case() != v1::ModelSpec::kHfConfigJson) {
    return absl::OkStatus();
  }
  const size_t size = spec.hf_config_json().size();
  if (static_cast<int64_t>(size) <= limits.max_inline_config_bytes) {
    return absl::OkStatus();
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      path, ".hf_config_json: ", size, " bytes exceed the server's limit of ",
      limits.max_inline_config_bytes,
      " bytes per inline config.json (--max-inline-config-bytes)"));
}

namespace {

// Steps timed beyond the one prefill step the size term already pays for
// (each count is at most 10^7: no overflow).
int64_t ExtraSteps(const engine::TimedSteps& t) {
  return t.prefill_chunks - 1 + t.walked_decode_steps;
}

}  // namespace

double EstimateRequestCost(const CostInputs& in) {
  // Doubles: the factors' products can pass 2^63 at their maxima.
  const double layers = static_cast<double>(in.layers);
  const double size = static_cast<double>(in.batch) *
                      (static_cast<double>(in.prompt_tokens) +
                       static_cast<double>(in.generated_tokens)) *
                      layers;
  const double stepping = static_cast<double>(in.analyses) *
                          static_cast<double>(ExtraSteps(in.steps)) * layers *
                          kTokenLayersPerStepLayer;
  return size + stepping;
}

CostInputs CostInputsOf(const engine::Scenario& s) {
  CostInputs in;
  in.batch = s.workload.batch;
  in.prompt_tokens = s.workload.prompt_tokens;
  in.generated_tokens = s.workload.generated_tokens;
  in.layers = s.model.num_layers;
  in.steps =
      engine::CountTimedSteps(s.workload, s.hardware, s.efficiency, s.options);
  in.prefill_chunk_tokens = s.options.prefill_chunk_tokens;
  in.analyses =
      1 + (s.options.suggestions ? explore::kMaxSuggestionAnalyses : 0);
  return in;
}

absl::Status CheckRequestCost(const CostInputs& in, const Limits& limits) {
  const double cost = EstimateRequestCost(in);
  if (cost <= limits.max_request_cost) return absl::OkStatus();
  std::string stepping, advice = "a smaller batch or shorter sequences";
  if (ExtraSteps(in.steps) > 0) {
    // Name the fields that make the engine step: the chunk, the walked
    // decode, the suggestions' analyses.
    std::vector<std::string> why;
    if (in.steps.prefill_chunks > 1) {
      why.push_back(absl::StrCat(
          in.steps.prefill_chunks, " prefill chunks of ",
          in.prefill_chunk_tokens > 0
              ? absl::StrCat("options.prefill_chunk_tokens ",
                             in.prefill_chunk_tokens)
              : absl::StrCat("the default ",
                             engine::kDefaultPrefillChunkTokens, " tokens")));
      advice = "a larger options.prefill_chunk_tokens, " + advice;
    }
    if (in.steps.walked_decode_steps > 0) {
      why.push_back(absl::StrCat(in.steps.walked_decode_steps,
                                 " decode steps walked one by one under the "
                                 "plugin's efficiency hook"));
    }
    if (in.analyses > 1) {
      advice = "options.suggestions false, " + advice;
    }
    stepping = absl::StrCat(
        " + ", in.analyses, in.analyses == 1 ? " analysis" : " analyses",
        " x ", ExtraSteps(in.steps), " more timed steps (",
        absl::StrJoin(why, ", "), ") x ", in.layers, " layers x ",
        kTokenLayersPerStepLayer, " per step-layer");
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "request cost: batch ", in.batch, " x (prompt ", in.prompt_tokens,
      " + generated ", in.generated_tokens, " tokens) x ", in.layers,
      " layers", stepping, " = ", cost,
      " token-layers exceeds the server's limit of ", limits.max_request_cost,
      " (--max-request-cost); ask for ", advice));
}

ExpensiveCallGate::Slot::~Slot() {
  if (gate_ == nullptr) return;
  gate_->in_use_.fetch_sub(1);
  ReleaseFreeMemory();
}

absl::StatusOr<ExpensiveCallGate::Slot> ExpensiveCallGate::Enter(
    absl::string_view method) {
  const int64_t was = in_use_.fetch_add(1);
  if (max_ > 0 && was >= max_) {
    in_use_.fetch_sub(1);
    return absl::ResourceExhaustedError(absl::StrCat(
        method, ": ", max_,
        " expensive calls (Plan, Simulate, Explore, ExploreSensitivity) are "
        "running, the server's limit (--max-concurrent-expensive-calls); "
        "retry with backoff"));
  }
  return Slot(this);
}

void ReleaseFreeMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

absl::Status CheckRequestMemory(absl::string_view what, double bytes,
                                absl::string_view factors,
                                const Limits& limits) {
  if (bytes <= static_cast<double>(limits.max_request_memory_bytes)) {
    return absl::OkStatus();
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      what, ": estimated memory ", factors, " = ", bytes,
      " bytes exceeds the server's limit of ", limits.max_request_memory_bytes,
      " bytes per request (--max-request-memory-bytes)"));
}

absl::Status CheckSequenceSteps(absl::string_view what, double sequence_steps,
                                absl::string_view factors,
                                const Limits& limits) {
  if (sequence_steps <= limits.max_sequence_steps) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrCat(what, ": estimated cost ", factors, " = ", sequence_steps,
                   " sequence-steps exceeds the server's limit of ",
                   limits.max_sequence_steps, " (--max-sequence-steps)"));
}

}  // namespace ridgeline::service
