// The Plan RPC with pipeline and expert parallelism, against the real
// ridgeline-server on 127.0.0.1: stage and expert-parallel candidates are
// sized with every device counted, and bad lists are INVALID_ARGUMENT
// naming the list entry, the allowed values and the value.
#include <chrono>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ridgeline/v1/ridgeline.grpc.pb.h"
#include "server_process.h"

namespace ridgeline::testing {
namespace {

using ::grpc::StatusCode;
using ::testing::HasSubstr;

class PlanParallelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>();
    ASSERT_TRUE(server_->ok()) << server_->error();
    ASSERT_TRUE(WaitServing(server_->Channel(), std::chrono::seconds(20)));
    stub_ = v1::RidgelineService::NewStub(server_->Channel());
  }
  grpc::Status Plan(const v1::PlanRequest& req, v1::PlanResponse* resp) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(100));
    return stub_->Plan(&ctx, req, resp);
  }
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<v1::RidgelineService::Stub> stub_;
};

v1::PlanRequest Request(const char* model, const char* weights) {
  v1::PlanRequest req;
  req.mutable_model()->set_catalog_id(model);
  req.mutable_traffic()->set_rate(4);
  req.mutable_traffic()->mutable_prompt_tokens()->set_fixed(1024);
  req.mutable_traffic()->mutable_generated_tokens()->set_fixed(128);
  req.mutable_slo()->set_ttft_p90_seconds(2);
  req.mutable_slo()->set_tpot_p90_seconds(0.1);
  req.mutable_candidates()->add_hardware()->set_platform_id(
      "nvidia-h100-sxm-80gb");
  req.mutable_candidates()->add_tensor_parallel(1);
  v1::Formats* f = req.mutable_candidates()->add_formats();
  f->set_weights(weights);
  f->set_activations(weights);
  f->set_kv_cache(weights);
  req.set_requests(100);
  return req;
}

TEST_F(PlanParallelTest, StagesMakeAModelFitThatOneDeviceCannotHold) {
  // Llama-3.1-70B in bf16: 141 GB of weights do not fit one H100's 77 GB
  // (0.9 of 85.9 GB); four stages hold 35 GB each.
  v1::PlanRequest req = Request("llama-3.1-70b", "bf16");
  req.mutable_candidates()->add_pipeline_parallel(1);
  req.mutable_candidates()->add_pipeline_parallel(4);
  v1::PlanResponse resp;
  grpc::Status s = Plan(req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(resp.deployments_size(), 2);
  const v1::PlanDeployment* pp1 = nullptr;
  const v1::PlanDeployment* pp4 = nullptr;
  for (const v1::PlanDeployment& d : resp.deployments()) {
    (d.pipeline_parallel() == 4 ? pp4 : pp1) = &d;
  }
  ASSERT_NE(pp1, nullptr);
  ASSERT_NE(pp4, nullptr);
  EXPECT_FALSE(pp1->feasible());
  EXPECT_THAT(pp1->why(), HasSubstr("does not fit"));
  ASSERT_TRUE(pp4->feasible()) << pp4->why();
  EXPECT_EQ(pp4->expert_parallel(), 1);
  EXPECT_EQ(pp4->tensor_parallel(), 1);
  // Every stage's device counts: replicas x 4 stages x TP 1.
  EXPECT_EQ(pp4->devices(), 4 * pp4->replicas());
  EXPECT_GE(pp4->replicas() * pp4->max_rate_per_replica(), 4.0);
  EXPECT_THAT(resp.headline(), HasSubstr("TP 1 PP 4"));
}

TEST_F(PlanParallelTest, ExpertParallelCandidatesForAMoeModel) {
  // Mixtral-8x7B fp8: EP 8 (attention data-parallel over 8 devices, one
  // expert each) beside the TP 1 candidate.
  v1::PlanRequest req = Request("mixtral-8x7b", "fp8");
  req.mutable_candidates()->add_expert_parallel(1);
  req.mutable_candidates()->add_expert_parallel(8);
  v1::PlanResponse resp;
  grpc::Status s = Plan(req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(resp.deployments_size(), 2);
  bool saw_ep = false;
  for (const v1::PlanDeployment& d : resp.deployments()) {
    ASSERT_TRUE(d.feasible()) << d.why();
    if (d.expert_parallel() == 8) {
      saw_ep = true;
      EXPECT_EQ(d.tensor_parallel(), 1);
      EXPECT_EQ(d.devices(), 8 * d.replicas());
    } else {
      EXPECT_EQ(d.devices(), d.replicas());
    }
  }
  EXPECT_TRUE(saw_ep);
}

TEST_F(PlanParallelTest, BadListsNameTheEntryRangeAndValue) {
  v1::PlanRequest req = Request("llama-3.1-8b", "fp8");
  req.mutable_candidates()->add_pipeline_parallel(2);
  req.mutable_candidates()->add_pipeline_parallel(3);
  v1::PlanResponse resp;
  grpc::Status s = Plan(req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("candidates.pipeline_parallel[1]"));
  EXPECT_THAT(s.error_message(), HasSubstr("divide the model's 32 layers"));
  EXPECT_THAT(s.error_message(), HasSubstr("got 3"));

  req = Request("llama-3.1-8b", "fp8");
  req.mutable_candidates()->add_expert_parallel(4);
  s = Plan(req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("candidates.expert_parallel[0]"));
  EXPECT_THAT(s.error_message(), HasSubstr("dense model"));
  EXPECT_THAT(s.error_message(), HasSubstr("got 4"));

  req = Request("mixtral-8x7b", "fp8");
  req.mutable_candidates()->add_expert_parallel(3);
  s = Plan(req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("candidates.expert_parallel[0]"));
  EXPECT_THAT(s.error_message(), HasSubstr("8 routed experts"));
}

}  // namespace
}  // namespace ridgeline::testing
