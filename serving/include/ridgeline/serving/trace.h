// Request traces: when requests arrive, how long their prompts and outputs
// are, and (Mooncake) which prompt blocks they share. Three formats:
// - mooncake: JSON Lines as published by kvcache-ai/Mooncake
//   (FAST25-release/traces): {"timestamp": ms since the first request,
//   "input_length": tokens, "output_length": tokens, "hash_ids": [ids of
//   the prompt's 512-token blocks; equal ids are equal content, so a
//   shared prefix is a shared leading run of ids]}.
// - azure: the Azure LLM inference trace CSV (Azure/AzurePublicDataset,
//   data/AzureLLMInferenceTrace_*.csv): header
//   TIMESTAMP,ContextTokens,GeneratedTokens, timestamps
//   "YYYY-MM-DD HH:MM:SS.fffffff" (UTC), made relative to the first row.
// - times: arrival seconds only, numbers separated by commas, blanks or
//   newlines, '#' starts a comment (lengths come from the request's token
//   distributions).
// A malformed line is refused with its line number and the field; nothing
// of a bad file is returned.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ridgeline/serving/simulate.h"

namespace ridgeline::serving {

enum class TraceFormat { kMooncake, kAzure, kTimes };

// "mooncake" | "azure" | "times"; else INVALID_ARGUMENT listing them.
absl::StatusOr<TraceFormat> ParseTraceFormat(std::string_view name);

// Mooncake's hash_ids each stand for this many prompt tokens (the last
// block of a prompt may be partial).
inline constexpr int64_t kMooncakeBlockTokens = 512;

struct TraceRequest {
  double arrival_seconds = 0;     // from the trace's first request
  int64_t prompt_tokens = -1;     // -1: the trace does not say (times)
  int64_t generated_tokens = -1;  // -1: the trace does not say (times)
  std::vector<uint64_t> block_hashes;  // mooncake only
};

// Reads a whole trace; `name` (the file) prefixes every error. At most
// `max_requests` requests (more is RESOURCE_EXHAUSTED naming the count):
// a trace is read whole before anything is simulated.
absl::StatusOr<std::vector<TraceRequest>> ReadTrace(std::istream& in,
                                                    TraceFormat format,
                                                    std::string_view name,
                                                    size_t max_requests);

// A trace as a simulation's arrivals: its times, its lengths when it gives
// them (mooncake, azure; all or none) and, with block hashes (mooncake),
// its prompts' content: units of `block_tokens`, each hash chained to the
// ones before it (ChainHash), so equal units mean equal prefixes.
Arrivals TraceArrivals(const std::vector<TraceRequest>& trace,
                       int64_t block_tokens = kMooncakeBlockTokens);

// The reuse an infinite prefix cache would get on a trace with block
// hashes: a prompt block is a hit when the same chain of blocks up to and
// including it (the same prefix) was seen in an earlier request. The
// share of prompt tokens in such blocks bounds any simulated hit rate.
struct IdealReuse {
  int64_t prompt_tokens = 0;
  int64_t hit_tokens = 0;  // in blocks whose prefix chain was seen before
  double hit_rate() const {
    return prompt_tokens > 0 ? static_cast<double>(hit_tokens) / prompt_tokens
                             : 0;
  }
};
IdealReuse IdealPrefixReuse(const std::vector<TraceRequest>& trace,
                            int64_t block_tokens = kMooncakeBlockTokens);
// The same per request of arrivals with their own lengths and content
// (TraceArrivals'): the prompt tokens in units whose prefix chain an
// earlier request had (0 for all without both).
std::vector<int64_t> IdealHitTokens(const Arrivals& requests);

// A trace's own mean request rate: (arrivals - 1) / (last - first time).
// INVALID_ARGUMENT naming traffic.rate when it has none (one arrival, or
// all at one time).
absl::StatusOr<double> TraceMeanRate(const std::vector<double>& times);

}  // namespace ridgeline::serving
