#include "simulate.h"

#include <functional>
#include <memory>
#include <optional>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "client.h"
#include "common.h"
#include "flags.h"
#include "ridgeline/serving/simulate.h"
#include "ridgeline/serving/trace.h"
#include "serving_flags.h"
#include "table.h"

namespace ridgeline::cli {
namespace {

constexpr char kUsageText[] =
    "usage: ridgeline simulate (--model ID | --model-config FILE.json) "
    "--hardware ID --prompt N --gen N "
    "(--rate R,... | --concurrency N,... | --trace FILE) [flags]\n"
    "       disaggregated: --prefill-hardware ID --decode-hardware ID "
    "instead of --hardware\n";

const std::vector<FlagSpec>& SimulateFlags() {
  static const std::vector<FlagSpec> kFlags = JoinFlags({
      ModelFlags({"hardware", "ID", "hardware id (ridgeline hardware)"}),
      LengthFlags(),
      TraceFlags("requests from a trace file (--trace-format): one run of "
                 "its arrivals"),
      {{"rate", "R,...",
        "Poisson arrivals, requests/s; several values: one run each"},
       {"concurrency", "N,...",
        "closed loop of N clients; several values: one run each"},
       {"tensor-parallel", "N", "tensor-parallel devices (default 1)"},
       {"pipeline-parallel", "N",
        "pipeline stages, dividing the layers (default 1)"},
       {"expert-parallel", "N",
        "MoE: N > 1 replicates the attention over N devices "
        "(data-parallel, TP 1), the experts spread (default 1)"},
       {"formats", "WEIGHTS[/ACTIVATIONS[/KV]]",
        "formats (default: the model's)"}},
      CalibrationFlags(),
      ServingOptionFlags(),
      {{"replicas", "N", "aggregated replicas behind the router (default 1)"},
       {"router", "NAME",
        "round-robin (default), least-loaded (outstanding tokens), "
        "power-of-two or prefix-affinity (the longest cached prefix within "
        "125 % of the mean load)"},
       {"prefill-hardware", "ID",
        "disaggregated: the prefill pool's hardware id"},
       {"prefill-tensor-parallel", "N", "the prefill pool's TP (default 1)"},
       {"prefill-replicas", "N", "prefill replicas (default 1)"},
       {"decode-hardware", "ID",
        "disaggregated: the decode pool's hardware id"},
       {"decode-tensor-parallel", "N", "the decode pool's TP (default 1)"},
       {"decode-replicas", "N", "decode replicas (default 1)"},
       {"kv-transfer-overlap", "MODE",
        "after-prefill (default) or layerwise: the KV transfer behind the "
        "prefill's layers"}},
      {{"block-size", "N", "KV cache block, tokens (16)"},
       {"requests", "N", "requests per run (1000; a trace: its length)"},
       {"seed", "N", "simulation seed (1)"}},
      ClientFlags("output format (default table); json: one object per run "
                  "and line"),
  });
  return kFlags;
}

// One simulation run's load: what the table's first column says.
struct Load {
  std::string kind;  // "rate", "concurrency" or "trace"
  std::string value;
  v1::SimulateTraffic traffic;  // arrivals only
};

double Ms(double seconds) { return seconds * 1e3; }

void PrintCsv(const std::vector<Load>& loads,
              const std::vector<v1::SimulateResponse>& runs,
              std::ostream& out) {
  std::vector<std::string> header = {"load_kind", "load", "requests", "steps",
                                     "duration_s"};
  for (const char* m : {"ttft", "tpot", "itl", "e2e", "queue"}) {
    for (const char* p : {"p50", "p90", "p99", "mean"}) {
      header.push_back(absl::StrCat(m, "_", p, "_ms"));
    }
  }
  for (const char* c : {"requests_per_second",
                        "output_tokens_per_second",
                        "input_tokens_per_second",
                        "mean_running",
                        "kv_usage_mean",
                        "kv_usage_peak",
                        "max_waiting",
                        "kv_capacity_tokens",
                        "max_concurrency",
                        "offline_max_output_tokens_per_second",
                        "limiting_resource",
                        "profile",
                        "stable",
                        "backlog_first_half",
                        "backlog_second_half",
                        "mode",
                        "kv_transfer_p50_ms",
                        "kv_transfer_p90_ms",
                        "aggregated_utilization",
                        "prefill_utilization",
                        "decode_utilization",
                        "prefix_hit_rate",
                        "prefill_tokens_saved",
                        "kv_offload_hit_rate",
                        "preemptions",
                        "swapped_preemptions"}) {
    header.push_back(c);
  }
  Table t(header);
  for (size_t i = 0; i < runs.size(); ++i) {
    const v1::SimulateResponse& r = runs[i];
    std::vector<std::string> row = {loads[i].kind, loads[i].value,
                                    absl::StrCat(r.requests()),
                                    absl::StrCat(r.steps()),
                                    Raw(r.duration_seconds())};
    for (const v1::LatencyPercentiles* p :
         {&r.ttft(), &r.tpot(), &r.itl(), &r.e2e(), &r.queue()}) {
      for (double v : {p->p50_seconds(), p->p90_seconds(), p->p99_seconds(),
                       p->mean_seconds()}) {
        row.push_back(Raw(Ms(v)));
      }
    }
    for (double v : {r.requests_per_second(), r.output_tokens_per_second(),
                     r.input_tokens_per_second(), r.mean_running(),
                     r.kv_usage_mean(), r.kv_usage_peak()}) {
      row.push_back(Raw(v));
    }
    row.push_back(absl::StrCat(r.max_waiting()));
    row.push_back(absl::StrCat(r.kv_capacity_tokens()));
    row.push_back(absl::StrCat(r.max_concurrency()));
    row.push_back(Raw(r.offline_max_output_tokens_per_second()));
    row.push_back(r.limiting_resource());
    row.push_back(r.profile());
    row.push_back(r.stable() ? "1" : "0");
    row.push_back(Raw(r.backlog_first_half()));
    row.push_back(Raw(r.backlog_second_half()));
    row.push_back(r.mode());
    const bool split = r.mode() == "disaggregated";
    row.push_back(split ? Raw(Ms(r.kv_transfer_p50_seconds())) : "");
    row.push_back(split ? Raw(Ms(r.kv_transfer_p90_seconds())) : "");
    for (const char* pool : {"aggregated", "prefill", "decode"}) {
      std::string cell;
      for (const v1::SimulatePoolResult& p : r.pools()) {
        if (p.name() == pool) cell = Raw(p.utilization());
      }
      row.push_back(cell);
    }
    row.push_back(Raw(r.prefix_hit_rate()));
    row.push_back(absl::StrCat(r.prefill_tokens_saved()));
    row.push_back(Raw(r.kv_offload_hit_rate()));
    row.push_back(absl::StrCat(r.preemptions()));
    row.push_back(absl::StrCat(r.swapped_preemptions()));
    t.rows.push_back(std::move(row));
  }
  PrintTable(t, TableStyle::kCsv, out);
}

void PrintText(const v1::SimulateRequest& req, const std::vector<Load>& loads,
               const std::vector<v1::SimulateResponse>& runs,
               std::ostream& out) {
  const v1::SimulateResponse& first = runs.front();
  const v1::Formats& f = req.formats();
  auto pool = [](const v1::SimulatePool& p) {
    return absl::StrCat(std::max<int64_t>(1, p.replicas()), " x ",
                        p.hardware().platform_id(), " TP ",
                        std::max<int64_t>(1, p.tensor_parallel()));
  };
  const bool split = req.has_prefill() || req.has_decode();
  out << (req.model().catalog_id().empty() ? req.model().id()
                                           : req.model().catalog_id())
      << " on "
      << (split ? absl::StrCat("prefill ", pool(req.prefill()), " -> decode ",
                               pool(req.decode()))
                : absl::StrCat(std::max<int64_t>(1, req.replicas()) > 1
                                   ? absl::StrCat(req.replicas(), " x ")
                                   : std::string(),
                               req.hardware().platform_id(), ", TP ",
                               std::max<int64_t>(
                                   1, req.parallelism().tensor_parallel())))
      << (req.parallelism().pipeline_parallel() > 1
              ? absl::StrCat(" PP ", req.parallelism().pipeline_parallel())
              : std::string())
      << (req.parallelism().expert_parallel() > 1
              ? absl::StrCat(" EP ", req.parallelism().expert_parallel(),
                             " (attention data-parallel)")
              : std::string())
      << ", "
      << (f.weights().empty() ? std::string("model formats")
                              : absl::StrCat(f.weights(), "/", f.activations(),
                                             "/", f.kv_cache()))
      << ", "
      << (first.profile().empty() ? std::string("pure roofline (upper bound)")
                                  : absl::StrCat("profile ", first.profile()))
      << "\n"
      << (first.calibration().match().empty()
              ? std::string()
              : absl::StrCat("calibration: ", first.calibration().match(),
                             "\n"))
      << "KV cache " << Si(static_cast<double>(first.kv_capacity_tokens()))
      << " tokens (" << first.max_concurrency()
      << " running at most: KV cache and max_num_seqs)"
      << (split ? std::string(" per decode replica")
                : absl::StrCat("; offline maximum ",
                               Si(first.offline_max_output_tokens_per_second()),
                               " output tokens/s, limited by ",
                               first.limiting_resource()))
      << "\n\n";
  Table t({"load", ">requests", ">req/s", ">out tok/s", ">ttft p50",
           ">ttft p90", ">ttft p99", ">tpot p50", ">tpot p90", ">tpot p99",
           ">itl p99", ">e2e p90", ">queue p90", ">running", ">kv peak",
           "stable"});
  for (size_t i = 0; i < runs.size(); ++i) {
    const v1::SimulateResponse& r = runs[i];
    t.rows.push_back(
        {absl::StrCat(loads[i].kind, " ", loads[i].value),
         absl::StrCat(r.requests()),
         absl::StrFormat("%.3g", r.requests_per_second()),
         Si(r.output_tokens_per_second()), Seconds(r.ttft().p50_seconds()),
         Seconds(r.ttft().p90_seconds()), Seconds(r.ttft().p99_seconds()),
         Seconds(r.tpot().p50_seconds()), Seconds(r.tpot().p90_seconds()),
         Seconds(r.tpot().p99_seconds()), Seconds(r.itl().p99_seconds()),
         Seconds(r.e2e().p90_seconds()), Seconds(r.queue().p90_seconds()),
         absl::StrFormat("%.1f", r.mean_running()),
         Percent(r.kv_usage_peak()), r.stable() ? "yes" : "NO"});
  }
  PrintTable(t, TableStyle::kText, out);
  // Prefix caching, where anything was shared.
  for (size_t i = 0; i < runs.size(); ++i) {
    const v1::SimulateResponse& r = runs[i];
    if (r.prefill_tokens_saved() == 0) continue;
    out << "\n"
        << loads[i].kind << " " << loads[i].value << ": prefix cache hit rate "
        << Percent(r.prefix_hit_rate()) << " ("
        << Si(static_cast<double>(r.prefill_tokens_saved()))
        << " prompt tokens not recomputed";
    if (r.kv_offload_hit_rate() > 0) {
      out << "; " << Percent(r.kv_offload_hit_rate())
          << " reloaded from offload tiers";
    }
    out << ")\n";
    for (const v1::KvTierUse& t : r.kv_tiers()) {
      out << "  " << t.name() << ": "
          << Si(static_cast<double>(t.capacity_tokens()))
          << " tokens a replica, " << Percent(t.usage_mean())
          << " used on average, " << Percent(t.usage_peak()) << " at peak\n";
    }
  }
  // Deployments: each pool, and the KV transfer of a split one.
  for (size_t i = 0; i < runs.size(); ++i) {
    const v1::SimulateResponse& r = runs[i];
    if (r.pools().empty()) continue;
    out << "\n" << loads[i].kind << " " << loads[i].value << ":";
    for (const v1::SimulatePoolResult& p : r.pools()) {
      out << " " << p.name() << " " << p.replicas() << " x " << p.hardware()
          << " TP " << p.tensor_parallel() << " utilisation "
          << Percent(p.utilization()) << ";";
    }
    if (r.mode() == "disaggregated") {
      out << " KV transfer p50 " << Seconds(r.kv_transfer_p50_seconds())
          << " p90 " << Seconds(r.kv_transfer_p90_seconds()) << " ("
          << r.kv_link() << ")";
    }
    out << "\n";
  }
}

}  // namespace

int SimulateCli(const std::vector<std::string>& args, std::ostream& out,
                std::ostream& err) {
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, SimulateFlags());
  if (!flags.ok()) {
    err << "ridgeline simulate: " << flags.status().message() << "\n"
        << kUsageText;
    return kUsage;
  }
  if (flags->Has("help")) {
    out << kUsageText
        << "\none replica, N replicas behind a router (--replicas, --router) "
           "or a prefill pool\nhanding the KV to a decode pool "
           "(--prefill-*, --decode-*) serving requests:\nTTFT, TPOT, "
           "inter-token and end-to-end latency percentiles, throughput, KV "
           "use,\nper-pool utilisation and the KV transfer from a "
           "discrete-event simulation\n\nflags:\n"
        << FlagHelp(SimulateFlags());
    return kOk;
  }
  auto usage = [&](const std::string& m) {
    err << "ridgeline simulate: " << m << "\n" << kUsageText;
    return kUsage;
  };
  if (!flags->positional().empty()) {
    return usage(absl::StrCat("unexpected argument '",
                              flags->positional()[0], "'"));
  }
  const bool split =
      flags->Has("prefill-hardware") || flags->Has("decode-hardware");
  if (!split && !flags->Has("hardware")) {
    return usage(
        "--hardware is required (or --prefill-hardware and "
        "--decode-hardware)");
  }
  const absl::StatusOr<TraceFile> trace = ReadTraceFlags(*flags);
  if (!trace.ok()) return usage(std::string(trace.status().message()));
  const bool trace_lengths = trace->lengths;
  const int loads_given = flags->Has("rate") + flags->Has("concurrency") +
                          flags->Has("trace");
  if (loads_given != 1) {
    return usage("exactly one of --rate, --concurrency or --trace is required");
  }
  v1::SimulateRequest req;
  if (auto m = FillModel(*flags, req.mutable_model())) return usage(*m);
  if (auto h = flags->Get("hardware")) {
    req.mutable_hardware()->set_platform_id(*h);
  }
  // Pools: each flag sets its pool; the service checks that both are there.
  for (const char* name : {"prefill", "decode"}) {
    auto get_pool = [&]() {
      return std::string(name) == "prefill" ? req.mutable_prefill()
                                            : req.mutable_decode();
    };
    if (auto h = flags->Get(absl::StrCat(name, "-hardware"))) {
      get_pool()->mutable_hardware()->set_platform_id(*h);
    }
    for (const char* field : {"tensor-parallel", "replicas"}) {
      const std::string flag = absl::StrCat(name, "-", field);
      absl::StatusOr<std::optional<int64_t>> v =
          flags->GetInt(flag, INT64_MIN, INT64_MAX);
      if (!v.ok()) return usage(std::string(v.status().message()));
      if (!*v) continue;
      if (std::string(field) == "replicas") {
        get_pool()->set_replicas(**v);
      } else {
        get_pool()->set_tensor_parallel(**v);
      }
    }
  }
  absl::StatusOr<std::optional<int64_t>> replicas =
      flags->GetInt("replicas", INT64_MIN, INT64_MAX);
  if (!replicas.ok()) return usage(std::string(replicas.status().message()));
  if (*replicas) req.set_replicas(**replicas);
  if (auto r = flags->Get("router")) req.set_router(*r);
  if (auto o = flags->Get("kv-transfer-overlap")) {
    req.set_kv_transfer_overlap(*o);
  }
  if (!trace_lengths) {
    if (auto m =
            FillLengths(*flags, req.mutable_traffic()->mutable_prompt_tokens(),
                        req.mutable_traffic()->mutable_generated_tokens())) {
      return usage(*m);
    }
  }
  const absl::StatusOr<ReuseFlags> reuse = ParseReuse(*flags);
  if (!reuse.ok()) return usage(std::string(reuse.status().message()));

