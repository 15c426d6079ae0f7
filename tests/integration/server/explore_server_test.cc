// The Explore RPC on a real ridgeline-server (127.0.0.1:0): progress, the
// front, the summary; cancellation and deadlines stop it; the caps answer
// RESOURCE_EXHAUSTED; every bad field is INVALID_ARGUMENT naming it.
#include <chrono>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ridgeline/v1/ridgeline.grpc.pb.h"
#include "server_process.h"

namespace ridgeline::testing {
namespace {

using ::testing::HasSubstr;
using v1::RidgelineService;

constexpr auto kStartup = std::chrono::seconds(30);

std::chrono::system_clock::time_point In(std::chrono::milliseconds d) {
  return std::chrono::system_clock::now() + d;
}

v1::ExploreRequest Base() {
  v1::ExploreRequest req;
  req.mutable_model()->set_catalog_id("llama-3-8b");
  req.mutable_hardware()->set_platform_id("nvidia-h100-sxm-80gb");
  req.mutable_workload()->set_batch(1);
  req.mutable_workload()->set_prompt_tokens(1024);
  req.mutable_workload()->set_generated_tokens(256);
  req.add_objectives("decode_tok_s:max");
  req.add_objectives("price_usd:min");
  return req;
}

// 40,000 points searched by NSGA-II, 16 at a time for 10 generations.
v1::ExploreRequest Nsga2Request() {
  v1::ExploreRequest req = Base();
  req.add_vary("bandwidth_gbs=100:10000:200");
  req.add_vary("price_usd=1000:50000:200");
  req.set_nsga2_generations(10);
  req.set_nsga2_population(16);
  req.set_nsga2_seed(7);
  return req;
}

// A stream with provisional fronts, read back: each progress message that
// announces k provisional points must be followed by k points that are
// provisional and on a front; the other points are the final front.
struct ProvisionalStream {
  int progress = 0;  // progress messages
  int sets = 0;      // provisional sets
  std::vector<uint64_t> last_set;
  std::vector<uint64_t> final_front;
};

ProvisionalStream ReadProvisional(const std::vector<v1::ExploreResponse>& out) {
  ProvisionalStream r;
  for (size_t i = 0; i < out.size(); ++i) {
    const v1::ExploreResponse& m = out[i];
    if (m.has_progress()) {
      ++r.progress;
      const uint64_t k = m.progress().provisional_front_size();
      if (k == 0) continue;
      ++r.sets;
      EXPECT_LE(i + k, out.size() - 1);
      r.last_set.clear();
      for (uint64_t j = 1; j <= k && i + j < out.size(); ++j) {
        EXPECT_TRUE(out[i + j].has_point());
        EXPECT_TRUE(out[i + j].point().provisional());
        EXPECT_TRUE(out[i + j].point().pareto());
        r.last_set.push_back(out[i + j].point().index());
      }
      i += k;
    } else if (m.has_point()) {
      EXPECT_FALSE(m.point().provisional());
      r.final_front.push_back(m.point().index());
    }
  }
  return r;
}

std::vector<uint64_t> FrontIds(const std::vector<v1::ExploreResponse>& out) {
  std::vector<uint64_t> ids;
  for (const auto& m : out) {
    if (m.has_point()) ids.push_back(m.point().index());
  }
  return ids;
}

class ExploreServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>();
    ASSERT_TRUE(server_->ok()) << server_->error();
    ASSERT_TRUE(WaitServing(server_->Channel(), kStartup));
    stub_ = RidgelineService::NewStub(server_->Channel());
  }
  grpc::Status Run(const v1::ExploreRequest& req,
                   std::vector<v1::ExploreResponse>* out,
                   std::chrono::milliseconds deadline = std::chrono::seconds(60),
                   std::string* field_path = nullptr) {
    grpc::ClientContext ctx;
    ctx.set_deadline(In(deadline));
    auto reader = stub_->Explore(&ctx, req);
    v1::ExploreResponse m;
    while (reader->Read(&m)) out->push_back(m);
    grpc::Status st = reader->Finish();
    if (field_path != nullptr) {
      // The field as data: trailing metadata "ridgeline-field-path".
      for (const auto& [k, v] : ctx.GetServerTrailingMetadata()) {
        if (k == "ridgeline-field-path") field_path->assign(v.data(), v.size());
      }
    }
    return st;
  }
  // `req` with provisional fronts, read back, and the front of a run
  // without them.
  void RunProvisional(v1::ExploreRequest req, ProvisionalStream* got,
                      std::vector<uint64_t>* plain_front) {
    std::vector<v1::ExploreResponse> plain, out;
    ASSERT_TRUE(Run(req, &plain).ok());
    req.set_provisional_fronts(true);
    ASSERT_TRUE(Run(req, &out).ok());
    *got = ReadProvisional(out);
    *plain_front = FrontIds(plain);
  }
  void ExpectInvalid(const v1::ExploreRequest& req,
                     std::vector<std::string> says,
                     const std::string& path = "") {
    std::vector<v1::ExploreResponse> out;
    std::string got_path;
    const grpc::Status st = Run(req, &out, std::chrono::seconds(60), &got_path);
    if (!path.empty()) {
      EXPECT_EQ(got_path, path) << st.error_message();
    }
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << st.error_message();
    for (const auto& s : says) EXPECT_THAT(st.error_message(), HasSubstr(s));
    EXPECT_TRUE(out.empty());  // validated before any message
  }
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<RidgelineService::Stub> stub_;
};

