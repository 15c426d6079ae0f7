// What-if suggestions (see suggestions.h).
#include "ridgeline/explore/suggestions.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "av.h"
#include "ridgeline/engine/analyze.h"
#include "ridgeline/engine/formats.h"

namespace ridgeline::explore {
namespace {

using engine::AnalysisResult;
using engine::Bound;
using engine::MathType;
using engine::NumberFormat;
using engine::OpClass;
using engine::OperandClass;
using engine::OpResult;
using engine::ParseNumberFormat;
using engine::Precision;
using engine::Scenario;
using engine::Suggestion;
using internal::Av;

double Metric(const AnalysisResult& r, bool decode) {
  return decode ? r.decode_tokens_per_second_total
                : r.prefill_tokens_per_second;
}

}  // namespace

void AddSuggestions(const Scenario& s, AnalysisResult* r) {
  const bool decode = s.workload.generated_tokens > 1;
  const std::string metric =
      decode ? "decode_tokens_per_second" : "prefill_tokens_per_second";
  const double before = Metric(*r, decode);
  // Returns true when the change was kept.
  auto attempt = [&](const std::string& kind, const std::string& change,
                     Scenario mod) -> bool {
    // Each suggestion is an analysis of its own: stop with the caller.
    if (s.options.should_stop && s.options.should_stop()) return false;
    mod.options.suggestions = false;
    absl::StatusOr<AnalysisResult> alt = engine::AnalyzeForComparison(mod);
    if (!alt.ok() || !alt->memory.fits) return false;
    const double after = Metric(*alt, decode);
    const bool newly_fits = !r->memory.fits;
    if (!newly_fits && !(after > before * 1.01)) return false;
    Suggestion sg;
    sg.kind = kind;
    sg.change = change;
    sg.metric = metric;
    sg.before = before;
    sg.after = after;
    sg.gain = before > 0 ? after / before : 0;
    sg.text = absl::StrFormat(
        "%s: %.2fx %s (%.4g -> %.4g tokens/s)%s", change, sg.gain,
        decode ? "decode tok/s" : "prefill tok/s", before, after,
        newly_fits ? "; and the model then fits" : "");
    if (kind == "batch") {
      absl::StrAppend(&sg.text, absl::StrFormat("; TPOT %.3g ms -> %.3g ms",
                                                r->tpot_mean_seconds * 1e3,
                                                alt->tpot_mean_seconds * 1e3));
    }
    r->suggestions.push_back(std::move(sg));
    return true;
  };

  const Precision& pr = s.precision;
  if (pr.weights.bits > 4.5 + 1e-9) {
    absl::StatusOr<NumberFormat> int4 = ParseNumberFormat("int4-g128");
    if (int4.ok()) {
      Scenario mod = s;
      mod.precision.weights = *int4;
      attempt("weights-format", "weights int4-g128", std::move(mod));
    }
  }
  if (pr.weights.bits > 8 + 1e-9 &&
      s.hardware.peak_ops_per_second[static_cast<int>(MathType::kFp8)]
          .has_value()) {
    absl::StatusOr<NumberFormat> fp8 = ParseNumberFormat("fp8");
    if (fp8.ok()) {
      Scenario mod = s;
      mod.precision.weights = *fp8;
      mod.precision.activations = *fp8;
      attempt("weights-format", "weights and activations fp8", std::move(mod));
    }
  }
  if (pr.kv_cache.bits > 8 + 1e-9) {
    absl::StatusOr<NumberFormat> fp8 = ParseNumberFormat("fp8");
    if (fp8.ok()) {
      Scenario mod = s;
      mod.precision.kv_cache = *fp8;
      attempt("kv-format", "kv cache fp8", std::move(mod));
    }
  }
  // Batching only pays until the compute roof; without one its gain
  // cannot be computed.
  if (decode && r->compute_roof_known &&
      r->bottleneck.bound == Bound::kMemory) {
    // Decode intensity of the weight matmuls grows ~linearly with batch.
    double flops = 0, bytes = 0;
    for (const OpResult& op : r->decode_first_step.ops) {
      if (op.op_class == OpClass::kGemm || op.op_class == OpClass::kGemv) {
        flops += op.flops;
        bytes += op.bytes;
      }
    }
    const int64_t b = s.workload.batch;
    std::vector<std::pair<int64_t, std::string>> tries;
    if (bytes > 0 && flops > 0) {
      const double target = std::ceil(b * r->ridge_point / (flops / bytes));
      const int64_t t = static_cast<int64_t>(
          std::clamp(target, static_cast<double>(b + 1), 65536.0));
      tries.emplace_back(
          t, absl::StrFormat("batch %d (reaches the ridge point)", t));
    }
    if (4 * b <= 65536)
      tries.emplace_back(4 * b, absl::StrFormat("batch %d", 4 * b));
    for (const auto& [batch, change] : tries) {
      if (batch <= b) continue;
      Scenario mod = s;
      mod.workload.batch = batch;
      if (attempt("batch", change, std::move(mod))) break;
    }
  }
  // Pins that slow things down: weights pinned to a slow tier while a
  // faster one has room, or KV / activations pinned where they push the
  // weights out into a slower tier. Unpinning lets placement move them.
  for (OperandClass oc : {OperandClass::kWeights, OperandClass::kKvCache,
                          OperandClass::kActivations}) {
    const int c = static_cast<int>(oc);
    const auto& pin = s.pins.tier[c];
    if (!pin.has_value()) continue;
    Scenario mod = s;
    mod.pins.tier[c].reset();
    attempt("tier",
            absl::StrCat(Av(engine::OperandClassName(oc)),
                         " unpinned from ", s.hardware.tiers[*pin].name,
                         " (weights to the fastest tier with room)"),
            std::move(mod));
  }
  std::stable_sort(
      r->suggestions.begin(), r->suggestions.end(),
      [](const Suggestion& a, const Suggestion& b) { return a.gain > b.gain; });
}

}  // namespace ridgeline::explore
