// Backend without a network: inline hardware, an empty plugin registry and
// hand-made profiles.
#include "ridgeline/service/backend.h"

#include <cmath>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/ranges.h"
#include "ridgeline/service/convert.h"
#include "ridgeline/service/request_scenario.h"

namespace ridgeline::service {
namespace {

using ::testing::HasSubstr;

v1::Hardware Device() {
  v1::Hardware hw;
  hw.set_id("unit-device");
  hw.mutable_peak_ops_per_second()->set_bf16(2e14);
  hw.mutable_peak_ops_per_second()->set_fp32(2e13);
  v1::MemoryTier* t = hw.add_tiers();
  t->set_name("DRAM");
  t->set_kind("lpddr");
  t->set_capacity_bytes(64e9);
  t->set_read_bandwidth_bytes_per_second(4e11);
  t->set_write_bandwidth_bytes_per_second(4e11);
  return hw;
}

class BackendTest : public ::testing::Test {
 protected:
  BackendTest() {
    calibration::Profile p;
    p.name = "unit-device.vllm";
    p.hardware_id = "unit-device";
    p.framework = "vllm";
    p.efficiency.memory = {0.5, 0.5, 0.5, 0.5};
    p.efficiency.profile_name = p.name;
    p.fitted_from = "unit test";
    calibration::Profile other = p;
    other.name = "other-device.vllm";
    other.hardware_id = "other-device";
    other.efficiency.profile_name = other.name;
    Limits limits;
    limits.max_sweep_points = 10;
    backend_ = std::make_unique<Backend>(
        plugin_host::HardwareRegistry::LoadFiles({}),
        calibration::ProfileStore::FromProfiles({p, other}), limits);
  }
  v1::AnalyzeRequest Request() const {
    v1::AnalyzeRequest r;
    r.mutable_model()->set_catalog_id("llama-2-7b");
    *r.mutable_hardware()->mutable_description() = Device();
    r.mutable_workload()->set_prompt_tokens(256);
    r.mutable_workload()->set_generated_tokens(8);
    r.mutable_options()->set_suggestions(false);
    return r;
  }
  std::unique_ptr<Backend> backend_;
};

TEST(BackendProfileTest, FrameworkNumericsComeWithAMatchingProfileOnly) {
  // A hand-made profile whose framework accumulates fp16 in fp16, on a
  // device with fp16 2e14 and fp16-acc16 4e14 (illustrative values).
  calibration::Profile p;
  p.name = "unit-device.acc16-runtime";
  p.hardware_id = "unit-device";
  p.framework = "acc16-runtime";
  p.fp16_accumulation = true;
  p.fitted_from = "unit test";
  // "vllm" must be a known framework (one some profile is fitted with) to
  // be asked for at all: fitted on other hardware only.
  calibration::Profile elsewhere = p;
  elsewhere.name = "other-device.vllm";
  elsewhere.hardware_id = "other-device";
  elsewhere.framework = "vllm";
  elsewhere.fp16_accumulation = false;
  Backend backend(plugin_host::HardwareRegistry::LoadFiles({}),
                  calibration::ProfileStore::FromProfiles({p, elsewhere}),
                  Limits());
  v1::AnalyzeRequest req;
  req.mutable_model()->set_catalog_id("llama-2-7b");
  v1::Hardware hw = Device();
  hw.mutable_peak_ops_per_second()->set_fp16(2e14);
  hw.mutable_peak_ops_per_second()->set_fp16_acc16(4e14);
  *req.mutable_hardware()->mutable_description() = hw;
  for (auto* f : {req.mutable_formats()->mutable_weights(),
                  req.mutable_formats()->mutable_activations(),
                  req.mutable_formats()->mutable_kv_cache()}) {
    *f = "fp16";
  }
  req.mutable_options()->set_suggestions(false);
  auto run = [&](const std::string& framework) {
    req.mutable_calibration()->set_framework(framework);
    absl::StatusOr<v1::AnalyzeResponse> r = backend.Analyze(req);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : v1::AnalyzeResponse();
  };
  // Its own framework (with a version): the profile and its numerics.
  v1::AnalyzeResponse own = run("acc16-runtime-2.0");
  EXPECT_EQ(own.calibration().selected_by(), "framework-match");
  EXPECT_EQ(own.result().matmul_math(), "fp16-acc16");
  // Another framework: the same hardware's profile as a fallback, said so,
  // without the other framework's fp16 accumulation.
  v1::AnalyzeResponse other = run("vllm");
  EXPECT_EQ(other.calibration().profile_name(), "unit-device.acc16-runtime");
  EXPECT_EQ(other.calibration().selected_by(), "hardware-match");
  EXPECT_EQ(other.result().matmul_math(), "fp16");
  // The request's own setting wins.
  req.mutable_options()->set_fp16_accumulation(false);
  EXPECT_EQ(run("acc16-runtime").result().matmul_math(), "fp16");
  // A framework no profile is fitted with (issue 20 item 4: was accepted
  // with a warning): INVALID_ARGUMENT naming the field, listing the known.
  req.mutable_calibration()->set_framework("vllmm");
  absl::Status s = backend.Analyze(req).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(engine::FieldPathOf(s), "calibration.framework");
  EXPECT_THAT(s.message(), HasSubstr("(acc16-runtime, vllm;"));
  EXPECT_THAT(s.message(), HasSubstr("got \"vllmm\""));
}

TEST_F(BackendTest, InlineHardwareRoundTrips) {
  absl::StatusOr<engine::Hardware> hw =
      request::FromProto(Device(), "hardware.description");
  ASSERT_TRUE(hw.ok()) << hw.status();
  EXPECT_EQ(hw->family, "inline");
  EXPECT_EQ(hw->tiers[0].kind, engine::TierKind::kLpddr);
  v1::Hardware back;
  ToProto(*hw, &back);
  EXPECT_EQ(back.tiers(0).kind(), "lpddr");
  EXPECT_DOUBLE_EQ(back.peak_ops_per_second().bf16(), 2e14);
  EXPECT_FALSE(back.peak_ops_per_second().has_fp8()) << "unset stays unset";
}

// Inline hardware follows the plugin ABI's rules: write bandwidth 0 means
// "same as read" (4e11 B/s here), and a bandwidth too small for a finite
// step time is INVALID_ARGUMENT naming the field, not an infinite answer.
TEST_F(BackendTest, InlineHardwareFollowsThePluginRules) {
  v1::Hardware hw = Device();
  hw.mutable_tiers(0)->set_write_bandwidth_bytes_per_second(0);
  absl::StatusOr<engine::Hardware> e =
      request::FromProto(hw, "hardware.description");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->tiers[0].write_bandwidth_bytes_per_second, 4e11);

