// `ridgeline simulate` as a real binary: the CSV (one row per load),
// identical in-process and against a real server, traces from a file,
// JSON lines, and usage and field errors naming the flag.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
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
using ::testing::StartsWith;

std::vector<std::string> SimArgs(std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {
      "simulate",   "--model",   "llama-3.1-8b", "--hardware",
      "nvidia-h100-sxm-80gb", "--prompt", "1024", "--gen", "128",
      "--formats",  "fp8",       "--requests",   "200"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

std::vector<std::string> InProcess(std::vector<std::string> a) {
  a.push_back(std::string("--plugin-dir=") + RIDGELINE_TEST_PLUGIN_DIR);
  a.push_back(std::string("--profile-dir=") + RIDGELINE_TEST_PROFILE_DIR);
  return a;
}

// CSV -> rows of cells keyed by the header.
std::vector<std::map<std::string, std::string>> ParseCsv(
    const std::string& text) {
  std::vector<std::string> lines =
      absl::StrSplit(text, '\n', absl::SkipEmpty());
  std::vector<std::map<std::string, std::string>> rows;
  if (lines.empty()) return rows;
  std::vector<std::string> header = absl::StrSplit(lines[0], ',');
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> cells = absl::StrSplit(lines[i], ',');
    std::map<std::string, std::string> row;
    for (size_t c = 0; c < header.size() && c < cells.size(); ++c) {
      row[header[c]] = cells[c];
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

double Num(const std::map<std::string, std::string>& row,
           const std::string& col) {
  double v = -1;
  EXPECT_TRUE(row.count(col) && absl::SimpleAtod(row.at(col), &v)) << col;
  return v;
}

TEST(SimulateCli, CsvHasOneRowPerRate) {
  CliRun r = RunCliBinary(InProcess(SimArgs({"--rate", "2,8", "--format",
                                             "csv"})));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = ParseCsv(r.out);
  ASSERT_EQ(rows.size(), 2u) << r.out;
  EXPECT_EQ(rows[0]["load_kind"], "rate");
  EXPECT_EQ(rows[0]["load"], "2");
  EXPECT_EQ(rows[1]["load"], "8");
  for (auto& row : rows) {
    EXPECT_EQ(row["requests"], "200");
    // Percentiles are ordered within each metric.
    for (const char* m : {"ttft", "tpot", "itl", "e2e", "queue"}) {
      const std::string p = m;
      EXPECT_LE(Num(row, p + "_p50_ms"), Num(row, p + "_p90_ms")) << m;
      EXPECT_LE(Num(row, p + "_p90_ms"), Num(row, p + "_p99_ms")) << m;
    }
    // Each request generates 128 tokens: output = 128 x requests/s.
    EXPECT_NEAR(Num(row, "output_tokens_per_second"),
                128 * Num(row, "requests_per_second"),
                1e-6 * Num(row, "output_tokens_per_second"));
    EXPECT_GT(Num(row, "kv_capacity_tokens"), 0);
    EXPECT_EQ(row["profile"], "");  // no --framework: the pure roofline
  }
}

TEST(SimulateCli, SameAnswerInProcessAndOverGrpc) {
  ServerProcess server;
  ASSERT_TRUE(server.ok()) << server.error();
  ASSERT_TRUE(WaitServing(server.Channel(), std::chrono::seconds(20)));
  const std::vector<std::string> extra = {"--concurrency", "4,16", "--format",
                                          "csv"};
  CliRun local = RunCliBinary(InProcess(SimArgs(extra)));
  std::vector<std::string> remote_args = SimArgs(extra);
  remote_args.insert(remote_args.end(), {"--server", server.address()});
  CliRun remote = RunCliBinary(remote_args);
  ASSERT_EQ(local.exit_code, 0) << local.err;
  ASSERT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_EQ(local.out, remote.out);
  // The common flag may also precede the command.
  std::vector<std::string> leading = {"--server", server.address()};
  std::vector<std::string> rest = SimArgs(extra);
  leading.insert(leading.end(), rest.begin(), rest.end());
  EXPECT_EQ(RunCliBinary(leading).out, local.out);
}

TEST(SimulateCli, TraceFileSetsTheArrivals) {
  char path[] = "/tmp/ridgeline-trace-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    std::ofstream f(path);
    f << "# arrival seconds\n0\n0.5, 1.0\n";
  }
  CliRun r = RunCliBinary(
      InProcess(SimArgs({"--trace", path, "--format", "csv"})));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = ParseCsv(r.out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["load_kind"], "trace");
  EXPECT_EQ(rows[0]["requests"], "3");  // the trace's length
  // The last arrival is at 1.0 s and takes at least its own e2e latency.
  EXPECT_GE(Num(rows[0], "duration_s"), 1.0);
  {
    std::ofstream f(path);
    f << "0\nsoon\n";
  }
  r = RunCliBinary(InProcess(SimArgs({"--trace", path})));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(std::string(path) + ":2"));
  EXPECT_THAT(r.err, HasSubstr("'soon'"));
  std::remove(path);
}

// The Mooncake excerpt (tests/fixtures/traces/README.md): lengths and
// prompt blocks from the file, prefix caching on by default, the same
// answer over gRPC, and a malformed line named by file, line and field.
TEST(SimulateCli, MooncakeTraceWithPrefixCaching) {
  const std::string trace = std::string(RIDGELINE_TEST_TRACE_DIR) +
                            "/mooncake-conversation-head.jsonl";
  const std::vector<std::string> args = {"simulate",
                                         "--model",
                                         "llama-3.1-8b",
                                         "--hardware",
                                         "nvidia-h100-sxm-80gb",
                                         "--formats",
                                         "fp8",
                                         "--trace",
                                         trace,
                                         "--trace-format",
                                         "mooncake",
                                         "--format",
                                         "csv"};
  CliRun r = RunCliBinary(InProcess(args));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = ParseCsv(r.out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["requests"], "6");
  // Block 0 (512 tokens) is every prompt's: r1 is admitted with r0 in the
  // first step, before anything is cached, the other four hit it
  // (serving's PrefixCache test traces it): 2,048 of 31,281 tokens.
  EXPECT_EQ(rows[0]["prefill_tokens_saved"], "2048");
  EXPECT_NEAR(Num(rows[0], "prefix_hit_rate"), 2048.0 / 31281, 1e-9);
  std::vector<std::string> off = args;
  off.insert(off.end(), {"--prefix-caching", "off"});
  CliRun o = RunCliBinary(InProcess(off));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(ParseCsv(o.out)[0]["prefill_tokens_saved"], "0");
  // Recomputing the prefixes costs time to first token.
  EXPECT_GT(Num(ParseCsv(o.out)[0], "ttft_mean_ms"),
            Num(rows[0], "ttft_mean_ms"));

  ServerProcess server;
  ASSERT_TRUE(server.ok()) << server.error();
  ASSERT_TRUE(WaitServing(server.Channel(), std::chrono::seconds(20)));
  std::vector<std::string> remote = args;
  remote.insert(remote.end(), {"--server", server.address()});
  CliRun g = RunCliBinary(remote);
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_EQ(g.out, r.out);

  // The trace gives the lengths: --prompt is refused, as is a bad format.
  std::vector<std::string> both = args;
  both.insert(both.end(), {"--prompt", "100"});
  CliRun b = RunCliBinary(InProcess(both));
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_THAT(b.err, HasSubstr("the mooncake trace gives each request's"));
  std::vector<std::string> bad_format = args;
  bad_format[10] = "vidur";
  b = RunCliBinary(InProcess(bad_format));
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_THAT(b.err, HasSubstr("--trace-format: must be mooncake, azure or "
                               "times; got 'vidur'"));
  char path[] = "/tmp/ridgeline-mooncake-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    std::ofstream f(path);
    f << "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 2, "
         "\"hash_ids\": [1, 2]}\n"
         "{\"timestamp\": 5, \"input_length\": 0, \"output_length\": 2}\n";
  }
  std::vector<std::string> bad = args;
  bad[8] = path;
  b = RunCliBinary(InProcess(bad));
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_THAT(b.err, HasSubstr(std::string(path) + ":2: input_length"));
  std::remove(path);
}

// --shared-prefix: a system prompt every request shares.
TEST(SimulateCli, SharedPrefixIsServedFromTheCache) {
  CliRun r = RunCliBinary(InProcess(
      SimArgs({"--rate", "2", "--shared-prefix", "512", "--format", "csv"})));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = ParseCsv(r.out);
  ASSERT_EQ(rows.size(), 1u);
  // 200 prompts of 1,024 tokens; at 2 req/s each arrives after the one
  // before has prefilled, so every one but the first finds the 512 / 16 =
  // 32 shared blocks: 199 x 512 of 204,800 tokens.
  EXPECT_EQ(rows[0]["prefill_tokens_saved"], "101888");
  EXPECT_NEAR(Num(rows[0], "prefix_hit_rate"), 101888.0 / 204800, 1e-9);
  r = RunCliBinary(
      InProcess(SimArgs({"--rate", "2", "--shared-prefix", "-1"})));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--shared-prefix"));
}

TEST(SimulateCli, MultiTurnSessionsFindTheirHistory) {
  CliRun r = RunCliBinary(
      InProcess(SimArgs({"--rate", "0.5", "--turns", "4", "--think-time", "5",
                         "--format", "csv"})));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = ParseCsv(r.out);
  ASSERT_EQ(rows.size(), 1u);
  // 200 turns: 50 sessions of 4. Turn k's prompt is 1024 + k x (1024 +
  // 128): 1024, 2176, 3328, 4480 (11,008 a session). Turn k > 0 finds the
  // KV the turn before wrote (its prompt + 127 generated tokens) in whole
  // 16-token blocks: 1151 -> 1136, 2303 -> 2288, 3455 -> 3440, 6864 a
  // session (one replica, room for all of it: nothing is evicted).
  EXPECT_EQ(rows[0]["prefill_tokens_saved"], "343200");  // 50 x 6864
  EXPECT_NEAR(Num(rows[0], "prefix_hit_rate"), 6864.0 / 11008, 1e-9);
  r = RunCliBinary(InProcess(SimArgs({"--rate", "1", "--think-time", "3"})));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--think-time goes with --turns"));
  r = RunCliBinary(InProcess(SimArgs({"--rate", "1", "--turns", "0"})));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--turns"));
}

// KV offload to the part's host DRAM (the nvidia plugin's "host DRAM over
// PCIe 5.0 x16" tier): conversations whose 30 s think times outlast a small
// KV cache (memory fraction 0.13: 42 k tokens) lose their history in device
// memory, and find all of it in host memory.
// The single CSV row of an in-process run of `args` (empty on failure).
std::map<std::string, std::string> OneCsvRow(std::vector<std::string> args) {
  args.insert(args.end(), {"--format", "csv"});
  CliRun r = RunCliBinary(InProcess(std::move(args)));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto rows = ParseCsv(r.out);
  EXPECT_EQ(rows.size(), 1u);
  return rows.empty() ? std::map<std::string, std::string>{} : rows[0];
}

// A pure state-space model (issue 25) serves like any other: no KV grows,
// each sequence holds its constant state (69,074,944 B in fp8), and the
// cache is exactly the running sequences' tokens (max_concurrency x 1152,
// 1024 + 128 in whole blocks of 16); decode steps do not slow as the
// contexts grow, so TPOT's p50 and p99 are close.
TEST(SimulateCli, APureStateSpaceModelServes) {
  std::vector<std::string> args = SimArgs({"--rate", "2"});
  args[2] = "mamba-codestral-7b";
  const auto row = OneCsvRow(args);
  ASSERT_FALSE(row.empty());
  EXPECT_EQ(row.at("stable"), "1");
  EXPECT_EQ(row.at("requests"), "200");
  EXPECT_EQ(Num(row, "kv_capacity_tokens"),
            Num(row, "max_concurrency") * 1152);
  EXPECT_GT(Num(row, "output_tokens_per_second"), 0);
  EXPECT_LT(Num(row, "tpot_p99_ms"), 1.5 * Num(row, "tpot_p50_ms"));
}

// Kimi-Linear (issue 25): 20 KDA layers keep a constant state, 7 MLA
// layers a latent per token; it serves stably on one H100 in fp8, its TPOT
// tail within 3x its median (prefill chunks share the decode steps).
TEST(SimulateCli, AKimiDeltaAttentionHybridServes) {
  std::vector<std::string> args = SimArgs({"--rate", "2"});
  args[2] = "kimi-linear-48b-a3b";
  const auto row = OneCsvRow(args);
  ASSERT_FALSE(row.empty());
  EXPECT_EQ(row.at("stable"), "1");
  EXPECT_EQ(row.at("requests"), "200");
  EXPECT_GT(Num(row, "output_tokens_per_second"), 0);
  EXPECT_LT(Num(row, "tpot_p99_ms"), 3 * Num(row, "tpot_p50_ms"));
}

TEST(SimulateCli, KvOffloadToHostFindsWhatTheDeviceEvicted) {
  auto run = [](const char* offload) {
    return OneCsvRow(SimArgs({"--rate", "2", "--turns", "4", "--think-time",
                              "30", "--requests", "800", "--memory-fraction",
                              "0.13", "--kv-offload", offload}));
  };
  const auto off = run("off");
  const auto host = run("host");
  ASSERT_FALSE(off.empty() || host.empty());
  // 200 sessions of 4 turns; 1024 + k x 1152 prompt tokens; host memory
  // (2^38 B / 65,536 B a token = 4.19 M tokens) holds every session (4,608
  // tokens each), and a token reloads in 65,536 / 64e9 = 1.0 us against
  // about 8 us to recompute it (2 x 8e9 flops / 1979 TFLOP/s fp8): every
  // turn finds its whole history, 6864 of a session's 11,008 prompt tokens
  // (MultiTurnSessionsFindTheirHistory).
  EXPECT_NEAR(Num(host, "prefix_hit_rate"), 6864.0 / 11008, 1e-9);
  EXPECT_GT(Num(host, "kv_offload_hit_rate"),
            0.9 * Num(host, "prefix_hit_rate"));
  EXPECT_LT(Num(off, "prefix_hit_rate"), 0.1);
  EXPECT_EQ(Num(off, "kv_offload_hit_rate"), 0);
  EXPECT_LT(Num(host, "ttft_p50_ms"), Num(off, "ttft_p50_ms"));
  CliRun bad =
      RunCliBinary(InProcess(SimArgs({"--rate", "1", "--kv-offload", "disk"})));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("serving.kv_offload: must be off, host or "
                                 "all; got \"disk\""));
  EXPECT_THAT(bad.err, HasSubstr("--kv-offload"));
}

