// The Plan RPC against the real ridgeline-server on 127.0.0.1: a sized,
// ranked answer whose cost follows from its own numbers; errors naming the
// field; the deadline stops the simulations.
#include <chrono>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ridgeline/v1/ridgeline.grpc.pb.h"
#include "server_process.h"

namespace ridgeline::testing {
namespace {

using ::grpc::StatusCode;
using ::testing::HasSubstr;

class PlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>();
    ASSERT_TRUE(server_->ok()) << server_->error();
    ASSERT_TRUE(WaitServing(server_->Channel(), std::chrono::seconds(20)));
    stub_ = v1::RidgelineService::NewStub(server_->Channel());
  }
  grpc::Status Plan(const v1::PlanRequest& req, v1::PlanResponse* resp,
                    std::chrono::milliseconds deadline =
                        std::chrono::seconds(60)) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + deadline);
    return stub_->Plan(&ctx, req, resp);
  }
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<v1::RidgelineService::Stub> stub_;
};

v1::PlanRequest Llama8bOnH100() {
  v1::PlanRequest req;
  req.mutable_model()->set_catalog_id("llama-3.1-8b");
  req.mutable_traffic()->set_rate(10);
  req.mutable_traffic()->mutable_prompt_tokens()->set_fixed(1024);
  req.mutable_traffic()->mutable_generated_tokens()->set_fixed(256);
  req.mutable_slo()->set_ttft_p90_seconds(1);
  req.mutable_slo()->set_tpot_p90_seconds(0.05);
  req.mutable_candidates()->add_hardware()->set_platform_id(
      "nvidia-h100-sxm-80gb");
  req.mutable_candidates()->add_tensor_parallel(1);
  v1::Formats* f = req.mutable_candidates()->add_formats();
  f->set_weights("fp8");
  f->set_activations("fp8");
  f->set_kv_cache("fp8");
  req.set_requests(200);
  return req;
}

TEST_F(PlanTest, SizesRanksAndPricesTheDeployment) {
  v1::PlanResponse resp;
  grpc::Status s = Plan(Llama8bOnH100(), &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(resp.deployments_size(), 1);
  const v1::PlanDeployment& d = resp.deployments(0);
  ASSERT_TRUE(d.feasible()) << d.why();
  EXPECT_TRUE(d.meets_slo());
  EXPECT_EQ(d.hardware_id(), "nvidia-h100-sxm-80gb");
  EXPECT_EQ(d.formats(), "fp8/fp8/fp8");
  // Replicas cover the rate at the per-replica maximum.
  EXPECT_GE(d.replicas() * d.max_rate_per_replica(), 10.0);
  EXPECT_LT((d.replicas() - 1) * d.max_rate_per_replica(), 10.0);
  EXPECT_EQ(d.devices(), d.replicas());
  // The default H100 rental price, $2.99/device-hour: cost per second
  // devices x 2.99 / 3600 over 10 req/s x 256 tokens, per 1e6 tokens.
  EXPECT_EQ(d.cost_basis(), "rental");
  EXPECT_THAT(d.price_source(), HasSubstr("2.99"));
  EXPECT_NEAR(d.usd_per_mtoken(), d.devices() * 2.99 / 3600 / 2560 * 1e6,
              1e-9);
  // Board power 700 W per device over 2560 tokens/s.
  EXPECT_NEAR(d.joules_per_token(), d.devices() * 700.0 / 2560, 1e-9);
  EXPECT_LE(d.ttft_p90_seconds(), 1.0);
  EXPECT_LE(d.tpot_p90_seconds(), 0.05);
  EXPECT_NEAR(d.tpot_headroom(), 1 - d.tpot_p90_seconds() / 0.05, 1e-12);
  EXPECT_TRUE(d.pareto());
  EXPECT_THAT(resp.headline(), HasSubstr("nvidia-h100-sxm-80gb"));
  EXPECT_THAT(resp.headline(), HasSubstr("rental"));
}

TEST_F(PlanTest, BadInputNamesTheField) {
  struct Case {
    std::function<void(v1::PlanRequest*)> change;
    std::string field;
  };
  const std::vector<Case> cases = {
      {[](v1::PlanRequest* r) { r->mutable_traffic()->set_rate(0); },
       "traffic.rate"},
      {[](v1::PlanRequest* r) { r->mutable_traffic()->set_rate(-3); },
       "traffic.rate"},
      {[](v1::PlanRequest* r) { r->mutable_candidates()->clear_hardware(); },
       "candidates.hardware"},
      {[](v1::PlanRequest* r) { r->mutable_slo()->set_ttft_p90_seconds(0); },
       "slo.ttft_p90_seconds"},
      {[](v1::PlanRequest* r) { r->mutable_slo()->set_tpot_p90_seconds(0); },
       "slo.tpot_p90_seconds"},
      {[](v1::PlanRequest* r) { r->set_requests(1'000'000'000); },
       "simulation.requests"},
      {[](v1::PlanRequest* r) {
         r->mutable_traffic()->mutable_prompt_tokens()->set_fixed(0);
       },
       "traffic.prompt_tokens"},
      {[](v1::PlanRequest* r) { r->mutable_candidates()->add_tensor_parallel(0); },
       "candidates.tensor_parallel[1]"},
  };
  for (const Case& c : cases) {
    v1::PlanRequest req = Llama8bOnH100();
    c.change(&req);
    v1::PlanResponse resp;
    grpc::Status s = Plan(req, &resp);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT) << c.field;
    EXPECT_THAT(s.error_message(), HasSubstr(c.field));
    EXPECT_THAT(s.error_message(), HasSubstr("must be"));
  }
}

TEST_F(PlanTest, DeadlineStopsThePlan) {
  // 16 candidates x 9 simulations x 40,000 requests x 256 sequence-steps
  // = 1.5e9: under the server's --max-sequence-steps (2e9), and minutes of
  // work.
  v1::PlanRequest req = Llama8bOnH100();
  req.set_requests(40000);
  req.mutable_candidates()->clear_tensor_parallel();  // 1, 2, 4, 8
  req.mutable_candidates()->clear_formats();          // bf16 and fp8
  req.mutable_candidates()->add_hardware()->set_platform_id("amd-mi300x");
  const auto start = std::chrono::steady_clock::now();
  v1::PlanResponse resp;
  grpc::Status s = Plan(req, &resp, std::chrono::milliseconds(300));
  EXPECT_EQ(s.error_code(), StatusCode::DEADLINE_EXCEEDED);
  // The server itself stops (the whole plan would take minutes): its
  // handler finishes with DEADLINE_EXCEEDED within seconds.
  bool seen = false;
  for (int i = 0; i < 200 && !seen; ++i) {
    const std::string m = HttpGet(server_->metrics_port(), "/metrics");
    seen = MetricValue(m, "grpc_server_handled_total",
                       {"grpc_method=\"Plan\"",
                        "grpc_code=\"DeadlineExceeded\""})
               .value_or(0) >= 1;
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(seen);
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            std::chrono::seconds(15));
}

}  // namespace
}  // namespace ridgeline::testing