  v1::AnalyzeRequest req = Request();
  req.mutable_hardware()->mutable_description()->mutable_tiers(0)
      ->set_read_bandwidth_bytes_per_second(1e-310);
  absl::StatusOr<v1::AnalyzeResponse> r = backend_->Analyze(req);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("hardware.description.tiers[0].read_bandwidth_bytes_"
                        "per_second must be at least 1 B/s"));
}

// The service's ranges are the engine's (engine/ranges.h): a pue the engine
// accepts is one the service accepts, and both name [1, 3].
TEST_F(BackendTest, RangesAreTheEngines) {
  v1::AnalyzeRequest req = Request();
  req.mutable_economics()->set_pue(3);
  EXPECT_TRUE(backend_->Analyze(req).ok());
  req.mutable_economics()->set_pue(3.5);
  absl::StatusOr<v1::AnalyzeResponse> r = backend_->Analyze(req);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("economics.pue"));
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr(absl::StrCat("[", engine::ranges::kPue.lo, ", ",
                                     engine::ranges::kPue.hi, "]")));
}

TEST_F(BackendTest, AnalyzeRidgePointAndProfileChoice) {
  absl::StatusOr<v1::AnalyzeResponse> r = backend_->Analyze(Request());
  ASSERT_TRUE(r.ok()) << r.status();
  // 2e14 flop/s / 4e11 B/s = 500 flop/byte.
  EXPECT_DOUBLE_EQ(r->result().ridge_point_flops_per_byte(), 500.0);
  EXPECT_TRUE(r->upper_bound());

  v1::AnalyzeRequest req = Request();
  req.mutable_calibration()->set_framework("vllm-0.6.3");
  absl::StatusOr<v1::AnalyzeResponse> cal = backend_->Analyze(req);
  ASSERT_TRUE(cal.ok()) << cal.status();
  EXPECT_EQ(cal->calibration().profile_name(), "unit-device.vllm");
  EXPECT_EQ(cal->calibration().selected_by(), "framework-match");
  EXPECT_FALSE(cal->upper_bound());
  // Memory efficiency 0.5 on a memory-bound decode: strictly slower.
  EXPECT_GT(cal->result().tpot_mean_seconds(), r->result().tpot_mean_seconds());

  // pure_roofline wins over calibration: the bound, no profile reported.
  req.mutable_options()->set_pure_roofline(true);
  absl::StatusOr<v1::AnalyzeResponse> pure = backend_->Analyze(req);
  ASSERT_TRUE(pure.ok()) << pure.status();
  EXPECT_EQ(pure->calibration().selected_by(), "none");
  EXPECT_TRUE(pure->upper_bound());
  EXPECT_DOUBLE_EQ(pure->result().tpot_mean_seconds(),
                   r->result().tpot_mean_seconds());
  req.mutable_options()->clear_pure_roofline();

  req.mutable_calibration()->set_profile("other-device.vllm");
  absl::StatusOr<v1::AnalyzeResponse> wrong = backend_->Analyze(req);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong.status().message(), HasSubstr("calibration.profile"));
  EXPECT_THAT(wrong.status().message(), HasSubstr("other-device"));
}

