// Speculative decoding (draft models, MTP, EAGLE heads) and LoRA adapters:
// the acceptance formula by hand, the speed targets, the batch
// effect, and bad input.
#include "ridgeline/engine/speculative.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "ridgeline/engine/analyze.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/lora.h"
#include "ridgeline/engine/step.h"
#include "test_hardware.h"

namespace ridgeline::engine {
namespace {

using testing::A100Like;
using testing::MakeScenario;

// NVIDIA H200 SXM 141GB, dense rates from shared/data/hardware_specs.csv
// (row nvidia-h200-sxm-141gb): 4800 GB/s HBM3e, BF16/FP16 989.4 TFLOPS, FP8
// 1978.9; usable capacity 143771 MiB = 150.76e9 B (nvidia-smi, same row);
// NVLink4 900 GB/s.
Hardware H200Like() {
  Hardware hw;
  hw.id = "test-h200-like";
  hw.display_name = "H200-like (test)";
  hw.family = "inline";
  hw.plugin = "inline";
  hw.peak_ops_per_second[static_cast<int>(MathType::kBf16)] = 989.4e12;
  hw.peak_ops_per_second[static_cast<int>(MathType::kFp16)] = 989.4e12;
  hw.peak_ops_per_second[static_cast<int>(MathType::kFp8)] = 1978.9e12;
  hw.interconnect_bytes_per_second = 900e9;
  MemoryTier hbm;
  hbm.name = "HBM3e";
  hbm.kind = TierKind::kHbm;
  hbm.capacity_bytes = 143771.0 * 1024 * 1024;
  hbm.read_bandwidth_bytes_per_second = 4800e9;
  hbm.write_bandwidth_bytes_per_second = 4800e9;
  hw.tiers.push_back(hbm);
  return hw;
}

SpeculativeDecoding Spec(const std::string& text, double alpha) {
  SpeculativeDecoding s = ParseSpeculativeMethod(text, "speculative").value();
  s.acceptance_rate = alpha;
  return s;
}

// DeepSeek-V3 with fp8 weights on 8 H200-like devices, expert parallel
// with data-parallel attention (the deployment DeepSeek describes).
Scenario DeepseekV3(int64_t batch) {
  Scenario s = MakeScenario("deepseek-v3", H200Like());
  s.precision.weights = ParseNumberFormat("fp8").value();
  s.parallelism.tensor_parallel = 8;
  s.workload = {batch, 1024, 256};
  return s;
}

Scenario Llama70B(int64_t batch) {
  Scenario s = MakeScenario("llama-3.1-70b", H200Like());
  s.workload = {batch, 1024, 256};
  return s;
}

double Speedup(Scenario s, const SpeculativeDecoding& spec) {
  s.options.speculative = spec;
  const AnalysisResult r = Analyze(s).value();
  EXPECT_TRUE(r.speculative.enabled);
  return r.speculative.speedup;
}

TEST(SpeculativeTest, ExpectedTokensByHand) {
  // k = 4, alpha 0.7: 1 + 0.7 + 0.49 + 0.343 + 0.2401 = 2.7731
  // = (1 - 0.7^5) / (1 - 0.7) = 0.83193 / 0.3.
  EXPECT_NEAR(ExpectedTokensPerStep(Spec("draft:llama-3.2-1b:4", 0.7)), 2.7731,
              1e-12);
  EXPECT_NEAR(ExpectedTokensPerStep(Spec("mtp:1", 0.8)), 1.8, 1e-12);
  EXPECT_DOUBLE_EQ(ExpectedTokensPerStep(Spec("eagle:3", 0)), 1);
  EXPECT_DOUBLE_EQ(ExpectedTokensPerStep(Spec("eagle:3", 1)), 4);  // k + 1
  // Per position 0.8 then 0.5: 1 + 0.8 + 0.8 x 0.5 = 2.2.
  SpeculativeDecoding p = Spec("eagle:2", 0);
  p.acceptance_by_position = {0.8, 0.5};
  EXPECT_NEAR(ExpectedTokensPerStep(p), 2.2, 1e-12);
  EXPECT_DOUBLE_EQ(ExpectedTokensPerStep(SpeculativeDecoding{}), 1);
}

TEST(SpeculativeTest, MethodTextRoundTrips) {
  for (const char* text : {"draft:llama-3.2-1b:4", "mtp:1", "eagle:3"}) {
    EXPECT_EQ(SpeculativeMethodText(Spec(text, 0.5)), text);
  }
  EXPECT_FALSE(ParseSpeculativeMethod("draft:4", "f").ok());
  EXPECT_FALSE(ParseSpeculativeMethod("medusa:4", "f").ok());
  EXPECT_FALSE(ParseSpeculativeMethod("mtp:x", "f").ok());
}

TEST(SpeculativeTest, MtpOnDeepseekV3AtAlpha08) {
  // E = 1.8 tokens per step at most; the MTP layer and the wider verify
  // pass cost something, so the gain is above 1 and below 1.8.
  const double speedup = Speedup(DeepseekV3(1), Spec("mtp:1", 0.8));
  EXPECT_GT(speedup, 1.0);
  EXPECT_LT(speedup, 1.8);
}

TEST(SpeculativeTest, AlphaZeroNeverSpeedsUp) {
  for (int64_t batch : {1, 16, 256}) {
    EXPECT_LE(Speedup(Llama70B(batch), Spec("draft:llama-3.2-1b:4", 0)), 1.0)
        << batch;
    EXPECT_LE(Speedup(Llama70B(batch), Spec("eagle:3", 0)), 1.0) << batch;
    EXPECT_LE(Speedup(DeepseekV3(batch), Spec("mtp:1", 0)), 1.0) << batch;
  }
}

TEST(SpeculativeTest, DraftModelBelowWhatAcceptanceAllows) {
  // k = 4, alpha 0.7: 2.7731 tokens per step; the draft's 4 forwards and
  // the 5-token verify pass keep the speed-up below that.
  const double speedup =
      Speedup(Llama70B(1), Spec("draft:llama-3.2-1b:4", 0.7));
  EXPECT_GT(speedup, 1.0);
  EXPECT_LT(speedup, 2.7731);
}

TEST(SpeculativeTest, StopsPayingAsBatchGrows) {
  // Verification multiplies the tokens per weight byte by k + 1: at batch 1
  // decode is memory-bound and the extra tokens are nearly free; at large
  // batch the step is compute-bound and k + 1 tokens cost k + 1 times as
  // much, so the gain falls below 1.
  const SpeculativeDecoding spec = Spec("draft:llama-3.2-1b:4", 0.7);
  const double b1 = Speedup(Llama70B(1), spec);
  const double b32 = Speedup(Llama70B(32), spec);
  const double b512 = Speedup(Llama70B(512), spec);
  EXPECT_GT(b1, b32);
  EXPECT_GT(b32, b512);
  EXPECT_GT(b1, 1.0);
  EXPECT_LT(b512, 1.0);
}

TEST(SpeculativeTest, StepSplitsDraftAndVerify) {
  Scenario s = Llama70B(4);
  s.options.speculative = Spec("eagle:3", 0.6);
  const StepEvaluator ev = StepEvaluator::Create(s).value();
  const StepTiming d = ev.Decode(4, 2000).value();
  EXPECT_GT(d.draft_seconds, 0);
  EXPECT_GT(d.verify_seconds, 0);
  EXPECT_NEAR(d.seconds, d.draft_seconds + d.verify_seconds, 1e-15);
  // 1 + 0.6 + 0.36 + 0.216 = 2.176.
  EXPECT_NEAR(d.accepted_tokens_per_sequence, 2.176, 1e-12);
  EXPECT_EQ(d.tokens, 4 * 4);  // k + 1 verified per sequence
  // A mixed step of the same four decode sequences costs the same.
  const StepSequence seqs[4] = {{1999, 1}, {1999, 1}, {1999, 1}, {1999, 1}};
  const StepTiming m = ev.Step(seqs).value();
  EXPECT_NEAR(m.seconds, d.seconds, 1e-12 * d.seconds);
  EXPECT_NEAR(m.draft_seconds, d.draft_seconds, 1e-12 * d.seconds);
  // Without speculation the verify pass is the whole step.
  Scenario plain = Llama70B(4);
  const StepTiming p =
      StepEvaluator::Create(plain).value().Decode(4, 2000).value();
  EXPECT_EQ(p.draft_seconds, 0);
  EXPECT_EQ(p.verify_seconds, p.seconds);
  EXPECT_EQ(p.accepted_tokens_per_sequence, 1);
  EXPECT_GT(d.verify_seconds, p.seconds);  // 4 tokens per sequence, not 1
}

absl::Status StatusOf(Scenario s) { return Analyze(s).status(); }

void ExpectBad(const Scenario& s, const std::string& path,
               const std::string& text) {
  const absl::Status st = StatusOf(s);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_EQ(FieldPathOf(st).value_or(""), path) << st;
  EXPECT_NE(std::string(st.message()).find(text), std::string::npos) << st;
}

TEST(SpeculativeTest, BadInputNamesFieldRangeAndValue) {
  Scenario s = Llama70B(1);
  s.options.speculative = Spec("eagle:17", 0.7);
  ExpectBad(s, "options.speculative.tokens", "[1, 16], got 17");
  s.options.speculative = Spec("eagle:0", 0.7);
  ExpectBad(s, "options.speculative.tokens", "[1, 16], got 0");
  s.options.speculative = Spec("eagle:2", 1.5);
  ExpectBad(s, "options.speculative.acceptance_rate", "[0, 1], got 1.5");
  s.options.speculative = Spec("eagle:2", -0.1);
  ExpectBad(s, "options.speculative.acceptance_rate", "got -0.1");
  s.options.speculative = Spec("eagle:2", 0.5);
  s.options.speculative.acceptance_by_position = {0.5};
  ExpectBad(s, "options.speculative.acceptance_by_position", "(2), got 1");
  s.options.speculative = Spec("mtp:1", 0.8);
  ExpectBad(s, "options.speculative.method", "llama-3.1-70b has 0");
  // Llama-3.1-70B bf16 (141.1 GB) fits the 150.8 GB H200 alone; an 8B
  // draft (16.1 GB) beside it does not.
  s.options.speculative = Spec("draft:llama-3.1-8b:4", 0.7);
  ExpectBad(s, "options.speculative.draft_model", "must fit beside");
  s.options.speculative = Spec("draft:no-such-model:4", 0.7);
  EXPECT_EQ(FieldPathOf(StatusOf(s)).value_or(""),
            "options.speculative.draft_model");
}

TEST(LoraTest, AdapterBytesByHand) {
  Scenario s = MakeScenario("llama-3.1-8b", A100Like());
  s.options.lora.rank = 64;
  s.options.lora.adapters = 4;
  const AnalysisResult r = Analyze(s).value();
  // Llama-3.1-8B, per layer in + out: q 4096 + 4096, k 4096 + 1024, v 4096
  // + 1024, o 4096 + 4096, gate 4096 + 14336, up 4096 + 14336, down 14336 +
  // 4096 = 81920; x rank 64 x 2 bytes (bf16) x 32 layers = 335,544,320 B.
  EXPECT_DOUBLE_EQ(r.lora.adapter_bytes, 335544320.0);
  EXPECT_DOUBLE_EQ(r.lora.resident_bytes, 4 * 335544320.0);
  Scenario plain = MakeScenario("llama-3.1-8b", A100Like());
  const AnalysisResult p = Analyze(plain).value();
  EXPECT_DOUBLE_EQ(r.memory.required_bytes[0] - p.memory.required_bytes[0],
                   4 * 335544320.0);
}

TEST(LoraTest, Rank64AllModulesSlowsBatch1DecodeBelow30Percent) {
  for (const char* model : {"llama-3.1-8b", "llama-3.1-70b"}) {
    Scenario s = MakeScenario(model, H200Like());
    s.workload = {1, 1024, 256};
    const double plain = Analyze(s).value().tpot_mean_seconds;
    s.options.lora.rank = 64;
    s.options.lora.adapters = 8;
    const double lora = Analyze(s).value().tpot_mean_seconds;
    EXPECT_GT(lora, plain) << model;
    EXPECT_LT(lora / plain, 1.3) << model;
  }
}

TEST(LoraTest, MoreDistinctAdaptersCostMoreAtBatch) {
  // 32 sequences over 1 adapter read it once; over 32 adapters they touch
  // 32 (1 - (31/32)^32) = 20.6 of them.
  Scenario s = MakeScenario("llama-3.1-8b", A100Like());
  s.workload = {32, 512, 64};
  s.options.lora.rank = 16;
  const double one = Analyze(s).value().tpot_mean_seconds;
  s.options.lora.adapters = 32;
  const double many = Analyze(s).value().tpot_mean_seconds;
  EXPECT_GT(many, one);
}

TEST(LoraTest, ColdAdaptersLoadOverTheHostLink) {
  Hardware hw = A100Like();
  MemoryTier host;
  host.name = "host DDR over PCIe 4.0 x16";
  host.kind = TierKind::kHostLink;
  host.capacity_bytes = 512e9;
  host.read_bandwidth_bytes_per_second = 32e9;
  host.write_bandwidth_bytes_per_second = 32e9;
  hw.tiers.push_back(host);
  Scenario s = MakeScenario("llama-3.1-8b", hw);
  s.options.lora.rank = 64;
  const double warm = Analyze(s).value().ttft_seconds;
  s.options.lora.cold_fraction = 0.25;
  const AnalysisResult r = Analyze(s).value();
  // 335,544,320 B / 32e9 B/s = 10.486 ms per cold load; x 0.25 = 2.621 ms.
  EXPECT_NEAR(r.lora.cold_load_seconds, 335544320.0 / 32e9, 1e-15);
  EXPECT_NEAR(r.ttft_seconds - warm, 0.25 * 335544320.0 / 32e9, 1e-12);
}

TEST(LoraTest, BadInput) {
  Scenario s = MakeScenario("llama-3.1-8b", A100Like());
  s.options.lora.rank = 2000;
  ExpectBad(s, "options.lora.rank", "[1, 1024], got 2000");
  s.options.lora.rank = 8;
  s.options.lora.cold_fraction = 2;
  ExpectBad(s, "options.lora.cold_fraction", "[0, 1], got 2");
  s.options.lora.cold_fraction = 0;
  s.options.lora.adapters = 0;
  ExpectBad(s, "options.lora.adapters", "got 0");
  EXPECT_EQ(ParseLoraModules("q,v", "m").value(), kLoraQ | kLoraV);
  EXPECT_EQ(ParseLoraModules("all", "m").value(), kAllLoraModules);
  EXPECT_EQ(LoraModulesText(kAllLoraModules), "q,k,v,o,gate,up,down");
  const absl::Status bad = ParseLoraModules("q,x", "lora_modules").status();
  EXPECT_EQ(FieldPathOf(bad).value_or(""), "lora_modules");
}

}  // namespace
}  // namespace ridgeline::engine
