// `ridgeline measurements import` run as the real binary: a vLLM bench
// serve result file becomes rows that `validate` evaluates and `calibrate`
// fits a serving profile from (the two commands a team runs), and the
// refusals leave stdout empty.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ridgeline::testing {
namespace {

using ::testing::HasSubstr;

std::string Fixture(const std::string& name) {
  return std::string(RIDGELINE_TEST_BENCHMARK_DIR) + "/" + name;
}

std::filesystem::path TempDir() {
  std::string tmpl = ::testing::TempDir() + "ridgeline-import-XXXXXX";
  char* dir = mkdtemp(tmpl.data());
  EXPECT_NE(dir, nullptr);
  return dir == nullptr ? std::filesystem::path() : std::filesystem::path(dir);
}

std::vector<std::string> Import(const std::string& from,
                                const std::string& file) {
  return {"measurements", "import",     "--from",
          from,           file,         "--model",
          "llama-3.1-8b", "--hardware", "nvidia-h100-sxm-80gb"};
}

TEST(MeasurementsImportCli, ImportThenCalibrateFitsAServingProfile) {
  const std::filesystem::path dir = TempDir();
  CliRun imported =
      RunCliBinary(Import("vllm-bench", Fixture("vllm-bench-max-2runs.jsonl")));
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  const std::filesystem::path csv = dir / "rows.csv";
  std::ofstream(csv) << imported.out;

  CliRun validated =
      RunCliBinary({"validate", "--measurements", csv.string(),
                    std::string("--plugin-dir=") + RIDGELINE_TEST_PLUGIN_DIR});
  ASSERT_EQ(validated.exit_code, 0) << validated.err;
  // Both max-throughput rows are evaluated against the bound.
  EXPECT_THAT(validated.out, HasSubstr("evaluated 2"));
  EXPECT_THAT(validated.out, HasSubstr("offline-max"));

  CliRun fitted =
      RunCliBinary({"calibrate", "--measurements", csv.string(), "--out",
                    (dir / "profiles").string(),
                    std::string("--plugin-dir=") + RIDGELINE_TEST_PLUGIN_DIR});
  ASSERT_EQ(fitted.exit_code, 0) << fitted.err;
  const std::string profile =
      Slurp((dir / "profiles/serving/serving.vllm.json").string());
  ASSERT_FALSE(profile.empty()) << fitted.out;
  EXPECT_THAT(profile, HasSubstr("vllm"));
  std::filesystem::remove_all(dir);
}

TEST(MeasurementsImportCli, EveryFormatImports) {
  const std::vector<std::pair<std::string, std::string>> files = {
      {"vllm-bench", "vllm-bench-max-2runs.jsonl"},
      {"sglang-bench", "sglang-bench-rate2.jsonl"},
      {"guidellm", "guidellm-benchmarks.json"},
      {"genai-perf", "genai-perf-profile_export_genai_perf.json"},
      {"aiperf", "aiperf-profile_export_aiperf.json"},
  };
  for (const auto& [from, file] : files) {
    CliRun run = RunCliBinary(Import(from, Fixture(file)));
    EXPECT_EQ(run.exit_code, 0) << from << ": " << run.err;
    EXPECT_THAT(run.out, HasSubstr(",concurrency\n")) << from;
    EXPECT_THAT(run.out, HasSubstr(from + "-001,nvidia-h100-sxm-80gb,1,1,"))
        << from;
  }
}

TEST(MeasurementsImportCli, UnknownFromIsAUsageErrorListingTheChoices) {
  CliRun run =
      RunCliBinary(Import("locust", Fixture("sglang-bench-rate2.jsonl")));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(run.out.empty());
  for (const char* choice :
       {"vllm-bench", "sglang-bench", "guidellm", "genai-perf", "aiperf"}) {
    EXPECT_THAT(run.err, HasSubstr(choice));
  }
  EXPECT_THAT(run.err, HasSubstr("\"locust\""));
}

TEST(MeasurementsImportCli, APartialImportWritesNothing) {
  // The first run is whole; the second lacks output_throughput.
  const std::filesystem::path dir = TempDir();
  std::string text = Slurp(Fixture("vllm-bench-max-2runs.jsonl"));
  const size_t at = text.find("\"output_throughput\": 329.86, ");
  ASSERT_NE(at, std::string::npos);
  text.erase(at, std::string("\"output_throughput\": 329.86, ").size());
  const std::filesystem::path file = dir / "broken.jsonl";
  std::ofstream(file) << text;
  CliRun run = RunCliBinary(Import("vllm-bench", file.string()));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_TRUE(run.out.empty()) << run.out;
  EXPECT_THAT(run.err, HasSubstr("\"output_throughput\""));
  EXPECT_THAT(run.err, HasSubstr("line 2"));

  CliRun missing = RunCliBinary(Import("vllm-bench", (dir / "nope").string()));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(missing.out.empty());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ridgeline::testing
