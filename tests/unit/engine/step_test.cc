// StepEvaluator: one forward step equals the corresponding step of Analyze
// (same graph, placement and timing code), for dense, MoE, sliding-window
// and MLA models, across batch and KV length.
#include "ridgeline/engine/step.h"

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "ridgeline/engine/analyze.h"
#include "test_hardware.h"

namespace ridgeline::engine {
namespace {

using testing::A100Like;
using testing::MakeScenario;

// Relative agreement: Analyze and StepEvaluator run the same code; only the
// order of a few additions may differ.
void ExpectClose(double want, double got, const std::string& what) {
  EXPECT_LE(std::abs(want - got), 1e-12 * std::abs(want))
      << what << ": Analyze " << want << ", StepEvaluator " << got;
}

void ExpectStepEq(const StepResult& want, const StepTiming& got,
                  const std::string& what) {
  EXPECT_EQ(want.phase, got.phase) << what;
  EXPECT_EQ(want.tokens, got.tokens) << what;
  EXPECT_EQ(want.kv_length, got.kv_length) << what;
  ExpectClose(want.totals.flops, got.flops, what + " flops");
  ExpectClose(want.totals.bytes, got.bytes, what + " bytes");
  ExpectClose(want.totals.compute_seconds, got.compute_seconds,
              what + " compute_seconds");
  ExpectClose(want.totals.memory_seconds, got.memory_seconds,
              what + " memory_seconds");
  ExpectClose(want.totals.seconds, got.seconds, what + " seconds");
  double overhead = 0;
  for (const OpResult& op : want.ops) overhead += op.overhead_seconds;
  EXPECT_LE(overhead, got.overhead_seconds * (1 + 1e-12)) << what;
}

struct Case {
  const char* model;
  AnalysisOptions options;
};

std::vector<Case> Cases() {
  AnalysisOptions fused;  // flash attention, MLA absorbed
  fused.suggestions = false;
  AnalysisOptions unfused = fused;
  unfused.flash_attention = false;
  unfused.mla_absorbed = false;
  return {{"llama-3-8b", fused},  {"mixtral-8x7b", fused},
          {"deepseek-v2", fused}, {"deepseek-v2", unfused},
          {"gemma-2-9b", fused},  {"gemma-2-9b", unfused}};
}

TEST(StepEvaluatorTest, DecodeAndPrefillEqualAnalyze) {
  for (const Case& c : Cases()) {
    for (int64_t batch : {1, 16, 256}) {
      // KV 1000 and 100000: decode_first_step of prompt kv - 1. (KV 1 has
      // no such scenario; see DecodeAtKvOneIsAOneTokenPrefill.) At 100000 x
      // 256 the KV cache does not fit: placement spills it all the same.
      for (int64_t kv : {1000, 100000}) {
        Scenario s = MakeScenario(c.model, A100Like());
        s.options = c.options;
        s.workload = {batch, kv - 1, 2};
        // One prefill step, as StepEvaluator::Prefill times it (Analyze
        // would chunk a prompt whose activations do not fit).
        s.options.prefill_chunk_tokens = kv;
        absl::StatusOr<AnalysisResult> r = Analyze(s);
        ASSERT_TRUE(r.ok()) << r.status();
        absl::StatusOr<StepEvaluator> ev = StepEvaluator::Create(s);
        ASSERT_TRUE(ev.ok()) << ev.status();
        const std::string what = std::string(c.model) +
                                 (c.options.flash_attention ? "" : " unfused") +
                                 " batch " + std::to_string(batch) + " kv " +
                                 std::to_string(kv);
        absl::StatusOr<StepTiming> d = ev->Decode(batch, kv);
        ASSERT_TRUE(d.ok()) << d.status();
        ExpectStepEq(r->decode_first_step, *d, what + " decode");
        EXPECT_EQ(d->batch, batch);
        absl::StatusOr<StepTiming> p = ev->Prefill(batch, kv - 1);
        ASSERT_TRUE(p.ok()) << p.status();
        ExpectStepEq(r->prefill, *p, what + " prefill");
        EXPECT_EQ(ev->memory().fits, r->memory.fits) << what;
      }
    }
  }
}

TEST(StepEvaluatorTest, TensorParallelStepsEqualAnalyze) {
  // The shard and the all-reduces come from the same preparation.
  for (const char* model : {"llama-3-8b", "mixtral-8x7b", "deepseek-v2-lite"}) {
    Hardware hw = A100Like();
    hw.interconnect_bytes_per_second = 600e9;
    Scenario s = MakeScenario(model, hw);
    s.parallelism.tensor_parallel = 2;
    s.workload = {8, 999, 2};
    absl::StatusOr<AnalysisResult> r = Analyze(s);
    ASSERT_TRUE(r.ok()) << model << ": " << r.status();
    absl::StatusOr<StepEvaluator> ev = StepEvaluator::Create(s);
    ASSERT_TRUE(ev.ok()) << ev.status();
    absl::StatusOr<StepTiming> d = ev->Decode(8, 1000);
    ASSERT_TRUE(d.ok()) << d.status();
    ExpectStepEq(r->decode_first_step, *d, std::string(model) + " tp2 decode");
    EXPECT_GT(d->interconnect_seconds, 0) << model;
  }
}

TEST(StepEvaluatorTest, OtherStepsOfOneEvaluatorEqualTheirAnalyze) {
  // One evaluator answers for any step; with one memory tier the placement
  // (fixed at Create) cannot change a time, so each step equals the
  // analysis of its own workload.
  Scenario base = MakeScenario("mixtral-8x7b", A100Like());
  base.workload = {16, 1000, 2};
  absl::StatusOr<StepEvaluator> ev = StepEvaluator::Create(base);
  ASSERT_TRUE(ev.ok()) << ev.status();
  for (int64_t batch : {1, 16, 256}) {
    for (int64_t kv : {2, 1000, 100000}) {
      Scenario s = base;
      s.workload = {batch, kv - 1, 3};  // last step: kv - 1 + 1 = kv
      absl::StatusOr<AnalysisResult> r = Analyze(s);
      ASSERT_TRUE(r.ok()) << r.status();
      absl::StatusOr<StepTiming> d = ev->Decode(batch, kv);
      ASSERT_TRUE(d.ok());
      ExpectStepEq(
          r->decode_first_step, *d,
          "batch " + std::to_string(batch) + " kv " + std::to_string(kv));
      absl::StatusOr<StepTiming> last = ev->Decode(batch, kv + 1);
      ASSERT_TRUE(last.ok());
      ExpectStepEq(r->decode_last_step, *last, "last step");
    }
  }
}

TEST(StepEvaluatorTest, DecodeAtKvOneIsAOneTokenPrefill) {
  // The first token of an empty context: one query, one key. A one-token
  // prefill has the same ops and amounts (pairs 1 x 2 / 2 = 1; one key).
  for (const Case& c : Cases()) {
    Scenario s = MakeScenario(c.model, A100Like());
    s.options = c.options;
    absl::StatusOr<StepEvaluator> ev = StepEvaluator::Create(s);
    ASSERT_TRUE(ev.ok());
    for (int64_t batch : {1, 16, 256}) {
      Scenario one = s;
      one.workload = {batch, 1, 1};  // prefill only
      absl::StatusOr<AnalysisResult> r = Analyze(one);
      ASSERT_TRUE(r.ok());
      absl::StatusOr<StepTiming> d = ev->Decode(batch, 1);
      ASSERT_TRUE(d.ok());
      const std::string what =
          std::string(c.model) + " kv 1 batch " + std::to_string(batch);
      ExpectClose(r->prefill.totals.flops, d->flops, what + " flops");
      ExpectClose(r->prefill.totals.bytes, d->bytes, what + " bytes");
      ExpectClose(r->prefill.totals.seconds, d->seconds, what + " seconds");
    }
  }
}

TEST(StepEvaluatorTest, OverheadsPimAndSpillMatchAnalyze) {
  // Efficiency factors, per-kernel and per-step overheads, weights spilling
  // into a second tier that computes in memory: every path of the timing.
  Hardware hw = A100Like();
  hw.tiers[0].capacity_bytes = 10e9;  // Llama-3-8B bf16 (16 GB) spills
  MemoryTier pim;
  pim.name = "PIM-DRAM";
  pim.kind = TierKind::kHbm;
  pim.capacity_bytes = 100e9;
  pim.read_bandwidth_bytes_per_second = 500e9;
  pim.write_bandwidth_bytes_per_second = 500e9;
  NearMemoryCompute nmc;
  nmc.internal_bandwidth_bytes_per_second = 4e12;
  nmc.peak_ops_per_second[static_cast<int>(MathType::kBf16)] = 10e12;
  pim.near_memory_compute = nmc;
  hw.tiers.push_back(pim);
  Scenario s = MakeScenario("llama-3-8b", hw);
  s.efficiency.compute = {0.8, 0.7, 0.6, 0.5};
  s.efficiency.memory = {0.9, 0.85, 0.8, 0.75};
  s.efficiency.per_kernel_overhead_seconds = 4e-6;
  s.efficiency.per_step_overhead_seconds = 2e-5;
  // Analyze charges this once in its prefill; a scheduler's steps never.
  s.efficiency.per_request_overhead_seconds = 3e-3;
  s.workload = {16, 999, 2};
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<StepEvaluator> ev = StepEvaluator::Create(s);
  ASSERT_TRUE(ev.ok());
  absl::StatusOr<StepTiming> d = ev->Decode(16, 1000);
  ASSERT_TRUE(d.ok());
  ExpectStepEq(r->decode_first_step, *d, "decode");
  // Overheads: every op's kernels plus the step's 2e-5 s.
  double kernels = 2e-5;
  for (const OpResult& op : r->decode_first_step.ops) {
    kernels += op.overhead_seconds;
  }
  ExpectClose(kernels, d->overhead_seconds, "overhead");
  // The prefill step is Analyze's prefill less the per-request 3 ms.
  absl::StatusOr<StepTiming> pre = ev->Prefill(16, 999);
  ASSERT_TRUE(pre.ok());
  ExpectClose(r->prefill.totals.seconds - 3e-3, pre->seconds, "prefill seconds");
  bool in_memory = false;
  for (const OpResult& op : r->decode_first_step.ops) {
    in_memory |= op.executed_in_tier == 1;
  }
  EXPECT_TRUE(in_memory);  // the spilled weights' matmuls run in PIM
}

TEST(StepEvaluatorTest, BoundFollowsTheSummedRoofs) {
  Scenario s = MakeScenario("llama-2-7b", A100Like());
  absl::StatusOr<StepEvaluator> ev = StepEvaluator::Create(s);
  ASSERT_TRUE(ev.ok());
  // Batch 1 decode reads 13.5 GB of weights for 13.5 GFLOP: memory.
  absl::StatusOr<StepTiming> d = ev->Decode(1, 1024);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->bound, Bound::kMemory);
  EXPECT_GT(d->memory_seconds, d->compute_seconds);
  // A 4096-token prefill does ~2 x 6.7e9 x 4096 = 5.5e13 FLOPs, 176 ms at
  // 312 TFLOP/s, against ~13.5 GB + activations, ~7 ms at 2039 GB/s.
  absl::StatusOr<StepTiming> p = ev->Prefill(1, 4096);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->bound, Bound::kCompute);
  EXPECT_EQ(p->tokens, 4096);
}

