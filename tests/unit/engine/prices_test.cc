// One price rule for every command (issue 20 item 3): Analyze charges a
// listed part its dated rental rate, as Plan does, and says so in
// Economy.cost_basis; request overrides win in the order prices.h gives.
#include "ridgeline/engine/prices.h"

#include "gtest/gtest.h"
#include "ridgeline/engine/analyze.h"
#include "ridgeline/engine/model.h"
#include "test_hardware.h"

namespace ridgeline::engine {
namespace {

using testing::A100Like;
using testing::MakeScenario;

NumberFormat Fmt(const char* name) { return ParseNumberFormat(name).value(); }

// An A100-like part (test_hardware.h) under the id of a listed part, with
// board power 700 W and a purchase price, decoding 11 tokens.
Scenario Listed() {
  Hardware hw = A100Like();
  hw.id = "nvidia-h100-sxm-80gb";
  hw.tdp_watts = 700;
  hw.price_usd = 25000;  // illustrative: the plugin publishes none
  Scenario s = MakeScenario("llama-2-7b", hw);
  s.precision = {Fmt("fp16"), Fmt("fp16"), Fmt("fp16")};
  s.workload = {1, 1023, 11};
  return s;
}

TEST(DevicePrice, RequestRentalThenPurchaseThenListThenHardware) {
  Scenario s = Listed();
  // The list: $2.99/GPU-hour (prices.cc, Lambda on-demand, dated) wins
  // over the hardware's purchase price, as Plan always priced it.
  DevicePrice p = DevicePriceOf(s.hardware, s.economics);
  EXPECT_EQ(p.basis, CostBasis::kRental);
  EXPECT_DOUBLE_EQ(p.usd_per_device_hour, 2.99);
  EXPECT_DOUBLE_EQ(p.usd_per_served_second, 2.99 / 3600);
  EXPECT_FALSE(p.plus_electricity());
  EXPECT_NE(p.source.find("Lambda"), std::string_view::npos);
  // Served half the time: each served second costs two rented ones.
  s.economics.utilization = 0.5;
  EXPECT_DOUBLE_EQ(DevicePriceOf(s.hardware, s.economics).usd_per_served_second,
                   2.99 / 3600 / 0.5);
  s.economics.utilization = 1;
  // A request's purchase price wins over the list.
  s.economics.price_usd = 30000;
  p = DevicePriceOf(s.hardware, s.economics);
  EXPECT_EQ(p.basis, CostBasis::kPurchase);
  EXPECT_EQ(p.source, "request");
  // $30,000 / (4 years x 31,557,600 s x utilization 1).
  EXPECT_DOUBLE_EQ(p.usd_per_served_second, 30000 / (4 * 31557600.0));
  // A request's rental price wins over everything.
  s.economics.usd_per_device_hour = 2.1;
  p = DevicePriceOf(s.hardware, s.economics);
  EXPECT_EQ(p.basis, CostBasis::kRental);
  EXPECT_EQ(p.source, "request");
  EXPECT_DOUBLE_EQ(p.usd_per_device_hour, 2.1);
  // Without the list (explore's price axis): the hardware's price.
  s.economics = DefaultEconomics();
  s.economics.list_rental_price = false;
  p = DevicePriceOf(s.hardware, s.economics);
  EXPECT_EQ(p.basis, CostBasis::kPurchase);
  EXPECT_EQ(p.source, "hardware");
  EXPECT_DOUBLE_EQ(p.price_usd, 25000);
  // No price at all: energy only.
  s.hardware.price_usd.reset();
  EXPECT_EQ(DevicePriceOf(s.hardware, s.economics).basis,
            CostBasis::kEnergyOnly);
  EXPECT_EQ(CostBasisName(CostBasis::kEnergyOnly), "energy-only");
  EXPECT_EQ(CostBasisName(CostBasis::kPurchase), "purchase");
  EXPECT_EQ(CostBasisName(CostBasis::kRental), "rental");
  EXPECT_EQ(CostBasisName(CostBasis::kNone), "");
}

// Before: Analyze priced the listed H100 by energy only ("price unknown",
// about $0.013/Mtoken) while Plan charged $2.99/h.
TEST(DevicePrice, AnalyzeChargesAListedPartItsRentalRate) {
  Scenario s = Listed();
  s.hardware.price_usd.reset();  // as the H100 plugin: no purchase price
  absl::StatusOr<AnalysisResult> r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->economy.cost_basis, CostBasis::kRental);
  // $ = $2.99 / 3600 s x e2e x 1 device (power included: no electricity),
  // per 11 output tokens, x 1e6.
  ASSERT_TRUE(r->economy.usd_per_million_output_tokens.has_value());
  EXPECT_NEAR(*r->economy.usd_per_million_output_tokens,
              2.99 / 3600 * r->e2e_seconds / 11 * 1e6, 1e-9);
  EXPECT_EQ(r->economy.note.find("price unknown"), std::string::npos)
      << r->economy.note;
  EXPECT_NE(r->economy.note.find("rental"), std::string::npos)
      << r->economy.note;

  // An unlisted part without a price: energy only, said so.
  s = Listed();
  s.hardware.id = "test-unlisted";
  s.hardware.price_usd.reset();
  r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->economy.cost_basis, CostBasis::kEnergyOnly);
  EXPECT_NE(r->economy.note.find("price unknown"), std::string::npos);
  // Neither price nor energy: no $/Mtoken, no basis.
  s.hardware.tdp_watts.reset();
  r = Analyze(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->economy.usd_per_million_output_tokens.has_value());
  EXPECT_EQ(r->economy.cost_basis, CostBasis::kNone);
}

TEST(DevicePrice, OverridesOutOfRangeNameTheField) {
  Scenario s = Listed();
  s.economics.usd_per_device_hour = -1;
  absl::Status st = ValidateScenario(s);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("economics.usd_per_device_hour"),
            std::string_view::npos)
      << st;
  s.economics.usd_per_device_hour.reset();
  s.economics.price_usd = 2e8;
  st = ValidateScenario(s);
  EXPECT_NE(st.message().find("economics.price_usd"), std::string_view::npos)
      << st;
}

}  // namespace
}  // namespace ridgeline::engine