TEST_F(ExploreServerTest, StreamsProgressThenTheFrontThenASummary) {
  // tensor_parallel {1,2,4} x bandwidth_gbs {1000,2000,4000}: as derived
  // in tests/unit/explore/explore_test.cc, the front is the 4000 GB/s point
  // of each tensor-parallel degree: indices 2, 5, 8 (price 1x, 2x, 4x).
  v1::ExploreRequest req = Base();
  req.add_vary("tensor_parallel=1,2,4");
  req.add_vary("bandwidth_gbs=1000,2000,4000");
  req.add_vary("price_usd=25000");
  req.set_progress_every(1);
  std::vector<v1::ExploreResponse> out;
  ASSERT_TRUE(Run(req, &out).ok());
  ASSERT_GE(out.size(), 5u);
  EXPECT_TRUE(out[0].has_progress());
  std::vector<uint64_t> front;
  uint64_t last_done = 0;
  for (const auto& m : out) {
    if (m.has_progress()) {
      EXPECT_EQ(m.progress().points_total(), 9u);
      EXPECT_GE(m.progress().points_done(), last_done);
      last_done = m.progress().points_done();
    }
    if (m.has_point()) {
      front.push_back(m.point().index());
      EXPECT_TRUE(m.point().pareto());
      EXPECT_EQ(m.point().axis_values_size(), 3);
    }
  }
  EXPECT_EQ(last_done, 9u);
  EXPECT_EQ(front, (std::vector<uint64_t>{2, 5, 8}));
  ASSERT_TRUE(out.back().has_summary());
  const v1::ExploreSummary& s = out.back().summary();
  EXPECT_EQ(s.total_points(), 9u);
  EXPECT_EQ(s.front_size(), 3u);
  EXPECT_GT(s.hypervolume(), 0);
  EXPECT_TRUE(s.hypervolume_exact());
  EXPECT_EQ(s.axis_names(1), "bandwidth_gbs");
}

