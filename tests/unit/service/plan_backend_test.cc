// Backend::Plan in-process: proto -> candidates -> serving::Plan -> proto,
// on inline hardware, with costs checked by hand.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ridgeline/calibration/profiles.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/service/backend.h"

namespace ridgeline::service {
namespace {

using ::testing::HasSubstr;

Backend MakeBackend() {
  return Backend(plugin_host::HardwareRegistry::LoadFiles({}),
                 calibration::ProfileStore::FromProfiles({}), Limits());
}

// 1 PFLOP/s bf16, 80 GB at 2 TB/s, 500 W board power.
v1::Hardware Device() {
  v1::Hardware hw;
  hw.set_id("test-plan-device");
  hw.mutable_peak_ops_per_second()->set_bf16(1e15);
  hw.set_tdp_watts(500);
  v1::MemoryTier* t = hw.add_tiers();
  t->set_name("HBM");
  t->set_kind("hbm");
  t->set_capacity_bytes(80e9);
  t->set_read_bandwidth_bytes_per_second(2e12);
  t->set_write_bandwidth_bytes_per_second(2e12);
  return hw;
}

v1::PlanRequest Request() {
  v1::PlanRequest req;
  req.mutable_model()->set_catalog_id("llama-3.1-8b");
  req.mutable_traffic()->set_rate(4);
  req.mutable_traffic()->mutable_prompt_tokens()->set_fixed(512);
  req.mutable_traffic()->mutable_generated_tokens()->set_fixed(128);
  req.mutable_slo()->set_ttft_p90_seconds(1);
  req.mutable_slo()->set_tpot_p90_seconds(0.05);
  *req.mutable_candidates()->add_hardware()->mutable_description() = Device();
  req.mutable_candidates()->add_tensor_parallel(1);
  req.mutable_candidates()->add_tensor_parallel(3);  // 32 heads: not divisible
  req.mutable_pricing()->set_usd_per_device_hour(2);
  req.set_requests(100);
  return req;
}

TEST(BackendPlan, InlineHardwareWithARentalOverride) {
  Backend backend = MakeBackend();
  absl::StatusOr<v1::PlanResponse> r = backend.Plan(Request());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->model_id(), "llama-3.1-8b");
  // TP 1 and the asked-for TP 3, each in bf16 and fp8 (defaults): 4.
  ASSERT_EQ(r->deployments_size(), 4);
  const v1::PlanDeployment& best = r->deployments(0);
  ASSERT_TRUE(best.feasible()) << best.why();
  EXPECT_EQ(best.tensor_parallel(), 1);
  // $2/device-hour over 4 req/s x 128 tokens = 512 tokens/s:
  // devices x 2 / 3600 / 512 x 1e6 = devices x $1.0851/Mtoken.
  EXPECT_EQ(best.cost_basis(), "rental");
  EXPECT_NEAR(best.usd_per_mtoken(), best.devices() * 2.0 / 3600 / 512 * 1e6,
              1e-9);
  // 500 W per device / 512 tokens/s.
  EXPECT_NEAR(best.joules_per_token(), best.devices() * 500.0 / 512, 1e-9);
  // TP 3 does not divide the 32 attention heads: reported, with why.
  bool tp3_explained = false;
  for (const v1::PlanDeployment& d : r->deployments()) {
    if (d.tensor_parallel() == 3) {
      EXPECT_FALSE(d.feasible());
      tp3_explained |= d.why().find("tensor_parallel") != std::string::npos;
    }
  }
  EXPECT_TRUE(tp3_explained);
  EXPECT_THAT(r->notes(0), HasSubstr("memory fraction 0.9"));
}

TEST(BackendPlan, ErrorsNameTheField) {
  Backend backend = MakeBackend();
  v1::PlanRequest req = Request();
  req.mutable_candidates()->mutable_hardware(0)->set_platform_id("nope");
  absl::Status s = backend.Plan(req).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("candidates.hardware[0].platform_id"));
  req = Request();
  req.mutable_traffic()->clear_generated_tokens();
  s = backend.Plan(req).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("traffic.generated_tokens"));
  req = Request();
  req.mutable_pricing()->set_usd_per_device_hour(-1);
  s = backend.Plan(req).status();
  EXPECT_THAT(s.message(), HasSubstr("pricing.usd_per_device_hour"));
  req = Request();
  req.clear_model();
  EXPECT_THAT(backend.Plan(req).status().message(), HasSubstr("model"));
}