namespace ridgeline::testing {
namespace {

TEST_F(PlanTest, SimulateAPoissonLoadAndItsErrors) {
  v1::SimulateRequest req;
  req.mutable_model()->set_catalog_id("llama-3.1-8b");
  req.mutable_hardware()->set_platform_id("nvidia-h100-sxm-80gb");
  req.mutable_formats()->set_weights("fp8");
  req.mutable_formats()->set_activations("fp8");
  req.mutable_formats()->set_kv_cache("fp8");
  req.mutable_traffic()->set_rate(5);
  req.mutable_traffic()->mutable_prompt_tokens()->mutable_uniform()->set_min(
      256);
  req.mutable_traffic()->mutable_prompt_tokens()->mutable_uniform()->set_max(
      1024);
  auto* hist = req.mutable_traffic()->mutable_generated_tokens()
                   ->mutable_histogram();
  for (int v : {32, 128, 256}) hist->add_values(v);
  for (double w : {1.0, 2.0, 1.0}) hist->add_weights(w);
  req.set_requests(300);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  v1::SimulateResponse resp;
  grpc::Status s = stub_->Simulate(&ctx, req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.requests(), 300);
  EXPECT_GT(resp.steps(), 0);
  EXPECT_LE(resp.ttft().p50_seconds(), resp.ttft().p90_seconds());
  EXPECT_LE(resp.ttft().p90_seconds(), resp.ttft().p99_seconds());
  EXPECT_GT(resp.tpot().p50_seconds(), 0);
  EXPECT_GT(resp.itl().p90_seconds(), 0);
  // 5 req/s offered, far below capacity: served at about that rate.
  EXPECT_NEAR(resp.requests_per_second(), 5, 1.5);
  EXPECT_GT(resp.kv_usage_peak(), 0);
  EXPECT_LE(resp.kv_usage_peak(), 1);
  // Same seed, same answer.
  grpc::ClientContext again_ctx;
  v1::SimulateResponse again;
  ASSERT_TRUE(stub_->Simulate(&again_ctx, req, &again).ok());
  EXPECT_EQ(again.ttft().p99_seconds(), resp.ttft().p99_seconds());

  req.set_requests(1'000'000'000);
  grpc::ClientContext bad_ctx;
  s = stub_->Simulate(&bad_ctx, req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("simulation.requests"));
}

}  // namespace
}  // namespace ridgeline::testing