// --preemption: with long outputs the KV cache (memory fraction 0.13: 42 k
// tokens) holds 13 whole lives of 1024 + 2048 tokens; lazy allocation runs
// more at once and preempts when decodes outgrow it, recomputing the
// preempted or swapping its KV to host memory and back.
std::vector<std::string> LongOutputs(std::vector<std::string> extra) {
  std::vector<std::string> a = {"simulate",
                                "--model",
                                "llama-3.1-8b",
                                "--hardware",
                                "nvidia-h100-sxm-80gb",
                                "--formats",
                                "fp8",
                                "--prompt",
                                "1024",
                                "--gen",
                                "2048",
                                "--concurrency",
                                "64",
                                "--requests",
                                "128",
                                "--memory-fraction",
                                "0.13"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

TEST(SimulateCli, PreemptionByRecomputeOrSwap) {
  const auto off = OneCsvRow(LongOutputs({"--preemption", "off"}));
  const auto lazy = OneCsvRow(LongOutputs({"--preemption", "recompute"}));
  const auto swap =
      OneCsvRow(LongOutputs({"--preemption", "swap", "--kv-offload", "host"}));
  ASSERT_FALSE(off.empty() || lazy.empty() || swap.empty());
  EXPECT_EQ(off.at("preemptions"), "0");
  EXPECT_GT(Num(lazy, "preemptions"), 0);
  EXPECT_EQ(lazy.at("swapped_preemptions"), "0");
  EXPECT_GT(Num(lazy, "mean_running"), Num(off, "mean_running"));
  // Host memory (4.19 M tokens a device) takes every swap: a preempted
  // request's ~2 k tokens of KV cross PCIe 5.0 in 2 x 131 MB / 64 GB/s =
  // 4 ms, where recomputing them costs a prefill of ~2 k tokens.
  EXPECT_GT(Num(swap, "preemptions"), 0);
  EXPECT_EQ(Num(swap, "swapped_preemptions"), Num(swap, "preemptions"));
  EXPECT_LT(Num(swap, "e2e_p99_ms"), Num(lazy, "e2e_p99_ms"));

  // The swapped KV in the host tier's timeline.
  CliRun json = RunCliBinary(InProcess(LongOutputs(
      {"--preemption", "swap", "--kv-offload", "host", "--format", "json"})));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j["timeline"]["kvTiers"].size(), 1u);
  const nlohmann::json& tier = j["timeline"]["kvTiers"][0];
  EXPECT_EQ(tier["name"], j["kvTiers"][0]["name"]);
  ASSERT_EQ(tier["usageMean"].size(), j["timeline"]["arrivals"].size());
  double peak = 0;
  for (const auto& v : tier["usageMean"])
    peak = std::max(peak, v.get<double>());
  EXPECT_GT(peak, 0);
  EXPECT_LE(peak, j["kvTiers"][0]["usagePeak"].get<double>() + 1e-12);

  CliRun bad = RunCliBinary(
      InProcess(SimArgs({"--rate", "1", "--preemption", "evict"})));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("serving.preemption: must be off, recompute "
                                 "or swap; got \"evict\""));
  EXPECT_THAT(bad.err, HasSubstr("--preemption"));
  CliRun no_tier =
      RunCliBinary(InProcess(SimArgs({"--rate", "1", "--preemption", "swap"})));
  EXPECT_EQ(no_tier.exit_code, 1);
  EXPECT_THAT(no_tier.err, HasSubstr("set serving.kv_offload to host or all"));
  EXPECT_THAT(no_tier.err, HasSubstr("--preemption"));
}

