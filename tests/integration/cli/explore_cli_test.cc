// `ridgeline explore` and `ridgeline merge` as real binaries: shards merged
// are byte-identical to one process (csv and json, front only and --all);
// the CSV columns are the axes and objectives as given, then feasible,
// fits, pareto; --server prints what in-process prints.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server_process.h"

namespace ridgeline::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string WriteTemp(const std::string& text) {
  char path[] = "/tmp/ridgeline-explore-shard-XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);
  return path;
}

// The issue's example space, smaller (4 x 3 x 2 x 3 x 3 = 216 points),
// with a deployment axis too.
std::vector<std::string> Space() {
  return {"explore", "--plugin-dir", RIDGELINE_TEST_PLUGIN_DIR,
          "--model", "llama-3-8b", "--hardware", "nvidia-h100-sxm-80gb",
          "--batch", "1", "--prompt", "1024", "--gen", "256",
          "--vary", "bandwidth_gbs=500:8000:4", "--vary", "peak_tflops=100:2000:3",
          "--vary", "capacity_gb=24,96", "--vary", "tdp_w=300,700,1000",
          "--vary", "batch=1,4,16",
          "--objective", "decode_tok_s:max", "--objective", "j_per_token:min",
          "--objective", "usd_per_mtoken:min", "--objective", "gco2_per_mtoken:min",
          "--constraint", "tpot_ms<=50"};
}

