#include "ridgeline/serving/trace.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "nlohmann/json.hpp"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/status_macros.h"

namespace ridgeline::serving {
namespace {

// A line longer than this is not a trace line (a Mooncake line of a
// 1M-token prompt is ~12 KB of ids).
constexpr size_t kMaxLineBytes = 1 << 20;

absl::Status Bad(absl::string_view name, int line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(name, ":", line, ": ", what));
}

// A line longer than kMaxLineBytes is refused, naming it.
absl::Status CheckLength(absl::string_view name, int line_number,
                         const std::string& line) {
  if (line.size() <= kMaxLineBytes) return absl::OkStatus();
  return Bad(name, line_number,
             absl::StrCat("line of ", line.size(), " bytes (at most ",
                          kMaxLineBytes, ")"));
}

absl::Status TooMany(absl::string_view name, size_t max) {
  return absl::ResourceExhaustedError(absl::StrCat(
      name, ": more than ", max, " requests; a trace is read whole before it is "
      "simulated (split it, or raise the limit)"));
}

// A JSON integer in [lo, hi] (a float with no fraction counts).
bool GetInt(const nlohmann::json& v, int64_t lo, int64_t hi, int64_t* out) {
  if (v.is_number_integer() || v.is_number_unsigned()) {
    if (v.is_number_unsigned() &&
        v.get<uint64_t>() > static_cast<uint64_t>(hi)) {
      return false;
    }
    const int64_t x = v.get<int64_t>();
    if (x < lo || x > hi) return false;
    *out = x;
    return true;
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || d < lo || d > hi) {
      return false;
    }
    *out = static_cast<int64_t>(d);
    return true;
  }
  return false;
}

constexpr int64_t kMaxTokens = int64_t{1} << 31;

