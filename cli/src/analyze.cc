#include "analyze.h"

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "scenario.h"

namespace ridgeline::cli {

std::vector<FlagSpec> AnalyzeFlags() {
  std::vector<FlagSpec> flags = {
      {"model", "ID", "catalog model id (see `ridgeline models`)"},
      {"model-config", "FILE.json", "a Hugging Face config.json instead"},
      {"hardware", "ID", "platform id (see `ridgeline hardware`)"},
      {"hardware-file", "FILE.json",
       "inline hardware: a ridgeline.v1.Hardware in proto JSON"},
      {"batch", "N", "sequences decoded together (default 1)"},
      {"prompt", "N", "prompt tokens per sequence (default 512)"},
      {"gen", "N", "generated tokens per sequence (default 128)"},
      {"no-suggestions", "", "skip the what-if suggestions"},
      {"view", "full|basic",
       "basic: leave out the per-op tables (default full)"},
  };
  for (const auto* list : {&ScenarioFlags(), &CommonFlags()}) {
    flags.insert(flags.end(), list->begin(), list->end());
  }
  return flags;
}

namespace {

absl::StatusOr<v1::AnalysisView> ParseView(const std::string& text) {
  if (text == "full") return v1::ANALYSIS_VIEW_FULL;
  if (text == "basic") return v1::ANALYSIS_VIEW_BASIC;
  return absl::InvalidArgumentError(
      absl::StrCat("--view: expected full or basic, got '", text, "'"));
}

}  // namespace

Outcome BuildAnalyze(const ParsedFlags& flags, v1::AnalyzeRequest* request) {
  if (Outcome o = NoPositional(flags)) return o;
  if (flags.Has("model") == flags.Has("model-config")) {
    return Usage("give exactly one of --model ID or --model-config FILE.json");
  }
  if (auto id = flags.Get("model"))
    request->mutable_model()->set_catalog_id(*id);
  if (auto path = flags.Get("model-config")) {
    if (Outcome o = ReadModelConfig(*path, request->mutable_model())) return o;
  }
  if (Outcome o = FillHardware(flags, request->mutable_hardware())) return o;
  // Ranges are checked once, by the service; here only the syntax.
  constexpr int64_t kAny = std::numeric_limits<int64_t>::max();
  struct IntField {
    const char* flag;
    void (v1::Workload::*set)(int64_t);
  };
  for (const IntField& f :
       {IntField{"batch", &v1::Workload::set_batch},
        IntField{"prompt", &v1::Workload::set_prompt_tokens},
        IntField{"gen", &v1::Workload::set_generated_tokens}}) {
    absl::StatusOr<std::optional<int64_t>> v =
        flags.GetInt(f.flag, -kAny, kAny);
    if (!v.ok()) return Usage(v.status());
    if (*v) (request->mutable_workload()->*f.set)(**v);
  }
  if (auto v = flags.Get("weights"))
    request->mutable_formats()->set_weights(*v);
  if (auto v = flags.Get("activations")) {
    request->mutable_formats()->set_activations(*v);
  }
  if (auto v = flags.Get("kv")) request->mutable_formats()->set_kv_cache(*v);
  if (flags.Has("no-suggestions")) {
    request->mutable_options()->set_suggestions(false);
  }
  if (auto view = flags.Get("view")) {
    absl::StatusOr<v1::AnalysisView> v = ParseView(*view);
    if (!v.ok()) return Usage(v.status());
    request->set_view(*v);
  }
  return FillScenarioFlags(flags, request);
}

namespace {

std::string OpName(const v1::OpResult& op) {
  return op.layer_group().empty()
             ? op.kind()
             : absl::StrCat(op.kind(), " (", op.layer_group(), ")");
}

std::string Where(const v1::OpResult& op, const v1::AnalysisResult& result) {
  if (op.executed_in_tier() < 0) return "compute";
  for (const v1::TierUsage& tier : result.memory().tiers()) {
    if (tier.tier() == op.executed_in_tier()) {
      return absl::StrCat("PIM ", tier.name());
    }
  }
  return absl::StrCat("PIM tier ", op.executed_in_tier());
}

// One row per op; `phase` is a column in CSV, a section title in text.
void AddOpRows(const v1::StepResult& step, const v1::AnalysisResult& result,
               bool csv, Table* table) {
  double total = step.totals().seconds();
  for (const v1::OpResult& op : step.ops()) {
    double share = total > 0 ? op.seconds() / total : 0;
    if (csv) {
      table->rows.push_back(
          {step.phase(), op.kind(), op.layer_group(), absl::StrCat(op.layers()),
           op.math(), Raw(op.flops()), Raw(op.bytes()), Raw(op.intensity()),
           Raw(op.seconds()), Raw(share), op.bound(), Where(op, result)});
    } else {
      table->rows.push_back({OpName(op), absl::StrCat(op.layers()), op.math(),
                             Si(op.flops()), Bytes(op.bytes()),
                             Fixed3(op.intensity()), Seconds(op.seconds()),
                             Percent(share), op.bound(), Where(op, result)});
    }
  }
}

void PrintAnalyzeText(const v1::AnalyzeRequest& request,
                      const v1::AnalyzeResponse& response, std::ostream& out) {
  const v1::AnalysisResult& r = response.result();
  const v1::Workload& w = request.workload();
  auto fmt = [](const std::string& f) { return f.empty() ? "bf16" : f; };
  const int32_t tp = request.parallelism().has_tensor_parallel()
                         ? request.parallelism().tensor_parallel()
                         : 1;
  out << r.model_id() << " on " << r.hardware_id()
      << (tp > 1 ? absl::StrCat(" x ", tp, " (tensor parallel; times and "
                                           "memory per device)")
                 : std::string())
      << ": batch "
      << (w.has_batch() ? w.batch() : 1) << ", prompt "
      << (w.has_prompt_tokens() ? w.prompt_tokens() : 512) << ", generate "
      << (w.has_generated_tokens() ? w.generated_tokens() : 128) << "; weights "
      << fmt(request.formats().weights()) << ", activations "
      << fmt(request.formats().activations()) << ", KV "
      << fmt(request.formats().kv_cache()) << "; matmuls in " << r.matmul_math()
      << "\n";
  out << "Calibration: "
      << (response.calibration().profile_name().empty()
              ? "none"
              : response.calibration().profile_name())
      << (response.upper_bound() ? " (pure roofline: speeds are upper bounds)"
                                 : "")
      << (response.calibration().match().empty()
              ? std::string()
              : absl::StrCat("; matched by ", response.calibration().match()))
      << "\n";
  for (const std::string& w : r.warnings()) out << "Warning: " << w << "\n";
  out << "\nSummary\n";
  Table summary;
  // Without a compute roof the prefill has no bound: its memory-roof time
  // is only a lower bound on time (an upper bound on speed), said so.
  const bool prefill_known = r.compute_roof_known();
  summary.rows = {
      {"TTFT", prefill_known
                   ? Seconds(r.ttft_seconds())
                   : absl::StrCat("unknown (>= ", Seconds(r.ttft_seconds()),
                                  ": memory roof only, compute roof unknown)")},
      {"TPOT mean", absl::StrCat(Seconds(r.tpot_mean_seconds()), " (first ",
                                 Seconds(r.tpot_first_seconds()), ", last ",
                                 Seconds(r.tpot_last_seconds()), ")")},
      {"End to end",
       prefill_known ? Seconds(r.e2e_seconds())
                     : absl::StrCat(">= ", Seconds(r.e2e_seconds()),
                                    " (prefill at its memory roof only)")},
      {"Prefill",
       prefill_known
           ? absl::StrCat(Si(r.prefill_tokens_per_second()), " tok/s")
           : absl::StrCat("unknown (<= ", Si(r.prefill_tokens_per_second()),
                          " tok/s: memory roof only, compute roof unknown)")},
      {"Decode",
       absl::StrCat(Si(r.decode_tokens_per_second_per_sequence()),
                    " tok/s per sequence, ",
                    Si(r.decode_tokens_per_second_total()), " tok/s total")},
      {"Ridge point",
       r.compute_roof_known()
           ? absl::StrCat(Fixed3(r.ridge_point_flops_per_byte()), " FLOP/B")
           : std::string("unknown (compute roof unknown)")},
  };
  if (r.has_speculative()) {
    const v1::SpeculativeSummary& x = r.speculative();
    summary.rows.push_back(
        {"Speculative",
         absl::StrFormat(
             "%s: %.3f tokens per step, draft %s + verify %s per step; "
             "%.2fx plain decode (TPOT %s)",
             x.method(), x.accepted_tokens_per_step(),
             Seconds(x.draft_seconds_per_step()),
             Seconds(x.verify_seconds_per_step()), x.speedup(),
             Seconds(x.baseline_tpot_mean_seconds()))});
  }
  if (r.has_lora()) {
    const v1::LoraSummary& x = r.lora();
    summary.rows.push_back(
        {"LoRA",
         absl::StrCat(
             Bytes(x.adapter_bytes()), " per adapter, ",
             Bytes(x.resident_bytes()), " resident",
             x.cold_load_seconds() > 0
                 ? absl::StrCat(", cold load ", Seconds(x.cold_load_seconds()),
                                " (+", Seconds(x.ttft_added_seconds()),
                                " TTFT expected)")
                 : std::string())});
  }
  const v1::ParameterCounts& pc = r.parameters();
  summary.rows.push_back(
      {"Parameters",
       absl::StrCat(Si(pc.total()), " total, ", Si(pc.active_per_token()),
                    " active per token, ", Si(pc.embedding()), " embedding, ",
                    pc.lm_head() > 0 ? Si(pc.lm_head()) : std::string("tied"),
                    " LM head")});
  if (!r.memory().spilled().empty()) {
    summary.rows.push_back({"Off the device", r.memory().spilled()});
  }
  if (!r.compute_roof_known()) {
    summary.rows.push_back(
        {"Compute roof",
         "unknown: no published peak for this math; times are memory-roof "
         "times, compute-bound phases are not bounded"});
  }
  const v1::Economy& e = r.economy();
  if (e.has_joules_per_output_token()) {
    summary.rows.push_back(
        {"Energy", absl::StrCat(Fixed3(e.joules_per_output_token()),
                                " J/token (", e.energy_method(), ")")});
  }
  if (e.has_usd_per_million_output_tokens()) {
    summary.rows.push_back(
        {"Cost", absl::StrCat("$", Fixed3(e.usd_per_million_output_tokens()),
                              " per million output tokens (",
                              e.cost_basis(), ")")});
  }
  if (e.has_g_co2e_per_million_output_tokens()) {
    summary.rows.push_back(
        {"Carbon", absl::StrCat(Si(e.g_co2e_per_million_output_tokens(), "g"),
                                " CO2e per million output tokens")});
  }
  if (!e.note().empty()) summary.rows.push_back({"Economy note", e.note()});
  PrintTable(summary, TableStyle::kText, out);

  const v1::MemoryFootprint& m = r.memory();
  // "fits" alone would read as "all on the device".
  const std::string fits =
      m.spilled_operands().empty()
          ? std::string("fits")
          : absl::StrCat("fits (spilled: ",
                         absl::StrJoin(m.spilled_operands(), ", "), ")");
  out << "\nMemory: "
      << (m.fits() ? fits : absl::StrCat("DOES NOT FIT: ", m.not_fitting()))
      << (m.spilled().empty() ? std::string()
                              : absl::StrCat("; off the device: ", m.spilled()))
      << "\n";
  bool missing = false;
  for (const v1::TierUsage& t : m.tiers()) {
    missing = missing || t.missing_weights_bytes() > 0 ||
              t.missing_kv_cache_bytes() > 0 ||
              t.missing_activations_bytes() > 0;
  }
  Table tiers{{">tier", "name", ">capacity", ">weights", ">KV cache",
               ">activations", ">used"}};
  if (missing) tiers.headers.push_back(">missing");
  for (const v1::TierUsage& t : m.tiers()) {
    tiers.rows.push_back({absl::StrCat(t.tier()), t.name(),
                          Bytes(t.capacity_bytes()), Bytes(t.weights_bytes()),
                          Bytes(t.kv_cache_bytes()),
                          Bytes(t.activations_bytes()), Bytes(t.used_bytes())});
    if (missing) {
      tiers.rows.back().push_back(
          Bytes(t.missing_weights_bytes() + t.missing_kv_cache_bytes() +
                t.missing_activations_bytes()));
    }
  }
  PrintTable(tiers, TableStyle::kText, out);

  const std::vector<std::string> op_headers = {
      "op",      ">layers", "math",   ">FLOPs", ">bytes",
      ">FLOP/B", ">time",   ">share", "bound",  "where"};
  for (const v1::StepResult* step : {&r.prefill(), &r.decode()}) {
    out << "\n"
        << (step == &r.prefill() ? "Prefill" : "Decode") << " ("
        << step->steps() << (step->steps() == 1 ? " step, " : " steps, ")
        << step->tokens() << " tokens per step, "
        << Seconds(step->totals().seconds()) << ")\n";
    if (request.view() == v1::ANALYSIS_VIEW_BASIC) continue;
    Table ops{op_headers};
    AddOpRows(*step, r, false, &ops);
    PrintTable(ops, TableStyle::kText, out);
  }
  out << "\nBottleneck: " << r.bottleneck().text() << "\n";
  if (!r.suggestions().empty()) {
    out << "\nSuggestions\n";
    for (const v1::Suggestion& s : r.suggestions()) {
      out << "  - " << s.text() << "\n";
    }
  }
}

}  // namespace

Outcome Analyze(Context& ctx) {
  v1::AnalyzeRequest request;
  if (Outcome o = BuildAnalyze(ctx.flags, &request)) return o;
  if (Outcome o = MakeClient(ctx)) return o;
  absl::StatusOr<v1::AnalyzeResponse> response = ctx.client->Analyze(request);
  if (!response.ok()) return Failed(response.status());
  switch (ctx.format) {
    case Format::kJson:
      ctx.out << Json(*response) << "\n";
      break;
    case Format::kCsv: {
      if (request.view() == v1::ANALYSIS_VIEW_BASIC) {
        // No per-op tables in this view: one row of totals per phase.
        Table phases{{"phase", "steps", "tokens", "kv_length", "flops", "bytes",
                      "compute_seconds", "memory_seconds", "seconds"}};
        for (const v1::StepResult* step :
             {&response->result().prefill(), &response->result().decode()}) {
          const v1::StepTotals& t = step->totals();
          phases.rows.push_back(
              {step->phase(), absl::StrCat(step->steps()),
               absl::StrCat(step->tokens()), absl::StrCat(step->kv_length()),
               Raw(t.flops()), Raw(t.bytes()), Raw(t.compute_seconds()),
               Raw(t.memory_seconds()), Raw(t.seconds())});
        }
        PrintTable(phases, TableStyle::kCsv, ctx.out);
        break;
      }
      Table ops{{"phase", "op", "layer_group", "layers", "math", "flops",
                 "bytes", "intensity", "seconds", "share", "bound", "where"}};
      AddOpRows(response->result().prefill(), response->result(), true, &ops);
      AddOpRows(response->result().decode(), response->result(), true, &ops);
      PrintTable(ops, TableStyle::kCsv, ctx.out);
      break;
    }
    case Format::kTable:
      PrintAnalyzeText(request, *response, ctx.out);
      break;
  }
  return std::nullopt;
}

}  // namespace ridgeline::cli
