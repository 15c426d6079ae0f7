#include "serving_flags.h"

#include <fstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "decode_flags.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/serving/simulate.h"
#include "ridgeline/serving/trace.h"
#include "scenario.h"

namespace ridgeline::cli {

std::optional<v1::TokenLengths> ParseLengths(const std::string& text) {
  v1::TokenLengths out;
  if (text.find(':') != std::string::npos) {
    for (absl::string_view item : absl::StrSplit(text, ',')) {
      std::vector<std::string> vw = absl::StrSplit(item, ':');
      int64_t v;
      double w;
      if (vw.size() != 2 || !absl::SimpleAtoi(vw[0], &v) ||
          !absl::SimpleAtod(vw[1], &w)) {
        return std::nullopt;
      }
      out.mutable_histogram()->add_values(v);
      out.mutable_histogram()->add_weights(w);
    }
    return out;
  }
  if (size_t dots = text.find(".."); dots != std::string::npos) {
    int64_t lo, hi;
    if (!absl::SimpleAtoi(text.substr(0, dots), &lo) ||
        !absl::SimpleAtoi(text.substr(dots + 2), &hi)) {
      return std::nullopt;
    }
    out.mutable_uniform()->set_min(lo);
    out.mutable_uniform()->set_max(hi);
    return out;
  }
  int64_t v;
  if (!absl::SimpleAtoi(text, &v)) return std::nullopt;
  out.set_fixed(v);
  return out;
}

std::optional<v1::Formats> ParseFormatSet(const std::string& text) {
  std::vector<std::string> parts = absl::StrSplit(text, '/');
  if (parts.size() > 3 || parts[0].empty()) return std::nullopt;
  v1::Formats f;
  f.set_weights(parts[0]);
  f.set_activations(parts.size() > 1 ? parts[1] : parts[0]);
  f.set_kv_cache(parts.size() > 2 ? parts[2] : f.activations());
  return f;
}

std::vector<FlagSpec> ModelFlags(const FlagSpec& hardware) {
  return {{"model", "ID", "catalog model id (ridgeline models)"},
          {"model-config", "FILE.json",
           "a Hugging Face config.json instead of --model"},
          hardware};
}

const std::vector<FlagSpec>& LengthFlags() {
  static const std::vector<FlagSpec> kFlags = {
      {"prompt", "N|MIN..MAX|V:W,...",
       "prompt tokens: fixed, uniform range or histogram (value:weight)"},
      {"gen", "N|MIN..MAX|V:W,...", "generated tokens, same forms"},
      {"shared-prefix", "N",
       "every prompt starts with the same N tokens (a system prompt the "
       "prefix cache shares; default 0)"},
      {"turns", "N",
       "multi-turn sessions of N turns (default 1): each turn's prompt is "
       "the conversation so far plus --prompt new tokens; --rate starts "
       "sessions"},
      {"think-time", "S",
       "seconds between a turn's end and the next turn (default 0)"},
  };
  return kFlags;
}

absl::StatusOr<ReuseFlags> ParseReuse(const ParsedFlags& flags) {
  ReuseFlags r;
  ASSIGN_OR_RETURN(r.shared_prefix,
                   flags.GetInt("shared-prefix", 0, 10'000'000));
  ASSIGN_OR_RETURN(r.turns, flags.GetInt("turns", 1, serving::kMaxTurns));
  ASSIGN_OR_RETURN(const std::optional<double> think,
                   flags.GetDouble("think-time"));
  if (think && !r.turns) {
    return absl::InvalidArgumentError("--think-time goes with --turns");
  }
  r.think_seconds = think.value_or(0);
  return r;
}

std::vector<FlagSpec> TraceFlags(const std::string& trace_help) {
  return {
      {"trace", "FILE", trace_help},
      {"trace-format", "mooncake|azure|times",
       "times (default): arrival seconds, one per line (or comma / space "
       "separated), '#' starts a comment; mooncake: JSON Lines with "
       "timestamp (ms), input_length, output_length, hash_ids (512-token "
       "prompt blocks, shared by prefix caching); azure: the Azure LLM "
       "inference CSV (TIMESTAMP, ContextTokens, GeneratedTokens). "
       "mooncake and azure give each request's lengths: no --prompt/--gen"},
  };
}

namespace {

// A trace file as the request's trace (serving/trace.h reads it); errors
// name the flag, the file, the line and the field.
absl::StatusOr<v1::ArrivalTrace> ReadTraceFile(const std::string& path,
                                               serving::TraceFormat format) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("--trace: cannot read '", path, "'"));
  }
  absl::StatusOr<std::vector<serving::TraceRequest>> trace =
      serving::ReadTrace(in, format, absl::StrCat("--trace: ", path),
                         static_cast<size_t>(serving::kMaxRequests));
  if (!trace.ok()) return trace.status();
  v1::ArrivalTrace out;
  for (const serving::TraceRequest& r : *trace) {
    out.add_arrival_seconds(r.arrival_seconds);
    if (r.prompt_tokens > 0) {
      out.add_prompt_tokens(r.prompt_tokens);
      out.add_generated_tokens(r.generated_tokens);
    }
  }
  if (format == serving::TraceFormat::kMooncake) {
    out.set_block_tokens(serving::kMooncakeBlockTokens);
    for (const serving::TraceRequest& r : *trace) {
      out.add_prompt_blocks()->mutable_hash_ids()->Add(r.block_hashes.begin(),
                                                       r.block_hashes.end());
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<TraceFile> ReadTraceFlags(const ParsedFlags& flags) {
  const std::optional<std::string> name = flags.Get("trace-format");
  absl::StatusOr<serving::TraceFormat> format =
      serving::ParseTraceFormat(name.value_or("times"));
  if (!format.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--trace-format: must be mooncake, azure or times; got '", *name, "'"));
  }
  if (name && !flags.Has("trace")) {
    return absl::InvalidArgumentError("--trace-format goes with --trace");
  }
  TraceFile t;
  // Mooncake and Azure traces give every request's lengths.
  t.lengths = flags.Has("trace") && *format != serving::TraceFormat::kTimes;
  for (const char* flag : {"prompt", "gen"}) {
    if (t.lengths && flags.Has(flag)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, ": the ", *name,
                       " trace gives each request's lengths; drop --", flag));
    }
    if (!t.lengths && !flags.Has(flag)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, " is required"));
    }
  }
  if (auto path = flags.Get("trace")) {
    ASSIGN_OR_RETURN(t.trace, ReadTraceFile(*path, *format));
  }
  return t;
}

