// Units of issue 14's server hardening that need no socket: bearer-token
// checks, TLS file loading, bounded status messages, the new flags, and the
// client key the Sweep stream limits count by.
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "ridgeline/service/auth.h"
#include "ridgeline/service/auth_policy.h"
#include "ridgeline/service/server.h"
#include "ridgeline/service/status.h"
#include "ridgeline/service/tls.h"
#include "stream_limits.h"

namespace ridgeline::service {
namespace {

using ::testing::HasSubstr;

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(BearerAuthTest, AcceptsOnlyTheExactBearerToken) {
  absl::StatusOr<BearerAuth> auth = BearerAuth::FromFile(
      WriteFile("token", "  0123456789abcdef-token \n second line ignored\n"));
  ASSERT_TRUE(auth.ok()) << auth.status();
  EXPECT_TRUE(auth->enabled());
  EXPECT_TRUE(auth->Check("Bearer 0123456789abcdef-token"));
  EXPECT_FALSE(auth->Check("Bearer 0123456789abcdef-toke"));    // prefix
  EXPECT_FALSE(auth->Check("Bearer 0123456789abcdef-tokenX"));  // longer
  EXPECT_FALSE(auth->Check("Bearer 0123456789abcdef-tokeN"));   // one byte
  EXPECT_FALSE(auth->Check("0123456789abcdef-token"));          // no scheme
  EXPECT_FALSE(auth->Check(""));
  // Disabled: everything passes.
  EXPECT_TRUE(BearerAuth().Check(""));
}

TEST(BearerAuthTest, ShortOrMissingTokenFileIsAnError) {
  absl::StatusOr<BearerAuth> short_token =
      BearerAuth::FromFile(WriteFile("short", "abc\n"));
  EXPECT_EQ(short_token.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(short_token.status().message(),
              HasSubstr("at least 16 characters; got 3"));
  absl::StatusOr<BearerAuth> missing =
      BearerAuth::FromFile(::testing::TempDir() + "/absent-token");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(missing.status().message(), HasSubstr("absent-token"));
}

// SIGHUP rotation: after Reload only the file's new token passes; a bad
// file keeps the current one.
TEST(BearerAuthTest, ReloadSwitchesToTheNewTokenAndKeepsItOnABadFile) {
  const std::string path = WriteFile("rotated", "first-token-0123456789\n");
  absl::StatusOr<BearerAuth> auth = BearerAuth::FromFile(path);
  ASSERT_TRUE(auth.ok()) << auth.status();
  WriteFile("rotated", "second-token-0123456789\n");
  EXPECT_TRUE(auth->Check("Bearer first-token-0123456789"));  // not yet
  ASSERT_TRUE(auth->Reload().ok());
  EXPECT_FALSE(auth->Check("Bearer first-token-0123456789"));
  EXPECT_TRUE(auth->Check("Bearer second-token-0123456789"));
  WriteFile("rotated", "short\n");
  EXPECT_EQ(auth->Reload().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(auth->Check("Bearer second-token-0123456789"));
  EXPECT_TRUE(BearerAuth().Reload().ok());  // disabled: nothing to read
}

// Every RPC of the service is in the table exactly once (a new RPC must be
// classified), and the open ones are exactly the catalog; health and
// reflection are open; a name not in the table is protected.
TEST(AuthPolicyTest,
     TheTableCoversTheServiceAndOpensOnlyHealthCatalogReflection) {
  const google::protobuf::ServiceDescriptor* sd =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
          "ridgeline.v1.RidgelineService");
  ASSERT_NE(sd, nullptr);
  std::map<std::string, int> seen;
  for (const MethodAccess& m : AccessTable()) ++seen[std::string(m.method)];
  for (int i = 0; i < sd->method_count(); ++i) {
    const std::string full = RidgelineMethod(sd->method(i)->name());
    EXPECT_EQ(seen[full], 1) << full;
    const bool catalog = sd->method(i)->name() == "ListHardware" ||
                         sd->method(i)->name() == "GetHardware" ||
                         sd->method(i)->name() == "ListModels" ||
                         sd->method(i)->name() == "GetModel";
    EXPECT_EQ(AccessOf(full), catalog ? Access::kOpen : Access::kProtected)
        << full;
  }
  EXPECT_EQ(AccessOf("/grpc.health.v1.Health/Check"), Access::kOpen);
  EXPECT_EQ(AccessOf("/grpc.health.v1.Health/Watch"), Access::kOpen);
  EXPECT_EQ(AccessOf("/grpc.reflection.v1alpha.ServerReflection/"
                     "ServerReflectionInfo"),
            Access::kOpen);
  EXPECT_EQ(AccessOf("/ridgeline.v1.RidgelineService/NotYetWritten"),
            Access::kProtected);
  EXPECT_EQ(AccessTable().size(), static_cast<size_t>(sd->method_count()) + 3);
}

TEST(AuthPolicyTest, AuthorizeNamesTheMethodAndWhatWasSent) {
  absl::StatusOr<BearerAuth> auth = BearerAuth::FromFile(
      WriteFile("policy-token", "policy-token-0123456789"));
  ASSERT_TRUE(auth.ok());
  const std::string step = RidgelineMethod("StepTime");
  EXPECT_TRUE(Authorize(&*auth, step, "Bearer policy-token-0123456789").ok());
  const absl::Status none = Authorize(&*auth, step, "");
  EXPECT_EQ(none.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(none.message(),
              HasSubstr("/ridgeline.v1.RidgelineService/StepTime needs "
                        "\"authorization: Bearer <token>\""));
  EXPECT_THAT(none.message(), HasSubstr("none was sent"));
  EXPECT_THAT(Authorize(&*auth, step, "Bearer nope").message(),
              HasSubstr("the one sent is wrong"));
  EXPECT_TRUE(Authorize(&*auth, RidgelineMethod("ListModels"), "").ok());
  EXPECT_TRUE(Authorize(nullptr, step, "").ok());
  const BearerAuth disabled;
  EXPECT_TRUE(Authorize(&disabled, step, "").ok());
}

// Each stream holds one of the 256 synchronous threads: the three stream
// totals may add up to at most 192. Defaults: 64 + 32 + 64 = 160.
TEST(StreamLimitsConfigTest, TotalsMustLeaveThreadsForUnaryCalls) {
  bool help = false;
  auto no_env = [](const char*) -> const char* { return nullptr; };
  std::vector<const char*> ok = {"ridgeline-server",
                                 "--max-step-streams=96"};  // 64 + 32 + 96
  absl::StatusOr<ServerConfig> c =
      ParseServerConfig(2, ok.data(), no_env, &help);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->max_step_streams, 96);
  EXPECT_EQ(c->max_explore_streams, 32);
  EXPECT_EQ(c->stream_idle_timeout_seconds, 60);
  std::vector<const char*> over = {"ridgeline-server", "--max-step-streams=97"};
  absl::StatusOr<ServerConfig> b =
      ParseServerConfig(2, over.data(), no_env, &help);
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(b.status().message(),
              HasSubstr("must be at most 192 (of the server's 256 threads); "
                        "got 64 + 32 + 97 = 193"));
  std::vector<const char*> idle = {"ridgeline-server",
                                   "--stream-idle-timeout-seconds=0"};
  EXPECT_THAT(
      ParseServerConfig(2, idle.data(), no_env, &help).status().message(),
      HasSubstr("--stream-idle-timeout-seconds: must be a number in "
                "[0.05, 86400]; got \"0\""));
}

TEST(TlsSettingsTest, LoaderNamesTheFlagAndPath) {
  TlsSettings s;
  EXPECT_TRUE(LoadTlsPem(s).ok());  // plaintext
  s.key_path = "k.pem";
  EXPECT_THAT(LoadTlsPem(s).status().message(), HasSubstr("need --tls-cert"));
  s.cert_path = WriteFile("cert.pem", "not a pem");
  s.key_path = WriteFile("key.pem",
                         "-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE "
                         "KEY-----\n");
  absl::StatusOr<TlsPem> bad = LoadTlsPem(s);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(bad.status().message(),
              HasSubstr("--tls-cert: \"" + s.cert_path +
                        "\" holds no PEM CERTIFICATE block"));
  s.cert_path = WriteFile("cert2.pem",
                          "-----BEGIN CERTIFICATE-----\ny\n-----END "
                          "CERTIFICATE-----\n");
  absl::StatusOr<TlsPem> ok = LoadTlsPem(s);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_THAT(ok->cert_chain, HasSubstr("BEGIN CERTIFICATE"));
  EXPECT_THAT(ok->private_key, HasSubstr("BEGIN PRIVATE KEY"));
  EXPECT_EQ(ok->client_ca, "");
}

TEST(BoundedMessageTest, LongMessagesAreCutOnACharacterBoundary) {
  EXPECT_EQ(BoundedMessage("short"), "short");
  // 2047 ASCII bytes then a 2-byte "é": the cut at 2048 falls inside it, so
  // the whole character goes.
  const std::string msg = std::string(2047, 'a') + "\xc3\xa9" + "tail";
  const std::string out = BoundedMessage(msg);
  EXPECT_EQ(out, std::string(2047, 'a') +
                     "... [message truncated from 2053 bytes]");
  grpc::Status s = ToGrpcStatus(absl::InvalidArgumentError(std::string(9000, 'x')));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LT(s.error_message().size(), 2100u);
}

TEST(ServerConfigHardeningTest, NewFlagsParseAndCheckRanges) {
  std::vector<const char*> args = {
      "ridgeline-server", "--tls-cert=c.pem", "--tls-key", "k.pem",
      "--tls-client-ca=ca.pem", "--reflection=false",
      "--max-sweep-streams-per-client=3", "--max-connection-age-seconds=600"};
  bool help = false;
  absl::StatusOr<ServerConfig> c = ParseServerConfig(
      static_cast<int>(args.size()), args.data(),
      [](const char* name) -> const char* {
        return std::string(name) == "RIDGELINE_AUTH_TOKEN_FILE" ? "/t" : nullptr;
      },
      &help);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->tls.cert_path, "c.pem");
  EXPECT_EQ(c->tls.key_path, "k.pem");
  EXPECT_TRUE(c->tls.mutual());
  EXPECT_FALSE(c->reflection);
  EXPECT_EQ(c->max_sweep_streams_per_client, 3);
  EXPECT_EQ(c->max_connection_age_seconds, 600);
  EXPECT_EQ(c->auth_token_file, "/t");
  std::vector<const char*> bad = {"ridgeline-server", "--reflection=maybe"};
  absl::StatusOr<ServerConfig> b = ParseServerConfig(
      2, bad.data(), [](const char*) -> const char* { return nullptr; }, &help);
  EXPECT_THAT(b.status().message(),
              HasSubstr("--reflection: must be true or false; got \"maybe\""));
}

TEST(StreamLimiterTest, ClientIsThePeerAddressWithoutItsPort) {
  EXPECT_EQ(StreamLimiter::ClientOf("ipv4:127.0.0.1:41234"), "ipv4:127.0.0.1");
  EXPECT_EQ(StreamLimiter::ClientOf("ipv6:[::1]:5000"), "ipv6:[::1]");
  EXPECT_EQ(StreamLimiter::ClientOf("unix:/tmp/socket"), "unix:/tmp/socket");
}

}  // namespace
}  // namespace ridgeline::service
