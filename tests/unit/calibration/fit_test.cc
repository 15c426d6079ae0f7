// The fit must recover efficiencies that were used to generate the rows with
// the engine itself.
#include "ridgeline/calibration/fit.h"

#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "test_hardware.h"

namespace ridgeline::calibration {
namespace {

using testing::RoundGpu;

absl::StatusOr<engine::Hardware> Lookup(std::string_view id) {
  engine::Hardware hw = RoundGpu();
  if (id == "test-gpu-2") {  // twice the bandwidth, same compute
    hw.id = "test-gpu-2";
    hw.tiers[0].read_bandwidth_bytes_per_second = 2e12;
    hw.tiers[0].write_bandwidth_bytes_per_second = 2e12;
  } else if (id == "test-gpu-units") {  // publishes 100 compute units
    hw.id = "test-gpu-units";
    hw.compute_units = 100;
  } else if (id == "test-gddr") {  // same numbers, GDDR memory
    hw.id = "test-gddr";
    hw.tiers[0].kind = engine::TierKind::kGddr;
  } else if (id == "test-ecc") {  // same numbers, inline ECC on (1/16)
    hw.id = "test-ecc";
    hw.tiers[0].inline_ecc_share = 1.0 / 16;
  } else if (id.substr(0, 9) == "test-tdp-") {  // "test-tdp-50": 50 W
    hw.id = std::string(id);
    hw.tdp_watts = std::stod(std::string(id.substr(9)));
  } else if (id != "test-gpu") {
    return absl::NotFoundError(std::string(id));
  }
  return hw;
}

MeasurementRow Row(std::string id, std::string hw, std::string model,
                   std::string metric, int64_t prompt, int64_t gen) {
  MeasurementRow r;
  r.id = std::move(id);
  r.hardware_id = std::move(hw);
  r.model_id = std::move(model);
  r.weight_format = "fp16";
  r.kv_format = "fp16";
  r.batch = 1;
  r.prompt_len = prompt;
  r.gen_len = gen;
  r.framework = "synthetic-1.0";
  r.metric = std::move(metric);
  r.unit = r.metric == "ttft_ms" ? "ms" : "tok/s";
  r.value = 1;  // replaced by the engine's answer below
  r.usable = true;
  return r;
}

engine::Efficiency Truth() {
  engine::Efficiency e;
  e.memory.fill(0.7);
  e.compute.fill(0.45);
  e.per_step_overhead_seconds = 2e-3;
  e.per_request_overhead_seconds = 3e-3;
  e.profile_name = "truth";
  return e;
}

// Rows whose "measurement" is the engine's prediction under Truth(), or
// under `truth_of(platform)` when given.
std::vector<PreparedRow> Synthetic(
    const std::vector<std::string>& platforms,
    const std::function<engine::Efficiency(const std::string&)>& truth_of = {}) {
  std::vector<PreparedRow> out;
  int n = 0;
  for (const std::string& hw : platforms) {
    for (const char* model : {"llama-3.2-1b", "llama-2-7b", "llama-3-8b", "llama-2-13b"}) {
      for (auto [metric, prompt, gen] :
           {std::tuple{"decode_tok_s", 0, 128}, std::tuple{"prefill_tok_s", 512, 0},
            std::tuple{"ttft_ms", 2048, 1},
            // Memory-bound (compute roof ~1/6 of the memory roof on
            // test-gpu): these pin the per-request overhead.
            std::tuple{"ttft_ms", 16, 1}}) {
        auto p = PrepareRow(Row("s" + std::to_string(++n), hw, model, metric, prompt, gen),
                            Lookup);
        EXPECT_TRUE(p.ok()) << p.status();
        if (!p.ok()) continue;
        auto v = PredictRow(*p, truth_of ? truth_of(hw) : Truth(), false);
        EXPECT_TRUE(v.ok()) << v.status();
        p->row.value = *v;
        out.push_back(*std::move(p));
      }
    }
  }
  return out;
}

TEST(TheilSen, IgnoresOneWildPoint) {
  // y = 2 + 3x exactly, except one outlier.
  std::vector<double> x = {1, 2, 3, 4, 5, 6};
  std::vector<double> y = {5, 8, 11, 14, 17, 100};
  Line l = TheilSen(x, y);
  EXPECT_NEAR(l.slope, 3, 1e-9);
  EXPECT_NEAR(l.intercept, 2, 1e-9);
}

TEST(FitOverheadAndEta, KeepsTheFloorOfFloorBoundRows) {
  // Four calls on a 10 us per-call floor whose bounds are far below it
  // (0.1 .. 0.4 us), at eta 0.8: measured = 10 + bound / 0.8 =
  // 10.125, 10.25, 10.375, 10.5 us. Every pairwise slope is 1 / 0.8 = 1.25,
  // so Theil-Sen gives intercept 10 us; the shortest row is 10.125 us, so
  // the intercept lies in [0, 10.125] and is kept (the old rule dropped any
  // intercept >= 0.9 x the shortest row and fitted a pure ratio instead).
  const std::vector<double> bound = {0.1e-6, 0.2e-6, 0.3e-6, 0.4e-6};
  const std::vector<double> measured = {10.125e-6, 10.25e-6, 10.375e-6,
                                        10.5e-6};
  const LinearFit fit = FitOverheadAndEta(bound, measured, 0.01);
  EXPECT_NEAR(fit.overhead_seconds, 10e-6, 1e-12);
  EXPECT_NEAR(fit.eta, 0.8, 1e-9);
}

TEST(FitOverheadAndEta, ClampsANegativeInterceptToZero) {
  // measured = -1 + 2 x bound (seconds): Theil-Sen slope 2, intercept -1.
  // Clamped to 0, the slope through the origin is the median of y / x =
  // {1/1, 3/2, 5/3, 7/4}: (1.5 + 1.6667) / 2 = 1.58333, eta = 1 / 1.58333 =
  // 0.631579.
  const LinearFit fit = FitOverheadAndEta({1, 2, 3, 4}, {1, 3, 5, 7}, 0.01);
  EXPECT_EQ(fit.overhead_seconds, 0);
  EXPECT_NEAR(fit.eta, 1 / 1.5833333333, 1e-6);
}

TEST(WeightedLeastSquares, RecoversAnExactRelation) {
  // Rows exactly on y = 8 + 1.25 x + 0.002 n (a floor, a slope, a cost per
  // unit n): (x, n) = (0, 0), (0, 1000), (100, 0), (10, 500) ->
  // y = 8, 10, 133, 21.5. Exact rows solve the normal equations exactly,
  // whatever the weights (here 1 / y^2).
  const std::vector<std::vector<double>> x = {
      {1, 0, 0}, {1, 0, 1000}, {1, 100, 0}, {1, 10, 500}};
  const std::vector<double> y = {8, 10, 133, 21.5};
  std::vector<double> w;
  for (double v : y) w.push_back(1 / (v * v));
  const std::optional<std::vector<double>> c = WeightedLeastSquares(x, y, w);
  ASSERT_TRUE(c.has_value());
  EXPECT_NEAR((*c)[0], 8, 1e-9);
  EXPECT_NEAR((*c)[1], 1.25, 1e-12);
  EXPECT_NEAR((*c)[2], 0.002, 1e-14);
}

TEST(WeightedLeastSquares, WeighsRowsByTheirWeights) {
  // One unknown (a constant) over y = 8 and 12: with weights 1 / y^2 the
  // estimate is sum(w y) / sum(w) = (8/64 + 12/144) / (1/64 + 1/144) =
  // (0.125 + 0.0833333) / (0.015625 + 0.0069444) = 0.2083333 / 0.0225694
  // = 9.2308 (= 120 / 13), nearer the smaller row, where plain least squares
  // gives the mean, 10.
  const std::optional<std::vector<double>> c =
      WeightedLeastSquares({{1}, {1}}, {8, 12}, {1.0 / 64, 1.0 / 144});
  ASSERT_TRUE(c.has_value());
  EXPECT_NEAR((*c)[0], 120.0 / 13, 1e-12);
  EXPECT_NEAR((*WeightedLeastSquares({{1}, {1}}, {8, 12}, {1, 1}))[0], 10,
              1e-12);
  // A feature no row varies (always 0) is not pinned down: nullopt.
  EXPECT_FALSE(
      WeightedLeastSquares({{1, 0}, {1, 0}}, {8, 12}, {1, 1}).has_value());
}

TEST(Fit, RecoversEfficienciesAndOverheadFromEngineRows) {
  std::vector<PreparedRow> rows = Synthetic({"test-gpu"});
  std::vector<const PreparedRow*> ptrs;
  for (const auto& r : rows) ptrs.push_back(&r);
  engine::Efficiency fit = FitEfficiency(ptrs, engine::Efficiency{}, FitOptions{});
  for (int c = 0; c < engine::kOpClassCount; ++c) {
    EXPECT_NEAR(fit.memory[c], 0.7, 0.01) << c;
    EXPECT_NEAR(fit.compute[c], 0.45, 0.01) << c;
  }
  EXPECT_NEAR(fit.per_step_overhead_seconds, 2e-3, 0.05e-3);
  EXPECT_NEAR(fit.per_request_overhead_seconds, 3e-3, 0.05e-3);
}

TEST(Fit, PerRequestOverheadWithoutDecodeRows) {
  // Only TTFT rows (as TensorRT-LLM's published tables): short prompts are
  // memory-bound, so the excess over the memory roof is the per-request
  // cost; long prompts then give eta_c. Memory efficiency stays 1 (nothing
  // measures it), so the truth has eta_m = 1.
  engine::Efficiency truth;
  truth.compute.fill(0.6);
  truth.per_request_overhead_seconds = 4e-3;
  truth.profile_name = "truth";
  std::vector<PreparedRow> rows;
  int n = 0;
  for (const char* model : {"llama-2-7b", "llama-3-8b", "llama-2-13b"}) {
    for (int64_t prompt : {16, 32, 2048, 4096}) {
      auto p = PrepareRow(Row("t" + std::to_string(++n), "test-gpu", model, "ttft_ms",
                              prompt, 1),
                          Lookup);
      ASSERT_TRUE(p.ok()) << p.status();
      p->row.value = *PredictRow(*p, truth, false);
      rows.push_back(*std::move(p));
    }
  }
  std::vector<const PreparedRow*> ptrs;
  for (const auto& r : rows) ptrs.push_back(&r);
  engine::Efficiency fit = FitEfficiency(ptrs, engine::Efficiency{}, FitOptions{});
  EXPECT_NEAR(fit.per_request_overhead_seconds, 4e-3, 1e-6);
  EXPECT_EQ(fit.per_step_overhead_seconds, 0);
  for (int c = 0; c < engine::kOpClassCount; ++c) {
    EXPECT_NEAR(fit.compute[c], 0.6, 0.005) << c;
    EXPECT_EQ(fit.memory[c], 1) << c;
  }
}

TEST(Fit, KernelRowsFitTheirOwnOpClass) {
  // bench/gpu-style rows: GEMMs (N = K = 8192) with M <= 64 are GEMVs and
  // memory-bound on test-gpu (M = 1: 134 MB in 134 us vs 1.3 us of math),
  // M >= 2048 compute-bound GEMMs (M = 2048: 275 GFLOP in 2.7 ms vs 0.2 ms of
  // traffic); memory read/copy kernels are elementwise memory streams. Each
  // class has its own eta; one launch overhead.
  engine::Efficiency truth;
  truth.compute[static_cast<int>(engine::OpClass::kGemm)] = 0.7;
  truth.memory[static_cast<int>(engine::OpClass::kGemv)] = 0.8;
  truth.memory[static_cast<int>(engine::OpClass::kElementwise)] = 0.9;
  truth.per_kernel_overhead_seconds = 5e-6;
  truth.profile_name = "truth";
  std::vector<PreparedRow> rows;
  auto add = [&](MeasurementRow r) {
    r.unit = "us";
    auto p = PrepareRow(r, Lookup);
    ASSERT_TRUE(p.ok()) << r.id << ": " << p.status();
    p->row.value = *PredictRow(*p, truth, false);
    rows.push_back(*std::move(p));
  };
  for (int64_t m : {1, 2, 4, 8, 2048, 4096, 8192}) {
    MeasurementRow r = Row("g" + std::to_string(m), "test-gpu", "gemm-kernel",
                           "kernel_us", 0, 0);
    r.note = "kernel shape: GEMM M=" + std::to_string(m) + " N=8192 K=8192; inputs rotated";
    add(r);
  }
  for (const char* kind : {"memory-read-kernel", "memory-copy-kernel"}) {
    for (int64_t mib : {256, 1024}) {
      MeasurementRow r = Row(std::string(kind) + std::to_string(mib), "test-gpu", kind,
                             "kernel_us", 0, 0);
      const int64_t moved = mib * (1 << 20) * (std::string(kind) == "memory-copy-kernel" ? 2 : 1);
      r.note = "bytes moved (read + written)=" + std::to_string(moved);
      add(r);
    }
  }
  std::vector<const PreparedRow*> ptrs;
  for (const auto& r : rows) ptrs.push_back(&r);
  engine::Efficiency fit = FitEfficiency(ptrs, engine::Efficiency{}, FitOptions{});
  EXPECT_NEAR(fit.per_kernel_overhead_seconds, 5e-6, 1e-9);
  EXPECT_NEAR(fit.compute[static_cast<int>(engine::OpClass::kGemm)], 0.7, 1e-6);
  EXPECT_NEAR(fit.memory[static_cast<int>(engine::OpClass::kGemv)], 0.8, 1e-6);
  EXPECT_NEAR(fit.memory[static_cast<int>(engine::OpClass::kElementwise)], 0.9, 1e-6);
  // A class without rows of its own takes the median of its roof's rows:
  // memory-bound rows are 4 GEMVs at 0.8 and 4 streams at 0.9 -> 0.85.
  EXPECT_NEAR(fit.memory[static_cast<int>(engine::OpClass::kAttention)], 0.85, 1e-6);
}

TEST(Fit, RecoversKernelEfficiencyAndLaunchOverhead) {
  std::vector<PreparedRow> rows;
  engine::Efficiency truth;
  truth.memory.fill(0.6);
  truth.per_kernel_overhead_seconds = 10e-6;
  for (int64_t kv : {512, 1024, 2048, 4096, 8192}) {
    MeasurementRow r = Row("k" + std::to_string(kv), "test-gpu",
                           "attention-decode-kernel", "kernel_us", kv, 1);
    r.unit = "us";
    r.note = "kernel shape: 32 q heads = 8 kv heads, head_dim 128";
    auto p = PrepareRow(r, Lookup);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->attention.num_kv_heads, 8);
    p->row.value = *PredictRow(*p, truth, false);
    rows.push_back(*std::move(p));
  }
  std::vector<const PreparedRow*> ptrs;
  for (const auto& r : rows) ptrs.push_back(&r);
  engine::Efficiency fit = FitEfficiency(ptrs, engine::Efficiency{}, FitOptions{});
  EXPECT_NEAR(fit.memory[static_cast<int>(engine::OpClass::kAttention)], 0.6, 1e-6);
  EXPECT_NEAR(fit.per_kernel_overhead_seconds, 10e-6, 1e-9);
}

TEST(Fit, CrossValidationPredictsAnUnseenPlatform) {
  // Two platforms with the same true efficiency: a profile fitted on one
  // predicts the other almost exactly.
  std::vector<PreparedRow> rows = Synthetic({"test-gpu", "test-gpu-2"});
  std::vector<RowResult> cv = CrossValidate(rows, FitOptions{});
  ASSERT_EQ(cv.size(), rows.size());
  for (const RowResult& r : cv) {
    ASSERT_TRUE(r.evaluated) << r.id << ": " << r.status;
    EXPECT_LT(*r.ape, 0.02) << r.id << " " << r.metric;
    EXPECT_EQ(r.profile, "nvidia.synthetic");
    EXPECT_FALSE(r.beats_bound);
  }
  std::vector<Profile> profiles = FitProfiles(rows, FitOptions{});
  // any.synthetic, nvidia.synthetic, and one per platform.
  ASSERT_EQ(profiles.size(), 4u);
  EXPECT_EQ(profiles[0].name, "any.synthetic");
  EXPECT_EQ(profiles[1].name, "nvidia.synthetic");
}

TEST(Fit, MemoryTechnologyLevelFromDecodeRowsOfOtherPlatforms) {
  // Two HBM platforms whose decode reaches 0.7 of bandwidth and one GDDR
  // platform at 0.9 (same compute): the HBM and GDDR levels get their own
  // eta_m from decode rows and keep the family's compute side.
  auto truth_of = [](const std::string& hw) {
    engine::Efficiency e = Truth();
    if (hw == "test-gddr") e.memory.fill(0.9);
    return e;
  };
  std::vector<PreparedRow> rows =
      Synthetic({"test-gpu", "test-gpu-2", "test-gddr"}, truth_of);
  std::vector<Profile> profiles = FitProfiles(rows, FitOptions{});
  const Profile* hbm = nullptr;
  const Profile* gddr = nullptr;
  const Profile* family = nullptr;
  for (const Profile& p : profiles) {
    if (p.name == "nvidia-hbm.synthetic") hbm = &p;
    if (p.name == "nvidia-gddr.synthetic") gddr = &p;
    if (p.name == "nvidia.synthetic") family = &p;
  }
  ASSERT_NE(hbm, nullptr);
  ASSERT_NE(gddr, nullptr);
  ASSERT_NE(family, nullptr);
  EXPECT_EQ(hbm->memory, "hbm");
  EXPECT_EQ(gddr->memory, "gddr");
  EXPECT_NEAR(hbm->efficiency.memory[0], 0.7, 0.01);
  EXPECT_NEAR(gddr->efficiency.memory[0], 0.9, 0.01);
  EXPECT_EQ(hbm->efficiency.compute, family->efficiency.compute);
  EXPECT_EQ(gddr->efficiency.per_request_overhead_seconds,
            family->efficiency.per_request_overhead_seconds);
  // Leave one platform out: test-gpu's level is fitted on test-gpu-2 alone;
  // the only GDDR platform has no other of its kind, so the family predicts it.
  for (const RowResult& r : CrossValidate(rows, FitOptions{})) {
    ASSERT_TRUE(r.evaluated) << r.id << ": " << r.status;
    if (r.metric != "decode_tok_s") continue;
    EXPECT_EQ(r.profile, r.hardware_id == "test-gddr" ? "nvidia.synthetic"
                                                       : "nvidia-hbm.synthetic")
        << r.id;
    if (r.hardware_id != "test-gddr") {
      EXPECT_LT(*r.ape, 0.02) << r.id;
    }
  }
}

TEST(Fit, EtasOfAPartWithInlineEccAreNetOfItsCheckBits) {
  // Two parts alike but for inline ECC on the second's memory (1/16 of its
  // raw bandwidth carries check bits); both rows generated at eta_m 0.7 net
  // of the check bits. Measured against the bound, the ECC part would read
  // 0.7 x 15/16 = 0.656 and the fit would blend the two; net of them it
  // recovers 0.7, says so (Efficiency::inline_ecc), and each part predicts
  // the other's decode rows.
  auto truth_of = [](const std::string&) {
    engine::Efficiency e = Truth();
    e.inline_ecc = true;
    return e;
  };
  std::vector<PreparedRow> rows = Synthetic({"test-gpu", "test-ecc"}, truth_of);
  std::vector<const PreparedRow*> ptrs;
  for (const auto& r : rows) ptrs.push_back(&r);
  engine::Efficiency fit = FitEfficiency(ptrs, engine::Efficiency{}, FitOptions{});
  EXPECT_TRUE(fit.inline_ecc);
  EXPECT_NEAR(fit.memory[0], 0.7, 0.005);
  int decode = 0;
  for (const RowResult& r : CrossValidate(rows, FitOptions{})) {
    ASSERT_TRUE(r.evaluated) << r.id << ": " << r.status;
    if (r.metric != "decode_tok_s") continue;
    ++decode;
    // Without the share the ECC part's decode would be 1/15 = 6.7 % fast.
    EXPECT_LT(*r.ape, 0.01) << r.id << " on " << r.hardware_id;
  }
  EXPECT_EQ(decode, 8);
}

TEST(Fit, RecoversThePowerExponentAndTheDequantisedShare) {
  // Three parts of 100 TFLOP/s fp16 with TDPs of 50, 100 and 200 W (0.5, 1
  // and 2 W per peak TFLOP/s). Their prefills are "measured" at eta_c 0.45
  // at 1 W per TFLOP/s with exponent 0.4 (so 0.45 x 0.5^0.4 = 0.341 on the
  // 50 W part, 0.45 x 2^0.4 = 0.594 on the 200 W one), and gguf-q4_0 weights
  // at 0.8 of that. The fit returns the exponent, eta_c at the reference and
  // the share (attention carries no weights, so the rows' own share is a
  // little above 0.8 and the fit's is within 0.02).
  engine::Efficiency truth;
  truth.compute.fill(0.45);
  truth.compute_power_exponent = 0.4;
  truth.dequantized_compute_share = 0.8;
  truth.profile_name = "truth";
  std::vector<PreparedRow> rows;
  int n = 0;
  for (const char* hw : {"test-tdp-50", "test-tdp-100", "test-tdp-200"}) {
    for (const char* weights : {"fp16", "gguf-q4_0"}) {
      for (const char* model : {"llama-2-7b", "llama-3-8b", "llama-2-13b"}) {
        for (int64_t prompt : {512, 2048}) {
          MeasurementRow r = Row("p" + std::to_string(++n), hw, model,
                                 "prefill_tok_s", prompt, 0);
          r.weight_format = weights;
          absl::StatusOr<PreparedRow> p = PrepareRow(r, Lookup);
          ASSERT_TRUE(p.ok()) << p.status();
          p->row.value = *PredictRow(*p, truth, false);
          rows.push_back(*std::move(p));
        }
      }
    }
  }
  std::vector<const PreparedRow*> ptrs;
  for (const auto& r : rows) ptrs.push_back(&r);
  engine::Efficiency fit = FitEfficiency(ptrs, engine::Efficiency{}, FitOptions{});
  EXPECT_NEAR(fit.compute_power_exponent, 0.4, 0.01);
  EXPECT_NEAR(fit.compute[static_cast<int>(engine::OpClass::kGemm)], 0.45, 0.01);
  EXPECT_NEAR(fit.dequantized_compute_share, 0.8, 0.02);
  EXPECT_NEAR(fit.dequantized_compute_share_by_format.at("gguf-q4_0"), 0.8, 0.02);
  // Two parts alone cannot tell a trend from their own quirks: no exponent.
  std::vector<const PreparedRow*> two;
  for (const auto& r : rows) {
    if (r.row.hardware_id != "test-tdp-200") two.push_back(&r);
  }
  EXPECT_EQ(FitEfficiency(two, engine::Efficiency{}, FitOptions{}).compute_power_exponent, 0);
  // Nor can three parts within 1.5x of each other's watts per TFLOP/s (80,
  // 100 and 110 W: 1.375x), however many rows they have.
  std::vector<PreparedRow> close;
  for (const char* hw : {"test-tdp-80", "test-tdp-100", "test-tdp-110"}) {
    for (const char* model : {"llama-2-7b", "llama-3-8b"}) {
      absl::StatusOr<PreparedRow> p =
          PrepareRow(Row(std::string("c-") + hw + model, hw, model, "prefill_tok_s", 512, 0),
                     Lookup);
      ASSERT_TRUE(p.ok()) << p.status();
      p->row.value = *PredictRow(*p, truth, false);
      close.push_back(*std::move(p));
    }
  }
  std::vector<const PreparedRow*> close_ptrs;
  for (const auto& r : close) close_ptrs.push_back(&r);
  EXPECT_EQ(FitEfficiency(close_ptrs, engine::Efficiency{}, FitOptions{})
                .compute_power_exponent,
            0);
}

// GEMM rows "measured" as the kernel model under `truth` on `hw`.
std::vector<PreparedRow> GemmRows(const std::string& hw, const engine::KernelModel& truth,
                                  const std::vector<int64_t>& ns,
                                  const std::vector<int64_t>& ks) {
  std::vector<PreparedRow> rows;
  engine::Efficiency eff;
  eff.kernel = truth;
  for (int64_t n : ns) {
    for (int64_t k : ks) {
      MeasurementRow r = Row(hw + "-" + std::to_string(n) + "-" + std::to_string(k), hw,
                             "gemm-kernel", "kernel_us", 0, 0);
      r.unit = "us";
      r.note = "kernel shape: GEMM M=1 N=" + std::to_string(n) + " K=" + std::to_string(k) +
               "; inputs rotated";
      absl::StatusOr<PreparedRow> p = PrepareRow(r, Lookup);
      EXPECT_TRUE(p.ok()) << p.status();
      if (!p.ok()) continue;
      p->row.value = *PredictRow(*p, eff, false);
      rows.push_back(*std::move(p));
    }
  }
  return rows;
}

std::vector<const PreparedRow*> Pointers(const std::vector<PreparedRow>& rows) {
  std::vector<const PreparedRow*> out;
  for (const PreparedRow& r : rows) out.push_back(&r);
  return out;
}

TEST(FitKernelModel, RecoversTheGemmFloorAndTheSerialKLoop) {
  // One-tile GEMMs (M = 1, N <= 32) on 100 units, every byte stream under
  // 0.27 us, so all sit on the floor: 3 us + 0.1 us per 128-byte K step,
  // split-K capping a CTA at 4,096 bytes. K = 128 .. 4096 bf16 is 2, 8, 16,
  // 32 and 32 steps: 3.2, 3.8, 4.6, 6.2 and 6.2 us (+ the stream).
  engine::KernelModel truth;
  truth.present = true;
  truth.per_call_seconds[static_cast<int>(engine::KernelClass::kGemm)] = 3e-6;
  truth.gemm_seconds_per_k_step = 0.1e-6;
  truth.gemm_split_k_depth_bytes = 4096;
  std::vector<PreparedRow> rows =
      GemmRows("test-gpu-units", truth, {8, 16, 32}, {128, 512, 1024, 2048, 4096});
  ASSERT_EQ(rows.size(), 15u);
  const engine::KernelModel fit = FitKernelModel(Pointers(rows), 0.01);
  EXPECT_NEAR(fit.per_call_seconds[static_cast<int>(engine::KernelClass::kGemm)], 3e-6, 1e-9);
  EXPECT_NEAR(fit.gemm_seconds_per_k_step, 0.1e-6, 1e-10);
  EXPECT_EQ(fit.gemm_split_k_depth_bytes, 4096);
}

TEST(FitKernelModel, EachPlatformCountsOnce) {
  // Floors of 2, 3 and 4 us on three platforms, the 2 us one with three
  // times the rows. Pooled, the floor followed the platform with most rows
  // (2 us); fitted per platform, the family's floor is their median, 3 us.
  std::vector<PreparedRow> rows;
  int platform = 0;
  for (auto [hw, floor, ns] :
       {std::tuple{"test-gpu", 2e-6, std::vector<int64_t>{8, 16, 24, 32, 40, 48}},
        std::tuple{"test-gpu-2", 3e-6, std::vector<int64_t>{8, 16}},
        std::tuple{"test-gddr", 4e-6, std::vector<int64_t>{8, 16}}}) {
    engine::KernelModel truth;
    truth.present = true;
    truth.per_call_seconds[static_cast<int>(engine::KernelClass::kGemm)] = floor;
    for (PreparedRow& r : GemmRows(hw, truth, ns, {64, 128, 256})) {
      r.row.id += "-" + std::to_string(platform);
      rows.push_back(std::move(r));
    }
    ++platform;
  }
  ASSERT_EQ(rows.size(), 30u);
  const engine::KernelModel fit = FitKernelModel(Pointers(rows), 0.01);
  EXPECT_NEAR(fit.per_call_seconds[static_cast<int>(engine::KernelClass::kGemm)], 3e-6, 1e-9);
}

}  // namespace
}  // namespace ridgeline::calibration
