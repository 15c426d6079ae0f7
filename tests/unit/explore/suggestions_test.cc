// What-if suggestions (explore::AddSuggestions) on real analyses: computed
// gains that help, sorted best first; none when the option is off at the
// caller; no batch suggestion without a compute roof; a spilled model told
// which format makes it fit. (Moved from the engine's analyze tests with
// the code.)
#include "ridgeline/explore/suggestions.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "ridgeline/engine/analyze.h"
#include "test_hardware.h"

namespace ridgeline::explore {
namespace {

using engine::AnalysisResult;
using engine::Hardware;
using engine::MathType;
using engine::MemoryTier;
using engine::Scenario;
using engine::Suggestion;
using engine::TierKind;
using engine::testing::A100Like;
using engine::testing::MakeScenario;

engine::NumberFormat Fmt(const char* name) {
  return engine::ParseNumberFormat(name).value();
}

// Llama-2-7B fp16 decode at KV 1024 on the A100-like part (the engine
// tests' golden scenario).
Scenario Llama2Decode() {
  Scenario s = MakeScenario("llama-2-7b", A100Like());
  s.precision = {Fmt("fp16"), Fmt("fp16"), Fmt("fp16")};
  s.workload = {1, 1023, 64};
  return s;
}

AnalysisResult WithSuggestions(const Scenario& s) {
  absl::StatusOr<AnalysisResult> r = engine::Analyze(s);
  EXPECT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->suggestions.empty());  // the engine adds none itself
  AddSuggestions(s, &*r);
  return *r;
}

TEST(SuggestionsTest, AreComputedAndImprove) {
  Scenario s = Llama2Decode();
  s.hardware.peak_ops_per_second[static_cast<int>(MathType::kFp8)] = 624e12;
  const AnalysisResult r = WithSuggestions(s);
  std::set<std::string> kinds;
  for (const Suggestion& sg : r.suggestions) {
    kinds.insert(sg.kind);
    EXPECT_GT(sg.gain, 1.01) << sg.text;
    EXPECT_EQ(sg.metric, "decode_tokens_per_second");
    EXPECT_NE(sg.text.find("x decode tok/s"), std::string::npos) << sg.text;
  }
  EXPECT_TRUE(kinds.count("weights-format"));
  EXPECT_TRUE(kinds.count("kv-format"));
  EXPECT_TRUE(kinds.count("batch"));
  // int4-g128 streams 4.125 / 16 of the weight bytes: close to 3.5x faster
  // decode (KV and activations unchanged).
  for (const Suggestion& sg : r.suggestions) {
    if (sg.change == "weights int4-g128") {
      EXPECT_GT(sg.gain, 3.0);
      EXPECT_LT(sg.gain, 16.0 / 4.125);
    }
  }
  for (size_t i = 1; i < r.suggestions.size(); ++i) {
    EXPECT_GE(r.suggestions[i - 1].gain, r.suggestions[i].gain);
  }
}

TEST(SuggestionsTest, ComputeRoofUnknownSuggestsNoBatchSize) {
  // 76.8 GB/s LPDDR5X, 16 GB, no peak (the Snapdragon 8 Gen 3 row of
  // data/hardware_specs.csv, provenance D).
  Scenario s = Llama2Decode();
  Hardware hw;
  hw.id = "test-no-peak-phone";
  hw.family = hw.plugin = "inline";
  MemoryTier lpddr;
  lpddr.name = "LPDDR5X";
  lpddr.kind = TierKind::kLpddr;
  lpddr.capacity_bytes = 16e9;
  lpddr.read_bandwidth_bytes_per_second = 76.8e9;
  lpddr.write_bandwidth_bytes_per_second = 76.8e9;
  hw.tiers.push_back(lpddr);
  s.hardware = hw;
  const AnalysisResult r = WithSuggestions(s);
  std::set<std::string> kinds;
  for (const Suggestion& sg : r.suggestions) {
    kinds.insert(sg.kind);
    EXPECT_EQ(sg.text.find("ridge"), std::string::npos) << sg.text;
  }
  // Batching pays only up to the (unknown) compute roof: not suggested.
  EXPECT_FALSE(kinds.count("batch"));
  // int4-g128 weights (4.125 of 16 bits) cut the 13.2 GB of weight reads
  // to 3.4 GB, so decode gets > 3x faster.
  ASSERT_TRUE(kinds.count("weights-format"));
  for (const Suggestion& sg : r.suggestions) {
    if (sg.change == "weights int4-g128") {
      EXPECT_GT(sg.gain, 3.0);
      EXPECT_LT(sg.gain, 16.0 / 4.125);
    }
  }
}

TEST(SuggestionsTest, SpilledWeightsAreToldTheFormatThatFits) {
  // 10 GB at 2000 GB/s, then 100 GB of host memory at 64 GB/s: the 13.5 GB
  // of bf16 Llama-2-7B weights spill 3.5 GB to the host; int4 weights
  // (3.47 GB) fit the fast tier, a > 5x decode gain.
  Hardware hw = A100Like();
  hw.tiers[0].capacity_bytes = 10e9;
  hw.tiers[0].read_bandwidth_bytes_per_second = 2000e9;
  hw.tiers[0].write_bandwidth_bytes_per_second = 2000e9;
  MemoryTier host;
  host.name = "host";
  host.kind = TierKind::kHostLink;
  host.capacity_bytes = 100e9;
  host.read_bandwidth_bytes_per_second = 64e9;
  host.write_bandwidth_bytes_per_second = 64e9;
  hw.tiers.push_back(host);
  Scenario s = MakeScenario("llama-2-7b", hw);
  s.workload = {1, 1023, 2};
  const AnalysisResult r = WithSuggestions(s);
  bool found = false;
  for (const Suggestion& sg : r.suggestions) {
    if (sg.change == "weights int4-g128") {
      found = true;
      EXPECT_GT(sg.gain, 5);
      EXPECT_DOUBLE_EQ(sg.gain, sg.after / sg.before);
    }
    EXPECT_GT(sg.gain, 1) << sg.text;
  }
  EXPECT_TRUE(found);
}

// Each suggestion is an analysis of its own: a caller that has stopped
// (AnalysisOptions::should_stop) gets none, and every attempt asked.
TEST(Suggestions, StopWhenTheCallerStops) {
  Scenario s = Llama2Decode();
  absl::StatusOr<AnalysisResult> r = engine::Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  AddSuggestions(s, &*r);
  ASSERT_FALSE(r->suggestions.empty());  // there is something to stop
  r->suggestions.clear();
  int asked = 0;
  s.options.should_stop = [&] {
    ++asked;
    return true;
  };
  AddSuggestions(s, &*r);
  EXPECT_TRUE(r->suggestions.empty());
  EXPECT_GT(asked, 0);
}

}  // namespace
}  // namespace ridgeline::explore
