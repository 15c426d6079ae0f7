// Speculative decoding: a draft proposes k tokens per sequence, the target
// verifies them in one forward pass. Plain data and the acceptance formula;
// the step cost is StepEvaluator's (step.h), the phase sum Analyze's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace ridgeline::engine {

// Where the k draft tokens come from.
enum class DraftMethod : uint8_t {
  kNone = 0,
  kDraftModel,  // a catalog model run k times on the same devices
  kMtp,         // the target's own multi-token-prediction layers
  kEagle,       // a one-layer head the size of one target decoder layer
};
// "none", "draft", "mtp", "eagle"
std::string_view DraftMethodName(DraftMethod m);

struct SpeculativeDecoding {
  DraftMethod method = DraftMethod::kNone;
  std::string draft_model;  // kDraftModel: catalog id ("llama-3.2-1b")
  int64_t tokens = 0;  // k draft tokens per step, ranges::kSpeculativeTokens
  // Per-token acceptance alpha, ranges::kAcceptanceRate: the chance a draft
  // token is accepted given the ones before it were.
  double acceptance_rate = 0;
  // When set: k rates, position 1..k (each ranges::kAcceptanceRate),
  // replacing acceptance_rate (acceptance falls with the position).
  std::vector<double> acceptance_by_position;
  bool enabled() const { return method != DraftMethod::kNone; }
};

// Expected tokens one sequence gains per speculative step: the accepted
// prefix plus the target's own token, 1 + sum_{i=1..k} prod_{j<=i} a_j.
// With one rate for every position it is the geometric sum
// (1 - a^(k+1)) / (1 - a) (Leviathan et al. 2023, "Fast Inference from
// Transformers via Speculative Decoding", eq. 1), k + 1 at a = 1. Exact
// when acceptances are independent given the prefix; 1 when disabled.
double ExpectedTokensPerStep(const SpeculativeDecoding& s);

// "draft:MODEL_ID:k", "mtp:k", "eagle:k"; "" or "none": disabled. Sets
// method, draft_model and tokens (the acceptance is a separate field).
// INVALID_ARGUMENT names `field` and the accepted forms; the range of k is
// ValidateSpeculative's.
absl::StatusOr<SpeculativeDecoding> ParseSpeculativeMethod(
    std::string_view text, std::string_view field);
// The inverse: "draft:llama-3.2-1b:4", "mtp:1", "none".
std::string SpeculativeMethodText(const SpeculativeDecoding& s);

}  // namespace ridgeline::engine