TEST_F(ExploreServerTest, CancelAndDeadlineStopALongExploration) {
  v1::ExploreRequest req = Base();
  // 2000 x 2000 x 20 = 80 million points: minutes of work.
  req.add_vary("bandwidth_gbs=100:10000:2000");
  req.add_vary("peak_tflops=10:2000:2000");
  req.add_vary("price_usd=1000:50000:20");
  {
    const auto start = std::chrono::steady_clock::now();
    std::vector<v1::ExploreResponse> out;
    const grpc::Status st = Run(req, &out, std::chrono::milliseconds(500));
    EXPECT_EQ(st.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
        << st.error_message();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  }
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(In(std::chrono::seconds(60)));
    auto reader = stub_->Explore(&ctx, req);
    v1::ExploreResponse m;
    std::thread cancel([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      ctx.TryCancel();
    });
    const auto start = std::chrono::steady_clock::now();
    while (reader->Read(&m)) {
    }
    const grpc::Status st = reader->Finish();
    cancel.join();
    EXPECT_EQ(st.error_code(), grpc::StatusCode::CANCELLED);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  }
  // The server is still healthy and answers the next exploration.
  v1::ExploreRequest small = Base();
  small.add_vary("bandwidth_gbs=1000,2000");
  std::vector<v1::ExploreResponse> out;
  EXPECT_TRUE(Run(small, &out).ok());
}

