// The deployment emitter (serving/deploy_emit.h): the engine flags a plan
// turns into, every flag checked against the engines' own argument lists
// (tests/fixtures/engine-flags/, with the source commits).
#include "ridgeline/serving/deploy_emit.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ridgeline::serving {
namespace {

using ::testing::Contains;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Not;

std::set<std::string> FlagList(const std::string& engine) {
  std::ifstream in(std::string(RIDGELINE_ENGINE_FLAGS_DIR) + "/" + engine +
                   ".txt");
  std::set<std::string> flags;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("--", 0) == 0) flags.insert(line);
  }
  return flags;
}

// Every "--flag" token of a text (a command, a manifest), "--flag=x" cut at
// the '='.
std::vector<std::string> FlagsIn(const std::string& text) {
  std::vector<std::string> out;
  for (size_t i = text.find("--"); i != std::string::npos;
       i = text.find("--", i + 2)) {
    if (i > 0 && text[i - 1] != ' ' && text[i - 1] != '"' &&
        text[i - 1] != '\'' && text[i - 1] != '[') {
      continue;  // inside a word
    }
    size_t end = i + 2;
    if (end >= text.size() ||
        !std::isalnum(static_cast<unsigned char>(text[end]))) {
      continue;  // "---" (a YAML document separator), "-- "
    }
    while (end < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[end])) ||
            text[end] == '-' || text[end] == '_')) {
      ++end;
    }
    if (end > i + 2) out.push_back(text.substr(i, end - i));
  }
  return out;
}

DeployPool Pool() {
  DeployPool p;
  p.hardware_id = "nvidia-h100-sxm-80gb";
  p.device_resource = "nvidia.com/gpu";
  p.replicas = 3;
  p.tensor_parallel = 2;
  return p;
}

DeployPlan Plan(std::vector<DeployPool> pools) {
  DeployPlan plan;
  plan.model = "meta-llama/Meta-Llama-3-8B";
  plan.pools = std::move(pools);
  return plan;
}

// Every shape the emitter knows: aggregated TP, fp8, PP, EP, multi-node
// (TP and EP), a hand-built prefill + decode pair.
std::vector<DeployPlan> AllShapes() {
  std::vector<DeployPlan> plans;
  plans.push_back(Plan({Pool()}));
  DeployPool fp8 = Pool();
  fp8.weights = fp8.activations = fp8.kv_cache = "fp8";
  plans.push_back(Plan({fp8}));
  DeployPool pp = Pool();
  pp.pipeline_parallel = 2;
  plans.push_back(Plan({pp}));
  DeployPool ep = Pool();
  ep.tensor_parallel = 1;
  ep.expert_parallel = 8;
  plans.push_back(Plan({ep}));
  DeployPool big = Pool();
  big.tensor_parallel = 8;
  big.pipeline_parallel = 2;
  big.devices_per_node = 8;
  plans.push_back(Plan({big}));
  DeployPool big_ep = ep;
  big_ep.expert_parallel = 16;
  big_ep.devices_per_node = 8;
  plans.push_back(Plan({big_ep}));
  DeployPool prefill = Pool(), decode = fp8;
  prefill.role = "prefill";
  decode.role = "decode";
  decode.replicas = 2;
  plans.push_back(Plan({prefill, decode}));
  for (const char* method : {"draft", "eagle", "mtp"}) {
    DeployPlan spec = Plan({Pool()});
    spec.speculative = DeploySpeculation{method, 3, "org/draft"};
    plans.push_back(spec);
  }
  DeployPlan split = Plan({prefill, decode});
  split.speculative = DeploySpeculation{"mtp", 1, ""};
  plans.push_back(split);
  // Last: PrefixCachingOffIsWrittenOnlyWhenOff takes it.
  DeployPool no_prefix_cache = Pool();
  no_prefix_cache.prefix_caching = false;
  plans.push_back(Plan({no_prefix_cache}));
  return plans;
}

// Golden: one replica of TP 2, bf16, the plan's scheduler defaults (vLLM's
// own: memory 0.9, 256 sequences, 8192 tokens a step, 16-token blocks).
TEST(DeployEmitTest, VllmAggregatedArgs) {
  auto args = EngineArgs(ServingEngine::kVllm, Plan({Pool()}), 0);
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_THAT(*args,
              ElementsAreArray(std::vector<std::string>{
                  "meta-llama/Meta-Llama-3-8B", "--host", "0.0.0.0", "--port",
                  "8000", "--tensor-parallel-size", "2", "--dtype", "bfloat16",
                  "--gpu-memory-utilization", "0.9", "--max-num-seqs", "256",
                  "--max-num-batched-tokens", "8192", "--block-size", "16"}));
}

