// Subcommands of `ridgeline`: request building from flags and the output
// formats (human tables, canonical proto3 JSON, CSV).
#include "ridgeline/cli/cli.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "calibrate.h"
#include "client.h"
#include "explore.h"
#include "flags.h"
#include "google/protobuf/util/json_util.h"
#include "plan.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/ranges.h"
#include "step.h"
#include "table.h"

namespace ridgeline::cli {
namespace {

// Exit codes (see cli.h).
constexpr int kOk = 0;
constexpr int kFailed = 1;
constexpr int kUsage = 2;

enum class Format { kTable, kJson, kCsv };

// A usage error (exit 2) or a failed command (exit 1), with its message.
struct Failure {
  int code;
  std::string message;
};
using Outcome = std::optional<Failure>;

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

// Maps request field paths (or parts of them) to the flag that sets them,
// so a user sees which flag to fix.
constexpr std::pair<const char*, const char*> kFieldFlags[] = {
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
};

// The flag comes from the error's field path (a Status payload, in-process
// and from the server's trailing metadata alike), never from its text.
Failure Failed(const absl::Status& status) {
  std::string message = absl::StrCat(absl::StatusCodeToString(status.code()),
                                     ": ", status.message());
  if (std::optional<std::string> path = engine::FieldPathOf(status)) {
    for (const auto& [field, flag] : kFieldFlags) {
      if (path->find(field) != std::string::npos) {
        absl::StrAppend(&message, " (flag ", flag, ")");
        break;
      }
    }
  }
  return {kFailed, std::move(message)};
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

// ---------------------------------------------------------------------------
// Command context: common flags and the client.
// ---------------------------------------------------------------------------

const std::vector<FlagSpec>& CommonFlags() {
  static const std::vector<FlagSpec> kFlags = {
      {"server", "HOST:PORT",
       "send requests to a ridgeline-server (default: run in-process)"},
      {"plugin-dir", "DIR",
       "in-process: hardware plugin folder (env RIDGELINE_PLUGIN_DIR)"},
      {"profile-dir", "DIR",
       "in-process: calibration profile folder (env RIDGELINE_PROFILE_DIR)"},
      {"format", "table|json|csv", "output format (default table)"},
      {"timeout", "SECONDS", "deadline of each RPC with --server (default 60)"},
      {"help", "", "show this help"},
  };
  return kFlags;
}

struct Context {
  const ParsedFlags& flags;
  Format format = Format::kTable;
  std::unique_ptr<Client> client;
  std::ostream& out;
  std::ostream& err;
  TableStyle style() const {
    return format == Format::kCsv ? TableStyle::kCsv : TableStyle::kText;
  }
  bool csv() const { return format == Format::kCsv; }
};

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
  absl::StatusOr<std::optional<int64_t>> timeout =
      ctx.flags.GetInt("timeout", 1, 86400);
  if (!timeout.ok()) return Usage(timeout.status());
  if (std::optional<std::string> server = ctx.flags.Get("server")) {
    if (ctx.flags.Has("plugin-dir") || ctx.flags.Has("profile-dir")) {
      return Usage(
          "--plugin-dir and --profile-dir apply in-process only; the server "
          "named by --server uses its own");
    }
    if (server->empty() || server->find(':') == std::string::npos) {
      return Usage(
          absl::StrCat("--server: expected HOST:PORT, got '", *server, "'"));
    }
    ctx.client =
        MakeGrpcClient(*server, std::chrono::seconds(timeout->value_or(60)));
    return std::nullopt;
  }
  InProcessOptions options;
  options.plugin_dir = ctx.flags.Get("plugin-dir").value_or("");
  options.profile_dir = ctx.flags.Get("profile-dir").value_or("");
  absl::StatusOr<std::unique_ptr<Client>> client = MakeInProcessClient(options);
  if (!client.ok()) return Failed(client.status());
  ctx.client = std::move(*client);
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Request building shared by analyze and sweep.
// ---------------------------------------------------------------------------

const std::vector<FlagSpec>& ScenarioFlags() {
  static const std::vector<FlagSpec> kFlags = {
      {"weights", "FMT",
       "weight format, e.g. bf16, fp8, int4-g128 (default bf16)"},
      {"activations", "FMT", "activation format (default bf16)"},
      {"kv", "FMT", "KV-cache format (default bf16)"},
      {"profile", "NAME", "calibration profile by name"},
      {"framework", "NAME",
       "pick the best calibration profile for this framework (vllm, ...)"},
      {"no-flash-attention", "", "QK^T, softmax and AV as separate ops"},
      {"mla-unabsorbed", "", "MLA without W_UK/W_UV absorption"},
      {"pure-roofline", "",
       "ignore calibration and plugin hooks: the speed upper bound"},
      {"tensor-parallel", "N",
       "devices the model is split over (tensor parallelism; default 1)"},
      {"pipeline-parallel", "N",
       "pipeline stages the layers are split into (default 1)"},
      {"micro-batches", "N",
       "prefill micro-batches per pipeline (default: one per stage)"},
      {"expert-parallel", "N",
       "devices the routed experts are spread over (default 1)"},
      {"attention-data-parallel", "",
       "attention replicated over the expert-parallel group, own batches"},
      {"data-parallel", "N",
       "whole replicas: throughput adds up, latency does not (default 1)"},
      {"fp16-accumulation", "",
       "fp16 matmuls accumulate in fp16 (llama.cpp's cuBLAS path): GeForce 2x"},
      {"no-fp16-accumulation", "",
       "fp16 matmuls accumulate in fp32 even if the profile's framework does not"},
      {"prefill-chunk-tokens", "N",
       "prompt tokens per prefill step (default: whole prompt if it fits, "
       "else 2048)"},
      {"weights-tier", "N",
       "pin weights to memory tier N (default: fastest with room)"},
      {"kv-tier", "N", "pin the KV cache to memory tier N"},
      {"activations-tier", "N", "pin activations to memory tier N"},
      {"electricity-usd-per-kwh", "X",
       "electricity price (default: US industrial average)"},
      {"pue", "X", "data-centre power usage effectiveness (default 1.58)"},
      {"grid-g-co2e-per-kwh", "X",
       "grid carbon intensity (default: world average)"},
      {"amortization-years", "X", "years the purchase price is spread over"},
      {"utilization", "X", "share of wall time the device serves, (0, 1]"},
  };
  return kFlags;
}

// Pins and economics: ranges are checked by the service, which names the
// field; here only the number syntax.
Outcome FillPlacementAndEconomics(const ParsedFlags& flags,
                                  v1::PlacementPins* placement,
                                  v1::EconomicsOverrides* economics) {
  struct TierPin {
    const char* flag;
    void (v1::PlacementPins::*set)(int32_t);
  };
  for (const TierPin& pin :
       {TierPin{"weights-tier", &v1::PlacementPins::set_weights_tier},
        TierPin{"kv-tier", &v1::PlacementPins::set_kv_cache_tier},
        TierPin{"activations-tier",
                &v1::PlacementPins::set_activations_tier}}) {
    absl::StatusOr<std::optional<int64_t>> v = flags.GetInt(pin.flag, 0, 7);
    if (!v.ok()) return Usage(v.status());
    if (*v) (placement->*pin.set)(static_cast<int32_t>(**v));
  }
  struct Number {
    const char* flag;
    void (v1::EconomicsOverrides::*set)(double);
  };
  for (const Number& n :
       {Number{"electricity-usd-per-kwh",
               &v1::EconomicsOverrides::set_electricity_usd_per_kwh},
        Number{"pue", &v1::EconomicsOverrides::set_pue},
        Number{"grid-g-co2e-per-kwh",
               &v1::EconomicsOverrides::set_grid_g_co2e_per_kwh},
        Number{"amortization-years",
               &v1::EconomicsOverrides::set_amortization_years},
        Number{"utilization", &v1::EconomicsOverrides::set_utilization}}) {
    absl::StatusOr<std::optional<double>> v = flags.GetDouble(n.flag);
    if (!v.ok()) return Usage(v.status());
    if (*v) (economics->*n.set)(**v);
  }
  return std::nullopt;
}

Outcome FillCommon(const ParsedFlags& flags, v1::AnalysisOptions* options,
                   v1::Calibration* calibration) {
  if (flags.Has("profile") && flags.Has("framework")) {
    return Usage("give at most one of --profile NAME or --framework NAME");
  }
  if (auto profile = flags.Get("profile")) calibration->set_profile(*profile);
  if (auto framework = flags.Get("framework")) {
    calibration->set_framework(*framework);
  }
  if (flags.Has("no-flash-attention")) options->set_flash_attention(false);
  if (flags.Has("mla-unabsorbed")) options->set_mla_absorbed(false);
  if (flags.Has("pure-roofline")) options->set_pure_roofline(true);
  if (flags.Has("fp16-accumulation")) options->set_fp16_accumulation(true);
  if (flags.Has("no-fp16-accumulation")) options->set_fp16_accumulation(false);
  absl::StatusOr<std::optional<int64_t>> chunk =
      flags.GetInt("prefill-chunk-tokens", engine::ranges::kPrefillChunkTokens.lo,
                   engine::ranges::kPrefillChunkTokens.hi);
  if (!chunk.ok()) return Usage(chunk.status());
  if (*chunk) options->set_prefill_chunk_tokens(**chunk);
  return std::nullopt;
}

// --pipeline-parallel, --micro-batches, --expert-parallel, --data-parallel,
// --attention-data-parallel (combinations are the service's to check).
Outcome FillParallelismFlags(const ParsedFlags& flags, v1::Parallelism* p) {
  struct IntFlag {
    const char* name;
    int64_t max;
    void (v1::Parallelism::*set)(int32_t);
  };
  const IntFlag ints[] = {
      {"pipeline-parallel", 256, &v1::Parallelism::set_pipeline_parallel},
      {"micro-batches", 65536, &v1::Parallelism::set_pipeline_micro_batches},
      {"expert-parallel", 256, &v1::Parallelism::set_expert_parallel},
      {"data-parallel", 65536, &v1::Parallelism::set_data_parallel},
  };
  for (const IntFlag& f : ints) {
    absl::StatusOr<std::optional<int64_t>> v = flags.GetInt(f.name, 1, f.max);
    if (!v.ok()) return Usage(v.status());
    if (*v) (p->*f.set)(static_cast<int32_t>(**v));
  }
  if (flags.Has("attention-data-parallel")) p->set_attention_data_parallel(true);
  return std::nullopt;
}

// ScenarioFlags() into the fields AnalyzeRequest and SweepRequest share.
template <typename Request>
Outcome FillScenarioFlags(const ParsedFlags& flags, Request* request) {
  if (Outcome o = FillPlacementAndEconomics(flags, request->mutable_placement(),
                                            request->mutable_economics())) {
    return o;
  }
  // Divisibility by the model's heads is the service's to check.
  absl::StatusOr<std::optional<int64_t>> tp = flags.GetInt(
      "tensor-parallel", engine::ranges::kTensorParallel.lo,
      engine::ranges::kTensorParallel.hi);
  if (!tp.ok()) return Usage(tp.status());
  if (*tp) {
    request->mutable_parallelism()->set_tensor_parallel(static_cast<int32_t>(**tp));
  }
  if (Outcome o = FillParallelismFlags(flags, request->mutable_parallelism())) {
    return o;
  }
  return FillCommon(flags, request->mutable_options(),
                    request->mutable_calibration());
}

Outcome ReadHardwareFile(const std::string& path, v1::Hardware* hardware) {
  absl::StatusOr<std::string> text = ReadFile("hardware-file", path);
  if (!text.ok()) return Usage(text.status());
  auto status = google::protobuf::util::JsonStringToMessage(*text, hardware);
  if (!status.ok()) {
    // `hardware show ID --format json` prints a GetHardwareResponse; take it
    // as is.
    v1::GetHardwareResponse shown;
    if (google::protobuf::util::JsonStringToMessage(*text, &shown).ok() &&
        shown.has_hardware()) {
      *hardware = shown.hardware();
      return std::nullopt;
    }
    return Usage(
        absl::StrCat("--hardware-file: '", path,
                     "' is not a ridgeline.v1.Hardware in proto JSON: ",
                     status.message().as_string()));
  }
  return std::nullopt;
}

Outcome ReadModelConfig(const std::string& path, v1::ModelSpec* model) {
  absl::StatusOr<std::string> text = ReadFile("model-config", path);
  if (!text.ok()) return Usage(text.status());
  model->set_hf_config_json(*text);
  // The file name is a friendlier id than "inline".
  model->set_id(std::filesystem::path(path).stem().string().substr(0, 128));
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// analyze
// ---------------------------------------------------------------------------

std::vector<FlagSpec> AnalyzeFlags() {
  std::vector<FlagSpec> flags = {
      {"model", "ID", "catalog model id (see `ridgeline models`)"},
      {"model-config", "FILE.json", "a Hugging Face config.json instead"},
      {"hardware", "ID", "platform id (see `ridgeline hardware`)"},
      {"hardware-file", "FILE.json",
       "inline hardware: a ridgeline.v1.Hardware in proto JSON"},
      {"batch", "N", "sequences decoded together (default 1)"},
      {"prompt", "N", "prompt tokens per sequence (default 512)"},
      {"gen", "N", "generated tokens per sequence (default 128)"},
      {"no-suggestions", "", "skip the what-if suggestions"},
      {"view", "full|basic",
       "basic: leave out the per-op tables (default full)"},
  };
  for (const auto* list : {&ScenarioFlags(), &CommonFlags()}) {
    flags.insert(flags.end(), list->begin(), list->end());
  }
  return flags;
}

absl::StatusOr<v1::AnalysisView> ParseView(const std::string& text) {
  if (text == "full") return v1::ANALYSIS_VIEW_FULL;
  if (text == "basic") return v1::ANALYSIS_VIEW_BASIC;
  return absl::InvalidArgumentError(
      absl::StrCat("--view: expected full or basic, got '", text, "'"));
}

Outcome BuildAnalyze(const ParsedFlags& flags, v1::AnalyzeRequest* request) {
  if (Outcome o = NoPositional(flags)) return o;
  if (flags.Has("model") == flags.Has("model-config")) {
    return Usage("give exactly one of --model ID or --model-config FILE.json");
  }
  if (flags.Has("hardware") == flags.Has("hardware-file")) {
    return Usage(
        "give exactly one of --hardware ID or --hardware-file FILE.json");
  }
  if (auto id = flags.Get("model"))
    request->mutable_model()->set_catalog_id(*id);
  if (auto path = flags.Get("model-config")) {
    if (Outcome o = ReadModelConfig(*path, request->mutable_model())) return o;
  }
  if (auto id = flags.Get("hardware")) {
    request->mutable_hardware()->set_platform_id(*id);
  }
  if (auto path = flags.Get("hardware-file")) {
    if (Outcome o = ReadHardwareFile(
            *path, request->mutable_hardware()->mutable_description())) {
      return o;
    }
  }
  // Ranges are checked once, by the service; here only the syntax.
  constexpr int64_t kAny = std::numeric_limits<int64_t>::max();
  struct IntField {
    const char* flag;
    void (v1::Workload::*set)(int64_t);
  };
  for (const IntField& f :
       {IntField{"batch", &v1::Workload::set_batch},
        IntField{"prompt", &v1::Workload::set_prompt_tokens},
        IntField{"gen", &v1::Workload::set_generated_tokens}}) {
    absl::StatusOr<std::optional<int64_t>> v =
        flags.GetInt(f.flag, -kAny, kAny);
    if (!v.ok()) return Usage(v.status());
    if (*v) (request->mutable_workload()->*f.set)(**v);
  }
  if (auto v = flags.Get("weights"))
    request->mutable_formats()->set_weights(*v);
  if (auto v = flags.Get("activations")) {
    request->mutable_formats()->set_activations(*v);
  }
  if (auto v = flags.Get("kv")) request->mutable_formats()->set_kv_cache(*v);
  if (flags.Has("no-suggestions")) {
    request->mutable_options()->set_suggestions(false);
  }
  if (auto view = flags.Get("view")) {
    absl::StatusOr<v1::AnalysisView> v = ParseView(*view);
    if (!v.ok()) return Usage(v.status());
    request->set_view(*v);
  }
  return FillScenarioFlags(flags, request);
}

std::string OpName(const v1::OpResult& op) {
  return op.layer_group().empty()
             ? op.kind()
             : absl::StrCat(op.kind(), " (", op.layer_group(), ")");
}

std::string Where(const v1::OpResult& op, const v1::AnalysisResult& result) {
  if (op.executed_in_tier() < 0) return "compute";
  for (const v1::TierUsage& tier : result.memory().tiers()) {
    if (tier.tier() == op.executed_in_tier()) {
      return absl::StrCat("PIM ", tier.name());
    }
  }
  return absl::StrCat("PIM tier ", op.executed_in_tier());
}

// One row per op; `phase` is a column in CSV, a section title in text.
void AddOpRows(const v1::StepResult& step, const v1::AnalysisResult& result,
               bool csv, Table* table) {
  double total = step.totals().seconds();
  for (const v1::OpResult& op : step.ops()) {
    double share = total > 0 ? op.seconds() / total : 0;
    if (csv) {
      table->rows.push_back(
          {step.phase(), op.kind(), op.layer_group(), absl::StrCat(op.layers()),
           op.math(), Raw(op.flops()), Raw(op.bytes()), Raw(op.intensity()),
           Raw(op.seconds()), Raw(share), op.bound(), Where(op, result)});
    } else {
      table->rows.push_back({OpName(op), absl::StrCat(op.layers()), op.math(),
                             Si(op.flops()), Bytes(op.bytes()),
                             Fixed3(op.intensity()), Seconds(op.seconds()),
                             Percent(share), op.bound(), Where(op, result)});
    }
  }
}

void PrintAnalyzeText(const v1::AnalyzeRequest& request,
                      const v1::AnalyzeResponse& response, std::ostream& out) {
  const v1::AnalysisResult& r = response.result();
  const v1::Workload& w = request.workload();
  auto fmt = [](const std::string& f) { return f.empty() ? "bf16" : f; };
  const int32_t tp = request.parallelism().has_tensor_parallel()
                         ? request.parallelism().tensor_parallel()
                         : 1;
  out << r.model_id() << " on " << r.hardware_id()
      << (tp > 1 ? absl::StrCat(" x ", tp, " (tensor parallel; times and "
                                           "memory per device)")
                 : std::string())
      << ": batch "
      << (w.has_batch() ? w.batch() : 1) << ", prompt "
      << (w.has_prompt_tokens() ? w.prompt_tokens() : 512) << ", generate "
      << (w.has_generated_tokens() ? w.generated_tokens() : 128) << "; weights "
      << fmt(request.formats().weights()) << ", activations "
      << fmt(request.formats().activations()) << ", KV "
      << fmt(request.formats().kv_cache()) << "; matmuls in " << r.matmul_math()
      << "\n";
  out << "Calibration: "
      << (response.calibration().profile_name().empty()
              ? "none"
              : response.calibration().profile_name())
      << (response.upper_bound() ? " (pure roofline: speeds are upper bounds)"
                                 : "")
      << (response.calibration().match().empty()
              ? std::string()
              : absl::StrCat("; matched by ", response.calibration().match()))
      << "\n";
  for (const std::string& w : r.warnings()) out << "Warning: " << w << "\n";
  out << "\nSummary\n";
  Table summary;
  // Without a compute roof the prefill has no bound: its memory-roof time
  // is only a lower bound on time (an upper bound on speed), said so.
  const bool prefill_known = r.compute_roof_known();
  summary.rows = {
      {"TTFT", prefill_known
                   ? Seconds(r.ttft_seconds())
                   : absl::StrCat("unknown (>= ", Seconds(r.ttft_seconds()),
                                  ": memory roof only, compute roof unknown)")},
      {"TPOT mean", absl::StrCat(Seconds(r.tpot_mean_seconds()), " (first ",
                                 Seconds(r.tpot_first_seconds()), ", last ",
                                 Seconds(r.tpot_last_seconds()), ")")},
      {"End to end",
       prefill_known ? Seconds(r.e2e_seconds())
                     : absl::StrCat(">= ", Seconds(r.e2e_seconds()),
                                    " (prefill at its memory roof only)")},
      {"Prefill",
       prefill_known
           ? absl::StrCat(Si(r.prefill_tokens_per_second()), " tok/s")
           : absl::StrCat("unknown (<= ", Si(r.prefill_tokens_per_second()),
                          " tok/s: memory roof only, compute roof unknown)")},
      {"Decode",
       absl::StrCat(Si(r.decode_tokens_per_second_per_sequence()),
                    " tok/s per sequence, ",
                    Si(r.decode_tokens_per_second_total()), " tok/s total")},
      {"Ridge point",
       r.compute_roof_known()
           ? absl::StrCat(Fixed3(r.ridge_point_flops_per_byte()), " FLOP/B")
           : std::string("unknown (compute roof unknown)")},
  };
  const v1::ParameterCounts& pc = r.parameters();
  summary.rows.push_back(
      {"Parameters",
       absl::StrCat(Si(pc.total()), " total, ", Si(pc.active_per_token()),
                    " active per token, ", Si(pc.embedding()), " embedding, ",
                    pc.lm_head() > 0 ? Si(pc.lm_head()) : std::string("tied"),
                    " LM head")});
  if (!r.memory().spilled().empty()) {
    summary.rows.push_back({"Off the device", r.memory().spilled()});
  }
  if (!r.compute_roof_known()) {
    summary.rows.push_back(
        {"Compute roof",
         "unknown: no published peak for this math; times are memory-roof "
         "times, compute-bound phases are not bounded"});
  }
  const v1::Economy& e = r.economy();
  if (e.has_joules_per_output_token()) {
    summary.rows.push_back(
        {"Energy", absl::StrCat(Fixed3(e.joules_per_output_token()),
                                " J/token (", e.energy_method(), ")")});
  }
  if (e.has_usd_per_million_output_tokens()) {
    summary.rows.push_back(
        {"Cost", absl::StrCat("$", Fixed3(e.usd_per_million_output_tokens()),
                              " per million output tokens")});
  }
  if (e.has_g_co2e_per_million_output_tokens()) {
    summary.rows.push_back(
        {"Carbon", absl::StrCat(Si(e.g_co2e_per_million_output_tokens(), "g"),
                                " CO2e per million output tokens")});
  }
  if (!e.note().empty()) summary.rows.push_back({"Economy note", e.note()});
  PrintTable(summary, TableStyle::kText, out);

  const v1::MemoryFootprint& m = r.memory();
  out << "\nMemory: "
      << (m.fits() ? "fits" : absl::StrCat("DOES NOT FIT: ", m.not_fitting()))
      << (m.spilled().empty() ? std::string()
                              : absl::StrCat("; off the device: ", m.spilled()))
      << "\n";
  bool missing = false;
  for (const v1::TierUsage& t : m.tiers()) {
    missing = missing || t.missing_weights_bytes() > 0 ||
              t.missing_kv_cache_bytes() > 0 ||
              t.missing_activations_bytes() > 0;
  }
  Table tiers{{">tier", "name", ">capacity", ">weights", ">KV cache",
               ">activations", ">used"}};
  if (missing) tiers.headers.push_back(">missing");
  for (const v1::TierUsage& t : m.tiers()) {
    tiers.rows.push_back({absl::StrCat(t.tier()), t.name(),
                          Bytes(t.capacity_bytes()), Bytes(t.weights_bytes()),
                          Bytes(t.kv_cache_bytes()),
                          Bytes(t.activations_bytes()), Bytes(t.used_bytes())});
    if (missing) {
      tiers.rows.back().push_back(
          Bytes(t.missing_weights_bytes() + t.missing_kv_cache_bytes() +
                t.missing_activations_bytes()));
    }
  }
  PrintTable(tiers, TableStyle::kText, out);

  const std::vector<std::string> op_headers = {
      "op",      ">layers", "math",   ">FLOPs", ">bytes",
      ">FLOP/B", ">time",   ">share", "bound",  "where"};
  for (const v1::StepResult* step : {&r.prefill(), &r.decode()}) {
    out << "\n"
        << (step == &r.prefill() ? "Prefill" : "Decode") << " ("
        << step->steps() << (step->steps() == 1 ? " step, " : " steps, ")
        << step->tokens() << " tokens per step, "
        << Seconds(step->totals().seconds()) << ")\n";
    if (request.view() == v1::ANALYSIS_VIEW_BASIC) continue;
    Table ops{op_headers};
    AddOpRows(*step, r, false, &ops);
    PrintTable(ops, TableStyle::kText, out);
  }
  out << "\nBottleneck: " << r.bottleneck().text() << "\n";
  if (!r.suggestions().empty()) {
    out << "\nSuggestions\n";
    for (const v1::Suggestion& s : r.suggestions()) {
      out << "  - " << s.text() << "\n";
    }
  }
}

Outcome Analyze(Context& ctx) {
  v1::AnalyzeRequest request;
  if (Outcome o = BuildAnalyze(ctx.flags, &request)) return o;
  if (Outcome o = MakeClient(ctx)) return o;
  absl::StatusOr<v1::AnalyzeResponse> response = ctx.client->Analyze(request);
  if (!response.ok()) return Failed(response.status());
  switch (ctx.format) {
    case Format::kJson:
      ctx.out << Json(*response) << "\n";
      break;
    case Format::kCsv: {
      if (request.view() == v1::ANALYSIS_VIEW_BASIC) {
        // No per-op tables in this view: one row of totals per phase.
        Table phases{{"phase", "steps", "tokens", "kv_length", "flops", "bytes",
                      "compute_seconds", "memory_seconds", "seconds"}};
        for (const v1::StepResult* step :
             {&response->result().prefill(), &response->result().decode()}) {
          const v1::StepTotals& t = step->totals();
          phases.rows.push_back(
              {step->phase(), absl::StrCat(step->steps()),
               absl::StrCat(step->tokens()), absl::StrCat(step->kv_length()),
               Raw(t.flops()), Raw(t.bytes()), Raw(t.compute_seconds()),
               Raw(t.memory_seconds()), Raw(t.seconds())});
        }
        PrintTable(phases, TableStyle::kCsv, ctx.out);
        break;
      }
      Table ops{{"phase", "op", "layer_group", "layers", "math", "flops",
                 "bytes", "intensity", "seconds", "share", "bound", "where"}};
      AddOpRows(response->result().prefill(), response->result(), true, &ops);
      AddOpRows(response->result().decode(), response->result(), true, &ops);
      PrintTable(ops, TableStyle::kCsv, ctx.out);
      break;
    }
    case Format::kTable:
      PrintAnalyzeText(request, *response, ctx.out);
      break;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// sweep
// ---------------------------------------------------------------------------

std::vector<FlagSpec> SweepFlags() {
  std::vector<FlagSpec> flags = {
      {"model", "ID,...", "catalog model ids"},
      {"model-config", "FILE.json,...", "Hugging Face config.json files"},
      {"hardware", "ID,...", "platform ids"},
      {"hardware-file", "FILE.json,...", "inline hardware files (proto JSON)"},
      {"batch", "N,...", "batch sizes (default 1)"},
      {"prompt", "N,...", "prompt lengths (default 512)"},
      {"gen", "N,...", "generated lengths (default 128)"},
      {"shard", "I/N", "compute only points with index % N == I"},
      {"full", "", "attach the full analysis to each point (json only)"},
  };
  for (const auto* list : {&ScenarioFlags(), &CommonFlags()}) {
    flags.insert(flags.end(), list->begin(), list->end());
  }
  // In a sweep weights/activations/kv take comma lists.
  for (FlagSpec& f : flags) {
    if (f.name == "weights" || f.name == "activations" || f.name == "kv") {
      f.value_name = "FMT,...";
      f.help = absl::StrCat(f.help, "; the sweep covers every combination");
    }
  }
  return flags;
}

Outcome BuildSweep(const ParsedFlags& flags, v1::SweepRequest* request) {
  if (Outcome o = NoPositional(flags)) return o;
  for (const std::string& id : flags.GetList("model")) {
    request->add_models()->set_catalog_id(id);
  }
  for (const std::string& path : flags.GetList("model-config")) {
    if (Outcome o = ReadModelConfig(path, request->add_models())) return o;
  }
  for (const std::string& id : flags.GetList("hardware")) {
    request->add_hardware()->set_platform_id(id);
  }
  for (const std::string& path : flags.GetList("hardware-file")) {
    if (Outcome o = ReadHardwareFile(
            path, request->add_hardware()->mutable_description())) {
      return o;
    }
  }
  if (request->models().empty()) {
    return Usage("give --model ID,... and/or --model-config FILE.json,...");
  }
  if (request->hardware().empty()) {
    return Usage("give --hardware ID,... and/or --hardware-file FILE.json,...");
  }
  constexpr int64_t kAny = std::numeric_limits<int64_t>::max();
  for (auto [flag, list] :
       {std::pair{"batch", request->mutable_batch_sizes()},
        std::pair{"prompt", request->mutable_prompt_tokens()},
        std::pair{"gen", request->mutable_generated_tokens()}}) {
    absl::StatusOr<std::vector<int64_t>> values =
        flags.GetIntList(flag, -kAny, kAny);
    if (!values.ok()) return Usage(values.status());
    list->Add(values->begin(), values->end());
  }
  if (flags.Has("weights") || flags.Has("activations") || flags.Has("kv")) {
    auto or_default = [](std::vector<std::string> v) {
      return v.empty() ? std::vector<std::string>{""} : v;
    };
    for (const std::string& w : or_default(flags.GetList("weights"))) {
      for (const std::string& a : or_default(flags.GetList("activations"))) {
        for (const std::string& k : or_default(flags.GetList("kv"))) {
          v1::Formats* f = request->add_formats();
          f->set_weights(w);
          f->set_activations(a);
          f->set_kv_cache(k);
        }
      }
    }
  }
  if (auto shard = flags.Get("shard")) {
    // Strict: sscanf("%u") took "-1" as 4294967295 and ignored "0/4x".
    uint32_t index = 0, count = 0;
    std::pair<absl::string_view, absl::string_view> parts =
        absl::StrSplit(*shard, absl::MaxSplits('/', 1));
    auto digits = [](absl::string_view t) {
      return !t.empty() && std::all_of(t.begin(), t.end(), absl::ascii_isdigit);
    };
    if (!digits(parts.first) || !digits(parts.second) ||
        !absl::SimpleAtoi(parts.first, &index) ||
        !absl::SimpleAtoi(parts.second, &count)) {
      return Usage(absl::StrCat(
          "--shard: expected I/N, two integers in [0, 4294967295] (e.g. "
          "0/4), got '",
          *shard, "'"));
    }
    request->set_shard_index(index);
    request->set_shard_count(count);
  }
  request->set_include_full_result(flags.Has("full"));
  return FillScenarioFlags(flags, request);
}

Outcome Sweep(Context& ctx) {
  v1::SweepRequest request;
  if (Outcome o = BuildSweep(ctx.flags, &request)) return o;
  if (Outcome o = MakeClient(ctx)) return o;
  // Tables and CSV have no place for it; the server would compute it for
  // nothing.
  if (request.include_full_result() && ctx.format != Format::kJson) {
    return Usage("--full applies to --format json only");
  }
  Table table{{">#", "model", "hardware", ">batch", ">prompt", ">gen",
               "weights", "act", "kv", ">TTFT", ">TPOT", ">tok/s", "fits",
               "spilled", "bound", "bottleneck", ">$/Mtok", ">J/tok", ">gCO2e/Mtok"}};
  if (ctx.csv()) {
    table.headers = {"index",
                     "model",
                     "hardware",
                     "batch",
                     "prompt",
                     "gen",
                     "weights",
                     "activations",
                     "kv_cache",
                     "ttft_seconds",
                     "tpot_mean_seconds",
                     "decode_tokens_per_second_total",
                     "fits",
                     "spilled",
                     "bound",
                     "bottleneck_op",
                     "usd_per_million_output_tokens",
                     "joules_per_output_token",
                     "g_co2e_per_million_output_tokens",
                     "error"};
  }
  int errors = 0;
  absl::Status status =
      ctx.client->Sweep(request, [&](const v1::SweepPoint& p) {
        if (ctx.format == Format::kJson) {
          ctx.out << Json(p) << "\n";  // JSON Lines: one point per line
          return;
        }
        const v1::SweepSummary& s = p.summary();
        std::vector<std::string> row;
        if (p.has_error()) {
          ++errors;
          row = {absl::StrCat(p.index())};
          row.resize(table.headers.size() - 1);
          row.push_back(absl::StrCat("error: ", p.error().message()));
        } else {
          // Same columns both ways: full precision and true/false in CSV,
          // SI units and yes/NO for people.
          const bool csv = ctx.csv();
          auto num = [csv](double v, std::string (*human)(double)) {
            return csv ? Raw(v) : human(v);
          };
          row = {absl::StrCat(p.index()),
                 s.model_id(),
                 s.hardware_id(),
                 absl::StrCat(s.batch()),
                 absl::StrCat(s.prompt_tokens()),
                 absl::StrCat(s.generated_tokens()),
                 s.weights_format(),
                 s.activations_format(),
                 s.kv_cache_format(),
                 num(s.ttft_seconds(), Seconds),
                 num(s.tpot_mean_seconds(), Seconds),
                 csv ? Raw(s.decode_tokens_per_second_total())
                     : Si(s.decode_tokens_per_second_total()),
                 s.fits() ? (csv ? "true" : "yes") : (csv ? "false" : "NO"),
                 s.spilled() ? (csv ? "true" : "YES") : (csv ? "false" : "no"),
                 s.bound(),
                 s.bottleneck_op(),
                 s.has_usd_per_million_output_tokens()
                     ? num(s.usd_per_million_output_tokens(), Fixed3)
                     : (csv ? "" : "-"),
                 s.has_joules_per_output_token()
                     ? num(s.joules_per_output_token(), Fixed3)
                     : (csv ? "" : "-"),
                 s.has_g_co2e_per_million_output_tokens()
                     ? num(s.g_co2e_per_million_output_tokens(),
                           +[](double v) { return Si(v); })
                     : (csv ? "" : "-")};
          if (csv) row.push_back("");  // the error column
        }
        table.rows.push_back(std::move(row));
      });
  // A failed sweep prints nothing on stdout (JSON Lines already streamed
  // stay: each line is a whole point).
  if (!status.ok()) return Failed(status);
  if (ctx.format != Format::kJson) PrintTable(table, ctx.style(), ctx.out);
  if (errors > 0) {
    ctx.err << "ridgeline sweep: " << errors
            << " point(s) failed; see their error column\n";
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// kernel
// ---------------------------------------------------------------------------

std::vector<FlagSpec> KernelFlags() {
  std::vector<FlagSpec> flags = {
      {"hardware", "ID", "platform id (see `ridgeline hardware`)"},
      {"hardware-file", "FILE.json",
       "inline hardware: a ridgeline.v1.Hardware in proto JSON"},
      {"batch", "N", "attention: sequences (default 1)"},
      {"q-heads", "N", "attention: query heads (default 32)"},
      {"kv-heads", "N", "attention: KV heads (default = --q-heads)"},
      {"head-dim", "N", "attention: head dimension (default 128)"},
      {"kv-len", "N", "attention: KV-cache length in tokens (default 2048)"},
      {"dtype", "FMT", "attention: q/k/v/output format (default fp16)"},
      {"m", "N", "gemm: rows of A and C (tokens)"},
      {"n", "N", "gemm: columns of B and C"},
      {"k", "N", "gemm: inner dimension"},
      {"a-format", "FMT", "gemm: activations (A, C) format (default fp16)"},
      {"b-format", "FMT", "gemm: weights (B) format (default --a-format)"},
      {"gemv-max-tokens", "N",
       "gemm: m at or below this is a GEMV (default 64)"},
      {"fp16-accumulation", "", "gemm: fp16 accumulates in fp16 (GeForce: 2x)"},
      {"no-fp16-accumulation", "",
       "gemm: fp16 accumulates in fp32 even if the profile's framework does not"},
      {"cold", "",
       "every call streams from device memory (default: operands that fit "
       "stay in on-chip SRAM between calls)"},
      {"profile", "NAME", "calibration profile by name"},
      {"framework", "NAME",
       "pick the best calibration profile for this framework"},
      {"pure-roofline", "", "ignore calibration: the speed upper bound"},
  };
  const std::vector<FlagSpec>& common = CommonFlags();
  flags.insert(flags.end(), common.begin(), common.end());
  return flags;
}

Outcome BuildKernel(const std::string& kind, const ParsedFlags& flags,
                    v1::AnalyzeKernelRequest* request) {
  if (flags.Has("hardware") == flags.Has("hardware-file")) {
    return Usage(
        "give exactly one of --hardware ID or --hardware-file FILE.json");
  }
  if (auto id = flags.Get("hardware")) {
    request->mutable_hardware()->set_platform_id(*id);
  }
  if (auto path = flags.Get("hardware-file")) {
    if (Outcome o = ReadHardwareFile(
            *path, request->mutable_hardware()->mutable_description())) {
      return o;
    }
  }
  constexpr int64_t kAny = std::numeric_limits<int64_t>::max();
  // Flags of the other kernel are a mistake worth naming.
  const std::vector<std::string> attention_only = {
      "batch", "q-heads", "kv-heads", "head-dim", "kv-len", "dtype"};
  const std::vector<std::string> gemm_only = {
      "m", "n", "k", "a-format", "b-format", "gemv-max-tokens"};
  for (const std::string& f :
       kind == "attention" ? gemm_only : attention_only) {
    if (flags.Has(f)) {
      return Usage(
          absl::StrCat("--", f, " does not apply to `kernel ", kind, "`"));
    }
  }
  // Ranges are checked by the service (one place); here only the syntax.
  auto get = [&](const char* flag,
                 const std::function<void(int64_t)>& set) -> Outcome {
    absl::StatusOr<std::optional<int64_t>> v = flags.GetInt(flag, -kAny, kAny);
    if (!v.ok()) return Usage(v.status());
    if (*v) set(**v);
    return std::nullopt;
  };
  if (kind == "attention") {
    v1::DecodeAttentionKernelShape* a = request->mutable_decode_attention();
    for (const auto& [flag, set] :
         std::vector<std::pair<const char*, std::function<void(int64_t)>>>{
             {"batch", [a](int64_t v) { a->set_batch(v); }},
             {"q-heads", [a](int64_t v) { a->set_num_q_heads(v); }},
             {"kv-heads", [a](int64_t v) { a->set_num_kv_heads(v); }},
             {"head-dim", [a](int64_t v) { a->set_head_dim(v); }},
             {"kv-len", [a](int64_t v) { a->set_kv_length(v); }}}) {
      if (Outcome o = get(flag, set)) return o;
    }
    if (auto v = flags.Get("dtype")) a->set_dtype(*v);
  } else {
    v1::GemmKernelShape* g = request->mutable_gemm();
    for (const char* required : {"m", "n", "k"}) {
      if (!flags.Has(required)) {
        return Usage("give --m N --n N --k N (C[m x n] = A[m x k] B[k x n])");
      }
    }
    if (Outcome o = get("m", [g](int64_t v) { g->set_m(v); })) return o;
    if (Outcome o = get("n", [g](int64_t v) { g->set_n(v); })) return o;
    if (Outcome o = get("k", [g](int64_t v) { g->set_k(v); })) return o;
    if (auto v = flags.Get("a-format")) g->set_a_format(*v);
    if (auto v = flags.Get("b-format")) g->set_b_format(*v);
    if (Outcome o = get("gemv-max-tokens", [request](int64_t v) {
          request->set_gemv_max_tokens(v);
        })) {
      return o;
    }
    if (flags.Has("fp16-accumulation")) request->set_fp16_accumulation(true);
    if (flags.Has("no-fp16-accumulation")) request->set_fp16_accumulation(false);
  }
  if (flags.Has("cold")) request->set_warm_cache(false);
  if (flags.Has("profile") && flags.Has("framework")) {
    return Usage("give at most one of --profile NAME or --framework NAME");
  }
  if (auto profile = flags.Get("profile")) {
    request->mutable_calibration()->set_profile(*profile);
  }
  if (auto framework = flags.Get("framework")) {
    request->mutable_calibration()->set_framework(*framework);
  }
  if (flags.Has("pure-roofline")) request->set_pure_roofline(true);
  return std::nullopt;
}

std::string KernelTitle(const v1::AnalyzeKernelRequest& request,
                        const v1::AnalyzeKernelResponse& response) {
  if (request.has_decode_attention()) {
    const v1::DecodeAttentionKernelShape& a = request.decode_attention();
    const int64_t q = a.has_num_q_heads() ? a.num_q_heads() : 32;
    return absl::StrCat("decode attention on ", response.hardware_id(),
                        ": batch ", a.has_batch() ? a.batch() : 1, ", ", q,
                        " q / ", a.has_num_kv_heads() ? a.num_kv_heads() : q,
                        " kv heads, head dim ",
                        a.has_head_dim() ? a.head_dim() : 128, ", KV length ",
                        a.has_kv_length() ? a.kv_length() : 2048, ", ",
                        a.dtype().empty() ? "fp16" : a.dtype());
  }
  const v1::GemmKernelShape& g = request.gemm();
  const std::string a = g.a_format().empty() ? "fp16" : g.a_format();
  return absl::StrCat("GEMM on ", response.hardware_id(), ": m ", g.m(), ", n ",
                      g.n(), ", k ", g.k(), "; A ", a, ", B ",
                      g.b_format().empty() ? a : g.b_format(), " (",
                      response.op_class(), ")");
}

void PrintKernelText(const v1::AnalyzeKernelRequest& request,
                     const v1::AnalyzeKernelResponse& response,
                     std::ostream& out) {
  out << KernelTitle(request, response) << "\n";
  out << "Calibration: "
      << (response.calibration().profile_name().empty()
              ? "none"
              : response.calibration().profile_name())
      << (response.upper_bound() ? " (pure roofline: the time is a lower "
                                   "bound, the speed an upper bound)"
                                 : "")
      << "\n";
  if (!response.compute_roof_known()) {
    out << "Compute roof unknown: no published peak for "
        << response.bound().math()
        << "; compute time 0, the bound is the memory roof only\n";
  }
  out << "\n";
  Table t{{"", ">predicted", ">bound"}};
  const v1::KernelCost& p = response.result();
  const v1::KernelCost& b = response.bound();
  auto tier = [](const v1::KernelCost& c) {
    return absl::StrCat(
        c.tier_name(), " (tier ", c.tier(), ")",
        c.onchip_resident() ? ", on-chip resident" : "",
        c.onchip_bandwidth_unknown() ? " (on-chip bandwidth unknown)" : "");
  };
  auto compute = [&](const v1::KernelCost& c) {
    return response.compute_roof_known() ? Seconds(c.compute_seconds())
                                         : std::string("unknown");
  };
  t.rows = {
      {"FLOPs", Si(p.flops()), Si(b.flops())},
      {"bytes", Bytes(p.bytes()), Bytes(b.bytes())},
      {"FLOP/B", Fixed3(p.intensity()), Fixed3(b.intensity())},
      {"math", p.math(), b.math()},
      {"operands from", tier(p), tier(b)},
      {"compute time", compute(p), compute(b)},
      {"memory time", Seconds(p.memory_seconds()), Seconds(b.memory_seconds())},
      {"overhead", Seconds(p.overhead_seconds()),
       Seconds(b.overhead_seconds())},
      {"time", Seconds(p.seconds()), Seconds(b.seconds())},
      {"bound", p.bound(), b.bound()},
      {"attained", Si(p.attained_flops_per_second(), "FLOP/s"),
       Si(b.attained_flops_per_second(), "FLOP/s")},
      {"attained bandwidth", Si(p.attained_bytes_per_second(), "B/s"),
       Si(b.attained_bytes_per_second(), "B/s")},
  };
  PrintTable(t, TableStyle::kText, out);
}

Outcome KernelCommand(Context& ctx) {
  const auto& pos = ctx.flags.positional();
  if (pos.size() != 1 || (pos[0] != "attention" && pos[0] != "gemm")) {
    return Usage(
        "usage: ridgeline kernel attention|gemm --hardware ID [flags]");
  }
  v1::AnalyzeKernelRequest request;
  if (Outcome o = BuildKernel(pos[0], ctx.flags, &request)) return o;
  if (Outcome o = MakeClient(ctx)) return o;
  absl::StatusOr<v1::AnalyzeKernelResponse> response =
      ctx.client->AnalyzeKernel(request);
  if (!response.ok()) return Failed(response.status());
  switch (ctx.format) {
    case Format::kJson:
      ctx.out << Json(*response) << "\n";
      break;
    case Format::kCsv: {
      Table t{{"kernel", "hardware", "variant", "op_class", "flops", "bytes",
               "intensity", "math", "tier", "onchip_resident",
               "compute_seconds", "memory_seconds", "overhead_seconds",
               "seconds", "bound", "profile"}};
      for (const auto& [variant, c] :
           {std::pair{"predicted", &response->result()},
            std::pair{"bound", &response->bound()}}) {
        t.rows.push_back({response->kernel(), response->hardware_id(), variant,
                          response->op_class(), Raw(c->flops()),
                          Raw(c->bytes()), Raw(c->intensity()), c->math(),
                          absl::StrCat(c->tier()),
                          c->onchip_resident() ? "true" : "false",
                          Raw(c->compute_seconds()), Raw(c->memory_seconds()),
                          Raw(c->overhead_seconds()), Raw(c->seconds()),
                          c->bound(), response->calibration().profile_name()});
      }
      PrintTable(t, TableStyle::kCsv, ctx.out);
      break;
    }
    case Format::kTable:
      PrintKernelText(request, *response, ctx.out);
      break;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// hardware, models
// ---------------------------------------------------------------------------

// (name, value) of each published rate, in MathType order.
std::vector<std::pair<std::string, double>> Rates(const v1::PerMathType& p) {
  std::vector<std::pair<std::string, double>> out;
  const auto* d = p.GetDescriptor();
  const auto* refl = p.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const auto* f = d->field(i);
    if (refl->HasField(p, f))
      out.emplace_back(f->name(), refl->GetDouble(p, f));
  }
  return out;
}

bool IsDeviceMemory(const v1::MemoryTier& t) {
  return t.kind() == "hbm" || t.kind() == "gddr" || t.kind() == "lpddr" ||
         t.kind() == "ddr" || t.kind() == "unified";
}

std::vector<FlagSpec> CatalogFlags(std::string_view filter_help) {
  std::vector<FlagSpec> flags = CommonFlags();
  if (!filter_help.empty()) {
    flags.insert(flags.begin(), {"family", "NAME", std::string(filter_help)});
  }
  return flags;
}

void PrintHardware(const v1::Hardware& h, const Context& ctx) {
  Table info;
  auto opt = [](bool has, double v, const std::string& unit) {
    return has ? Si(v, unit) : std::string("not published");
  };
  info.rows = {
      {"id", h.id()},
      {"name", h.display_name()},
      {"vendor", h.vendor()},
      {"family", h.family()},
      {"plugin", h.plugin()},
      // 0 in the proto (and the ABI) means not published.
      {"launch overhead", h.kernel_launch_seconds() > 0
                              ? Seconds(h.kernel_launch_seconds())
                              : std::string("not published")},
      {"TDP", opt(h.has_tdp_watts(), h.tdp_watts(), "W")},
      {"idle", opt(h.has_idle_watts(), h.idle_watts(), "W")},
      {"price", h.has_price_usd() ? absl::StrCat("$", Fixed3(h.price_usd()))
                                  : std::string("not published")},
      {"embodied",
       opt(h.has_embodied_kg_co2e(), h.embodied_kg_co2e() * 1e3, "g CO2e")},
      {"interconnect", opt(h.has_interconnect_bytes_per_second(),
                           h.interconnect_bytes_per_second(), "B/s")},
      {"efficiency hook", std::string(h.has_efficiency_hook() ? "yes" : "no")}};
  for (const auto& [name, rate] : Rates(h.peak_ops_per_second())) {
    // The engine's math type names ("fp16_acc16" field -> "fp16-acc16").
    info.rows.push_back({absl::StrCat("peak ", absl::StrReplaceAll(name, {{"_", "-"}})),
                         Si(rate, "OPS")});
  }
  if (ctx.csv()) {
    info.headers = {"field", "value"};
  }
  PrintTable(info, ctx.style(), ctx.out, 0);
  if (ctx.csv()) return;
  ctx.out << "\nMemory tiers (fastest first)\n";
  Table tiers{{">#", "name", "kind", ">capacity", ">read", ">write", ">latency",
               "PIM"}};
  for (int i = 0; i < h.tiers_size(); ++i) {
    const v1::MemoryTier& t = h.tiers(i);
    tiers.rows.push_back(
        {absl::StrCat(i), t.name(), t.kind(), Bytes(t.capacity_bytes()),
         Si(t.read_bandwidth_bytes_per_second(), "B/s"),
         Si(t.write_bandwidth_bytes_per_second(), "B/s"),
         t.latency_seconds() > 0 ? Seconds(t.latency_seconds()) : std::string("-"),
         t.has_near_memory_compute()
             ? Si(t.near_memory_compute().internal_bandwidth_bytes_per_second(),
                  "B/s internal")
             : "-"});
  }
  PrintTable(tiers, TableStyle::kText, ctx.out);
  ctx.out << "\nSources\n";
  for (const std::string& s : h.sources()) ctx.out << "  - " << s << "\n";
}

// `ridgeline <noun> [list | show ID]`: the ID after "show", or nullopt for
// a listing.
absl::StatusOr<std::optional<std::string>> ShowId(const ParsedFlags& flags,
                                                  const char* noun) {
  const auto& pos = flags.positional();
  if (pos.empty() || (pos.size() == 1 && pos[0] == "list")) {
    return std::optional<std::string>();
  }
  if (pos.size() == 2 && pos[0] == "show") {
    return std::optional<std::string>(pos[1]);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("usage: ridgeline ", noun, " [list | show ID]"));
}

// A catalog response as canonical JSON, or through `print` for table/CSV.
template <typename Response, typename Print>
Outcome PrintCatalog(Context& ctx, const absl::StatusOr<Response>& response,
                     Print print) {
  if (!response.ok()) return Failed(response.status());
  if (ctx.format == Format::kJson) {
    ctx.out << Json(*response) << "\n";
  } else {
    print(*response);
  }
  return std::nullopt;
}

void PrintHardwareList(const v1::ListHardwareResponse& response,
                       const Context& ctx) {
  Table table{{"id", "family", "name", ">peak", ">memory", ">bandwidth"}};
  if (ctx.csv()) {
    table.headers = {"id",
                     "family",
                     "name",
                     "peak_type",
                     "peak_ops_per_second",
                     "memory_bytes",
                     "bandwidth_bytes_per_second"};
  }
  for (const v1::Hardware& h : response.hardware()) {
    // The headline rate: bf16 (or fp16) when published, else the largest.
    auto rates = Rates(h.peak_ops_per_second());
    std::pair<std::string, double> peak{"", 0};
    for (const auto& r : rates) {
      if (r.first == "bf16" || r.first == "fp16") {
        peak = r;
        break;
      }
      if (r.second > peak.second) peak = r;
    }
    // The headline memory: the first device-memory tier (not on-chip SRAM,
    // not host memory over a link, not flash); else the largest tier.
    const v1::MemoryTier* main_tier = nullptr;
    for (const v1::MemoryTier& t : h.tiers()) {
      if (IsDeviceMemory(t)) {
        main_tier = &t;
        break;
      }
    }
    for (const v1::MemoryTier& t : h.tiers()) {
      if (main_tier == nullptr ||
          (!IsDeviceMemory(*main_tier) &&
           t.capacity_bytes() > main_tier->capacity_bytes())) {
        main_tier = &t;
      }
    }
    double capacity = main_tier ? main_tier->capacity_bytes() : 0;
    double bandwidth =
        main_tier ? main_tier->read_bandwidth_bytes_per_second() : 0;
    if (ctx.csv()) {
      table.rows.push_back({h.id(), h.family(), h.display_name(), peak.first,
                            Raw(peak.second), Raw(capacity), Raw(bandwidth)});
    } else {
      table.rows.push_back(
          {h.id(), h.family(), h.display_name(),
           peak.first.empty()
               ? "-"
               : absl::StrCat(Si(peak.second, "OPS"), " ", peak.first),
           Bytes(capacity), Si(bandwidth, "B/s")});
    }
  }
  PrintTable(table, ctx.style(), ctx.out, 0);
  if (!ctx.csv()) {
    for (const v1::PluginInfo& p : response.plugins()) {
      if (!p.loaded()) {
        ctx.out << "refused plugin " << p.path() << ": " << p.reason() << "\n";
      }
    }
  }
}

Outcome HardwareCommand(Context& ctx) {
  absl::StatusOr<std::optional<std::string>> show =
      ShowId(ctx.flags, "hardware");
  if (!show.ok()) return Usage(show.status());
  if (Outcome o = MakeClient(ctx)) return o;
  if (*show) {
    v1::GetHardwareRequest request;
    request.set_id(**show);
    return PrintCatalog(ctx, ctx.client->GetHardware(request),
                        [&](const v1::GetHardwareResponse& r) {
                          PrintHardware(r.hardware(), ctx);
                        });
  }
  v1::ListHardwareRequest request;
  request.set_family(ctx.flags.Get("family").value_or(""));
  return PrintCatalog(
      ctx, ctx.client->ListHardware(request),
      [&](const v1::ListHardwareResponse& r) { PrintHardwareList(r, ctx); });
}

void PrintModel(const v1::Model& m, const Context& ctx) {
  Table info;
  info.rows = {
      {"id", m.id()},
      {"name", m.display_name()},
      {"architecture", m.architecture()},
      {"source", m.source()},
      {"parameters", Si(m.parameters().total())},
      {"active per token", Si(m.parameters().active_per_token())},
      {"layers", absl::StrCat(m.num_layers())},
      {"hidden size", absl::StrCat(m.hidden_size())},
      {"intermediate size", absl::StrCat(m.intermediate_size())},
      {"attention heads", absl::StrCat(m.num_attention_heads())},
      {"KV heads", absl::StrCat(m.num_kv_heads())},
      {"head dim", absl::StrCat(m.head_dim())},
      {"vocabulary", absl::StrCat(m.vocab_size())},
      {"max context", absl::StrCat(m.max_context())},
      {"KV elements per token", Si(m.kv_elements_per_token())},
      {"norm / FFN", absl::StrCat(m.norm(), " / ", m.ffn())},
      {"sliding layers",
       m.sliding_layers() == "none"
           ? "none"
           : absl::StrCat(m.sliding_layers(), ", window ", m.sliding_window())},
  };
  if (m.has_moe()) {
    info.rows.push_back(
        {"MoE", absl::StrCat(m.moe().num_routed_experts(), " routed (top ",
                             m.moe().experts_per_token(), "), ",
                             m.moe().num_shared_experts(), " shared")});
  }
  if (m.has_mla()) {
    info.rows.push_back(
        {"MLA", absl::StrCat("kv_lora_rank ", m.mla().kv_lora_rank(),
                             ", q_lora_rank ", m.mla().q_lora_rank())});
  }
  if (ctx.csv()) info.headers = {"field", "value"};
  PrintTable(info, ctx.style(), ctx.out, 0);
}

void PrintModelList(const v1::ListModelsResponse& response,
                    const Context& ctx) {
  Table table{{"id", "name", "architecture", ">params", ">active", ">layers",
               ">heads/kv", ">context"}};
  for (const v1::Model& m : response.models()) {
    if (ctx.csv()) {
      table.rows.push_back(
          {m.id(), m.display_name(), m.architecture(),
           Raw(m.parameters().total()), Raw(m.parameters().active_per_token()),
           absl::StrCat(m.num_layers()),
           absl::StrCat(m.num_attention_heads(), "/", m.num_kv_heads()),
           absl::StrCat(m.max_context())});
    } else {
      table.rows.push_back(
          {m.id(), m.display_name(), m.architecture(),
           Si(m.parameters().total()), Si(m.parameters().active_per_token()),
           absl::StrCat(m.num_layers()),
           absl::StrCat(m.num_attention_heads(), "/", m.num_kv_heads()),
           absl::StrCat(m.max_context())});
    }
  }
  if (ctx.csv()) {
    table.headers = {"id",
                     "name",
                     "architecture",
                     "parameters",
                     "active_parameters",
                     "layers",
                     "heads_kv_heads",
                     "max_context"};
  }
  PrintTable(table, ctx.style(), ctx.out, 0);
}

Outcome ModelsCommand(Context& ctx) {
  absl::StatusOr<std::optional<std::string>> show = ShowId(ctx.flags, "models");
  if (!show.ok()) return Usage(show.status());
  if (Outcome o = MakeClient(ctx)) return o;
  if (*show) {
    v1::GetModelRequest request;
    request.set_id(**show);
    return PrintCatalog(
        ctx, ctx.client->GetModel(request),
        [&](const v1::GetModelResponse& r) { PrintModel(r.model(), ctx); });
  }
  return PrintCatalog(
      ctx, ctx.client->ListModels(v1::ListModelsRequest()),
      [&](const v1::ListModelsResponse& r) { PrintModelList(r, ctx); });
}

// ---------------------------------------------------------------------------
// Dispatch
// ---------------------------------------------------------------------------

// ---------------------------------------------------------------------------
// step (step.cc reads the steps and prints; the scenario is analyze's)
// ---------------------------------------------------------------------------

std::vector<FlagSpec> StepFlags() {
  std::vector<FlagSpec> flags = StepOwnFlags();
  for (const FlagSpec& f : AnalyzeFlags()) {
    if (f.name == "batch" || f.name == "prompt" || f.name == "gen" ||
        f.name == "no-suggestions" || f.name == "view" ||
        f.name.rfind("electricity", 0) == 0 || f.name == "pue" ||
        f.name == "grid-g-co2e-per-kwh" || f.name == "amortization-years" ||
        f.name == "utilization") {
      continue;
    }
    flags.push_back(f);
  }
  return flags;
}

Outcome StepCommand(Context& ctx) {
  v1::AnalyzeRequest scenario;
  if (Outcome o = BuildAnalyze(ctx.flags, &scenario)) return o;
  v1::StepTimeRequest request;
  StepScenarioFrom(scenario, request.mutable_scenario());
  if (absl::Status s = FillStep(ctx.flags, &request); !s.ok()) return Usage(s);
  if (Outcome o = MakeClient(ctx)) return o;
  absl::StatusOr<v1::StepTimeResponse> response = ctx.client->StepTime(request);
  if (!response.ok()) return Failed(response.status());
  if (ctx.format == Format::kJson) {
    ctx.out << Json(*response) << "\n";
  } else {
    PrintStepTable(*response, ctx.csv(), ctx.out);
  }
  return std::nullopt;
}

struct Command {
  std::string_view name;
  std::string_view usage;
  std::string_view summary;
  std::function<std::vector<FlagSpec>()> flags;
  std::function<Outcome(Context&)> run;
};

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {"analyze", "ridgeline analyze --model ID --hardware ID [flags]",
       "predict one scenario: latency, throughput, memory, per-op roofline",
       AnalyzeFlags, Analyze},
      {"sweep",
       "ridgeline sweep --model ID,... --hardware ID,... [--batch N,...] "
       "[flags]",
       "the cartesian product of models, hardware, formats and workloads "
       "(json: one point per line)",
       SweepFlags, Sweep},
      {"hardware", "ridgeline hardware [list | show ID] [flags]",
       "the hardware catalog of the loaded plugins",
       [] { return CatalogFlags("only this plugin family"); }, HardwareCommand},
      {"models", "ridgeline models [list | show ID] [flags]",
       "the built-in model catalog", [] { return CatalogFlags(""); },
       ModelsCommand},
      {"kernel",
       "ridgeline kernel attention --hardware ID [--batch N] [--q-heads N] "
       "[--kv-heads N] [--head-dim N] [--kv-len N] [--dtype FMT] [flags]\n"
       "       ridgeline kernel gemm --hardware ID --m N --n N --k N "
       "[--a-format FMT] [--b-format FMT] [flags]",
       "one kernel call (decode attention or GEMM): predicted time beside "
       "the roofline bound",
       KernelFlags, KernelCommand},
      {"step",
       "ridgeline step --model ID --hardware ID --seq CONTEXT:NEW "
       "[--seq ...] [flags]",
       "the time of one forward step of a real batch: every sequence at its "
       "own context (decode tokens and prefill chunks mixed)",
       StepFlags, StepCommand},
  };
  return kCommands;
}

void PrintMainHelp(std::ostream& out) {
  out << "ridgeline: predict LLM inference performance with a roofline "
         "model\n\n"
         "usage: ridgeline [--server HOST:PORT] <command> [flags]\n\n"
         "commands:\n";
  Table table;
  for (const Command& c : Commands()) {
    table.rows.push_back({std::string(c.name), std::string(c.summary)});
  }
  table.rows.push_back({"validate", "compare predictions with measurements"});
  table.rows.push_back(
      {"calibrate", "fit a calibration profile from measurements"});
  table.rows.push_back(
      {"plan", "cheapest deployments for a traffic at TTFT/TPOT targets"});
  PrintTable(table, TableStyle::kText, out);
  out << "\nRuns in-process by default (plugins from --plugin-dir, "
         "RIDGELINE_PLUGIN_DIR or the\ninstalled folder); --server sends the "
         "same requests to a ridgeline-server.\n'ridgeline <command> --help' "
         "lists a command's flags.\n";
}

std::string OneLine(std::string text) {
  return absl::StrReplaceAll(text, {{"\n", "; "}});
}

}  // namespace

int RunCli(const std::vector<std::string>& args, std::ostream& out,
           std::ostream& err) {
  // Common flags may come before the command: split them off.
  std::vector<std::string> leading;
  size_t i = 0;
  for (; i < args.size() && args[i].starts_with("--"); ++i) {
    if (args[i] == "--help") {
      PrintMainHelp(out);
      return kOk;
    }
    leading.push_back(args[i]);
    std::string name = args[i].substr(2, args[i].find('=') - 2);
    auto spec = std::find_if(CommonFlags().begin(), CommonFlags().end(),
                             [&](const FlagSpec& s) { return s.name == name; });
    if (spec != CommonFlags().end() && !spec->value_name.empty() &&
        args[i].find('=') == std::string::npos) {
      // "ridgeline --server" used to print the whole help instead.
      if (i + 1 == args.size()) {
        err << "ridgeline: --" << name << " needs a value (" << spec->value_name
            << ")\n";
        return kUsage;
      }
      leading.push_back(args[++i]);
    }
  }
  if (args.empty()) {
    PrintMainHelp(err);
    return kUsage;
  }
  if (i == args.size()) {
    err << "ridgeline: missing command after flags (commands: analyze, sweep, "
           "step, hardware, models, kernel, validate, calibrate; see ridgeline "
           "--help)\n";
    return kUsage;
  }
  const std::string& name = args[i];
  std::vector<std::string> rest(args.begin() + i + 1, args.end());
  if (name == "help" || name == "-h") {
    PrintMainHelp(out);
    return kOk;
  }
  // validate and calibrate keep their own usage output (calibrate.h).
  if (name == "validate") return ValidateCli(rest, out, err);
  if (name == "calibrate") return CalibrateCli(rest, out, err);
  if (name == "explore" || name == "merge") return ExploreCli(name, leading, rest, out, err);
  if (name == "plan") {  // common flags (--server) may precede it
    leading.insert(leading.end(), rest.begin(), rest.end());
    return PlanCli(leading, out, err);
  }

  auto command = std::find_if(Commands().begin(), Commands().end(),
                              [&](const Command& c) { return c.name == name; });
  if (command == Commands().end()) {
    err << "ridgeline: unknown command '" << name
        << "' (commands: analyze, sweep, step, hardware, models, "
           "kernel, validate, calibrate; see ridgeline --help)\n";
    return kUsage;
  }
  std::vector<FlagSpec> specs = command->flags();
  leading.insert(leading.end(), rest.begin(), rest.end());
  absl::StatusOr<ParsedFlags> flags = ParseFlags(leading, specs);
  if (!flags.ok()) {
    err << "ridgeline " << name << ": " << flags.status().message() << "\n";
    return kUsage;
  }
  if (flags->Has("help")) {
    out << "usage: " << command->usage << "\n\n"
        << command->summary << "\n\nflags:\n"
        << FlagHelp(specs);
    return kOk;
  }
  Context ctx{*flags, Format::kTable, nullptr, out, err};
  Outcome outcome;
  try {
    outcome = command->run(ctx);
  } catch (const std::exception& e) {
    outcome = Failure{kFailed, absl::StrCat("internal error: ", e.what())};
  }
  if (!outcome) return kOk;
  err << "ridgeline " << name << ": " << OneLine(outcome->message) << "\n";
  return outcome->code;
}

}  // namespace ridgeline::cli