TEST_F(BackendTest, CatalogIdWithEmptyRegistryIsNotFound) {
  v1::AnalyzeRequest req = Request();
  req.mutable_hardware()->set_platform_id("nvidia-h100-sxm-80gb");
  absl::StatusOr<v1::AnalyzeResponse> r = backend_->Analyze(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("hardware.platform_id"));
}

TEST_F(BackendTest, OversizedStringsAreTruncatedInErrors) {
  v1::AnalyzeRequest req = Request();
  req.mutable_model()->set_catalog_id(std::string(100000, 'x'));
  absl::StatusOr<v1::AnalyzeResponse> r = backend_->Analyze(req);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("model.catalog_id"));
  EXPECT_THAT(r.status().message(), HasSubstr("(100000 chars)"));
  EXPECT_LT(r.status().message().size(), 400u);
}

TEST_F(BackendTest, NanIsRejected) {
  v1::AnalyzeRequest req = Request();
  req.mutable_economics()->set_utilization(std::nan(""));
  absl::StatusOr<v1::AnalyzeResponse> r = backend_->Analyze(req);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("economics.utilization"));
}

v1::SweepRequest SmallSweep() {
  v1::SweepRequest s;
  s.add_models()->set_catalog_id("llama-2-7b");
  *s.add_hardware()->mutable_description() = Device();
  for (int64_t b : {1, 2}) s.add_batch_sizes(b);
  for (int64_t g : {4, 8}) s.add_generated_tokens(g);
  v1::Formats* f = s.add_formats();
  f->set_weights("bf16");
  f = s.add_formats();
  f->set_weights("int4-g128");
  return s;
}

TEST_F(BackendTest, SweepOrderIsFormatsThenBatchThenGenerated) {
  std::vector<v1::SweepPoint> pts;
  ASSERT_TRUE(backend_
                  ->Sweep(SmallSweep(),
                          [&](const v1::SweepPoint& p) {
                            pts.push_back(p);
                            return true;
                          })
                  .ok());
  // 2 formats x 2 batches x 2 generated = 8.
  ASSERT_EQ(pts.size(), 8u);
  for (uint64_t i = 0; i < 8; ++i) {
    EXPECT_EQ(pts[i].index(), i);
    EXPECT_EQ(pts[i].formats_index(), static_cast<int>(i / 4));
    EXPECT_EQ(pts[i].batch_index(), static_cast<int>(i / 2 % 2));
    EXPECT_EQ(pts[i].generated_index(), static_cast<int>(i % 2));
  }
  EXPECT_EQ(pts[4].summary().weights_format(), "int4-g128");
  // int4-g128 weights (4.125 bits) read fewer bytes than bf16 (16 bits):
  // decode gets faster on this memory-bound device.
  EXPECT_LT(pts[4].summary().tpot_mean_seconds(),
            pts[0].summary().tpot_mean_seconds());
}

TEST_F(BackendTest, SweepStopsWhenEmitReturnsFalse) {
  int calls = 0;
  absl::Status s = backend_->Sweep(
      SmallSweep(), [&](const v1::SweepPoint&) { return ++calls < 3; });
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(calls, 3);
}

