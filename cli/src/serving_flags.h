// What the serving commands (`plan`, `simulate`) share: the flags both take
// (specs and help, written once), and filling the request pieces both send
// (token lengths, calibration, serving options, output format) from them.
// Syntax is checked here; ranges by the service, which names the field.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "flags.h"
#include "ridgeline/v1/ridgeline.pb.h"

namespace ridgeline::cli {

// "N" (fixed), "MIN..MAX" (uniform) or "V:W,V:W" (histogram); nullopt on a
// syntax error (ranges are checked by the service, which names the field).
std::optional<v1::TokenLengths> ParseLengths(const std::string& text);

// "WEIGHTS[/ACTIVATIONS[/KV]]": one name sets all three, two set weights and
// activations (the KV cache follows the activations). nullopt for more
// than three parts.
std::optional<v1::Formats> ParseFormatSet(const std::string& text);

// Flag specs, in the order the help lists them.
// --model, --model-config (`hardware` is the command's own --hardware).
std::vector<FlagSpec> ModelFlags(const FlagSpec& hardware);
const std::vector<FlagSpec>& LengthFlags();       // --prompt, --gen
const std::vector<FlagSpec>& CalibrationFlags();  // --framework, --profile,
                                                  // --pure-roofline
// --memory-fraction, --max-num-seqs, --max-num-batched-tokens.
const std::vector<FlagSpec>& ServingOptionFlags();
// --server, --plugin-dir, --profile-dir, --format (help: `format_help`),
// --timeout, --help.
std::vector<FlagSpec> ClientFlags(const std::string& format_help);
std::vector<FlagSpec> JoinFlags(
    std::initializer_list<std::vector<FlagSpec>> parts);

// Each Fill* returns a usage message on a syntax error, nullopt when done.
// Exactly one of --model ID or --model-config FILE.json (an inline Hugging
// Face config.json, as analyze takes it).
std::optional<std::string> FillModel(const ParsedFlags& flags,
                                     v1::ModelSpec* model);
// --prompt / --gen (both required by the caller).
std::optional<std::string> FillLengths(const ParsedFlags& flags,
                                       v1::TokenLengths* prompt,
                                       v1::TokenLengths* generated);
// --framework | --profile into `calibration`, --pure-roofline into
// `options`.
std::optional<std::string> FillCalibration(const ParsedFlags& flags,
                                           v1::Calibration* calibration,
                                           v1::AnalysisOptions* options);
// --memory-fraction, --max-num-seqs, --max-num-batched-tokens and, when the
// command takes it, --block-size.
std::optional<std::string> FillServingOptions(const ParsedFlags& flags,
                                              v1::ServingOptions* serving);
// --shared-prefix, --turns and --think-time (LengthFlags) into a traffic
// message with shared_prefix_tokens and sessions (SimulateTraffic,
// PlanTraffic).
struct ReuseFlags {
  std::optional<int64_t> shared_prefix;
  std::optional<int64_t> turns;
  double think_seconds = 0;
};
absl::StatusOr<ReuseFlags> ParseReuse(const ParsedFlags& flags);
template <class TrafficProto>
void SetReuse(const ReuseFlags& reuse, TrafficProto* traffic) {
  if (reuse.shared_prefix) {
    traffic->set_shared_prefix_tokens(*reuse.shared_prefix);
  }
  if (reuse.turns) {
    traffic->mutable_sessions()->set_turns(*reuse.turns);
    traffic->mutable_sessions()->set_think_time_seconds(reuse.think_seconds);
  }
}
// --trace FILE and --trace-format (how the command uses the trace:
// `trace_help`).
std::vector<FlagSpec> TraceFlags(const std::string& trace_help);
struct TraceFile {
  std::optional<v1::ArrivalTrace> trace;  // with --trace
  // mooncake and azure: every request's lengths (no --prompt / --gen).
  bool lengths = false;
};
// Reads --trace in --trace-format (serving/trace.h; errors name the flag,
// the file, the line and the field) and checks --prompt / --gen: required
// unless the trace gives every request's lengths, refused when it does.
absl::StatusOr<TraceFile> ReadTraceFlags(const ParsedFlags& flags);
// --requests and --seed.
std::optional<std::string> FillRunFlags(
    const ParsedFlags& flags, const std::function<void(int64_t)>& requests,
    const std::function<void(uint64_t)>& seed);
// --format: "table" (default), "csv" or "json"; nullopt with `*error` set
// otherwise.
std::optional<std::string> OutputFormat(const ParsedFlags& flags,
                                        std::string* error);

}  // namespace ridgeline::cli
