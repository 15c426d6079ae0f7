// Serving rows through the serving model with the real plugins: every
// evaluable row of data/measurements/serving.csv stays inside the bound,
// and rows that cannot be evaluated say why.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ridgeline/calibration/commands.h"
#include "ridgeline/calibration/profiles.h"
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
    // TPOT at saturation: the largest batch gives the slowest step, so it
    // bounds nothing; the row says so instead of counting.
    if (line.rfind("s045,", 0) == 0) {
      EXPECT_NE(line.find("no sound bound"), std::string::npos) << line;
      EXPECT_EQ(inside_bound, "") << line;
    }
  }
  // 20 TensorRT-LLM v0.17 max-throughput rows + 5 more "max" rows (two of
  // them TPOT rows, not evaluated); 4 rows at a Poisson rate.
  EXPECT_GE(offline, 25);
  EXPECT_GE(simulated, 4);
  EXPECT_GE(evaluated, 27);
  // Soundness target: >= 98% of evaluated serving rows inside the bound.
  EXPECT_GE(inside, 0.98 * evaluated) << out.str();
}

std::string ReadText(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> JsonFiles(const std::filesystem::path& d) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(d)) {
    if (e.path().extension() == ".json") names.push_back(e.path().filename());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// profiles/serving/ must be exactly what `ridgeline calibrate` fits from
// data/measurements/serving.csv + serving-added.csv with the in-tree
// plugins.
TEST(ServingCalibration, ShippedServingProfilesAreReproducible) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("ridgeline-serving-refit-" + std::to_string(::getpid()));
  CalibrateOptions options;
  options.measurements = RIDGELINE_TEST_SERVING_MEASUREMENTS;
  options.more_measurements = {RIDGELINE_TEST_SERVING_ADDED_MEASUREMENTS};
  options.out = dir;
  options.plugin_dir = RIDGELINE_TEST_PLUGIN_DIR;
  std::ostringstream out, err;
  ASSERT_EQ(Calibrate(options, out, err), 0) << err.str();
  // TensorRT-LLM's rows span TP 1 to 8 on three parts: the fit puts the
  // sub-linear TP scaling on the link share (below 1) and a cost per
  // collective call (above 0), and that is what brought its
  // leave-one-platform-out error from 19.8 % (link fixed at the published
  // rate, no call cost) to 13.5 % (the link share alone) and under 12 %
  // (issue 21's target).
  const std::string report = out.str();
  const size_t trt = report.find("  tensorrt-llm     fit on all 22 rows");
  ASSERT_NE(trt, std::string::npos) << report;
  const std::string line = report.substr(trt, report.find('\n', trt) - trt);
  EXPECT_EQ(line.find(", link 1.0,"), std::string::npos) << line;
  EXPECT_EQ(line.find("collective call 0 us"), std::string::npos) << line;
  const size_t lopo = line.find("LOPO median error ");
  ASSERT_NE(lopo, std::string::npos) << line;
  const double median =
      std::stod(line.substr(lopo + std::string("LOPO median error ").size()));
  EXPECT_GT(median, 0) << line;
  EXPECT_LT(median, 12) << line;
  const std::filesystem::path shipped =
      std::filesystem::path(RIDGELINE_TEST_PROFILES) / "serving";
  // Only the serving folder is written: the kernel profiles stay as they are.
  EXPECT_TRUE(JsonFiles(dir).empty());
  ASSERT_EQ(JsonFiles(dir / "serving"), JsonFiles(shipped)) << out.str();
  ASSERT_FALSE(JsonFiles(shipped).empty());
  for (const std::string& name : JsonFiles(shipped)) {
    absl::StatusOr<Profile> fresh =
        ParseProfileJson(ReadText(dir / "serving" / name), name);
    absl::StatusOr<Profile> old = ParseProfileJson(ReadText(shipped / name), name);
    ASSERT_TRUE(fresh.ok() && old.ok()) << name;
    EXPECT_EQ(fresh->name, old->name);
    EXPECT_EQ(fresh->framework, old->framework);
    EXPECT_EQ(fresh->hardware_id, "");  // keyed by framework alone
    EXPECT_EQ(fresh->family, "");
    EXPECT_EQ(fresh->fitted_from, old->fitted_from);
    for (int c = 0; c < engine::kOpClassCount; ++c) {
      EXPECT_DOUBLE_EQ(fresh->efficiency.compute[c], old->efficiency.compute[c]);
      EXPECT_DOUBLE_EQ(fresh->efficiency.memory[c], old->efficiency.memory[c]);
    }
    EXPECT_DOUBLE_EQ(fresh->efficiency.link, old->efficiency.link);
    EXPECT_DOUBLE_EQ(fresh->efficiency.collective_call_seconds,
                     old->efficiency.collective_call_seconds);
    EXPECT_DOUBLE_EQ(fresh->efficiency.per_step_overhead_seconds,
                     old->efficiency.per_step_overhead_seconds);
  }
  std::filesystem::remove_all(dir);
}

TEST(ServingCalibration, ServingFrameworkKeyIsTheRuntime) {
  EXPECT_EQ(ServingFrameworkKey("vllm-rocm-0.8.5"), "vllm");
  EXPECT_EQ(ServingFrameworkKey("vllm-rocm"), "vllm");
  EXPECT_EQ(ServingFrameworkKey("vllm-0.6.0"), "vllm");
  EXPECT_EQ(ServingFrameworkKey("sglang-0.3.0"), "sglang");
  EXPECT_EQ(ServingFrameworkKey("tensorrt-llm-0.14-triton"), "tensorrt-llm");
  EXPECT_EQ(ServingFrameworkKey("tensorrt-llm-pytorch"), "tensorrt-llm-pytorch");
  EXPECT_EQ(ServingFrameworkKey("llama.cpp-cuda"), "llama.cpp");
}

