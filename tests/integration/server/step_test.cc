// End-to-end tests of StepTime and StepTimeStream against the real
// ridgeline-server binary on 127.0.0.1 (port 0): answers, bad steps (in the
// unary call: the call fails; in a stream: that step's result), bad
// scenarios, deadline and cancellation.
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ridgeline/v1/ridgeline.grpc.pb.h"
#include "server_process.h"

namespace ridgeline::testing {
namespace {

using ::grpc::StatusCode;
using ::ridgeline::v1::RidgelineService;
using ::testing::HasSubstr;

constexpr auto kStartup = std::chrono::seconds(20);

std::chrono::system_clock::time_point In(std::chrono::milliseconds d) {
  return std::chrono::system_clock::now() + d;
}

// Round numbers for hand checks: one 80 GB tier at 1 TB/s, 1 PFLOP/s bf16.
v1::StepScenario RoundScenario() {
  v1::StepScenario s;
  s.mutable_model()->set_catalog_id("llama-2-7b");
  v1::Hardware* hw = s.mutable_hardware()->mutable_description();
  hw->set_id("test-round-device");
  hw->mutable_peak_ops_per_second()->set_bf16(1e15);
  hw->mutable_peak_ops_per_second()->set_fp32(6.25e13);
  v1::MemoryTier* t = hw->add_tiers();
  t->set_name("HBM");
  t->set_kind("hbm");
  t->set_capacity_bytes(80e9);
  t->set_read_bandwidth_bytes_per_second(1e12);
  t->set_write_bandwidth_bytes_per_second(1e12);
  return s;
}

void AddSeq(v1::Step* step, int64_t context, int64_t added) {
  v1::StepSequence* s = step->add_sequences();
  s->set_context_tokens(context);
  s->set_new_tokens(added);
}

class StepServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>();
    ASSERT_TRUE(server_->ok()) << server_->error();
    ASSERT_TRUE(WaitServing(server_->Channel(), kStartup));
    stub_ = RidgelineService::NewStub(server_->Channel());
  }
  grpc::Status StepTime(const v1::StepTimeRequest& req,
                        v1::StepTimeResponse* resp) {
    grpc::ClientContext ctx;
    ctx.set_deadline(In(std::chrono::seconds(30)));
    return stub_->StepTime(&ctx, req, resp);
  }
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<RidgelineService::Stub> stub_;
};

