// The kernel model (engine/kernel_model.h): tile and wave counts, split-KV,
// and the per-call cost and shape efficiency a fitted model applies.
#include "ridgeline/engine/kernel_model.h"

#include "gtest/gtest.h"
#include "ridgeline/engine/kernel.h"
#include "test_hardware.h"

namespace ridgeline::calibration {
namespace {

using testing::RoundGpu;

TEST(KernelModel, TilesAndWavesOfAChosenShape) {
  // M = 4096, N = 4096 on 132 units with 128 x 256 tiles:
  // ceil(4096 / 128) = 32 tile rows x ceil(4096 / 256) = 16 tile columns =
  // 512 tiles; ceil(512 / 132) = 4 waves (3 full = 396, 116 in the last);
  // busy share 512 / (4 x 132) = 512 / 528 = 0.969697.
  const engine::GemmTiling t = engine::TileGemm(4096, 4096, 132);
  EXPECT_EQ(t.tile_m, 128);
  EXPECT_EQ(t.tile_n, 256);
  EXPECT_EQ(t.tiles, 512);
  EXPECT_EQ(t.waves, 4);
  EXPECT_NEAR(t.wave_efficiency, 512.0 / 528.0, 1e-12);
  // M = 1, N = 5000 on 108 units: 1 x ceil(5000 / 256) = 20 tiles, one
  // wave, 20 / 108 busy.
  const engine::GemmTiling s = engine::TileGemm(1, 5000, 108);
  EXPECT_EQ(s.tiles, 20);
  EXPECT_EQ(s.waves, 1);
  EXPECT_NEAR(s.wave_efficiency, 20.0 / 108.0, 1e-12);
}

TEST(KernelModel, SplitKvFillsTheUnits) {
  // batch 2 x 8 KV heads = 16 CTAs on 132 units: ceil(132 / 16) = 9 splits
  // wanted, and a 4096-token KV allows ceil(4096 / 256) = 16: 9 splits,
  // 144 CTAs, all 132 units active.
  engine::SplitKv s = engine::SplitDecodeAttention(2, 8, 4096, 132);
  EXPECT_EQ(s.ctas, 16);
  EXPECT_EQ(s.splits, 9);
  EXPECT_EQ(s.active_units, 132);
  // A 512-token KV allows only ceil(512 / 256) = 2 splits: 32 active.
  s = engine::SplitDecodeAttention(2, 8, 512, 132);
  EXPECT_EQ(s.splits, 2);
  EXPECT_EQ(s.active_units, 32);
  // 256 x 8 = 2048 CTAs already fill the units: no split.
  s = engine::SplitDecodeAttention(256, 8, 4096, 132);
  EXPECT_EQ(s.splits, 1);
  EXPECT_EQ(s.active_units, 132);
}

engine::KernelModel Model() {
  engine::KernelModel m;
  m.present = true;
  m.per_call_seconds[static_cast<int>(engine::KernelClass::kGemm)] = 3e-6;
  m.per_call_seconds[static_cast<int>(engine::KernelClass::kAttention)] = 7e-6;
  m.gemm.compute = {1, 1, 0.8};
  m.gemm.memory = {0.5, 0.75, 0.75};
  m.fp8_quantization_seconds = 9e-6;
  m.wave_quantization = 1;
  m.attention_memory = 0.8;
  m.attention_cta_bandwidth_share = 2;
  return m;
}

TEST(KernelModel, GemmPaysItsShapeAndItsPerCallCost) {
  engine::Hardware hw = RoundGpu();  // 100 TFLOP/s fp16, 1 TB/s
  hw.compute_units = 100;
  engine::Efficiency eff;
  eff.kernel = Model();
  engine::GemmShape g;
  g.m = 4096;
  g.n = 4096;
  g.k = 4096;
  // Pure compute 2 x 4096^3 / 100e12 = 1374.39 us. Tiles 32 x 16 = 512 on
  // 100 units: 6 waves, busy 512 / 600; wave share 1: compute = 1374.39 /
  // (0.8 x 512 / 600) = 2013.27 us. Memory (3 x 4096^2 x 2 B = 100.66 MB at
  // 1 TB/s / 0.75) = 134.2 us. Time 2013.27 + 3 us per call.
  absl::StatusOr<engine::KernelCost> c = engine::GemmKernel(g, hw, eff);
  ASSERT_TRUE(c.ok()) << c.status();
  const double pure = 2.0 * 4096.0 * 4096.0 * 4096.0 / 100e12;
  EXPECT_TRUE(c->kernel_model);
  EXPECT_TRUE(c->shape_modelled);
  EXPECT_EQ(c->tiles, 512);
  EXPECT_EQ(c->waves, 6);
  EXPECT_NEAR(c->compute_seconds, pure / (0.8 * 512.0 / 600.0), 1e-12);
  EXPECT_NEAR(c->seconds, pure / (0.8 * 512.0 / 600.0) + 3e-6, 1e-12);
  // The bound ignores all of it.
  engine::KernelOptions bound;
  bound.pure_roofline = true;
  absl::StatusOr<engine::KernelCost> b = engine::GemmKernel(g, hw, eff, bound);
  ASSERT_TRUE(b.ok());
  EXPECT_NEAR(b->seconds, pure, 1e-12);
  EXPECT_FALSE(b->kernel_model);
}

TEST(KernelModel, SmallMFp8GemmPaysQuantisation) {
  engine::Hardware hw = RoundGpu();
  hw.compute_units = 100;
  engine::Efficiency eff;
  eff.kernel = Model();
  engine::GemmShape g;
  g.m = 1;
  g.n = 8192;
  g.k = 8192;
  g.a = g.b = {"fp8", 8, engine::MathType::kFp8};
  // Bytes: A 8192 + B 67,108,864 + C 8192 = 67,125,248 B; quantisation
  // reads 8192 x 2 and writes 8192 x 1 = 24,576 B more; at 1 TB/s x 0.5
  // (regime m<=16): (67,125,248 + 24,576) / 0.5e12 = 134.2997 us. Per call
  // 3 us + 9 us of quantisation.
  absl::StatusOr<engine::KernelCost> c = engine::GemmKernel(g, hw, eff);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_NEAR(c->memory_seconds, (67125248.0 + 24576.0) / 0.5e12, 1e-12);
  EXPECT_NEAR(c->overhead_seconds, 12e-6, 1e-15);
  EXPECT_NEAR(c->seconds, (67125248.0 + 24576.0) / 0.5e12 + 12e-6, 1e-12);
}

TEST(KernelModel, FewCtaAttentionCannotStreamAtFullBandwidth) {
  engine::Hardware hw = RoundGpu();
  hw.compute_units = 100;
  engine::Efficiency eff;
  eff.kernel = Model();
  engine::DecodeAttentionShape a;
  a.batch = 1;
  a.num_q_heads = 8;
  a.num_kv_heads = 1;
  a.head_dim = 128;
  a.kv_length = 512;
  a.dtype = {"bf16", 16, engine::MathType::kBf16};
  // 1 CTA, ceil(512 / 256) = 2 splits: 2 active units of 100. KV bytes
  // 2 x 512 x 128 x 2 = 262,144; q + out 2 x 8 x 128 x 2 = 4096: 266,240 B,
  // pure 0.26624 us. Eta 0.8: 0.3328 us; CTA limit: 0.26624 x 100 / (2 x 2)
  // = 6.656 us, which wins. Plus 7 us per call.
  absl::StatusOr<engine::KernelCost> c =
      engine::DecodeAttentionKernel(a, hw, eff);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->splits, 2);
  EXPECT_EQ(c->active_units, 2);
  EXPECT_NEAR(c->memory_seconds, 266240.0 / 1e12 * 100 / 4, 1e-15);
  EXPECT_NEAR(c->seconds, 266240.0 / 1e12 * 100 / 4 + 7e-6, 1e-15);
}

// Per CTA and per query head of a sequence, and another floor over an
// 8-bit KV cache (the fitted H100 values, rounded).
TEST(KernelModel, AttentionPaysPerCtaPerQueryHeadAndItsKvFormatsFloor) {
  engine::Hardware hw = RoundGpu();  // 1 TB/s
  hw.compute_units = 100;
  engine::Efficiency eff;
  eff.kernel = Model();
  eff.kernel.attention_cta_bandwidth_share = 0;
  eff.kernel.attention_seconds_per_cta = 7e-9;
  eff.kernel.attention_seconds_per_query_head = 0.6e-9;
  eff.kernel.attention_8bit_kv_per_call_seconds = 5.5e-6;
  eff.kernel.attention_8bit_kv_fitted = true;
  engine::DecodeAttentionShape a;
  a.batch = 64;
  a.num_q_heads = 32;
  a.num_kv_heads = 8;
  a.head_dim = 128;
  a.kv_length = 2;
  a.dtype = {"bf16", 16, engine::MathType::kBf16};
  // 64 x 8 = 512 CTAs, 64 x 32 = 2048 query heads: 512 x 7 ns + 2048 x
  // 0.6 ns = 3.584 + 1.2288 = 4.8128 us on the 7 us floor = 11.8128 us.
  // Bytes: K and V of 64 sequences x 8 KV heads x 2 tokens x 128 x 2 B =
  // 524,288; q and out 2 x 64 x 32 x 128 x 2 = 1,048,576: 1,572,864 B /
  // (1e12 x 0.8) = 1.96608 us.
  absl::StatusOr<engine::KernelCost> c =
      engine::DecodeAttentionKernel(a, hw, eff);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_NEAR(c->overhead_seconds, 7e-6 + 4.8128e-6, 1e-15);
  EXPECT_NEAR(c->memory_seconds, 1.96608e-6, 1e-15);
  EXPECT_NEAR(c->seconds, 1.96608e-6 + 11.8128e-6, 1e-15);
  // The same shape over an fp8 KV cache: the 8-bit floor, 5.5 us.
  a.dtype = {"fp8", 8, engine::MathType::kFp8};
  c = engine::DecodeAttentionKernel(a, hw, eff);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_NEAR(c->overhead_seconds, 5.5e-6 + 4.8128e-6, 1e-15);
  // Not fitted on 8-bit rows: the one floor.
  eff.kernel.attention_8bit_kv_fitted = false;
  c = engine::DecodeAttentionKernel(a, hw, eff);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_NEAR(c->overhead_seconds, 7e-6 + 4.8128e-6, 1e-15);
}

TEST(KernelModel, SerialKStepsOfAChosenShape) {
  // One output tile (M = 1, N = 256) on 100 units; K = 4096 bf16 is 8,192
  // bytes of each operand row, 128 bytes a step: 64 steps unsplit, 32 when
  // split-K gives each CTA at most 4,096 bytes.
  EXPECT_EQ(engine::GemmSerialKSteps(1, 8192, 100, 0), 64);
  EXPECT_EQ(engine::GemmSerialKSteps(1, 8192, 100, 4096), 32);
  // fp8: K = 4096 is 4,096 bytes: 32 steps either way.
  EXPECT_EQ(engine::GemmSerialKSteps(1, 4096, 100, 0), 32);
  // A partial step counts: 200 bytes = 2 steps.
  EXPECT_EQ(engine::GemmSerialKSteps(7, 200, 100, 0), 2);
  // Tiles that fill the units hide the loop.
  EXPECT_EQ(engine::GemmSerialKSteps(100, 8192, 100, 4096), 0);
}

TEST(KernelModel, SmallTileGemmWaitsOnItsSerialKLoop) {
  engine::Hardware hw = RoundGpu();  // 1 TB/s, 100 TFLOP/s bf16
  hw.compute_units = 100;
  engine::Efficiency eff;
  eff.kernel = Model();
  eff.kernel.gemm_seconds_per_k_step = 0.1e-6;
  eff.kernel.gemm_split_k_depth_bytes = 4096;
  engine::GemmShape g;
  g.m = 1;
  g.n = 256;
  g.k = 4096;
  // Bytes: A 1 x 4096 x 2 = 8,192, B 256 x 4096 x 2 = 2,097,152, C 256 x 2
  // = 512: 2,105,856 B / (1e12 x 0.5, regime m<=16) = 4.211712 us. Compute
  // 2,097,152 FLOP / 100e12 = 0.02097 us over 1 busy unit of 100 (wave
  // share 1): 2.097 us, under the memory time. 32 steps x 0.1 us = 3.2 us
  // on the 3 us per call: 10.411712 us.
  absl::StatusOr<engine::KernelCost> c = engine::GemmKernel(g, hw, eff);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->tiles, 1);
  EXPECT_EQ(c->k_steps, 32);
  EXPECT_NEAR(c->memory_seconds, 4.211712e-6, 1e-15);
  EXPECT_NEAR(c->overhead_seconds, 6.2e-6, 1e-15);
  EXPECT_NEAR(c->seconds, 10.411712e-6, 1e-15);
  // M = 4096, N = 4096: 512 tiles fill the units, no serial cost.
  g.m = g.n = 4096;
  c = engine::GemmKernel(g, hw, eff);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->k_steps, 0);
  EXPECT_NEAR(c->overhead_seconds, 3e-6, 1e-15);
}

