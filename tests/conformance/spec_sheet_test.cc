// The in-tree plugins against the spec sheet they cite
// (data/hardware_specs.csv, a copy of ../shared/data/hardware_specs.csv):
// every hardware_id of the sheet is served by exactly one loaded platform,
// and every number the sheet gives is the number the plugin exports, in the
// unit the sheet states. Loads the real .so files of the build.
#include <cmath>
#include <iterator>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "ridgeline/calibration/measurements.h"
#include "ridgeline/engine/hardware.h"
#include "ridgeline/plugin_host/registry.h"

namespace ridgeline {
namespace {

using engine::Hardware;
using engine::MathType;
using engine::TierKind;

using Row = std::map<std::string, std::string>;

std::vector<Row> ReadSheet() {
  std::ifstream in(RIDGELINE_TEST_SPEC_SHEET);
  std::stringstream text;
  text << in.rdbuf();
  auto records = calibration::SplitCsv(text.str(), RIDGELINE_TEST_SPEC_SHEET);
  EXPECT_TRUE(records.ok()) << records.status();
  std::vector<Row> rows;
  if (!records.ok() || records->empty()) return rows;
  const std::vector<std::string>& header = records->front();
  for (size_t i = 1; i < records->size(); ++i) {
    Row row;
    for (size_t c = 0; c < header.size() && c < (*records)[i].size(); ++c) {
      row[header[c]] = (*records)[i][c];
    }
    rows.push_back(row);
  }
  return rows;
}

class SpecSheetTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    registry_ = plugin_host::HardwareRegistry::LoadDirectory(
        RIDGELINE_BUILD_PLUGIN_DIR, plugin_host::LoadLog::kNone);
    rows_ = new std::vector<Row>(ReadSheet());
  }
  static void TearDownTestSuite() {
    delete rows_;
    registry_.reset();
  }
  static std::shared_ptr<const plugin_host::HardwareRegistry> registry_;
  static std::vector<Row>* rows_;
};
std::shared_ptr<const plugin_host::HardwareRegistry> SpecSheetTest::registry_;
std::vector<Row>* SpecSheetTest::rows_ = nullptr;

double Peak(const Hardware& hw, MathType m) {
  return hw.peak_ops_per_second[static_cast<int>(m)].value_or(0);
}

// The device-memory tier: the first one that is not on-chip SRAM (Gaudi 3
// lists its 96 MB SRAM first).
const engine::MemoryTier& DeviceTier(const Hardware& hw) {
  for (const engine::MemoryTier& t : hw.tiers) {
    if (t.kind != TierKind::kSram) return t;
  }
  return hw.tiers.front();
}

TEST_F(SpecSheetTest, SheetHasTheRowsItsReadmeDescribes) {
  // README of the revised sheet: "one row per physical part (62 rows)".
  EXPECT_EQ(rows_->size(), 62u);
}

TEST_F(SpecSheetTest, EveryHardwareIdOfTheSheetIsServed) {
  std::set<std::string> sheet_ids;
  for (const Row& row : *rows_) {
    const std::string& id = row.at("hardware_id");
    sheet_ids.insert(id);
    EXPECT_TRUE(registry_->Find(id).ok()) << id << " is in the sheet but no plugin serves it";
  }
  // And nothing outside the sheet: every platform cites its row.
  for (const Hardware& hw : registry_->platforms()) {
    EXPECT_TRUE(sheet_ids.count(hw.id)) << hw.id << " is served but not in the sheet";
  }
}

