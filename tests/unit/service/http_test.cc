// The HTTP frontend's pure parts: status mapping, field extraction, the
// grpc-timeout format, the route table against the service, the flags.
#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "ridgeline/service/http_frontend.h"
#include "ridgeline/service/server.h"

namespace ridgeline::service {
namespace {

TEST(HttpStatusOfTest, GoogleMapping) {
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kOk), 200);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kOutOfRange), 400);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kResourceExhausted), 429);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kUnimplemented), 501);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kDeadlineExceeded), 504);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kInternal), 500);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kDataLoss), 500);
}

TEST(FieldOfTest, LeadingPathOnly) {
  EXPECT_EQ(FieldOf("workload.batch: must be in [1, 65536]; got 0"),
            "workload.batch");
  EXPECT_EQ(FieldOf("hardware[2].description.tiers[0].capacity_bytes: must"),
            "hardware[2].description.tiers[0].capacity_bytes");
  EXPECT_EQ(FieldOf("parallelism.tensor_parallel must divide "
                    "model.num_attention_heads (32), got 3"),
            "parallelism.tensor_parallel");
  EXPECT_EQ(FieldOf("unknown hardware \"x\": closest: y"), "");
  EXPECT_EQ(FieldOf("sweep stopped after point 3"), "");
  EXPECT_EQ(FieldOf("no colon here"), "");
}

TEST(ParseGrpcTimeoutTest, Units) {
  EXPECT_DOUBLE_EQ(*ParseGrpcTimeout("2S"), 2.0);
  EXPECT_DOUBLE_EQ(*ParseGrpcTimeout("500m"), 0.5);
  EXPECT_DOUBLE_EQ(*ParseGrpcTimeout("1H"), 3600.0);
  EXPECT_DOUBLE_EQ(*ParseGrpcTimeout("3M"), 180.0);
  EXPECT_DOUBLE_EQ(*ParseGrpcTimeout("250u"), 250e-6);
  EXPECT_FALSE(ParseGrpcTimeout("S").ok());
  EXPECT_FALSE(ParseGrpcTimeout("123456789S").ok());  // > 8 digits
  EXPECT_FALSE(ParseGrpcTimeout("-1S").ok());
  EXPECT_FALSE(ParseGrpcTimeout("10s").ok());  // lower-case s is no unit
  EXPECT_THAT(std::string(ParseGrpcTimeout("soon").status().message()),
              ::testing::HasSubstr("grpc-timeout"));
}

// RPCs of the service that have no HTTP route yet, each with its reason.
// Remove an entry when its route is added (the test below fails while both).
const std::vector<std::string> kNotYetRouted = {
    // Client streaming has no HTTP/1.1 request-body stream here.
    "StepTimeStream",
};

// Every unary and server-streaming RPC of the service is reachable over
// HTTP: a new RPC without its line in the frontend's table fails here.
// Client-streaming RPCs (StepTimeStream) have no HTTP/1.1 request-response
// equivalent: over HTTP they are 501 UNIMPLEMENTED.
TEST(HttpRoutesTest, EveryServiceMethodIsRouted) {
  const google::protobuf::ServiceDescriptor* sd =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
          "ridgeline.v1.RidgelineService");
  ASSERT_NE(sd, nullptr);
  std::vector<std::string> service;
  for (int i = 0; i < sd->method_count(); ++i) {
    const google::protobuf::MethodDescriptor* m = sd->method(i);
    if (m->client_streaming()) continue;
    if (std::find(kNotYetRouted.begin(), kNotYetRouted.end(), m->name()) !=
        kNotYetRouted.end()) {
      continue;
    }
    service.push_back(m->name());
  }
  std::vector<std::string> routed = HttpMethods();
  std::sort(service.begin(), service.end());
  std::sort(routed.begin(), routed.end());
  EXPECT_EQ(routed, service);
}

TEST(HttpConfigTest, FlagEnvAndOff) {
  bool help = false;
  const char* argv[] = {"ridgeline-server", "--http-listen=127.0.0.1:0"};
  auto c = ParseServerConfig(
      2, argv, [](const char*) -> const char* { return nullptr; }, &help);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->http_listen, "127.0.0.1:0");
  const char* none[] = {"ridgeline-server"};
  c = ParseServerConfig(
      1, none,
      [](const char* name) -> const char* {
        return std::string(name) == "RIDGELINE_HTTP_LISTEN" ? "off" : nullptr;
      },
      &help);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->http_listen, "off");
  const char* bad[] = {"ridgeline-server", "--http-listen=localhost"};
  c = ParseServerConfig(
      2, bad, [](const char*) -> const char* { return nullptr; }, &help);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()),
              ::testing::HasSubstr("--http-listen"));
}

TEST(HttpConfigTest, SlowClientAndOriginFlags) {
  bool help = false;
  auto no_env = [](const char*) -> const char* { return nullptr; };
  const char* none[] = {"ridgeline-server"};
  auto c = ParseServerConfig(1, none, no_env, &help);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_DOUBLE_EQ(c->http_read_timeout_seconds, 20);
  EXPECT_EQ(c->http_max_connections, 1024);
  EXPECT_EQ(c->http_allowed_origins, "");
  const char* set[] = {"ridgeline-server", "--http-read-timeout-seconds=2.5",
                       "--http-max-connections=8",
                       "--http-allowed-origins=http://a:1, https://b"};
  c = ParseServerConfig(4, set, no_env, &help);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_DOUBLE_EQ(c->http_read_timeout_seconds, 2.5);
  EXPECT_EQ(c->http_max_connections, 8);
  EXPECT_EQ(c->http_allowed_origins, "http://a:1, https://b");
  for (const char* flag :
       {"--http-read-timeout-seconds=0", "--http-max-connections=0"}) {
    const char* bad[] = {"ridgeline-server", flag};
    c = ParseServerConfig(2, bad, no_env, &help);
    ASSERT_FALSE(c.ok()) << flag;
    EXPECT_THAT(std::string(c.status().message()),
                ::testing::HasSubstr(std::string(flag).substr(
                    0, std::string(flag).find('='))));
  }
}

}  // namespace
}  // namespace ridgeline::service
