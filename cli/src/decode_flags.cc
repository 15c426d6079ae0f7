#include "decode_flags.h"

#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ridgeline/engine/speculative.h"

namespace ridgeline::cli {

const std::vector<FlagSpec>& DecodeVariantFlags() {
  static const std::vector<FlagSpec> kFlags = {
      {"speculative", "METHOD",
       "speculative decoding: draft:MODEL_ID:k (a catalog draft model), "
       "mtp:k (the model's MTP layers) or eagle:k (a one-layer head); k "
       "1..16"},
      {"acceptance", "A[,A2,...]",
       "per-token acceptance rate in [0, 1], or one rate per draft position "
       "(k values)"},
      {"lora-rank", "R", "serve LoRA adapters of rank R (1..1024)"},
      {"lora-modules", "LIST",
       "LoRA target modules, subset of q,k,v,o,gate,up,down (default all)"},
      {"lora-adapters", "N", "LoRA adapters resident in device memory"},
      {"lora-cold-fraction", "F",
       "share of requests whose adapter loads from host memory first"},
  };
  return kFlags;
}

std::optional<std::string> FillDecodeVariants(const ParsedFlags& flags,
                                              v1::AnalysisOptions* options) {
  if (auto method = flags.Get("speculative")) {
    absl::StatusOr<engine::SpeculativeDecoding> s =
        engine::ParseSpeculativeMethod(*method, "--speculative");
    if (!s.ok()) return std::string(s.status().message());
    v1::SpeculativeDecoding* out = options->mutable_speculative();
    const std::string_view name = engine::DraftMethodName(s->method);
    out->set_method(name.data(), name.size());
    out->set_draft_model(s->draft_model);
    // Out-of-int32 k is the service's range error to report, not a wrap.
    out->set_tokens(static_cast<int32_t>(
        std::clamp<int64_t>(s->tokens, std::numeric_limits<int32_t>::min(),
                            std::numeric_limits<int32_t>::max())));
  }
  if (auto acceptance = flags.Get("acceptance")) {
    if (!flags.Has("speculative")) {
      return "--acceptance needs --speculative METHOD";
    }
    std::vector<double> rates;
    for (absl::string_view part : absl::StrSplit(*acceptance, ',')) {
      double v = 0;
      if (!absl::SimpleAtod(part, &v)) {
        return absl::StrCat("--acceptance: expected a number or a list of ",
                            "numbers, got '", *acceptance, "'");
      }
      rates.push_back(v);
    }
    v1::SpeculativeDecoding* out = options->mutable_speculative();
    if (rates.size() == 1) {
      out->set_acceptance_rate(rates[0]);
    } else {
      for (double r : rates) out->add_acceptance_by_position(r);
    }
  } else if (flags.Has("speculative")) {
    return "--speculative needs --acceptance A (the per-token acceptance "
           "rate, [0, 1])";
  }
  absl::StatusOr<std::optional<int64_t>> rank =
      flags.GetInt("lora-rank", 0, std::numeric_limits<int32_t>::max());
  if (!rank.ok()) return std::string(rank.status().message());
  const bool lora_flags = flags.Has("lora-modules") ||
                          flags.Has("lora-adapters") ||
                          flags.Has("lora-cold-fraction");
  if (!*rank) {
    if (lora_flags)
      return "--lora-modules/-adapters/-cold-fraction need --lora-rank R";
    return std::nullopt;
  }
  v1::LoraAdapters* lora = options->mutable_lora();
  lora->set_rank(static_cast<int32_t>(**rank));
  if (auto modules = flags.Get("lora-modules")) lora->set_modules(*modules);
  absl::StatusOr<std::optional<int64_t>> adapters =
      flags.GetInt("lora-adapters", 0, std::numeric_limits<int32_t>::max());
  if (!adapters.ok()) return std::string(adapters.status().message());
  if (*adapters) lora->set_adapters(static_cast<int32_t>(**adapters));
  absl::StatusOr<std::optional<double>> cold =
      flags.GetDouble("lora-cold-fraction");
  if (!cold.ok()) return std::string(cold.status().message());
  if (*cold) lora->set_cold_fraction(**cold);
  return std::nullopt;
}

}  // namespace ridgeline::cli