TEST(DeployEmitTest, SglangAggregatedArgs) {
  auto args = EngineArgs(ServingEngine::kSglang, Plan({Pool()}), 0);
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_THAT(
      *args,
      ElementsAreArray(std::vector<std::string>{
          "--model-path", "meta-llama/Meta-Llama-3-8B", "--host", "0.0.0.0",
          "--port", "30000", "--tp-size", "2", "--dtype", "bfloat16",
          "--mem-fraction-static", "0.9", "--max-running-requests", "256",
          "--chunked-prefill-size", "8192", "--page-size", "16"}));
}

// Speculative decoding: vLLM's --speculative-config JSON (SpeculativeConfig's
// method, model, num_speculative_tokens), SGLang's algorithm with a top-1
// chain of k steps and k + 1 draft tokens; only on replicas that decode.
TEST(DeployEmitTest, SpeculationOnTheDecodingReplicas) {
  DeployPlan plan = Plan({Pool()});
  plan.speculative = DeploySpeculation{"draft", 4, "meta-llama/Llama-3.2-1B"};
  auto v = EngineArgs(ServingEngine::kVllm, plan, 0);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_THAT(
      *v,
      Contains(
          R"({"method":"draft_model","model":"meta-llama/Llama-3.2-1B","num_speculative_tokens":4})"));
  auto s = EngineArgs(ServingEngine::kSglang, plan, 0);
  ASSERT_TRUE(s.ok()) << s.status();
  const std::vector<std::string> want = {
      "--speculative-algorithm",        "STANDALONE",
      "--speculative-draft-model-path", "meta-llama/Llama-3.2-1B",
      "--speculative-num-steps",        "4",
      "--speculative-eagle-topk",       "1",
      "--speculative-num-draft-tokens", "5"};
  EXPECT_TRUE(std::search(s->begin(), s->end(), want.begin(), want.end()) !=
              s->end());
  plan.speculative = DeploySpeculation{"eagle", 3, "org/eagle3-head"};
  v = EngineArgs(ServingEngine::kVllm, plan, 0);
  EXPECT_THAT(
      *v,
      Contains(
          R"({"method":"eagle3","model":"org/eagle3-head","num_speculative_tokens":3})"));
  s = EngineArgs(ServingEngine::kSglang, plan, 0);
  EXPECT_THAT(*s, Contains("EAGLE3"));
  plan.speculative = DeploySpeculation{"mtp", 1, ""};
  v = EngineArgs(ServingEngine::kVllm, plan, 0);
  EXPECT_THAT(*v, Contains(R"({"method":"mtp","num_speculative_tokens":1})"));
  s = EngineArgs(ServingEngine::kSglang, plan, 0);
  EXPECT_THAT(*s, Contains("NEXTN"));
  EXPECT_THAT(*s, Not(Contains("--speculative-draft-model-path")));
  // Disaggregated: the decode pool speculates, the prefill pool does not.
  DeployPool prefill = Pool(), decode = Pool();
  prefill.role = "prefill";
  decode.role = "decode";
  DeployPlan split = Plan({prefill, decode});
  split.speculative = DeploySpeculation{"mtp", 1, ""};
  EXPECT_THAT(*EngineArgs(ServingEngine::kVllm, split, 0),
              Not(Contains("--speculative-config")));
  EXPECT_THAT(*EngineArgs(ServingEngine::kVllm, split, 1),
              Contains("--speculative-config"));
  // Refused: a draft with no weights named, k outside 1..16, a method
  // neither engine runs.
  for (const auto& [bad, field] :
       {std::pair{DeploySpeculation{"eagle", 3, ""}, "speculative.draft_model"},
        std::pair{DeploySpeculation{"mtp", 17, ""}, "speculative.tokens"},
        std::pair{DeploySpeculation{"medusa", 2, "x"}, "speculative.method"}}) {
    plan.speculative = bad;
    auto r = EmitCommands(ServingEngine::kVllm, plan);
    ASSERT_FALSE(r.ok()) << field;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(field));
  }
}