engine::DecodeAttentionShape FewCtaShape() {
  engine::DecodeAttentionShape a;
  a.batch = 1;
  a.num_q_heads = 8;
  a.num_kv_heads = 1;
  a.head_dim = 128;
  a.kv_length = 512;
  a.dtype = {"bf16", 16, engine::MathType::kBf16};
  return a;
}

TEST(KernelModel, SplitKvCallsPayTheMerge) {
  engine::Hardware hw = RoundGpu();
  hw.compute_units = 100;
  engine::Efficiency eff;
  eff.kernel = Model();
  eff.kernel.attention_split_merge_seconds = 4e-6;
  // The shape of FewCtaAttentionCannotStreamAtFullBandwidth: 2 splits, so
  // 6.656 us of stream + 7 us per call + 4 us of merge = 17.656 us.
  engine::DecodeAttentionShape a = FewCtaShape();
  absl::StatusOr<engine::KernelCost> c = engine::DecodeAttentionKernel(a, hw, eff);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->splits, 2);
  EXPECT_NEAR(c->overhead_seconds, 11e-6, 1e-15);
  EXPECT_NEAR(c->seconds, 266240.0 / 1e12 * 100 / 4 + 11e-6, 1e-15);
  // 256 sequences: 256 CTAs fill the 100 units, no split, no merge.
  a.batch = 256;
  c = engine::DecodeAttentionKernel(a, hw, eff);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->splits, 1);
  EXPECT_NEAR(c->overhead_seconds, 7e-6, 1e-15);
}

