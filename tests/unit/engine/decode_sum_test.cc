// The closed-form decode sum against the step-by-step loop, and the design-
// point model against Analyze, on many random scenarios: models with and
// without sliding windows, MoE and MLA, flash and unfused attention,
// tensor parallelism, PIM tiers, SRAM tiers that spill, calibrated
// efficiencies and overheads. Tolerance: relative 1e-9 (the two sum the
// same terms in a different order; the loop's rounding grows with the
// number of steps, here up to 5,000).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "decode_sum.h"
#include "prepare.h"
#include "ridgeline/engine/analyze.h"
#include "ridgeline/engine/design_point.h"
#include "ridgeline/engine/model.h"
#include "roofline.h"

namespace ridgeline::engine {
namespace {

constexpr double kRel = 1e-9;

void ExpectClose(double a, double b, const std::string& what) {
  EXPECT_LE(std::abs(a - b), kRel * std::max(std::abs(a), std::abs(b)) + 1e-300)
      << what << ": " << a << " vs " << b;
}

Scenario RandomScenario(std::mt19937_64& rng) {
  static const char* kModels[] = {"llama-3-8b", "mistral-7b", "gemma-2-9b",
                                  "mixtral-8x7b", "deepseek-v2-lite",
                                  "qwen2-7b", "phi-3-mini", "tinyllama-1.1b"};
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  auto uni = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  Scenario s;
  s.model = FindModel(kModels[pick(8)]).value();
  Hardware& hw = s.hardware;
  hw.id = "random";
  hw.family = hw.plugin = "inline";
  const double peak = std::pow(10, uni(12, 15.5));
  for (MathType t : {MathType::kBf16, MathType::kFp16, MathType::kFp32}) {
    hw.peak_ops_per_second[static_cast<int>(t)] =
        t == MathType::kFp32 ? peak / 16 : peak;
  }
  if (pick(3) == 0) {  // a small SRAM tier first: activations or KV spill
    MemoryTier sram;
    sram.name = "SRAM";
    sram.kind = TierKind::kSram;
    sram.capacity_bytes = std::pow(10, uni(6, 9));
    sram.read_bandwidth_bytes_per_second = std::pow(10, uni(12.5, 14));
    sram.write_bandwidth_bytes_per_second = sram.read_bandwidth_bytes_per_second;
    hw.tiers.push_back(sram);
  }
  MemoryTier hbm;
  hbm.name = "HBM";
  hbm.kind = TierKind::kHbm;
  hbm.capacity_bytes = std::pow(10, uni(10, 12));
  hbm.read_bandwidth_bytes_per_second = std::pow(10, uni(11, 13));
  hbm.write_bandwidth_bytes_per_second = hbm.read_bandwidth_bytes_per_second;
  if (pick(3) == 0) {  // processing in memory
    NearMemoryCompute nmc;
    nmc.internal_bandwidth_bytes_per_second =
        hbm.read_bandwidth_bytes_per_second * uni(2, 16);
    nmc.peak_ops_per_second[static_cast<int>(MathType::kBf16)] = peak * uni(0.001, 0.1);
    nmc.peak_ops_per_second[static_cast<int>(MathType::kFp16)] =
        nmc.peak_ops_per_second[static_cast<int>(MathType::kBf16)];
    hbm.near_memory_compute = nmc;
  }
  hw.tiers.push_back(hbm);
  MemoryTier host;
  host.name = "host";
  host.kind = TierKind::kHostLink;
  host.capacity_bytes = 1e12;
  host.read_bandwidth_bytes_per_second = 64e9;
  host.write_bandwidth_bytes_per_second = 64e9;
  hw.tiers.push_back(host);
  if (pick(2) == 0) hw.interconnect_bytes_per_second = std::pow(10, uni(10, 12));
  hw.tdp_watts = uni(100, 1000);
  hw.price_usd = uni(1000, 40000);
  s.workload.batch = 1 + pick(64);
  s.workload.prompt_tokens = 1 + pick(8192);
  s.workload.generated_tokens = 2 + pick(5000);
  const int64_t tps[] = {1, 2, 4};
  s.parallelism.tensor_parallel = tps[pick(3)];
  if (s.model.num_attention_heads % s.parallelism.tensor_parallel != 0)
    s.parallelism.tensor_parallel = 1;
  s.options.flash_attention = pick(2) == 0;
  s.options.suggestions = false;
  if (pick(2) == 0) {  // a calibration: efficiencies and overheads
    for (int c = 0; c < kOpClassCount; ++c) {
      s.efficiency.compute[c] = uni(0.3, 1);
      s.efficiency.memory[c] = uni(0.3, 1);
    }
    s.efficiency.per_kernel_overhead_seconds = uni(0, 1e-5);
    s.efficiency.per_step_overhead_seconds = uni(0, 1e-4);
    s.efficiency.profile_name = "random";
  }
  return s;
}

TEST(DecodeSumTest, ClosedFormEqualsStepLoopOnRandomScenarios) {
  std::mt19937_64 rng(2026);
  int compared = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const Scenario s = RandomScenario(rng);
    if (!ValidateScenario(s).ok()) continue;
    internal::Prepared prep;
    if (!internal::Prepare(s, &prep).ok()) continue;
    const internal::Evaluator ev(s, prep.place);
    std::vector<int> linear;
    double const_seconds = ev.per_step();
    for (size_t i = 0; i < prep.dec0.size(); ++i) {
      if (prep.dec0[i].kv_dependent) {
        linear.push_back(static_cast<int>(i));
      } else {
        const_seconds += ev.Time(prep.dec0[i]).seconds;
      }
    }
    const int64_t steps = s.workload.generated_tokens - 1;
    internal::DecodeSums closed, loop;
    internal::SumDecodeSteps(prep.dec0, prep.slope, linear.data(), linear.size(),
                             s.workload.prompt_tokens, steps, const_seconds, ev,
                             &closed);
    internal::SumDecodeStepsLoop(prep.dec0, prep.slope, linear.data(),
                                 linear.size(), s.workload.prompt_tokens, steps,
                                 const_seconds, ev, &loop);
    const std::string at = s.model.id + " trial " + std::to_string(trial);
    ExpectClose(closed.total, loop.total, at + " total");
    ExpectClose(closed.first, loop.first, at + " first");
    ExpectClose(closed.last, loop.last, at + " last");
    ASSERT_EQ(closed.acc.size(), loop.acc.size());
    for (size_t j = 0; j < closed.acc.size(); ++j) {
      const auto& a = closed.acc[j];
      const auto& b = loop.acc[j];
      ExpectClose(a.flops, b.flops, at + " flops");
      ExpectClose(a.compute, b.compute, at + " compute");
      ExpectClose(a.memory, b.memory, at + " memory");
      ExpectClose(a.seconds, b.seconds, at + " seconds");
      for (int c = 0; c < kOperandClassCount; ++c) {
        ExpectClose(a.read[c], b.read[c], at + " read");
      }
      EXPECT_EQ(a.last.tier, b.last.tier) << at;
      EXPECT_EQ(a.last.bound, b.last.bound) << at;
    }
    ++compared;
  }
  EXPECT_GT(compared, 200);
}

TEST(DecodeSumTest, WindowAndPimRegimesByHand) {
  // Mistral-7B: every layer slides over a 4096-token window. From a prompt
  // of 4000, 300 decode steps read 4001..4096 keys (96 steps, growing),
  // then 4096 keys for the other 204 steps: the closed form splits there.
  Scenario s;
  s.model = FindModel("mistral-7b").value();
  s.hardware.id = "h";
  s.hardware.family = s.hardware.plugin = "inline";
  s.hardware.peak_ops_per_second[static_cast<int>(MathType::kBf16)] = 1e15;
  MemoryTier hbm;
  hbm.name = "HBM";
  hbm.capacity_bytes = 80e9;
  hbm.read_bandwidth_bytes_per_second = hbm.write_bandwidth_bytes_per_second = 2e12;
  s.hardware.tiers.push_back(hbm);
  s.workload = {8, 4000, 301};
  s.options.suggestions = false;
  const absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  // The last step and every step after the window are the same step.
  EXPECT_GT(r->tpot_last_seconds, r->tpot_first_seconds);
  Scenario longer = s;
  longer.workload.generated_tokens = 100001;
  const absl::StatusOr<AnalysisResult> l = Analyze(longer);
  ASSERT_TRUE(l.ok());
  EXPECT_DOUBLE_EQ(l->tpot_last_seconds, r->tpot_last_seconds);
  // Total = first 300 steps + 99,700 capped steps at the last step's time.
  ExpectClose(l->decode.totals.seconds,
              r->decode.totals.seconds + 99700 * r->tpot_last_seconds,
              "capped steps");
}

TEST(DesignPointTest, EqualsAnalyzeOnRandomHardware) {
  std::mt19937_64 rng(99);
  int compared = 0;
  for (int trial = 0; trial < 100; ++trial) {
    Scenario s = RandomScenario(rng);
    if (!ValidateScenario(s).ok()) continue;
    absl::StatusOr<DesignPointModel> m = DesignPointModel::Create(s);
    if (!m.ok()) continue;
    for (int v = 0; v < 3; ++v) {
      // Change numbers only: bandwidth, capacity, peaks, price.
      Hardware& hw = m->hardware();
      const double f = std::uniform_real_distribution<double>(0.25, 4)(rng);
      for (MemoryTier& t : hw.tiers) {
        t.read_bandwidth_bytes_per_second *= f;
        t.write_bandwidth_bytes_per_second *= f;
        t.capacity_bytes *= 1 / f;
        // Near-memory compute stays at least as fast as its tier (a rule
        // of ValidateHardware).
        if (t.near_memory_compute.has_value()) {
          t.near_memory_compute->internal_bandwidth_bytes_per_second *= f;
        }
      }
      for (auto& p : hw.peak_ops_per_second) {
        if (p.has_value()) *p *= 2 / f;
      }
      *hw.price_usd *= f;
      Scenario same = s;
      same.hardware = hw;
      const absl::StatusOr<AnalysisResult> want = Analyze(same);
      ASSERT_TRUE(want.ok()) << want.status();
      AnalysisResult got;
      ASSERT_TRUE(m->Evaluate(&got).ok());
      const std::string at = s.model.id + " trial " + std::to_string(trial);
      EXPECT_EQ(got.memory.fits, want->memory.fits) << at;
      ExpectClose(got.ttft_seconds, want->ttft_seconds, at + " ttft");
      ExpectClose(got.tpot_mean_seconds, want->tpot_mean_seconds, at + " tpot");
      ExpectClose(got.e2e_seconds, want->e2e_seconds, at + " e2e");
      ExpectClose(*got.economy.joules_per_output_token,
                  *want->economy.joules_per_output_token, at + " J/token");
      ExpectClose(*got.economy.usd_per_million_output_tokens,
                  *want->economy.usd_per_million_output_tokens, at + " $");
      ++compared;
    }
  }
  EXPECT_GT(compared, 150);
}

}  // namespace
}  // namespace ridgeline::engine
