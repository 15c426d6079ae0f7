#include "ridgeline/serving/deploy_emit.h"

#include <algorithm>
#include <cstdio>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

namespace ridgeline::serving {
namespace {

// Ports the engines listen on by default (vLLM FrontendArgs.port 8000,
// SGLang ServerArgs.port 30000; tests/fixtures/engine-flags/ names the
// sources).
constexpr int kVllmPort = 8000;
constexpr int kSglangPort = 30000;
// The Ray head's port in vLLM's multi-node examples, and the port SGLang's
// multi-node examples give --dist-init-addr.
constexpr int kRayPort = 6379;
constexpr int kSglangDistPort = 20000;

absl::Status Bad(size_t pool, const std::string& field,
                 const std::string& message) {
  return absl::InvalidArgumentError(
      absl::StrCat("pools[", pool, "].", field, ": ", message));
}

bool Is16Or32Bit(const std::string& f) {
  return f == "bf16" || f == "fp16" || f == "fp32";
}

// --dtype: the 16/32-bit format the math runs in. W8A8 FP8 keeps a 16-bit
// model dtype and quantizes (--quantization fp8), so bf16 then.
std::string ModelDtype(const DeployPool& p) {
  if (p.activations == "fp16") return "float16";
  if (p.activations == "fp32") return "float32";
  return "bfloat16";
}

int Port(ServingEngine e) {
  return e == ServingEngine::kVllm ? kVllmPort : kSglangPort;
}

const char* EngineName(ServingEngine e) {
  return e == ServingEngine::kVllm ? "vllm" : "sglang";
}

void Add(std::vector<std::string>* args, const std::string& flag,
         const std::string& value) {
  args->push_back(flag);
  args->push_back(value);
}

// "0.9" not "0.90000000000000002".
std::string Number(double v) { return absl::StrFormat("%.6g", v); }

// vLLM's --speculative-config: SpeculativeConfig's fields "method",
// "model" and "num_speculative_tokens" as JSON (vllm/config/speculative.py;
// methods "draft_model", "eagle3", "mtp").
void AddVllmSpeculation(const DeploySpeculation& s,
                        std::vector<std::string>* a) {
  nlohmann::ordered_json config;
  config["method"] = s.method == "draft"   ? "draft_model"
                     : s.method == "eagle" ? "eagle3"
                                           : "mtp";
  if (s.method != "mtp") config["model"] = s.draft_model;
  config["num_speculative_tokens"] = s.tokens;
  // Invalid UTF-8 (none reaches here through the proto) is replaced, not
  // thrown.
  Add(a, "--speculative-config",
      config.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// SGLang: --speculative-algorithm STANDALONE (a draft model), EAGLE3 or
// NEXTN (the model's MTP layers); a chain of k drafts is k steps of top-1,
// k + 1 draft tokens with the root.
void AddSglangSpeculation(const DeploySpeculation& s,
                          std::vector<std::string>* a) {
  Add(a, "--speculative-algorithm",
      s.method == "draft"   ? "STANDALONE"
      : s.method == "eagle" ? "EAGLE3"
                            : "NEXTN");
  if (s.method != "mtp") {
    Add(a, "--speculative-draft-model-path", s.draft_model);
  }
  Add(a, "--speculative-num-steps", absl::StrCat(s.tokens));
  Add(a, "--speculative-eagle-topk", "1");
  Add(a, "--speculative-num-draft-tokens", absl::StrCat(s.tokens + 1));
}

absl::StatusOr<std::vector<std::string>> VllmArgs(const DeployPlan& plan,
                                                  size_t i,
                                                  const NodePlace& place) {
  const DeployPool& p = plan.pools[i];
  std::vector<std::string> a = {plan.model};
  Add(&a, "--host", "0.0.0.0");
  Add(&a, "--port", absl::StrCat(kVllmPort));
  if (p.expert_parallel > 1) {
    // Attention data-parallel over the EP devices, experts spread over them
    // (vLLM's "DP + EP": --data-parallel-size with --enable-expert-parallel).
    Add(&a, "--data-parallel-size", absl::StrCat(p.expert_parallel));
    a.push_back("--enable-expert-parallel");
  } else {
    Add(&a, "--tensor-parallel-size", absl::StrCat(p.tensor_parallel));
  }
  if (p.pipeline_parallel > 1) {
    Add(&a, "--pipeline-parallel-size", absl::StrCat(p.pipeline_parallel));
  }
  if (ReplicaNodes(p) > 1) {
    // One replica over several nodes: a Ray cluster the leader heads.
    if (p.expert_parallel > 1) {
      Add(&a, "--data-parallel-backend", "ray");
    } else {
      Add(&a, "--distributed-executor-backend", "ray");
    }
  }
  (void)place;  // vLLM workers join the Ray cluster; no per-node flags.
  Add(&a, "--dtype", ModelDtype(p));
  if (p.weights == "fp8") Add(&a, "--quantization", "fp8");
  if (p.kv_cache == "fp8") {
    Add(&a, "--kv-cache-dtype", "fp8");
  } else if (!Is16Or32Bit(p.kv_cache)) {
    return Bad(i, "kv_cache",
               absl::StrCat("vLLM's --kv-cache-dtype stores the KV cache in "
                            "the model dtype or fp8; the plan has ",
                            p.kv_cache));
  }
  Add(&a, "--gpu-memory-utilization", Number(p.memory_fraction));
  Add(&a, "--max-num-seqs", absl::StrCat(p.max_num_seqs));
  Add(&a, "--max-num-batched-tokens", absl::StrCat(p.max_num_batched_tokens));
  Add(&a, "--block-size", absl::StrCat(p.block_size));
  // CacheConfig.enable_prefix_caching is a bool: argparse's
  // BooleanOptionalAction gives the --no- form.
  if (!p.prefix_caching) a.push_back("--no-enable-prefix-caching");
  if (plan.speculative && p.role != "prefill") {
    AddVllmSpeculation(*plan.speculative, &a);
  }
  if (!p.role.empty()) {
    // P/D disaggregation over NIXL (vLLM's NixlConnector: kv_both on
    // either side; the router decides who prefills).
    Add(&a, "--kv-transfer-config",
        R"({"kv_connector":"NixlConnector","kv_role":"kv_both"})");
  }
  return a;
}

absl::StatusOr<std::vector<std::string>> SglangArgs(const DeployPlan& plan,
                                                    size_t i,
                                                    const NodePlace& place) {
  const DeployPool& p = plan.pools[i];
  std::vector<std::string> a;
  Add(&a, "--model-path", plan.model);
  Add(&a, "--host", "0.0.0.0");
  Add(&a, "--port", absl::StrCat(kSglangPort));
  if (p.expert_parallel > 1) {
    // DP attention: --dp-size equal to --tp-size (SGLang's rule), the
    // experts over --ep-size of the same devices.
    const std::string e = absl::StrCat(p.expert_parallel);
    Add(&a, "--tp-size", e);
    Add(&a, "--dp-size", e);
    a.push_back("--enable-dp-attention");
    Add(&a, "--ep-size", e);
  } else {
    Add(&a, "--tp-size", absl::StrCat(p.tensor_parallel));
  }
  if (p.pipeline_parallel > 1) {
    Add(&a, "--pp-size", absl::StrCat(p.pipeline_parallel));
  }
  if (const int64_t nodes = ReplicaNodes(p); nodes > 1) {
    Add(&a, "--nnodes", absl::StrCat(nodes));
    Add(&a, "--node-rank", place.rank);
    Add(&a, "--dist-init-addr",
        absl::StrCat(place.leader_address, ":", kSglangDistPort));
  }
  Add(&a, "--dtype", ModelDtype(p));
  if (p.weights == "fp8") Add(&a, "--quantization", "fp8");
  if (p.kv_cache == "fp8") {
    Add(&a, "--kv-cache-dtype", "fp8_e4m3");
  } else if (!Is16Or32Bit(p.kv_cache)) {
    return Bad(i, "kv_cache",
               absl::StrCat("SGLang's --kv-cache-dtype stores the KV cache "
                            "in the model dtype, fp8_e4m3 or fp8_e5m2; the "
                            "plan has ",
                            p.kv_cache));
  }
  Add(&a, "--mem-fraction-static", Number(p.memory_fraction));
  Add(&a, "--max-running-requests", absl::StrCat(p.max_num_seqs));
  Add(&a, "--chunked-prefill-size", absl::StrCat(p.max_num_batched_tokens));
  Add(&a, "--page-size", absl::StrCat(p.block_size));
  if (!p.prefix_caching) a.push_back("--disable-radix-cache");
  if (plan.speculative && p.role != "prefill") {
    AddSglangSpeculation(*plan.speculative, &a);
  }
  if (!p.role.empty()) Add(&a, "--disaggregation-mode", p.role);
  return a;
}

absl::Status CheckPlan(const DeployPlan& plan) {
  if (plan.model.empty()) {
    return absl::InvalidArgumentError(
        "model: a Hugging Face id or a path; got \"\"");
  }
  if (plan.pools.empty() || plan.pools.size() > 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("pools: 1 (aggregated) or 2 (prefill, decode); got ",
                     plan.pools.size()));
  }
  if (const auto& s = plan.speculative; s.has_value()) {
    if (s->method != "draft" && s->method != "eagle" && s->method != "mtp") {
      return absl::InvalidArgumentError(absl::StrCat(
          "speculative.method: \"draft\", \"eagle\" or \"mtp\"; got \"",
          s->method, "\""));
    }
    if (s->tokens < 1 || s->tokens > 16) {
      return absl::InvalidArgumentError(
          absl::StrCat("speculative.tokens: in [1, 16]; got ", s->tokens));
    }
    if (s->method != "mtp" && s->draft_model.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "speculative.draft_model: a Hugging Face id or a path of the ",
          s->method == "draft" ? "draft model" : "EAGLE-3 head", "; got \"\""));
    }
  }
  for (size_t i = 0; i < plan.pools.size(); ++i) {
    const DeployPool& p = plan.pools[i];
    if (p.role != "" && p.role != "prefill" && p.role != "decode") {
      return Bad(i, "role",
                 absl::StrCat("\"\", \"prefill\" or \"decode\"; got \"", p.role,
                              "\""));
    }
    if ((plan.pools.size() == 2) == p.role.empty()) {
      return Bad(i, "role",
                 "one pool is aggregated (\"\"); two are prefill and decode");
    }
    for (const auto& [name, v] :
         {std::pair<const char*, int64_t>{"replicas", p.replicas},
          {"tensor_parallel", p.tensor_parallel},
          {"pipeline_parallel", p.pipeline_parallel},
          {"expert_parallel", p.expert_parallel},
          {"max_num_seqs", p.max_num_seqs},
          {"max_num_batched_tokens", p.max_num_batched_tokens},
          {"block_size", p.block_size}}) {
      if (v < 1) return Bad(i, name, absl::StrCat(">= 1; got ", v));
    }
    if (p.devices_per_node && *p.devices_per_node < 1) {
      return Bad(i, "devices_per_node",
                 absl::StrCat(">= 1; got ", *p.devices_per_node));
    }
    if (!(p.memory_fraction > 0 && p.memory_fraction <= 1)) {
      return Bad(i, "memory_fraction",
                 absl::StrCat("in (0, 1]; got ", p.memory_fraction));
    }
  }
  return absl::OkStatus();
}

// Caveats the flags cannot say, one comment line each.
std::vector<std::string> PoolNotes(ServingEngine engine, const DeployPool& p,
                                   const std::string& label) {
  std::vector<std::string> n;
  if (!Is16Or32Bit(p.weights) && p.weights != "fp8") {
    n.push_back(absl::StrCat(
        label, "weights ", p.weights,
        ": serve a checkpoint already quantized to ", p.weights,
        " (AWQ, GPTQ, compressed-tensors, ...); ", EngineName(engine),
        " reads the method from its quantization_config"));
  }
  if (Is16Or32Bit(p.kv_cache) && p.kv_cache != p.activations) {
    n.push_back(absl::StrCat(label, "KV cache ", p.kv_cache,
                             " is stored in the model dtype (", ModelDtype(p),
                             ") by the engine"));
  }
  if (!p.devices_per_node && ReplicaDevices(p) > 1) {
    n.push_back(absl::StrCat(label, "devices per node unknown for ",
                             p.hardware_id, ": one node per replica assumed (",
                             ReplicaDevices(p), " devices)"));
  }
  return n;
}

std::string PoolLabel(const DeployPool& p) {
  return p.role.empty() ? "" : absl::StrCat(p.role, " pool: ");
}

void AppendComments(const std::vector<std::string>& lines, std::string* out) {
  for (const std::string& l : lines) absl::StrAppend(out, "# ", l, "\n");
}

// Every note of the plan and its pools, with the serving engine's.
std::vector<std::string> AllNotes(ServingEngine engine,
                                  const DeployPlan& plan) {
  std::vector<std::string> n = plan.notes;
  for (const DeployPool& p : plan.pools) {
    for (std::string& s : PoolNotes(engine, p, PoolLabel(p))) {
      n.push_back(std::move(s));
    }
  }
  if (plan.pools.size() == 2) {
    n.push_back(
        "disaggregated: a prefill/decode-aware router (llm-d's inference "
        "scheduler, or SGLang's router in its PD mode) must front the pools");
  }
  return n;
}

std::string ShellLine(const std::vector<std::string>& argv) {
  std::vector<std::string> q;
  q.reserve(argv.size());
  for (const std::string& a : argv) q.push_back(ShellQuote(a));
  // One flag per line: readable, and a diff shows the flag that changed.
  std::string out;
  for (size_t i = 0; i < q.size(); ++i) {
    const bool flag = q[i].rfind("--", 0) == 0;
    if (i > 0) absl::StrAppend(&out, flag ? " \\\n    " : " ");
    absl::StrAppend(&out, q[i]);
  }
  return out;
}

std::vector<std::string> Program(ServingEngine engine) {
  if (engine == ServingEngine::kVllm) return {"vllm", "serve"};
  return {"python3", "-m", "sglang.launch_server"};
}

// A JSON string literal, which YAML reads as the same string.
std::string Q(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// A DNS-1123 label from the model id: "meta-llama/Meta-Llama-3-8B" ->
// "ridgeline-meta-llama-3-8b" (+ "-prefill"/"-decode").
std::string ObjectName(const DeployPlan& plan, const DeployPool& p) {
  std::string base = plan.model.substr(plan.model.find_last_of('/') + 1);
  std::string slug;
  for (const char c : absl::AsciiStrToLower(base)) {
    const bool ok = absl::ascii_isalnum(c);
    if (ok) {
      slug += c;
    } else if (!slug.empty() && slug.back() != '-') {
      slug += '-';
    }
  }
  if (slug.size() > 40) slug.resize(40);
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  std::string name = slug.empty() ? "ridgeline-model" : "ridgeline-" + slug;
  if (!p.role.empty()) absl::StrAppend(&name, "-", p.role);
  return name;
}

std::string YamlList(const std::vector<std::string>& items) {
  std::vector<std::string> q;
  for (const std::string& s : items) q.push_back(Q(s));
  return absl::StrCat("[", absl::StrJoin(q, ", "), "]");
}

struct Container {
  std::vector<std::string> command;
  std::vector<std::string> args;
  bool serves = true;  // listens on the engine's port (probed)
};

// A pod template's spec (PodSpec), indented by `in`.
std::string PodSpec(ServingEngine engine, const DeployPool& p,
                    const std::string& image, const Container& c,
                    int64_t devices, const std::string& in) {
  std::string s;
  absl::StrAppend(&s, in, "containers:\n");
  absl::StrAppend(&s, in, "- name: ", EngineName(engine), "\n");
  absl::StrAppend(&s, in, "  image: ", Q(image), "\n");
  absl::StrAppend(&s, in, "  command: ", YamlList(c.command), "\n");
  if (!c.args.empty()) {
    absl::StrAppend(&s, in, "  args:\n");
    for (const std::string& a : c.args)
      absl::StrAppend(&s, in, "  - ", Q(a), "\n");
  }
  if (c.serves) {
    absl::StrAppend(&s, in, "  ports:\n", in, "  - name: http\n", in,
                    "    containerPort: ", Port(engine), "\n");
    // Model loading takes minutes: ready once /health answers.
    absl::StrAppend(&s, in, "  readinessProbe:\n", in, "    httpGet:\n", in,
                    "      path: /health\n", in, "      port: http\n", in,
                    "    periodSeconds: 10\n", in, "    failureThreshold: 3\n");
  }
  const std::string count = Q(absl::StrCat(devices));
  absl::StrAppend(&s, in, "  resources:\n", in, "    limits:\n", in, "      ",
                  p.device_resource, ": ", count, "\n", in, "    requests:\n",
                  in, "      ", p.device_resource, ": ", count, "\n");
  // NCCL and the engines' worker processes share memory through /dev/shm.
  absl::StrAppend(&s, in, "  volumeMounts:\n", in, "  - name: dshm\n", in,
                  "    mountPath: /dev/shm\n");
  absl::StrAppend(&s, in, "volumes:\n", in, "- name: dshm\n", in,
                  "  emptyDir:\n", in, "    medium: Memory\n");
  return s;
}

std::string Labels(const std::string& name, const DeployPool& p,
                   const std::string& in) {
  return absl::StrCat(in, "app.kubernetes.io/name: ", Q(name), "\n", in,
                      "app.kubernetes.io/component: ",
                      Q(p.role.empty() ? "aggregated" : p.role), "\n");
}

std::string DefaultImage(ServingEngine engine) {
  return engine == ServingEngine::kVllm ? "vllm/vllm-openai:latest"
                                        : "lmsysorg/sglang:latest";
}

}  // namespace

int64_t ReplicaDevices(const DeployPool& p) {
  return p.pipeline_parallel * std::max(p.tensor_parallel, p.expert_parallel);
}

int64_t ReplicaNodes(const DeployPool& p) {
  const int64_t devices = ReplicaDevices(p);
  if (!p.devices_per_node || *p.devices_per_node >= devices) return 1;
  return (devices + *p.devices_per_node - 1) / *p.devices_per_node;
}

std::string ShellQuote(const std::string& arg) {
  const bool plain =
      !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
        return absl::ascii_isalnum(c) ||
               std::string_view("-_./:=,@+").find(c) != std::string_view::npos;
      });
  if (plain) return arg;
  // A shell variable ("$NODE_RANK", "$LEADER_ADDRESS:20000"): double
  // quotes, so it expands.
  const bool variable =
      arg.find('$') != std::string::npos &&
      std::all_of(arg.begin(), arg.end(), [](char c) {
        return absl::ascii_isalnum(c) ||
               std::string_view("$_{}.:-").find(c) != std::string_view::npos;
      });
  if (variable) return absl::StrCat("\"", arg, "\"");
  std::string out = "'";
  for (const char c : arg) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