TEST(KernelModel, LargeHeadGroupsRereadTheKv) {
  engine::KernelModel m = Model();
  m.attention_max_shared_group = 32;
  m.attention_group_reread_share = 0.25;
  // 64 query heads on 1 KV head: a group of 64 > 32, read 1 + 0.25 x 63 =
  // 16.75 times; a group of 32 once; no limit: once.
  EXPECT_DOUBLE_EQ(engine::AttentionKvReads(m, 64, 1), 16.75);
  EXPECT_DOUBLE_EQ(engine::AttentionKvReads(m, 64, 2), 1);
  m.attention_max_shared_group = 0;
  EXPECT_DOUBLE_EQ(engine::AttentionKvReads(m, 64, 1), 1);

  engine::Hardware hw = RoundGpu();
  hw.compute_units = 100;
  engine::Efficiency eff;
  eff.kernel = Model();
  eff.kernel.attention_cta_bandwidth_share = 0;
  eff.kernel.attention_max_shared_group = 32;
  eff.kernel.attention_group_reread_share = 0.25;
  engine::DecodeAttentionShape a = FewCtaShape();
  a.batch = 256;
  a.num_q_heads = 64;
  a.kv_length = 1024;
  // K and V: 2 x 256 x 1 x 1024 x 128 x 2 = 134,217,728 B; q and out 2 x
  // 256 x 64 x 128 x 2 = 8,388,608 B: 142,606,336 B at 1 TB/s = 142.606 us,
  // x 16.75 reads / 0.8.
  absl::StatusOr<engine::KernelCost> c = engine::DecodeAttentionKernel(a, hw, eff);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_NEAR(c->memory_seconds, 142606336.0 / 1e12 * 16.75 / 0.8, 1e-12);
  // The bound reads the KV once.
  engine::KernelOptions pure;
  pure.pure_roofline = true;
  c = engine::DecodeAttentionKernel(a, hw, eff, pure);
  ASSERT_TRUE(c.ok());
  EXPECT_NEAR(c->memory_seconds, 142606336.0 / 1e12, 1e-12);
}

