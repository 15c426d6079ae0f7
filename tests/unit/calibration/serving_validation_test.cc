// Serving rows through the serving model with the real plugins: every
// evaluable row of data/measurements/serving.csv stays inside the bound,
// and rows that cannot be evaluated say why.
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ridgeline/calibration/commands.h"
#include "ridgeline/calibration/serving_validation.h"

namespace ridgeline::calibration {
namespace {

TEST(ServingValidation, TheFileIsRecognisedByItsConcurrencyColumn) {
  EXPECT_TRUE(IsServingMeasurements(RIDGELINE_TEST_SERVING_MEASUREMENTS));
  EXPECT_FALSE(IsServingMeasurements(RIDGELINE_TEST_MEASUREMENTS));
}

TEST(ServingValidation, BoundIsSoundAndSkipsSayWhy) {
  ValidateOptions o;
  o.measurements = RIDGELINE_TEST_SERVING_MEASUREMENTS;
  o.profiles = RIDGELINE_TEST_PROFILES;
  o.plugin_dir = RIDGELINE_TEST_PLUGIN_DIR;
  o.format = ReportFormat::kCsv;
  std::ostringstream out, err;
  ASSERT_EQ(Validate(o, out, err), 0) << err.str();
  std::istringstream lines(out.str());
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line.rfind("id,hardware_id,framework,metric,unit,mode", 0), 0u);
  int evaluated = 0, inside = 0, offline = 0, simulated = 0;
  while (std::getline(lines, line)) {
    // The fields before `status` hold no commas: split them.
    std::vector<std::string> f;
    std::stringstream cells(line);
    for (std::string c; f.size() < 12 && std::getline(cells, c, ',');) {
      f.push_back(c);
    }
    ASSERT_EQ(f.size(), 12u) << line;
    const std::string& mode = f[5];
    const std::string& inside_bound = f[9];  // "1"/"0", "" when skipped
    if (mode == "offline-max") ++offline;
    if (mode.rfind("poisson ", 0) == 0) ++simulated;
    if (mode != "static batch" && !inside_bound.empty()) {
      ++evaluated;
      if (inside_bound == "1") ++inside;
    }
    if (line.rfind("s061,", 0) == 0) {
      EXPECT_NE(line.find("usable=0"), std::string::npos) << line;
    }
  }
  // 20 TensorRT-LLM v0.17 max-throughput rows + 5 more "max" rows; 4 rows
  // at a Poisson rate.
  EXPECT_GE(offline, 25);
  EXPECT_GE(simulated, 4);
  EXPECT_GE(evaluated, 29);
  // Soundness target: >= 98% of evaluated serving rows inside the bound.
  EXPECT_GE(inside, 0.98 * evaluated) << out.str();
}

}  // namespace
}  // namespace ridgeline::calibration