std::vector<std::string> With(std::vector<std::string> a,
                              const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(ExploreCliTest, CsvColumnsAreAxesObjectivesThenFlags) {
  const CliRun r = RunCliBinary(With(Space(), {"--format", "csv"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string header = r.out.substr(0, r.out.find('\n'));
  EXPECT_EQ(header,
            "bandwidth_gbs,peak_tflops,capacity_gb,tdp_w,batch,"
            "decode_tok_s:max,j_per_token:min,usd_per_mtoken:min,"
            "gco2_per_mtoken:min,feasible,fits,spilled,pareto,ties");
  // Without --all only front points: feasible, fits, on the device (the
  // 16.1 GB of weights fit 24 GiB), pareto.
  std::istringstream lines(r.out);
  std::string line;
  std::getline(lines, line);
  int rows = 0;
  while (std::getline(lines, line)) {
    ++rows;
    // ...then ties: the front points sharing the row's objective vector
    // (capacity_gb changes no objective here, so front rows come in pairs).
    EXPECT_TRUE(line.ends_with(",1,1,0,1,2")) << line;
  }
  EXPECT_GT(rows, 0);
  // stderr is no terminal here: no progress bar.
  EXPECT_THAT(r.err, Not(HasSubstr("[#")));
}

TEST(ExploreCliTest, AllRowsSayHowFarTheConstraintsAreMissed) {
  // gbs_per_mm2 <= 8: 4000 GB/s on 400 mm2 is 10 GB/s per mm2, missed by
  // (10 - 8) / 8 = 0.25; on 600 mm2 it is 6.67: feasible, violation 0.
  const CliRun r = RunCliBinary(
      {"explore", "--plugin-dir", RIDGELINE_TEST_PLUGIN_DIR, "--model",
       "llama-3-8b", "--hardware", "nvidia-h100-sxm-80gb", "--vary",
       "bandwidth_gbs=4000", "--vary", "die_area_mm2=400,600", "--objective",
       "decode_tok_s:max", "--objective", "tpot_ms:min", "--constraint",
       "gbs_per_mm2<=8", "--all",
       "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string header, a, b;
  std::getline(lines, header);
  std::getline(lines, a);
  std::getline(lines, b);
  EXPECT_EQ(header,
            "bandwidth_gbs,die_area_mm2,decode_tok_s:max,tpot_ms:min,feasible,"
            "fits,spilled,pareto,violation,ties");
  // Off the front the ties cell is empty; the one front point ties nothing.
  EXPECT_TRUE(a.starts_with("4000,400,")) << a;
  EXPECT_TRUE(a.ends_with(",0,1,0,0,0.25,")) << a;
  EXPECT_TRUE(b.starts_with("4000,600,")) << b;
  EXPECT_TRUE(b.ends_with(",1,1,0,1,0,1")) << b;
}

// Issue 20, item 5: "fits" alone hid weights read over PCIe.
TEST(ExploreCliTest, SpilledColumnSaysWhatSitsOffTheDevice) {
  // Llama-3-70B bf16: 70.6e9 x 2 B = 141 GB. One H100 (80 GiB = 85.9 GB)
  // holds 85.9 GB and puts 55 GB in host DRAM: fits, spilled. Two hold
  // 70.6 GB each: on the device.
  const CliRun r = RunCliBinary(
      {"explore", "--plugin-dir", RIDGELINE_TEST_PLUGIN_DIR, "--model",
       "llama-3-70b", "--hardware", "nvidia-h100-sxm-80gb", "--vary",
       "tensor_parallel=1,2", "--objective", "decode_tok_s:max", "--objective",
       "price_usd:min", "--vary", "price_usd=25000", "--all", "--format",
       "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string header, tp1, tp2;
  std::getline(lines, header);
  std::getline(lines, tp1);
  std::getline(lines, tp2);
  EXPECT_EQ(header,
            "tensor_parallel,price_usd,decode_tok_s:max,price_usd:min,"
            "feasible,fits,spilled,pareto,violation,ties");
  // feasible, fits, spilled (pareto, violation follow).
  EXPECT_THAT(tp1, ::testing::StartsWith("1,25000,"));
  EXPECT_THAT(tp1, HasSubstr(",1,1,1,"));
  EXPECT_THAT(tp2, ::testing::StartsWith("2,25000,"));
  EXPECT_THAT(tp2, HasSubstr(",1,1,0,"));
  // The table and JSON say it too.
  const CliRun t = RunCliBinary(
      {"explore", "--plugin-dir", RIDGELINE_TEST_PLUGIN_DIR, "--model",
       "llama-3-70b", "--hardware", "nvidia-h100-sxm-80gb", "--vary",
       "tensor_parallel=1", "--objective", "decode_tok_s:max", "--objective",
       "tpot_ms:min", "--format", "json"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_THAT(t.out, HasSubstr("\"spilled\":true"));
}

// Issue 20, item 10: 500:8000:4 printed 1259.9210498948732.
TEST(ExploreCliTest, LogSpacedAxisValuesPrintAsGiven) {
  // 500 x 16^(1/3) = 1259.92, 500 x 16^(2/3) = 3174.80: integers given,
  // integers printed; 100 x 20^(1/2) = 447.21 -> 447.
  const CliRun r = RunCliBinary(With(Space(), {"--format", "csv", "--all"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> bandwidths, peaks;
  std::istringstream lines(r.out);
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line)) {
    std::stringstream cells(line);
    std::string bw, peak;
    std::getline(cells, bw, ',');
    std::getline(cells, peak, ',');
    bandwidths.insert(bw);
    peaks.insert(peak);
  }
  EXPECT_EQ(bandwidths, (std::set<std::string>{"500", "1260", "3175", "8000"}));
  EXPECT_EQ(peaks, (std::set<std::string>{"100", "447", "2000"}));
}

TEST(ExploreCliTest, ShardsMergeIntoExactlyTheSingleProcessOutput) {
  for (const std::string format : {"csv", "json"}) {
    for (const bool all : {false, true}) {
      std::vector<std::string> extra = {"--format", format};
      if (all) extra.push_back("--all");
      const CliRun one = RunCliBinary(With(Space(), extra));
      ASSERT_EQ(one.exit_code, 0) << one.err;
      std::vector<std::string> merge = {"merge"};
      if (all) merge.push_back("--all");
      std::vector<std::string> files;
      for (int s = 0; s < 3; ++s) {
        std::vector<std::string> args = With(Space(), extra);
        args.push_back("--shard");
        args.push_back(std::to_string(s) + "/3");
        const CliRun part = RunCliBinary(args);
        ASSERT_EQ(part.exit_code, 0) << part.err;
        files.push_back(WriteTemp(part.out));
      }
      // Shard files in any order.
      merge.push_back(files[2]);
      merge.push_back(files[0]);
      merge.push_back(files[1]);
      const CliRun merged = RunCliBinary(merge);
      ASSERT_EQ(merged.exit_code, 0) << merged.err;
      EXPECT_EQ(merged.out, one.out) << format << (all ? " --all" : "");
      for (const auto& f : files) unlink(f.c_str());
    }
  }
}

// Issue 26, item 1: a tied front merged from shards is the one a single
// process prints. Neither axis moves decode_tok_s or ttft_ms, so all 30
// points (6 tdp_w x 5 price_usd) are one tie group: one process lists its
// 16 lowest indices with ties = 30 (14 unlisted); each of 3 shards lists its
// 10 points with ties = 10, and merge must add the counts to 30 and keep
// the 16 lowest, not print 30 rows of ties 10.
TEST(ExploreCliTest, TiedFrontShardsMergeIntoTheSingleProcessTieGroup) {
  const std::vector<std::string> space = {"explore",
                                          "--plugin-dir",
                                          RIDGELINE_TEST_PLUGIN_DIR,
                                          "--model",
                                          "llama-3-8b",
                                          "--hardware",
                                          "nvidia-h100-sxm-80gb",
                                          "--vary",
                                          "tdp_w=100:1000:6",
                                          "--vary",
                                          "price_usd=1000:50000:5",
                                          "--objective",
                                          "decode_tok_s:max",
                                          "--objective",
                                          "ttft_ms:min"};
  for (const std::string format : {"csv", "json"}) {
    for (const bool all : {false, true}) {
      std::vector<std::string> extra = {"--format", format};
      if (all) extra.push_back("--all");
      const CliRun one = RunCliBinary(With(space, extra));
      ASSERT_EQ(one.exit_code, 0) << one.err;
      if (format == "csv") {
        // Header, then 16 listed rows (front only) or all 30 (--all), each
        // front row with ties 30.
        const size_t lines = std::count(one.out.begin(), one.out.end(), '\n');
        EXPECT_EQ(lines, all ? 31u : 17u) << one.out;
        EXPECT_THAT(one.out, HasSubstr(all ? ",1,0,30\n" : ",1,30\n"));
      } else {
        EXPECT_THAT(one.out, HasSubstr("\"ties\":\"30\""));
        if (!all) {
          EXPECT_THAT(one.out, HasSubstr("\"frontUnlisted\":\"14\""));
        }
      }
      std::vector<std::string> merge = {"merge"};
      if (all) merge.push_back("--all");
      std::vector<std::string> files;
      for (int s = 0; s < 3; ++s) {
        std::vector<std::string> args = With(space, extra);
        args.push_back("--shard");
        args.push_back(std::to_string(s) + "/3");
        const CliRun part = RunCliBinary(args);
        ASSERT_EQ(part.exit_code, 0) << part.err;
        files.push_back(WriteTemp(part.out));
        merge.push_back(files.back());
      }
      const CliRun merged = RunCliBinary(merge);
      ASSERT_EQ(merged.exit_code, 0) << merged.err;
      EXPECT_EQ(merged.out, one.out) << format << (all ? " --all" : "");
      for (const auto& f : files) unlink(f.c_str());
    }
  }
}

// The last line of a table output: its summary.
std::string SummaryLine(const std::string& table) {
  const size_t end = table.find_last_not_of('\n');
  return table.substr(table.rfind('\n', end) + 1, end - table.rfind('\n', end));
}

// Issue 20, item 7: merge took a missing or duplicated shard with exit 0,
// and merging csv shards printed "0 of 0 points".
TEST(ExploreCliTest, MergeChecksTheShardSetAndCountsLikeOneProcess) {
  for (const std::string format : {"csv", "json"}) {
    std::vector<std::string> files;
    for (int s = 0; s < 3; ++s) {
      const CliRun part = RunCliBinary(With(
          Space(), {"--format", format, "--shard", std::to_string(s) + "/3"}));
      ASSERT_EQ(part.exit_code, 0) << part.err;
      if (format == "csv") {
        // Which part of which request: the shard line, then the header.
        EXPECT_THAT(part.out,
                    ::testing::StartsWith("# ridgeline explore shard=" +
                                          std::to_string(s) + "/3 request="));
      }
      files.push_back(WriteTemp(part.out));
    }
    // The whole set: the single process's counts (216 points, its feasible
    // count), whatever the inputs' format.
    const CliRun one = RunCliBinary(Space());
    ASSERT_EQ(one.exit_code, 0) << one.err;
    const CliRun merged = RunCliBinary(
        {"merge", "--format", "table", files[0], files[1], files[2]});
    ASSERT_EQ(merged.exit_code, 0) << merged.err;
    EXPECT_EQ(SummaryLine(merged.out), SummaryLine(one.out)) << format;
    EXPECT_THAT(
        SummaryLine(one.out),
        ::testing::StartsWith("216 of 216 points evaluated (216 in all), "));

    CliRun r = RunCliBinary({"merge", files[0], files[2]});
    EXPECT_EQ(r.exit_code, 1) << format;
    EXPECT_THAT(r.err, HasSubstr("missing shard 1/3 (2 of 3 given)"));
    r = RunCliBinary({"merge", files[0], files[1], files[1], files[2]});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_THAT(r.err, HasSubstr("shard 1/3 given twice: " + files[1] +
                                 " and " + files[1]));
    // A shard of another request (--gen 128 instead of 256).
    std::vector<std::string> other =
        With(Space(), {"--format", format, "--shard", "2/3"});
    *std::find(other.begin(), other.end(), "256") = "128";
    const CliRun o = RunCliBinary(other);
    ASSERT_EQ(o.exit_code, 0) << o.err;
    const std::string other_file = WriteTemp(o.out);
    r = RunCliBinary({"merge", files[0], files[1], other_file});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_THAT(r.err, HasSubstr(other_file +
                                 " is a shard of another request "
                                 "than " +
                                 files[0]));
    // Shards of another split.
    const CliRun half =
        RunCliBinary(With(Space(), {"--format", format, "--shard", "1/2"}));
    const std::string half_file = WriteTemp(half.out);
    r = RunCliBinary({"merge", files[0], half_file});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_THAT(r.err, HasSubstr(half_file + " is shard 1/2 of 216 points"));
    for (const auto& f : files) unlink(f.c_str());
    unlink(other_file.c_str());
    unlink(half_file.c_str());
  }
  // An output that says no shard (a plain csv) is refused by name.
  const CliRun plain = RunCliBinary(With(Space(), {"--format", "csv"}));
  const std::string plain_file = WriteTemp(plain.out);
  const CliRun r = RunCliBinary({"merge", plain_file});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(plain_file + ": no \"# ridgeline explore "
                                            "shard=...\" first line"));
  unlink(plain_file.c_str());
}

// Issue 20, item 7: "885 of 0 points evaluated, 0 feasible, front of 19".
TEST(ExploreCliTest, Nsga2SummaryCountsWhatItSearched) {
  const CliRun r = RunCliBinary(
      With(Space(), {"--nsga2-generations", "3", "--nsga2-population", "16"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string line = SummaryLine(r.out);
  unsigned evaluated = 0, feasible = 0, front = 0;
  ASSERT_EQ(std::sscanf(line.c_str(),
                        "%u of 216 points evaluated by NSGA-II (3 "
                        "generations), %u feasible, front of %u",
                        &evaluated, &feasible, &front),
            3)
      << line;
  // 16 + 3 x 16 draws at most, some repeated; the front is of feasible
  // points, at least one of them (the grid has feasible points).
  EXPECT_LE(evaluated, 64u);
  EXPECT_GE(evaluated, 16u);
  EXPECT_LE(feasible, evaluated);
  EXPECT_GE(feasible, front);
  EXPECT_GE(front, 1u);
}

TEST(ExploreCliTest, ServerPrintsWhatInProcessPrints) {
  ServerProcess server;
  ASSERT_TRUE(server.ok()) << server.error();
  ASSERT_TRUE(WaitServing(server.Channel(), std::chrono::seconds(30)));
  const CliRun local = RunCliBinary(With(Space(), {"--format", "csv"}));
  std::vector<std::string> remote = Space();
  remote.erase(remote.begin() + 1, remote.begin() + 3);  // --plugin-dir DIR
  remote = With(remote, {"--format", "csv", "--server", server.address()});
  const CliRun r = RunCliBinary(remote);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, local.out);
}

TEST(ExploreCliTest, ErrorsNameTheFlag) {
  CliRun r = RunCliBinary(With(Space(), {"--vary", "warp=1"}));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("vary[5]: unknown axis \"warp\""));
  EXPECT_THAT(r.err, HasSubstr("(flag --vary)"));
  r = RunCliBinary(With(Space(), {"--shard", "3/3"}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--shard: want i/n"));
  r = RunCliBinary({"merge"});
  EXPECT_EQ(r.exit_code, 2);
}

// --speculative sets the base scenario's draft, which the speculative axes
// vary; without it they are refused naming the axis.
TEST(ExploreCliTest, SpeculativeAxesVaryTheDraftOfSpeculative) {
  const std::vector<std::string> base = {"explore",
                                         "--plugin-dir",
                                         RIDGELINE_TEST_PLUGIN_DIR,
                                         "--model",
                                         "llama-3-8b",
                                         "--hardware",
                                         "nvidia-h100-sxm-80gb",
                                         "--vary",
                                         "speculative_tokens=1,4",
                                         "--vary",
                                         "acceptance_rate=0,0.9",
                                         "--objective",
                                         "decode_tok_s:max",
                                         "--objective",
                                         "tpot_ms:min",
                                         "--all",
                                         "--format",
                                         "csv"};
  CliRun r = RunCliBinary(base);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("axis speculative_tokens: the base scenario "
                               "has no speculative decoding"));
  r = RunCliBinary(
      With(base, {"--speculative", "eagle:2", "--acceptance", "0.7"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("speculative_tokens,acceptance_rate,"
                               "decode_tok_s:max,tpot_ms:min,feasible"));
  EXPECT_THAT(r.out, HasSubstr("\n4,0.9,"));
  r = RunCliBinary(With(base, {"--acceptance", "0.7"}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--acceptance needs --speculative"));
}

// The point (bandwidth 2000, peak 500) of a 2 x 2 grid is index 2.
std::vector<std::string> SensitivityAt2() {
  return {"explore", "--plugin-dir", RIDGELINE_TEST_PLUGIN_DIR,
          "--model", "llama-3-8b", "--hardware", "nvidia-h100-sxm-80gb",
          "--batch", "1", "--prompt", "1024", "--gen", "256",
          "--vary", "bandwidth_gbs=1000,2000", "--vary", "peak_tflops=500,1000",
          "--objective", "decode_tok_s:max", "--objective", "tpot_ms:min",
          "--sensitivity", "2"};
}

TEST(ExploreCliTest, SensitivityCsvOneRowPerAxisAndMetric) {
  // Memory-bound batch-1 decode (~1 FLOP/byte against a ridge of 250):
  // decode_tok_s has elasticity 1 to bandwidth_gbs and 0 to peak_tflops.
  const CliRun r = RunCliBinary(With(SensitivityAt2(), {"--format", "csv"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string header, row;
  std::getline(lines, header);
  EXPECT_EQ(header,
            "axis,value,step,metric,at_point,elasticity,change_plus_10pct,"
            "limited_by");
  std::vector<std::vector<std::string>> rows;
  while (std::getline(lines, row)) {
    std::vector<std::string> cells;
    std::stringstream cs(row);
    std::string c;
    for (int k = 0; k < 6 && std::getline(cs, c, ','); ++k) cells.push_back(c);
    rows.push_back(cells);
  }
  ASSERT_EQ(rows.size(), 4u);  // 2 axes x 2 objectives
  EXPECT_EQ(rows[0][0], "bandwidth_gbs");
  EXPECT_EQ(rows[0][1], "2000");
  EXPECT_EQ(rows[0][3], "decode_tok_s");
  EXPECT_NEAR(std::stod(rows[0][5]), 1, 0.02);
  EXPECT_EQ(rows[2][0], "peak_tflops");
  EXPECT_NEAR(std::stod(rows[2][5]), 0, 0.02);
  // Table: the point, the rows and the summary lines.
  const CliRun t = RunCliBinary(SensitivityAt2());
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_THAT(t.out, HasSubstr("point 2: bandwidth_gbs=2000 peak_tflops=500"));
  EXPECT_THAT(t.out, HasSubstr("+10% bandwidth_gbs: +"));
}

TEST(ExploreCliTest, SensitivityOverTheServerPrintsWhatInProcessPrints) {
  ServerProcess server;
  ASSERT_TRUE(server.ok()) << server.error();
  ASSERT_TRUE(WaitServing(server.Channel(), std::chrono::seconds(30)));
  const CliRun local = RunCliBinary(With(SensitivityAt2(), {"--format", "csv"}));
  std::vector<std::string> remote = SensitivityAt2();
  remote.erase(remote.begin() + 1, remote.begin() + 3);  // --plugin-dir DIR
  remote = With(remote, {"--format", "csv", "--server", server.address()});
  const CliRun r = RunCliBinary(remote);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, local.out);
  // A point outside the grid names the flag.
  std::vector<std::string> bad = SensitivityAt2();
  bad.back() = "4";
  const CliRun e = RunCliBinary(bad);
  EXPECT_EQ(e.exit_code, 1);
  EXPECT_THAT(e.err, HasSubstr("index: want 0..3"));
  EXPECT_THAT(e.err, HasSubstr("(flag --sensitivity)"));
}

}  // namespace
}  // namespace ridgeline::testing
