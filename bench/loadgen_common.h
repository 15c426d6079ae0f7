// What the load generator's modes share: the options, the channels and the
// Analyze request they send, and percentiles of sorted latencies.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "ridgeline/v1/ridgeline.pb.h"

namespace ridgeline::loadgen {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string target = "127.0.0.1:50051";
  std::string metrics;  // "host:port" of the server's metrics; "" = none
  std::string http_target;  // "host:port" of the HTTP frontend
  std::vector<std::string> modes = {"analyze"};
  std::string mode = "analyze";  // the one running
  int64_t requests = 200000;
  double duration_seconds = 10;
  int concurrency = 32;
  int channels = 4;  // separate TCP connections, spread over server threads
  std::string model = "llama-3-8b";
  std::string hardware = "nvidia-h100-sxm-80gb";
  int64_t batch = 1, prompt = 512, gen = 128;
  bool suggestions = false;
  v1::AnalysisView view = v1::ANALYSIS_VIEW_FULL;
  std::vector<int> cpus;  // empty: no pinning
  std::vector<int64_t> sweep_batches = {1, 2, 4, 8, 16, 32, 64, 128};
  int64_t steps_per_message = 16;
  int64_t step_seqs = 64;
  bool step_columns = false;  // Step.context_tokens / new_tokens columns
  // mixed mode: weights of valid, invalid, cancelled Analyze and Sweep.
  std::vector<int64_t> mix = {10, 3, 3, 4};
};

// --channels separate connections to --target.
std::vector<std::shared_ptr<grpc::Channel>> MakeChannels(const Options& o);

// The Analyze request of the scenario flags.
v1::AnalyzeRequest MakeAnalyze(const Options& o);

// The p-quantile (0..1) of ascending `sorted`; 0 when empty.
double Percentile(std::vector<double>& sorted, double p);

}  // namespace ridgeline::loadgen