// vLLM's rows (serving.csv's static batches, serving-added.csv's OCI rows)
// are all from 8 x MI300X: its profile and every row's error say in-sample;
// TensorRT-LLM's stay cross-validated.
TEST(ServingCalibration, OnePlatformFitsSayInSample) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("ridgeline-serving-insample-" + std::to_string(::getpid()));
  CalibrateOptions options;
  options.measurements = RIDGELINE_TEST_SERVING_MEASUREMENTS;
  options.more_measurements = {RIDGELINE_TEST_SERVING_ADDED_MEASUREMENTS};
  options.out = dir;
  options.plugin_dir = RIDGELINE_TEST_PLUGIN_DIR;
  std::ostringstream out, err;
  ASSERT_EQ(Calibrate(options, out, err), 0) << err.str();
  absl::StatusOr<Profile> vllm = ParseProfileJson(
      ReadText(dir / "serving" / "serving.vllm.json"), "serving.vllm.json");
  ASSERT_TRUE(vllm.ok()) << vllm.status() << out.str();
  EXPECT_EQ(vllm->framework, "vllm");
  EXPECT_NE(vllm->fitted_from.find("IN-SAMPLE ONLY"), std::string::npos);
  EXPECT_NE(vllm->fitted_from.find("every row from one platform (amd-mi300x)"),
            std::string::npos)
      << vllm->fitted_from;
  EXPECT_NE(vllm->fitted_from.find(
                "--measurements serving.csv --measurements serving-added.csv"),
            std::string::npos);
  absl::StatusOr<Profile> trt =
      ParseProfileJson(ReadText(dir / "serving" / "serving.tensorrt-llm.json"),
                       "serving.tensorrt-llm.json");
  ASSERT_TRUE(trt.ok());
  EXPECT_NE(trt->fitted_from.find("leave-one-platform-out median error"),
            std::string::npos);
  EXPECT_EQ(trt->fitted_from.find("IN-SAMPLE"), std::string::npos);
  // No SGLang row is usable: no profile rather than one fitted on nothing.
  EXPECT_FALSE(std::filesystem::exists(dir / "serving" / "serving.sglang.json"));
  std::filesystem::remove_all(dir);

  ValidateOptions v;
  v.measurements = RIDGELINE_TEST_SERVING_MEASUREMENTS;
  v.more_measurements = {RIDGELINE_TEST_SERVING_ADDED_MEASUREMENTS};
  v.plugin_dir = RIDGELINE_TEST_PLUGIN_DIR;
  std::ostringstream table, verr;
  ASSERT_EQ(Validate(v, table, verr), 0) << verr.str();
  EXPECT_NE(table.str().find("IN-SAMPLE median error"), std::string::npos)
      << table.str();
  std::istringstream lines(table.str());
  int a_rows = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("a001 ", 0) == 0 || line.rfind("s103 ", 0) == 0) {
      ++a_rows;
      EXPECT_NE(line.find("in-sample"), std::string::npos) << line;
    }
    if (line.rfind("a012 ", 0) == 0) {
      EXPECT_NE(line.find("usable=0"), std::string::npos) << line;
    }
  }
  EXPECT_EQ(a_rows, 2) << table.str();
}

TEST(ServingCalibration, RepeatedIdsAcrossFilesAreAnError) {
  ValidateOptions v;
  v.measurements = RIDGELINE_TEST_SERVING_MEASUREMENTS;
  v.more_measurements = {RIDGELINE_TEST_SERVING_MEASUREMENTS};
  v.plugin_dir = RIDGELINE_TEST_PLUGIN_DIR;
  std::ostringstream out, err;
  EXPECT_EQ(Validate(v, out, err), 1);
  EXPECT_NE(err.str().find("id: \"s003\" appears more than once"),
            std::string::npos)
      << err.str();
}

// The loader keeps serving profiles apart: Analyze's Match never sees them,
// Plan / Simulate find them by framework (a versioned name too).
TEST(ServingCalibration, StoreLoadsTheServingFolderApart) {
  absl::StatusOr<std::shared_ptr<const ProfileStore>> store =
      ProfileStore::LoadDirectory(RIDGELINE_TEST_PROFILES);
  ASSERT_TRUE(store.ok()) << store.status();
  for (const Profile& p : (*store)->profiles()) {
    EXPECT_NE(p.name.rfind("serving.", 0), 0u) << p.name;
  }
  const ProfileStore& serving = (*store)->serving();
  const Profile* vllm = serving.Match("", "", "vllm-rocm-0.8.5");
  ASSERT_NE(vllm, nullptr);
  EXPECT_EQ(vllm->name, "serving.vllm");
  EXPECT_EQ(serving.Match("", "", "vllm")->name, "serving.vllm");
  EXPECT_EQ(serving.Match("", "", "sglang"), nullptr);  // no data: no profile
  const Profile* trt = serving.Match("", "", "tensorrt-llm-0.17.0");
  ASSERT_NE(trt, nullptr);
  EXPECT_EQ(trt->name, "serving.tensorrt-llm");
  EXPECT_EQ(trt->efficiency.profile_name, "serving.tensorrt-llm");
  EXPECT_TRUE(serving.Find("serving.tensorrt-llm").ok());
  EXPECT_EQ(serving.Match("", "", "llama.cpp-cuda"), nullptr);
}

}  // namespace
}  // namespace ridgeline::calibration