// Issue 20 item 3: prices per part. $2/h for every candidate, $3/h for
// "test-plan-other" alone: each row is charged its own, devices x rate /
// 3600 / 512 tokens/s x 1e6.
TEST(BackendPlan, PerPartPricesWinOverTheValueForAll) {
  Backend backend = MakeBackend();
  v1::PlanRequest req = Request();
  req.mutable_candidates()->clear_tensor_parallel();
  req.mutable_candidates()->add_tensor_parallel(1);
  v1::Hardware other = Device();
  other.set_id("test-plan-other");
  *req.mutable_candidates()->add_hardware()->mutable_description() = other;
  (*req.mutable_pricing()->mutable_usd_per_device_hour_by_hardware())
      ["test-plan-other"] = 3;
  absl::StatusOr<v1::PlanResponse> r = backend.Plan(req);
  ASSERT_TRUE(r.ok()) << r.status();
  int seen = 0;
  for (const v1::PlanDeployment& d : r->deployments()) {
    ASSERT_TRUE(d.feasible()) << d.why();
    const double rate = d.hardware_id() == "test-plan-other" ? 3 : 2;
    EXPECT_EQ(d.cost_basis(), "rental");
    EXPECT_NEAR(d.usd_per_mtoken(), d.devices() * rate / 3600 / 512 * 1e6,
                1e-9)
        << d.hardware_id();
    ++seen;
  }
  EXPECT_EQ(seen, 4);  // 2 parts x (bf16, fp8)
  // A purchase price for one part only: it is purchase-priced, the other
  // (no price anywhere) energy-only, and the headline says they are mixed.
  req.mutable_pricing()->clear_usd_per_device_hour_by_hardware();
  req.mutable_pricing()->clear_usd_per_device_hour();
  (*req.mutable_pricing()->mutable_price_usd_by_hardware())["test-plan-other"] =
      20000;
  r = backend.Plan(req);
  ASSERT_TRUE(r.ok()) << r.status();
  for (const v1::PlanDeployment& d : r->deployments()) {
    EXPECT_EQ(d.cost_basis(), d.hardware_id() == "test-plan-other"
                                  ? "purchase"
                                  : "energy-only");
  }
  EXPECT_THAT(r->headline(), HasSubstr("MIXED COST BASES"));
  // Errors name the entry: an id that is no candidate's, a bad value.
  req = Request();
  (*req.mutable_pricing()->mutable_usd_per_device_hour_by_hardware())["nope"] =
      1;
  absl::Status s = backend.Plan(req).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(engine::FieldPathOf(s),
            "pricing.usd_per_device_hour_by_hardware[\"nope\"]");
  EXPECT_THAT(s.message(), HasSubstr("test-plan-device"));
  req = Request();
  (*req.mutable_pricing()->mutable_price_usd_by_hardware())
      ["test-plan-device"] = -5;
  s = backend.Plan(req).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("pricing.price_usd_by_hardware[\"test-plan-device\"]"));
}

