#include "ridgeline/serving/kv_transfer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/engine/step.h"

namespace ridgeline::serving {

std::string_view KvLinkLevelName(KvLinkLevel level) {
  return level == KvLinkLevel::kScaleUp ? "scale-up" : "scale-out";
}

std::string_view KvOverlapName(KvOverlap overlap) {
  return overlap == KvOverlap::kAfterPrefill ? "after-prefill" : "layerwise";
}

absl::StatusOr<KvOverlap> ParseKvOverlap(std::string_view name) {
  if (name == "after-prefill") return KvOverlap::kAfterPrefill;
  if (name == "layerwise") return KvOverlap::kLayerwise;
  return engine::WithFieldPath(
      absl::InvalidArgumentError(absl::StrCat(
          "kv_transfer_overlap: must be after-prefill or layerwise; got \"",
          std::string(name), "\"")),
      "kv_transfer_overlap");
}

KvLink KvLinkBetween(const KvEndpoint& prefill, const KvEndpoint& decode) {
  const engine::Hardware& p = *prefill.hardware;
  const engine::Hardware& d = *decode.hardware;
  KvLink link;
  const bool same_part = p.id == d.id;
  // Unknown node size: the engine's convention (every group in one node).
  const bool one_node =
      same_part && (!p.devices_per_node.has_value() ||
                    prefill.devices + decode.devices <= *p.devices_per_node);
  link.level = one_node ? KvLinkLevel::kScaleUp : KvLinkLevel::kScaleOut;
  const char* bw_field =
      one_node ? "interconnect_bytes_per_second" : "scale_out_bytes_per_second";
  auto bandwidth = [&](const engine::Hardware& hw) {
    return one_node ? hw.interconnect_bytes_per_second
                    : hw.scale_out_bytes_per_second;
  };
  auto latency = [&](const engine::Hardware& hw) {
    return one_node ? hw.scale_up_latency_seconds
                    : hw.scale_out_latency_seconds;
  };
  for (const engine::Hardware* hw : {&p, &d}) {
    if (!bandwidth(*hw).has_value()) {
      link.unknown_reason = absl::StrCat(
          "no known ", std::string(KvLinkLevelName(link.level)),
          " link for the KV transfer ", p.id, " -> ", d.id, ": ", hw->id,
          " gives no ", bw_field,
          same_part ? "" : " (different parts never share a node)");
      return link;
    }
  }
  link.known = true;
  link.prefill_device_bytes_per_second = *bandwidth(p) / 2;
  link.decode_device_bytes_per_second = *bandwidth(d) / 2;
  for (const engine::Hardware* hw : {&p, &d}) {
    if (latency(*hw).has_value()) {
      link.latency_known = true;
      link.latency_seconds = std::max(link.latency_seconds, *latency(*hw));
    }
  }
  return link;
}

double KvTransferSeconds(const KvLink& link, const KvTransferWork& work) {
  const double wire = std::max(
      work.bytes_per_prefill_device / link.prefill_device_bytes_per_second,
      work.bytes_per_decode_device / link.decode_device_bytes_per_second);
  if (work.overlap == KvOverlap::kAfterPrefill) {
    return link.latency_seconds + wire;
  }
  // Layer l's share leaves when layer l is done (prefill x l / L); the
  // shares queue on the link, so the last one lands at
  // max_k(prefill x k / L + (L - k + 1) wire / L): k = 1 when the link is
  // the slower, k = L when the compute is.
  const double layers = static_cast<double>(std::max<int64_t>(work.layers, 1));
  const double exposed = std::max(
      wire / layers, wire - work.prefill_seconds * (layers - 1) / layers);
  return link.latency_seconds + exposed;
}

absl::StatusOr<double> KvBytesPerDevice(const engine::Scenario& scenario,
                                        int64_t tokens) {
  engine::Scenario s = scenario;
  s.options.suggestions = false;
  s.parallelism.pipeline_micro_batches = 1;
  // One sequence of `tokens` prompt tokens and one generated token: the
  // engine keeps prompt + generated - 1 = `tokens` tokens of KV.
  s.workload = {1, tokens, 1};
  ASSIGN_OR_RETURN(engine::StepEvaluator step,
                   engine::StepEvaluator::Create(s));
  return step.memory()
      .required_bytes[static_cast<int>(engine::OperandClass::kKvCache)];
}

}  // namespace ridgeline::serving