TEST(StepEvaluatorTest, ThreadsShareOneEvaluator) {
  Scenario s = MakeScenario("deepseek-v2", A100Like());
  absl::StatusOr<StepEvaluator> ev = StepEvaluator::Create(s);
  ASSERT_TRUE(ev.ok());
  std::vector<double> want;
  for (int64_t kv = 1; kv <= 4000; kv += 7) {
    want.push_back(ev->Decode(8, kv)->seconds);
  }
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      size_t i = 0;
      for (int64_t kv = 1; kv <= 4000; kv += 7, ++i) {
        if (ev->Decode(8, kv)->seconds != want[i]) ++mismatches[t];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

TEST(StepEvaluatorTest, BadInputNamesTheField) {
  Scenario s = MakeScenario("llama-3-8b", A100Like());
  s.workload.batch = 0;
  absl::StatusOr<StepEvaluator> bad = StepEvaluator::Create(s);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("workload.batch"), std::string::npos);

  s.workload.batch = 1;
  absl::StatusOr<StepEvaluator> ev = StepEvaluator::Create(s);
  ASSERT_TRUE(ev.ok());
  absl::StatusOr<StepTiming> d = ev->Decode(0, 10);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(), "batch must be in [1, 65536], got 0");
  d = ev->Decode(1, 0);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(), "kv_length must be in [1, 10000000], got 0");
  d = ev->Prefill(1, 10'000'001);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(),
            "prompt_tokens must be in [1, 10000000], got 10000001");
}

}  // namespace
}  // namespace ridgeline::engine