TEST(KernelModel, L2ResidentOperandsAreChargedDeviceMemoryAndSaySo) {
  engine::Hardware hw = RoundGpu();
  hw.compute_units = 100;
  hw.last_level_cache_bytes = 50.0 * (1 << 20);  // size only, no bandwidth
  engine::GemmShape g;
  g.m = 1;
  g.n = 256;
  g.k = 4096;  // 2,105,856 B (SmallTileGemmWaitsOnItsSerialKLoop): fits
  engine::KernelOptions pure;
  pure.pure_roofline = true;
  absl::StatusOr<engine::KernelCost> b = engine::GemmKernel(g, hw, {}, pure);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_TRUE(b->onchip_resident);
  EXPECT_TRUE(b->onchip_bandwidth_unknown);
  EXPECT_NEAR(b->memory_seconds, 2105856.0 / 1e12, 1e-15);  // device memory
  // The fitted model moves them 2x faster than device memory (eta 0.5).
  engine::Efficiency eff;
  eff.kernel = Model();
  eff.kernel.l2_resident_speedup = 2;
  absl::StatusOr<engine::KernelCost> c = engine::GemmKernel(g, hw, eff);
  ASSERT_TRUE(c.ok());
  EXPECT_NEAR(c->memory_seconds, 2105856.0 / (1e12 * 0.5 * 2), 1e-15);
  // A cold-cache call (inputs rotated) streams from device memory.
  engine::KernelOptions cold;
  cold.warm_cache = false;
  c = engine::GemmKernel(g, hw, eff, cold);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->onchip_resident);
  EXPECT_NEAR(c->memory_seconds, 2105856.0 / (1e12 * 0.5), 1e-15);
}