TEST_F(BackendTest, SweepCapCountsThePointsOfThisShard) {
  v1::SweepRequest s = SmallSweep();
  for (int64_t b : {4, 8}) s.add_batch_sizes(b);  // 2 x 4 x 2 = 16 > 10
  absl::Status st =
      backend_->Sweep(s, [](const v1::SweepPoint&) { return true; });
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(st.message(), HasSubstr("16 points"));
  EXPECT_THAT(st.message(), HasSubstr("cap of 10"));
  s.set_shard_count(2);  // 8 per shard
  EXPECT_TRUE(
      backend_->Sweep(s, [](const v1::SweepPoint&) { return true; }).ok());
}

TEST_F(BackendTest, SweepValidatesBeforeEmitting) {
  v1::SweepRequest s = SmallSweep();
  s.mutable_formats(1)->set_kv_cache("float7");
  int calls = 0;
  absl::Status st = backend_->Sweep(s, [&](const v1::SweepPoint&) {
    ++calls;
    return true;
  });
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("formats[1].kv_cache"));
  EXPECT_EQ(calls, 0);
  s = SmallSweep();
  s.clear_models();
  st = backend_->Sweep(s, [](const v1::SweepPoint&) { return true; });
  EXPECT_THAT(st.message(), HasSubstr("models: must be 1..256 entries; got 0"));
}

TEST_F(BackendTest, ModelCatalog) {
  absl::StatusOr<v1::ListModelsResponse> l = backend_->ListModels({});
  ASSERT_TRUE(l.ok());
  EXPECT_GT(l->models_size(), 0);
  v1::GetModelRequest req;
  req.set_id("");
  EXPECT_EQ(backend_->GetModel(req).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(BackendTest, ErrorsCarryTheFieldPathAsData) {
  v1::AnalyzeRequest req = Request();
  req.mutable_workload()->set_batch(0);
  absl::StatusOr<v1::AnalyzeResponse> r = backend_->Analyze(req);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(engine::FieldPathOf(r.status()), "workload.batch");

  // An engine error (inline hardware validation) is seen from the request:
  // the engine names the tier field, the backend its place in the request.
  req = Request();
  req.mutable_hardware()
      ->mutable_description()
      ->mutable_tiers(0)
      ->set_read_bandwidth_bytes_per_second(-1);
  r = backend_->Analyze(req);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(engine::FieldPathOf(r.status()).has_value()) << r.status();
  EXPECT_THAT(*engine::FieldPathOf(r.status()),
              HasSubstr("hardware.description.tiers[0]"));
}

}  // namespace
}  // namespace ridgeline::service

namespace ridgeline::service {
namespace {

// should_stop reaches AnalyzeKernel (asked before each of its two kernel
// evaluations) and StepTime (asked while preparing and before every step):
// a stop ends them with engine::StoppedError, not a result.
TEST_F(BackendTest, KernelAndStepTimeEndWhenAskedToStop) {
  v1::AnalyzeKernelRequest kernel;
  *kernel.mutable_hardware()->mutable_description() = Device();
  kernel.mutable_gemm()->set_m(16);
  kernel.mutable_gemm()->set_n(4096);
  kernel.mutable_gemm()->set_k(4096);
  kernel.mutable_gemm()->set_a_format("bf16");  // the device's peak
  v1::AnalyzeKernelResponse kr;
  EXPECT_TRUE(backend_->AnalyzeKernel(kernel, &kr, [] { return false; }).ok());
  absl::Status s = backend_->AnalyzeKernel(kernel, &kr, [] { return true; });
  EXPECT_EQ(s, engine::StoppedError());

  v1::StepTimeRequest step;
  step.mutable_scenario()->mutable_model()->set_catalog_id("llama-2-7b");
  *step.mutable_scenario()->mutable_hardware()->mutable_description() =
      Device();
  for (int i = 0; i < 3; ++i) {
    v1::StepSequence* q = step.add_steps()->add_sequences();
    q->set_context_tokens(100);
    q->set_new_tokens(1);
  }
  v1::StepTimeResponse sr;
  EXPECT_TRUE(backend_->StepTime(step, &sr, [] { return false; }).ok());
  EXPECT_EQ(sr.steps_size(), 3);
  // Asked before each step (preparing asks only while it chunks a
  // prefill; this capacity fits whole): stop before the second.
  int asked = 0;
  sr.Clear();
  s = backend_->StepTime(step, &sr, [&asked] { return ++asked > 1; });
  EXPECT_EQ(s, engine::StoppedError());
  EXPECT_EQ(sr.steps_size(), 1);
}

}  // namespace
}  // namespace ridgeline::service