absl::StatusOr<std::vector<std::string>> EngineArgs(ServingEngine engine,
                                                    const DeployPlan& plan,
                                                    size_t pool_index,
                                                    const NodePlace& place) {
  if (absl::Status s = CheckPlan(plan); !s.ok()) return s;
  if (pool_index >= plan.pools.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("pool index ", pool_index, " of ", plan.pools.size()));
  }
  return engine == ServingEngine::kVllm ? VllmArgs(plan, pool_index, place)
                                        : SglangArgs(plan, pool_index, place);
}

absl::StatusOr<std::string> EmitCommands(ServingEngine engine,
                                         const DeployPlan& plan) {
  if (absl::Status s = CheckPlan(plan); !s.ok()) return s;
  std::string out = "#!/bin/sh\n";
  AppendComments(AllNotes(engine, plan), &out);
  for (size_t i = 0; i < plan.pools.size(); ++i) {
    const DeployPool& p = plan.pools[i];
    const int64_t nodes = ReplicaNodes(p);
    absl::StrAppend(
        &out, "\n# ", p.role.empty() ? "each" : p.role, " replica (",
        p.replicas, " replica", p.replicas == 1 ? "" : "s", " of ",
        ReplicaDevices(p), " ", p.hardware_id,
        nodes > 1 ? absl::StrCat(" over ", nodes, " nodes") : "", "):\n");
    std::vector<std::string> argv = Program(engine);
    if (nodes > 1) {
      absl::StrAppend(&out, "# on the leader node (LEADER_ADDRESS: its address",
                      engine == ServingEngine::kSglang
                          ? "; NODE_RANK 0 here, 1.." +
                                absl::StrCat(nodes - 1) + " on the others"
                          : "",
                      "):\n");
    }
    if (nodes > 1 && engine == ServingEngine::kVllm) {
      absl::StrAppend(&out, "ray start --head --port=", kRayPort, "\n");
    }
    NodePlace place;
    place.rank = "$NODE_RANK";
    absl::StatusOr<std::vector<std::string>> args =
        EngineArgs(engine, plan, i, place);
    if (!args.ok()) return args.status();
    argv.insert(argv.end(), args->begin(), args->end());
    absl::StrAppend(&out, ShellLine(argv), "\n");
    if (nodes > 1 && engine == ServingEngine::kVllm) {
      absl::StrAppend(
          &out, "# on each of the other ", nodes - 1,
          " nodes, before the leader's vllm serve:\n",
          "ray start --block --address=\"$LEADER_ADDRESS:", kRayPort, "\"\n");
    } else if (nodes > 1) {
      absl::StrAppend(&out,
                      "# on each other node: the same command with its "
                      "NODE_RANK\n");
    }
  }
  return out;
}

