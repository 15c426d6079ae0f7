#include "plan.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client.h"
#include "common.h"
#include "flags.h"
#include "serving_flags.h"
#include "table.h"

namespace ridgeline::cli {
namespace {

constexpr char kUsageText[] =
    "usage: ridgeline plan (--model ID | --model-config FILE.json) "
    "--hardware ID,... (--prompt N --gen N --rate R | --trace FILE) "
    "--ttft-p90-ms MS --tpot-p90-ms MS [flags]\n";

const std::vector<FlagSpec>& PlanFlags() {
  static const std::vector<FlagSpec> kFlags = JoinFlags({
      ModelFlags({"hardware", "ID,...",
                  "candidate hardware ids (ridgeline hardware)"}),
      LengthFlags(),
      TraceFlags("plan for a trace's requests: their lengths and prompt "
                 "blocks in their order, re-timed as Poisson arrivals at the "
                 "searched rate (--rate, default the trace's own mean rate; "
                 "--requests defaults to its length)"),
      {{"rate", "R",
        "requests per second over all replicas (with --trace: default the "
        "trace's mean rate)"},
       {"ttft-p90-ms", "MS", "p90 time-to-first-token target"},
       {"tpot-p90-ms", "MS", "p90 time-per-output-token target"},
       {"tensor-parallel", "N,...", "degrees to try (default 1,2,4,8)"},
       {"pipeline-parallel", "N,...",
        "pipeline stages to try, each dividing the layers (default 1)"},
       {"expert-parallel", "N,...",
        "MoE: expert-parallel degrees to try; N > 1 replicates the "
        "attention over N devices (data-parallel, TP 1) with the experts "
        "spread; 1 = the TP candidates (default 1)"},
       {"formats", "F,...",
        "format sets to try, each WEIGHTS[/ACTIVATIONS[/KV]] (default "
        "bf16,fp8)"},
       {"disaggregated", "auto|on|off",
        "disaggregated prefill / decode pools: auto (default: aggregated "
        "and disaggregated candidates), on (disaggregated only), off"},
       {"prefill-hardware", "ID,...",
        "the prefill pool's parts (default --hardware)"},
       {"decode-hardware", "ID,...",
        "the decode pool's parts (default --hardware); every prefill part "
        "pairs with every decode part"},
       {"prefill-tensor-parallel", "N,...",
        "the prefill pool's TP degrees (default the --tensor-parallel list)"},
       {"decode-tensor-parallel", "N,...",
        "the decode pool's TP degrees (default the --tensor-parallel list)"},
       {"max-pool-replicas", "N",
        "the largest P and D of a P:D replica ratio searched, 1..64 "
        "(default 8)"}},
      CalibrationFlags(),
      {{"profile-fallback", "none|roofline",
        "with --framework: a hardware the framework has no profile for gets "
        "the pure roofline (roofline; shown per row) instead of an error "
        "(none, the default)"},
       {"price-usd", "X|ID=X,...",
        "purchase price per device (amortised, TCO): for every candidate, "
        "or per hardware id"},
       {"usd-per-device-hour", "X|ID=X,...",
        "rental price per device-hour: for every candidate, or per hardware "
        "id (nvidia-h100-sxm-80gb=2.1,amd-mi300x=1.9)"}},
      ServingOptionFlags(),
      {{"requests", "N",
        "requests per simulation, at least (600, a trace: its length; "
        "lengthened to 16 turnovers of the running batch, at most the "
        "trace's)"},
       {"max-utilization", "X",
        "load each replica to at most this share of its offline maximum "
        "rate (0.9)"},
       {"seed", "N", "simulation seed (1)"}},
      {{"emit", "vllm|sglang|kubernetes",
        "print what to run instead of the table: a `vllm serve` or "
        "`python -m sglang.launch_server` command, or a Kubernetes manifest "
        "of the replicas, for the cheapest deployment meeting the SLO"},
       {"emit-row", "N",
        "with --emit: the deployment in row N (1-based, the --format csv "
        "order) instead"},
       {"emit-engine", "vllm|sglang",
        "with --emit kubernetes: the engine the pods run (vllm)"},
       {"emit-image", "IMAGE",
        "with --emit kubernetes: the container image (the engine's "
        "official :latest)"},
       {"emit-model", "ID|PATH",
        "with --emit: the weights the engine loads (default: the catalog "
        "model's Hugging Face repository; required with --model-config)"},
       {"emit-draft-model", "ID|PATH",
        "with --emit and --speculative: the draft or EAGLE-3 head the engine "
        "loads (default: a draft model's Hugging Face repository; required "
        "for eagle)"}},
      ClientFlags("output format (default table)"),
  });
  return kFlags;
}

// --usd-per-device-hour / --price-usd: "X" for every candidate, "ID=X" per
// hardware id, or both ("2,amd-mi300x=1.9": the entry wins for its part).
// The ids must be --hardware's; ranges are the service's to check.
std::optional<std::string> FillPrices(
    const ParsedFlags& flags, const char* flag,
    const std::function<void(double)>& all,
    google::protobuf::Map<std::string, double>* per_part) {
  // Every candidate part: --hardware and the pools' lists.
  std::vector<std::string> hardware = flags.GetList("hardware");
  for (const char* pool : {"prefill-hardware", "decode-hardware"}) {
    for (const std::string& id : flags.GetList(pool)) {
      if (std::find(hardware.begin(), hardware.end(), id) == hardware.end()) {
        hardware.push_back(id);
      }
    }
  }
  bool have_all = false;
  for (const std::string& item : flags.GetList(flag)) {
    const size_t eq = item.find('=');
    const std::string id = eq == std::string::npos ? "" : item.substr(0, eq);
    const std::string number =
        eq == std::string::npos ? item : item.substr(eq + 1);
    double v;
    if (!absl::SimpleAtod(number, &v) || !std::isfinite(v) ||
        (eq != std::string::npos && id.empty())) {
      return absl::StrCat("--", flag,
                          ": expected X or HARDWARE_ID=X,... (a number per "
                          "device); got '", item, "'");
    }
    if (eq == std::string::npos) {
      if (have_all) {
        return absl::StrCat("--", flag, ": more than one value for every "
                            "candidate; got '", item, "'");
      }
      have_all = true;
      all(v);
      continue;
    }
    if (std::find(hardware.begin(), hardware.end(), id) == hardware.end()) {
      return absl::StrCat("--", flag, ": '", id,
                          "' is not one of the candidate hardware (",
                          absl::StrJoin(hardware, ", "), "); got '", item, "'");
    }
    if (!per_part->insert({id, v}).second) {
      return absl::StrCat("--", flag, ": ", id, " is priced twice; got '",
                          item, "'");
    }
  }
  return std::nullopt;
}

// A literal format: clang checks absl::StrFormat's format at compile time.
std::string Num(double v) { return absl::StrFormat("%.3g", v); }

void PrintCsv(const v1::PlanResponse& r, std::ostream& out) {
  Table t({"hardware",
           "tensor_parallel",
           "formats",
           "replicas",
           "devices",
           "max_rate_per_replica",
           "ttft_p90_ms",
           "tpot_p90_ms",
           "e2e_p90_ms",
           "usd_per_mtoken",
           "cost_basis",
           "joules_per_token",
           "g_co2e_per_mtoken",
           "ttft_headroom",
           "tpot_headroom",
           "max_concurrency",
           "kv_capacity_tokens",
           "offline_output_tokens_per_second",
           "limiting_resource",
           "meets_slo",
           "feasible",
           "pareto",
           "profile",
           "why",
           "pipeline_parallel",
           "expert_parallel",
           "profile_fallback",
           "mode",
           "prefill_hardware",
           "prefill_tensor_parallel",
           "prefill_replicas",
           "decode_hardware",
           "decode_tensor_parallel",
           "decode_replicas",
           "kv_transfer_p90_ms",
           "bound_devices",
           "bound_warning"});
  auto g = [](double v) { return absl::StrFormat("%.10g", v); };
  for (const v1::PlanDeployment& d : r.deployments()) {
    // Aggregated rows leave the pool columns empty.
    const bool disagg = d.mode() == "disaggregated";
    auto pool = [&](int64_t v) {
      return disagg ? absl::StrCat(v) : std::string();
    };
    t.rows.push_back({d.hardware_id(),
                      absl::StrCat(d.tensor_parallel()),
                      d.formats(),
                      absl::StrCat(d.replicas()),
                      absl::StrCat(d.devices()),
                      g(d.max_rate_per_replica()),
                      g(d.ttft_p90_seconds() * 1e3),
                      g(d.tpot_p90_seconds() * 1e3),
                      g(d.e2e_p90_seconds() * 1e3),
                      d.has_usd_per_mtoken() ? g(d.usd_per_mtoken()) : "",
                      d.cost_basis(),
                      d.has_joules_per_token() ? g(d.joules_per_token()) : "",
                      d.has_g_co2e_per_mtoken() ? g(d.g_co2e_per_mtoken()) : "",
                      g(d.ttft_headroom()),
                      g(d.tpot_headroom()),
                      absl::StrCat(d.max_concurrency()),
                      absl::StrCat(d.kv_capacity_tokens()),
                      g(d.offline_output_tokens_per_second()),
                      d.limiting_resource(),
                      d.meets_slo() ? "1" : "0",
                      d.feasible() ? "1" : "0",
                      d.pareto() ? "1" : "0",
                      d.profile(),
                      d.why(),
                      absl::StrCat(std::max<int64_t>(1, d.pipeline_parallel())),
                      absl::StrCat(std::max<int64_t>(1, d.expert_parallel())),
                      d.profile_fallback(),
                      d.mode().empty() ? "aggregated" : d.mode(),
                      disagg ? d.prefill_hardware_id() : "",
                      pool(d.prefill_tensor_parallel()),
                      pool(d.prefill_replicas()),
                      disagg ? d.decode_hardware_id() : "",
                      pool(d.decode_tensor_parallel()),
                      pool(d.decode_replicas()),
                      disagg && d.has_kv_transfer_p90_seconds()
                          ? g(d.kv_transfer_p90_seconds() * 1e3)
                          : "",
                      absl::StrCat(d.bound_devices()),
                      d.bound_warning()});
  }
  PrintTable(t, TableStyle::kCsv, out);
}

// "TP 4", "TP 4 PP 2", "EP 8" (attention data-parallel), "EP 8 PP 2".
// Disaggregated: "P 2xTP4 + D 3xTP8" (with parts when they differ).
std::string ShapeLabel(const v1::PlanDeployment& d) {
  if (d.mode() == "disaggregated") {
    const bool hetero = d.prefill_hardware_id() != d.decode_hardware_id();
    // An infeasible candidate has no replica count: its shape alone.
    auto pool = [](int64_t replicas, int64_t tp) {
      return replicas > 0 ? absl::StrCat(replicas, "xTP", tp)
                          : absl::StrCat("TP", tp);
    };
    return absl::StrCat(
        "P ", pool(d.prefill_replicas(), d.prefill_tensor_parallel()),
        hetero ? absl::StrCat(" ", d.prefill_hardware_id()) : "", " + D ",
        pool(d.decode_replicas(), d.decode_tensor_parallel()),
        hetero ? absl::StrCat(" ", d.decode_hardware_id()) : "");
  }
  std::string s = d.expert_parallel() > 1
                      ? absl::StrCat("EP ", d.expert_parallel())
                      : absl::StrCat("TP ", d.tensor_parallel());
  if (d.pipeline_parallel() > 1) {
    absl::StrAppend(&s, " PP ", d.pipeline_parallel());
  }
  return s;
}

void PrintText(const v1::PlanResponse& r, std::ostream& out) {
  out << r.headline() << "\n\n";
  // pp, ep and fallback columns only when a candidate uses them.
  bool pp = false, ep = false, fallback = false, disagg = false;
  for (const v1::PlanDeployment& d : r.deployments()) {
    disagg |= d.mode() == "disaggregated" && d.feasible();
    pp |= d.pipeline_parallel() > 1;
    ep |= d.expert_parallel() > 1;
    fallback |= !d.profile_fallback().empty();
  }
  std::vector<std::string> header = {"hardware", ">tp"};
  if (pp) header.push_back(">pp");
  if (ep) header.push_back(">ep");
  for (const char* h :
       {"formats", ">replicas", ">devices", ">max rate/replica", ">ttft p90",
        ">tpot p90", ">$/Mtoken", "basis", ">J/token", ">gCO2e/Mtoken", "slo",
        "pareto"}) {
    header.push_back(h);
  }
  if (fallback) header.push_back("fallback");
  if (disagg) {
    header.push_back("pools (P:D)");
    header.push_back(">kv transfer");
  }
  Table t(header);
  // Infeasible candidates, one line per part (or pair) and reason: a plan
  // over several parts has hundreds of pool shapes, most of them refused
  // for one reason (e.g. no known link between two parts).
  std::vector<std::pair<std::string, std::string>> why_keys;
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> why;
  for (const v1::PlanDeployment& d : r.deployments()) {
    if (!d.feasible()) {
      const auto key = std::make_pair(d.hardware_id(), d.why());
      auto [it, fresh] = why.try_emplace(key);
      if (fresh) why_keys.push_back(key);
      it->second.push_back(absl::StrCat(ShapeLabel(d), " ", d.formats()));
      continue;
    }
    std::vector<std::string> row = {
        d.hardware_id(),
        d.mode() == "disaggregated" ? "-" : absl::StrCat(d.tensor_parallel())};
    if (pp) {
      row.push_back(absl::StrCat(std::max<int64_t>(1, d.pipeline_parallel())));
    }
    if (ep) {
      row.push_back(absl::StrCat(std::max<int64_t>(1, d.expert_parallel())));
    }
    const std::vector<std::string> rest = {
         d.formats(), absl::StrCat(d.replicas()), absl::StrCat(d.devices()),
         // A disaggregated deployment's pools have no one replica rate.
         d.mode() == "disaggregated"
             ? std::string("-")
             : absl::StrFormat("%.2f req/s", d.max_rate_per_replica()),
         Seconds(d.ttft_p90_seconds()), Seconds(d.tpot_p90_seconds()),
         d.has_usd_per_mtoken() ? absl::StrFormat("%.3f", d.usd_per_mtoken())
                                : "unknown",
         d.cost_basis(),
         d.has_joules_per_token() ? Num(d.joules_per_token()) : "unknown",
         d.has_g_co2e_per_mtoken() ? Si(d.g_co2e_per_mtoken()) : "unknown",
         d.meets_slo()                    ? "met"
         : d.feasible() && !d.stable() ? "UNSTABLE"
                                       : "MISSED",
         d.pareto() ? "*" : ""};
    row.insert(row.end(), rest.begin(), rest.end());
    if (fallback) row.push_back(d.profile_fallback());
    if (disagg) {
      const bool pools = d.mode() == "disaggregated";
      row.push_back(pools ? ShapeLabel(d) : "aggregated");
      row.push_back(pools && d.has_kv_transfer_p90_seconds()
                        ? Seconds(d.kv_transfer_p90_seconds())
                        : "");
    }
    t.rows.push_back(std::move(row));
  }
  if (!t.rows.empty()) PrintTable(t, TableStyle::kText, out);
  if (!why.empty()) {
    constexpr size_t kShapesShown = 3;
    out << "\ninfeasible:\n";
    for (const auto& key : why_keys) {
      const std::vector<std::string>& shapes = why[key];
      if (shapes.size() == 1) {
        out << "  " << key.first << " " << shapes[0] << ": " << key.second
            << "\n";
        continue;
      }
      const std::vector<std::string> shown(
          shapes.begin(),
          shapes.begin() + std::min(shapes.size(), kShapesShown));
      out << "  " << key.first << ", " << shapes.size() << " candidates ("
          << absl::StrJoin(shown, "; ")
          << (shapes.size() > kShapesShown ? "; ..." : "") << "): "
          << key.second << "\n";
    }
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
  for (const char* required : {"hardware", "ttft-p90-ms", "tpot-p90-ms"}) {
    if (!flags->Has(required)) return usage(absl::StrCat("--", required,
                                                         " is required"));
  }
  if (!flags->Has("rate") && !flags->Has("trace")) {
    return usage("--rate is required (or --trace)");
  }
  const absl::StatusOr<TraceFile> trace = ReadTraceFlags(*flags);
  if (!trace.ok()) return usage(std::string(trace.status().message()));
  v1::PlanRequest req;
  if (auto m = FillModel(*flags, req.mutable_model())) return usage(*m);
  for (const std::string& id : flags->GetList("hardware")) {
    req.mutable_candidates()->add_hardware()->set_platform_id(id);
  }
  if (!trace->lengths) {
    if (auto m =
            FillLengths(*flags, req.mutable_traffic()->mutable_prompt_tokens(),
                        req.mutable_traffic()->mutable_generated_tokens())) {
      return usage(*m);
    }
  }
  if (trace->trace) *req.mutable_traffic()->mutable_trace() = *trace->trace;
  const absl::StatusOr<ReuseFlags> reuse = ParseReuse(*flags);
  if (!reuse.ok()) return usage(std::string(reuse.status().message()));
  SetReuse(*reuse, req.mutable_traffic());
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
  };
  for (const DoubleFlag& d : doubles) {
    absl::StatusOr<std::optional<double>> v = flags->GetDouble(d.flag);
    if (!v.ok()) return usage(std::string(v.status().message()));
    if (*v) d.set(**v);
  }
  v1::PlanPricing* pricing = req.mutable_pricing();
  if (auto m = FillPrices(
          *flags, "usd-per-device-hour",
          [&](double v) { pricing->set_usd_per_device_hour(v); },
          pricing->mutable_usd_per_device_hour_by_hardware())) {
    return usage(*m);
  }
  if (auto m = FillPrices(
          *flags, "price-usd", [&](double v) { pricing->set_price_usd(v); },
          pricing->mutable_price_usd_by_hardware())) {
    return usage(*m);
  }
  if (auto f = flags->Get("profile-fallback")) {
    req.mutable_candidates()->set_profile_fallback(*f);
  }
  if (auto m = FillServingOptions(*flags, req.mutable_serving())) {
    return usage(*m);
  }
  if (auto m = FillRunFlags(
          *flags, [&](int64_t v) { req.set_requests(v); },
          [&](uint64_t v) { req.set_seed(v); })) {
    return usage(*m);
  }
  // Syntax here; the range by the service (max_utilization).
  absl::StatusOr<std::optional<double>> util =
      flags->GetDouble("max-utilization");
  if (!util.ok()) return usage(std::string(util.status().message()));
  if (*util) req.set_max_utilization(**util);
  absl::StatusOr<std::vector<int64_t>> tps =
      flags->GetIntList("tensor-parallel", 1, 256);
  if (!tps.ok()) return usage(std::string(tps.status().message()));
  for (const int64_t tp : *tps) req.mutable_candidates()->add_tensor_parallel(tp);
  // Syntax here; ranges and divisibility by the service (it names the entry).
  for (const char* name : {"pipeline-parallel", "expert-parallel"}) {
    absl::StatusOr<std::vector<int64_t>> list =
        flags->GetIntList(name, INT64_MIN, INT64_MAX);
    if (!list.ok()) return usage(std::string(list.status().message()));
    for (const int64_t v : *list) {
      if (std::string_view(name) == "pipeline-parallel") {
        req.mutable_candidates()->add_pipeline_parallel(v);
      } else {
        req.mutable_candidates()->add_expert_parallel(v);
      }
    }
  }
  // The CLI's default is "auto" (both kinds); the wire's unset is "off".
  req.mutable_candidates()->set_disaggregated(
      flags->Get("disaggregated").value_or("auto"));
  for (const std::string& id : flags->GetList("prefill-hardware")) {
    req.mutable_candidates()->add_prefill_hardware()->set_platform_id(id);
  }
  for (const std::string& id : flags->GetList("decode-hardware")) {
    req.mutable_candidates()->add_decode_hardware()->set_platform_id(id);
  }
  // Syntax here; ranges by the service (it names the entry).
  for (const char* name :
       {"prefill-tensor-parallel", "decode-tensor-parallel"}) {
    absl::StatusOr<std::vector<int64_t>> list =
        flags->GetIntList(name, INT64_MIN, INT64_MAX);
    if (!list.ok()) return usage(std::string(list.status().message()));
    for (const int64_t v : *list) {
      if (std::string_view(name) == "prefill-tensor-parallel") {
        req.mutable_candidates()->add_prefill_tensor_parallel(v);
      } else {
        req.mutable_candidates()->add_decode_tensor_parallel(v);
      }
    }
  }
  absl::StatusOr<std::optional<int64_t>> max_pool =
      flags->GetInt("max-pool-replicas", INT64_MIN, INT64_MAX);
  if (!max_pool.ok()) return usage(std::string(max_pool.status().message()));
  if (*max_pool) req.mutable_candidates()->set_max_pool_replicas(**max_pool);
  for (const std::string& f : flags->GetList("formats")) {
    std::optional<v1::Formats> formats = ParseFormatSet(f);
    if (!formats) {
      return usage(absl::StrCat(
          "--formats: expected WEIGHTS[/ACTIVATIONS[/KV]]; got '", f, "'"));
    }
    *req.mutable_candidates()->add_formats() = *formats;
  }
  if (auto m = FillCalibration(
          *flags, req.mutable_candidates()->mutable_calibration(),
          req.mutable_options())) {
    return usage(*m);
  }
  // --emit: the choices here (a usage error lists them), the rest by the
  // service (it names the field).
  if (auto e = flags->Get("emit")) {
    if (*e != "vllm" && *e != "sglang" && *e != "kubernetes") {
      return usage(
          absl::StrCat("--emit: expected one of vllm, sglang, "
                       "kubernetes; got '",
                       *e, "'"));
    }
    req.set_emit(*e);
  }
  for (const char* name : {"emit-row", "emit-engine", "emit-image",
                           "emit-model", "emit-draft-model"}) {
    if (flags->Has(name) && req.emit().empty()) {
      return usage(absl::StrCat("--", name, " needs --emit"));
    }
  }
  if (auto e = flags->Get("emit-engine")) {
    if (*e != "vllm" && *e != "sglang") {
      return usage(
          absl::StrCat("--emit-engine: expected one of vllm, "
                       "sglang; got '",
                       *e, "'"));
    }
    req.set_emit_engine(*e);
  }
  if (auto e = flags->Get("emit-image")) req.set_emit_image(*e);
  if (auto e = flags->Get("emit-model")) req.set_emit_model(*e);
  if (auto e = flags->Get("emit-draft-model")) req.set_emit_draft_model(*e);
  absl::StatusOr<std::vector<int64_t>> emit_row =
      flags->GetIntList("emit-row", 1, 1 << 30);
  if (!emit_row.ok()) return usage(std::string(emit_row.status().message()));
  if (emit_row->size() > 1) return usage("--emit-row: one row number");
  if (!emit_row->empty())
    req.set_emit_row(static_cast<int32_t>((*emit_row)[0]));
  std::string format_error;
  const std::optional<std::string> format = OutputFormat(*flags, &format_error);
  if (!format) return usage(format_error);
  std::unique_ptr<Client> client;
  if (Outcome o = ClientFor(*flags, std::chrono::seconds(600), &client)) {
    if (o->code == kUsage) return usage(o->message);
    err << "ridgeline plan: " << o->message << "\n";
    return o->code;
  }
  absl::StatusOr<v1::PlanResponse> r = client->Plan(req);
  if (!r.ok()) {
    const Failure f = Failed(r.status());
    err << "ridgeline plan: " << f.message << "\n";
    return f.code;
  }
  if (!req.emit().empty()) {
    out << r->emitted();
  } else if (*format == "json") {
    out << Json(*r) << "\n";
  } else if (*format == "csv") {
    PrintCsv(*r, out);
  } else {
    PrintText(*r, out);
  }
  for (const std::string& w : r->warnings()) {
    err << "ridgeline plan: warning: " << w << "\n";
  }
  return kOk;
}

}  // namespace ridgeline::cli
