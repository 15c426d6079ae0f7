// Collectives by link level (engine/src/collectives.h): hand-derived
// goldens for ring and tree all-reduce inside a node and across two nodes,
// all-to-all and point-to-point sends.
#include "collectives.h"

#include "gtest/gtest.h"
#include "test_hardware.h"

namespace ridgeline::engine::internal {
namespace {

// Illustrative round numbers (no real part): 8 devices per node, scale-up
// 800e9 B/s (both directions) with 1 us latency, scale-out 100e9 B/s (a
// 400 Gb/s NIC per device) with 5 us latency.
Hardware TwoLevel() {
  Hardware hw = testing::A100Like();
  hw.devices_per_node = 8;
  hw.interconnect_bytes_per_second = 800e9;
  hw.scale_up_latency_seconds = 1e-6;
  hw.scale_out_bytes_per_second = 100e9;
  hw.scale_out_latency_seconds = 5e-6;
  return hw;
}

TEST(CollectivesTest, GroupsInsideANodeUseScaleUpAndSpanningOnesScaleOut) {
  const Hardware hw = TwoLevel();
  EXPECT_FALSE(LinkFor(hw, 8).scale_out);
  EXPECT_EQ(LinkFor(hw, 8).bytes_per_second, 800e9);
  EXPECT_TRUE(LinkFor(hw, 16).scale_out);
  EXPECT_EQ(LinkFor(hw, 16).bytes_per_second, 100e9);
  EXPECT_EQ(LinkFor(hw, 16).latency_seconds, 5e-6);
  // Unknown node size: every group is taken to fit in one node.
  Hardware flat = hw;
  flat.devices_per_node.reset();
  EXPECT_FALSE(LinkFor(flat, 64).scale_out);
}

TEST(CollectivesTest, RingAllReduceAcrossTwoNodesByHand) {
  // 16 devices over two nodes of 8: scale-out, B = 100e9 / 2 = 50e9 B/s
  // per direction, alpha = 5 us. N = 16e6 B.
  // Ring: 2 x 15/16 x 16e6 / 50e9 = 600 us, + 2 x 15 x 5 us = 150 us:
  // 750 us.
  const Link link = LinkFor(TwoLevel(), 16);
  EXPECT_DOUBLE_EQ(RingAllReduceSeconds(16e6, 16, link), 750e-6);
  // Tree: 2 x 16e6 / 50e9 = 640 us, + 2 x log2(16) = 8 x 5 us = 40 us:
  // 680 us. The all-reduce takes the faster one.
  EXPECT_DOUBLE_EQ(TreeAllReduceSeconds(16e6, 16, link), 680e-6);
  EXPECT_DOUBLE_EQ(AllReduceSeconds(16e6, 16, link), 680e-6);
  // The same buffer inside one node (8 devices, B = 400e9, alpha = 1 us):
  // ring 2 x 7/8 x 16e6 / 400e9 = 70 us + 14 us = 84 us; tree 80 us + 6 us
  // = 86 us: ring wins.
  const Link up = LinkFor(TwoLevel(), 8);
  EXPECT_DOUBLE_EQ(AllReduceSeconds(16e6, 8, up), 84e-6);
}

TEST(CollectivesTest, AllToAllSendAndUnknownLinks) {
  const Link up = LinkFor(TwoLevel(), 8);
  // Each device sends 1e6 B in all: 1e6 / 400e9 = 2.5 us + 7 x 1 us.
  EXPECT_DOUBLE_EQ(AllToAllSeconds(1e6, 8, up), 9.5e-6);
  // 4e6 B to the next stage: 10 us + 1 us.
  EXPECT_DOUBLE_EQ(SendSeconds(4e6, up), 11e-6);
  // Unknown scale-out bandwidth: collectives across nodes cost nothing.
  Hardware hw = TwoLevel();
  hw.scale_out_bytes_per_second.reset();
  EXPECT_EQ(AllReduceSeconds(16e6, 16, LinkFor(hw, 16)), 0);
  // One device: nothing to exchange.
  EXPECT_EQ(AllReduceSeconds(16e6, 1, up), 0);
}

}  // namespace
}  // namespace ridgeline::engine::internal