// Both engines cache prefixes by default; a plan without prefix caching
// turns it off in each engine's spelling, and only then.
TEST(DeployEmitTest, PrefixCachingOffIsWrittenOnlyWhenOff) {
  const DeployPlan off = AllShapes().back();
  ASSERT_FALSE(off.pools[0].prefix_caching);
  auto vllm = EngineArgs(ServingEngine::kVllm, off, 0);
  ASSERT_TRUE(vllm.ok()) << vllm.status();
  EXPECT_THAT(*vllm, Contains("--no-enable-prefix-caching"));
  auto sglang = EngineArgs(ServingEngine::kSglang, off, 0);
  ASSERT_TRUE(sglang.ok()) << sglang.status();
  EXPECT_THAT(*sglang, Contains("--disable-radix-cache"));
  auto on = EngineArgs(ServingEngine::kSglang, Plan({Pool()}), 0);
  ASSERT_TRUE(on.ok());
  EXPECT_THAT(*on, Not(Contains("--disable-radix-cache")));
}

TEST(DeployEmitTest, Fp8AndExpertParallel) {
  const std::vector<DeployPlan> shapes = AllShapes();
  // fp8/fp8/fp8: W8A8 FP8 on a 16-bit model dtype, the KV cache in fp8.
  auto vllm = EmitCommands(ServingEngine::kVllm, shapes[1]);
  ASSERT_TRUE(vllm.ok()) << vllm.status();
  EXPECT_THAT(*vllm, HasSubstr("--quantization fp8"));
  EXPECT_THAT(*vllm, HasSubstr("--kv-cache-dtype fp8 "));
  auto sglang = EmitCommands(ServingEngine::kSglang, shapes[1]);
  ASSERT_TRUE(sglang.ok());
  EXPECT_THAT(*sglang, HasSubstr("--kv-cache-dtype fp8_e4m3"));
  // EP 8: attention data-parallel over 8 devices, experts spread.
  vllm = EmitCommands(ServingEngine::kVllm, shapes[3]);
  ASSERT_TRUE(vllm.ok());
  EXPECT_THAT(*vllm, HasSubstr("--data-parallel-size 8"));
  EXPECT_THAT(*vllm, HasSubstr("--enable-expert-parallel"));
  EXPECT_THAT(*vllm, Not(HasSubstr("--tensor-parallel-size")));
  sglang = EmitCommands(ServingEngine::kSglang, shapes[3]);
  ASSERT_TRUE(sglang.ok());
  for (const char* f :
       {"--tp-size 8", "--dp-size 8", "--enable-dp-attention", "--ep-size 8"}) {
    EXPECT_THAT(*sglang, HasSubstr(f));
  }
}

// 16 devices (TP 8 x PP 2) on 8-device nodes: 2 nodes a replica.
TEST(DeployEmitTest, MultiNodeReplica) {
  const DeployPlan plan = AllShapes()[4];
  EXPECT_EQ(ReplicaDevices(plan.pools[0]), 16);
  EXPECT_EQ(ReplicaNodes(plan.pools[0]), 2);
  auto vllm = EmitCommands(ServingEngine::kVllm, plan);
  ASSERT_TRUE(vllm.ok());
  EXPECT_THAT(*vllm, HasSubstr("ray start --head"));
  EXPECT_THAT(*vllm, HasSubstr("--distributed-executor-backend ray"));
  auto sglang = EmitCommands(ServingEngine::kSglang, plan);
  ASSERT_TRUE(sglang.ok());
  EXPECT_THAT(*sglang, HasSubstr("--nnodes 2"));
  EXPECT_THAT(*sglang, HasSubstr("--dist-init-addr \"$LEADER_ADDRESS:20000\""))
      << *sglang;
  auto k8s = EmitKubernetes(ServingEngine::kSglang, plan);
  ASSERT_TRUE(k8s.ok());
  EXPECT_THAT(*k8s, HasSubstr("kind: LeaderWorkerSet"));
  EXPECT_THAT(*k8s, HasSubstr("size: 2"));
  EXPECT_THAT(*k8s, HasSubstr("\"$(LWS_WORKER_INDEX)\""));
  EXPECT_THAT(*k8s, HasSubstr("nvidia.com/gpu: \"8\""));  // 16 / 2 nodes
}

