// What issue 14's hardening and load tests share: a fixture that starts the
// real server and waits until it serves, the small Analyze they send, and
// the probes of "other clients" (health on a channel, metrics). Header-only;
// one fixture per test, not thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "grpc_std.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "ridgeline/v1/ridgeline.grpc.pb.h"
#include "server_process.h"

namespace ridgeline::testing {

inline constexpr auto kStartup = std::chrono::seconds(20);

inline std::chrono::system_clock::time_point In(std::chrono::milliseconds d) {
  return std::chrono::system_clock::now() + d;
}

// Llama-2-7B (32 layers) on `platform_id`: batch 1, 512 prompt and 128
// generated tokens.
inline v1::AnalyzeRequest Llama2(const std::string& platform_id) {
  v1::AnalyzeRequest req;
  req.mutable_model()->set_catalog_id("llama-2-7b");
  req.mutable_hardware()->set_platform_id(platform_id);
  req.mutable_workload()->set_batch(1);
  req.mutable_workload()->set_prompt_tokens(512);
  req.mutable_workload()->set_generated_tokens(128);
  return req;
}

// One series of the server's /metrics (0 when absent).
inline double Metric(const ServerProcess& server, const std::string& name,
                     const std::vector<std::string>& labels) {
  return MetricValue(HttpGet(server.metrics_port(), "/metrics"), name, labels)
      .value_or(0);
}

// Polls a metric until it reaches `want` (bounded: 20 s, Scaled()).
inline double WaitMetricAtLeast(const ServerProcess& server,
                                const std::string& name,
                                const std::vector<std::string>& labels,
                                double want) {
  double v = 0;
  const int polls = static_cast<int>(Scaled(std::chrono::seconds(20)) /
                                     std::chrono::milliseconds(50));
  for (int i = 0; i < polls; ++i) {
    v = Metric(server, name, labels);
    if (v >= want) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return v;
}

// grpc.health.v1 Check("") with `deadline`: OK only when SERVING.
inline grpc::Status HealthCheck(const std::shared_ptr<grpc::Channel>& channel,
                                std::chrono::milliseconds deadline) {
  auto stub = ::grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(In(deadline));
  ::grpc::health::v1::HealthCheckRequest req;
  ::grpc::health::v1::HealthCheckResponse resp;
  grpc::Status s = stub->Check(&ctx, req, &resp);
  if (s.ok() && resp.status() != ::grpc::health::v1::HealthCheckResponse::SERVING) {
    return grpc::Status(grpc::StatusCode::UNKNOWN, "not SERVING");
  }
  return s;
}

// Open file descriptors of process `pid`.
inline int OpenFds(pid_t pid) {
  int n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(
           "/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

// Starts the server (with `extra` flags) and a stub on one channel.
class ServingTest : public ::testing::Test {
 protected:
  void StartServing(const std::vector<std::string>& extra = {}) {
    server_ = std::make_unique<ServerProcess>(extra);
    ASSERT_TRUE(server_->ok()) << server_->error();
    channel_ = server_->Channel();
    stub_ = v1::RidgelineService::NewStub(channel_);
    ASSERT_TRUE(WaitServing(channel_, Scaled(kStartup)));
  }

  grpc::Status Analyze(const v1::AnalyzeRequest& req,
                       std::chrono::milliseconds deadline,
                       v1::AnalyzeResponse* resp = nullptr) {
    grpc::ClientContext ctx;
    ctx.set_deadline(In(deadline));
    v1::AnalyzeResponse local;
    return stub_->Analyze(&ctx, req, resp != nullptr ? resp : &local);
  }

  std::unique_ptr<ServerProcess> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::RidgelineService::Stub> stub_;
};

}  // namespace ridgeline::testing
