// End-to-end tests of ridgeline-server: each test runs the real binary on
// 127.0.0.1 (ports 0) with the build tree's plugins and calls it over gRPC
// and HTTP.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpc_std.grpc.pb.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"
#include "reflection_subset.grpc.pb.h"
#include "ridgeline/v1/ridgeline.grpc.pb.h"
#include "server_process.h"

namespace ridgeline::testing {
namespace {

using ::grpc::StatusCode;
using ::ridgeline::v1::RidgelineService;
using ::testing::HasSubstr;
using Health = ::grpc::health::v1::HealthCheckResponse;

constexpr auto kStartup = std::chrono::seconds(20);

std::chrono::system_clock::time_point In(std::chrono::milliseconds d) {
  return std::chrono::system_clock::now() + d;
}

// Round-number device for hand-checkable results: one 80 GB tier at
// 1 TB/s, 1 PFLOP/s dense bf16 (and fp32 1/16 of it so fp32 work runs).
v1::Hardware RoundDevice() {
  v1::Hardware hw;
  hw.set_id("test-round-device");
  hw.set_display_name("Test round device");
  hw.mutable_peak_ops_per_second()->set_bf16(1e15);
  hw.mutable_peak_ops_per_second()->set_fp16(1e15);
  hw.mutable_peak_ops_per_second()->set_fp32(6.25e13);
  v1::MemoryTier* t = hw.add_tiers();
  t->set_name("HBM");
  t->set_kind("hbm");
  t->set_capacity_bytes(80e9);
  t->set_read_bandwidth_bytes_per_second(1e12);
  t->set_write_bandwidth_bytes_per_second(1e12);
  t->set_latency_seconds(0);
  return hw;
}

v1::AnalyzeRequest Llama2OnRoundDevice() {
  v1::AnalyzeRequest req;
  req.mutable_model()->set_catalog_id("llama-2-7b");
  *req.mutable_hardware()->mutable_description() = RoundDevice();
  req.mutable_workload()->set_batch(1);
  req.mutable_workload()->set_prompt_tokens(512);
  req.mutable_workload()->set_generated_tokens(128);
  return req;
}

class ServerTest : public ::testing::Test {
 protected:
  void Start(const std::vector<std::string>& extra = {}) {
    server_ = std::make_unique<ServerProcess>(extra);
    ASSERT_TRUE(server_->ok()) << server_->error();
    channel_ = server_->Channel();
    stub_ = RidgelineService::NewStub(channel_);
  }
  void StartServing(const std::vector<std::string>& extra = {}) {
    Start(extra);
    ASSERT_TRUE(WaitServing(channel_, kStartup));
  }
  grpc::Status Analyze(const v1::AnalyzeRequest& req,
                       v1::AnalyzeResponse* resp) {
    grpc::ClientContext ctx;
    ctx.set_deadline(In(std::chrono::seconds(30)));
    return stub_->Analyze(&ctx, req, resp);
  }
  // Runs a whole sweep; returns its final status.
  grpc::Status Sweep(const v1::SweepRequest& req,
                     std::vector<v1::SweepPoint>* points) {
    grpc::ClientContext ctx;
    ctx.set_deadline(In(std::chrono::seconds(60)));
    auto reader = stub_->Sweep(&ctx, req);
    v1::SweepPoint p;
    while (reader->Read(&p)) points->push_back(p);
    return reader->Finish();
  }
  std::string FirstPlatformId() {
    grpc::ClientContext ctx;
    v1::ListHardwareResponse resp;
    EXPECT_TRUE(stub_->ListHardware(&ctx, {}, &resp).ok());
    return resp.hardware_size() > 0 ? resp.hardware(0).id() : "";
  }