TEST(DeployEmitTest, KubernetesAggregatedAndTwoPools) {
  auto k8s = EmitKubernetes(ServingEngine::kVllm, Plan({Pool()}));
  ASSERT_TRUE(k8s.ok()) << k8s.status();
  EXPECT_THAT(*k8s, HasSubstr("kind: Deployment"));
  EXPECT_THAT(*k8s, HasSubstr("replicas: 3"));
  EXPECT_THAT(*k8s, HasSubstr("nvidia.com/gpu: \"2\""));
  EXPECT_THAT(*k8s, HasSubstr("name: \"ridgeline-meta-llama-3-8b\""));
  auto two = EmitKubernetes(ServingEngine::kSglang, AllShapes()[6]);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_THAT(*two, HasSubstr("name: \"ridgeline-meta-llama-3-8b-prefill\""));
  EXPECT_THAT(*two, HasSubstr("name: \"ridgeline-meta-llama-3-8b-decode\""));
  EXPECT_THAT(*two, HasSubstr("\"--disaggregation-mode\"\n"));
  EXPECT_THAT(*two, HasSubstr("router"));  // the note: a P/D router fronts them
}

// The emitter writes only flags the engines define (the fixture lists, read
// from the engines' sources at the commits they name).
TEST(DeployEmitTest, EveryFlagIsTheEnginesOwn) {
  const std::set<std::string> vllm = FlagList("vllm");
  const std::set<std::string> sglang = FlagList("sglang");
  ASSERT_GE(vllm.size(), 10u);
  ASSERT_GE(sglang.size(), 10u);
  // The lists are per engine: SGLang's scheduler cap is not vLLM's flag.
  EXPECT_EQ(vllm.count("--max-running-requests"), 0u);
  EXPECT_EQ(sglang.count("--max-num-seqs"), 0u);
  EXPECT_THAT(FlagsIn("vllm serve m --bogus-flag 1"),
              ElementsAreArray({"--bogus-flag"}));
  for (const DeployPlan& plan : AllShapes()) {
    for (const auto& [engine, list] :
         {std::pair{ServingEngine::kVllm, &vllm},
          std::pair{ServingEngine::kSglang, &sglang}}) {
      for (const auto& text :
           {EmitCommands(engine, plan), EmitKubernetes(engine, plan)}) {
        ASSERT_TRUE(text.ok()) << text.status();
        // "--address" belongs to `ray start`, not to the engine.
        for (const std::string& f : FlagsIn(*text)) {
          if (f == "--address" || f == "--head" || f == "--port" ||
              f == "--block") {
            continue;
          }
          EXPECT_EQ(list->count(f), 1u) << f << " in\n" << *text;
        }
      }
    }
  }
}

TEST(DeployEmitTest, RefusesWhatTheEngineCannotRun) {
  DeployPool int4 = Pool();
  int4.kv_cache = "int4";
  auto r = EmitCommands(ServingEngine::kVllm, Plan({int4}));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("pools[0].kv_cache"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("int4"));
  DeployPool none = Pool();
  none.device_resource = "";
  r = EmitKubernetes(ServingEngine::kVllm, Plan({none}));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("pools[0].device_resource"));
  DeployPool bad_role = Pool();
  bad_role.role = "prefill";  // one pool must be aggregated
  EXPECT_FALSE(EmitCommands(ServingEngine::kSglang, Plan({bad_role})).ok());
  // Weights quantized outside the engine: a note, the command still runs.
  DeployPool w4 = Pool();
  w4.weights = "int4";
  auto note = EmitCommands(ServingEngine::kVllm, Plan({w4}));
  ASSERT_TRUE(note.ok());
  EXPECT_THAT(*note, HasSubstr("# weights int4: serve a checkpoint"));
  EXPECT_THAT(*note, Not(HasSubstr("--quantization")));
}

TEST(DeployEmitTest, ShellQuoting) {
  EXPECT_EQ(ShellQuote("meta-llama/Llama-3"), "meta-llama/Llama-3");
  EXPECT_EQ(ShellQuote(R"({"a":1})"), R"('{"a":1}')");
  EXPECT_EQ(ShellQuote("it's"), R"('it'\''s')");
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("$NODE_RANK"), "\"$NODE_RANK\"");
}

}  // namespace
}  // namespace ridgeline::serving