// Issue 20 item 4: one runtime's profile per plan. "fw-a" is fitted for
// test-plan-device only; test-plan-other has only an "fw-b" profile, which
// the planner used to take (another runtime's) with a warning.
TEST(BackendPlan, OneRuntimePerPlanOrAnAskedForRooflineFallback) {
  calibration::Profile a;
  a.name = "test-plan-device.fw-a";
  a.hardware_id = "test-plan-device";
  a.framework = "fw-a";
  a.efficiency.memory.fill(0.5);
  a.fitted_from = "test";
  calibration::Profile b = a;
  b.name = "test-plan-other.fw-b";
  b.hardware_id = "test-plan-other";
  b.framework = "fw-b";
  Backend backend(plugin_host::HardwareRegistry::LoadFiles({}),
                  calibration::ProfileStore::FromProfiles({a, b}), Limits());
  v1::PlanRequest req = Request();
  req.mutable_candidates()->clear_tensor_parallel();
  req.mutable_candidates()->add_tensor_parallel(1);
  v1::Hardware other = Device();
  other.set_id("test-plan-other");
  *req.mutable_candidates()->add_hardware()->mutable_description() = other;
  req.mutable_candidates()->mutable_calibration()->set_framework("fw-a");
  absl::Status s = backend.Plan(req).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(engine::FieldPathOf(s), "candidates.calibration.framework");
  EXPECT_THAT(s.message(), HasSubstr("has none for test-plan-other"));
  EXPECT_THAT(s.message(), HasSubstr("profile_fallback"));

  req.mutable_candidates()->set_profile_fallback("roofline");
  absl::StatusOr<v1::PlanResponse> r = backend.Plan(req);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->deployments_size(), 4);
  for (const v1::PlanDeployment& d : r->deployments()) {
    if (d.hardware_id() == "test-plan-other") {
      EXPECT_EQ(d.profile(), "");
      EXPECT_EQ(d.profile_fallback(), "roofline");
    } else {
      EXPECT_EQ(d.profile(), "test-plan-device.fw-a");
      EXPECT_EQ(d.profile_fallback(), "");
    }
  }
  EXPECT_TRUE(r->warnings().empty());

  // A misspelt framework: INVALID_ARGUMENT listing the known ones.
  req.mutable_candidates()->mutable_calibration()->set_framework("fw-aa");
  s = backend.Plan(req).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(engine::FieldPathOf(s), "candidates.calibration.framework");
  EXPECT_THAT(s.message(), HasSubstr("(fw-a, fw-b;"));
  EXPECT_THAT(s.message(), HasSubstr("\"fw-aa\""));
  // A version suffix is the same runtime.
  req.mutable_candidates()->mutable_calibration()->set_framework("fw-a-2.0");
  EXPECT_TRUE(backend.Plan(req).ok());
  req.mutable_candidates()->set_profile_fallback("nearest");
  s = backend.Plan(req).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(engine::FieldPathOf(s), "candidates.profile_fallback");
}

TEST(BackendPlan, StopEndsItWithDeadlineExceeded) {
  Backend backend = MakeBackend();
  v1::PlanRequest req = Request();
  req.set_requests(50000);
  absl::Status s = backend.Plan(req, [] { return true; }).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
}

}  // namespace
}  // namespace ridgeline::service