absl::StatusOr<std::vector<TraceRequest>> ReadMooncake(std::istream& in,
                                                       absl::string_view name,
                                                       size_t max) {
  std::vector<TraceRequest> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    RETURN_IF_ERROR(CheckLength(name, n, line));
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      return Bad(name, n, "not a JSON object (Mooncake traces are JSON Lines)");
    }
    if (out.size() == max) return TooMany(name, max);
    TraceRequest r;
    const auto ts = j.find("timestamp");
    if (ts == j.end() || !ts->is_number() || !std::isfinite(ts->get<double>()) ||
        ts->get<double>() < 0) {
      return Bad(name, n, "timestamp: want milliseconds >= 0");
    }
    r.arrival_seconds = ts->get<double>() / 1e3;
    const auto in_len = j.find("input_length");
    if (in_len == j.end() ||
        !GetInt(*in_len, 1, kMaxTokens, &r.prompt_tokens)) {
      return Bad(name, n, absl::StrCat("input_length: want an integer in 1..",
                                       kMaxTokens));
    }
    const auto out_len = j.find("output_length");
    if (out_len == j.end() ||
        !GetInt(*out_len, 1, kMaxTokens, &r.generated_tokens)) {
      return Bad(name, n, absl::StrCat("output_length: want an integer in 1..",
                                       kMaxTokens));
    }
    const auto ids = j.find("hash_ids");
    if (ids != j.end()) {
      if (!ids->is_array()) return Bad(name, n, "hash_ids: want an array");
      const int64_t blocks =
          (r.prompt_tokens + kMooncakeBlockTokens - 1) / kMooncakeBlockTokens;
      if (static_cast<int64_t>(ids->size()) != blocks) {
        return Bad(name, n,
                   absl::StrCat("hash_ids: ", ids->size(), " ids for ",
                                r.prompt_tokens, " input tokens; want ", blocks,
                                " (one per ", kMooncakeBlockTokens,
                                "-token block)"));
      }
      r.block_hashes.reserve(ids->size());
      for (const nlohmann::json& id : *ids) {
        int64_t v = 0;
        if (!GetInt(id, 0, std::numeric_limits<int64_t>::max(), &v)) {
          return Bad(name, n, "hash_ids: want integers >= 0");
        }
        r.block_hashes.push_back(static_cast<uint64_t>(v));
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
// days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// "YYYY-MM-DD HH:MM:SS[.fraction]" to seconds since the epoch.
bool ParseTimestamp(absl::string_view s, double* out) {
  std::vector<absl::string_view> date_time =
      absl::StrSplit(s, absl::ByAnyChar(" T"), absl::SkipEmpty());
  if (date_time.size() != 2) return false;
  std::vector<absl::string_view> ymd = absl::StrSplit(date_time[0], '-');
  std::vector<absl::string_view> hms = absl::StrSplit(date_time[1], ':');
  int64_t y, mo, d, h, mi;
  double sec;
  if (ymd.size() != 3 || hms.size() != 3 || !absl::SimpleAtoi(ymd[0], &y) ||
      !absl::SimpleAtoi(ymd[1], &mo) || !absl::SimpleAtoi(ymd[2], &d) ||
      !absl::SimpleAtoi(hms[0], &h) || !absl::SimpleAtoi(hms[1], &mi) ||
      !absl::SimpleAtod(hms[2], &sec)) {
    return false;
  }
  if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 ||
      h > 23 || mi < 0 || mi > 59 || !(sec >= 0 && sec < 61)) {
    return false;
  }
  *out = static_cast<double>(DaysFromCivil(y, mo, d)) * 86400 +
         static_cast<double>(h * 3600 + mi * 60) + sec;
  return true;
}

absl::StatusOr<std::vector<TraceRequest>> ReadAzure(std::istream& in,
                                                    absl::string_view name,
                                                    size_t max) {
  std::string line;
  int n = 1;
  if (!std::getline(in, line)) {
    return Bad(name, 1, "empty; want the header TIMESTAMP,ContextTokens,"
                        "GeneratedTokens");
  }
  std::map<std::string, size_t, std::less<>> column;
  const std::vector<std::string> head =
      absl::StrSplit(absl::StripAsciiWhitespace(line), ',');
  for (size_t i = 0; i < head.size(); ++i) {
    column[std::string(absl::StripAsciiWhitespace(head[i]))] = i;
  }
  for (const char* want : {"TIMESTAMP", "ContextTokens", "GeneratedTokens"}) {
    if (column.count(want) == 0) {
      return Bad(name, 1, absl::StrCat("header has no ", want,
                                       " column (the Azure LLM inference "
                                       "trace's are TIMESTAMP,ContextTokens,"
                                       "GeneratedTokens)"));
    }
  }
  const size_t t_at = column["TIMESTAMP"], p_at = column["ContextTokens"],
               g_at = column["GeneratedTokens"];
  std::vector<TraceRequest> out;
  while (std::getline(in, line)) {
    ++n;
    RETURN_IF_ERROR(CheckLength(name, n, line));
    const absl::string_view row = absl::StripAsciiWhitespace(line);
    if (row.empty()) continue;
    const std::vector<absl::string_view> cells = absl::StrSplit(row, ',');
    if (cells.size() != head.size()) {
      return Bad(name, n, absl::StrCat(cells.size(), " cells, the header has ",
                                       head.size()));
    }
    if (out.size() == max) return TooMany(name, max);
    TraceRequest r;
    if (!ParseTimestamp(absl::StripAsciiWhitespace(cells[t_at]),
                        &r.arrival_seconds)) {
      return Bad(name, n, absl::StrCat("TIMESTAMP: want YYYY-MM-DD "
                                       "HH:MM:SS[.fraction], got '",
                                       cells[t_at], "'"));
    }
    if (!absl::SimpleAtoi(cells[p_at], &r.prompt_tokens) ||
        r.prompt_tokens < 1 || r.prompt_tokens > kMaxTokens) {
      return Bad(name, n, absl::StrCat("ContextTokens: want an integer in 1..",
                                       kMaxTokens, ", got '", cells[p_at],
                                       "'"));
    }
    if (!absl::SimpleAtoi(cells[g_at], &r.generated_tokens) ||
        r.generated_tokens < 1 || r.generated_tokens > kMaxTokens) {
      return Bad(name, n,
                 absl::StrCat("GeneratedTokens: want an integer in 1..",
                              kMaxTokens, ", got '", cells[g_at], "'"));
    }
    out.push_back(std::move(r));
  }
  if (!out.empty()) {
    double first = out.front().arrival_seconds;
    for (const TraceRequest& r : out) first = std::min(first, r.arrival_seconds);
    for (TraceRequest& r : out) r.arrival_seconds -= first;
  }
  return out;
}

absl::StatusOr<std::vector<TraceRequest>> ReadTimes(std::istream& in,
                                                    absl::string_view name,
                                                    size_t max) {
  std::vector<TraceRequest> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    RETURN_IF_ERROR(CheckLength(name, n, line));
    line = line.substr(0, line.find('#'));
    for (absl::string_view item :
         absl::StrSplit(line, absl::ByAnyChar(", \t\r"), absl::SkipEmpty())) {
      double t;
      if (!absl::SimpleAtod(item, &t) || !std::isfinite(t) || t < 0) {
        return Bad(name, n, absl::StrCat("expected a number of seconds >= 0, "
                                         "got '", item, "'"));
      }
      if (out.size() == max) return TooMany(name, max);
      TraceRequest r;
      r.arrival_seconds = t;
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<TraceFormat> ParseTraceFormat(std::string_view std_name) {
  const absl::string_view name(std_name.data(), std_name.size());
  if (name == "mooncake") return TraceFormat::kMooncake;
  if (name == "azure") return TraceFormat::kAzure;
  if (name == "times") return TraceFormat::kTimes;
  return absl::InvalidArgumentError(absl::StrCat(
      "trace format: want mooncake, azure or times, got '", name, "'"));
}

absl::StatusOr<std::vector<TraceRequest>> ReadTrace(std::istream& in,
                                                    TraceFormat format,
                                                    std::string_view std_name,
                                                    size_t max_requests) {
  const absl::string_view name(std_name.data(), std_name.size());
  absl::StatusOr<std::vector<TraceRequest>> r;
  switch (format) {
    case TraceFormat::kMooncake:
      r = ReadMooncake(in, name, max_requests);
      break;
    case TraceFormat::kAzure:
      r = ReadAzure(in, name, max_requests);
      break;
    case TraceFormat::kTimes:
      r = ReadTimes(in, name, max_requests);
      break;
  }
  if (!r.ok()) return r.status();
  if (r->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": holds no requests"));
  }
  // Arrival order (traces are, nearly always, already in it; ties keep
  // their file order).
  std::stable_sort(r->begin(), r->end(),
                   [](const TraceRequest& a, const TraceRequest& b) {
                     return a.arrival_seconds < b.arrival_seconds;
                   });
  return r;
}

Arrivals TraceArrivals(const std::vector<TraceRequest>& trace,
                       int64_t block_tokens) {
  Arrivals a;
  a.kind = Arrivals::Kind::kTrace;
  const bool lengths = !trace.empty() && trace.front().prompt_tokens > 0;
  bool hashes = false;
  for (const TraceRequest& r : trace) hashes |= !r.block_hashes.empty();
  if (hashes) a.content.unit_tokens = block_tokens;
  for (const TraceRequest& r : trace) {
    a.times.push_back(r.arrival_seconds);
    if (lengths) {
      a.prompt_tokens.push_back(r.prompt_tokens);
      a.generated_tokens.push_back(r.generated_tokens);
    }
    if (!hashes) continue;
    a.content.StartRequest();
    uint64_t prefix = 0;
    for (uint64_t id : r.block_hashes) {
      prefix = ChainHash(prefix, id);
      a.content.Append(prefix);
    }
  }
  return a;
}

IdealReuse IdealPrefixReuse(const std::vector<TraceRequest>& trace,
                            int64_t block_tokens) {
  IdealReuse reuse;
  for (const TraceRequest& r : trace) {
    reuse.prompt_tokens += std::max<int64_t>(r.prompt_tokens, 0);
  }
  for (int64_t hit : IdealHitTokens(TraceArrivals(trace, block_tokens))) {
    reuse.hit_tokens += hit;
  }
  return reuse;
}

std::vector<int64_t> IdealHitTokens(const Arrivals& requests) {
  const PromptContent& c = requests.content;
  const std::vector<int64_t>& prompts = requests.prompt_tokens;
  std::vector<int64_t> hits(requests.own_requests(), 0);
  if (c.empty() || prompts.empty()) return hits;
  // A chain hash names a unit and everything before it (ChainHash).
  absl::flat_hash_set<uint64_t> seen;
  const size_t n = std::min(c.requests(), prompts.size());
  for (size_t i = 0; i < n; ++i) {
    for (int64_t k = c.begin[i]; k < c.begin[i + 1]; ++k) {
      const int64_t tokens = std::min<int64_t>(
          c.unit_tokens, prompts[i] - (k - c.begin[i]) * c.unit_tokens);
      if (tokens <= 0) break;
      if (!seen.insert(c.chains[k]).second) hits[i] += tokens;
    }
  }
  return hits;
}

absl::StatusOr<double> TraceMeanRate(const std::vector<double>& times) {
  const double span = times.empty() ? 0 : times.back() - times.front();
  if (times.size() < 2 || !(span > 0)) {
    return engine::WithFieldPath(
        absl::InvalidArgumentError(absl::StrCat(
            "traffic.rate: must be set (in [0.000001, 1000000] requests/s): "
            "the trace's ",
            times.size(), " arrivals span 0 s, so it has no rate of its own")),
        "traffic.rate");
  }
  return static_cast<double>(times.size() - 1) / span;
}

}  // namespace ridgeline::serving