const std::vector<FlagSpec>& CalibrationFlags() {
  static const std::vector<FlagSpec> kFlags = {
      {"framework", "NAME",
       "calibration framework (vllm, tensorrt-llm, ...); default: pure "
       "roofline"},
      {"profile", "NAME", "calibration profile by name"},
      {"pure-roofline", "", "ignore calibration: the speed upper bound"},
  };
  static const std::vector<FlagSpec>* const kAll = [] {
    auto* all = new std::vector<FlagSpec>(kFlags);
    all->insert(all->end(), DecodeVariantFlags().begin(),
                DecodeVariantFlags().end());
    return all;
  }();
  return *kAll;
}

const std::vector<FlagSpec>& ServingOptionFlags() {
  static const std::vector<FlagSpec> kFlags = {
      {"memory-fraction", "X", "share of device memory the runtime uses (0.9)"},
      {"max-num-seqs", "N", "sequences per step (256)"},
      {"max-num-batched-tokens", "N", "tokens per step (8192)"},
      {"prefix-caching", "on|off",
       "automatic prefix caching of full prompt blocks (on, as vLLM V1)"},
      {"kv-offload", "off|host|all",
       "where evicted cached blocks go: off (default), host (the part's "
       "host-link tiers) or all (flash too); reloaded when cheaper than "
       "recomputing"},
      {"preemption", "off|recompute|swap",
       "when the KV cache runs out: off (default: each request reserves its "
       "whole life at admission), recompute (blocks as tokens come; the "
       "last admitted is preempted and recomputed, as vLLM V1) or swap (its "
       "KV moved to the first offload tier and back, as vLLM V0; needs "
       "--kv-offload host|all)"},
  };
  return kFlags;
}

std::vector<FlagSpec> ClientFlags(const std::string& format_help) {
  return {
      {"server", "HOST:PORT", "send the request to a ridgeline-server"},
      {"plugin-dir", "DIR",
       "in-process: hardware plugin folder, instead of the installed plugins"},
      {"extra-plugin-dir", "DIR",
       "in-process: also load the plugins of this folder (repeatable, or a "
       "comma list)"},
      {"profile-dir", "DIR", "in-process: calibration profile folder"},
      {"format", "table|json|csv", format_help},
      {"timeout", "SECONDS", "deadline with --server (default 600)"},
      {"help", "", "show this help"},
  };
}