  std::vector<Load> loads;
  if (flags->Has("rate")) {
    for (const std::string& item : flags->GetList("rate")) {
      double rate;
      if (!absl::SimpleAtod(item, &rate)) {
        return usage(absl::StrCat("--rate: expected numbers, got '", item,
                                  "'"));
      }
      Load l{"rate", item, {}};
      l.traffic.set_rate(rate);  // range: the service names traffic.rate
      loads.push_back(std::move(l));
    }
  } else if (flags->Has("concurrency")) {
    absl::StatusOr<std::vector<int64_t>> cs =
        flags->GetIntList("concurrency", 1, 65536);
    if (!cs.ok()) return usage(std::string(cs.status().message()));
    for (int64_t c : *cs) {
      Load l{"concurrency", absl::StrCat(c), {}};
      l.traffic.set_concurrency(c);
      loads.push_back(std::move(l));
    }
  } else {
    Load l{"trace", *flags->Get("trace"), {}};
    *l.traffic.mutable_trace() = *trace->trace;
    loads.push_back(std::move(l));
  }
  if (loads.empty()) {
    return usage("--rate / --concurrency: expected at least one value");
  }

  if (auto f = flags->Get("formats")) {
    std::optional<v1::Formats> formats = ParseFormatSet(*f);
    if (!formats) {
      return usage(absl::StrCat(
          "--formats: expected WEIGHTS[/ACTIVATIONS[/KV]]; got '", *f, "'"));
    }
    *req.mutable_formats() = *formats;
  }
  // Syntax and the int64 range here; the service checks the real ranges
  // and names the field.
  absl::StatusOr<std::optional<int64_t>> tp =
      flags->GetInt("tensor-parallel", INT64_MIN, INT64_MAX);
  if (!tp.ok()) return usage(std::string(tp.status().message()));
  if (*tp) req.mutable_parallelism()->set_tensor_parallel(**tp);
  absl::StatusOr<std::optional<int64_t>> pp =
      flags->GetInt("pipeline-parallel", INT64_MIN, INT64_MAX);
  if (!pp.ok()) return usage(std::string(pp.status().message()));
  if (*pp) req.mutable_parallelism()->set_pipeline_parallel(**pp);
  absl::StatusOr<std::optional<int64_t>> ep =
      flags->GetInt("expert-parallel", INT64_MIN, INT64_MAX);
  if (!ep.ok()) return usage(std::string(ep.status().message()));
  if (*ep) {
    req.mutable_parallelism()->set_expert_parallel(**ep);
    if (**ep > 1) req.mutable_parallelism()->set_attention_data_parallel(true);
  }
  if (auto m = FillServingOptions(*flags, req.mutable_serving())) {
    return usage(*m);
  }
  if (auto m = FillRunFlags(
          *flags, [&](int64_t v) { req.set_requests(v); },
          [&](uint64_t v) { req.set_seed(v); })) {
    return usage(*m);
  }
  if (auto m = FillCalibration(*flags, req.mutable_calibration(),
                               req.mutable_options())) {
    return usage(*m);
  }
  std::string format_error;
  const std::optional<std::string> format = OutputFormat(*flags, &format_error);
  if (!format) return usage(format_error);
  std::unique_ptr<Client> client;
  if (Outcome o = ClientFor(*flags, std::chrono::seconds(600), &client)) {
    if (o->code == kUsage) return usage(o->message);
    err << "ridgeline simulate: " << o->message << "\n";
    return o->code;
  }
  std::vector<v1::SimulateResponse> runs;
  for (const Load& l : loads) {
    v1::SimulateRequest one = req;
    const v1::TokenLengths prompt = one.traffic().prompt_tokens();
    const v1::TokenLengths gen = one.traffic().generated_tokens();
    *one.mutable_traffic() = l.traffic;
    if (!trace_lengths) {
      *one.mutable_traffic()->mutable_prompt_tokens() = prompt;
      *one.mutable_traffic()->mutable_generated_tokens() = gen;
    }
    SetReuse(*reuse, one.mutable_traffic());
    absl::StatusOr<v1::SimulateResponse> r = client->Simulate(one);
    if (!r.ok()) {
      const Failure f = Failed(r.status());
      err << "ridgeline simulate: " << l.kind << " " << l.value << ": "
          << f.message << "\n";
      return f.code;
    }
    runs.push_back(*std::move(r));
  }
  if (*format == "json") {
    for (const v1::SimulateResponse& r : runs) out << Json(r) << "\n";
  } else if (*format == "csv") {
    PrintCsv(loads, runs, out);
  } else {
    PrintText(req, loads, runs, out);
  }
  // The run's own warnings (calibration) once; each unstable run by load.
  auto unstable = [](const std::string& w) {
    return absl::StartsWith(w, "unstable:");
  };
  for (const std::string& w : runs.front().warnings()) {
    if (!unstable(w)) err << "ridgeline simulate: warning: " << w << "\n";
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const std::string& w : runs[i].warnings()) {
      if (unstable(w)) {
        err << "ridgeline simulate: warning: " << loads[i].kind << " "
            << loads[i].value << ": " << w << "\n";
      }
    }
  }
  return kOk;
}

}  // namespace ridgeline::cli
