#include "step.h"

#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyze.h"
#include "table.h"

namespace ridgeline::cli {
std::vector<FlagSpec> StepOwnFlags() {
  return {
      {"seq", "CONTEXT:NEW",
       "one sequence of the step: tokens already cached, tokens added (1 = "
       "decode, N = a prefill chunk); repeat for each sequence"},
      {"per-op", "", "also print the step's per-op roofline table"},
  };
}

absl::Status FillStep(const ParsedFlags& flags, v1::StepTimeRequest* request) {
  const std::vector<std::string> seqs = flags.GetAll("seq");
  if (seqs.empty()) {
    return absl::InvalidArgumentError(
        "give at least one --seq CONTEXT:NEW (e.g. --seq 1024:1 for a decode "
        "token over 1024 cached tokens)");
  }
  v1::Step* step = request->add_steps();
  for (const std::string& text : seqs) {
    const size_t colon = text.find(':');
    int64_t context = 0, added = 0;
    if (colon == std::string::npos ||
        !absl::SimpleAtoi(text.substr(0, colon), &context) ||
        !absl::SimpleAtoi(text.substr(colon + 1), &added)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--seq: expected CONTEXT:NEW with two integers, got '", text, "'"));
    }
    v1::StepSequence* s = step->add_sequences();
    s->set_context_tokens(context);
    s->set_new_tokens(added);
  }
  request->set_per_op(flags.Has("per-op"));
  return absl::OkStatus();
}

void StepScenarioFrom(const v1::AnalyzeRequest& from, v1::StepScenario* to) {
  if (from.has_model()) *to->mutable_model() = from.model();
  if (from.has_hardware()) *to->mutable_hardware() = from.hardware();
  if (from.has_formats()) *to->mutable_formats() = from.formats();
  if (from.has_placement()) *to->mutable_placement() = from.placement();
  if (from.has_options()) *to->mutable_options() = from.options();
  if (from.has_calibration()) *to->mutable_calibration() = from.calibration();
  if (from.has_parallelism()) *to->mutable_parallelism() = from.parallelism();
}

void PrintStepTable(const v1::StepTimeResponse& response, bool csv,
                    std::ostream& out) {
  if (csv) {
    const bool per_op =
        !response.steps().empty() && !response.steps(0).ops().empty();
    if (per_op) {
      Table t{{"step", "op", "layer_group", "layers", "math", "flops", "bytes",
               "seconds", "bound"}};
      for (int i = 0; i < response.steps_size(); ++i) {
        for (const v1::OpResult& op : response.steps(i).ops()) {
          t.rows.push_back({absl::StrCat(i), op.kind(), op.layer_group(),
                            absl::StrCat(op.layers()), op.math(),
                            Raw(op.flops()), Raw(op.bytes()), Raw(op.seconds()),
                            op.bound()});
        }
      }
      PrintTable(t, TableStyle::kCsv, out);
      return;
    }
    Table t{{"step", "sequences", "tokens", "seconds", "compute_seconds",
             "memory_seconds", "interconnect_seconds", "overhead_seconds",
             "bound", "flops", "bytes", "pipeline_interval_seconds",
             "pipeline_slowest_stage", "accepted_tokens_per_sequence",
             "draft_seconds", "verify_seconds"}};
    for (int i = 0; i < response.steps_size(); ++i) {
      const v1::StepTimeResult& r = response.steps(i);
      t.rows.push_back(
          {absl::StrCat(i), absl::StrCat(r.sequences()),
           absl::StrCat(r.tokens()), Raw(r.seconds()), Raw(r.compute_seconds()),
           Raw(r.memory_seconds()), Raw(r.interconnect_seconds()),
           Raw(r.overhead_seconds()), r.bound(), Raw(r.flops()), Raw(r.bytes()),
           Raw(r.pipeline_interval_seconds()),
           absl::StrCat(r.pipeline_slowest_stage()),
           Raw(r.draft_seconds() > 0 ? r.accepted_tokens_per_sequence() : 1.0),
           Raw(r.draft_seconds()),
           Raw(r.draft_seconds() > 0 ? r.verify_seconds() : r.seconds())});
    }
    PrintTable(t, TableStyle::kCsv, out);
    return;
  }
  for (int i = 0; i < response.steps_size(); ++i) {
    const v1::StepTimeResult& r = response.steps(i);
    out << "Step " << i << ": " << r.sequences() << " sequences, "
        << r.tokens() << " new tokens\n";
    Table t;
    t.rows = {{"time", Seconds(r.seconds())},
              {"bound", r.bound()},
              {"compute (sum over ops)", Seconds(r.compute_seconds())},
              {"memory (sum over ops)", Seconds(r.memory_seconds())},
              {"interconnect", Seconds(r.interconnect_seconds())},
              {"overhead", Seconds(r.overhead_seconds())},
              {"FLOPs", Si(r.flops())},
              {"bytes moved", Bytes(r.bytes())}};
    if (r.pipeline_interval_seconds() != r.seconds()) {
      // Pipelined: the time above is one step's trip through every stage.
      t.rows[0][0] = "time (latency through all stages)";
      t.rows.insert(
          t.rows.begin() + 1,
          {"pipeline interval",
           absl::StrCat(Seconds(r.pipeline_interval_seconds()), " (stage ",
                        r.pipeline_slowest_stage(), " + its send)")});
    }
    if (r.draft_seconds() > 0) {
      t.rows.insert(
          t.rows.begin() + 1,
          {"speculative",
           absl::StrFormat(
               "draft %s + verify %s; %.3f tokens per sequence "
               "(%s per token)",
               Seconds(r.draft_seconds()), Seconds(r.verify_seconds()),
               r.accepted_tokens_per_sequence(),
               Seconds(r.seconds() / r.accepted_tokens_per_sequence()))});
    }
    PrintTable(t, TableStyle::kText, out);
    if (!r.ops().empty()) {
      Table ops{{"op", "layers", "math", ">FLOPs", ">bytes", ">time", "bound"}};
      for (const v1::OpResult& op : r.ops()) {
        ops.rows.push_back(
            {op.layer_group().empty()
                 ? op.kind()
                 : absl::StrCat(op.kind(), " (", op.layer_group(), ")"),
             absl::StrCat(op.layers()), op.math(), Si(op.flops()),
             Bytes(op.bytes()), Seconds(op.seconds()), op.bound()});
      }
      out << "\n";
      PrintTable(ops, TableStyle::kText, out);
    }
    for (const std::string& w : r.warnings()) out << "  warning: " << w << "\n";
  }
  out << "\ncalibration: " << response.calibration().selected_by();
  if (!response.calibration().profile_name().empty()) {
    out << " (" << response.calibration().profile_name() << ")";
  }
  out << (response.pure_roofline() ? "; pure roofline: an upper bound on speed"
                                   : "")
      << "\n";
}

std::vector<FlagSpec> StepFlags() {
  std::vector<FlagSpec> flags = StepOwnFlags();
  for (const FlagSpec& f : AnalyzeFlags()) {
    if (f.name == "batch" || f.name == "prompt" || f.name == "gen" ||
        f.name == "no-suggestions" || f.name == "view" ||
        f.name.rfind("electricity", 0) == 0 || f.name == "pue" ||
        f.name == "grid-g-co2e-per-kwh" || f.name == "amortization-years" ||
        f.name == "utilization") {
      continue;
    }
    flags.push_back(f);
  }
  return flags;
}

Outcome StepCommand(Context& ctx) {
  v1::AnalyzeRequest scenario;
  if (Outcome o = BuildAnalyze(ctx.flags, &scenario)) return o;
  v1::StepTimeRequest request;
  StepScenarioFrom(scenario, request.mutable_scenario());
  if (absl::Status s = FillStep(ctx.flags, &request); !s.ok()) return Usage(s);
  if (Outcome o = MakeClient(ctx)) return o;
  absl::StatusOr<v1::StepTimeResponse> response = ctx.client->StepTime(request);
  if (!response.ok()) return Failed(response.status());
  if (ctx.format == Format::kJson) {
    ctx.out << Json(*response) << "\n";
  } else {
    PrintStepTable(*response, ctx.csv(), ctx.out);
  }
  return std::nullopt;
}

}  // namespace ridgeline::cli
