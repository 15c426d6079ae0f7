// `ridgeline plan` as a real binary: the CSV the issue names, identical
// in-process and against a real server, usage and field errors.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "cli_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server_process.h"

namespace ridgeline::testing {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> PlanArgs(std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {"plan",
                                "--model",
                                "llama-3.1-8b",
                                "--hardware",
                                "nvidia-h100-sxm-80gb,amd-mi300x",
                                "--prompt",
                                "1024",
                                "--gen",
                                "256",
                                "--rate",
                                "10",
                                "--ttft-p90-ms",
                                "1000",
                                "--tpot-p90-ms",
                                "50",
                                "--tensor-parallel",
                                "1",
                                "--formats",
                                "fp8",
                                "--requests",
                                "200",
                                "--disaggregated",
                                "off"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

std::vector<std::string> InProcess(std::vector<std::string> a) {
  a.push_back(std::string("--plugin-dir=") + RIDGELINE_TEST_PLUGIN_DIR);
  a.push_back(std::string("--profile-dir=") + RIDGELINE_TEST_PROFILE_DIR);
  return a;
}

TEST(PlanCli, CsvHasTheNamedColumnsOneRowPerDeployment) {
  CliRun r = RunCliBinary(InProcess(PlanArgs({"--format", "csv"})));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines =
      absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << r.out;  // header + H100 + MI300X
  std::vector<std::string> header = absl::StrSplit(lines[0], ',');
  for (const char* col :
       {"hardware", "tensor_parallel", "formats", "replicas", "devices",
        "max_rate_per_replica", "ttft_p90_ms", "tpot_p90_ms",
        "usd_per_mtoken", "meets_slo"}) {
    EXPECT_NE(std::find(header.begin(), header.end(), col), header.end())
        << col;
  }
  const size_t meets =
      std::find(header.begin(), header.end(), "meets_slo") - header.begin();
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> cells = absl::StrSplit(lines[i], ',');
    ASSERT_GT(cells.size(), meets);
    EXPECT_TRUE(cells[meets] == "1" || cells[meets] == "0") << lines[i];
  }
}

// A pure state-space model and a Kimi Delta Attention / MLA / MoE hybrid
// (issue 25) are planned like any other: one row per part, each meeting
// the SLO.
TEST(PlanCli, StateSpaceAndLinearAttentionHybridsArePlanned) {
  for (const char* model : {"mamba-codestral-7b", "kimi-linear-48b-a3b"}) {
    std::vector<std::string> args = PlanArgs({"--format", "csv"});
    args[2] = model;
    CliRun r = RunCliBinary(InProcess(args));
    ASSERT_EQ(r.exit_code, 0) << model << ": " << r.err;
    std::vector<std::string> lines =
        absl::StrSplit(r.out, '\n', absl::SkipEmpty());
    ASSERT_EQ(lines.size(), 3u) << r.out;  // header + H100 + MI300X
    std::vector<std::string> header = absl::StrSplit(lines[0], ',');
    const size_t meets =
        std::find(header.begin(), header.end(), "meets_slo") - header.begin();
    for (size_t i = 1; i < lines.size(); ++i) {
      std::vector<std::string> cells = absl::StrSplit(lines[i], ',');
      ASSERT_GT(cells.size(), meets);
      EXPECT_EQ(cells[meets], "1") << model << ": " << lines[i];
    }
  }
}

// Candidates refused for one reason print as one line per part or pair:
// H100 prefill with MI300X decode has no known link at any of its 2 x 2
// pool shapes in 2 formats, so 8 candidates share one line (and likewise
// the other way round), showing 3 shapes, without a replica count.
TEST(PlanCli, InfeasibleCandidatesAreGroupedByReason) {
  std::vector<std::string> args = PlanArgs();
  args.erase(args.end() - 2, args.end());  // --disaggregated off
  for (std::string& a : args) {
    if (a == "1") a = "1,2";           // --tensor-parallel
    if (a == "fp8") a = "fp8,bf16";    // --formats
  }
  CliRun r = RunCliBinary(InProcess(args));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t start = r.out.find("\ninfeasible:\n");
  ASSERT_NE(start, std::string::npos) << r.out;
  const std::string section =
      r.out.substr(start, r.out.find("\n\n", start + 1) - start);
  EXPECT_THAT(section,
              HasSubstr("  nvidia-h100-sxm-80gb+amd-mi300x, 8 candidates (P "
                        "TP1 nvidia-h100-sxm-80gb + D TP1 amd-mi300x "
                        "fp8/fp8/fp8; "));
  EXPECT_THAT(section, HasSubstr("; ...): no known link between "
                                 "nvidia-h100-sxm-80gb and amd-mi300x"));
  EXPECT_THAT(section, HasSubstr("  amd-mi300x+nvidia-h100-sxm-80gb, 8 "
                                 "candidates (P TP1 amd-mi300x"));
  // One line per group: nothing else is refused here.
  EXPECT_EQ(std::count(section.begin(), section.end(), '\n'), 3) << section;
}

TEST(PlanCli, SameAnswerInProcessAndOverGrpc) {
  ServerProcess server;
  ASSERT_TRUE(server.ok()) << server.error();
  ASSERT_TRUE(WaitServing(server.Channel(), std::chrono::seconds(20)));
  CliRun local = RunCliBinary(InProcess(PlanArgs({"--format", "csv"})));
  CliRun remote =
      RunCliBinary(PlanArgs({"--format", "csv", "--server", server.address()}));
  ASSERT_EQ(local.exit_code, 0) << local.err;
  ASSERT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_EQ(local.out, remote.out);
}

// --turns: four-turn sessions (rate: sessions/s) sized with what the prefix
// cache keeps of each turn's history; off, every turn recomputes it.
TEST(PlanCli, TurnsPlanSessionsWithTheirReuse) {
  auto rate_per_replica = [](const char* caching) {
    CliRun r = RunCliBinary(
        InProcess(PlanArgs({"--hardware", "nvidia-h100-sxm-80gb", "--rate", "1",
                            "--turns", "4", "--think-time", "5",
                            "--prefix-caching", caching, "--format", "csv"})));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> lines =
        absl::StrSplit(r.out, '\n', absl::SkipEmpty());
    EXPECT_EQ(lines.size(), 2u) << r.out;
    if (lines.size() < 2) return -1.0;
    std::vector<std::string> header = absl::StrSplit(lines[0], ',');
    std::vector<std::string> cells = absl::StrSplit(lines[1], ',');
    const size_t col =
        std::find(header.begin(), header.end(), "max_rate_per_replica") -
        header.begin();
    double v = -1;
    EXPECT_TRUE(col < cells.size() && absl::SimpleAtod(cells[col], &v));
    return v;
  };
  const double on = rate_per_replica("on");
  const double off = rate_per_replica("off");
  EXPECT_GT(off, 0);
  EXPECT_GT(on, off);
  // The emitted plan says what the rate counts.
  CliRun emit = RunCliBinary(
      InProcess(PlanArgs({"--hardware", "nvidia-h100-sxm-80gb", "--rate", "1",
                          "--turns", "4", "--emit", "vllm"})));
  ASSERT_EQ(emit.exit_code, 0) << emit.err;
  EXPECT_THAT(emit.out, HasSubstr("at 1 sessions/s of 4 turns"));
  CliRun lone = RunCliBinary(InProcess(PlanArgs({"--think-time", "5"})));
  EXPECT_EQ(lone.exit_code, 2);
  EXPECT_THAT(lone.err, HasSubstr("--think-time goes with --turns"));
  CliRun zero = RunCliBinary(InProcess(PlanArgs({"--turns", "0"})));
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_THAT(zero.err, HasSubstr("--turns"));
}

TEST(PlanCli, TableLeadsWithTheHeadline) {
  CliRun r = RunCliBinary(InProcess(PlanArgs()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::StartsWith("cheapest: "));
  EXPECT_THAT(r.out, HasSubstr("$/Mtoken"));
}

TEST(PlanCli, ErrorsNameTheFlag) {
  CliRun r = RunCliBinary(InProcess(PlanArgs({"--rate", "0"})));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("traffic.rate"));
  EXPECT_THAT(r.err, HasSubstr("(flag --rate)"));
  r = RunCliBinary(InProcess({"plan", "--model", "llama-3.1-8b"}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--hardware is required"));
  r = RunCliBinary(InProcess(PlanArgs({"--prompt", "abc"})));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--prompt"));
}

// plan --trace (issue 23): the Mooncake excerpt's six requests
// (tests/fixtures/traces/README.md) at its own mean rate, 5 gaps over 3 s
// = 1.66667 req/s; its lengths replace --prompt / --gen, its prefix reuse
// keeps disaggregated pairs out (with the reason); an Azure trace's
// lengths alone plan split too; a times trace gives only the rate.
TEST(PlanCli, TracePlansItsRequestsAtItsOwnRate) {
  const std::string dir = RIDGELINE_TEST_TRACE_DIR;
  const std::vector<std::string> base = {"plan",
                                         "--model",
                                         "llama-3.1-8b",
                                         "--hardware",
                                         "nvidia-h100-sxm-80gb",
                                         "--ttft-p90-ms",
                                         "2000",
                                         "--tpot-p90-ms",
                                         "50",
                                         "--tensor-parallel",
                                         "1",
                                         "--formats",
                                         "fp8"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return InProcess(a);
  };
  CliRun r =
      RunCliBinary(with({"--trace", dir + "/mooncake-conversation-head.jsonl",
                         "--trace-format", "mooncake", "--format", "json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  std::string notes = j["notes"].dump();
  EXPECT_THAT(notes, HasSubstr("trace: 6 requests in their order"));
  EXPECT_THAT(notes, HasSubstr("1.66667 requests/s (the trace's own"));
  // Five of six requests hit the shared 512-token unit: 2560 / 6 = 426.
  EXPECT_THAT(notes, HasSubstr("at most 426 of them cached"));
  bool aggregated_met = false, split_refused = false;
  for (const nlohmann::json& d : j["deployments"]) {
    if (d["mode"] == "aggregated") aggregated_met |= d["meetsSlo"].get<bool>();
    if (d["mode"] == "disaggregated") {
      split_refused |= !d["feasible"].get<bool>() &&
                       d["why"].get<std::string>().find(
                           "a trace's prefix reuse") != std::string::npos;
    }
  }
  EXPECT_TRUE(aggregated_met) << r.out;
  EXPECT_TRUE(split_refused) << r.out;

  r = RunCliBinary(
      with({"--trace", dir + "/azure-conv-head.csv", "--trace-format", "azure",
            "--rate", "2", "--format", "json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json azure = nlohmann::json::parse(r.out);
  EXPECT_THAT(azure["notes"].dump(), HasSubstr("2 requests/s (traffic.rate)"));
  bool split_met = false;
  for (const nlohmann::json& d : azure["deployments"]) {
    split_met |= d["mode"] == "disaggregated" && d["meetsSlo"].get<bool>();
  }
  EXPECT_TRUE(split_met) << r.out;

  // Usage: the trace's lengths with --prompt; a format alone; no rate.
  r = RunCliBinary(with({"--trace", dir + "/mooncake-conversation-head.jsonl",
                         "--trace-format", "mooncake", "--prompt", "100"}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("the mooncake trace gives each request's"));
  r = RunCliBinary(with({"--trace-format", "azure", "--rate", "1"}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--trace-format goes with --trace"));
  r = RunCliBinary(with({"--prompt", "100", "--gen", "10"}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--rate is required (or --trace)"));
  // Sessions are not a trace's; one arrival has no rate of its own.
  r = RunCliBinary(with({"--trace", dir + "/mooncake-conversation-head.jsonl",
                         "--trace-format", "mooncake", "--turns", "2"}));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("traffic.sessions.turns"));
  char path[] = "/tmp/ridgeline-plan-times-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "0.5\n", 4), 4);
  close(fd);
  r = RunCliBinary(with({"--trace", path, "--prompt", "100", "--gen", "10"}));
  std::remove(path);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("traffic.rate: must be set"));
  EXPECT_THAT(r.err, HasSubstr("(flag --rate)"));
}

// --model-config FILE (issue 20 item 6): the published Qwen3-30B-A3B
// config.json parses to the catalog entry's dimensions
// (tests/unit/models/hf_config_test.cc), so its plan is the catalog
// model's, cell for cell. Before the flag existed: "unknown flag".
TEST(PlanCli, ModelConfigPlansAnInlineHfConfig) {
  const std::string config =
      std::string(RIDGELINE_TEST_CONFIG_DIR) + "/qwen3-30b-a3b.json";
  auto args = [](std::vector<std::string> model) {
    std::vector<std::string> a = {"plan"};
    a.insert(a.end(), model.begin(), model.end());
    for (const char* x :
         {"--hardware", "nvidia-h100-sxm-80gb", "--prompt", "1024", "--gen",
          "256", "--rate", "4", "--ttft-p90-ms", "2000", "--tpot-p90-ms",
          "100", "--tensor-parallel", "1", "--formats", "fp8", "--requests",
          "200", "--format", "csv"}) {
      a.push_back(x);
    }
    return InProcess(a);
  };
  CliRun inline_config = RunCliBinary(args({"--model-config", config}));
  ASSERT_EQ(inline_config.exit_code, 0) << inline_config.err;
  CliRun catalog = RunCliBinary(args({"--model", "qwen3-30b-a3b"}));
  ASSERT_EQ(catalog.exit_code, 0) << catalog.err;
  EXPECT_EQ(inline_config.out, catalog.out);
  EXPECT_THAT(inline_config.out, HasSubstr("nvidia-h100-sxm-80gb,1,"));
  CliRun both = RunCliBinary(
      args({"--model", "qwen3-30b-a3b", "--model-config", config}));
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.err, HasSubstr("exactly one of --model ID or "
                                  "--model-config FILE.json"));
  CliRun missing = RunCliBinary(args({"--model-config", "/nonexistent.json"}));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("--model-config: cannot read file"));
}

// Cells of `col` per hardware id, from a plan CSV.
std::map<std::string, std::string> Column(const std::string& csv,
                                          const std::string& col) {
  std::vector<std::string> lines = absl::StrSplit(csv, '\n', absl::SkipEmpty());
  std::map<std::string, std::string> out;
  if (lines.empty()) return out;
  std::vector<std::string> header = absl::StrSplit(lines[0], ',');
  const size_t c = std::find(header.begin(), header.end(), col) - header.begin();
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> cells = absl::StrSplit(lines[i], ',');
    if (c < cells.size()) out[cells[0]] = cells[c];
  }
  return out;
}

// Issue 20 item 3: --usd-per-device-hour per part. The MI300X (list:
// $1.85/h, Vultr) is re-priced at $1.9/h, the H100 keeps its list $2.99/h
// (Lambda): each row's $/Mtoken is devices x rate / 3600 / (10 req/s x 256
// tokens) x 1e6, so the ratio of the two rows' $/Mtoken per device is
// 2.99 / 1.9.
TEST(PlanCli, PricesPerPartAndTheirUsageErrors) {
  CliRun r = RunCliBinary(InProcess(PlanArgs(
      {"--usd-per-device-hour", "amd-mi300x=1.9", "--format", "csv"})));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto usd = Column(r.out, "usd_per_mtoken");
  auto devices = Column(r.out, "devices");
  auto basis = Column(r.out, "cost_basis");
  EXPECT_EQ(basis["amd-mi300x"], "rental");
  EXPECT_EQ(basis["nvidia-h100-sxm-80gb"], "rental");
  EXPECT_NEAR(std::stod(usd["amd-mi300x"]),
              std::stod(devices["amd-mi300x"]) * 1.9 / 3600 / 2560 * 1e6,
              1e-6);
  EXPECT_NEAR(std::stod(usd["nvidia-h100-sxm-80gb"]),
              std::stod(devices["nvidia-h100-sxm-80gb"]) * 2.99 / 3600 /
                  2560 * 1e6,
              1e-6);
  // A bare number applies to all; an entry wins for its part.
  r = RunCliBinary(InProcess(PlanArgs(
      {"--usd-per-device-hour", "2,amd-mi300x=1", "--format", "csv"})));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  usd = Column(r.out, "usd_per_mtoken");
  devices = Column(r.out, "devices");
  EXPECT_NEAR(std::stod(usd["nvidia-h100-sxm-80gb"]),
              std::stod(devices["nvidia-h100-sxm-80gb"]) * 2.0 / 3600 / 2560 *
                  1e6,
              1e-6);
  EXPECT_NEAR(std::stod(usd["amd-mi300x"]),
              std::stod(devices["amd-mi300x"]) * 1.0 / 3600 / 2560 * 1e6,
              1e-6);
  // A purchase price per part beside rental-priced parts: the headline
  // says the ranking mixes bases.
  r = RunCliBinary(InProcess(PlanArgs({"--price-usd", "amd-mi300x=15000"})));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("MIXED COST BASES, not comparable: "));
  EXPECT_THAT(r.out, HasSubstr("purchase (amd-mi300x)"));
  EXPECT_THAT(r.out, HasSubstr("rental (nvidia-h100-sxm-80gb)"));
  // Bad entries: usage errors naming the flag.
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{
           {"--usd-per-device-hour", "amd-mi300x=cheap"},
           {"--usd-per-device-hour", "=2"},
           {"--usd-per-device-hour", "nvidia-b200-180gb=2"},
           {"--usd-per-device-hour", "amd-mi300x=1,amd-mi300x=2"},
           {"--price-usd", "1,2"},
           {"--price-usd", "amd-mi300x=inf"}}) {
    r = RunCliBinary(InProcess(PlanArgs(bad)));
    EXPECT_EQ(r.exit_code, 2) << bad[1];
    EXPECT_THAT(r.err, HasSubstr("ridgeline plan: " + bad[0] + ": ")) << bad[1];
  }
  // A range error is the service's, naming the entry and the flag.
  r = RunCliBinary(InProcess(PlanArgs({"--usd-per-device-hour",
                                       "amd-mi300x=5000"})));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("pricing.usd_per_device_hour_by_hardware["
                               "\"amd-mi300x\"]: must be in [0, 1000]"));
  EXPECT_THAT(r.err, HasSubstr("(flag --usd-per-device-hour)"));
}

// Issue 20 item 3: the pure roofline's plan says "bound" in its first
// line, as simulate's header does.
TEST(PlanCli, PureRooflineHeadlineSaysBound) {
  CliRun r = RunCliBinary(InProcess(PlanArgs()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string first = r.out.substr(0, r.out.find('\n'));
  EXPECT_THAT(first, HasSubstr("pure-roofline bound"));
  r = RunCliBinary(InProcess(PlanArgs({"--framework", "vllm"})));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out.substr(0, r.out.find('\n')),
              ::testing::Not(HasSubstr("bound")));
}

// Issue 20 item 4: in a profile folder where H200 has only a llama.cpp
// profile (nvidia-hbm.llama.cpp-cuda) and H100 a TensorRT-LLM one, a
// TensorRT-LLM plan used to rank H100-on-TensorRT against H200-on-llama.cpp.
// Now it refuses, or, asked, plans H200 on the pure roofline and says so
// per row (CSV column profile_fallback, after the existing columns; a
// "fallback" column in the table).
TEST(PlanCli, OneRuntimePerPlanAndTheAskedForFallbackPerRow) {
  const std::string dir =
      ::testing::TempDir() + "/plan-profiles-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  for (const char* f : {"nvidia-h100-sxm-80gb.tensorrt-llm.json",
                        "nvidia-hbm.llama.cpp-cuda.json"}) {
    std::filesystem::copy_file(
        std::string(RIDGELINE_TEST_PROFILE_DIR) + "/" + f, dir + "/" + f,
        std::filesystem::copy_options::overwrite_existing);
  }
  auto args = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = {
        "plan",
        "--model",
        "llama-3.1-8b",
        "--hardware",
        "nvidia-h100-sxm-80gb,nvidia-h200-sxm-141gb",
        "--prompt",
        "1024",
        "--gen",
        "256",
        "--rate",
        "10",
        "--ttft-p90-ms",
        "1000",
        "--tpot-p90-ms",
        "50",
        "--tensor-parallel",
        "1",
        "--formats",
        "fp8",
        "--requests",
        "100",
        "--framework",
        "tensorrt-llm",
        "--disaggregated",
        "off",
        std::string("--plugin-dir=") + RIDGELINE_TEST_PLUGIN_DIR,
        "--profile-dir=" + dir};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  CliRun r = RunCliBinary(args({}));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("has none for nvidia-h200-sxm-141gb (the "
                               "nearest is nvidia-hbm.llama.cpp-cuda, another "
                               "runtime's)"));
  EXPECT_THAT(r.err, HasSubstr("(flag --framework)"));
  r = RunCliBinary(args({"--profile-fallback", "roofline", "--format", "csv"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_THAT(lines[0],
              ::testing::EndsWith(",pipeline_parallel,expert_parallel,"
                                  "profile_fallback,mode,prefill_hardware,"
                                  "prefill_tensor_parallel,prefill_replicas,"
                                  "decode_hardware,decode_tensor_parallel,"
                                  "decode_replicas,kv_transfer_p90_ms,"
                                  "bound_devices,bound_warning"));
  auto fallback = Column(r.out, "profile_fallback");
  auto profile = Column(r.out, "profile");
  EXPECT_EQ(fallback["nvidia-h200-sxm-141gb"], "roofline");
  EXPECT_EQ(profile["nvidia-h200-sxm-141gb"], "");
  EXPECT_EQ(fallback["nvidia-h100-sxm-80gb"], "");
  EXPECT_EQ(profile["nvidia-h100-sxm-80gb"],
            "nvidia-h100-sxm-80gb.tensorrt-llm");
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("warning")));
  r = RunCliBinary(args({"--profile-fallback", "roofline"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("fallback"));
  EXPECT_THAT(r.out, HasSubstr("roofline"));
  r = RunCliBinary(args({"--profile-fallback", "nearest"}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("candidates.profile_fallback"));
  EXPECT_THAT(r.err, HasSubstr("(flag --profile-fallback)"));
  std::filesystem::remove_all(dir);
}

// Pipeline and expert parallelism: one row per stage count, the devices of
// every stage counted, the two new columns; bad lists name their flag.
TEST(PlanCli, PipelineCandidatesHaveTheirColumns) {
  CliRun r = RunCliBinary(InProcess({"plan",
                                     "--model",
                                     "llama-3.1-8b",
                                     "--hardware",
                                     "nvidia-h100-sxm-80gb",
                                     "--prompt",
                                     "1024",
                                     "--gen",
                                     "256",
                                     "--rate",
                                     "10",
                                     "--ttft-p90-ms",
                                     "1000",
                                     "--tpot-p90-ms",
                                     "50",
                                     "--tensor-parallel",
                                     "1",
                                     "--pipeline-parallel",
                                     "1,2",
                                     "--formats",
                                     "fp8",
                                     "--requests",
                                     "200",
                                     "--format",
                                     "csv",
                                     "--disaggregated",
                                     "off"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines =
      absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << r.out;  // header + PP 1 + PP 2
  std::vector<std::string> header = absl::StrSplit(lines[0], ',');
  auto col = [&](const char* name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) -
                               header.begin());
  };
  ASSERT_LT(col("pipeline_parallel"), header.size());
  ASSERT_LT(col("expert_parallel"), header.size());
  std::vector<std::string> pps;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> cells = absl::StrSplit(lines[i], ',');
    ASSERT_EQ(cells.size(), header.size()) << lines[i];
    pps.push_back(cells[col("pipeline_parallel")]);
    EXPECT_EQ(cells[col("expert_parallel")], "1");
    // devices = replicas x stages (TP 1).
    EXPECT_EQ(std::stoi(cells[col("devices")]),
              std::stoi(cells[col("replicas")]) *
                  std::stoi(cells[col("pipeline_parallel")]))
        << lines[i];
  }
  std::sort(pps.begin(), pps.end());
  EXPECT_EQ(pps, (std::vector<std::string>{"1", "2"}));
}

TEST(PlanCli, BadPipelineAndExpertListsNameTheirFlag) {
  // Llama-3.1-8B has 32 layers: 3 stages do not divide them.
  CliRun r = RunCliBinary(InProcess(PlanArgs({"--pipeline-parallel", "3"})));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("candidates.pipeline_parallel[0]"));
  EXPECT_THAT(r.err, HasSubstr("32 layers"));
  EXPECT_THAT(r.err, HasSubstr("got 3"));
  EXPECT_THAT(r.err, HasSubstr("(flag --pipeline-parallel)"));
  // A dense model has no experts to spread.
  r = RunCliBinary(InProcess(PlanArgs({"--expert-parallel", "1,2"})));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("candidates.expert_parallel[1]"));
  EXPECT_THAT(r.err, HasSubstr("dense model"));
  EXPECT_THAT(r.err, HasSubstr("(flag --expert-parallel)"));
  r = RunCliBinary(InProcess(PlanArgs({"--pipeline-parallel", "x"})));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--pipeline-parallel"));
}

}  // namespace

// Issue 21: DeepSeek-V3 on 8 x H200 (EP 8) under serving.vllm, fitted on
// 8 x MI300X at TP 8 only. The answer is far above the bound's device count
// (the pure roofline serves the 20 req/s with one 8-device replica): the
// plan says it is an extrapolation, sizes the bound beside it
// (bound_devices), and says why it is more than 3x the bound's, on stderr,
// in the CSV and in PlanResponse.warnings.
TEST(PlanCli, AnswerFarFromTheBoundSaysWhy) {
  const std::vector<std::string> args = {"plan",
                                         "--model",
                                         "deepseek-v3",
                                         "--hardware",
                                         "nvidia-h200-sxm-141gb",
                                         "--prompt",
                                         "2048",
                                         "--gen",
                                         "512",
                                         "--rate",
                                         "20",
                                         "--ttft-p90-ms",
                                         "1000",
                                         "--tpot-p90-ms",
                                         "50",
                                         "--tensor-parallel",
                                         "8",
                                         "--expert-parallel",
                                         "8",
                                         "--formats",
                                         "fp8",
                                         "--requests",
                                         "200",
                                         "--format",
                                         "csv",
                                         "--framework",
                                         "vllm"};
  CliRun r = RunCliBinary(InProcess(args));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("is an EXTRAPOLATION"));
  auto devices = Column(r.out, "devices");
  auto bound = Column(r.out, "bound_devices");
  auto why = Column(r.out, "bound_warning");
  const std::string ep8 = "nvidia-h200-sxm-141gb";
  int64_t d = 0, b = 0;
  ASSERT_TRUE(absl::SimpleAtoi(devices[ep8], &d)) << r.out;
  ASSERT_TRUE(absl::SimpleAtoi(bound[ep8], &b)) << r.out;
  ASSERT_GT(b, 0);
  if (d > 3 * b) {
    EXPECT_THAT(why[ep8], HasSubstr("x the pure roofline's"));
    EXPECT_THAT(r.err, HasSubstr("x the pure roofline's"));
  } else {
    EXPECT_EQ(why[ep8], "");
  }
  // Without calibration there is no bound to compare with.
  std::vector<std::string> pure(args.begin(), args.end() - 2);
  r = RunCliBinary(InProcess(pure));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Column(r.out, "bound_devices")[ep8], "0");
}

// Issue 22: --disaggregated on plans prefill / decode pool pairs, their
// columns appended; decode hardware without prefill hardware is nonsense.
TEST(PlanCli, DisaggregatedRowsFillThePoolColumns) {
  CliRun r = RunCliBinary(InProcess({"plan",
                                     "--model",
                                     "llama-3.1-8b",
                                     "--hardware",
                                     "nvidia-h100-sxm-80gb",
                                     "--prompt",
                                     "1024",
                                     "--gen",
                                     "256",
                                     "--rate",
                                     "10",
                                     "--ttft-p90-ms",
                                     "1000",
                                     "--tpot-p90-ms",
                                     "50",
                                     "--tensor-parallel",
                                     "1",
                                     "--formats",
                                     "fp8",
                                     "--requests",
                                     "200",
                                     "--disaggregated",
                                     "on",
                                     "--format",
                                     "csv"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines =
      absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u) << r.out;  // header + the one H100 pair
  EXPECT_EQ(Column(r.out, "mode")["nvidia-h100-sxm-80gb"], "disaggregated");
  EXPECT_EQ(Column(r.out, "prefill_hardware")["nvidia-h100-sxm-80gb"],
            "nvidia-h100-sxm-80gb");
  EXPECT_EQ(Column(r.out, "decode_tensor_parallel")["nvidia-h100-sxm-80gb"],
            "1");
  EXPECT_EQ(Column(r.out, "tensor_parallel")["nvidia-h100-sxm-80gb"], "0");

  r = RunCliBinary(InProcess({"plan", "--model", "llama-3.1-8b", "--hardware",
                              "nvidia-h100-sxm-80gb", "--decode-hardware",
                              "amd-mi300x", "--prompt", "1024", "--gen", "256",
                              "--rate", "10", "--ttft-p90-ms", "1000",
                              "--tpot-p90-ms", "50", "--disaggregated", "on"}));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.err, HasSubstr("candidates.prefill_hardware"));
  EXPECT_THAT(r.err, HasSubstr("candidates.decode_hardware"));
  EXPECT_THAT(r.err, HasSubstr("(flag --prefill-hardware)"));
}

}  // namespace ridgeline::testing
