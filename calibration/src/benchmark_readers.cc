#include "benchmark_readers.h"

#include <cmath>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "ridgeline/engine/field_path.h"

namespace ridgeline::calibration::benchmark {
namespace {

using nlohmann::json;

// The value at a dotted path of objects; nullptr when a step is missing,
// not an object, or the value is null.
const json* At(const json& doc, const std::string& path) {
  const json* v = &doc;
  for (absl::string_view key : absl::StrSplit(path, '.')) {
    if (!v->is_object()) return nullptr;
    auto it = v->find(std::string(key));
    if (it == v->end()) return nullptr;
    v = &*it;
  }
  return v->is_null() ? nullptr : v;
}

// A finite JSON number (not a bool, not a string).
std::optional<double> Number(const json* v) {
  if (v == nullptr || !v->is_number()) return std::nullopt;
  const double x = v->get<double>();
  if (!std::isfinite(x)) return std::nullopt;
  return x;
}

absl::Status FieldError(const std::string& label, const std::string& field,
                        const std::string& want, const json* got) {
  std::string seen = got == nullptr ? "missing" : got->dump();
  if (seen.size() > 40) seen = seen.substr(0, 40) + "...";
  return engine::WithFieldPath(
      absl::InvalidArgumentError(absl::StrFormat(
          "%s: field \"%s\": expected %s, got %s", label, field, want, seen)),
      field);
}

// A required number > 0.
absl::StatusOr<double> Positive(const json& doc, const std::string& label,
                                const std::string& field) {
  const json* v = At(doc, field);
  std::optional<double> x = Number(v);
  if (!x || !(*x > 0)) return FieldError(label, field, "a number > 0", v);
  return *x;
}

// Appends `value` as a statistic when it is a finite number > 0 (a tool
// writes 0 or -0.00 where it measured nothing, e.g. ITL of a non-streamed
// run: not a measurement).
void AddIfMeasured(Run* run, const json* v, std::string metric,
                   std::string unit, std::string field, std::string meaning,
                   double scale = 1) {
  std::optional<double> x = Number(v);
  if (!x || !(*x > 0)) return;
  run->stats.push_back({std::move(metric), *x * scale, std::move(unit),
                        std::move(field), std::move(meaning)});
}

// "p99" -> "ttft_p99_ms"; "" -> "ttft_ms"; "p99.9" -> "ttft_p99_9_ms".
std::string MetricName(const std::string& base, const std::string& stat,
                       const std::string& unit_suffix) {
  std::string s(stat);
  for (char& c : s) {
    if (c == '.') c = '_';
  }
  return s.empty() ? absl::StrCat(base, "_", unit_suffix)
                   : absl::StrCat(base, "_", s, "_", unit_suffix);
}

// "p99" / "p99.9": a percentile key of the tools' summaries.
bool IsPercentileKey(const std::string& key) {
  if (key.size() < 2 || key[0] != 'p') return false;
  for (char c : key.substr(1)) {
    if (!(c == '.' || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

std::string RateText(double rate) { return absl::StrCat("rate=", rate, "/s"); }

// --- vLLM `vllm bench serve` and SGLang `bench_serving` -------------------
// Both write one flat object per run (vLLM --save-result / --append-result,
// SGLang --output-file appends a line per run): mean_/median_/pNN_ +
// {ttft,tpot,itl,e2e}_ms, output_throughput, total_input_tokens,
// total_output_tokens, completed, request_rate, max_concurrency.
struct FlatSchema {
  const std::string& tool;
  const std::string& e2e_key;  // vLLM "e2el", SGLang "e2e_latency"
  const std::string& default_framework;
};

absl::StatusOr<Run> ReadFlatRun(const json& doc, const FlatSchema& schema,
                                std::string label) {
  Run run;
  run.label = std::move(label);
  if (!doc.is_object()) {
    return FieldError(run.label, "(document)", "a JSON object", &doc);
  }
  const std::string& l = run.label;
  absl::StatusOr<double> completed = Positive(doc, l, "completed");
  if (!completed.ok()) return completed.status();
  absl::StatusOr<double> in_tokens = Positive(doc, l, "total_input_tokens");
  if (!in_tokens.ok()) return in_tokens.status();
  absl::StatusOr<double> out_tokens = Positive(doc, l, "total_output_tokens");
  if (!out_tokens.ok()) return out_tokens.status();
  run.mean_prompt_tokens = *in_tokens / *completed;
  run.mean_output_tokens = *out_tokens / *completed;
  run.lengths_note = absl::StrFormat(
      "prompt_len = total_input_tokens / completed = %g / %g, gen_len = "
      "total_output_tokens / completed = %g / %g (means, rounded)",
      *in_tokens, *completed, *out_tokens, *completed);

  // The load: request_rate ("inf" for vLLM's infinite rate; SGLang's
  // Infinity token reads as "inf" too) and the client's in-flight cap.
  const json* rate = At(doc, "request_rate");
  const bool infinite = rate != nullptr && rate->is_string() &&
                        (*rate == "inf" || *rate == "Infinity");
  std::optional<double> rate_value = Number(rate);
  if (!infinite && !(rate_value && *rate_value > 0)) {
    return FieldError(l, "request_rate", "a rate > 0 or \"inf\"", rate);
  }
  const json* cap_field = At(doc, "max_concurrency");
  std::optional<double> cap = Number(cap_field);
  if (cap_field != nullptr && !(cap && *cap >= 1 && *cap == std::floor(*cap))) {
    return FieldError(l, "max_concurrency", "an integer >= 1 or null",
                      cap_field);
  }
  std::optional<double> prompts = Number(At(doc, "num_prompts"));
  const double offered = prompts.value_or(*completed);
  if (infinite) {
    if (!cap || *cap >= offered) {
      run.concurrency = "max";
      run.load_note = cap ? absl::StrFormat(
                                "request_rate inf, max_concurrency %g >= "
                                "%g requests: every request offered at once",
                                *cap, offered)
                          : "request_rate inf, no max_concurrency: every "
                            "request offered at once";
    } else {
      run.concurrency = absl::StrCat(static_cast<int64_t>(*cap));
      run.load_note = absl::StrFormat(
          "request_rate inf, max_concurrency %g: %g requests in flight", *cap,
          *cap);
    }
  } else {
    run.concurrency = RateText(*rate_value);
    run.load_note = absl::StrCat("request_rate ", *rate_value, "/s");
    if (cap) {
      absl::StrAppend(&run.load_note, ", also capped at max_concurrency ", *cap,
                      " in flight");
    }
  }
  if (const json* backend = At(doc, "backend");
      backend && backend->is_string()) {
    run.framework = backend->get<std::string>();
  }
  // Statistics. TPOT: per request (latency - TTFT) / (output - 1); ITL:
  // every chunk gap of every request pooled; E2E: per-request latency.
  absl::StatusOr<double> throughput = Positive(doc, l, "output_throughput");
  if (!throughput.ok()) return throughput.status();
  run.stats.push_back({"throughput_tok_s", *throughput, "tok/s",
                       "output_throughput",
                       "output tokens of the run / its duration"});
  struct Quantity {
    std::string key, base, meaning;
  };
  const std::string tool(schema.tool);
  const std::vector<Quantity> quantities = {
      {"ttft", "ttft", "time to first token per request"},
      {"tpot", "tpot", "per request (latency - TTFT) / (output tokens - 1)"},
      {"itl", "itl", "every gap between streamed chunks, pooled over requests"},
      {std::string(schema.e2e_key), "e2e_latency", "per-request latency"},
  };
  for (const Quantity& q : quantities) {
    const std::string mean_key = absl::StrCat("mean_", q.key, "_ms");
    AddIfMeasured(&run, At(doc, mean_key), MetricName(q.base, "", "ms"), "ms",
                  mean_key, absl::StrCat(tool, " mean of ", q.meaning));
    const std::string median_key = absl::StrCat("median_", q.key, "_ms");
    AddIfMeasured(&run, At(doc, median_key), MetricName(q.base, "p50", "ms"),
                  "ms", median_key,
                  absl::StrCat(tool, " median of ", q.meaning));
    const std::string suffix = absl::StrCat("_", q.key, "_ms");
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      const std::string& key = it.key();
      if (key.size() <= suffix.size() || !key.ends_with(suffix)) continue;
      const std::string p = key.substr(0, key.size() - suffix.size());
      if (!IsPercentileKey(p)) continue;
      AddIfMeasured(&run, &it.value(), MetricName(q.base, p, "ms"), "ms", key,
                    absl::StrCat(tool, " ", p, " of ", q.meaning));
    }
  }
  return run;
}

absl::StatusOr<std::vector<Run>> ReadFlat(const std::vector<json>& docs,
                                          const FlatSchema& schema) {
  std::vector<Run> runs;
  for (size_t i = 0; i < docs.size(); ++i) {
    absl::StatusOr<Run> run = ReadFlatRun(
        docs[i], schema,
        docs.size() == 1 ? std::string("run 1") : absl::StrCat("line ", i + 1));
    if (!run.ok()) return run.status();
    if (run->framework.empty() || run->framework == "openai" ||
        run->framework == "openai-chat") {
      // The client's endpoint kind, not the server runtime.
      run->framework = std::string(schema.default_framework);
    }
    runs.push_back(*std::move(run));
  }
  return runs;
}

// --- genai-perf and AIPerf --------------------------------------------------
// One object: per metric {"unit", "avg", "p50", "p90", "p99", ...}, and the
// command line under "input_config".

absl::StatusOr<double> UnitScaleToMs(const std::string& label,
                                     const std::string& field,
                                     const json* unit) {
  if (unit == nullptr) return 1.0;  // genai-perf before units: ms
  if (unit->is_string()) {
    const std::string u = unit->get<std::string>();
    if (u == "ms") return 1.0;
    if (u == "s" || u == "sec") return 1e3;
    if (u == "us") return 1e-3;
    if (u == "ns") return 1e-6;
  }
  return FieldError(label, field, "a time unit (ms, s, us, ns)", unit);
}

// Adds the avg and every pNN of `metric_key` (a latency) as `base`.
absl::Status AddLatencySummary(Run* run, const json& doc,
                               const std::string& metric_key,
                               const std::string& base, const std::string& tool,
                               const std::string& meaning, bool required) {
  const json* m = At(doc, metric_key);
  const std::string avg_field = absl::StrCat(metric_key, ".avg");
  if (m == nullptr || !m->is_object()) {
    if (!required) return absl::OkStatus();
    return FieldError(run->label, avg_field, "a number > 0", nullptr);
  }
  absl::StatusOr<double> scale = UnitScaleToMs(
      run->label, absl::StrCat(metric_key, ".unit"), At(*m, "unit"));
  if (!scale.ok()) return scale.status();
  std::optional<double> avg = Number(At(*m, "avg"));
  if (required && !(avg && *avg > 0)) {
    return FieldError(run->label, avg_field, "a number > 0", At(*m, "avg"));
  }
  AddIfMeasured(run, At(*m, "avg"), MetricName(base, "", "ms"), "ms", avg_field,
                absl::StrCat(tool, " mean of ", meaning), *scale);
  for (auto it = m->begin(); it != m->end(); ++it) {
    if (!IsPercentileKey(it.key())) continue;
    AddIfMeasured(run, &it.value(), MetricName(base, it.key(), "ms"), "ms",
                  absl::StrCat(metric_key, ".", it.key()),
                  absl::StrCat(tool, " ", it.key(), " of ", meaning), *scale);
  }
  return absl::OkStatus();
}

// The load of a run from the request_rate / concurrency of its command
// line, found under `prefix` ("input_config.loadgen").
absl::Status ReadClientLoad(const json& doc, const std::string& prefix,
                            Run* run) {
  const std::string rate_field = absl::StrCat(prefix, ".request_rate");
  const std::string conc_field = absl::StrCat(prefix, ".concurrency");
  const json* rate = At(doc, rate_field);
  const json* conc = At(doc, conc_field);
  if (rate != nullptr) {
    std::optional<double> r = Number(rate);
    if (!(r && *r > 0)) {
      return FieldError(run->label, rate_field, "a rate > 0 or null", rate);
    }
    run->concurrency = RateText(*r);
    run->load_note = absl::StrCat(rate_field, " ", *r, "/s");
    return absl::OkStatus();
  }
  std::optional<double> c = Number(conc);
  if (!(c && *c >= 1 && *c == std::floor(*c))) {
    return FieldError(run->label, conc_field,
                      "an integer >= 1 (or a request_rate)", conc);
  }
  run->concurrency = absl::StrCat(static_cast<int64_t>(*c));
  run->load_note = absl::StrCat(conc_field, " ", *c, " requests in flight");
  return absl::OkStatus();
}

absl::StatusOr<Run> ReadProfileExport(const json& doc, const std::string& tool,
                                      const std::string& load_prefix,
                                      const std::string& fallback_prefix) {
  Run run;
  run.label = "run 1";
  if (!doc.is_object()) {
    return FieldError(run.label, "(document)", "a JSON object", &doc);
  }
  absl::StatusOr<double> isl =
      Positive(doc, run.label, "input_sequence_length.avg");
  if (!isl.ok()) return isl.status();
  absl::StatusOr<double> osl =
      Positive(doc, run.label, "output_sequence_length.avg");
  if (!osl.ok()) return osl.status();
  run.mean_prompt_tokens = *isl;
  run.mean_output_tokens = *osl;
  run.lengths_note = absl::StrFormat(
      "prompt_len = input_sequence_length.avg %g, gen_len = "
      "output_sequence_length.avg %g (rounded)",
      *isl, *osl);
  const bool nested = At(doc, load_prefix) != nullptr;
  if (!nested && At(doc, fallback_prefix) == nullptr) {
    return FieldError(run.label, absl::StrCat(load_prefix, ".concurrency"),
                      "the run's concurrency or request_rate", nullptr);
  }
  if (absl::Status st =
          ReadClientLoad(doc, nested ? load_prefix : fallback_prefix, &run);
      !st.ok()) {
    return st;
  }
  absl::StatusOr<double> throughput =
      Positive(doc, run.label, "output_token_throughput.avg");
  if (!throughput.ok()) return throughput.status();
  run.stats.push_back({"throughput_tok_s", *throughput, "tok/s",
                       "output_token_throughput.avg",
                       "output tokens of the run / its duration"});
  const std::string t(tool);
  for (const auto& [key, base, meaning, required] :
       std::vector<std::tuple<std::string, std::string, std::string, bool>>{
           // Latencies are optional: a non-streamed run has no TTFT.
           {"time_to_first_token", "ttft", "time to first token per request",
            false},
           // genai-perf and AIPerf call vLLM's TPOT "inter token latency":
           // (latency - TTFT) / (output tokens - 1), one value per request.
           {"inter_token_latency", "tpot",
            "per request (latency - TTFT) / (output tokens - 1) (the tool's "
            "inter_token_latency)",
            false},
           {"request_latency", "e2e_latency", "per-request latency", false},
       }) {
    if (absl::Status st =
            AddLatencySummary(&run, doc, key, base, t, meaning, required);
        !st.ok()) {
      return st;
    }
  }
  return run;
}

absl::StatusOr<std::vector<Run>> ReadSingleExport(
    const std::vector<json>& docs, const std::string& tool,
    const std::string& load_prefix, const std::string& fallback_prefix) {
  if (docs.size() != 1) {
    return FieldError(absl::StrCat(docs.size(), " documents"), "(document)",
                      absl::StrCat("one JSON object (", tool, " export)"),
                      nullptr);
  }
  absl::StatusOr<Run> run =
      ReadProfileExport(docs[0], tool, load_prefix, fallback_prefix);
  if (!run.ok()) return run.status();
  return std::vector<Run>{*std::move(run)};
}

// --- GuideLLM ----------------------------------------------------------------
// {"benchmarks": [{"config": {"strategy": {...}}, "metrics": {NAME:
// {"successful": {"mean", "median", "percentiles": {"p50", ...}}}}}]}.

absl::Status AddGuidellmSummary(Run* run, const json& bench,
                                const std::string& name,
                                const std::string& base,
                                const std::string& meaning, double scale,
                                bool required) {
  const std::string prefix = absl::StrCat("metrics.", name, ".successful");
  const std::string mean_field = absl::StrCat(prefix, ".mean");
  std::optional<double> mean = Number(At(bench, mean_field));
  if (required && !(mean && *mean > 0)) {
    return FieldError(run->label, mean_field, "a number > 0",
                      At(bench, mean_field));
  }
  AddIfMeasured(run, At(bench, mean_field), MetricName(base, "", "ms"), "ms",
                mean_field, absl::StrCat("GuideLLM mean of ", meaning), scale);
  const json* pct = At(bench, absl::StrCat(prefix, ".percentiles"));
  if (pct == nullptr || !pct->is_object()) return absl::OkStatus();
  for (auto it = pct->begin(); it != pct->end(); ++it) {
    // GuideLLM writes p001 / p01 / p05 / ... / p999 (0.1 to 99.9): the
    // tail percentiles a serving SLO states.
    const std::string& k = it.key();
    if (k != "p50" && k != "p90" && k != "p95" && k != "p99") continue;
    AddIfMeasured(run, &it.value(), MetricName(base, it.key(), "ms"), "ms",
                  absl::StrCat(prefix, ".percentiles.", it.key()),
                  absl::StrCat("GuideLLM ", it.key(), " of ", meaning), scale);
  }
  return absl::OkStatus();
}

absl::StatusOr<Run> ReadGuidellmBenchmark(const json& bench,
                                          std::string label) {
  Run run;
  run.label = std::move(label);
  const std::string& l = run.label;
  if (!bench.is_object()) {
    return FieldError(l, "(benchmark)", "a JSON object", &bench);
  }
  const json* type = At(bench, "config.strategy.type_");
  const std::string kind =
      type != nullptr && type->is_string() ? type->get<std::string>() : "";
  if (kind == "synchronous") {
    run.concurrency = "1";
    run.load_note = "strategy synchronous: one request at a time";
  } else if (kind == "concurrent") {
    const json* streams = At(bench, "config.strategy.streams");
    std::optional<double> n = Number(streams);
    if (!(n && *n >= 1 && *n == std::floor(*n))) {
      return FieldError(l, "config.strategy.streams", "an integer >= 1",
                        streams);
    }
    run.concurrency = absl::StrCat(static_cast<int64_t>(*n));
    run.load_note = absl::StrCat("strategy concurrent, streams ", *n);
  } else if (kind == "throughput") {
    run.concurrency = "max";
    run.load_note = "strategy throughput: every request offered at once";
  } else if (kind == "constant" || kind == "poisson" || kind == "async") {
    const json* rate = At(bench, "config.strategy.rate");
    std::optional<double> r = Number(rate);
    if (!(r && *r > 0)) {
      return FieldError(l, "config.strategy.rate", "a rate > 0", rate);
    }
    run.concurrency = RateText(*r);
    run.load_note = absl::StrCat(
        "strategy ", kind, ", rate ", *r, "/s",
        kind == "constant" ? " (evenly spaced arrivals, not Poisson)" : "");
  } else {
    return FieldError(l, "config.strategy.type_",
                      "synchronous, concurrent, throughput, constant, "
                      "poisson or async",
                      type);
  }
  absl::StatusOr<double> prompt =
      Positive(bench, l, "metrics.prompt_token_count.successful.mean");
  if (!prompt.ok()) return prompt.status();
  absl::StatusOr<double> output =
      Positive(bench, l, "metrics.output_token_count.successful.mean");
  if (!output.ok()) return output.status();
  run.mean_prompt_tokens = *prompt;
  run.mean_output_tokens = *output;
  run.lengths_note = absl::StrFormat(
      "prompt_len = prompt_token_count mean %g, gen_len = "
      "output_token_count mean %g (successful requests, rounded)",
      *prompt, *output);
  absl::StatusOr<double> throughput =
      Positive(bench, l, "metrics.output_tokens_per_second.successful.mean");
  if (!throughput.ok()) return throughput.status();
  run.stats.push_back({"throughput_tok_s", *throughput, "tok/s",
                       "metrics.output_tokens_per_second.successful.mean",
                       "GuideLLM output tokens per second of the run"});
  if (absl::Status st =
          AddGuidellmSummary(&run, bench, "time_to_first_token_ms", "ttft",
                             "time to first token", 1, false);
      !st.ok()) {
    return st;
  }
  // GuideLLM's inter_token_latency_ms is vLLM's TPOT ((latency - TTFT) /
  // (output - 1)); its time_per_output_token_ms divides the whole latency,
  // TTFT included, by the output tokens: no schema metric, not imported.
  if (absl::Status st = AddGuidellmSummary(
          &run, bench, "inter_token_latency_ms", "tpot",
          "per request (latency - TTFT) / (output tokens - 1) (GuideLLM's "
          "inter_token_latency_ms)",
          1, false);
      !st.ok()) {
    return st;
  }
  // request_latency is in seconds.
  if (absl::Status st =
          AddGuidellmSummary(&run, bench, "request_latency", "e2e_latency",
                             "per-request latency (s x 1000)", 1e3, false);
      !st.ok()) {
    return st;
  }
  return run;
}

}  // namespace

absl::StatusOr<std::vector<Run>> ReadVllmBench(const std::vector<json>& docs) {
  return ReadFlat(docs, {"vLLM bench serve", "e2el", "vllm"});
}

absl::StatusOr<std::vector<Run>> ReadSglangBench(
    const std::vector<json>& docs) {
  return ReadFlat(docs, {"SGLang bench_serving", "e2e_latency", "sglang"});
}

absl::StatusOr<std::vector<Run>> ReadGenaiPerf(const std::vector<json>& docs) {
  // genai-perf 0.0.13+ nests the load under perf_analyzer.stimulus; older
  // exports keep the flat command line.
  return ReadSingleExport(docs, "genai-perf",
                          "input_config.perf_analyzer.stimulus",
                          "input_config");
}

absl::StatusOr<std::vector<Run>> ReadAiperf(const std::vector<json>& docs) {
  return ReadSingleExport(docs, "AIPerf", "input_config.loadgen",
                          "input_config.loadgen");
}

absl::StatusOr<std::vector<Run>> ReadGuidellm(const std::vector<json>& docs) {
  if (docs.size() != 1) {
    return FieldError(absl::StrCat(docs.size(), " documents"), "benchmarks",
                      "one JSON object (GuideLLM benchmarks.json)", nullptr);
  }
  const json* benches = At(docs[0], "benchmarks");
  if (benches == nullptr || !benches->is_array() || benches->empty()) {
    return FieldError("file", "benchmarks", "a non-empty array", benches);
  }
  std::vector<Run> runs;
  for (size_t i = 0; i < benches->size(); ++i) {
    absl::StatusOr<Run> run = ReadGuidellmBenchmark(
        (*benches)[i], absl::StrCat("benchmarks[", i, "]"));
    if (!run.ok()) {
      // The field path from the file's root.
      std::optional<std::string> field = engine::FieldPathOf(run.status());
      return engine::WithFieldPath(
          run.status(),
          absl::StrCat("benchmarks[", i, "].", field.value_or("")));
    }
    runs.push_back(*std::move(run));
  }
  return runs;
}

}  // namespace ridgeline::calibration::benchmark