// Capacities are memory_gb x 2^30 (memory_unit GiB); bandwidth GB/s x 1e9;
// dense peaks TFLOPS x 1e12; TDP and price as given. A blank cell is 0 in the
// plugin (unknown), except where docs/hardware.md names the convention.
TEST_F(SpecSheetTest, EveryNumberOfTheSheetIsExportedInItsUnit) {
  for (const Row& row : *rows_) {
    const std::string& id = row.at("hardware_id");
    auto found = registry_->Find(id);
    if (!found.ok()) continue;  // reported by EveryHardwareIdOfTheSheetIsServed
    const Hardware& hw = **found;
    SCOPED_TRACE(id);
    const engine::MemoryTier& dev = DeviceTier(hw);
    if (!row.at("memory_gb").empty()) {
      ASSERT_EQ(row.at("memory_unit"), "GiB");
      EXPECT_DOUBLE_EQ(dev.capacity_bytes,
                       std::stod(row.at("memory_gb")) * 1073741824.0);
    }
    EXPECT_DOUBLE_EQ(dev.read_bandwidth_bytes_per_second,
                     std::stod(row.at("mem_bw_gbs")) * 1e9);
    auto expect_peak = [&](const char* column, MathType m) {
      const std::string& v = row.at(column);
      const double want = v.empty() ? 0 : std::stod(v) * 1e12;
      EXPECT_NEAR(Peak(hw, m), want, want * 1e-12) << column;
    };
    expect_peak("fp32_tflops_nontensor", MathType::kFp32);
    expect_peak("tf32_tflops_dense", MathType::kTf32);
    expect_peak("fp8_tflops_dense", MathType::kFp8);
    expect_peak("int8_tops_dense", MathType::kInt8);
    expect_peak("int4_tops_dense", MathType::kInt4);
    // fp16_bf16_tflops_dense fills BF16 and FP16, or one of them where the
    // part has only that path (V100, HBM-PIM: FP16; TPUs, GDDR6-AiM, the
    // AMX/AVX-512 CPUs: BF16). Hexagon NPUs with a blank cell export their
    // INT8 rating as the bound for QNN's 16-bit activations (FP16 slot).
    const std::string& half = row.at("fp16_bf16_tflops_dense");
    const double bf16 = Peak(hw, MathType::kBf16);
    const double fp16 = Peak(hw, MathType::kFp16);
    if (half.empty()) {
      EXPECT_EQ(bf16, 0);
      const double npu = row.at("int8_tops_dense").empty()
                             ? 0
                             : std::stod(row.at("int8_tops_dense")) * 1e12;
      EXPECT_EQ(fp16, hw.family == "npu" ? npu : 0);
    } else {
      const double want = std::stod(half) * 1e12;
      EXPECT_TRUE(bf16 > 0 || fp16 > 0);
      if (bf16 > 0) {
        EXPECT_NEAR(bf16, want, want * 1e-12);
      }
      if (fp16 > 0) {
        EXPECT_NEAR(fp16, want, want * 1e-12);
      }
    }
    auto expect_optional = [&](const char* column, const std::optional<double>& got) {
      const std::string& v = row.at(column);
      if (v.empty()) {
        EXPECT_FALSE(got.has_value()) << column;
      } else {
        EXPECT_EQ(got.value_or(-1), std::stod(v)) << column;
      }
    };
    expect_optional("tdp_w", hw.tdp_watts);
    expect_optional("launch_price_usd", hw.price_usd);
  }
}

// "Derived cells stay marked derived": the plugin's sources (what
// `ridgeline hardware show` prints) carry the row's provenance codes, so a
// D cell reads as derived.
TEST_F(SpecSheetTest, ProvenanceOfEveryRowIsInTheSources) {
  for (const Row& row : *rows_) {
    auto found = registry_->Find(row.at("hardware_id"));
    if (!found.ok()) continue;
    bool has = false;
    for (const std::string& s : (*found)->sources) {
      has = has || absl::StrContains(s, row.at("provenance"));
    }
    EXPECT_TRUE(has) << row.at("hardware_id") << " does not cite its provenance cell";
  }
}

// Every link figure an in-tree plugin exports is the sheet's: the scale-up
// bandwidth (both directions together, as NVIDIA quotes NVLink) comes from
// the row's interconnect cell, which must still say what the figure is
// derived from; every other row exports none. No row of the sheet gives a
// scale-up latency, a scale-out bandwidth or latency, or a node size, so no
// plugin exports one (unknown stays unknown: collectives over such a link
// cost no time and the analysis warns).
// Inline ECC (ABI 1.4): 1/16 of the raw bandwidth on exactly the sheet's
// data-centre GDDR parts, whose nvidia-smi readout the sheet gives "with ECC
// on" (15/16 of the capacity); every other part's tiers carry none.
TEST_F(SpecSheetTest, InlineEccOnTheDataCentreGddrPartsTheSheetReadsWithEccOn) {
  int with_ecc = 0;
  for (const Row& row : *rows_) {
    const std::string& id = row.at("hardware_id");
    auto found = registry_->Find(id);
    if (!found.ok()) continue;  // reported by EveryHardwareIdOfTheSheetIsServed
    SCOPED_TRACE(id);
    const bool ecc_on = absl::StrContains(row.at("memory_type"), "GDDR") &&
                        absl::StartsWith(row.at("category"), "datacenter") &&
                        absl::StrContains(row.at("provenance"), "ECC on");
    for (const engine::MemoryTier& t : (*found)->tiers) {
      const bool device = &t == &DeviceTier(**found);
      EXPECT_EQ(t.inline_ecc_share, ecc_on && device ? 1.0 / 16 : 0) << t.name;
    }
    with_ecc += ecc_on;
  }
  EXPECT_EQ(with_ecc, 4);  // A10, L4, L40S, A40
}

