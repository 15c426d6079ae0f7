// Mixed mode (the soak, scripts/soak.sh): --concurrency threads issuing a
// weighted mix of valid, invalid and cancelled Analyze calls and streamed
// Sweeps; each kind's outcomes counted by code.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "loadgen_common.h"

namespace ridgeline::loadgen {

constexpr int kKinds = 4;  // valid, invalid, cancelled, sweep

// Mixed mode: what each kind of call ended with, and the latencies of those
// that succeeded (valid Analyze and Sweep) or were refused as they should
// be (invalid).
struct KindResults {
  std::map<int, int64_t> codes;  // grpc::StatusCode -> calls
  std::vector<double> latencies;
};

// Runs the mix for --duration / --requests into `out`.
void MixedLoad(const Options& o, KindResults (&out)[kKinds]);

// Prints the run; returns the count of unexpected outcomes.
int64_t ReportMixed(KindResults (&r)[kKinds], double wall);

}  // namespace ridgeline::loadgen
