// The plugin-host messages (plugin_host/src/host_wire.h): what the server
// decodes comes from a process running plugin code, so every malformed
// message is an error naming what is wrong, never a crash or a bad value.
#include "host_wire.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ridgeline::plugin_host::wire {
namespace {

using ::testing::HasSubstr;

LoadReply OnePlatform() {
  LoadReply r;
  r.ok = true;
  r.family = "wire";
  r.plugin_version = "1";
  r.has_hook = true;
  engine::Hardware hw;
  hw.id = "wire-a";
  hw.display_name = "Wire A";
  hw.vendor = "tests";
  hw.sources = {"illustrative"};
  hw.peak_ops_per_second[static_cast<int>(engine::MathType::kBf16)] = 1e14;
  engine::MemoryTier t;
  t.name = "HBM";
  t.capacity_bytes = 1e9;
  t.read_bandwidth_bytes_per_second = 1e12;
  t.write_bandwidth_bytes_per_second = 1e12;
  t.near_memory_compute = engine::NearMemoryCompute{4e12, {}, 1e-12};
  hw.tiers.push_back(t);
  hw.devices_per_node = 8;
  r.platforms.push_back(hw);
  return r;
}

TEST(HostWireTest, LoadReplyRoundTrips) {
  absl::StatusOr<LoadReply> back =
      DecodeLoadReply(EncodeLoadReply(OnePlatform()));
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->platforms.size(), 1u);
  const engine::Hardware& hw = back->platforms[0];
  EXPECT_EQ(hw.id, "wire-a");
  EXPECT_EQ(hw.peak_ops_per_second[static_cast<int>(engine::MathType::kBf16)],
            1e14);
  EXPECT_FALSE(hw.peak_ops_per_second[0].has_value());
  ASSERT_TRUE(hw.tiers[0].near_memory_compute.has_value());
  EXPECT_EQ(hw.tiers[0].near_memory_compute->energy_joules_per_op, 1e-12);
  EXPECT_EQ(hw.devices_per_node, 8);
  EXPECT_TRUE(back->has_hook);
}

TEST(HostWireTest, EveryTruncationIsAnError) {
  const std::string full = EncodeLoadReply(OnePlatform());
  for (size_t n = 0; n < full.size(); ++n) {
    EXPECT_FALSE(DecodeLoadReply(full.substr(0, n)).ok()) << n;
  }
  EXPECT_THAT(DecodeLoadReply(full + "x").status().message(),
              HasSubstr("trailing bytes"));
}

TEST(HostWireTest, StringsAreCheckedAsPluginStrings) {
  LoadReply r = OnePlatform();
  r.platforms[0].display_name = "bad \xff name";
  absl::Status s = DecodeLoadReply(EncodeLoadReply(r)).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_THAT(s.message(), HasSubstr("platforms[0]: display_name must be "
                                     "valid UTF-8; byte 4 (0xff) is not"));
  r = OnePlatform();
  r.platforms[0].id = std::string(257, 'a');  // ids: at most 256 bytes
  EXPECT_FALSE(DecodeLoadReply(EncodeLoadReply(r)).ok());
}

TEST(HostWireTest, OutOfRangeEnumsAndCountsAreRefused) {
  LoadReply r = OnePlatform();
  r.platforms[0].tiers[0].kind = static_cast<engine::TierKind>(200);
  EXPECT_THAT(DecodeLoadReply(EncodeLoadReply(r)).status().message(),
              HasSubstr("tier kind"));
  r = OnePlatform();
  r.platforms[0].tiers.resize(engine::kMaxTiers + 1, r.platforms[0].tiers[0]);
  EXPECT_THAT(DecodeLoadReply(EncodeLoadReply(r)).status().message(),
              HasSubstr("tier count"));
  HookRequest q;
  q.shape = {engine::OpClass::kGemm, engine::MathType::kBf16, 1, 1, 1};
  std::string bytes = EncodeHookRequest(q);
  bytes[4] = 9;  // op class 9 does not exist
  EXPECT_FALSE(DecodeHookRequest(bytes).ok());
}

}  // namespace
}  // namespace ridgeline::plugin_host::wire