TEST_F(SpecSheetTest, EveryLinkFigureIsTheSheetsAndTheRestStayUnknown) {
  struct Link {
    const char* id;
    const char* cell_says;  // in the row's interconnect cell
    double bytes_per_second;
  };
  const Link kLinks[] = {
      {"nvidia-h100-sxm-80gb", "NVLink4 900 GB/s (total bidirectional)", 900e9},
      {"nvidia-h100-pcie-80gb", "NVLink bridge 600 GB/s", 600e9},
      {"nvidia-h200-sxm-141gb", "NVLink4 900 GB/s", 900e9},
      {"nvidia-b200-180gb", "NVLink5 1.8 TB/s per GPU", 1800e9},
      {"nvidia-a100-sxm-40gb", "NVLink3 600 GB/s", 600e9},
      {"nvidia-a100-sxm-80gb", "NVLink3 600 GB/s", 600e9},
      {"nvidia-a100-pcie-80gb", "NVLink bridge 600 GB/s", 600e9},
      {"nvidia-rtx-a6000", "NVLink bridge 112.5 GB/s (bidirectional", 112.5e9},
      {"nvidia-a40", "NVLink 112.5 GB/s (bidirectional)", 112.5e9},
      // PCIe Gen4 x16: 32 GB/s per direction x 2 (tensor parallelism over
      // PCIe; the other PCIe-only cards leave it unknown).
      {"nvidia-l40s", "PCIe Gen4 x16 64 GB/s; no NVLink", 64e9},
      // 7 links x 128 GB/s per link.
      {"amd-mi300x", "7x Infinity Fabric links (AMD: 128 GB/s per link)",
       7 * 128e9},
      // 8 links x 50 GB/s per direction x 2 directions.
      {"amd-mi250x", "50 GB/s per 16-wide link per direction (ROCm MI250 doc); 8 links",
       8 * 50e9 * 2},
      // 24 ports x 100 Gb/s / 8 bits x 2 directions.
      {"intel-gaudi2", "24x 100 GbE", 24 * 100e9 / 8 * 2},
      // 24 ports x 200 Gb/s = 4.8 Tb/s / 8 bits x 2 directions.
      {"intel-gaudi3", "24x 200 GbE RoCE on-chip (4.8 Tb/s)", 24 * 200e9 / 8 * 2},
      {"google-tpu-v5e", "ICI 400 GB/s bidirectional per chip", 400e9},
      // 4800 Gb/s per direction (Google's v5e figure, 1600 Gbps, is its 400
      // GB/s bidirectional: 1600 / 8 x 2) / 8 bits x 2 directions.
      {"google-tpu-v5p", "ICI 4800 Gbps per chip", 4800e9 / 8 * 2},
  };
  std::map<std::string, const Link*> by_id;
  for (const Link& l : kLinks) by_id[l.id] = &l;
  int sourced = 0;
  for (const Row& row : *rows_) {
    const std::string& id = row.at("hardware_id");
    auto found = registry_->Find(id);
    if (!found.ok()) continue;  // reported by EveryHardwareIdOfTheSheetIsServed
    const Hardware& hw = **found;
    SCOPED_TRACE(id);
    auto it = by_id.find(id);
    if (it == by_id.end()) {
      EXPECT_FALSE(hw.interconnect_bytes_per_second.has_value())
          << "a scale-up bandwidth the sheet does not give: "
          << hw.interconnect_bytes_per_second.value_or(0);
    } else {
      ++sourced;
      EXPECT_TRUE(absl::StrContains(row.at("interconnect"), it->second->cell_says))
          << "the interconnect cell no longer says '" << it->second->cell_says
          << "': " << row.at("interconnect");
      EXPECT_EQ(hw.interconnect_bytes_per_second.value_or(0),
                it->second->bytes_per_second);
    }
    EXPECT_FALSE(hw.scale_up_latency_seconds.has_value());
    EXPECT_FALSE(hw.scale_out_bytes_per_second.has_value());
    EXPECT_FALSE(hw.scale_out_latency_seconds.has_value());
    EXPECT_FALSE(hw.devices_per_node.has_value());
  }
  EXPECT_EQ(sourced, static_cast<int>(std::size(kLinks)));
}

}  // namespace
}  // namespace ridgeline
