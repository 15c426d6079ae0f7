// UsageHistory (usage_history.h): a quantity's integral over time in
// bounded slots whose width doubles; goldens by hand.
#include "ridgeline/serving/usage_history.h"

#include "gtest/gtest.h"

namespace ridgeline::serving {
namespace {

TEST(UsageHistory, EmptyReadsZero) {
  UsageHistory h;
  EXPECT_EQ(h.Integral(0, 10), 0);
  h.Add(1, 1, 5);  // an empty interval adds nothing
  EXPECT_EQ(h.Integral(0, 10), 0);
}

TEST(UsageHistory, ExactWhileTheSlotsAreFine) {
  UsageHistory h;
  // From its first use at 2 s, 1 ms slots: 512 ms before any merge.
  h.Add(2.000, 2.100, 10);  // 1 token-second
  h.Add(2.100, 2.300, 5);   // 1 more
  EXPECT_NEAR(h.Integral(0, 100), 2.0, 1e-12);
  EXPECT_NEAR(h.Integral(2.000, 2.100), 1.0, 1e-12);
  EXPECT_NEAR(h.Integral(2.050, 2.150), 0.5 + 0.25, 1e-12);  // 50 ms each
  EXPECT_EQ(h.Integral(0, 2), 0);
}

TEST(UsageHistory, MergesKeepTheTotalAndBoundTheError) {
  UsageHistory h;
  // 10 held over [0, 100) s: 1 ms slots double 8 times, to 256 ms
  // (512 x 256 ms = 131 s >= 100 s).
  for (int k = 0; k < 1000; ++k) h.Add(0.1 * k, 0.1 * (k + 1), 10);
  EXPECT_NEAR(h.Integral(0, 100), 1000, 1e-9);
  // A constant reads back exactly over any interval inside it.
  EXPECT_NEAR(h.Integral(10, 20), 100, 1e-9);
  // A step from 10 to 20 at 50 s, inside the slot [49.92, 50.176) (slot
  // 195), which holds 10 x 0.08 + 20 x 0.176 = 4.32.
  UsageHistory g;
  g.Add(0, 50, 10);
  g.Add(50, 100, 20);
  EXPECT_NEAR(g.Integral(0, 100), 1500, 1e-9);
  // Read over whole slots around it: exact, 10 x 10 + 20 x 10.
  EXPECT_NEAR(g.Integral(40, 60), 300, 1e-9);
  // Read over [49.9, 50.1): 10 x 0.02 from slot 194, and 0.18 / 0.256 of
  // slot 195's 4.32 = 3.0375, against 3 exactly: off by less than the
  // slot's share of the step (10 x 0.176 x 0.18 / 0.256).
  EXPECT_NEAR(g.Integral(49.9, 50.1), 0.2 + 3.0375, 1e-9);
}

}  // namespace
}  // namespace ridgeline::serving