TEST(SimulateCli, JsonIsOneObjectPerRun) {
  CliRun r = RunCliBinary(
      InProcess(SimArgs({"--rate", "1,4", "--format", "json"})));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n',
                                                  absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u);
  for (const std::string& l : lines) {
    nlohmann::json j = nlohmann::json::parse(l);
    EXPECT_EQ(j["requests"], "200");  // int64 is a JSON string in proto3
    EXPECT_TRUE(j["ttft"].contains("p90Seconds"));
  }
}

TEST(SimulateCli, TableLeadsWithTheDeployment) {
  CliRun r = RunCliBinary(InProcess(SimArgs({"--rate", "4"})));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("llama-3.1-8b on nvidia-h100-sxm-80gb, TP 1, "
                                "fp8/fp8/fp8, pure roofline"));
  EXPECT_THAT(r.out, HasSubstr("ttft p90"));
  EXPECT_THAT(r.out, HasSubstr("rate 4"));
}

// --model-config FILE (issue 20 item 6): the published Qwen3-30B-A3B
// config.json is the catalog entry's dimensions, so one replica serves it
// exactly as the catalog model; the header names the file's model.
TEST(SimulateCli, ModelConfigSimulatesAnInlineHfConfig) {
  const std::string config =
      std::string(RIDGELINE_TEST_CONFIG_DIR) + "/qwen3-30b-a3b.json";
  auto args = [](std::vector<std::string> model,
                 std::vector<std::string> extra) {
    std::vector<std::string> a = {"simulate"};
    a.insert(a.end(), model.begin(), model.end());
    for (const char* x : {"--hardware", "nvidia-h100-sxm-80gb", "--prompt",
                          "1024", "--gen", "128", "--formats", "fp8",
                          "--requests", "200", "--rate", "4"}) {
      a.push_back(x);
    }
    a.insert(a.end(), extra.begin(), extra.end());
    return InProcess(a);
  };
  CliRun inline_config =
      RunCliBinary(args({"--model-config", config}, {"--format", "csv"}));
  ASSERT_EQ(inline_config.exit_code, 0) << inline_config.err;
  CliRun catalog =
      RunCliBinary(args({"--model", "qwen3-30b-a3b"}, {"--format", "csv"}));
  ASSERT_EQ(catalog.exit_code, 0) << catalog.err;
  EXPECT_EQ(inline_config.out, catalog.out);
  CliRun table = RunCliBinary(args({"--model-config", config}, {}));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, StartsWith("qwen3-30b-a3b on nvidia-h100-sxm-80gb"));
  CliRun neither = RunCliBinary(args({}, {}));
  EXPECT_EQ(neither.exit_code, 2);
  EXPECT_THAT(neither.err, HasSubstr("exactly one of --model ID or "
                                     "--model-config FILE.json"));
}

