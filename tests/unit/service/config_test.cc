#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ridgeline/service/server.h"
#include "ridgeline/service/status.h"

namespace ridgeline::service {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

absl::StatusOr<ServerConfig> Parse(std::vector<const char*> args,
                                   std::map<std::string, std::string> env = {},
                                   bool* help = nullptr) {
  args.insert(args.begin(), "ridgeline-server");
  bool h = false;
  return ParseServerConfig(
      static_cast<int>(args.size()), args.data(),
      [&](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      help != nullptr ? help : &h);
}

TEST(ServerConfigTest, Defaults) {
  absl::StatusOr<ServerConfig> c = Parse({});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->listen, "0.0.0.0:50051");
  EXPECT_EQ(c->metrics_listen, "0.0.0.0:9464");
  EXPECT_EQ(c->plugin_dir, "");
  EXPECT_EQ(c->max_sweep_points, 100000);
}

TEST(ServerConfigTest, FlagsOverrideEnvironment) {
  absl::StatusOr<ServerConfig> c =
      Parse({"--listen", "127.0.0.1:0", "--max-sweep-points=7"},
            {{"RIDGELINE_LISTEN", "10.0.0.1:1"},
             {"RIDGELINE_PLUGIN_DIR", "/opt/p"},
             {"RIDGELINE_SHUTDOWN_GRACE_SECONDS", "2.5"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->listen, "127.0.0.1:0");
  EXPECT_EQ(c->plugin_dir, "/opt/p");
  EXPECT_EQ(c->max_sweep_points, 7);
  EXPECT_DOUBLE_EQ(c->shutdown_grace_seconds, 2.5);
}

TEST(ServerConfigTest, ErrorsNameSourceRangeAndValue) {
  absl::StatusOr<ServerConfig> c = Parse({"--max-message-bytes=12"});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("--max-message-bytes"));
  EXPECT_THAT(c.status().message(), HasSubstr("[1024, 1073741824]"));
  EXPECT_THAT(c.status().message(), HasSubstr("\"12\""));

  c = Parse({}, {{"RIDGELINE_LISTEN", "nonsense"}});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("RIDGELINE_LISTEN"));
  EXPECT_THAT(c.status().message(), HasSubstr("HOST:PORT"));

  c = Parse({"--listen"});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("missing value"));

  c = Parse({"--shutdown-grace-seconds=nan"});
  EXPECT_FALSE(c.ok());
  c = Parse({"positional"});
  EXPECT_FALSE(c.ok());
}

TEST(ServerConfigTest, CostMemoryAndConcurrencyLimitsReachTheBackend) {
  absl::StatusOr<ServerConfig> c =
      Parse({"--max-sequence-steps=5e8", "--max-request-memory-bytes=1048576",
             "--max-plan-candidates=16", "--max-explore-points=1000",
             "--max-explore-all-points=100", "--max-explore-front-points=10",
             "--max-concurrent-expensive-calls=3",
             "--grpc-default-timeout-seconds=2.5"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_DOUBLE_EQ(c->grpc_default_timeout_seconds, 2.5);
  const Limits l = LimitsFromConfig(*c);
  EXPECT_DOUBLE_EQ(l.max_sequence_steps, 5e8);
  EXPECT_EQ(l.max_request_memory_bytes, 1048576);
  EXPECT_EQ(l.max_plan_candidates, 16);
  EXPECT_EQ(l.max_explore_points, 1000);
  EXPECT_EQ(l.max_explore_all_points, 100);
  EXPECT_EQ(l.max_explore_front_points, 10);
  EXPECT_EQ(l.max_concurrent_expensive_calls, 3);
  // 0: one per core, at least 2.
  EXPECT_GE(LimitsFromConfig(ServerConfig()).max_concurrent_expensive_calls, 2);
  // Plan's cap is at most the planner's own (serving::kMaxPlanCandidates).
  c = Parse({"--max-plan-candidates=513"});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("[1, 512]"));
}

TEST(ExpensiveCallGateTest, AdmitsUpToItsLimitAndReleases) {
  ExpensiveCallGate gate(2);
  absl::StatusOr<ExpensiveCallGate::Slot> a = gate.Enter("plan");
  absl::StatusOr<ExpensiveCallGate::Slot> b = gate.Enter("plan");
  ASSERT_TRUE(a.ok() && b.ok());
  absl::StatusOr<ExpensiveCallGate::Slot> c = gate.Enter("simulate");
  EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(c.status().message(),
              HasSubstr("--max-concurrent-expensive-calls"));
  EXPECT_EQ(gate.in_use(), 2);
  { ExpensiveCallGate::Slot gone = std::move(*a); }
  EXPECT_EQ(gate.in_use(), 1);
  EXPECT_TRUE(gate.Enter("simulate").ok());
  EXPECT_EQ(gate.in_use(), 1);  // that slot was released at once
}

TEST(ServerConfigTest, LlmdPredictorFlags) {
  absl::StatusOr<ServerConfig> c = Parse(
      {"--llmd-predictor-listen=127.0.0.1:8001", "--llmd-model", "llama-3.1-8b",
       "--llmd-hardware=nvidia-h100-sxm-80gb", "--llmd-tensor-parallel=2"},
      {{"RIDGELINE_LLMD_FRAMEWORK", "vllm"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->llmd_predictor_listen, "127.0.0.1:8001");
  EXPECT_EQ(c->llmd_model, "llama-3.1-8b");
  EXPECT_EQ(c->llmd_hardware, "nvidia-h100-sxm-80gb");
  EXPECT_EQ(c->llmd_tensor_parallel, 2);
  EXPECT_EQ(c->llmd_framework, "vllm");
  EXPECT_TRUE(Parse({"--llmd-predictor-listen=off"}).ok());
  // The pods' model and platform are required with the port.
  c = Parse({"--llmd-predictor-listen=127.0.0.1:0", "--llmd-model=m"});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("--llmd-hardware"));
  c = Parse({"--llmd-predictor-listen=nope"});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("--llmd-predictor-listen"));
  c = Parse({"--llmd-tensor-parallel=0"});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("[1, 256]"));
}