absl::StatusOr<std::string> EmitKubernetes(ServingEngine engine,
                                           const DeployPlan& plan) {
  if (absl::Status s = CheckPlan(plan); !s.ok()) return s;
  const std::string image =
      plan.image.empty() ? DefaultImage(engine) : plan.image;
  std::string out;
  AppendComments(AllNotes(engine, plan), &out);
  for (size_t i = 0; i < plan.pools.size(); ++i) {
    const DeployPool& p = plan.pools[i];
    if (p.device_resource.empty()) {
      return Bad(
          i, "device_resource",
          absl::StrCat("no Kubernetes device plugin resource is known "
                       "for ",
                       p.hardware_id, " (known: nvidia.com/gpu, amd.com/gpu)"));
    }
    const std::string name = ObjectName(plan, p);
    const int64_t nodes = ReplicaNodes(p);
    const int64_t per_pod =
        nodes == 1 ? ReplicaDevices(p) : *p.devices_per_node;
    const std::vector<std::string> program = Program(engine);
    if (nodes == 1) {
      absl::StatusOr<std::vector<std::string>> args =
          EngineArgs(engine, plan, i);
      if (!args.ok()) return args.status();
      Container c{program, *args, true};
      absl::StrAppend(&out, "---\napiVersion: apps/v1\nkind: Deployment\n",
                      "metadata:\n  name: ", Q(name), "\n  labels:\n",
                      Labels(name, p, "    "),
                      "spec:\n  replicas: ", p.replicas,
                      "\n  selector:\n    matchLabels:\n",
                      "      app.kubernetes.io/name: ", Q(name), "\n",
                      "  template:\n    metadata:\n      labels:\n",
                      Labels(name, p, "        "), "    spec:\n",
                      PodSpec(engine, p, image, c, per_pod, "      "));
    } else {
      // LeaderWorkerSet (leaderworkerset.x-k8s.io/v1): a group of `nodes`
      // pods per replica; LWS sets LWS_LEADER_ADDRESS, LWS_GROUP_SIZE and
      // LWS_WORKER_INDEX in every pod, referenced here as $(VAR).
      NodePlace place{"$(LWS_LEADER_ADDRESS)", "$(LWS_WORKER_INDEX)"};
      absl::StatusOr<std::vector<std::string>> args =
          EngineArgs(engine, plan, i, place);
      if (!args.ok()) return args.status();
      Container leader, worker;
      if (engine == ServingEngine::kVllm) {
        // The leader heads the Ray cluster, then serves; workers join it.
        std::vector<std::string> argv = program;
        argv.insert(argv.end(), args->begin(), args->end());
        std::vector<std::string> quoted;
        for (const std::string& a : argv) quoted.push_back(ShellQuote(a));
        leader = {{"sh", "-c"},
                  {absl::StrCat("ray start --head --port=", kRayPort,
                                " && exec ", absl::StrJoin(quoted, " "))},
                  true};
        worker = {{"sh", "-c"},
                  {absl::StrCat("exec ray start --block --address=",
                                "$(LWS_LEADER_ADDRESS):", kRayPort)},
                  false};
      } else {
        leader = {program, *args, true};
        worker = {program, *args, false};
      }
      absl::StrAppend(&out, "---\napiVersion: leaderworkerset.x-k8s.io/v1\n",
                      "kind: LeaderWorkerSet\nmetadata:\n  name: ", Q(name),
                      "\n  labels:\n", Labels(name, p, "    "),
                      "spec:\n  replicas: ", p.replicas,
                      "\n  leaderWorkerTemplate:\n    size: ", nodes,
                      "\n    restartPolicy: RecreateGroupOnPodRestart\n",
                      "    leaderTemplate:\n      metadata:\n        labels:\n",
                      Labels(name, p, "          "),
                      "          ridgeline.dev/node: leader\n", "      spec:\n",
                      PodSpec(engine, p, image, leader, per_pod, "        "),
                      "    workerTemplate:\n      metadata:\n        labels:\n",
                      Labels(name, p, "          "),
                      "          ridgeline.dev/node: worker\n", "      spec:\n",
                      PodSpec(engine, p, image, worker, per_pod, "        "));
    }
    absl::StrAppend(&out, "---\napiVersion: v1\nkind: Service\nmetadata:\n",
                    "  name: ", Q(name), "\n  labels:\n",
                    Labels(name, p, "    "),
                    "spec:\n  selector:\n    app.kubernetes.io/name: ", Q(name),
                    "\n", nodes > 1 ? "    ridgeline.dev/node: leader\n" : "",
                    "  ports:\n  - name: http\n    port: ", Port(engine),
                    "\n    targetPort: http\n");
  }
  return out;
}

}  // namespace ridgeline::serving