std::vector<FlagSpec> JoinFlags(
    std::initializer_list<std::vector<FlagSpec>> parts) {
  std::vector<FlagSpec> out;
  for (const std::vector<FlagSpec>& p : parts) {
    out.insert(out.end(), p.begin(), p.end());
  }
  return out;
}

std::optional<std::string> FillModel(const ParsedFlags& flags,
                                     v1::ModelSpec* model) {
  if (flags.Has("model") == flags.Has("model-config")) {
    return "give exactly one of --model ID or --model-config FILE.json";
  }
  if (auto id = flags.Get("model")) model->set_catalog_id(*id);
  if (auto path = flags.Get("model-config")) {
    if (Outcome o = ReadModelConfig(*path, model)) return o->message;
  }
  return std::nullopt;
}

std::optional<std::string> FillLengths(const ParsedFlags& flags,
                                       v1::TokenLengths* prompt,
                                       v1::TokenLengths* generated) {
  for (const char* name : {"prompt", "gen"}) {
    const std::string text = flags.Get(name).value_or("");
    std::optional<v1::TokenLengths> l = ParseLengths(text);
    if (!l) {
      return absl::StrCat(
          "--", name, ": expected N, MIN..MAX or V:W,V:W; got '", text, "'");
    }
    *(std::string_view(name) == "prompt" ? prompt : generated) = *l;
  }
  return std::nullopt;
}

std::optional<std::string> FillCalibration(const ParsedFlags& flags,
                                           v1::Calibration* calibration,
                                           v1::AnalysisOptions* options) {
  if (flags.Has("framework") && flags.Has("profile")) {
    return "--framework and --profile are exclusive";
  }
  if (auto fw = flags.Get("framework")) calibration->set_framework(*fw);
  if (auto p = flags.Get("profile")) calibration->set_profile(*p);
  if (flags.Has("pure-roofline")) options->set_pure_roofline(true);
  return FillDecodeVariants(flags, options);
}

std::optional<std::string> FillServingOptions(const ParsedFlags& flags,
                                              v1::ServingOptions* serving) {
  absl::StatusOr<std::optional<double>> mf = flags.GetDouble("memory-fraction");
  if (!mf.ok()) return std::string(mf.status().message());
  if (*mf) serving->set_memory_fraction(**mf);
  // Syntax and the int64 range here; the service checks the real ranges
  // and names the field.
  struct IntFlag {
    const char* flag;
    void (v1::ServingOptions::*set)(int64_t);
  };
  for (const IntFlag& f :
       {IntFlag{"max-num-seqs", &v1::ServingOptions::set_max_num_seqs},
        IntFlag{"max-num-batched-tokens",
                &v1::ServingOptions::set_max_num_batched_tokens},
        IntFlag{"block-size", &v1::ServingOptions::set_block_size}}) {
    absl::StatusOr<std::optional<int64_t>> v =
        flags.GetInt(f.flag, INT64_MIN, INT64_MAX);
    if (!v.ok()) return std::string(v.status().message());
    if (*v) (serving->*f.set)(**v);
  }
  if (auto pc = flags.Get("prefix-caching")) {
    if (*pc != "on" && *pc != "off") {
      return absl::StrCat("--prefix-caching: must be on or off; got '", *pc,
                          "'");
    }
    serving->set_prefix_caching(*pc == "on");
  }
  if (auto o = flags.Get("kv-offload")) serving->set_kv_offload(*o);
  if (auto p = flags.Get("preemption")) serving->set_preemption(*p);
  return std::nullopt;
}

std::optional<std::string> FillRunFlags(
    const ParsedFlags& flags, const std::function<void(int64_t)>& requests,
    const std::function<void(uint64_t)>& seed) {
  absl::StatusOr<std::optional<int64_t>> r =
      flags.GetInt("requests", INT64_MIN, INT64_MAX);
  if (!r.ok()) return std::string(r.status().message());
  if (*r) requests(**r);
  absl::StatusOr<std::optional<int64_t>> s = flags.GetInt("seed", 0, INT64_MAX);
  if (!s.ok()) return std::string(s.status().message());
  if (*s) seed(static_cast<uint64_t>(**s));
  return std::nullopt;
}

std::optional<std::string> OutputFormat(const ParsedFlags& flags,
                                        std::string* error) {
  const std::string format = flags.Get("format").value_or("table");
  if (format != "table" && format != "csv" && format != "json") {
    *error = absl::StrCat("--format: expected table, json or csv, got '",
                          format, "'");
    return std::nullopt;
  }
  return format;
}

}  // namespace ridgeline::cli
