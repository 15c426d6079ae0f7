// KV transfer goldens (serving/kv_transfer.h), derived by hand beside each
// assertion.
#include "ridgeline/serving/kv_transfer.h"

#include "gtest/gtest.h"
#include "ridgeline/engine/model.h"

namespace ridgeline::serving {
namespace {

using engine::MathType;

// NVIDIA H100 SXM5 80GB as the nvidia plugin describes it: 80 GB HBM3 at
// 3352 GB/s, FP8 1978.9 TFLOP/s dense, NVLink4 900 GB/s (total
// bidirectional) (hardware_specs.csv row nvidia-h100-sxm-80gb, interconnect
// cell). No scale-up latency, scale-out link or node size: the sheet gives
// none.
engine::Hardware H100() {
  engine::Hardware hw;
  hw.id = "test-h100";
  hw.family = "inline";
  hw.plugin = "inline";
  hw.peak_ops_per_second[static_cast<int>(MathType::kFp8)] = 1978.9e12;
  hw.peak_ops_per_second[static_cast<int>(MathType::kBf16)] = 989.4e12;
  engine::MemoryTier hbm;
  hbm.name = "HBM3";
  hbm.kind = engine::TierKind::kHbm;
  hbm.capacity_bytes = 80e9;
  hbm.read_bandwidth_bytes_per_second = 3352e9;
  hbm.write_bandwidth_bytes_per_second = 3352e9;
  hw.tiers.push_back(hbm);
  hw.interconnect_bytes_per_second = 900e9;
  return hw;
}

engine::Scenario Llama70bFp8Tp8() {
  engine::Scenario s;
  s.model = engine::FindModel("llama-3.1-70b").value();
  s.hardware = H100();
  s.precision.weights = engine::ParseNumberFormat("fp8").value();
  s.precision.activations = engine::ParseNumberFormat("fp8").value();
  s.precision.kv_cache = engine::ParseNumberFormat("fp8").value();
  s.parallelism.tensor_parallel = 8;
  s.options.suggestions = false;
  return s;
}

TEST(KvTransfer, Llama70bFp8Of2048TokensOverNvlinkTp8ToTp8) {
  // Bytes: Llama-3.1-70B keeps K and V of 8 KV heads x 128 in each of its 80
  // layers, 1 byte each in fp8: 2 x 80 x 8 x 128 = 163,840 B a token;
  // 2,048 tokens = 335,544,320 B (320 MiB). Tensor parallel 8 puts one KV
  // head on each device: 335,544,320 / 8 = 41,943,040 B a device.
  absl::StatusOr<double> bytes = KvBytesPerDevice(Llama70bFp8Tp8(), 2048);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_DOUBLE_EQ(*bytes, 41'943'040.0);

  // Link: the same part, node size unknown -> one node -> scale-up NVLink,
  // 900 GB/s both directions = 450e9 B/s one way per device.
  const engine::Hardware h100 = H100();
  const KvLink link = KvLinkBetween({&h100, 8}, {&h100, 8});
  ASSERT_TRUE(link.known) << link.unknown_reason;
  EXPECT_EQ(link.level, KvLinkLevel::kScaleUp);
  EXPECT_DOUBLE_EQ(link.prefill_device_bytes_per_second, 450e9);
  EXPECT_DOUBLE_EQ(link.decode_device_bytes_per_second, 450e9);
  EXPECT_FALSE(link.latency_known);  // no source gives NVLink's latency

  // Wire: 41,943,040 B / 450e9 B/s = 93.206756 us on every device at once.
  KvTransferWork work;
  work.bytes_per_prefill_device = *bytes;
  work.bytes_per_decode_device = *bytes;
  EXPECT_DOUBLE_EQ(KvTransferSeconds(link, work), 41'943'040.0 / 450e9);
  EXPECT_NEAR(KvTransferSeconds(link, work), 93.206756e-6, 1e-12);

  // Layerwise behind a 10 ms prefill of 80 layers: the compute is the
  // slower, so only the last layer's share shows: 93.206756 us / 80 =
  // 1.1650844 us (wire - prefill x 79/80 is negative).
  work.overlap = KvOverlap::kLayerwise;
  work.prefill_seconds = 10e-3;
  work.layers = 80;
  EXPECT_DOUBLE_EQ(KvTransferSeconds(link, work), 41'943'040.0 / 450e9 / 80);
}

TEST(KvTransfer, DecodeOnFewerDevicesReceivesMorePerDevice) {
  // TP8 -> TP2 with the same 335,544,320 B: each decode device takes four
  // KV heads, 167,772,160 B / 450e9 = 372.827 us (the senders' 41,943,040
  // B take 93.2 us): the receivers bound the wire. A stated latency of
  // 5 us adds once: 377.827 us.
  engine::Hardware h100 = H100();
  h100.scale_up_latency_seconds = 5e-6;
  const KvLink link = KvLinkBetween({&h100, 8}, {&h100, 2});
  ASSERT_TRUE(link.known);
  EXPECT_TRUE(link.latency_known);
  KvTransferWork work;
  work.bytes_per_prefill_device = 41'943'040;
  work.bytes_per_decode_device = 167'772'160;
  EXPECT_DOUBLE_EQ(KvTransferSeconds(link, work), 5e-6 + 167'772'160 / 450e9);
  // Layerwise behind a 0.1 ms prefill of 80 layers: the link is the slower,
  // so wire - prefill x 79/80 = 372.827 - 98.75 = 274.077 us shows (+5 us).
  work.overlap = KvOverlap::kLayerwise;
  work.prefill_seconds = 1e-4;
  work.layers = 80;
  EXPECT_DOUBLE_EQ(KvTransferSeconds(link, work),
                   5e-6 + 167'772'160 / 450e9 - 1e-4 * 79 / 80);
}

TEST(KvTransfer, NodeSizeSendsTheTransferOverScaleOut) {
  // 8 devices a node: TP8 + TP8 cannot share one -> scale-out, 400 Gb/s
  // NICs both ways = 100e9 B/s both directions here (a stated figure of
  // this test's inline part), 50e9 B/s one way, 2 us one way.
  engine::Hardware h100 = H100();
  h100.devices_per_node = 8;
  EXPECT_FALSE(KvLinkBetween({&h100, 8}, {&h100, 8}).known);
  h100.scale_out_bytes_per_second = 100e9;
  h100.scale_out_latency_seconds = 2e-6;
  const KvLink link = KvLinkBetween({&h100, 8}, {&h100, 8});
  ASSERT_TRUE(link.known);
  EXPECT_EQ(link.level, KvLinkLevel::kScaleOut);
  KvTransferWork work;
  work.bytes_per_prefill_device = 41'943'040;
  work.bytes_per_decode_device = 41'943'040;
  // 2 us + 41,943,040 / 50e9 = 2 us + 838.86 us.
  EXPECT_DOUBLE_EQ(KvTransferSeconds(link, work), 2e-6 + 41'943'040 / 50e9);
  // TP4 + TP4 fit one node of 8: scale-up again.
  EXPECT_EQ(KvLinkBetween({&h100, 4}, {&h100, 4}).level, KvLinkLevel::kScaleUp);
}

TEST(KvTransfer, UnknownScaleOutBetweenDifferentPartsIsInfeasible) {
  const engine::Hardware h100 = H100();
  engine::Hardware other = H100();
  other.id = "test-other";
  const KvLink link = KvLinkBetween({&h100, 8}, {&other, 8});
  EXPECT_FALSE(link.known);
  EXPECT_EQ(link.level, KvLinkLevel::kScaleOut);
  EXPECT_EQ(link.unknown_reason,
            "no known scale-out link for the KV transfer test-h100 -> "
            "test-other: test-h100 gives no scale_out_bytes_per_second "
            "(different parts never share a node)");
}

TEST(KvTransfer, OverlapNames) {
  EXPECT_EQ(ParseKvOverlap("layerwise").value(), KvOverlap::kLayerwise);
  EXPECT_EQ(ParseKvOverlap("after-prefill").value(), KvOverlap::kAfterPrefill);
  EXPECT_EQ(ParseKvOverlap("sometimes").status().message(),
            "kv_transfer_overlap: must be after-prefill or layerwise; got "
            "\"sometimes\"");
}

}  // namespace
}  // namespace ridgeline::serving
