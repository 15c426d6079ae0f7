#include "sweep.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "scenario.h"

namespace ridgeline::cli {

std::vector<FlagSpec> SweepFlags() {
  std::vector<FlagSpec> flags = {
      {"model", "ID,...", "catalog model ids"},
      {"model-config", "FILE.json,...", "Hugging Face config.json files"},
      {"hardware", "ID,...", "platform ids"},
      {"hardware-file", "FILE.json,...", "inline hardware files (proto JSON)"},
      {"batch", "N,...", "batch sizes (default 1)"},
      {"prompt", "N,...", "prompt lengths (default 512)"},
      {"gen", "N,...", "generated lengths (default 128)"},
      {"shard", "I/N", "compute only points with index % N == I"},
      {"full", "", "attach the full analysis to each point (json only)"},
  };
  for (const auto* list : {&ScenarioFlags(), &CommonFlags()}) {
    flags.insert(flags.end(), list->begin(), list->end());
  }
  // In a sweep weights/activations/kv take comma lists.
  for (FlagSpec& f : flags) {
    if (f.name == "weights" || f.name == "activations" || f.name == "kv") {
      f.value_name = "FMT,...";
      f.help = absl::StrCat(f.help, "; the sweep covers every combination");
    }
  }
  return flags;
}

namespace {

Outcome BuildSweep(const ParsedFlags& flags, v1::SweepRequest* request) {
  if (Outcome o = NoPositional(flags)) return o;
  for (const std::string& id : flags.GetList("model")) {
    request->add_models()->set_catalog_id(id);
  }
  for (const std::string& path : flags.GetList("model-config")) {
    if (Outcome o = ReadModelConfig(path, request->add_models())) return o;
  }
  for (const std::string& id : flags.GetList("hardware")) {
    request->add_hardware()->set_platform_id(id);
  }
  for (const std::string& path : flags.GetList("hardware-file")) {
    if (Outcome o = ReadHardwareFile(
            path, request->add_hardware()->mutable_description())) {
      return o;
    }
  }
  if (request->models().empty()) {
    return Usage("give --model ID,... and/or --model-config FILE.json,...");
  }
  if (request->hardware().empty()) {
    return Usage("give --hardware ID,... and/or --hardware-file FILE.json,...");
  }
  constexpr int64_t kAny = std::numeric_limits<int64_t>::max();
  for (auto [flag, list] :
       {std::pair{"batch", request->mutable_batch_sizes()},
        std::pair{"prompt", request->mutable_prompt_tokens()},
        std::pair{"gen", request->mutable_generated_tokens()}}) {
    absl::StatusOr<std::vector<int64_t>> values =
        flags.GetIntList(flag, -kAny, kAny);
    if (!values.ok()) return Usage(values.status());
    list->Add(values->begin(), values->end());
  }
  if (flags.Has("weights") || flags.Has("activations") || flags.Has("kv")) {
    auto or_default = [](std::vector<std::string> v) {
      return v.empty() ? std::vector<std::string>{""} : v;
    };
    for (const std::string& w : or_default(flags.GetList("weights"))) {
      for (const std::string& a : or_default(flags.GetList("activations"))) {
        for (const std::string& k : or_default(flags.GetList("kv"))) {
          v1::Formats* f = request->add_formats();
          f->set_weights(w);
          f->set_activations(a);
          f->set_kv_cache(k);
        }
      }
    }
  }
  if (auto shard = flags.Get("shard")) {
    // Strict: sscanf("%u") took "-1" as 4294967295 and ignored "0/4x".
    uint32_t index = 0, count = 0;
    std::pair<absl::string_view, absl::string_view> parts =
        absl::StrSplit(*shard, absl::MaxSplits('/', 1));
    auto digits = [](absl::string_view t) {
      return !t.empty() && std::all_of(t.begin(), t.end(), absl::ascii_isdigit);
    };
    if (!digits(parts.first) || !digits(parts.second) ||
        !absl::SimpleAtoi(parts.first, &index) ||
        !absl::SimpleAtoi(parts.second, &count)) {
      return Usage(absl::StrCat(
          "--shard: expected I/N, two integers in [0, 4294967295] (e.g. "
          "0/4), got '",
          *shard, "'"));
    }
    request->set_shard_index(index);
    request->set_shard_count(count);
  }
  request->set_include_full_result(flags.Has("full"));
  return FillScenarioFlags(flags, request);
}

}  // namespace

Outcome Sweep(Context& ctx) {
  v1::SweepRequest request;
  if (Outcome o = BuildSweep(ctx.flags, &request)) return o;
  if (Outcome o = MakeClient(ctx)) return o;
  // Tables and CSV have no place for it; the server would compute it for
  // nothing.
  if (request.include_full_result() && ctx.format != Format::kJson) {
    return Usage("--full applies to --format json only");
  }
  Table table{{">#", "model", "hardware", ">batch", ">prompt", ">gen",
               "weights", "act", "kv", ">TTFT", ">TPOT", ">tok/s", "fits",
               "spilled", "bound", "bottleneck", ">$/Mtok", ">J/tok", ">gCO2e/Mtok"}};
  if (ctx.csv()) {
    table.headers = {"index",
                     "model",
                     "hardware",
                     "batch",
                     "prompt",
                     "gen",
                     "weights",
                     "activations",
                     "kv_cache",
                     "ttft_seconds",
                     "tpot_mean_seconds",
                     "decode_tokens_per_second_total",
                     "fits",
                     "spilled",
                     "bound",
                     "bottleneck_op",
                     "usd_per_million_output_tokens",
                     "joules_per_output_token",
                     "g_co2e_per_million_output_tokens",
                     "error"};
  }
  int errors = 0;
  absl::Status status =
      ctx.client->Sweep(request, [&](const v1::SweepPoint& p) {
        if (ctx.format == Format::kJson) {
          ctx.out << Json(p) << "\n";  // JSON Lines: one point per line
          return;
        }
        const v1::SweepSummary& s = p.summary();
        std::vector<std::string> row;
        if (p.has_error()) {
          ++errors;
          row = {absl::StrCat(p.index())};
          row.resize(table.headers.size() - 1);
          row.push_back(absl::StrCat("error: ", p.error().message()));
        } else {
          // Same columns both ways: full precision and true/false in CSV,
          // SI units and yes/NO for people.
          const bool csv = ctx.csv();
          auto num = [csv](double v, std::string (*human)(double)) {
            return csv ? Raw(v) : human(v);
          };
          row = {absl::StrCat(p.index()),
                 s.model_id(),
                 s.hardware_id(),
                 absl::StrCat(s.batch()),
                 absl::StrCat(s.prompt_tokens()),
                 absl::StrCat(s.generated_tokens()),
                 s.weights_format(),
                 s.activations_format(),
                 s.kv_cache_format(),
                 num(s.ttft_seconds(), Seconds),
                 num(s.tpot_mean_seconds(), Seconds),
                 csv ? Raw(s.decode_tokens_per_second_total())
                     : Si(s.decode_tokens_per_second_total()),
                 s.fits() ? (csv ? "true" : "yes") : (csv ? "false" : "NO"),
                 s.spilled() ? (csv ? "true" : "YES") : (csv ? "false" : "no"),
                 s.bound(),
                 s.bottleneck_op(),
                 s.has_usd_per_million_output_tokens()
                     ? num(s.usd_per_million_output_tokens(), Fixed3)
                     : (csv ? "" : "-"),
                 s.has_joules_per_output_token()
                     ? num(s.joules_per_output_token(), Fixed3)
                     : (csv ? "" : "-"),
                 s.has_g_co2e_per_million_output_tokens()
                     ? num(s.g_co2e_per_million_output_tokens(),
                           +[](double v) { return Si(v); })
                     : (csv ? "" : "-")};
          if (csv) row.push_back("");  // the error column
        }
        table.rows.push_back(std::move(row));
      });
  // A failed sweep prints nothing on stdout (JSON Lines already streamed
  // stay: each line is a whole point).
  if (!status.ok()) return Failed(status);
  if (ctx.format != Format::kJson) PrintTable(table, ctx.style(), ctx.out);
  if (errors > 0) {
    ctx.err << "ridgeline sweep: " << errors
            << " point(s) failed; see their error column\n";
  }
  return std::nullopt;
}

}  // namespace ridgeline::cli