TEST(ServerConfigTest, Help) {
  bool help = false;
  ASSERT_TRUE(Parse({"--help"}, {}, &help).ok());
  EXPECT_TRUE(help);
  EXPECT_THAT(ServerUsage(), HasSubstr("RIDGELINE_METRICS_LISTEN"));
}

// Issue 20, item 8: --plugin-dir replaced the installed plugins silently;
// --extra-plugin-dir adds folders (repeatable, comma lists), the
// variable's first.
TEST(ServerConfigTest, ExtraPluginDirsRepeatAndSplitOnCommas) {
  absl::StatusOr<ServerConfig> c =
      Parse({"--extra-plugin-dir=/b, /c", "--extra-plugin-dir", "/d"},
            {{"RIDGELINE_EXTRA_PLUGIN_DIR", "/a"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->extra_plugin_dirs,
            (std::vector<std::string>{"/a", "/b", "/c", "/d"}));
  EXPECT_TRUE(Parse({})->extra_plugin_dirs.empty());
  c = Parse({"--extra-plugin-dir=,"});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("--extra-plugin-dir"));
  EXPECT_THAT(c.status().message(), HasSubstr("comma list of folders"));
  EXPECT_THAT(ServerUsage(), HasSubstr("instead of the installed ones"));
  EXPECT_THAT(ServerUsage(),
              HasSubstr("--extra-plugin-dir (RIDGELINE_EXTRA_PLUGIN_DIR)"));
}

// The help said the token covered Analyze, AnalyzeKernel and Sweep; it
// covers every call that computes, and health checks stay open.
TEST(ServerConfigTest, HelpSaysWhatTheTokenCovers) {
  const std::string usage = ServerUsage();
  EXPECT_THAT(usage, Not(HasSubstr("Analyze, AnalyzeKernel and Sweep")));
  EXPECT_THAT(usage, HasSubstr("every RPC that computes (gRPC and HTTP/JSON) "
                               "is then protected and needs \"authorization: "
                               "Bearer <token>\""));
  EXPECT_THAT(usage, HasSubstr("health, the catalog (ListHardware, "
                               "GetHardware, ListModels, GetModel) and "
                               "reflection are not"));
}

TEST(StatusMappingTest, CodesAndMessagesCarryOver) {
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  const std::pair<absl::Status, grpc::StatusCode> cases[] = {
      {absl::InvalidArgumentError("a"), grpc::StatusCode::INVALID_ARGUMENT},
      {absl::NotFoundError("b"), grpc::StatusCode::NOT_FOUND},
      {absl::UnimplementedError("c"), grpc::StatusCode::UNIMPLEMENTED},
      {absl::UnavailableError("d"), grpc::StatusCode::UNAVAILABLE},
      {absl::InternalError("e"), grpc::StatusCode::INTERNAL},
      {absl::ResourceExhaustedError("f"), grpc::StatusCode::RESOURCE_EXHAUSTED},
      {absl::CancelledError("g"), grpc::StatusCode::CANCELLED},
      {absl::DeadlineExceededError("h"), grpc::StatusCode::DEADLINE_EXCEEDED},
  };
  for (const auto& [in, code] : cases) {
    grpc::Status out = ToGrpcStatus(in);
    EXPECT_EQ(out.error_code(), code);
    EXPECT_EQ(out.error_message(), std::string(in.message()));
  }
}

}  // namespace
}  // namespace ridgeline::service