TEST(SimulateCli, ErrorsNameTheFlag) {
  CliRun r = RunCliBinary(InProcess(SimArgs({"--rate", "0"})));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("traffic.rate"));
  EXPECT_THAT(r.err, HasSubstr("(flag --rate)"));
  r = RunCliBinary(InProcess(SimArgs({"--rate", "4", "--requests",
                                      "1000000000"})));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(r.err, HasSubstr("(flag --requests)"));
  r = RunCliBinary(InProcess(SimArgs({"--rate", "4", "--tensor-parallel",
                                      "0"})));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("parallelism.tensor_parallel"));
  EXPECT_THAT(r.err, HasSubstr("(flag --tensor-parallel)"));
  r = RunCliBinary(InProcess(SimArgs()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("exactly one of --rate, --concurrency or "
                               "--trace"));
  r = RunCliBinary(InProcess(SimArgs({"--rate", "1", "--concurrency", "2"})));
  EXPECT_EQ(r.exit_code, 2);
  r = RunCliBinary(InProcess({"simulate", "--model", "llama-3.1-8b"}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--hardware is required"));
  r = RunCliBinary(InProcess(SimArgs({"--rate", "fast"})));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--rate"));
}

// A pipelined replica: each stage holds half the layers, so of the weights
// and of every token's KV: the KV capacity more than doubles (free bytes
// grow by half the weights, bytes per token halve). Expert parallelism:
// attention data-parallel, named in the header; a dense model refuses it.
TEST(SimulateCli, PipelineAndExpertParallelism) {
  CliRun one = RunCliBinary(InProcess(SimArgs({"--rate", "4", "--format",
                                               "csv"})));
  CliRun two = RunCliBinary(InProcess(SimArgs(
      {"--rate", "4", "--pipeline-parallel", "2", "--format", "csv"})));
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(two.exit_code, 0) << two.err;
  auto a = ParseCsv(one.out);
  auto b = ParseCsv(two.out);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_GT(Num(b[0], "kv_capacity_tokens"), 2 * Num(a[0], "kv_capacity_tokens"));
  // The first token needs the whole traversal: never faster than one stage.
  EXPECT_GT(Num(b[0], "ttft_p50_ms"), 0);

  CliRun ep = RunCliBinary(InProcess(
      {"simulate", "--model", "mixtral-8x7b", "--hardware",
       "nvidia-h100-sxm-80gb", "--prompt", "1024", "--gen", "128",
       "--formats", "fp8", "--requests", "64", "--rate", "4",
       "--expert-parallel", "8"}));
  ASSERT_EQ(ep.exit_code, 0) << ep.err;
  EXPECT_THAT(ep.out, HasSubstr("EP 8 (attention data-parallel)"));

  CliRun dense = RunCliBinary(InProcess(
      SimArgs({"--rate", "4", "--expert-parallel", "2"})));
  EXPECT_EQ(dense.exit_code, 1);
  EXPECT_THAT(dense.err, HasSubstr("parallelism.expert_parallel"));
  EXPECT_THAT(dense.err, HasSubstr("dense model"));
  EXPECT_THAT(dense.err, HasSubstr("(flag --expert-parallel)"));
  CliRun bad = RunCliBinary(InProcess(
      SimArgs({"--rate", "4", "--pipeline-parallel", "5"})));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("parallelism.pipeline_parallel"));
  EXPECT_THAT(bad.err, HasSubstr("(flag --pipeline-parallel)"));
}

}  // namespace
}  // namespace ridgeline::testing

