// A small inline device for calibration tests: round numbers so golden
// values can be derived by hand. Not a real part; never shipped.
#pragma once

#include "ridgeline/engine/hardware.h"

namespace ridgeline::calibration::testing {

inline engine::Hardware RoundGpu() {
  engine::Hardware hw;
  hw.id = "test-gpu";
  hw.display_name = "Test GPU";
  hw.vendor = "Test";
  hw.family = "nvidia";
  hw.plugin = "inline";
  hw.sources = {"test values"};
  hw.peak_ops_per_second[static_cast<int>(engine::MathType::kFp32)] = 25e12;
  hw.peak_ops_per_second[static_cast<int>(engine::MathType::kFp16)] = 100e12;
  hw.peak_ops_per_second[static_cast<int>(engine::MathType::kBf16)] = 100e12;
  hw.peak_ops_per_second[static_cast<int>(engine::MathType::kFp8)] = 200e12;
  engine::MemoryTier hbm;
  hbm.name = "HBM";
  hbm.kind = engine::TierKind::kHbm;
  hbm.capacity_bytes = 80e9;
  hbm.read_bandwidth_bytes_per_second = 1e12;
  hbm.write_bandwidth_bytes_per_second = 1e12;
  hw.tiers.push_back(hbm);
  return hw;
}

}  // namespace ridgeline::calibration::testing
