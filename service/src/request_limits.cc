// Server-side caps on what one request may cost (issue 14, defects 2 and 9):
// checked before any parsing or engine work, so a hostile request is
// refused for the price of reading a few fields.
#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
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

absl::Status CheckRequestCost(int64_t batch, int64_t prompt_tokens,
                              int64_t generated_tokens, int64_t layers,
                              const Limits& limits) {
  // A double: the factors' product can pass 2^63 at their maxima.
  const double cost = static_cast<double>(batch) *
                      (static_cast<double>(prompt_tokens) +
                       static_cast<double>(generated_tokens)) *
                      static_cast<double>(layers);
  if (cost <= limits.max_request_cost) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "request cost: batch ", batch, " x (prompt ", prompt_tokens,
      " + generated ", generated_tokens, " tokens) x ", layers, " layers = ",
      cost, " token-layers exceeds the server's limit of ",
      limits.max_request_cost,
      " (--max-request-cost); ask for a smaller batch or shorter sequences"));
}

}  // namespace ridgeline::service