namespace ridgeline::service {
namespace {

v1::SimulateRequest OneRequestTrace() {
  v1::SimulateRequest req;
  req.mutable_model()->set_catalog_id("llama-3.1-8b");
  *req.mutable_hardware()->mutable_description() = Device();
  req.mutable_traffic()->mutable_trace()->add_arrival_seconds(0);
  req.mutable_traffic()->mutable_prompt_tokens()->set_fixed(512);
  req.mutable_traffic()->mutable_generated_tokens()->set_fixed(64);
  return req;
}

TEST(BackendSimulate, OneRequestIsTheStaticAnalysis) {
  Backend backend = MakeBackend();
  absl::StatusOr<v1::SimulateResponse> r = backend.Simulate(OneRequestTrace());
  ASSERT_TRUE(r.ok()) << r.status();
  // One request alone: a 512-token prefill step (TTFT) then 63 decode
  // steps at contexts 512..574, exactly Analyze's batch-1 scenario (the
  // simulator rounds decode contexts to 16 tokens: e2e within 0.5%).
  v1::AnalyzeRequest a;
  *a.mutable_model() = OneRequestTrace().model();
  *a.mutable_hardware() = OneRequestTrace().hardware();
  a.mutable_workload()->set_batch(1);
  a.mutable_workload()->set_prompt_tokens(512);
  a.mutable_workload()->set_generated_tokens(64);
  absl::StatusOr<v1::AnalyzeResponse> analysis = backend.Analyze(a);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_EQ(r->requests(), 1);
  EXPECT_EQ(r->steps(), 64);
  EXPECT_NEAR(r->ttft().p50_seconds(), analysis->result().ttft_seconds(),
              1e-12);
  EXPECT_NEAR(r->e2e().p50_seconds(), analysis->result().e2e_seconds(),
              0.005 * analysis->result().e2e_seconds());
  EXPECT_EQ(r->queue().p99_seconds(), 0);
  EXPECT_GT(r->kv_capacity_tokens(), 0);
}

TEST(BackendSimulate, ErrorsNameTheField) {
  Backend backend = MakeBackend();
  v1::SimulateRequest req = OneRequestTrace();
  req.mutable_traffic()->mutable_trace()->add_arrival_seconds(-1);
  absl::Status s = backend.Simulate(req).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("traffic.arrival_times[1]"));
  req = OneRequestTrace();
  req.mutable_traffic()->set_rate(0);
  EXPECT_THAT(backend.Simulate(req).status().message(),
              HasSubstr("traffic.rate"));
  req = OneRequestTrace();
  req.mutable_traffic()->set_rate(1);
  req.set_requests(1'000'000'000);
  s = backend.Simulate(req).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("simulation.requests"));
  req = OneRequestTrace();
  req.mutable_traffic()->clear_arrivals();
  EXPECT_THAT(backend.Simulate(req).status().message(), HasSubstr("traffic"));
}

// A serving profile (profiles/serving/, fitted on the serving model) wins
// for its framework. Its efficiencies are 0.5 for every op class and no
// overheads, so every op of every step takes exactly twice the pure
// roofline's time: one request alone has twice the TTFT and e2e latency.
TEST(BackendSimulate, FrameworkUsesItsServingProfile) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("ridgeline-serving-profiles-" + std::to_string(::getpid()));
  calibration::Profile half;
  half.name = "serving.test-fw";
  half.framework = "test-fw";
  half.efficiency.compute.fill(0.5);
  half.efficiency.memory.fill(0.5);
  half.fitted_from = "test";
  ASSERT_TRUE(calibration::WriteProfiles(dir / "serving", {half}).ok());
  absl::StatusOr<std::shared_ptr<const calibration::ProfileStore>> store =
      calibration::ProfileStore::LoadDirectory(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  Backend backend(plugin_host::HardwareRegistry::LoadFiles({}), *store,
                  Limits());
  absl::StatusOr<v1::SimulateResponse> roof =
      backend.Simulate(OneRequestTrace());
  v1::SimulateRequest req = OneRequestTrace();
  req.mutable_calibration()->set_framework("test-fw-1.0");
  absl::StatusOr<v1::SimulateResponse> fitted = backend.Simulate(req);
  ASSERT_TRUE(roof.ok() && fitted.ok()) << fitted.status();
  EXPECT_EQ(roof->profile(), "");
  EXPECT_EQ(fitted->profile(), "serving.test-fw");
  EXPECT_NEAR(fitted->ttft().p50_seconds(), 2 * roof->ttft().p50_seconds(),
              1e-9 * roof->ttft().p50_seconds());
  EXPECT_NEAR(fitted->e2e().p50_seconds(), 2 * roof->e2e().p50_seconds(),
              1e-9 * roof->e2e().p50_seconds());
  // By name as well; an unknown serving name is NOT_FOUND naming the field.
  req.mutable_calibration()->set_profile("serving.test-fw");
  absl::StatusOr<v1::SimulateResponse> named = backend.Simulate(req);
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_EQ(named->profile(), "serving.test-fw");
  req.mutable_calibration()->set_profile("serving.nope");
  absl::Status s = backend.Simulate(req).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(engine::FieldPathOf(s), "calibration.profile");
  std::filesystem::remove_all(dir);
}

// Disaggregated candidates (issue 22): pool rows in the response, nonsense
// named by its field.
TEST(BackendPlan, DisaggregatedRowsCarryTheirPools) {
  Backend backend = MakeBackend();
  v1::PlanRequest req = Request();
  req.mutable_candidates()->clear_tensor_parallel();
  req.mutable_candidates()->add_tensor_parallel(1);
  req.mutable_candidates()->set_disaggregated("on");
  req.mutable_candidates()
      ->mutable_hardware(0)
      ->mutable_description()
      ->set_interconnect_bytes_per_second(900e9);
  absl::StatusOr<v1::PlanResponse> r = backend.Plan(req);
  ASSERT_TRUE(r.ok()) << r.status();
  // One part, TP 1, bf16 and fp8: two pairs, no aggregated rows.
  ASSERT_EQ(r->deployments_size(), 2);
  // Llama-3.1-8B at 4 req/s on a 1 PFLOP/s, 2 TB/s part: sized.
  EXPECT_TRUE(r->deployments(0).feasible()) << r->deployments(0).why();
  for (const v1::PlanDeployment& d : r->deployments()) {
    EXPECT_EQ(d.mode(), "disaggregated");
    EXPECT_EQ(d.prefill_hardware_id(), "test-plan-device");
    EXPECT_EQ(d.decode_tensor_parallel(), 1);
    if (!d.feasible()) continue;
    EXPECT_EQ(d.replicas(), d.prefill_replicas() + d.decode_replicas());
    EXPECT_EQ(d.devices(), d.replicas());
    EXPECT_TRUE(d.has_kv_transfer_p90_seconds());
    EXPECT_EQ(d.kv_link(), "scale-up");
  }
  // Unset: aggregated only, as before the field.
  req.mutable_candidates()->clear_disaggregated();
  r = backend.Plan(req);
  ASSERT_TRUE(r.ok()) << r.status();
  for (const v1::PlanDeployment& d : r->deployments()) {
    EXPECT_EQ(d.mode(), "aggregated");
    EXPECT_EQ(d.prefill_replicas(), 0);
  }
}

TEST(BackendPlan, DisaggregatedNonsenseNamesTheField) {
  Backend backend = MakeBackend();
  v1::PlanRequest req = Request();
  req.mutable_candidates()->set_disaggregated("sometimes");
  absl::Status s = backend.Plan(req).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(engine::FieldPathOf(s), "candidates.disaggregated");
  EXPECT_THAT(s.message(), HasSubstr("\"sometimes\""));

  req.mutable_candidates()->set_disaggregated("on");
  *req.mutable_candidates()->add_decode_hardware()->mutable_description() =
      Device();
  s = backend.Plan(req).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(engine::FieldPathOf(s), "candidates.prefill_hardware");
  EXPECT_THAT(s.message(), HasSubstr("candidates.decode_hardware"));

  req.mutable_candidates()->set_disaggregated("off");
  s = backend.Plan(req).status();
  EXPECT_EQ(engine::FieldPathOf(s), "candidates.decode_hardware");

  req.mutable_candidates()->set_disaggregated("auto");
  req.mutable_candidates()->set_max_pool_replicas(0);
  s = backend.Plan(req).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(engine::FieldPathOf(s), "candidates.max_pool_replicas");
  EXPECT_THAT(s.message(), HasSubstr("got 0"));
}

}  // namespace
}  // namespace ridgeline::service
