#include "plan.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client.h"
#include "common.h"
#include "flags.h"
#include "serving_flags.h"
#include "table.h"

namespace ridgeline::cli {
namespace {

constexpr char kUsageText[] =
    "usage: ridgeline plan --model ID --hardware ID,... --prompt N --gen N "
    "--rate R --ttft-p90-ms MS --tpot-p90-ms MS [flags]\n";

const std::vector<FlagSpec>& PlanFlags() {
  static const std::vector<FlagSpec> kFlags = {
      {"model", "ID", "catalog model id (ridgeline models)"},
      {"hardware", "ID,...", "candidate hardware ids (ridgeline hardware)"},
      {"prompt", "N|MIN..MAX|V:W,...",
       "prompt tokens: fixed, uniform range or histogram (value:weight)"},
      {"gen", "N|MIN..MAX|V:W,...", "generated tokens, same forms"},
      {"rate", "R", "requests per second over all replicas"},
      {"ttft-p90-ms", "MS", "p90 time-to-first-token target"},
      {"tpot-p90-ms", "MS", "p90 time-per-output-token target"},
      {"tensor-parallel", "N,...", "degrees to try (default 1,2,4,8)"},
      {"formats", "F,...",
       "format sets to try, each WEIGHTS[/ACTIVATIONS[/KV]] (default "
       "bf16,fp8)"},
      {"framework", "NAME",
       "calibration framework (vllm, tensorrt-llm, ...); default: pure "
       "roofline"},
      {"profile", "NAME", "calibration profile by name"},
      {"pure-roofline", "", "ignore calibration: the speed upper bound"},
      {"price-usd", "X", "purchase price per device (amortised, TCO)"},
      {"usd-per-device-hour", "X", "rental price per device-hour"},
      {"memory-fraction", "X", "share of device memory the runtime uses (0.9)"},
      {"max-num-seqs", "N", "sequences per step (256)"},
      {"max-num-batched-tokens", "N", "tokens per step (8192)"},
      {"requests", "N", "requests per simulation (600)"},
      {"seed", "N", "simulation seed (1)"},
      {"server", "HOST:PORT", "send the request to a ridgeline-server"},
      {"plugin-dir", "DIR", "in-process: hardware plugin folder"},
      {"profile-dir", "DIR", "in-process: calibration profile folder"},
      {"format", "table|json|csv", "output format (default table)"},
      {"timeout", "SECONDS", "deadline with --server (default 600)"},
      {"help", "", "show this help"},
  };
  return kFlags;
}

// A literal format: clang checks absl::StrFormat's format at compile time.
std::string Num(double v) { return absl::StrFormat("%.3g", v); }

void PrintCsv(const v1::PlanResponse& r, std::ostream& out) {
  Table t({"hardware", "tensor_parallel", "formats", "replicas", "devices",
           "max_rate_per_replica", "ttft_p90_ms", "tpot_p90_ms",
           "e2e_p90_ms", "usd_per_mtoken", "cost_basis", "joules_per_token",
           "g_co2e_per_mtoken", "ttft_headroom", "tpot_headroom",
           "max_concurrency", "kv_capacity_tokens",
           "offline_output_tokens_per_second", "limiting_resource",
           "meets_slo", "feasible", "pareto", "profile", "why"});
  auto g = [](double v) { return absl::StrFormat("%.10g", v); };
  for (const v1::PlanDeployment& d : r.deployments()) {
    t.rows.push_back(
        {d.hardware_id(), absl::StrCat(d.tensor_parallel()), d.formats(),
         absl::StrCat(d.replicas()), absl::StrCat(d.devices()),
         g(d.max_rate_per_replica()), g(d.ttft_p90_seconds() * 1e3),
         g(d.tpot_p90_seconds() * 1e3), g(d.e2e_p90_seconds() * 1e3),
         d.has_usd_per_mtoken() ? g(d.usd_per_mtoken()) : "",
         d.cost_basis(),
         d.has_joules_per_token() ? g(d.joules_per_token()) : "",
         d.has_g_co2e_per_mtoken() ? g(d.g_co2e_per_mtoken()) : "",
         g(d.ttft_headroom()), g(d.tpot_headroom()),
         absl::StrCat(d.max_concurrency()),
         absl::StrCat(d.kv_capacity_tokens()),
         g(d.offline_output_tokens_per_second()), d.limiting_resource(),
         d.meets_slo() ? "1" : "0", d.feasible() ? "1" : "0",
         d.pareto() ? "1" : "0", d.profile(), d.why()});
  }
  PrintTable(t, TableStyle::kCsv, out);
}

void PrintText(const v1::PlanResponse& r, std::ostream& out) {
  out << r.headline() << "\n\n";
  Table t({"hardware", ">tp", "formats", ">replicas", ">devices",
           ">max rate/replica", ">ttft p90", ">tpot p90", ">$/Mtoken",
           "basis", ">J/token", ">gCO2e/Mtoken", "slo", "pareto"});
  std::vector<std::string> why;
  for (const v1::PlanDeployment& d : r.deployments()) {
    if (!d.feasible()) {
      why.push_back(absl::StrCat(d.hardware_id(), " TP ", d.tensor_parallel(),
                                 " ", d.formats(), ": ", d.why()));
      continue;
    }
    t.rows.push_back(
        {d.hardware_id(), absl::StrCat(d.tensor_parallel()), d.formats(),
         absl::StrCat(d.replicas()), absl::StrCat(d.devices()),
         absl::StrFormat("%.2f req/s", d.max_rate_per_replica()),
         Seconds(d.ttft_p90_seconds()), Seconds(d.tpot_p90_seconds()),
         d.has_usd_per_mtoken() ? absl::StrFormat("%.3f", d.usd_per_mtoken())
                                : "unknown",
         d.cost_basis(),
         d.has_joules_per_token() ? Num(d.joules_per_token()) : "unknown",
         d.has_g_co2e_per_mtoken() ? Si(d.g_co2e_per_mtoken()) : "unknown",
         d.meets_slo() ? "met" : "MISSED", d.pareto() ? "*" : ""});
  }
  if (!t.rows.empty()) PrintTable(t, TableStyle::kText, out);
  if (!why.empty()) {
    out << "\ninfeasible:\n";
    for (const std::string& w : why) out << "  " << w << "\n";
  }
  for (const std::string& n : r.notes()) out << "\nnote: " << n;
  out << "\n";
}

}  // namespace

int PlanCli(const std::vector<std::string>& args, std::ostream& out,
            std::ostream& err) {
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, PlanFlags());
  if (!flags.ok()) {
    err << "ridgeline plan: " << flags.status().message() << "\n"
        << kUsageText;
    return kUsage;
  }
  if (flags->Has("help")) {
    out << kUsageText << "\nthe cheapest deployments that serve a traffic "
           "within p90 TTFT and TPOT targets\n\nflags:\n"
        << FlagHelp(PlanFlags());
    return kOk;
  }
  auto usage = [&](const std::string& m) {
    err << "ridgeline plan: " << m << "\n" << kUsageText;
    return kUsage;
  };
  if (!flags->positional().empty()) {
    return usage(absl::StrCat("unexpected argument '",
                              flags->positional()[0], "'"));
  }
  for (const char* required : {"model", "hardware", "prompt", "gen", "rate",
                               "ttft-p90-ms", "tpot-p90-ms"}) {
    if (!flags->Has(required)) return usage(absl::StrCat("--", required,
                                                         " is required"));
  }
  v1::PlanRequest req;
  req.mutable_model()->set_catalog_id(*flags->Get("model"));
  for (const std::string& id : flags->GetList("hardware")) {
    req.mutable_candidates()->add_hardware()->set_platform_id(id);
  }
  for (const char* name : {"prompt", "gen"}) {
    std::optional<v1::TokenLengths> l = ParseLengths(*flags->Get(name));
    if (!l) {
      return usage(absl::StrCat("--", name,
                                ": expected N, MIN..MAX or V:W,V:W; got '",
                                *flags->Get(name), "'"));
    }
    *(std::string_view(name) == "prompt"
          ? req.mutable_traffic()->mutable_prompt_tokens()
          : req.mutable_traffic()->mutable_generated_tokens()) = *l;
  }
  // Numbers: syntax here, ranges in the service (it names the field).
  struct DoubleFlag {
    const char* flag;
    std::function<void(double)> set;
  };
  const std::vector<DoubleFlag> doubles = {
      {"rate", [&](double v) { req.mutable_traffic()->set_rate(v); }},
      {"ttft-p90-ms",
       [&](double v) { req.mutable_slo()->set_ttft_p90_seconds(v / 1e3); }},
      {"tpot-p90-ms",
       [&](double v) { req.mutable_slo()->set_tpot_p90_seconds(v / 1e3); }},
      {"price-usd",
       [&](double v) { req.mutable_pricing()->set_price_usd(v); }},
      {"usd-per-device-hour",
       [&](double v) { req.mutable_pricing()->set_usd_per_device_hour(v); }},
      {"memory-fraction",
       [&](double v) { req.mutable_serving()->set_memory_fraction(v); }},
  };
  for (const DoubleFlag& d : doubles) {
    absl::StatusOr<std::optional<double>> v = flags->GetDouble(d.flag);
    if (!v.ok()) return usage(std::string(v.status().message()));
    if (*v) d.set(**v);
  }
  struct IntFlag {
    const char* flag;
    int64_t lo, hi;
    std::function<void(int64_t)> set;
  };
  const std::vector<IntFlag> ints = {
      {"max-num-seqs", 1, 65536,
       [&](int64_t v) { req.mutable_serving()->set_max_num_seqs(v); }},
      {"max-num-batched-tokens", 1, 10'000'000,
       [&](int64_t v) {
         req.mutable_serving()->set_max_num_batched_tokens(v);
       }},
      {"requests", 1, 1'000'000'000'000,
       [&](int64_t v) { req.set_requests(v); }},
      {"seed", 0, INT64_MAX, [&](int64_t v) { req.set_seed(v); }},
  };
  for (const IntFlag& f : ints) {
    absl::StatusOr<std::optional<int64_t>> v = flags->GetInt(f.flag, f.lo, f.hi);
    if (!v.ok()) return usage(std::string(v.status().message()));
    if (*v) f.set(**v);
  }
  absl::StatusOr<std::vector<int64_t>> tps =
      flags->GetIntList("tensor-parallel", 1, 256);
  if (!tps.ok()) return usage(std::string(tps.status().message()));
  for (const int64_t tp : *tps) req.mutable_candidates()->add_tensor_parallel(tp);
  for (const std::string& f : flags->GetList("formats")) {
    std::optional<v1::Formats> formats = ParseFormatSet(f);
    if (!formats) {
      return usage(absl::StrCat(
          "--formats: expected WEIGHTS[/ACTIVATIONS[/KV]]; got '", f, "'"));
    }
    *req.mutable_candidates()->add_formats() = *formats;
  }
  if (flags->Has("framework") && flags->Has("profile")) {
    return usage("--framework and --profile are exclusive");
  }
  if (auto fw = flags->Get("framework")) {
    req.mutable_candidates()->mutable_calibration()->set_framework(*fw);
  }
  if (auto p = flags->Get("profile")) {
    req.mutable_candidates()->mutable_calibration()->set_profile(*p);
  }
  if (flags->Has("pure-roofline")) req.mutable_options()->set_pure_roofline(true);
  const std::string format = flags->Get("format").value_or("table");
  if (format != "table" && format != "csv" && format != "json") {
    return usage(absl::StrCat("--format: expected table, json or csv, got '",
                              format, "'"));
  }
  std::unique_ptr<Client> client;
  if (Outcome o = ClientFor(*flags, std::chrono::seconds(600), &client)) {
    if (o->code == kUsage) return usage(o->message);
    err << "ridgeline plan: " << o->message << "\n";
    return o->code;
  }
  absl::StatusOr<v1::PlanResponse> r = client->Plan(req);
  if (!r.ok()) {
    err << "ridgeline plan: " << Failed(r.status()).message << "\n";
    return kFailed;
  }
  if (format == "json") {
    out << Json(*r) << "\n";
  } else if (format == "csv") {
    PrintCsv(*r, out);
  } else {
    PrintText(*r, out);
  }
  return kOk;
}

}  // namespace ridgeline::cli