namespace ridgeline::testing {
namespace {

// N replicas behind a router, and a prefill pool handing the KV to a
// decode pool (issue 22): the CSV's appended columns.
TEST(SimulateCli, ReplicasBehindARouterAndDisaggregatedPools) {
  CliRun r = RunCliBinary(
      InProcess(SimArgs({"--rate", "8", "--replicas", "2", "--router",
                         "least-loaded", "--format", "csv"})));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = ParseCsv(r.out);
  ASSERT_EQ(rows.size(), 1u) << r.out;
  EXPECT_EQ(rows[0]["mode"], "aggregated");
  EXPECT_GT(Num(rows[0], "aggregated_utilization"), 0);
  EXPECT_LE(Num(rows[0], "aggregated_utilization"), 1);
  EXPECT_EQ(rows[0]["kv_transfer_p50_ms"], "");
  EXPECT_EQ(rows[0]["prefill_utilization"], "");

  // One client: no transfer ever queues. Llama-3.1-8B fp8 keeps 32 layers
  // x (K + V) x 8 KV heads x 128 x 1 B = 65,536 B a token; 1,024 prompt
  // tokens = 67,108,864 B, H100 to H100 over NVLink4 (900 GB/s both
  // directions: 450e9 B/s one way, hardware_specs.csv): 0.149131 ms.
  r = RunCliBinary(InProcess({"simulate",
                              "--model",
                              "llama-3.1-8b",
                              "--prompt",
                              "1024",
                              "--gen",
                              "32",
                              "--formats",
                              "fp8",
                              "--requests",
                              "20",
                              "--concurrency",
                              "1",
                              "--prefill-hardware",
                              "nvidia-h100-sxm-80gb",
                              "--decode-hardware",
                              "nvidia-h100-sxm-80gb",
                              "--decode-replicas",
                              "2",
                              "--format",
                              "csv"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  rows = ParseCsv(r.out);
  ASSERT_EQ(rows.size(), 1u) << r.out;
  EXPECT_EQ(rows[0]["mode"], "disaggregated");
  EXPECT_NEAR(Num(rows[0], "kv_transfer_p50_ms"), 67108864 / 450e9 * 1e3, 1e-9);
  EXPECT_NEAR(Num(rows[0], "kv_transfer_p90_ms"), 67108864 / 450e9 * 1e3, 1e-9);
  EXPECT_GT(Num(rows[0], "prefill_utilization"), 0);
  EXPECT_GT(Num(rows[0], "decode_utilization"), 0);
  EXPECT_EQ(rows[0]["aggregated_utilization"], "");
  // No source gives NVLink's latency: said, not guessed.
  EXPECT_THAT(r.err, HasSubstr("no source gives the scale-up link's latency"));
}

TEST(SimulateCli, DeploymentErrorsNameTheFieldAndFlag) {
  CliRun r =
      RunCliBinary(InProcess(SimArgs({"--rate", "4", "--replicas", "0"})));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("replicas: must be in [1, 4096]; got 0"));
  EXPECT_THAT(r.err, HasSubstr("(flag --replicas)"));
  r = RunCliBinary(InProcess(SimArgs({"--rate", "4", "--router", "fastest"})));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("router: must be round-robin, least-loaded, "
                               "power-of-two or prefix-affinity; got "
                               "\"fastest\""));
  EXPECT_THAT(r.err, HasSubstr("(flag --router)"));
  r = RunCliBinary(InProcess({"simulate", "--model", "llama-3.1-8b", "--prompt",
                              "1024", "--gen", "32", "--rate", "1",
                              "--decode-hardware", "nvidia-h100-sxm-80gb"}));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("prefill: must be set when decode is set"));
  EXPECT_THAT(r.err, HasSubstr("(flag --prefill-hardware)"));
  // Llama-3.1-70B in bf16 (141 GB of weights) on one 80 GB H100.
  r = RunCliBinary(
      InProcess({"simulate", "--model", "llama-3.1-70b", "--prompt", "1024",
                 "--gen", "32", "--rate", "1", "--prefill-hardware",
                 "nvidia-h100-sxm-80gb", "--prefill-tensor-parallel", "8",
                 "--decode-hardware", "nvidia-h100-sxm-80gb"}));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("decode.tensor_parallel: must let one decode "
                               "replica hold the model"));
  EXPECT_THAT(r.err, HasSubstr("(flag --decode-tensor-parallel)"));
}

}  // namespace
}  // namespace ridgeline::testing
