#include "ridgeline/engine/kernel.h"

#include "gtest/gtest.h"
#include "test_hardware.h"

namespace ridgeline::engine {
namespace {

using calibration::testing::RoundGpu;

DecodeAttentionShape Mha2048() {
  DecodeAttentionShape s;  // batch 1, 32 q = 32 kv heads, d 128, fp16
  s.kv_length = 2048;
  return s;
}

TEST(DecodeAttentionKernel, PureBoundByHand) {
  auto c = DecodeAttentionKernel(Mha2048(), RoundGpu(), Efficiency{},
                                 {.warm_cache = true, .pure_roofline = true});
  ASSERT_TRUE(c.ok()) << c.status();
  // FLOPs = 1 x 32 heads x 2048 keys x (4 x 128 + 5 softmax) = 33,882,112.
  EXPECT_DOUBLE_EQ(c->flops, 33882112.0);
  // K+V = 2 x 32 x 2048 x 128 x 2 B = 33,554,432; q read 32 x 128 x 2 = 8,192;
  // output written 8,192 -> 33,570,816 bytes.
  EXPECT_DOUBLE_EQ(c->bytes, 33570816.0);
  // Memory 33,570,816 / 1e12 = 33.570816 us; compute 33,882,112 / 100e12 =
  // 0.3388 us -> memory-bound, no overhead in the bound.
  EXPECT_NEAR(c->seconds, 33.570816e-6, 1e-15);
  EXPECT_NEAR(c->compute_seconds, 0.33882112e-6, 1e-15);
  EXPECT_EQ(c->bound, Bound::kMemory);
  EXPECT_EQ(c->overhead_seconds, 0);
  EXPECT_FALSE(c->onchip_resident);  // no on-chip tier on this device
}

TEST(DecodeAttentionKernel, CalibratedAddsEfficiencyAndOverhead) {
  Efficiency eff;
  eff.memory[static_cast<int>(OpClass::kAttention)] = 0.5;
  eff.per_kernel_overhead_seconds = 10e-6;
  auto c = DecodeAttentionKernel(Mha2048(), RoundGpu(), eff);
  ASSERT_TRUE(c.ok()) << c.status();
  // 33.570816 us / 0.5 = 67.141632 us, + 10 us launch = 77.141632 us.
  EXPECT_NEAR(c->seconds, 77.141632e-6, 1e-15);
}

TEST(DecodeAttentionKernel, GqaReadsFewerKvBytes) {
  DecodeAttentionShape s = Mha2048();
  s.num_kv_heads = 8;
  auto c = DecodeAttentionKernel(s, RoundGpu(), Efficiency{}, {.pure_roofline = true});
  ASSERT_TRUE(c.ok()) << c.status();
  // K+V = 2 x 8 x 2048 x 128 x 2 = 8,388,608; + q 8,192 + out 8,192 =
  // 8,404,992 bytes -> 8.404992 us at 1e12 B/s. FLOPs still use 32 q heads.
  EXPECT_DOUBLE_EQ(c->bytes, 8404992.0);
  EXPECT_DOUBLE_EQ(c->flops, 33882112.0);
  EXPECT_NEAR(c->seconds, 8.404992e-6, 1e-15);
}

TEST(DecodeAttentionKernel, BatchScalesLinearly) {
  DecodeAttentionShape s = Mha2048();
  s.batch = 4;
  auto c = DecodeAttentionKernel(s, RoundGpu(), Efficiency{}, {.pure_roofline = true});
  ASSERT_TRUE(c.ok());
  // 4 x 33,570,816 = 134,283,264 bytes -> 134.283264 us.
  EXPECT_NEAR(c->seconds, 134.283264e-6, 1e-15);
}

TEST(DecodeAttentionKernel, OnChipResidencyWhenKvFits) {
  Hardware hw = RoundGpu();
  MemoryTier l2;
  l2.name = "L2";
  l2.kind = TierKind::kSram;
  l2.capacity_bytes = 64e6;
  l2.read_bandwidth_bytes_per_second = 5e12;
  l2.write_bandwidth_bytes_per_second = 5e12;
  hw.tiers.insert(hw.tiers.begin(), l2);
  auto warm = DecodeAttentionKernel(Mha2048(), hw, Efficiency{}, {.warm_cache = true, .pure_roofline = true});
  ASSERT_TRUE(warm.ok());
  // Footprint 33,570,816 B <= 64 MB: read from L2 at 5e12 -> 6.7141632 us.
  EXPECT_TRUE(warm->onchip_resident);
  EXPECT_EQ(warm->tier, 0);
  EXPECT_NEAR(warm->seconds, 6.7141632e-6, 1e-15);
  auto cold = DecodeAttentionKernel(Mha2048(), hw, Efficiency{}, {.warm_cache = false, .pure_roofline = true});
  ASSERT_TRUE(cold.ok());
  EXPECT_EQ(cold->tier, 1);
  EXPECT_NEAR(cold->seconds, 33.570816e-6, 1e-15);
  // 8192 tokens: K+V 134,217,728 B > 64 MB, streams from HBM even when warm.
  DecodeAttentionShape big = Mha2048();
  big.kv_length = 8192;
  auto spill = DecodeAttentionKernel(big, hw, Efficiency{}, {.warm_cache = true, .pure_roofline = true});
  ASSERT_TRUE(spill.ok());
  EXPECT_FALSE(spill->onchip_resident);
  EXPECT_EQ(spill->tier, 1);
}

TEST(DecodeAttentionKernel, OnChipTierWithoutBandwidthFallsBackToDram) {
  Hardware hw = RoundGpu();
  MemoryTier l2;
  l2.name = "L2";
  l2.kind = TierKind::kSram;
  l2.capacity_bytes = 96e6;  // size published, bandwidth not
  hw.tiers.insert(hw.tiers.begin(), l2);
  auto c = DecodeAttentionKernel(Mha2048(), hw, Efficiency{}, {.warm_cache = true, .pure_roofline = true});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->onchip_resident);
  EXPECT_TRUE(c->onchip_bandwidth_unknown);
  EXPECT_EQ(c->tier, 1);
  EXPECT_NEAR(c->seconds, 33.570816e-6, 1e-15);
}

TEST(DecodeAttentionKernel, BadShapeNamesFieldRangeAndValue) {
  DecodeAttentionShape s = Mha2048();
  s.kv_length = 0;
  auto c = DecodeAttentionKernel(s, RoundGpu(), Efficiency{});
  ASSERT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  {
    std::string msg(c.status().message());
    EXPECT_NE(msg.find("shape.kv_length"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[1, 10000000]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("got 0"), std::string::npos) << msg;
  }
  s = Mha2048();
  s.num_q_heads = 12;
  s.num_kv_heads = 8;
  c = DecodeAttentionKernel(s, RoundGpu(), Efficiency{});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(std::string(c.status().message()).find("shape.num_q_heads"), std::string::npos);
}

TEST(GemmKernel, SkinnyGemmIsMemoryBound) {
  GemmShape g;
  g.m = 1;
  g.n = 1280;
  g.k = 8192;
  auto c = GemmKernel(g, RoundGpu(), Efficiency{}, {.warm_cache = false, .pure_roofline = true});
  ASSERT_TRUE(c.ok()) << c.status();
  // FLOPs 2 x 1 x 1280 x 8192 = 20,971,520. Bytes: A 8192 x 2 = 16,384;
  // B 8192 x 1280 x 2 = 20,971,520; C 1280 x 2 = 2,560 -> 20,990,464 B
  // -> 20.990464 us at 1e12 B/s (compute 0.2097 us).
  EXPECT_DOUBLE_EQ(c->flops, 20971520.0);
  EXPECT_DOUBLE_EQ(c->bytes, 20990464.0);
  EXPECT_NEAR(c->seconds, 20.990464e-6, 1e-15);
  EXPECT_EQ(c->bound, Bound::kMemory);
}

// H200 SXM device memory: 4800 GB/s (data/hardware_specs.csv,
// nvidia-h200-sxm-141gb, memory bandwidth column; one figure, so write = read).
Hardware H200Hbm() {
  Hardware hw = RoundGpu();
  hw.tiers[0].read_bandwidth_bytes_per_second = 4.8e12;
  hw.tiers[0].write_bandwidth_bytes_per_second = 0;  // not published separately
  return hw;
}

TEST(MemoryKernel, ReadPureBoundByHand) {
  auto c = MemoryKernel({.bytes = int64_t{1} << 30, .copy = false}, H200Hbm(),
                        Efficiency{}, {.warm_cache = false, .pure_roofline = true});
  ASSERT_TRUE(c.ok()) << c.status();
  // 1 GiB read = 1,073,741,824 B / 4.8e12 B/s = 223.696213 us; no FLOPs, no
  // overhead in the bound.
  EXPECT_DOUBLE_EQ(c->bytes, 1073741824.0);
  EXPECT_EQ(c->flops, 0);
  EXPECT_NEAR(c->seconds, 223.69621333e-6, 1e-13);
  EXPECT_EQ(c->overhead_seconds, 0);
  EXPECT_EQ(c->bound, Bound::kMemory);
}

TEST(MemoryKernel, CopyReadsAndWritesEveryByte) {
  auto c = MemoryKernel({.bytes = int64_t{1} << 30, .copy = true}, H200Hbm(),
                        Efficiency{}, {.warm_cache = false, .pure_roofline = true});
  ASSERT_TRUE(c.ok()) << c.status();
  // 1 GiB read + 1 GiB written (write bandwidth = read, 4.8e12 B/s):
  // 2 x 223.696213 us = 447.392427 us; bytes 2,147,483,648.
  EXPECT_DOUBLE_EQ(c->bytes, 2147483648.0);
  EXPECT_NEAR(c->seconds, 447.39242667e-6, 1e-13);
}

TEST(MemoryKernel, CopyUsesTheTiersOwnWriteBandwidth) {
  Hardware hw = RoundGpu();
  hw.tiers[0].write_bandwidth_bytes_per_second = 0.5e12;
  auto c = MemoryKernel({.bytes = 1'000'000'000, .copy = true}, hw, Efficiency{},
                        {.warm_cache = false, .pure_roofline = true});
  ASSERT_TRUE(c.ok()) << c.status();
  // 1e9 B / 1e12 B/s read = 1 ms, + 1e9 B / 0.5e12 B/s written = 2 ms: 3 ms.
  EXPECT_NEAR(c->seconds, 3e-3, 1e-15);
}

TEST(MemoryKernel, CalibratedUsesElementwiseEtaAndOverhead) {
  Efficiency eff;
  eff.memory[static_cast<int>(OpClass::kElementwise)] = 0.8;
  eff.memory[static_cast<int>(OpClass::kAttention)] = 0.1;  // not this class
  eff.per_kernel_overhead_seconds = 5e-6;
  auto c = MemoryKernel({.bytes = int64_t{1} << 30}, H200Hbm(), eff,
                        {.warm_cache = false});
  ASSERT_TRUE(c.ok()) << c.status();
  // 223.696213 us / 0.8 = 279.620267 us, + 5 us launch = 284.620267 us.
  EXPECT_NEAR(c->seconds, 284.62026667e-6, 1e-13);
  EXPECT_NEAR(c->overhead_seconds, 5e-6, 1e-18);
}

TEST(MemoryKernel, NoComputeRoofStillBounds) {
  Hardware hw = H200Hbm();
  hw.peak_ops_per_second = {};
  auto c = MemoryKernel({.bytes = int64_t{1} << 30}, hw, Efficiency{},
                        {.pure_roofline = true});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_NEAR(c->seconds, 223.69621333e-6, 1e-13);  // as ReadPureBoundByHand
}

TEST(MemoryKernel, BadBytesNamesFieldRangeAndValue) {
  auto c = MemoryKernel({.bytes = 0}, RoundGpu(), Efficiency{});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c.status().message(),
            "shape.bytes: must be in [1, 1125899906842624], got 0");
}

}  // namespace
}  // namespace ridgeline::engine
