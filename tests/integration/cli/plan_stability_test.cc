// Issue 20, item 1: a plan must not answer a deployment at saturation.
// `ridgeline plan` is run as a real binary; every deployment it marks as
// meeting the SLO is then simulated by `ridgeline simulate` for 4,000 and
// 8,000 requests at its share of the rate, and must meet the SLO there, with
// a stable queue.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli_process.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace ridgeline::testing {
namespace {

std::vector<std::string> InProcess(std::vector<std::string> a) {
  a.push_back(std::string("--plugin-dir=") + RIDGELINE_TEST_PLUGIN_DIR);
  a.push_back(std::string("--profile-dir=") + RIDGELINE_TEST_PROFILE_DIR);
  return a;
}

struct Question {
  std::string model, hardware, tensor_parallel, formats, prompt, gen;
  double rate, ttft_ms, tpot_ms;
};

// Plans `q`, then simulates each deployment that meets the SLO; returns the
// plan's deployments.
nlohmann::json PlanThenSimulate(const Question& q) {
  // Aggregated deployments: `simulate` runs one replica of each.
  CliRun plan = RunCliBinary(InProcess({"plan",
                                        "--disaggregated",
                                        "off",
                                        "--model",
                                        q.model,
                                        "--hardware",
                                        q.hardware,
                                        "--tensor-parallel",
                                        q.tensor_parallel,
                                        "--formats",
                                        q.formats,
                                        "--prompt",
                                        q.prompt,
                                        "--gen",
                                        q.gen,
                                        "--rate",
                                        absl::StrCat(q.rate),
                                        "--ttft-p90-ms",
                                        absl::StrCat(q.ttft_ms),
                                        "--tpot-p90-ms",
                                        absl::StrCat(q.tpot_ms),
                                        "--format",
                                        "json"}));
  EXPECT_EQ(plan.exit_code, 0) << plan.err;
  const nlohmann::json r = nlohmann::json::parse(plan.out);
  int met = 0;
  for (const nlohmann::json& d : r["deployments"]) {
    if (!d["meetsSlo"].get<bool>()) continue;
    ++met;
    EXPECT_TRUE(d["stable"].get<bool>());
    const int64_t replicas = std::stoll(d["replicas"].get<std::string>());
    const double share = q.rate / static_cast<double>(replicas);
    // The margin: no replica loaded past 90 % of its offline maximum
    // (max_rate_per_replica <= 0.9 x that maximum, served share <= it).
    EXPECT_LE(share, d["maxRatePerReplica"].get<double>() * (1 + 1e-9));
    for (const char* requests : {"4000", "8000"}) {
      CliRun sim = RunCliBinary(
          InProcess({"simulate", "--model", q.model, "--hardware",
                     d["hardwareId"].get<std::string>(), "--tensor-parallel",
                     d["tensorParallel"].get<std::string>(), "--formats",
                     q.formats, "--prompt", q.prompt, "--gen", q.gen, "--rate",
                     absl::StrFormat("%.17g", share), "--requests", requests,
                     "--format", "json"}));
      EXPECT_EQ(sim.exit_code, 0) << sim.err;
      if (sim.exit_code != 0) continue;
      const nlohmann::json s = nlohmann::json::parse(sim.out);
      SCOPED_TRACE(absl::StrCat(d["hardwareId"].get<std::string>(), " TP ",
                                d["tensorParallel"].get<std::string>(), " x ",
                                replicas, " at ", share, " req/s, ", requests,
                                " requests"));
      EXPECT_TRUE(s["stable"].get<bool>()) << sim.out;
      EXPECT_LE(s["ttft"]["p90Seconds"].get<double>(), q.ttft_ms / 1e3);
      EXPECT_LE(s["tpot"]["p90Seconds"].get<double>(), q.tpot_ms / 1e3);
    }
  }
  EXPECT_GT(met, 0) << plan.out;
  return r["deployments"];
}

TEST(PlanStability, SaturatedReplicaIsNotAnAnswer) {
  // The question: one TP-8 replica's offline maximum is 20.1
  // req/s, so one replica at 20 req/s runs at 99 % and its queue grows
  // (p90 TTFT 2.3 s over 1,000 requests, 3.9 s over 4,000). With the
  // margin one replica serves at most 0.9 x 20.1 = 18.1 req/s: two are
  // needed, 16 GPUs.
  const nlohmann::json d =
      PlanThenSimulate({"llama-3.1-70b", "nvidia-h100-sxm-80gb", "8", "fp8",
                        "2048", "512", 20, 1000, 50});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_TRUE(d[0]["meetsSlo"].get<bool>());
  EXPECT_EQ(d[0]["replicas"].get<std::string>(), "2");
  EXPECT_EQ(d[0]["devices"].get<std::string>(), "16");
  EXPECT_LE(d[0]["maxRatePerReplica"].get<double>(), 0.9 * 20.2);
  // 16 turnovers of the 256-sequence batch per run, not the 600 asked.
  EXPECT_EQ(d[0]["simulatedRequests"].get<std::string>(), "4096");
}

TEST(PlanStability, SmallerModelOnTwoParts) {
  // A cheaper question over two parts and two TP degrees.
  PlanThenSimulate({"llama-3.1-8b", "nvidia-h100-sxm-80gb,nvidia-a10", "1,2",
                    "fp8", "1024", "256", 30, 1000, 50});
}

// Issue 23: `plan --trace`. A Mooncake-format trace of 4,000 requests at
// about 120 req/s (Poisson, seed 1), each prompt 3,000 tokens over six
// 512-token blocks: four of one of 16 system prompts, then two of its
// own, 128 tokens out. Planned at the trace's own rate with its reuse, the
// cheapest deployment must hold when `simulate` replays the trace itself
// over that many replicas behind prefix-affinity routing; without prefix
// caching the same trace needs more replicas.
std::string WriteSharedPrefixTrace() {
  std::string path = ::testing::TempDir() + "ridgeline-plan-trace.jsonl";
  std::ofstream f(path);
  std::mt19937_64 rng(1);
  std::exponential_distribution<double> gap(120.0);
  double t = 0;
  int64_t own = 1000;
  for (int i = 0; i < 4000; ++i) {
    const int prompt = i % 16;
    f << "{\"timestamp\": " << std::llround(t * 1000)
      << ", \"input_length\": 3000, \"output_length\": 128, "
         "\"hash_ids\": ["
      << prompt * 4 << ", " << prompt * 4 + 1 << ", " << prompt * 4 + 2 << ", "
      << prompt * 4 + 3 << ", " << own << ", " << own + 1 << "]}\n";
    own += 2;
    t += gap(rng);
  }
  return path;
}

TEST(PlanStability, ATracePlanHoldsOnTheTrace) {
  const std::string trace = WriteSharedPrefixTrace();
  auto plan = [&](const char* caching) {
    CliRun r = RunCliBinary(InProcess({"plan",
                                       "--disaggregated",
                                       "off",
                                       "--model",
                                       "llama-3.1-8b",
                                       "--hardware",
                                       "nvidia-h100-sxm-80gb",
                                       "--tensor-parallel",
                                       "1",
                                       "--formats",
                                       "fp8",
                                       "--trace",
                                       trace,
                                       "--trace-format",
                                       "mooncake",
                                       "--ttft-p90-ms",
                                       "200",
                                       "--tpot-p90-ms",
                                       "20",
                                       "--prefix-caching",
                                       caching,
                                       "--format",
                                       "json"}));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const nlohmann::json on = plan("on");
  const nlohmann::json off = plan("off");
  ASSERT_EQ(on["deployments"].size(), 1u);
  const nlohmann::json& d = on["deployments"][0];
  ASSERT_TRUE(d["meetsSlo"].get<bool>()) << on.dump();
  // Each run replays the whole trace (4,000 requests, its length).
  EXPECT_EQ(d["simulatedRequests"].get<std::string>(), "4000");
  bool noted = false;
  for (const nlohmann::json& n : on["notes"]) {
    noted |= n.get<std::string>().find("the trace's own mean rate") !=
             std::string::npos;
  }
  EXPECT_TRUE(noted) << on["notes"].dump();
  const int64_t replicas = std::stoll(d["replicas"].get<std::string>());
  const int64_t without =
      std::stoll(off["deployments"][0]["replicas"].get<std::string>());
  EXPECT_GT(without, replicas);
  EXPECT_GT(d["maxRatePerReplica"].get<double>(),
            off["deployments"][0]["maxRatePerReplica"].get<double>());
  CliRun sim = RunCliBinary(InProcess(
      {"simulate", "--model", "llama-3.1-8b", "--hardware",
       "nvidia-h100-sxm-80gb", "--formats", "fp8", "--trace", trace,
       "--trace-format", "mooncake", "--replicas", absl::StrCat(replicas),
       "--router", "prefix-affinity", "--format", "json"}));
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const nlohmann::json s = nlohmann::json::parse(sim.out);
  EXPECT_TRUE(s["stable"].get<bool>()) << sim.out;
  EXPECT_LE(s["ttft"]["p90Seconds"].get<double>(), 0.2);
  EXPECT_LE(s["tpot"]["p90Seconds"].get<double>(), 0.02);
  std::remove(trace.c_str());
}

TEST(PlanStability, SimulateSaysWhenTheQueueGrows) {
  // The saturated replica itself: 20 req/s on one TP-8 replica.
  CliRun sim = RunCliBinary(
      InProcess({"simulate", "--model", "llama-3.1-70b", "--hardware",
                 "nvidia-h100-sxm-80gb", "--tensor-parallel", "8", "--formats",
                 "fp8", "--prompt", "2048", "--gen", "512", "--rate", "21,14",
                 "--requests", "4000"}));
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_NE(sim.err.find("warning: rate 21: unstable: the queue grows"),
            std::string::npos)
      << sim.err;
  EXPECT_EQ(sim.err.find("rate 14: unstable"), std::string::npos) << sim.err;
  CliRun csv = RunCliBinary(
      InProcess({"simulate", "--model", "llama-3.1-70b", "--hardware",
                 "nvidia-h100-sxm-80gb", "--tensor-parallel", "8", "--formats",
                 "fp8", "--prompt", "2048", "--gen", "512", "--rate", "21,14",
                 "--requests", "4000", "--format", "csv"}));
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.out.find(",stable,backlog_first_half,backlog_second_half"),
            std::string::npos);
}

}  // namespace
}  // namespace ridgeline::testing
