#include "common.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/util/json_util.h"
#include "ridgeline/engine/field_path.h"

namespace ridgeline::cli {
namespace {

// Maps request field paths (or parts of them) to the flag that sets them,
// so a user sees which flag to fix.
constexpr std::pair<const char*, const char*> kFieldFlags[] = {
    {"emit_draft_model", "--emit-draft-model"},
    {"emit_model", "--emit-model"},
    {"emit_row", "--emit-row"},
    {"workload.batch", "--batch"},
    {"workload.prompt_tokens", "--prompt"},
    {"workload.generated_tokens", "--gen"},
    {"formats.weights", "--weights"},
    {"formats.activations", "--activations"},
    {"formats.kv_cache", "--kv"},
    {"model.hf_config_json", "--model-config"},
    {"model.catalog_id", "--model"},
    {"hardware.platform_id", "--hardware"},
    {"hardware.description", "--hardware-file"},
    {"calibration.profile", "--profile"},
    {"calibration.framework", "--framework"},
    {"batch_sizes", "--batch"},
    {"prompt_tokens", "--prompt"},
    {"generated_tokens", "--gen"},
    {"shard_", "--shard"},
    {"decode_attention.batch", "--batch"},
    {"decode_attention.num_q_heads", "--q-heads"},
    {"decode_attention.num_kv_heads", "--kv-heads"},
    {"decode_attention.head_dim", "--head-dim"},
    {"decode_attention.kv_length", "--kv-len"},
    {"decode_attention.dtype", "--dtype"},
    {"gemm.m", "--m"},
    {"gemm.n", "--n"},
    {"gemm.k", "--k"},
    {"gemm.a_format", "--a-format"},
    {"gemm.b_format", "--b-format"},
    {"gemv_max_tokens", "--gemv-max-tokens"},
    {"options.prefill_chunk_tokens", "--prefill-chunk-tokens"},
    {"options.speculative.acceptance", "--acceptance"},
    {"options.speculative", "--speculative"},
    {"options.lora.modules", "--lora-modules"},
    {"options.lora.adapters", "--lora-adapters"},
    {"options.lora.cold_fraction", "--lora-cold-fraction"},
    {"options.lora.rank", "--lora-rank"},
    {"parallelism.tensor_parallel", "--tensor-parallel"},
    {"].context_tokens", "--seq"},
    {"].new_tokens", "--seq"},
    {"parallelism.pipeline_parallel", "--pipeline-parallel"},
    {"parallelism.pipeline_micro_batches", "--micro-batches"},
    {"parallelism.expert_parallel", "--expert-parallel"},
    {"parallelism.data_parallel", "--data-parallel"},
    {"parallelism.attention_data_parallel", "--attention-data-parallel"},
    // Sweep list entries: models[i].catalog_id, hardware[i].description...
    {"].catalog_id", "--model"},
    {"].hf_config_json", "--model-config"},
    {"].platform_id", "--hardware"},
    {"].description", "--hardware-file"},
    // simulate (before plan's: the first entry the path contains wins)
    {"prefill.hardware", "--prefill-hardware"},
    {"prefill.tensor_parallel", "--prefill-tensor-parallel"},
    {"prefill.replicas", "--prefill-replicas"},
    {"decode.hardware", "--decode-hardware"},
    {"decode.tensor_parallel", "--decode-tensor-parallel"},
    {"decode.replicas", "--decode-replicas"},
    {"kv_transfer_overlap", "--kv-transfer-overlap"},
    {"replicas", "--replicas"},
    {"router", "--router"},
    {"traffic.concurrency", "--concurrency"},
    {"traffic.shared_prefix_tokens", "--shared-prefix"},
    {"serving.kv_offload", "--kv-offload"},
    {"serving.preemption", "--preemption"},
    {"traffic.sessions.turns", "--turns"},
    {"traffic.sessions.think_time_seconds", "--think-time"},
    {"traffic.trace.prompt_tokens", "--trace"},
    {"traffic.trace", "--trace"},
    {"traffic.arrival_times", "--trace"},
    {"serving.block_size", "--block-size"},
    // plan
    {"traffic.rate", "--rate"},
    {"slo.ttft_p90_seconds", "--ttft-p90-ms"},
    {"slo.tpot_p90_seconds", "--tpot-p90-ms"},
    {"candidates.tensor_parallel", "--tensor-parallel"},
    {"candidates.pipeline_parallel", "--pipeline-parallel"},
    {"candidates.expert_parallel", "--expert-parallel"},
    {"candidates.formats", "--formats"},
    {"candidates.profile_fallback", "--profile-fallback"},
    {"candidates.disaggregated", "--disaggregated"},
    {"candidates.prefill_hardware", "--prefill-hardware"},
    {"candidates.decode_hardware", "--decode-hardware"},
    {"candidates.prefill_tensor_parallel", "--prefill-tensor-parallel"},
    {"candidates.decode_tensor_parallel", "--decode-tensor-parallel"},
    {"candidates.max_pool_replicas", "--max-pool-replicas"},
    {"candidates.calibration", "--profile"},
    {"candidates",
     "--hardware / --tensor-parallel / --pipeline-parallel / "
     "--expert-parallel / --formats"},
    {"pricing.price_usd", "--price-usd"},
    {"pricing.usd_per_device_hour", "--usd-per-device-hour"},
    {"serving.memory_fraction", "--memory-fraction"},
    {"serving.max_num_seqs", "--max-num-seqs"},
    {"serving.max_num_batched_tokens", "--max-num-batched-tokens"},
    {"simulation.requests", "--requests"},
    // explore
    {"vary", "--vary"},
    {"objectives", "--objective"},
    {"constraints", "--constraint"},
    {"nsga2_population", "--nsga2-population"},
    {"parallelism", "--tensor-parallel"},
    // whole-message fields (plan, explore, simulate)
    {"prefill", "--prefill-hardware"},
    {"decode", "--decode-hardware"},
    {"traffic", "--rate / --concurrency / --trace"},
    {"model", "--model"},
    {"hardware", "--hardware"},
};

}  // namespace

Failure Usage(const absl::Status& status) {
  return {kUsage, std::string(status.message())};
}
Failure Usage(std::string message) { return {kUsage, std::move(message)}; }

// analyze and sweep take flags only; a stray word (e.g. "--batch 8 16") was
// silently ignored.
Outcome NoPositional(const ParsedFlags& flags) {
  if (flags.positional().empty()) return std::nullopt;
  return Usage(absl::StrCat("unexpected argument '", flags.positional()[0],
                            "' (this command takes flags only; see --help)"));
}

// The flag comes from the error's field path (a Status payload, in-process
// and from the server's trailing metadata alike), never from its text.
// A name the service does not know in a flag that picks one of a set
// (--framework vllmm) is a usage error (exit 2), as a bad flag is; the set
// lives in the service (the profiles it loaded), so only it can check.
Failure Failed(const absl::Status& status) {
  std::string message = absl::StrCat(absl::StatusCodeToString(status.code()),
                                     ": ", status.message());
  int code = kFailed;
  if (std::optional<std::string> path = engine::FieldPathOf(status)) {
    for (const auto& [field, flag] : kFieldFlags) {
      if (path->find(field) != std::string::npos) {
        absl::StrAppend(&message, " (flag ", flag, ")");
        break;
      }
    }
    constexpr const char* kChoiceFields[] = {"calibration.framework",
                                             "candidates.profile_fallback"};
    for (const char* field : kChoiceFields) {
      if (status.code() == absl::StatusCode::kInvalidArgument &&
          path->find(field) != std::string::npos) {
        code = kUsage;
      }
    }
  }
  return {code, std::move(message)};
}

// The canonical proto3 JSON mapping, with every field printed even at its
// default (`"fits": false`, `"tier": 0`): a script need not know proto3's
// omission rules. The HTTP API prints the same way.
std::string Json(const google::protobuf::Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  auto status =
      google::protobuf::util::MessageToJsonString(message, &json, options);
  if (!status.ok())
    return absl::StrCat("{\"error\":\"", status.ToString(), "\"}");
  return json;
}

// Full precision for machine-readable output.
std::string Raw(double value) { return absl::StrFormat("%.10g", value); }

absl::StatusOr<std::string> ReadFile(const char* flag,
                                     const std::string& path) {
  // A directory opens as a stream and reads as "", which the service then
  // reported as an empty config; name the file instead.
  std::error_code ec;
  std::ifstream in(path, std::ios::binary);
  if (!in || !std::filesystem::is_regular_file(path, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, ": cannot read file '", path,
                     "' (must be a readable regular file)"));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

const std::vector<FlagSpec>& CommonFlags() {
  static const std::vector<FlagSpec> kFlags = {
      {"server", "HOST:PORT",
       "send requests to a ridgeline-server (default: run in-process)"},
      {"plugin-dir", "DIR",
       "in-process: hardware plugin folder, instead of the installed plugins "
       "(env RIDGELINE_PLUGIN_DIR)"},
      {"extra-plugin-dir", "DIR",
       "in-process: also load the plugins of this folder (repeatable, or a "
       "comma list)"},
      {"profile-dir", "DIR",
       "in-process: calibration profile folder (env RIDGELINE_PROFILE_DIR)"},
      {"format", "table|json|csv", "output format (default table)"},
      {"timeout", "SECONDS",
       "deadline of each RPC with --server (default 60); a server still "
       "loading its plugins is waited for within it"},
      {"help", "", "show this help"},
  };
  return kFlags;
}

Outcome ClientFor(const ParsedFlags& flags,
                  std::chrono::seconds default_timeout,
                  std::unique_ptr<Client>* client) {
  absl::StatusOr<std::optional<int64_t>> timeout =
      flags.GetInt("timeout", 1, 86400);
  if (!timeout.ok()) return Usage(timeout.status());
  if (std::optional<std::string> server = flags.Get("server")) {
    if (server->empty() || server->find(':') == std::string::npos) {
      return Usage(
          absl::StrCat("--server: expected HOST:PORT, got '", *server, "'"));
    }
    *client = MakeGrpcClient(
        *server, timeout->has_value() ? std::chrono::seconds(**timeout)
                                      : default_timeout);
    return std::nullopt;
  }
  InProcessOptions options;
  options.plugin_dir = flags.Get("plugin-dir").value_or("");
  for (const std::string& v : flags.GetAll("extra-plugin-dir")) {
    for (std::string& dir : SplitList(v)) {
      options.extra_plugin_dirs.push_back(std::move(dir));
    }
  }
  options.profile_dir = flags.Get("profile-dir").value_or("");
  absl::StatusOr<std::unique_ptr<Client>> made = MakeInProcessClient(options);
  if (!made.ok()) {
    // A named plugin folder that is not there is a usage error.
    const std::string path = engine::FieldPathOf(made.status()).value_or("");
    if (path == "plugin_dir" || path == "extra_plugin_dir") {
      return Usage(made.status());
    }
    return Failed(made.status());
  }
  *client = std::move(*made);
  return std::nullopt;
}

Outcome MakeClient(Context& ctx) {
  std::optional<std::string> fmt = ctx.flags.Get("format");
  if (!fmt || *fmt == "table") {
    ctx.format = Format::kTable;
  } else if (*fmt == "json") {
    ctx.format = Format::kJson;
  } else if (*fmt == "csv") {
    ctx.format = Format::kCsv;
  } else {
    return Usage(absl::StrCat("--format: expected table, json or csv, got '",
                              *fmt, "'"));
  }
  if (ctx.flags.Has("server") &&
      (ctx.flags.Has("plugin-dir") || ctx.flags.Has("extra-plugin-dir") ||
       ctx.flags.Has("profile-dir"))) {
    return Usage(
        "--plugin-dir, --extra-plugin-dir and --profile-dir apply in-process "
        "only; the server named by --server uses its own");
  }
  return ClientFor(ctx.flags, std::chrono::seconds(60), &ctx.client);
}

}  // namespace ridgeline::cli
