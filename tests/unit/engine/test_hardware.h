// Inline hardware descriptions shared by the engine tests.
#pragma once

#include "ridgeline/engine/hardware.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::engine::testing {

// The figures the golden test names: 2039 GB/s and 312 TFLOP/s
// dense fp16/bf16 (NVIDIA A100 SXM4 80GB datasheet: 2,039 GB/s HBM2e,
// 312 TFLOPS FP16/BF16 tensor dense), 80 GB.
inline Hardware A100Like() {
  Hardware hw;
  hw.id = "test-a100-like";
  hw.display_name = "A100-like (test)";
  hw.family = "inline";
  hw.plugin = "inline";
  hw.peak_ops_per_second[static_cast<int>(MathType::kFp16)] = 312e12;
  hw.peak_ops_per_second[static_cast<int>(MathType::kBf16)] = 312e12;
  MemoryTier hbm;
  hbm.name = "HBM2e";
  hbm.kind = TierKind::kHbm;
  hbm.capacity_bytes = 80e9;
  hbm.read_bandwidth_bytes_per_second = 2039e9;
  hbm.write_bandwidth_bytes_per_second = 2039e9;
  hw.tiers.push_back(hbm);
  return hw;
}

inline Scenario MakeScenario(const std::string& model_id, Hardware hw) {
  Scenario s;
  s.model = FindModel(model_id).value();
  s.hardware = std::move(hw);
  s.options.suggestions = false;
  return s;
}

}  // namespace ridgeline::engine::testing
