// Fuzz target: the request-trace readers (serving/trace.h) as
// `ridgeline simulate --trace FILE --trace-format F` runs them. The first
// byte picks the format, the rest is the file. A trace read is checked:
// arrivals in order and >= 0, and the ideal prefix reuse within the
// prompt tokens.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "ridgeline/serving/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace serving = ridgeline::serving;
  if (size == 0) return 0;
  const serving::TraceFormat format =
      data[0] % 3 == 0   ? serving::TraceFormat::kMooncake
      : data[0] % 3 == 1 ? serving::TraceFormat::kAzure
                         : serving::TraceFormat::kTimes;
  std::istringstream in(std::string(reinterpret_cast<const char*>(data) + 1,
                                    size - 1));
  auto trace = serving::ReadTrace(in, format, "fuzz", 1000);
  if (!trace.ok()) return 0;
  double last = 0;
  for (const serving::TraceRequest& r : *trace) {
    if (!(r.arrival_seconds >= last)) {
      std::fprintf(stderr, "fuzz: arrivals out of order or negative\n");
      std::abort();
    }
    last = r.arrival_seconds;
  }
  const serving::IdealReuse reuse = serving::IdealPrefixReuse(*trace);
  if (reuse.hit_tokens < 0 || reuse.hit_tokens > reuse.prompt_tokens) {
    std::fprintf(stderr, "fuzz: ideal reuse outside the prompt tokens\n");
    std::abort();
  }
  return 0;
}