  std::unique_ptr<ServerProcess> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<RidgelineService::Stub> stub_;
};

TEST(ServerBinaryTest, HelpListsEveryFlagAndVariable) {
  std::string out;
  EXPECT_EQ(RunServerBinary({"--help"}, &out), 0);
  for (const char* s :
       {"--listen", "RIDGELINE_LISTEN", "--metrics-listen",
        "RIDGELINE_METRICS_LISTEN", "--plugin-dir", "RIDGELINE_PLUGIN_DIR",
        "--profile-dir", "RIDGELINE_PROFILE_DIR", "--max-sweep-points",
        "--max-message-bytes", "--shutdown-grace-seconds"}) {
    EXPECT_THAT(out, HasSubstr(s));
  }
}

TEST(ServerBinaryTest, BadFlagValueExitsWithFieldRangeAndValue) {
  std::string out;
  EXPECT_EQ(RunServerBinary({"--max-sweep-points=0"}, &out), 2);
  EXPECT_THAT(out, HasSubstr("--max-sweep-points"));
  EXPECT_THAT(out, HasSubstr("[1, 100000000]"));
  EXPECT_THAT(out, HasSubstr("\"0\""));
  EXPECT_EQ(RunServerBinary({"--no-such-flag"}, &out), 2);
  EXPECT_THAT(out, HasSubstr("unknown flag --no-such-flag"));
}

TEST(ServerBinaryTest, MissingProfileDirRefusesToStartNamingIt) {
  // A typo in --profile-dir must not silently serve uncalibrated numbers.
  std::string out;
  EXPECT_EQ(RunServerBinary({"--listen=127.0.0.1:0", "--metrics-listen=off",
                             "--profile-dir=/nonexistent-ridgeline-profiles"},
                            &out),
            1);
  EXPECT_THAT(out, HasSubstr("/nonexistent-ridgeline-profiles"));
  EXPECT_THAT(out, HasSubstr("does not exist"));
}

TEST_F(ServerTest, NotServingAndUnavailableUntilPluginsLoad) {
  Start({"--plugin-load-delay-ms=1500"});
  auto health = grpc::health::v1::Health::NewStub(channel_);
  {
    grpc::ClientContext ctx;
    grpc::health::v1::HealthCheckRequest req;
    Health resp;
    ASSERT_TRUE(health->Check(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.status(), Health::NOT_SERVING);
  }
  {
    grpc::ClientContext ctx;
    grpc::health::v1::HealthCheckRequest req;
    req.set_service("ridgeline.v1.RidgelineService");
    Health resp;
    ASSERT_TRUE(health->Check(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.status(), Health::NOT_SERVING);
  }
  v1::AnalyzeResponse resp;
  grpc::Status s = Analyze(Llama2OnRoundDevice(), &resp);
  EXPECT_EQ(s.error_code(), StatusCode::UNAVAILABLE) << s.error_message();
  ASSERT_TRUE(WaitServing(channel_, kStartup));
  EXPECT_TRUE(Analyze(Llama2OnRoundDevice(), &resp).ok());
}

TEST_F(ServerTest, ReflectionListsTheService) {
  StartServing();
  auto stub = grpc::reflection::v1alpha::ServerReflection::NewStub(channel_);
  grpc::ClientContext ctx;
  ctx.set_deadline(In(std::chrono::seconds(10)));
  auto stream = stub->ServerReflectionInfo(&ctx);
  grpc::reflection::v1alpha::ServerReflectionRequest req;
  req.set_list_services("");
  ASSERT_TRUE(stream->Write(req));
  stream->WritesDone();
  grpc::reflection::v1alpha::ServerReflectionResponse resp;
  ASSERT_TRUE(stream->Read(&resp));
  std::vector<std::string> names;
  for (const auto& s : resp.list_services_response().service())
    names.push_back(s.name());
  EXPECT_THAT(names, ::testing::Contains("ridgeline.v1.RidgelineService"));
  EXPECT_THAT(names, ::testing::Contains("grpc.health.v1.Health"));
  while (stream->Read(&resp)) {
  }
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_F(ServerTest, CatalogRpcs) {
  StartServing();
  {
    grpc::ClientContext ctx;
    v1::ListModelsResponse resp;
    ASSERT_TRUE(stub_->ListModels(&ctx, {}, &resp).ok());
    ASSERT_GT(resp.models_size(), 0);
    for (int i = 1; i < resp.models_size(); ++i) {
      EXPECT_LT(resp.models(i - 1).id(), resp.models(i).id()) << "sorted by id";
    }
  }
  {
    grpc::ClientContext ctx;
    v1::GetModelRequest req;
    req.set_id("llama-2-7b");
    v1::GetModelResponse resp;
    ASSERT_TRUE(stub_->GetModel(&ctx, req, &resp).ok());
    const v1::Model& m = resp.model();
    EXPECT_EQ(m.hidden_size(), 4096);
    EXPECT_EQ(m.num_layers(), 32);
    // Llama-2-7B: embedding 32000*4096 = 131,072,000 and an untied LM head
    // of the same size; per layer 4*4096^2 (q,k,v,o) = 67,108,864 +
    // 3*4096*11008 (gate,up,down) = 135,266,304 + 2*4096 norms = 202,383,360;
    // x32 = 6,476,267,520; + 2*131,072,000 + 4096 final norm
    // = 6,738,415,616.
    EXPECT_DOUBLE_EQ(m.parameters().total(), 6738415616.0);
    EXPECT_DOUBLE_EQ(m.parameters().lm_head(), 131072000.0);
    // K and V, 32 layers x 32 kv heads x 128 dims each: 2*32*32*128 = 262,144.
    EXPECT_DOUBLE_EQ(m.kv_elements_per_token(), 262144.0);
  }
  {
    grpc::ClientContext ctx;
    v1::ListHardwareResponse resp;
    ASSERT_TRUE(stub_->ListHardware(&ctx, {}, &resp).ok());
    ASSERT_GT(resp.hardware_size(), 0)
        << "no platforms from " << RIDGELINE_TEST_PLUGIN_DIR;
    ASSERT_GT(resp.plugins_size(), 0);
    const v1::Hardware& first = resp.hardware(0);
    EXPECT_FALSE(first.family().empty());
    EXPECT_FALSE(first.plugin().empty());
    EXPECT_GT(first.sources_size(), 0) << "every platform cites sources";
    EXPECT_GT(first.tiers_size(), 0);

    grpc::ClientContext ctx2;
    v1::GetHardwareRequest req;
    req.set_id(first.id());
    v1::GetHardwareResponse one;
    ASSERT_TRUE(stub_->GetHardware(&ctx2, req, &one).ok());
    EXPECT_EQ(one.hardware().SerializeAsString(), first.SerializeAsString());

    grpc::ClientContext ctx3;
    v1::ListHardwareRequest filt;
    filt.set_family(first.family());
    v1::ListHardwareResponse same_family;
    ASSERT_TRUE(stub_->ListHardware(&ctx3, filt, &same_family).ok());
    EXPECT_GT(same_family.hardware_size(), 0);
    for (const auto& h : same_family.hardware())
      EXPECT_EQ(h.family(), first.family());

    // A family no loaded platform has is a typo, not an empty answer: the
    // error names the field, the value and the families that do exist.
    grpc::ClientContext ctx4;
    v1::ListHardwareRequest typo;
    typo.set_family("nvidiaa");
    v1::ListHardwareResponse none;
    const grpc::Status bad = stub_->ListHardware(&ctx4, typo, &none);
    EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(bad.error_message().rfind("family: ", 0), 0u)
        << bad.error_message();
    EXPECT_NE(bad.error_message().find("\"nvidiaa\""), std::string::npos)
        << bad.error_message();
    for (const auto& h : resp.hardware()) {
      EXPECT_NE(bad.error_message().find(h.family()), std::string::npos)
          << h.family() << " missing from: " << bad.error_message();
    }
  }
}

TEST_F(ServerTest, AnalyzeInlineHardwareGivesHandCheckableBounds) {
  StartServing();
  v1::AnalyzeResponse resp;
  grpc::Status s = Analyze(Llama2OnRoundDevice(), &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  const v1::AnalysisResult& r = resp.result();
  EXPECT_EQ(r.model_id(), "llama-2-7b");
  EXPECT_EQ(r.hardware_id(), "test-round-device");
  EXPECT_EQ(r.matmul_math(), "bf16");
  // Ridge point: 1e15 flop/s / 1e12 B/s = 1000 flop/byte.
  EXPECT_DOUBLE_EQ(r.ridge_point_flops_per_byte(), 1000.0);
  // Weights: 6,738,415,616 params x 2 bytes (bf16) = 13,476,831,232 bytes.
  EXPECT_DOUBLE_EQ(r.memory().required_weights_bytes(), 13476831232.0);
  EXPECT_TRUE(r.memory().fits());
  // One decode step at batch 1 reads every weight except the embedding
  // table (one row): (6,738,415,616 - 131,072,000) x 2 B / 1e12 B/s
  // = 13.2147 ms, plus the KV cache of 513 tokens, 262,144 x 2 B x 513
  // = 0.269 GB -> 0.269 ms. So TPOT lies in [13.21 ms, 13.6 ms].
  EXPECT_GE(r.tpot_first_seconds(), 0.013214);
  EXPECT_LE(r.tpot_first_seconds(), 0.0136);
  EXPECT_EQ(r.bottleneck().phase().empty(), false);
  EXPECT_EQ(r.decode().phase(), "decode");
  EXPECT_EQ(r.prefill().phase(), "prefill");
  EXPECT_GT(r.prefill().ops_size(), 0);
  EXPECT_GT(r.ttft_seconds(), 0);
  // No calibration asked: the pure bound.
  EXPECT_TRUE(resp.upper_bound());
  EXPECT_EQ(resp.calibration().selected_by(), "none");
  // No price or power given: cost is unknown (unset), not zero.
  EXPECT_FALSE(r.economy().has_usd_per_million_output_tokens());
}

TEST_F(ServerTest, AnalyzeCatalogHardware) {
  StartServing();
  const std::string id = FirstPlatformId();
  ASSERT_FALSE(id.empty());
  v1::AnalyzeRequest req = Llama2OnRoundDevice();
  req.mutable_hardware()->set_platform_id(id);
  req.mutable_model()->set_catalog_id("llama-3-8b");
  v1::AnalyzeResponse bound;
  grpc::Status s = Analyze(req, &bound);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(bound.result().hardware_id(), id);
  EXPECT_EQ(bound.calibration().selected_by(), "none");
  EXPECT_TRUE(bound.upper_bound());
  EXPECT_GT(bound.result().decode_tokens_per_second_total(), 0);

  // Letting the server match a profile: if one applies, the answer is no
  // longer the bound and can only be slower (efficiencies are <= 1).
  req.mutable_calibration()->set_framework("vllm");
  v1::AnalyzeResponse cal;
  s = Analyze(req, &cal);
  ASSERT_TRUE(s.ok()) << s.error_message();
  if (cal.calibration().selected_by() == "framework-match") {
    // A vLLM build for this hardware's family (amd.vllm-rocm): no warning.
    EXPECT_NE(cal.calibration().match().find("framework \"vllm"),
              std::string::npos)
        << cal.calibration().match();
    EXPECT_TRUE(cal.calibration().warning().empty());
    EXPECT_FALSE(cal.upper_bound());
  } else if (!cal.calibration().profile_name().empty()) {
    // No vllm profile for it: a profile for this hardware fitted with
    // another framework is only a fallback, and says so.
    EXPECT_EQ(cal.calibration().selected_by(), "hardware-match");
    // ... in words, and as a warning in the result.
    EXPECT_NE(cal.calibration().match().find("only: fitted with framework"),
              std::string::npos)
        << cal.calibration().match();
    EXPECT_FALSE(cal.calibration().warning().empty());
    EXPECT_NE(std::find(cal.result().warnings().begin(),
                        cal.result().warnings().end(),
                        cal.calibration().warning()),
              cal.result().warnings().end());
    EXPECT_FALSE(cal.upper_bound());
    EXPECT_GE(cal.result().tpot_mean_seconds(),
              bound.result().tpot_mean_seconds());
  } else {
    EXPECT_EQ(cal.calibration().selected_by(), "none");
    EXPECT_FALSE(cal.calibration().warning().empty());
    EXPECT_TRUE(cal.upper_bound());
  }

  // On MI300X "vllm" finds the shipped vLLM-on-ROCm profile, not aiter-ck.
  req.mutable_hardware()->set_platform_id("amd-mi300x");
  s = Analyze(req, &cal);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(cal.calibration().profile_name(), "amd-mi300x.vllm-rocm");
  EXPECT_EQ(cal.calibration().selected_by(), "framework-match");
  EXPECT_EQ(cal.calibration().match(),
            "hardware \"amd-mi300x\" + framework \"vllm-rocm\" (asked \"vllm\")");
  EXPECT_TRUE(cal.calibration().warning().empty());
}

void ExpectInvalid(const grpc::Status& s,
                   const std::vector<std::string>& parts) {
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT) << s.error_message();
  for (const std::string& p : parts)
    EXPECT_THAT(s.error_message(), HasSubstr(p));
}

TEST_F(ServerTest, ErrorsNameFieldRangeAndValue) {
  StartServing();
  v1::AnalyzeResponse resp;
  {
    v1::AnalyzeRequest req = Llama2OnRoundDevice();
    req.mutable_workload()->set_batch(0);
    ExpectInvalid(Analyze(req, &resp),
                  {"workload.batch", "[1, 65536]", "got 0"});
  }
  {
    v1::AnalyzeRequest req = Llama2OnRoundDevice();
    req.mutable_workload()->set_generated_tokens(-5);
    ExpectInvalid(Analyze(req, &resp), {"workload.generated_tokens", "got -5"});
  }
  {
    v1::AnalyzeRequest req = Llama2OnRoundDevice();
    req.clear_model();
    ExpectInvalid(Analyze(req, &resp), {"model"});
  }
  {
    v1::AnalyzeRequest req = Llama2OnRoundDevice();
    req.mutable_parallelism()->set_tensor_parallel(0);
    ExpectInvalid(Analyze(req, &resp),
                  {"parallelism.tensor_parallel", "[1, 256]", "got 0"});
    // Llama-2-7B has 32 heads.
    req.mutable_parallelism()->set_tensor_parallel(5);
    ExpectInvalid(Analyze(req, &resp),
                  {"parallelism.tensor_parallel must divide "
                   "model.num_attention_heads (32), got 5"});
  }
  {
    v1::AnalyzeRequest req = Llama2OnRoundDevice();
    req.mutable_formats()->set_weights("int99");
    ExpectInvalid(Analyze(req, &resp), {"formats.weights", "int99"});
  }
  {
    v1::AnalyzeRequest req = Llama2OnRoundDevice();
    req.mutable_hardware()
        ->mutable_description()
        ->mutable_tiers(0)
        ->set_read_bandwidth_bytes_per_second(-1);
    ExpectInvalid(
        Analyze(req, &resp),
        {"hardware.description.tiers[0].read_bandwidth_bytes_per_second"});
  }
  {
    v1::AnalyzeRequest req = Llama2OnRoundDevice();
    req.mutable_hardware()
        ->mutable_description()
        ->mutable_tiers(0)
        ->set_inline_ecc_share(0.75);
    ExpectInvalid(Analyze(req, &resp),
                  {"hardware.description.tiers[0].inline_ecc_share", "[0, 0.5]",
                   "got 0.75"});
  }
  {
    v1::AnalyzeRequest req = Llama2OnRoundDevice();
    req.mutable_hardware()->mutable_description()->mutable_tiers(0)->set_kind(
        "tape");
    ExpectInvalid(Analyze(req, &resp),
                  {"hardware.description.tiers[0].kind", "\"tape\""});
  }
  {
    v1::AnalyzeRequest req = Llama2OnRoundDevice();
    req.mutable_placement()->set_weights_tier(3);
    ExpectInvalid(Analyze(req, &resp),
                  {"placement.weights_tier", "[0, 0]", "got 3"});
  }
  {
    v1::AnalyzeRequest req = Llama2OnRoundDevice();
    req.mutable_economics()->set_pue(0.5);
    ExpectInvalid(Analyze(req, &resp), {"economics.pue", "[1, 3]", "got 0.5"});
  }
  {
    v1::AnalyzeRequest req = Llama2OnRoundDevice();
    req.mutable_model()->set_hf_config_json("{not json");
    ExpectInvalid(Analyze(req, &resp), {"model.hf_config_json"});
  }
  {
    v1::SweepRequest req;
    *req.add_models() = Llama2OnRoundDevice().model();
    *req.add_hardware() = Llama2OnRoundDevice().hardware();
    req.set_shard_count(4);
    req.set_shard_index(4);
    std::vector<v1::SweepPoint> pts;
    ExpectInvalid(Sweep(req, &pts), {"shard_index", "[0, 3]", "got 4"});
    EXPECT_TRUE(pts.empty());
    req.set_shard_index(0);
    req.add_batch_sizes(8);
    req.add_batch_sizes(0);
    ExpectInvalid(Sweep(req, &pts), {"batch_sizes[1]", "got 0"});
  }
}

TEST_F(ServerTest, NotFoundListsClosestIds) {
  StartServing();
  v1::AnalyzeResponse resp;
  v1::AnalyzeRequest req = Llama2OnRoundDevice();
  req.mutable_model()->set_catalog_id("llama-2-7");
  grpc::Status s = Analyze(req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("llama-2-7b"));

  const std::string id = FirstPlatformId();
  req = Llama2OnRoundDevice();
  req.mutable_hardware()->set_platform_id(id + "x");
  s = Analyze(req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr(id));

  grpc::ClientContext ctx;
  v1::GetModelRequest gm;
  gm.set_id("no-such-model");
  v1::GetModelResponse gr;
  EXPECT_EQ(stub_->GetModel(&ctx, gm, &gr).error_code(), StatusCode::NOT_FOUND);

  req = Llama2OnRoundDevice();
  req.mutable_calibration()->set_profile("no-such-profile");
  EXPECT_EQ(Analyze(req, &resp).error_code(), StatusCode::NOT_FOUND);
}

TEST_F(ServerTest, UnimplementedWhenHardwareCannotRunTheMath) {
  StartServing();
  v1::AnalyzeRequest req = Llama2OnRoundDevice();
  // Only an int8 rate: bf16 matmuls have no peak at bf16 or any wider
  // float the engine falls back to (bf16 -> tf32 -> fp32 -> fp64).
  v1::PerMathType* peaks = req.mutable_hardware()
                               ->mutable_description()
                               ->mutable_peak_ops_per_second();
  peaks->Clear();
  peaks->set_int8(1e15);
  v1::AnalyzeResponse resp;
  grpc::Status s = Analyze(req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::UNIMPLEMENTED) << s.error_message();
}

TEST_F(ServerTest, HostileInputsGetErrorsNotCrashes) {
  StartServing();
  std::vector<v1::AnalyzeRequest> reqs;
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const char* json :
       {"", "null", "[]", "{}", "{\"architectures\": 5}",
        "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": -4096}",
        "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 1e400}",
        "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": "
        "9223372036854775807, "
        "\"num_hidden_layers\": 9223372036854775807, \"num_attention_heads\": "
        "1, "
        "\"intermediate_size\": 1, \"vocab_size\": 1}",
        "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
        "]]]]]]]]]]"}) {
    v1::AnalyzeRequest r = Llama2OnRoundDevice();
    r.mutable_model()->set_hf_config_json(json);
    reqs.push_back(r);
  }
  for (double bad : {0.0, -1.0, inf, nan, 1e308}) {
    v1::AnalyzeRequest r = Llama2OnRoundDevice();
    r.mutable_hardware()
        ->mutable_description()
        ->mutable_tiers(0)
        ->set_capacity_bytes(bad);
    reqs.push_back(r);
    r = Llama2OnRoundDevice();
    r.mutable_hardware()
        ->mutable_description()
        ->mutable_peak_ops_per_second()
        ->set_bf16(bad);
    reqs.push_back(r);
  }
  {
    v1::AnalyzeRequest r = Llama2OnRoundDevice();
    for (int i = 0; i < 20; ++i) {
      *r.mutable_hardware()->mutable_description()->add_tiers() =
          RoundDevice().tiers(0);
    }
    reqs.push_back(r);
    r = Llama2OnRoundDevice();
    r.mutable_hardware()->mutable_description()->clear_tiers();
    reqs.push_back(r);
    r = Llama2OnRoundDevice();
    r.mutable_workload()->set_batch(65536);
    r.mutable_workload()->set_prompt_tokens(10000000);
    r.mutable_workload()->set_generated_tokens(10000000);
    reqs.push_back(r);
    r = Llama2OnRoundDevice();
    r.mutable_options()->set_gemv_max_tokens(-1);
    reqs.push_back(r);
    r = Llama2OnRoundDevice();
    r.mutable_placement()->set_kv_cache_tier(-2147483647 - 1);
    reqs.push_back(r);
    r = Llama2OnRoundDevice();
    r.mutable_formats()->set_activations("int4-g128");
    reqs.push_back(r);
    r = Llama2OnRoundDevice();
    r.mutable_formats()->set_weights("int2-g1");
    reqs.push_back(r);
  }
  for (const v1::AnalyzeRequest& r : reqs) {
    v1::AnalyzeResponse resp;
    grpc::Status s = Analyze(r, &resp);
    EXPECT_NE(s.error_code(), StatusCode::UNAVAILABLE) << r.ShortDebugString();
    EXPECT_NE(s.error_code(), StatusCode::UNKNOWN)
        << s.error_message() << " for " << r.ShortDebugString().substr(0, 300);
    EXPECT_NE(s.error_code(), StatusCode::INTERNAL) << s.error_message();
  }
  v1::AnalyzeResponse resp;
  EXPECT_TRUE(Analyze(Llama2OnRoundDevice(), &resp).ok()) << "server survived";
  EXPECT_EQ(server_->WaitExit(std::chrono::milliseconds(1)), std::nullopt);
}

TEST_F(ServerTest, RequestSizeIsCapped) {
  StartServing({"--max-message-bytes=4096"});
  v1::AnalyzeRequest req = Llama2OnRoundDevice();
  req.mutable_model()->set_hf_config_json(std::string(8192, ' '));
  v1::AnalyzeResponse resp;
  grpc::Status s = Analyze(req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED)
      << s.error_message();
  // The server is unharmed.
  EXPECT_TRUE(Analyze(Llama2OnRoundDevice(), &resp).ok());
}

// Regression: bytes that do not parse as the request message got gRPC's
// bare UNIMPLEMENTED (unary, callback API) or INTERNAL (Sweep, sync API).
TEST_F(ServerTest, UnparsableRequestBytesAreInvalidArgument) {
  StartServing();
  grpc::GenericStub generic(channel_);
  // Field 1 (model), length-delimited, with a truncated varint length.
  const char kGarbage[] = {0x0a, static_cast<char>(0xff)};
  for (const char* method : {"/ridgeline.v1.RidgelineService/Analyze",
                             "/ridgeline.v1.RidgelineService/GetHardware",
                             "/ridgeline.v1.RidgelineService/Sweep"}) {
    grpc::ClientContext ctx;
    ctx.set_deadline(In(std::chrono::seconds(30)));
    grpc::Slice slice(kGarbage, sizeof(kGarbage));
    grpc::ByteBuffer request(&slice, 1);
    grpc::CompletionQueue cq;
    std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call =
        generic.PrepareCall(&ctx, method, &cq);
    void* tag = nullptr;
    bool ok = false;
    call->StartCall(reinterpret_cast<void*>(1));
    ASSERT_TRUE(cq.Next(&tag, &ok));
    call->Write(request, reinterpret_cast<void*>(2));
    ASSERT_TRUE(cq.Next(&tag, &ok));
    call->WritesDone(reinterpret_cast<void*>(3));
    ASSERT_TRUE(cq.Next(&tag, &ok));
    grpc::Status status;
    call->Finish(&status, reinterpret_cast<void*>(4));
    ASSERT_TRUE(cq.Next(&tag, &ok));
    EXPECT_EQ(status.error_code(), StatusCode::INVALID_ARGUMENT) << method;
    EXPECT_THAT(status.error_message(), HasSubstr("request: not a valid"));
    cq.Shutdown();
    while (cq.Next(&tag, &ok)) {
    }
  }
  // Counted under the code the client saw.
  const std::string metrics = HttpGet(server_->metrics_port(), "/metrics");
  EXPECT_EQ(
      MetricValue(metrics, "grpc_server_handled_total",
                  {"grpc_method=\"Sweep\"", "grpc_code=\"InvalidArgument\""}),
      1.0);
  v1::AnalyzeResponse resp;
  EXPECT_TRUE(Analyze(Llama2OnRoundDevice(), &resp).ok()) << "server survived";
}

TEST_F(ServerTest, SweepStreamsInStableOrderAndShards) {
  StartServing();
  v1::SweepRequest req;
  *req.add_models() = Llama2OnRoundDevice().model();
  *req.add_hardware() = Llama2OnRoundDevice().hardware();
  for (int64_t b : {1, 8, 64}) req.add_batch_sizes(b);
  for (int64_t p : {128, 1024}) req.add_prompt_tokens(p);
  req.add_generated_tokens(16);
  std::vector<v1::SweepPoint> pts;
  grpc::Status s = Sweep(req, &pts);
  ASSERT_TRUE(s.ok()) << s.error_message();
  // 1 model x 1 hw x 1 format x 3 batch x 2 prompt x 1 generated = 6.
  ASSERT_EQ(pts.size(), 6u);
  for (size_t i = 0; i < pts.size(); ++i) {
    EXPECT_EQ(pts[i].index(), i);
    EXPECT_EQ(pts[i].total_points(), 6u);
    // i = (b * 2 + p) with prompt innermost.
    EXPECT_EQ(pts[i].batch_index(), static_cast<int>(i / 2));
    EXPECT_EQ(pts[i].prompt_index(), static_cast<int>(i % 2));
    EXPECT_EQ(pts[i].summary().batch(), req.batch_sizes(i / 2));
    EXPECT_EQ(pts[i].summary().prompt_tokens(), req.prompt_tokens(i % 2));
    EXPECT_FALSE(pts[i].has_result());
    EXPECT_FALSE(pts[i].has_error());
  }
  // Larger batches amortise the weight reads: total decode tok/s grows.
  EXPECT_GT(pts[2].summary().decode_tokens_per_second_total(),
            pts[0].summary().decode_tokens_per_second_total());

  // Shard 1 of 4: indices 1 and 5.
  req.set_shard_count(4);
  req.set_shard_index(1);
  req.set_include_full_result(true);
  std::vector<v1::SweepPoint> shard;
  ASSERT_TRUE(Sweep(req, &shard).ok());
  ASSERT_EQ(shard.size(), 2u);
  EXPECT_EQ(shard[0].index(), 1u);
  EXPECT_EQ(shard[1].index(), 5u);
  EXPECT_TRUE(shard[0].has_result());
  EXPECT_DOUBLE_EQ(shard[1].summary().ttft_seconds(),
                   pts[5].summary().ttft_seconds());
}

TEST_F(ServerTest, SweepAboveCapIsResourceExhausted) {
  StartServing({"--max-sweep-points=50"});
  v1::SweepRequest req;
  *req.add_models() = Llama2OnRoundDevice().model();
  *req.add_hardware() = Llama2OnRoundDevice().hardware();
  for (int b = 1; b <= 51; ++b) req.add_batch_sizes(b);
  std::vector<v1::SweepPoint> pts;
  grpc::Status s = Sweep(req, &pts);
  EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(), HasSubstr("51 points"));
  EXPECT_THAT(s.error_message(), HasSubstr("cap of 50"));
  EXPECT_TRUE(pts.empty());
  // Sharded in two, each half is under the cap: 26 + 25.
  req.set_shard_count(2);
  EXPECT_TRUE(Sweep(req, &pts).ok());
  EXPECT_EQ(pts.size(), 26u);
}

// A sweep far longer than any test: 4096 batches x 4096 prompt lengths.
v1::SweepRequest HugeSweep() {
  v1::SweepRequest req;
  *req.add_models() = Llama2OnRoundDevice().model();
  *req.add_hardware() = Llama2OnRoundDevice().hardware();
  for (int b = 1; b <= 4096; ++b) req.add_batch_sizes(b);
  for (int p = 1; p <= 4096; ++p) req.add_prompt_tokens(p);
  req.add_generated_tokens(64);
  return req;
}

TEST_F(ServerTest, SweepHonoursDeadline) {
  StartServing({"--max-sweep-points=100000000"});
  grpc::ClientContext ctx;
  ctx.set_deadline(In(std::chrono::milliseconds(300)));
  const auto start = std::chrono::steady_clock::now();
  auto reader = stub_->Sweep(&ctx, HugeSweep());
  v1::SweepPoint p;
  int n = 0;
  while (reader->Read(&p)) ++n;
  grpc::Status s = reader->Finish();
  EXPECT_EQ(s.error_code(), StatusCode::DEADLINE_EXCEEDED);
  EXPECT_GT(n, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // The server stopped the sweep: its handled counter shows it.
  bool seen = false;
  for (int i = 0; i < 100 && !seen; ++i) {
    const std::string m = HttpGet(server_->metrics_port(), "/metrics");
    seen =
        MetricValue(m, "grpc_server_handled_total",
                    {"grpc_method=\"Sweep\"", "grpc_code=\"DeadlineExceeded\""})
                .value_or(0) +
            MetricValue(m, "grpc_server_handled_total",
                        {"grpc_method=\"Sweep\"", "grpc_code=\"Canceled\""})
                .value_or(0) >=
        1;
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(seen);
}

TEST_F(ServerTest, SweepStopsWhenClientCancels) {
  StartServing({"--max-sweep-points=100000000"});
  grpc::ClientContext ctx;
  auto reader = stub_->Sweep(&ctx, HugeSweep());
  v1::SweepPoint p;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(reader->Read(&p));
  ctx.TryCancel();
  while (reader->Read(&p)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), StatusCode::CANCELLED);
  // The server-side handler ends promptly (points stop growing) and the
  // server keeps serving.
  double before = -1, after = 0;
  for (int i = 0; i < 100; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    after = MetricValue(HttpGet(server_->metrics_port(), "/metrics"),
                        "ridgeline_sweep_points_total", {})
                .value_or(-2);
    if (after == before) break;
    before = after;
  }
  EXPECT_EQ(after, before) << "sweep kept running after cancel";
  EXPECT_LT(after, 16777216.0);
  v1::AnalyzeResponse resp;
  EXPECT_TRUE(Analyze(Llama2OnRoundDevice(), &resp).ok());
}

TEST_F(ServerTest, MetricsCountRpcsAndDomainEvents) {
  StartServing();
  const std::string before = HttpGet(server_->metrics_port(), "/metrics");
  ASSERT_FALSE(before.empty());
  // Every method x code exists at zero before any call.
  EXPECT_EQ(MetricValue(before, "grpc_server_handled_total",
                        {"grpc_method=\"GetModel\"", "grpc_code=\"DataLoss\"",
                         "grpc_service=\"ridgeline.v1.RidgelineService\"",
                         "grpc_type=\"unary\""}),
            0.0);
  EXPECT_EQ(
      MetricValue(before, "grpc_server_started_total",
                  {"grpc_method=\"Sweep\"", "grpc_type=\"server_stream\""}),
      0.0);
  EXPECT_EQ(MetricValue(before, "ridgeline_build_info", {"version=\""}), 1.0);
  for (const char* by : {"profile", "framework-match", "hardware-match", "none"}) {
    EXPECT_EQ(MetricValue(before, "ridgeline_calibration_selections_total",
                          {absl::StrCat("selected_by=\"", by, "\"")}),
              0.0)
        << by;
  }
  // ListHardware counts loaded plugins the same way the gauge does.
  grpc::ClientContext lctx;
  v1::ListHardwareResponse list;
  ASSERT_TRUE(stub_->ListHardware(&lctx, {}, &list).ok());
  int loaded = 0;
  for (const auto& pi : list.plugins()) loaded += pi.loaded() ? 1 : 0;
  EXPECT_EQ(MetricValue(before, "ridgeline_plugins_loaded", {}), loaded);
  EXPECT_GE(MetricValue(before, "ridgeline_plugin_loads_total",
                        {"outcome=\"loaded\""})
                .value_or(0),
            1);

  v1::AnalyzeResponse resp;
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(Analyze(Llama2OnRoundDevice(), &resp).ok());
  v1::AnalyzeRequest bad = Llama2OnRoundDevice();
  bad.mutable_workload()->set_batch(0);
  EXPECT_FALSE(Analyze(bad, &resp).ok());
  v1::SweepRequest sweep;
  *sweep.add_models() = Llama2OnRoundDevice().model();
  *sweep.add_hardware() = Llama2OnRoundDevice().hardware();
  for (int64_t b : {1, 2, 4, 8}) sweep.add_batch_sizes(b);
  std::vector<v1::SweepPoint> pts;
  ASSERT_TRUE(Sweep(sweep, &pts).ok());

  const std::string after = HttpGet(server_->metrics_port(), "/metrics");
  const std::vector<std::string> analyze = {
      "grpc_method=\"Analyze\"",
      "grpc_service=\"ridgeline.v1.RidgelineService\""};
  // 3 good + 1 bad Analyze calls.
  EXPECT_EQ(MetricValue(after, "grpc_server_started_total", analyze), 4.0);
  auto with = [](std::vector<std::string> v, std::string l) {
    v.push_back(std::move(l));
    return v;
  };
  EXPECT_EQ(MetricValue(after, "grpc_server_handled_total",
                        with(analyze, "grpc_code=\"OK\"")),
            3.0);
  EXPECT_EQ(MetricValue(after, "grpc_server_handled_total",
                        with(analyze, "grpc_code=\"InvalidArgument\"")),
            1.0);
  EXPECT_EQ(MetricValue(after, "grpc_server_handling_seconds_count", analyze),
            4.0);
  // The rejected request never reached the engine: 3 analyses.
  EXPECT_EQ(
      MetricValue(after, "ridgeline_analyses_total", {"kind=\"analyze\""}),
      3.0);
  EXPECT_EQ(MetricValue(after, "ridgeline_analyses_total", {"kind=\"sweep\""}),
            4.0);
  EXPECT_EQ(MetricValue(after, "ridgeline_sweep_points_total", {}), 4.0);
  EXPECT_EQ(MetricValue(after, "ridgeline_engine_seconds_count", {}), 7.0);
  EXPECT_EQ(MetricValue(after, "grpc_server_handled_total",
                        {"grpc_method=\"Sweep\"", "grpc_code=\"OK\""}),
            1.0);
  // No calibration asked: 3 Analyze calls + 1 sweep hardware entry chose
  // "none" (the rejected request failed before choosing).
  EXPECT_EQ(MetricValue(after, "ridgeline_calibration_selections_total",
                        {"selected_by=\"none\""}),
            4.0);
}

TEST_F(ServerTest, SigtermDrainsInFlightStreamAndExitsZero) {
  StartServing({"--shutdown-grace-seconds=30"});
  // Size a sweep to run for roughly a second on this machine.
  v1::SweepRequest probe = HugeSweep();
  probe.clear_batch_sizes();
  probe.add_batch_sizes(1);
  probe.clear_prompt_tokens();
  for (int p = 1; p <= 200; ++p) probe.add_prompt_tokens(p);
  std::vector<v1::SweepPoint> pts;
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(Sweep(probe, &pts).ok());
  const double per_point =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count() /
      200;
  const int n = std::clamp(static_cast<int>(1.0 / per_point), 200, 4096);
  probe.clear_prompt_tokens();
  for (int p = 1; p <= n; ++p) probe.add_prompt_tokens(p);

  auto health = grpc::health::v1::Health::NewStub(channel_);
  grpc::ClientContext wctx;
  wctx.set_deadline(In(std::chrono::seconds(30)));
  auto watch = health->Watch(&wctx, grpc::health::v1::HealthCheckRequest());
  Health h;
  ASSERT_TRUE(watch->Read(&h));
  EXPECT_EQ(h.status(), Health::SERVING);

  grpc::ClientContext ctx;
  ctx.set_deadline(In(std::chrono::seconds(60)));
  auto reader = stub_->Sweep(&ctx, probe);
  v1::SweepPoint p;
  ASSERT_TRUE(reader->Read(&p));
  server_->Signal(SIGTERM);
  // Health flips to NOT_SERVING (or the watch ends with the server).
  bool not_serving = false;
  while (watch->Read(&h)) {
    if (h.status() == Health::NOT_SERVING) {
      not_serving = true;
      break;
    }
  }
  EXPECT_TRUE(not_serving);
  wctx.TryCancel();
  watch->Finish();
  int received = 1;
  while (reader->Read(&p)) ++received;
  grpc::Status s = reader->Finish();
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(received, n) << "the in-flight sweep was drained completely";
  EXPECT_EQ(server_->WaitExit(std::chrono::seconds(30)), 0);
}

TEST_F(ServerTest, SigtermCancelsStreamsPastTheGracePeriod) {
  StartServing(
      {"--shutdown-grace-seconds=0.5", "--max-sweep-points=100000000"});
  grpc::ClientContext ctx;
  auto reader = stub_->Sweep(&ctx, HugeSweep());
  v1::SweepPoint p;
  ASSERT_TRUE(reader->Read(&p));
  const auto start = std::chrono::steady_clock::now();
  server_->Signal(SIGTERM);
  while (reader->Read(&p)) {
  }
  EXPECT_FALSE(reader->Finish().ok());
  EXPECT_EQ(server_->WaitExit(std::chrono::seconds(20)), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

namespace kernel_tests {

using ::ridgeline::v1::AnalyzeKernelRequest;
using ::ridgeline::v1::AnalyzeKernelResponse;

class KernelTest : public ServerTest {
 protected:
  grpc::Status Kernel(const AnalyzeKernelRequest& req,
                      AnalyzeKernelResponse* resp) {
    grpc::ClientContext ctx;
    ctx.set_deadline(In(std::chrono::seconds(30)));
    return stub_->AnalyzeKernel(&ctx, req, resp);
  }
};

// Batch 1, 32 heads (MHA), head_dim 128, KV 4096, fp16.
AnalyzeKernelRequest Attention4096(const v1::Hardware& hw) {
  AnalyzeKernelRequest req;
  v1::DecodeAttentionKernelShape* a = req.mutable_decode_attention();
  a->set_batch(1);
  a->set_num_q_heads(32);
  a->set_num_kv_heads(32);
  a->set_head_dim(128);
  a->set_kv_length(4096);
  a->set_dtype("fp16");
  *req.mutable_hardware()->mutable_description() = hw;
  return req;
}

TEST_F(KernelTest, DecodeAttentionBoundByHand) {
  StartServing();
  AnalyzeKernelResponse resp;
  grpc::Status s = Kernel(Attention4096(RoundDevice()), &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.kernel(), "decode_attention");
  EXPECT_EQ(resp.op_class(), "attention");
  EXPECT_EQ(resp.hardware_id(), "test-round-device");
  const v1::KernelCost& b = resp.bound();
  // FLOPs = batch 1 x 32 heads x 4096 tokens x (4 x 128 + 5 softmax) =
  // 67,764,224.
  EXPECT_DOUBLE_EQ(b.flops(), 67764224.0);
  // K and V: 2 x 32 x 4096 x 128 x 2 B = 67,108,864 B; q read and output
  // written: 32 x 128 x 2 B = 8,192 B each -> 67,125,248 B.
  EXPECT_DOUBLE_EQ(b.bytes(), 67125248.0);
  // 67,125,248 B / 1e12 B/s = 67.125248 us; compute 67,764,224 / 1e15
  // = 67.8 ns: memory-bound, no overhead under the bound.
  EXPECT_NEAR(b.memory_seconds(), 67.125248e-6, 1e-12);
  EXPECT_NEAR(b.compute_seconds(), 67.764224e-9, 1e-15);
  EXPECT_DOUBLE_EQ(b.overhead_seconds(), 0);
  EXPECT_NEAR(b.seconds(), 67.125248e-6, 1e-12);
  EXPECT_EQ(b.bound(), "memory");
  EXPECT_EQ(b.math(), "fp16");
  EXPECT_EQ(b.tier(), 0);
  EXPECT_EQ(b.tier_name(), "HBM");
  EXPECT_FALSE(b.onchip_resident());
  // 67,764,224 / 67,125,248 B = 1.009519 FLOP/B.
  EXPECT_NEAR(b.intensity(), 1.009519, 1e-6);
  // No calibration asked: the prediction is the bound.
  EXPECT_TRUE(resp.upper_bound());
  EXPECT_TRUE(resp.compute_roof_known());
  EXPECT_EQ(resp.calibration().selected_by(), "none");
  EXPECT_DOUBLE_EQ(resp.result().seconds(), b.seconds());
}

TEST_F(KernelTest, DecodeAttentionOnCatalogH100) {
  StartServing();
  AnalyzeKernelRequest req = Attention4096(RoundDevice());
  req.mutable_hardware()->set_platform_id("nvidia-h100-sxm-80gb");
  AnalyzeKernelResponse resp;
  grpc::Status s = Kernel(req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  // H100 SXM HBM3 3.352 TB/s (the plugin's cited figure): 67,125,248 B /
  // 3.352e12 B/s = 20.025 us; 67.1 MB does not fit in an on-chip tier.
  EXPECT_NEAR(resp.bound().seconds(), 20.025e-6, 0.01e-6);
  EXPECT_EQ(resp.bound().bound(), "memory");
}

TEST_F(KernelTest, AFrameworkWithKernelTablesGetsTheKernelModel) {
  StartServing();
  AnalyzeKernelRequest req = Attention4096(RoundDevice());
  req.mutable_hardware()->set_platform_id("nvidia-h100-sxm-80gb");
  req.set_warm_cache(false);
  req.mutable_calibration()->set_framework("tensorrt-llm");
  AnalyzeKernelResponse resp;
  grpc::Status s = Kernel(req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  // profiles/kernels/nvidia-h100-sxm-80gb.tensorrt-llm.json, fitted on
  // TensorRT-LLM's measured H100 decode-attention calls: every call pays
  // their per-call floor (the smallest measured call is 5.6 us), which the
  // end-to-end profile of the same name does not charge.
  EXPECT_EQ(resp.calibration().profile_name(), "nvidia-h100-sxm-80gb.tensorrt-llm");
  EXPECT_EQ(resp.calibration().selected_by(), "framework-match");
  EXPECT_GT(resp.result().overhead_seconds(), 5e-6);
  EXPECT_GT(resp.result().seconds(), resp.bound().seconds());
  // Another runtime has no kernel table: its end-to-end profile, as before.
  req.mutable_calibration()->set_framework("flashinfer");
  ASSERT_TRUE(Kernel(req, &resp).ok());
  EXPECT_NE(resp.calibration().profile_name(), "nvidia-h100-sxm-80gb.tensorrt-llm");
}

TEST_F(KernelTest, WarmCacheKeepsSmallKvOnChip) {
  StartServing();
  // 100 MB SRAM at 10 TB/s in front of the 1 TB/s HBM.
  v1::Hardware hw = RoundDevice();
  v1::MemoryTier hbm = hw.tiers(0);
  hw.clear_tiers();
  v1::MemoryTier* sram = hw.add_tiers();
  sram->set_name("L2");
  sram->set_kind("sram");
  sram->set_capacity_bytes(100e6);
  sram->set_read_bandwidth_bytes_per_second(10e12);
  sram->set_write_bandwidth_bytes_per_second(10e12);
  *hw.add_tiers() = hbm;
  AnalyzeKernelRequest req = Attention4096(hw);
  req.mutable_decode_attention()->set_kv_length(1024);
  AnalyzeKernelResponse warm, cold;
  ASSERT_TRUE(Kernel(req, &warm).ok());
  req.set_warm_cache(false);
  ASSERT_TRUE(Kernel(req, &cold).ok());
  // KV: 2 x 32 x 1024 x 128 x 2 B = 16,777,216 B; + q and output 8,192 B
  // each = 16,793,600 B, which fits the 100 MB L2: 16,793,600 / 1e13
  // = 1.67936 us warm, / 1e12 = 16.7936 us cold.
  EXPECT_DOUBLE_EQ(warm.bound().bytes(), 16793600.0);
  EXPECT_TRUE(warm.bound().onchip_resident());
  EXPECT_EQ(warm.bound().tier_name(), "L2");
  EXPECT_NEAR(warm.bound().seconds(), 1.67936e-6, 1e-12);
  EXPECT_FALSE(cold.bound().onchip_resident());
  EXPECT_EQ(cold.bound().tier(), 1);
  EXPECT_NEAR(cold.bound().seconds(), 16.7936e-6, 1e-12);
}

TEST_F(KernelTest, GemmByHand) {
  StartServing();
  AnalyzeKernelRequest req;
  req.mutable_gemm()->set_m(1);
  req.mutable_gemm()->set_n(4096);
  req.mutable_gemm()->set_k(4096);
  *req.mutable_hardware()->mutable_description() = RoundDevice();
  AnalyzeKernelResponse resp;
  grpc::Status s = Kernel(req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.kernel(), "gemm");
  // m = 1 <= 64 tokens: a GEMV.
  EXPECT_EQ(resp.op_class(), "gemv");
  // FLOPs 2 x 1 x 4096 x 4096 = 33,554,432. Bytes (fp16 default): A 4096 x
  // 2 = 8,192 + B 4096 x 4096 x 2 = 33,554,432 + C 8,192 = 33,570,816;
  // / 1e12 B/s = 33.570816 us.
  EXPECT_DOUBLE_EQ(resp.bound().flops(), 33554432.0);
  EXPECT_DOUBLE_EQ(resp.bound().bytes(), 33570816.0);
  EXPECT_NEAR(resp.bound().seconds(), 33.570816e-6, 1e-12);
  EXPECT_EQ(resp.bound().bound(), "memory");
  // m = 65536 rows: 2 x 65536 x 4096 x 4096 = 2.199e12 FLOPs / 1e15 =
  // 2.199 ms against (512 MiB A + 32 MiB B + 512 MiB C) / 1e12 = 1.107 ms:
  // compute-bound, a GEMM.
  req.mutable_gemm()->set_m(65536);
  ASSERT_TRUE(Kernel(req, &resp).ok());
  EXPECT_EQ(resp.op_class(), "gemm");
  EXPECT_EQ(resp.bound().bound(), "compute");
  EXPECT_NEAR(resp.bound().seconds(), 2.199023255552e-3, 1e-12);
}

TEST_F(KernelTest, CalibratedTimeBesideTheBound) {
  StartServing();
  AnalyzeKernelRequest req = Attention4096(RoundDevice());
  // any.flashinfer: fitted on the FlashInfer decode-kernel rows, for any
  // hardware; its memory efficiency is < 1 and it adds a per-kernel
  // overhead.
  req.mutable_calibration()->set_profile("any.flashinfer");
  AnalyzeKernelResponse resp;
  grpc::Status s = Kernel(req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.calibration().profile_name(), "any.flashinfer");
  EXPECT_EQ(resp.calibration().selected_by(), "profile");
  EXPECT_FALSE(resp.upper_bound());
  // The bound is unchanged by calibration (67.125248 us, above).
  EXPECT_NEAR(resp.bound().seconds(), 67.125248e-6, 1e-12);
  EXPECT_GT(resp.result().memory_seconds(), resp.bound().memory_seconds());
  EXPECT_GT(resp.result().overhead_seconds(), 0);
  EXPECT_NEAR(resp.result().seconds(),
              resp.result().memory_seconds() + resp.result().overhead_seconds(),
              1e-12);
  // pure_roofline: the profile is validated but not applied.
  req.set_pure_roofline(true);
  ASSERT_TRUE(Kernel(req, &resp).ok());
  EXPECT_TRUE(resp.upper_bound());
  EXPECT_DOUBLE_EQ(resp.result().seconds(), resp.bound().seconds());
}

TEST_F(KernelTest, ErrorsNameFieldRangeAndValue) {
  StartServing();
  AnalyzeKernelResponse resp;
  AnalyzeKernelRequest req = Attention4096(RoundDevice());
  req.mutable_decode_attention()->set_batch(0);
  ExpectInvalid(Kernel(req, &resp),
                {"decode_attention.batch", "[1, 65536]", "0"});
  req = Attention4096(RoundDevice());
  req.mutable_decode_attention()->set_num_kv_heads(5);
  ExpectInvalid(Kernel(req, &resp),
                {"decode_attention.num_q_heads", "multiple of", "32"});
  req = Attention4096(RoundDevice());
  req.mutable_decode_attention()->set_head_dim(2048);
  ExpectInvalid(Kernel(req, &resp),
                {"decode_attention.head_dim", "[1, 1024]", "2048"});
  req = Attention4096(RoundDevice());
  req.mutable_decode_attention()->set_dtype("fp7");
  ExpectInvalid(Kernel(req, &resp), {"decode_attention.dtype", "fp7"});
  req.clear_decode_attention();
  ExpectInvalid(Kernel(req, &resp), {"shape", "decode_attention or gemm"});
  req.mutable_gemm()->set_m(0);
  req.mutable_gemm()->set_n(1);
  req.mutable_gemm()->set_k(1);
  ExpectInvalid(Kernel(req, &resp), {"gemm.m", "[1, 10000000]", "0"});
  req.mutable_gemm()->set_m(1);
  req.mutable_gemm()->set_a_format("int4-g128");
  ExpectInvalid(Kernel(req, &resp), {"gemm.a_format", "native math"});
  req.mutable_gemm()->clear_a_format();
  req.set_gemv_max_tokens(-1);
  ExpectInvalid(Kernel(req, &resp), {"gemv_max_tokens", "[0, 65536]", "-1"});
  req.clear_gemv_max_tokens();
  req.clear_hardware();
  ExpectInvalid(Kernel(req, &resp), {"hardware", "platform_id"});
  req.mutable_hardware()->set_platform_id("nvidia-h100-sxm-80g");
  grpc::Status s = Kernel(req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("nvidia-h100-sxm-80gb"));
}

TEST_F(KernelTest, MetricsCoverTheNewRpc) {
  StartServing();
  const std::string before = HttpGet(server_->metrics_port(), "/metrics");
  const std::vector<std::string> kernel = {
      "grpc_method=\"AnalyzeKernel\"",
      "grpc_service=\"ridgeline.v1.RidgelineService\"", "grpc_type=\"unary\""};
  // Pre-created at zero for every code, like every other method.
  auto with = [](std::vector<std::string> v, std::string l) {
    v.push_back(std::move(l));
    return v;
  };
  EXPECT_EQ(MetricValue(before, "grpc_server_handled_total",
                        with(kernel, "grpc_code=\"InvalidArgument\"")),
            0.0);
  EXPECT_EQ(
      MetricValue(before, "ridgeline_analyses_total", {"kind=\"kernel\""}),
      0.0);
  AnalyzeKernelResponse resp;
  ASSERT_TRUE(Kernel(Attention4096(RoundDevice()), &resp).ok());
  ASSERT_TRUE(Kernel(Attention4096(RoundDevice()), &resp).ok());
  AnalyzeKernelRequest bad = Attention4096(RoundDevice());
  bad.mutable_decode_attention()->set_kv_length(0);
  EXPECT_FALSE(Kernel(bad, &resp).ok());
  const std::string after = HttpGet(server_->metrics_port(), "/metrics");
  EXPECT_EQ(MetricValue(after, "grpc_server_started_total", kernel), 3.0);
  EXPECT_EQ(MetricValue(after, "grpc_server_handled_total",
                        with(kernel, "grpc_code=\"OK\"")),
            2.0);
  EXPECT_EQ(MetricValue(after, "grpc_server_handled_total",
                        with(kernel, "grpc_code=\"InvalidArgument\"")),
            1.0);
  // The rejected shape never reached the kernel model.
  EXPECT_EQ(MetricValue(after, "ridgeline_analyses_total", {"kind=\"kernel\""}),
            2.0);
}

}  // namespace kernel_tests

TEST_F(ServerTest, BasicViewDropsOnlyThePerOpTables) {
  StartServing();
  v1::AnalyzeRequest req = Llama2OnRoundDevice();
  // Board power but no price: energy and carbon are partial, and say so.
  req.mutable_hardware()->mutable_description()->set_tdp_watts(700);
  v1::AnalyzeResponse full, basic, unspecified;
  req.set_view(v1::ANALYSIS_VIEW_FULL);
  ASSERT_TRUE(Analyze(req, &full).ok());
  req.set_view(v1::ANALYSIS_VIEW_UNSPECIFIED);
  ASSERT_TRUE(Analyze(req, &unspecified).ok());
  req.set_view(v1::ANALYSIS_VIEW_BASIC);
  ASSERT_TRUE(Analyze(req, &basic).ok());
  // UNSPECIFIED is FULL.
  EXPECT_EQ(unspecified.SerializeAsString(), full.SerializeAsString());
  // BASIC is FULL with every step's ops cleared, nothing else.
  v1::AnalyzeResponse stripped = full;
  v1::AnalysisResult* r = stripped.mutable_result();
  for (v1::StepResult* step :
       {r->mutable_prefill(), r->mutable_decode(),
        r->mutable_decode_first_step(), r->mutable_decode_last_step()}) {
    EXPECT_GT(step->ops_size(), 0);
    step->clear_ops();
  }
  EXPECT_EQ(basic.SerializeAsString(), stripped.SerializeAsString());
  EXPECT_LT(basic.ByteSizeLong() * 4, full.ByteSizeLong());
  EXPECT_THAT(full.result().economy().note(),
              HasSubstr("price unknown: $/Mtoken counts energy only"));
  EXPECT_THAT(full.result().economy().note(),
              HasSubstr("energy from board power x time: an upper bound"));
  EXPECT_TRUE(full.result().compute_roof_known());

  req.set_view(static_cast<v1::AnalysisView>(7));
  v1::AnalyzeResponse bad;
  ExpectInvalid(Analyze(req, &bad), {"view", "ANALYSIS_VIEW_BASIC", "7"});
}

TEST_F(ServerTest, ComputeRoofUnknownIsReported) {
  StartServing();
  v1::AnalyzeRequest req = Llama2OnRoundDevice();
  // A device that publishes bandwidth but no compute peak at all.
  req.mutable_hardware()
      ->mutable_description()
      ->mutable_peak_ops_per_second()
      ->Clear();
  v1::AnalyzeResponse resp;
  grpc::Status s = Analyze(req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_FALSE(resp.result().compute_roof_known());
  EXPECT_DOUBLE_EQ(resp.result().ridge_point_flops_per_byte(), 0);
  // The memory roof still bounds decode: the 13.21 ms of weight reads
  // derived in AnalyzeInlineHardwareGivesHandCheckableBounds.
  EXPECT_GE(resp.result().tpot_first_seconds(), 0.013214);
}

}  // namespace
}  // namespace ridgeline::testing
