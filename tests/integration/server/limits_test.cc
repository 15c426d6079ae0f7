// Issue 26, defects 1 and 3, against the real ridgeline-server: a tied
// Pareto front under an address-space limit, expensive Simulate / Plan /
// Explore requests refused before the work (the server's CPU time and RSS,
// read from /proc/<pid>, barely move), the default deadline of a unary
// gRPC call that sets none, and the bound on concurrent expensive calls.
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ridgeline/v1/ridgeline.grpc.pb.h"
#include "server_fixture.h"
#include "server_process.h"

namespace ridgeline::testing {
namespace {

using ::grpc::StatusCode;
using ::testing::HasSubstr;

// The server's CPU time (user + system) and memory, from /proc.
struct ProcUsage {
  double cpu_seconds = 0;
  double rss_bytes = 0;   // VmRSS
  double peak_bytes = 0;  // VmHWM: the resident high-water mark
};
ProcUsage Usage(pid_t pid) {
  ProcUsage u;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  // Fields after the ")" that ends the command name: state is field 3,
  // utime and stime are fields 14 and 15 (clock ticks).
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  std::vector<std::string> f;
  for (std::string x; rest >> x;) f.push_back(x);
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  if (f.size() > 12) {
    u.cpu_seconds = (std::stod(f[11]) + std::stod(f[12])) / tick;
  }
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  while (std::getline(status, line)) {
    std::istringstream in(line);
    std::string key;
    double kb = 0;
    in >> key >> kb;
    if (key == "VmRSS:") u.rss_bytes = kb * 1024;
    if (key == "VmHWM:") u.peak_bytes = kb * 1024;
  }
  return u;
}

constexpr double kMiB = 1 << 20;

class LimitsTest : public ::testing::Test {
 protected:
  void Start(const std::vector<std::string>& args,
             uint64_t address_space_bytes = 0) {
    server_ = std::make_unique<ServerProcess>(args, address_space_bytes);
    ASSERT_TRUE(server_->ok()) << server_->error();
    ASSERT_TRUE(WaitServing(server_->Channel(), Scaled(kStartup)));
    stub_ = v1::RidgelineService::NewStub(server_->Channel());
  }
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<v1::RidgelineService::Stub> stub_;
};

// Reads an Explore stream to its end.
grpc::Status ReadExplore(v1::RidgelineService::Stub* stub,
                         const v1::ExploreRequest& req,
                         std::vector<v1::ExploreResponse>* out,
                         std::chrono::milliseconds deadline) {
  grpc::ClientContext ctx;
  ctx.set_deadline(In(deadline));
  auto reader = stub->Explore(&ctx, req);
  v1::ExploreResponse m;
  while (reader->Read(&m)) out->push_back(m);
  return reader->Finish();
}

// Issue 26's tied front: 3000 x 3000 points that neither axis changes the
// objectives of (TDP and price move neither decode speed nor TTFT).
v1::ExploreRequest TiedExplore() {
  v1::ExploreRequest req;
  req.mutable_model()->set_catalog_id("llama-3-8b");
  req.mutable_hardware()->set_platform_id("nvidia-h100-sxm-80gb");
  req.mutable_workload()->set_batch(1);
  req.mutable_workload()->set_prompt_tokens(1024);
  req.mutable_workload()->set_generated_tokens(256);
  req.add_vary("tdp_w=100:1000:3000");
  req.add_vary("price_usd=1000:50000:3000");
  req.add_objectives("decode_tok_s:max");
  req.add_objectives("ttft_ms:min");
  return req;
}

TEST_F(LimitsTest, ATiedFrontOfNineMillionPointsFitsUnderAnAddressSpaceLimit) {
  // Before the tie rule this front held 9e6 rows (~250 B each: 2.24 GB
  // and growing) and the server aborted with std::bad_alloc under a 4 GiB
  // RLIMIT_AS. Now it is one tie group: 16 rows, ties = 9,000,000.
  Start({"--grpc-default-timeout-seconds=120"}, uint64_t{4} << 30);
  std::vector<v1::ExploreResponse> out;
  grpc::Status s = ReadExplore(stub_.get(), TiedExplore(), &out,
                               Scaled(std::chrono::seconds(90)));
  ASSERT_TRUE(s.ok()) << s.error_message();
  std::vector<uint64_t> indices;
  for (const auto& m : out) {
    if (!m.has_point()) continue;
    indices.push_back(m.point().index());
    EXPECT_TRUE(m.point().pareto());
    EXPECT_EQ(m.point().ties(), 9'000'000u);
  }
  // The 16 lowest grid indices of the group.
  std::vector<uint64_t> want(16);
  for (uint64_t i = 0; i < 16; ++i) want[i] = i;
  EXPECT_EQ(indices, want);
  ASSERT_TRUE(out.back().has_summary());
  EXPECT_EQ(out.back().summary().front_size(), 9'000'000u);
  EXPECT_EQ(out.back().summary().front_unlisted(), 9'000'000u - 16);
  // The server survived, answers, and never held more than a few hundred
  // MB (its engine, plugins and gRPC; the front is kilobytes).
  EXPECT_TRUE(
      HealthCheck(server_->Channel(), Scaled(std::chrono::seconds(2))).ok());
  const ProcUsage u = Usage(server_->pid());
  EXPECT_LT(u.peak_bytes, 512 * kMiB) << "VmHWM " << u.peak_bytes / kMiB;
}

TEST_F(LimitsTest, ExpensiveRequestsAreRefusedBeforeTheWork) {
  Start({});
  const ProcUsage before = Usage(server_->pid());
  const auto start = std::chrono::steady_clock::now();

  // Simulate, concurrency 1, 100,000 generated tokens, 1,000,000 requests
  // (issue 26: 611 MB and 2.4 CPU-s before its RESOURCE_EXHAUSTED): at
  // least 1e6 x (100,000 + ceil(512 / 8192) - 1) = 1e11 sequence-steps,
  // past the default limit of 2e9.
  v1::SimulateRequest sim;
  sim.mutable_model()->set_catalog_id("llama-3.1-8b");
  sim.mutable_hardware()->set_platform_id("nvidia-h100-sxm-80gb");
  sim.mutable_traffic()->set_concurrency(1);
  sim.mutable_traffic()->mutable_prompt_tokens()->set_fixed(512);
  sim.mutable_traffic()->mutable_generated_tokens()->set_fixed(100000);
  sim.set_requests(1'000'000);
  {
    grpc::ClientContext ctx;
    v1::SimulateResponse resp;
    grpc::Status s = stub_->Simulate(&ctx, sim, &resp);
    EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_THAT(s.error_message(), HasSubstr("--max-sequence-steps"));
    EXPECT_THAT(s.error_message(), HasSubstr("1000000 requests x 100000"));
    EXPECT_THAT(s.error_message(), HasSubstr("1e+11 sequence-steps"));
  }
  // Few enough steps, but 1,000,000 requests x 160 B = 160 MB against a
  // budget the test sets low: the memory estimate names its flag.
  // (Checked on a second server below.)

  // Plan: 31 hardware entries x TP 1, 2, 4, 8 x bf16 and fp8 = 248
  // candidates x 100,000 requests (issue 26: 59 CPU-s): 248 x 9
  // simulations x 1e5 x 256 sequence-steps = 5.7e10.
  v1::PlanRequest plan;
  plan.mutable_model()->set_catalog_id("llama-3.1-8b");
  plan.mutable_traffic()->set_rate(10);
  plan.mutable_traffic()->mutable_prompt_tokens()->set_fixed(1024);
  plan.mutable_traffic()->mutable_generated_tokens()->set_fixed(256);
  plan.mutable_slo()->set_ttft_p90_seconds(1);
  plan.mutable_slo()->set_tpot_p90_seconds(0.05);
  for (int i = 0; i < 31; ++i) {
    plan.mutable_candidates()->add_hardware()->set_platform_id(
        "nvidia-h100-sxm-80gb");
  }
  plan.set_requests(100000);
  {
    grpc::ClientContext ctx;
    v1::PlanResponse resp;
    grpc::Status s = stub_->Plan(&ctx, plan, &resp);
    EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_THAT(s.error_message(), HasSubstr("--max-sequence-steps"));
    EXPECT_THAT(s.error_message(), HasSubstr("248 candidates and pools x 9 simulations"));
    EXPECT_THAT(s.error_message(), HasSubstr("100000 requests"));
  }
  // NSGA-II of 4096 x 10,001 evaluations, each cached (~384 B): 15.7 GB.
  v1::ExploreRequest nsga = TiedExplore();
  nsga.set_nsga2_generations(10000);
  nsga.set_nsga2_population(4096);
  {
    std::vector<v1::ExploreResponse> out;
    grpc::Status s =
        ReadExplore(stub_.get(), nsga, &out, Scaled(std::chrono::seconds(10)));
    EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_THAT(s.error_message(), HasSubstr("--max-request-memory-bytes"));
    EXPECT_THAT(s.error_message(), HasSubstr("nsga2_population 4096"));
    EXPECT_TRUE(out.empty());
  }
  // Refused fast: the server spent well under a CPU-second on all three
  // and its RSS barely moved.
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            Scaled(std::chrono::seconds(2)));
  const ProcUsage after = Usage(server_->pid());
  EXPECT_LT(after.cpu_seconds - before.cpu_seconds, 0.5 * TimeScale());
  EXPECT_LT(after.rss_bytes - before.rss_bytes, 32 * kMiB);
}

// A trace whose longest request costs more than one Analyze may (issue 23):
// (1,000,000 + 16) tokens x 32 layers = 3.2e7 token-layers at least,
// past a limit of 1e7.
TEST_F(LimitsTest, ATraceOverTheRequestCostIsRefused) {
  Start({"--max-request-cost=1e7"});
  v1::SimulateRequest sim;
  sim.mutable_model()->set_catalog_id("llama-3.1-8b");
  sim.mutable_hardware()->set_platform_id("nvidia-h100-sxm-80gb");
  v1::ArrivalTrace* trace = sim.mutable_traffic()->mutable_trace();
  for (int i = 0; i < 3; ++i) {
    trace->add_arrival_seconds(i);
    trace->add_prompt_tokens(i == 1 ? 1'000'000 : 512);
    trace->add_generated_tokens(16);
  }
  grpc::ClientContext ctx;
  v1::SimulateResponse resp;
  grpc::Status s = stub_->Simulate(&ctx, sim, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(), HasSubstr("prompt 1000000"));
  EXPECT_THAT(s.error_message(), HasSubstr("--max-request-cost"));
  // The same trace without its long request runs.
  trace->set_prompt_tokens(1, 512);
  grpc::ClientContext ok_ctx;
  EXPECT_TRUE(stub_->Simulate(&ok_ctx, sim, &resp).ok());
}

TEST_F(LimitsTest, TheFlagsNameTheirLimits) {
  Start({"--max-request-memory-bytes=67108864", "--max-plan-candidates=4",
         "--max-explore-front-points=2"});
  // 1,000,000 requests x 160 B = 1.6e8 bytes > 64 MiB (67,108,864).
  v1::SimulateRequest sim;
  sim.mutable_model()->set_catalog_id("llama-3.1-8b");
  sim.mutable_hardware()->set_platform_id("nvidia-h100-sxm-80gb");
  sim.mutable_traffic()->set_rate(5);
  sim.mutable_traffic()->mutable_prompt_tokens()->set_fixed(16);
  sim.mutable_traffic()->mutable_generated_tokens()->set_fixed(1);
  sim.set_requests(1'000'000);
  {
    grpc::ClientContext ctx;
    v1::SimulateResponse resp;
    grpc::Status s = stub_->Simulate(&ctx, sim, &resp);
    EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_THAT(s.error_message(),
                HasSubstr("1000000 requests x 160 bytes = 1.6e+08 bytes"));
    EXPECT_THAT(s.error_message(), HasSubstr("--max-request-memory-bytes"));
  }
  // One hardware x TP 1, 2, 4, 8 x two format sets = 8 candidates > 4.
  v1::PlanRequest plan;
  plan.mutable_model()->set_catalog_id("llama-3.1-8b");
  plan.mutable_traffic()->set_rate(10);
  plan.mutable_traffic()->mutable_prompt_tokens()->set_fixed(1024);
  plan.mutable_traffic()->mutable_generated_tokens()->set_fixed(256);
  plan.mutable_slo()->set_ttft_p90_seconds(1);
  plan.mutable_slo()->set_tpot_p90_seconds(0.05);
  plan.mutable_candidates()->add_hardware()->set_platform_id(
      "nvidia-h100-sxm-80gb");
  {
    grpc::ClientContext ctx;
    v1::PlanResponse resp;
    grpc::Status s = stub_->Plan(&ctx, plan, &resp);
    EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_THAT(s.error_message(), HasSubstr("candidates: 8 deployments"));
    EXPECT_THAT(s.error_message(),
                HasSubstr("limit of 4 (--max-plan-candidates)"));
  }
  // Batch trades per-sequence speed against total throughput: more than
  // 2 distinct front vectors (tdp_w ties each 50 times) > the cap of 2.
  v1::ExploreRequest ex = TiedExplore();
  ex.clear_vary();
  ex.add_vary("tdp_w=100:1000:50");
  ex.add_vary("batch=1,2,4,8,16,32");
  ex.clear_objectives();
  ex.add_objectives("decode_tok_s:max");
  ex.add_objectives("decode_tok_s_total:max");
  {
    std::vector<v1::ExploreResponse> out;
    grpc::Status s =
        ReadExplore(stub_.get(), ex, &out, Scaled(std::chrono::seconds(20)));
    EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_THAT(s.error_message(), HasSubstr("more than 2 distinct"));
    EXPECT_THAT(s.error_message(), HasSubstr("--max-explore-front-points"));
  }
}

// At concurrency 1, every step of 100,000 requests x 1000 tokens is one
// decode: 1e8 sequence-steps, admitted under a raised limit, seconds of
// work the deadline must stop.
v1::SimulateRequest LongSimulate() {
  v1::SimulateRequest sim;
  sim.mutable_model()->set_catalog_id("llama-3.1-8b");
  sim.mutable_hardware()->set_platform_id("nvidia-h100-sxm-80gb");
  sim.mutable_traffic()->set_concurrency(1);
  sim.mutable_traffic()->mutable_prompt_tokens()->set_fixed(16);
  sim.mutable_traffic()->mutable_generated_tokens()->set_fixed(1000);
  sim.set_requests(100000);
  return sim;
}

TEST_F(LimitsTest, AUnaryCallWithoutADeadlineGetsTheServersDefault) {
  Start({"--grpc-default-timeout-seconds=1"});
  const auto start = std::chrono::steady_clock::now();
  grpc::ClientContext ctx;  // no deadline
  v1::SimulateResponse resp;
  grpc::Status s = stub_->Simulate(&ctx, LongSimulate(), &resp);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(s.error_code(), StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  EXPECT_GE(took, std::chrono::milliseconds(900));
  EXPECT_LT(took, Scaled(std::chrono::seconds(4)));
  // A call that sets its own deadline keeps it.
  grpc::ClientContext own;
  own.set_deadline(In(std::chrono::milliseconds(300)));
  const auto start2 = std::chrono::steady_clock::now();
  s = stub_->Simulate(&own, LongSimulate(), &resp);
  EXPECT_EQ(s.error_code(), StatusCode::DEADLINE_EXCEEDED);
  EXPECT_LT(std::chrono::steady_clock::now() - start2,
            std::chrono::milliseconds(900));
}

TEST_F(LimitsTest, ConcurrentExpensiveCallsAreBounded) {
  Start({"--max-concurrent-expensive-calls=1"});
  // One long Simulate holds the only slot for ~1.5 s.
  grpc::Status first;
  std::thread holder([&] {
    grpc::ClientContext ctx;
    ctx.set_deadline(In(std::chrono::milliseconds(1500)));
    v1::SimulateResponse resp;
    first = stub_->Simulate(&ctx, LongSimulate(), &resp);
  });
  // A small one meanwhile is refused at once, naming the flag; health is
  // not an expensive call and answers.
  v1::SimulateRequest small = LongSimulate();
  small.set_requests(10);
  small.mutable_traffic()->mutable_generated_tokens()->set_fixed(8);
  grpc::Status refused;
  for (int i = 0; i < 40; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    grpc::ClientContext ctx;
    ctx.set_deadline(In(std::chrono::seconds(5)));
    v1::SimulateResponse resp;
    refused = stub_->Simulate(&ctx, small, &resp);
    if (!refused.ok()) break;
  }
  EXPECT_EQ(refused.error_code(), StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(refused.error_message(),
              HasSubstr("--max-concurrent-expensive-calls"));
  EXPECT_TRUE(
      HealthCheck(server_->Channel(), Scaled(std::chrono::seconds(1))).ok());
  holder.join();
  EXPECT_EQ(first.error_code(), StatusCode::DEADLINE_EXCEEDED);
  // The slot is free again once the stopped simulation has returned
  // (within 1024 steps of its deadline).
  grpc::Status s;
  for (int i = 0; i < 40; ++i) {
    grpc::ClientContext ctx;
    ctx.set_deadline(In(std::chrono::seconds(20)));
    v1::SimulateResponse resp;
    s = stub_->Simulate(&ctx, small, &resp);
    if (s.error_code() != StatusCode::RESOURCE_EXHAUSTED) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_TRUE(s.ok()) << s.error_message();
}

}  // namespace
}  // namespace ridgeline::testing