TEST(KernelModel, WithoutComputeUnitsThePlainFormSaysSo) {
  const engine::Hardware hw = RoundGpu();  // no compute-unit count
  engine::Efficiency eff;
  eff.kernel = Model();
  engine::GemmShape g;
  g.m = 4096;
  g.n = 4096;
  g.k = 4096;
  absl::StatusOr<engine::KernelCost> c = engine::GemmKernel(g, hw, eff);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->shape_modelled);
  EXPECT_EQ(c->tiles, 0);
  EXPECT_NE(c->note.find("compute-unit count not published"),
            std::string::npos);
  // No waves: compute 1374.39 us / 0.8 + 3 us.
  EXPECT_NEAR(c->seconds, 2.0 * 4096.0 * 4096.0 * 4096.0 / 100e12 / 0.8 + 3e-6,
              1e-12);
}

TEST(KernelModel, ValidationNamesTheField) {
  engine::KernelModel m = Model();
  m.gemm.memory[1] = 1.5;
  const absl::Status st = engine::ValidateKernelModel(m, "kernel_model");
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("kernel_model.gemm.memory.m<=128"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("(0, 1]"), std::string::npos);
  EXPECT_NE(st.message().find("1.5"), std::string::npos);
  m = Model();
  m.l2_resident_speedup = 0.5;
  const absl::Status l2 = engine::ValidateKernelModel(m, "kernel_model");
  EXPECT_NE(l2.message().find("kernel_model.l2_resident_speedup: must be in "
                              "[1, 1000], got 0.5"),
            std::string::npos)
      << l2.message();
  m = Model();
  m.attention_seconds_per_cta = -1e-9;
  const absl::Status cta = engine::ValidateKernelModel(m, "kernel_model");
  EXPECT_NE(cta.message().find("kernel_model.attention_seconds_per_cta: must "
                               "be in [0, 1], got -1e-09"),
            std::string::npos)
      << cta.message();
}

}  // namespace
}  // namespace ridgeline::calibration