TEST_F(StepServerTest, UnaryAnswersEveryStepInOrder) {
  v1::StepTimeRequest req;
  *req.mutable_scenario() = RoundScenario();
  AddSeq(req.add_steps(), 1024, 1);  // one decode token
  v1::Step* mixed = req.add_steps();  // the CLI example
  AddSeq(mixed, 1024, 1);
  AddSeq(mixed, 37, 1);
  AddSeq(mixed, 0, 512);
  v1::StepTimeResponse resp;
  grpc::Status s = StepTime(req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(resp.steps_size(), 2);
  EXPECT_EQ(resp.steps(0).sequences(), 1);
  EXPECT_EQ(resp.steps(0).tokens(), 1);
  EXPECT_EQ(resp.steps(1).sequences(), 3);
  EXPECT_EQ(resp.steps(1).tokens(), 514);
  // Llama-2-7B holds 6.74e9 parameters (bf16: 13.5 GB); one decode step
  // reads them all at 1 TB/s, so it takes at least 13.5 ms, and the
  // roofline of a 1-token step is memory-bound.
  EXPECT_GE(resp.steps(0).seconds(), 13.4e-3);
  EXPECT_LT(resp.steps(0).seconds(), 14.0e-3);
  EXPECT_EQ(resp.steps(0).bound(), "memory");
  // Adding sequences and a prefill chunk costs more than the single token.
  EXPECT_GT(resp.steps(1).seconds(), resp.steps(0).seconds());
  EXPECT_TRUE(resp.pure_roofline());
  EXPECT_EQ(resp.calibration().selected_by(), "none");
  EXPECT_EQ(resp.steps(0).ops_size(), 0);  // per_op off
}

TEST_F(StepServerTest, UnaryBadStepNamesTheFieldRangeAndValue) {
  v1::StepTimeRequest req;
  *req.mutable_scenario() = RoundScenario();
  AddSeq(req.add_steps(), 10, 1);
  v1::Step* bad = req.add_steps();
  AddSeq(bad, 10, 1);
  AddSeq(bad, 10, 1);
  AddSeq(bad, -5, 1);
  v1::StepTimeResponse resp;
  grpc::Status s = StepTime(req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(),
              HasSubstr("steps[1].sequences[2].context_tokens: must be in "
                        "[0, 10000000]; got -5"));

  v1::StepTimeRequest empty;
  *empty.mutable_scenario() = RoundScenario();
  empty.add_steps();
  s = StepTime(empty, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(),
              HasSubstr("steps[0].sequences: must be 1..65536 sequences; got "
                        "0 sequences"));

  v1::StepTimeRequest huge;
  *huge.mutable_scenario() = RoundScenario();
  v1::Step* big = huge.add_steps();
  for (int i = 0; i < 65537; ++i) AddSeq(big, 1, 1);
  s = StepTime(huge, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("got 65537 sequences"));

  v1::StepTimeRequest zero_new;
  *zero_new.mutable_scenario() = RoundScenario();
  AddSeq(zero_new.add_steps(), 3, 0);
  s = StepTime(zero_new, &resp);
  EXPECT_THAT(s.error_message(),
              HasSubstr("steps[0].sequences[0].new_tokens: must be in [1, "
                        "10000000]; got 0"));
}

// The columns form of a step (context_tokens / new_tokens) is the same
// step as its sequences: equal answers, to the bit; its errors name the
// column element.
TEST_F(StepServerTest, ColumnsAreTheSameStepAsSequences) {
  v1::StepTimeRequest req;
  *req.mutable_scenario() = RoundScenario();
  v1::Step* rows = req.add_steps();
  v1::Step* cols = req.add_steps();
  const int64_t kSteps[][2] = {{1024, 1}, {37, 1}, {0, 512}};
  for (const auto& q : kSteps) {
    AddSeq(rows, q[0], q[1]);
    cols->add_context_tokens(q[0]);
    cols->add_new_tokens(q[1]);
  }
  v1::StepTimeResponse resp;
  grpc::Status s = StepTime(req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(resp.steps_size(), 2);
  EXPECT_EQ(resp.steps(1).sequences(), 3);
  EXPECT_EQ(resp.steps(1).tokens(), 514);
  EXPECT_EQ(resp.steps(1).seconds(), resp.steps(0).seconds());
  EXPECT_EQ(resp.steps(1).bytes(), resp.steps(0).bytes());
  EXPECT_EQ(resp.steps(1).flops(), resp.steps(0).flops());

  struct Case {
    std::vector<int64_t> context, added;
    bool with_sequence;
    const char* message;
  };
  const Case kBad[] = {
      {{10, -3}, {1, 1}, false,
       "steps[0].context_tokens[1]: must be in [0, 10000000]; got -3"},
      {{10, 20}, {1, 0}, false,
       "steps[0].new_tokens[1]: must be in [1, 10000000]; got 0"},
      {{10, 20}, {1}, false,
       "steps[0].new_tokens: must be 2 values (one per context_tokens); got "
       "1 values"},
      {{}, {1}, false,
       "steps[0].context_tokens: must be 1..65536 sequences; got 0 "
       "sequences"},
      {{10}, {1}, true,
       "steps[0].context_tokens: must be empty when sequences is set"},
  };
  for (const Case& c : kBad) {
    v1::StepTimeRequest bad;
    *bad.mutable_scenario() = RoundScenario();
    v1::Step* step = bad.add_steps();
    for (int64_t v : c.context) step->add_context_tokens(v);
    for (int64_t v : c.added) step->add_new_tokens(v);
    if (c.with_sequence) AddSeq(step, 5, 1);
    s = StepTime(bad, &resp);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT) << c.message;
    EXPECT_THAT(s.error_message(), HasSubstr(c.message));
  }
}

// Pipelined: the answer carries both the latency through all stages
// (`seconds`) and the steady-state interval (slowest stage + its send).
// Llama-2-7B's 32 layers in 4 stages of 8; the last stage also runs the LM
// head (4096 x 32000 x 2 B = 262 MB), so it is the slowest, and the interval
// is a quarter of the layers plus the LM head: well under the latency.
TEST_F(StepServerTest, PipelinedStepReportsLatencyAndInterval) {
  v1::StepTimeRequest req;
  *req.mutable_scenario() = RoundScenario();
  req.mutable_scenario()->mutable_parallelism()->set_pipeline_parallel(4);
  AddSeq(req.add_steps(), 1024, 1);
  v1::StepTimeResponse resp;
  grpc::Status s = StepTime(req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  const v1::StepTimeResult& r = resp.steps(0);
  EXPECT_EQ(r.pipeline_slowest_stage(), 3);
  EXPECT_GT(r.pipeline_interval_seconds(), r.seconds() / 4);
  EXPECT_LT(r.pipeline_interval_seconds(), r.seconds() / 2);
  req.mutable_scenario()->clear_parallelism();
  s = StepTime(req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.steps(0).pipeline_interval_seconds(), resp.steps(0).seconds());
}

TEST_F(StepServerTest, ContextBeyondTheModelWindowIsComputedWithAWarning) {
  v1::StepTimeRequest req;
  *req.mutable_scenario() = RoundScenario();
  AddSeq(req.add_steps(), 5000, 1);  // Llama-2-7B: max_context 4096
  v1::StepTimeResponse resp;
  grpc::Status s = StepTime(req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(resp.steps(0).warnings_size(), 1);
  EXPECT_THAT(resp.steps(0).warnings(0),
              HasSubstr("steps[0].sequences[0]: context_tokens + new_tokens "
                        "(5001) exceed the model's max_context (4096)"));
  EXPECT_GT(resp.steps(0).seconds(), 0);
}

TEST_F(StepServerTest, StreamAnswersBadStepInItsResultAndGoesOn) {
  grpc::ClientContext ctx;
  ctx.set_deadline(In(std::chrono::seconds(30)));
  auto stream = stub_->StepTimeStream(&ctx);
  v1::StepTimeStreamRequest first;
  *first.mutable_scenario() = RoundScenario();
  first.set_id(1);
  AddSeq(first.add_steps(), 1024, 1);
  ASSERT_TRUE(stream->Write(first));
  v1::StepTimeResponse a;
  ASSERT_TRUE(stream->Read(&a));
  EXPECT_EQ(a.id(), 1u);
  ASSERT_EQ(a.steps_size(), 1);
  EXPECT_EQ(a.steps(0).error_code(), 0);

  // A bad step next to a good one: the bad one carries its error.
  v1::StepTimeStreamRequest second;
  second.set_id(2);
  AddSeq(second.add_steps(), -1, 1);
  AddSeq(second.add_steps(), 1024, 1);
  ASSERT_TRUE(stream->Write(second));
  v1::StepTimeResponse b;
  ASSERT_TRUE(stream->Read(&b));
  EXPECT_EQ(b.id(), 2u);
  ASSERT_EQ(b.steps_size(), 2);
  EXPECT_EQ(b.steps(0).error_code(),
            static_cast<int>(StatusCode::INVALID_ARGUMENT));
  EXPECT_THAT(b.steps(0).error_message(),
              HasSubstr("steps[0].sequences[0].context_tokens: must be in "
                        "[0, 10000000]; got -1"));
  EXPECT_EQ(b.steps(0).seconds(), 0);
  EXPECT_EQ(b.steps(1).error_code(), 0);
  // Same scenario, same step: the stream and the first answer agree.
  EXPECT_EQ(b.steps(1).seconds(), a.steps(0).seconds());

  // The stream still answers; a unary call agrees with it.
  v1::StepTimeStreamRequest third;
  third.set_id(3);
  AddSeq(third.add_steps(), 0, 512);
  ASSERT_TRUE(stream->Write(third));
  v1::StepTimeResponse c;
  ASSERT_TRUE(stream->Read(&c));
  EXPECT_EQ(c.id(), 3u);
  EXPECT_EQ(c.steps(0).error_code(), 0);
  v1::StepTimeRequest unary;
  *unary.mutable_scenario() = RoundScenario();
  AddSeq(unary.add_steps(), 0, 512);
  v1::StepTimeResponse u;
  ASSERT_TRUE(StepTime(unary, &u).ok());
  EXPECT_EQ(u.steps(0).seconds(), c.steps(0).seconds());

  stream->WritesDone();
  EXPECT_FALSE(stream->Read(&c));
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_F(StepServerTest, StreamBadScenarioEndsTheStream) {
  grpc::ClientContext ctx;
  ctx.set_deadline(In(std::chrono::seconds(30)));
  auto stream = stub_->StepTimeStream(&ctx);
  v1::StepTimeStreamRequest first;
  *first.mutable_scenario() = RoundScenario();
  first.mutable_scenario()->mutable_model()->set_catalog_id("llama-2-7x");
  AddSeq(first.add_steps(), 10, 1);
  stream->Write(first);
  v1::StepTimeResponse r;
  EXPECT_FALSE(stream->Read(&r));
  grpc::Status s = stream->Finish();
  EXPECT_EQ(s.error_code(), StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("scenario.model"));

  grpc::ClientContext ctx2;
  auto no_scenario = stub_->StepTimeStream(&ctx2);
  v1::StepTimeStreamRequest steps_only;
  AddSeq(steps_only.add_steps(), 10, 1);
  no_scenario->Write(steps_only);
  EXPECT_FALSE(no_scenario->Read(&r));
  s = no_scenario->Finish();
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("scenario: must be set"));
}

TEST_F(StepServerTest, StreamHonoursTheDeadline) {
  grpc::ClientContext ctx;
  ctx.set_deadline(In(std::chrono::milliseconds(300)));
  const auto start = std::chrono::steady_clock::now();
  auto stream = stub_->StepTimeStream(&ctx);
  v1::StepTimeStreamRequest req;
  *req.mutable_scenario() = RoundScenario();
  AddSeq(req.add_steps(), 100, 1);
  // Bounded: at most 10 s of a scheduler loop that outlives its deadline.
  v1::StepTimeResponse r;
  int answered = 0;
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(10)) {
    if (!stream->Write(req) || !stream->Read(&r)) break;
    ++answered;
    req.clear_scenario();
  }
  EXPECT_GT(answered, 0);
  EXPECT_EQ(stream->Finish().error_code(), StatusCode::DEADLINE_EXCEEDED);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(StepServerTest, StreamStopsWhenTheClientCancels) {
  grpc::ClientContext ctx;
  auto stream = stub_->StepTimeStream(&ctx);
  v1::StepTimeStreamRequest req;
  *req.mutable_scenario() = RoundScenario();
  AddSeq(req.add_steps(), 100, 1);
  ASSERT_TRUE(stream->Write(req));
  v1::StepTimeResponse r;
  ASSERT_TRUE(stream->Read(&r));
  ctx.TryCancel();
  while (stream->Read(&r)) {
  }
  EXPECT_EQ(stream->Finish().error_code(), StatusCode::CANCELLED);
  // The server keeps serving.
  v1::StepTimeRequest unary;
  *unary.mutable_scenario() = RoundScenario();
  AddSeq(unary.add_steps(), 100, 1);
  v1::StepTimeResponse u;
  EXPECT_TRUE(StepTime(unary, &u).ok());
}

}  // namespace
}  // namespace ridgeline::testing
