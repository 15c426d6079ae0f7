// Stable names of the engine's enums (they appear in the proto, the CLI and
// metrics labels, so they never change once published).
#include <array>
#include <optional>
#include <string_view>

#include "absl/strings/ascii.h"
#include "ridgeline/engine/hardware.h"
#include "ridgeline/engine/result.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::engine {
namespace {

template <size_t N, typename E>
std::string_view Lookup(const std::array<std::string_view, N>& names, E e) {
  const auto i = static_cast<size_t>(e);
  return i < N ? names[i] : std::string_view("unknown");
}

constexpr std::array<std::string_view, kTierKindCount> kTierKindNames = {
    "sram", "hbm", "gddr", "lpddr", "ddr", "unified", "host-link", "flash"};

constexpr std::array<std::string_view, kOpKindCount> kOpKindNames = {
    "embedding",
    "norm",
    "q_projection",
    "k_projection",
    "v_projection",
    "mla_q_down",
    "mla_q_up",
    "mla_kv_down",
    "mla_kv_up",
    "rope",
    "qk",
    "softmax",
    "attention_v",
    "flash_attention",
    "out_projection",
    "residual_add",
    "ffn_up_gate",
    "ffn_activation",
    "ffn_down",
    "moe_router",
    "moe_routed_experts",
    "moe_shared_experts",
    "final_norm",
    "lm_head",
    "all_reduce",
    "pipeline_send",
    "all_to_all",
    "linear_replacement",
    "mamba_in_projection",
    "short_conv",
    "ssm_scan",
    "gated_norm",
    "linear_attention_in_projection",
    "linear_attention",
    "dsa_indexer_projection",
    "dsa_indexer_score",
    "lora_adapters",
    "draft_input_fusion",
};
// A missing comma joins two names and leaves the last one empty.
static_assert(!kOpKindNames.back().empty(), "kOpKindNames: one name per OpKind");

}  // namespace

std::string_view TierKindName(TierKind kind) {
  return Lookup(kTierKindNames, kind);
}

std::optional<TierKind> ParseTierKind(std::string_view name) {
  const std::string lower =
      absl::AsciiStrToLower(absl::string_view(name.data(), name.size()));
  for (size_t i = 0; i < kTierKindNames.size(); ++i) {
    if (kTierKindNames[i] == lower) return static_cast<TierKind>(i);
  }
  return std::nullopt;
}

std::string_view OpClassName(OpClass c) {
  static constexpr std::array<std::string_view, kOpClassCount> kNames = {
      "gemm", "gemv", "attention", "elementwise"};
  return Lookup(kNames, c);
}

std::string_view OperandClassName(OperandClass c) {
  static constexpr std::array<std::string_view, kOperandClassCount> kNames = {
      "weights", "kv_cache", "activations"};
  return Lookup(kNames, c);
}

std::string_view PhaseName(Phase p) {
  static constexpr std::array<std::string_view, 2> kNames = {"prefill",
                                                             "decode"};
  return Lookup(kNames, p);
}

std::string_view BoundName(Bound b) {
  static constexpr std::array<std::string_view, 4> kNames = {
      "compute", "memory", "overhead", "interconnect"};
  return Lookup(kNames, b);
}

std::string_view OpKindName(OpKind k) { return Lookup(kOpKindNames, k); }

std::string_view EnergyMethodName(EnergyMethod m) {
  static constexpr std::array<std::string_view, 3> kNames = {
      "per-op-and-byte", "board-power", "unknown"};
  return Lookup(kNames, m);
}

}  // namespace ridgeline::engine
