// Bad scenarios and hardware: INVALID_ARGUMENT naming the field, the range
// and the value.
#include <cmath>
#include <limits>
#include <string>

#include "gtest/gtest.h"
#include "ridgeline/engine/analyze.h"
#include "test_hardware.h"

namespace ridgeline::engine {
namespace {

using testing::A100Like;
using testing::MakeScenario;

Scenario Good() { return MakeScenario("llama-3-8b", A100Like()); }

void ExpectError(const Scenario& s, const std::string& message) {
  const absl::Status st = ValidateScenario(s);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_EQ(std::string(st.message()), message);
  // Analyze reports the same error instead of crashing.
  EXPECT_EQ(Analyze(s).status(), st);
}

// The rules plugin descriptors follow (ridgeline-plugin-check runs this same
// ValidateHardware) hold for inline hardware too.
TEST(ValidateTest, HardwareRulesSharedWithThePluginChecker) {
  Scenario s = Good();
  s.hardware.id = "My_GPU";
  ExpectError(s,
              "hardware.id must be lower-case kebab ([a-z0-9]+(-[a-z0-9]+)*), "
              "got \"My_GPU\"");
  // A host tier faster than the HBM before it: tiers are fastest first.
  s = Good();
  MemoryTier host = s.hardware.tiers[0];
  host.name = "host";
  host.kind = TierKind::kHostLink;
  host.read_bandwidth_bytes_per_second = 3000e9;
  s.hardware.tiers.push_back(host);
  ExpectError(s,
              "hardware.tiers[1].read_bandwidth_bytes_per_second (3e+12 B/s) "
              "must be <= tiers[0]'s (2.039e+12 B/s): tiers are ordered "
              "fastest first");
  // Near-memory compute slower than the tier's own bandwidth.
  s = Good();
  NearMemoryCompute pim;
  pim.internal_bandwidth_bytes_per_second = 1000e9;
  pim.peak_ops_per_second[static_cast<int>(MathType::kFp16)] = 1e12;
  s.hardware.tiers[0].near_memory_compute = pim;
  ExpectError(s,
              "hardware.tiers[0].near_memory_compute.internal_bandwidth_bytes_"
              "per_second must be >= the tier's read_bandwidth_bytes_per_second "
              "(2.039e+12), got 1e+12");
}

// A bandwidth or peak so small that a step's time overflows is rejected,
// never answered with an infinite time: 16e9 bytes / 1e-310 B/s = inf.
TEST(ValidateTest, BandwidthOrPeakTooSmallForAFiniteTimeIsInvalid) {
  Scenario s = Good();
  s.hardware.tiers[0].read_bandwidth_bytes_per_second = 1e-310;
  ExpectError(s,
              "hardware.tiers[0].read_bandwidth_bytes_per_second must be at "
              "least 1 B/s (a smaller one makes step times infinite), got "
              "1e-310");
  s = Good();
  s.hardware.tiers[0].write_bandwidth_bytes_per_second = 0.5;
  ExpectError(s,
              "hardware.tiers[0].write_bandwidth_bytes_per_second must be at "
              "least 1 B/s (a smaller one makes step times infinite), got 0.5");
  s = Good();
  s.hardware.peak_ops_per_second[static_cast<int>(MathType::kBf16)] = 1e-300;
  ExpectError(s,
              "hardware.peak_ops_per_second.bf16 must be at least 1 op/s (a "
              "smaller one makes step times infinite), got 1e-300");
}

TEST(ValidateTest, GoodScenarioPasses) {
  EXPECT_TRUE(ValidateScenario(Good()).ok());
}

TEST(ValidateTest, Workload) {
  Scenario s = Good();
  s.workload.batch = 0;
  ExpectError(s, "workload.batch must be in [1, 65536], got 0");
  s = Good();
  s.workload.prompt_tokens = -5;
  ExpectError(s, "workload.prompt_tokens must be in [1, 10000000], got -5");
  s = Good();
  s.workload.generated_tokens = 20'000'000;
  ExpectError(
      s, "workload.generated_tokens must be in [0, 10000000], got 20000000");
}

TEST(ValidateTest, HardwareTiers) {
  Scenario s = Good();
  s.hardware.tiers.push_back(s.hardware.tiers[0]);
  s.hardware.tiers[1].read_bandwidth_bytes_per_second =
      std::numeric_limits<double>::quiet_NaN();
  ExpectError(s,
              "hardware.tiers[1].read_bandwidth_bytes_per_second must be "
              "finite and > 0, got nan");
  s = Good();
  s.hardware.tiers[0].capacity_bytes = -1;
  ExpectError(
      s, "hardware.tiers[0].capacity_bytes must be finite and > 0, got -1");
  s = Good();
  s.hardware.tiers.clear();
  ExpectError(s, "hardware.tiers must have between 1 and 8 entries, got 0");
  s = Good();
  s.hardware.peak_ops_per_second[static_cast<int>(MathType::kFp8)] = 0;
  ExpectError(s,
              "hardware.peak_ops_per_second.fp8 must be finite and > 0, got 0");
  s = Good();
  // The path spells the field as the proto does (math type "fp16-acc16").
  s.hardware.peak_ops_per_second[static_cast<int>(MathType::kFp16Acc16)] = -1;
  ExpectError(s, "hardware.peak_ops_per_second.fp16_acc16 must be finite and > 0, got -1");
  s = Good();
  s.hardware.tdp_watts = std::numeric_limits<double>::infinity();
  ExpectError(s, "hardware.tdp_watts must be finite and > 0, got inf");
  s = Good();
  NearMemoryCompute nmc;
  s.hardware.tiers[0].near_memory_compute = nmc;
  ExpectError(s,
              "hardware.tiers[0].near_memory_compute."
              "internal_bandwidth_bytes_per_second must be finite and > 0, "
              "got 0");
}

// Every path ValidateHardware builds only on failure, checked verbatim.
TEST(ValidateTest, HardwareFieldPathsOnFailure) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Scenario s = Good();
  s.hardware.energy_joules_per_op[static_cast<int>(MathType::kBf16)] = -1;
  ExpectError(s,
              "hardware.energy_joules_per_op.bf16 must be finite and >= 0, "
              "got -1");
  s = Good();
  s.hardware.kernel_launch_seconds = nan;
  ExpectError(s,
              "hardware.kernel_launch_seconds must be finite and >= 0, got "
              "nan");
  s = Good();
  s.hardware.tiers[0].write_bandwidth_bytes_per_second = 0;
  ExpectError(s,
              "hardware.tiers[0].write_bandwidth_bytes_per_second must be "
              "finite and > 0, got 0");
  s = Good();
  s.hardware.tiers[0].latency_seconds = -2;
  ExpectError(
      s, "hardware.tiers[0].latency_seconds must be finite and >= 0, got -2");
  s = Good();
  s.hardware.tiers[0].energy_joules_per_byte = -3;
  ExpectError(s,
              "hardware.tiers[0].energy_joules_per_byte must be finite and "
              ">= 0, got -3");
  s = Good();
  NearMemoryCompute nmc;
  nmc.internal_bandwidth_bytes_per_second = 8e12;
  nmc.peak_ops_per_second[static_cast<int>(MathType::kInt8)] = -4;
  s.hardware.tiers[0].near_memory_compute = nmc;
  ExpectError(s,
              "hardware.tiers[0].near_memory_compute.peak_ops_per_second.int8 "
              "must be finite and > 0, got -4");
  s.hardware.tiers[0].near_memory_compute->peak_ops_per_second[static_cast<int>(
      MathType::kInt8)] = 1e12;
  s.hardware.tiers[0].near_memory_compute->energy_joules_per_op = -5;
  ExpectError(s,
              "hardware.tiers[0].near_memory_compute.energy_joules_per_op "
              "must be finite and >= 0, got -5");
  for (auto field : {&Hardware::idle_watts, &Hardware::price_usd,
                     &Hardware::embodied_kg_co2e}) {
    s = Good();
    s.hardware.*field = -6;
    const absl::Status st = ValidateScenario(s);
    EXPECT_NE(st.message().find("must be finite and >= 0, got -6"),
              absl::string_view::npos)
        << st;
  }
  s = Good();
  s.hardware.idle_watts = -6;
  ExpectError(s, "hardware.idle_watts must be finite and >= 0, got -6");
  s = Good();
  s.hardware.interconnect_bytes_per_second = 0;
  ExpectError(s,
              "hardware.interconnect_bytes_per_second must be finite and > 0, "
              "got 0");
  // The prefix is the caller's.
  const absl::Status st = ValidateHardware(s.hardware, "inline_hardware");
  EXPECT_EQ(std::string(st.message()),
            "inline_hardware.interconnect_bytes_per_second must be finite and "
            "> 0, got 0");
}

TEST(ValidateTest, NoComputePeakIsValidButNearMemoryNeedsOne) {
  // "Compute roof unknown": no source publishes a peak for the part.
  Scenario s = Good();
  s.hardware.peak_ops_per_second = {};
  EXPECT_TRUE(ValidateScenario(s).ok());
  EXPECT_TRUE(ValidateHardware(s.hardware).ok());
  // Compute inside memory exists only to compute: it must give a rate.
  NearMemoryCompute nmc;
  nmc.internal_bandwidth_bytes_per_second = 8e12;
  s.hardware.tiers[0].near_memory_compute = nmc;
  ExpectError(s,
              "hardware.tiers[0].near_memory_compute.peak_ops_per_second "
              "must give at least one math type, got none");
}

TEST(ValidateTest, PinsEfficiencyEconomicsOptions) {
  Scenario s = Good();
  s.pins.tier[1] = 3;
  ExpectError(s, "pins.kv_cache must be in [0, 0], got 3");
  s = Good();
  s.efficiency.compute[0] = 1.5;
  ExpectError(s, "efficiency.compute.gemm must be in (0, 1], got 1.5");
  s = Good();
  s.efficiency.memory[2] = 0;
  ExpectError(s, "efficiency.memory.attention must be in (0, 1], got 0");
  s = Good();
  s.efficiency.per_step_overhead_seconds = -1e-6;
  ExpectError(s,
              "efficiency.per_step_overhead_seconds must be finite and >= 0, "
              "got -1e-06");
  s = Good();
  s.economics.pue = 0.5;
  ExpectError(s, "economics.pue must be in [1, 3], got 0.5");
  s = Good();
  s.economics.utilization = 0;
  ExpectError(s, "economics.utilization must be in (0, 1], got 0");
  s = Good();
  s.options.gemv_max_tokens = -1;
  ExpectError(s, "options.gemv_max_tokens must be in [0, 65536], got -1");
}

TEST(ValidateTest, PrecisionAndModel) {
  Scenario s = Good();
  s.precision.activations = ParseNumberFormat("gguf-q4_k_m").value();
  const absl::Status st = ValidateScenario(s);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("precision.activations"), std::string::npos)
      << st;
  s = Good();
  s.precision.kv_cache.bits = 1;
  ExpectError(s, "precision.kv_cache.bits must be in [2, 34], got 1");
  s = Good();
  s.model.hidden_size = 0;
  EXPECT_NE(ValidateScenario(s).message().find("model.hidden_size"),
            std::string::npos);
}

TEST(ValidateTest, DefaultEconomicsAreInRange) {
  Scenario s = Good();
  EXPECT_TRUE(ValidateScenario(s).ok());
  const Economics e = DefaultEconomics();
  EXPECT_DOUBLE_EQ(e.pue, 1.58);                 // Uptime Institute 2023
  EXPECT_DOUBLE_EQ(e.grid_g_co2e_per_kwh, 480);  // Ember 2023 world average
}

}  // namespace
}  // namespace ridgeline::engine
