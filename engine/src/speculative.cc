// Speculative decoding: the acceptance formula, the method's text form and
// the draft's scenario (speculative.h, speculative_draft.h).
#include "ridgeline/engine/speculative.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/status_macros.h"
#include "speculative_draft.h"
#include "validate_util.h"

namespace ridgeline::engine {

std::string_view DraftMethodName(DraftMethod m) {
  switch (m) {
    case DraftMethod::kNone:
      return "none";
    case DraftMethod::kDraftModel:
      return "draft";
    case DraftMethod::kMtp:
      return "mtp";
    case DraftMethod::kEagle:
      return "eagle";
  }
  return "none";
}

double ExpectedTokensPerStep(const SpeculativeDecoding& s) {
  if (!s.enabled() || s.tokens <= 0) return 1;
  // 1 (the target's own token) + P(first i drafts accepted), i = 1..k.
  double expected = 1, prefix = 1;
  for (int64_t i = 0; i < s.tokens; ++i) {
    const double a =
        s.acceptance_by_position.empty()
            ? s.acceptance_rate
            : s.acceptance_by_position[static_cast<size_t>(std::min<int64_t>(
                  i,
                  static_cast<int64_t>(s.acceptance_by_position.size()) - 1))];
    prefix *= a;
    expected += prefix;
  }
  return expected;
}

absl::StatusOr<SpeculativeDecoding> ParseSpeculativeMethod(
    std::string_view text, std::string_view field) {
  SpeculativeDecoding s;
  if (text.empty() || text == "none") return s;
  const std::vector<std::string> parts =
      absl::StrSplit(internal::Av(text), ':');
  auto bad = [&](std::string_view why) {
    return WithFieldPath(
        absl::InvalidArgumentError(absl::StrCat(
            internal::Av(field), " must be draft:MODEL_ID:k, mtp:k or eagle:k",
            " (k in [", ranges::kSpeculativeTokens.lo, ", ",
            ranges::kSpeculativeTokens.hi, "]), got \"", internal::Av(text),
            "\"", internal::Av(why))),
        field);
  };
  int64_t k = 0;
  if (parts[0] == "draft") {
    if (parts.size() != 3 || parts[1].empty()) return bad("");
    s.method = DraftMethod::kDraftModel;
    s.draft_model = parts[1];
  } else if (parts[0] == "mtp" || parts[0] == "eagle") {
    if (parts.size() != 2) return bad("");
    s.method = parts[0] == "mtp" ? DraftMethod::kMtp : DraftMethod::kEagle;
  } else {
    return bad(": unknown method");
  }
  if (!absl::SimpleAtoi(parts.back(), &k)) return bad(": k is not an integer");
  s.tokens = k;
  return s;
}

std::string SpeculativeMethodText(const SpeculativeDecoding& s) {
  switch (s.method) {
    case DraftMethod::kNone:
      return "none";
    case DraftMethod::kDraftModel:
      return absl::StrCat("draft:", s.draft_model, ":", s.tokens);
    case DraftMethod::kMtp:
    case DraftMethod::kEagle:
      return absl::StrCat(internal::Av(DraftMethodName(s.method)), ":",
                          s.tokens);
  }
  return "none";
}

namespace internal {

absl::Status ValidateSpeculative(const SpeculativeDecoding& s,
                                 const ModelConfig& target) {
  if (!s.enabled()) return absl::OkStatus();
  RETURN_IF_ERROR(CheckRange("options.speculative.tokens", s.tokens,
                             ranges::kSpeculativeTokens));
  if (s.acceptance_by_position.empty()) {
    RETURN_IF_ERROR(CheckRange("options.speculative.acceptance_rate",
                               s.acceptance_rate, ranges::kAcceptanceRate));
  } else {
    if (static_cast<int64_t>(s.acceptance_by_position.size()) != s.tokens) {
      return WithFieldPath(
          absl::InvalidArgumentError(absl::StrCat(
              "options.speculative.acceptance_by_position must hold one rate "
              "per draft token (",
              s.tokens, "), got ", s.acceptance_by_position.size())),
          "options.speculative.acceptance_by_position");
    }
    for (size_t i = 0; i < s.acceptance_by_position.size(); ++i) {
      RETURN_IF_ERROR(CheckRange(
          absl::StrCat("options.speculative.acceptance_by_position[", i, "]"),
          s.acceptance_by_position[i], ranges::kAcceptanceRate));
    }
  }
  if (s.method == DraftMethod::kMtp && target.mtp_layers <= 0) {
    return WithFieldPath(
        absl::InvalidArgumentError(absl::StrCat(
            "options.speculative.method mtp needs the model's "
            "multi-token-prediction layers (HF num_nextn_predict_layers >= 1, "
            "e.g. deepseek-v3), ",
            target.id, " has 0")),
        "options.speculative.method");
  }
  if (s.method == DraftMethod::kDraftModel && s.draft_model.empty()) {
    return WithFieldPath(
        absl::InvalidArgumentError(
            "options.speculative.draft_model must name a catalog model for "
            "method draft, got \"\""),
        "options.speculative.draft_model");
  }
  return absl::OkStatus();
}

ModelConfig DraftHeadModel(const ModelConfig& target, DraftMethod method) {
  ModelConfig head = target;
  head.id = absl::StrCat(target.id, "/", internal::Av(DraftMethodName(method)));
  head.display_name =
      absl::StrCat(target.display_name, " ",
                   method == DraftMethod::kMtp ? "MTP" : "EAGLE", " head");
  head.num_layers = 1;
  head.mtp_layers = 0;
  head.fused_hidden_inputs = 2;
  // One full-attention layer (a head has no sliding or chunked variant).
  head.sliding_layers = SlidingLayers::kNone;
  head.sliding_window = 0;
  head.attention_chunk_size = 0;
  LayerSpec layer;
  if (!target.layers.empty()) {
    layer = target.layers.back();
    layer.sliding = false;
    layer.chunked = false;
    if (layer.attention != AttentionKind::kFull) {
      layer.attention = AttentionKind::kFull;
      layer.num_kv_heads = 0;
    }
  }
  if (method == DraftMethod::kMtp) {
    // DeepSeek-V3 (tech report sec. 2.2): the MTP module is one decoder
    // layer like the main model's MoE layers.
    if (head.moe.has_value()) head.moe->first_dense_layers = 0;
    if (!head.layers.empty() && head.moe.has_value()) {
      layer.ffn = FfnLayerKind::kMoe;
    }
  } else {
    // EAGLE: one dense decoder layer of the target's shape.
    if (head.intermediate_size <= 0 && head.moe.has_value()) {
      head.intermediate_size =
          head.moe->expert_intermediate_size * head.moe->experts_per_token;
    }
    head.moe.reset();
    layer.ffn = FfnLayerKind::kDense;
    layer.intermediate_size = 0;
  }
  if (!head.layers.empty()) head.layers = {layer};
  return head;
}

absl::StatusOr<Scenario> DraftScenario(const Scenario& target) {
  const SpeculativeDecoding& spec = target.options.speculative;
  Scenario d = target;
  d.options.speculative = SpeculativeDecoding{};
  d.options.lora = LoraAdapters{};
  d.options.suggestions = false;
  std::string_view field = "options.speculative.method";
  if (spec.method == DraftMethod::kDraftModel) {
    field = "options.speculative.draft_model";
    absl::StatusOr<ModelConfig> m = FindModel(spec.draft_model);
    if (!m.ok()) return PrefixFieldPath(field, m.status());
    d.model = *std::move(m);
  } else {
    d.model = DraftHeadModel(target.model, spec.method);
  }
  // The draft runs on the target's tensor-parallel group; a dense draft
  // has no experts to spread and no pipeline.
  d.parallelism.pipeline_parallel = 1;
  d.parallelism.pipeline_micro_batches = 0;
  if (!d.model.moe.has_value()) {
    d.parallelism.expert_parallel = 1;
    d.parallelism.attention_data_parallel = false;
  }
  if (absl::Status st = ValidateScenario(d); !st.ok()) {
    return PrefixFieldPath(field, st);
  }
  return d;
}

double DeviceMemoryBytes(const Hardware& hw) {
  double bytes = 0;
  for (const MemoryTier& t : hw.tiers) {
    if (t.kind == TierKind::kHbm || t.kind == TierKind::kGddr ||
        t.kind == TierKind::kLpddr || t.kind == TierKind::kDdr ||
        t.kind == TierKind::kUnified) {
      bytes += t.capacity_bytes;
    }
  }
  return bytes;
}

double DraftExtraBytes(const Scenario& draft, const MemoryFootprint& memory,
                       DraftMethod method) {
  // Weights and KV cache; activations are the runtime's one workspace,
  // which the draft reuses between target passes.
  const double bytes =
      memory.required_bytes[static_cast<int>(OperandClass::kWeights)] +
      memory.required_bytes[static_cast<int>(OperandClass::kKvCache)];
  return std::max(bytes - DraftSharedBytes(draft, method), 0.0);
}

double DraftSharedBytes(const Scenario& draft, DraftMethod method) {
  if (method == DraftMethod::kDraftModel) return 0;
  // A head shares the target's embedding and LM head.
  const ParameterCounts p = CountParameters(draft.model);
  return (p.embedding + p.lm_head) /
         static_cast<double>(draft.parallelism.tensor_parallel) *
         draft.precision.weights.bytes_per_element();
}

absl::Status CheckDraftFits(const Scenario& target,
                            const MemoryFootprint& target_memory,
                            double draft_bytes) {
  double target_bytes = 0;
  for (double b : target_memory.required_bytes) target_bytes += b;
  const double device = DeviceMemoryBytes(target.hardware);
  // A target that does not fit alone is a result (reported as such), not
  // the draft's fault.
  if (target_bytes > device || target_bytes + draft_bytes <= device) {
    return absl::OkStatus();
  }
  const SpeculativeDecoding& s = target.options.speculative;
  const std::string field = s.method == DraftMethod::kDraftModel
                                ? "options.speculative.draft_model"
                                : "options.speculative.method";
  return WithFieldPath(
      absl::InvalidArgumentError(absl::StrFormat(
          "%s %s must fit beside the target in device memory: the draft "
          "needs %.1f GB, the target %.1f GB, the device holds %.1f GB",
          field, SpeculativeMethodText(s), draft_bytes / 1e9,
          target_bytes / 1e9, device / 1e9)),
      field);
}

}  // namespace internal
}  // namespace ridgeline::engine