TEST_F(ExploreServerTest, CapsAreResourceExhausted) {
  v1::ExploreRequest req = Base();
  // 1000^3 = 1e9 points > the default cap of 1e8.
  req.add_vary("bandwidth_gbs=100:10000:1000");
  req.add_vary("peak_tflops=10:2000:1000");
  req.add_vary("tdp_w=100:1000:1000");
  std::vector<v1::ExploreResponse> out;
  grpc::Status st = Run(req, &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(st.error_message(), HasSubstr("1000000000 points"));
  EXPECT_THAT(st.error_message(), HasSubstr("cap of 100000000"));
  // include_all of 2e6 points exceeds the streaming cap of 1e6.
  v1::ExploreRequest all = Base();
  all.add_vary("bandwidth_gbs=100:10000:2000");
  all.add_vary("peak_tflops=10:2000:1000");
  all.set_include_all(true);
  out.clear();
  st = Run(all, &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(st.error_message(), HasSubstr("include_all"));
  // 17 axes exceed the axis cap.
  v1::ExploreRequest axes = Base();
  for (int i = 0; i < 17; ++i) axes.add_vary("bandwidth_gbs=1000");
  out.clear();
  st = Run(axes, &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(st.error_message(), HasSubstr("vary: 17 axes"));
}

TEST_F(ExploreServerTest, BadFieldsNameFieldRangeAndValue) {
  v1::ExploreRequest r = Base();
  r.add_vary("bandwidth_gbs=1000");
  r.add_vary("warp_speed=9");
  ExpectInvalid(r, {"vary[1]", "unknown axis \"warp_speed\"", "bandwidth_gbs"},
                "vary[1]");
  r = Base();
  r.add_vary("batch=0,4");
  ExpectInvalid(r, {"vary[0]", "batch", "value 0", ">= 1"});
  r = Base();
  r.set_objectives(1, "price_usd:sideways");
  ExpectInvalid(r, {"objectives[1]", "max or min", "sideways"},
                "objectives[1]");
  r = Base();
  r.clear_objectives();
  r.add_objectives("decode_tok_s");
  ExpectInvalid(r, {"objectives", "2..6", "got 1"});
  r = Base();
  r.add_constraints("tpot_ms<<50");
  ExpectInvalid(r, {"constraints[0]", "METRIC<=VALUE", "tpot_ms<<50"});
  r = Base();
  r.set_shard_index(4);
  r.set_shard_count(3);
  ExpectInvalid(r, {"shard_index", "0..2", "got 4"}, "shard_index");
  r = Base();
  r.set_nsga2_generations(5);
  r.set_nsga2_population(7);
  ExpectInvalid(r, {"nsga2_population", "4..4096", "got 7"});
  r = Base();
  r.mutable_workload()->set_batch(0);
  ExpectInvalid(r, {"workload.batch"}, "workload.batch");
  r = Base();
  r.add_vary("sram_mb=1,2");  // the H100 plugin part has no SRAM tier
  std::vector<v1::ExploreResponse> out;
  const grpc::Status st = Run(r, &out);
  if (st.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
    EXPECT_THAT(st.error_message(), HasSubstr("vary[0]: axis sram_mb"));
  } else {
    EXPECT_TRUE(st.ok()) << st.error_message();  // it has one: fine
  }
}

TEST_F(ExploreServerTest, Nsga2ReportsHypervolumePerGeneration) {
  v1::ExploreRequest req = Nsga2Request();
  std::vector<v1::ExploreResponse> out;
  ASSERT_TRUE(Run(req, &out).ok());
  int generations = 0;
  for (const auto& m : out) generations += m.has_progress();
  EXPECT_EQ(generations, 11);  // generation 0 and 10 more
  ASSERT_TRUE(out.back().has_summary());
  EXPECT_EQ(out.back().summary().generations_size(), 11);
  EXPECT_GT(out.back().summary().hypervolume(), 0);
  // Reproducible: the same seed gives the same stream of points.
  std::vector<v1::ExploreResponse> again;
  ASSERT_TRUE(Run(req, &again).ok());
  ASSERT_EQ(again.size(), out.size());
  for (size_t i = 0; i + 1 < out.size(); ++i) {
    EXPECT_EQ(again[i].SerializeAsString(), out[i].SerializeAsString()) << i;
  }
}

TEST_F(ExploreServerTest, Nsga2StreamsProvisionalFrontsPerGeneration) {
  // With provisional_fronts, a generation whose front of everything
  // evaluated so far changed announces it by size and sends it
  // (provisional = true); the last set sent is the final front, and the
  // final front equals that of a run without the flag (same seed).
  v1::ExploreRequest req = Nsga2Request();
  ProvisionalStream got;
  std::vector<uint64_t> want;
  RunProvisional(req, &got, &want);
  EXPECT_EQ(got.progress, 11);  // generation 0 and 10 more
  EXPECT_GE(got.sets, 1);
  EXPECT_LE(got.sets, 11);
  EXPECT_FALSE(want.empty());
  EXPECT_EQ(got.final_front, want);
  EXPECT_EQ(got.last_set, want);
}

}  // namespace
}  // namespace ridgeline::testing

namespace ridgeline::testing {
namespace {

class ExploreSensitivityServerTest : public ExploreServerTest {
 protected:
  grpc::Status Sensitivity(const v1::ExploreSensitivityRequest& req,
                           v1::ExploreSensitivityResponse* resp,
                           std::string* field_path = nullptr) {
    grpc::ClientContext ctx;
    ctx.set_deadline(In(std::chrono::seconds(60)));
    grpc::Status st = stub_->ExploreSensitivity(&ctx, req, resp);
    if (field_path != nullptr) {
      for (const auto& [k, v] : ctx.GetServerTrailingMetadata()) {
        if (k == "ridgeline-field-path") field_path->assign(v.data(), v.size());
      }
    }
    return st;
  }
};

TEST_F(ExploreSensitivityServerTest, ElasticitiesAtAGridIndex) {
  // Grid bandwidth_gbs {1000, 2000} x peak_tflops {500, 1000}: index 2 is
  // (2000, 500) (axis 0 slowest). Batch-1 decode of Llama-3-8B reads ~16 GB
  // of weights per token at 2 FLOPs per 2-byte weight, ~1 FLOP/byte, far
  // below the ridge 500e12 / 2000e9 = 250: decode time = bytes /
  // bandwidth, so d ln(decode_tok_s) / d ln(bandwidth) = 1, d ln(tpot) /
  // d ln(bandwidth) = -1, and the peak does not matter (0).
  v1::ExploreSensitivityRequest req;
  *req.mutable_space() = Base();
  req.mutable_space()->clear_objectives();
  req.mutable_space()->add_objectives("decode_tok_s:max");
  req.mutable_space()->add_objectives("tpot_ms:min");
  req.mutable_space()->add_vary("bandwidth_gbs=1000,2000");
  req.mutable_space()->add_vary("peak_tflops=500,1000");
  req.set_index(2);
  v1::ExploreSensitivityResponse r;
  const grpc::Status st = Sensitivity(req, &r);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(r.index(), 2u);
  ASSERT_EQ(r.axis_values_size(), 2);
  EXPECT_EQ(r.axis_values(0), "2000");
  EXPECT_EQ(r.axis_values(1), "500");
  ASSERT_EQ(r.metric_names_size(), 2);
  EXPECT_EQ(r.metric_names(0), "decode_tok_s");
  EXPECT_EQ(r.metric_names(1), "tpot_ms");
  ASSERT_EQ(r.axes_size(), 2);
  EXPECT_EQ(r.axes(0).axis(), "bandwidth_gbs");
  EXPECT_NEAR(r.axes(0).elasticity(0), 1, 0.02);
  EXPECT_NEAR(r.axes(0).elasticity(1), -1, 0.02);
  EXPECT_NEAR(r.axes(1).elasticity(0), 0, 0.02);
  EXPECT_NEAR(r.axes(0).step_fraction(), 0.1, 1e-12);
  // +10 % bandwidth: +10 % tok/s (memory-bound), within rounding.
  EXPECT_NEAR(r.axes(0).change_plus_10pct(0), 0.1, 0.005);
  EXPECT_THAT(r.limited_by(0), HasSubstr("memory-bound"));
  EXPECT_THAT(r.summary(), HasSubstr("+10% bandwidth_gbs: +"));
  // Without objectives: every metric.
  req.mutable_space()->clear_objectives();
  ASSERT_TRUE(Sensitivity(req, &r).ok());
  EXPECT_GE(r.metric_names_size(), 13);
  EXPECT_EQ(r.axes(0).elasticity_size(), r.metric_names_size());
}

TEST_F(ExploreSensitivityServerTest, BadFieldsNameTheField) {
  v1::ExploreSensitivityRequest req;
  *req.mutable_space() = Base();
  req.mutable_space()->add_vary("bandwidth_gbs=1000,2000");
  req.mutable_space()->add_vary("peak_tflops=500,1000");
  req.set_index(4);
  v1::ExploreSensitivityResponse r;
  std::string path;
  grpc::Status st = Sensitivity(req, &r, &path);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(), HasSubstr("index: want 0..3"));
  EXPECT_THAT(st.error_message(), HasSubstr("got 4"));
  EXPECT_EQ(path, "index");
  req.set_index(0);
  req.mutable_space()->set_vary(1, "warp_speed=9");
  path.clear();
  st = Sensitivity(req, &r, &path);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(), HasSubstr("unknown axis \"warp_speed\""));
  EXPECT_EQ(path, "space.vary[1]");
}

TEST_F(ExploreServerTest, ProvisionalFrontsPrecedeTheFinalOne) {
  // 400 x 500 = 200,000 points, each timed afresh: long enough for the
  // reporter (every ~20 ms) to see chunks of 4,096 finish. Every
  // provisional set is announced by its size and is a front (pareto);
  // the final front is the one a run without provisional fronts sends.
  v1::ExploreRequest req = Base();
  req.clear_objectives();
  req.add_objectives("decode_tok_s:max");
  req.add_objectives("ttft_ms:min");
  req.add_vary("bandwidth_gbs=500:8000:400");
  req.add_vary("peak_tflops=50:2000:500");
  req.set_progress_every(1);
  ProvisionalStream got;
  std::vector<uint64_t> want;
  RunProvisional(req, &got, &want);
  EXPECT_GE(got.sets, 1);
  EXPECT_EQ(got.final_front, want);
  EXPECT_FALSE(want.empty());
}

}  // namespace
}  // namespace ridgeline::testing
