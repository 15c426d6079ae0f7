#include "ridgeline/service/backend.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "ridgeline/engine/analyze.h"
#include "ridgeline/engine/kernel.h"
#include "ridgeline/engine/ranges.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/explore/grid.h"
#include "ridgeline/explore/suggestions.h"
#include "ridgeline/service/convert.h"
#include "ridgeline/service/request_scenario.h"

namespace ridgeline::service {
namespace {

using namespace request;  // NOLINT: the request-translation vocabulary

constexpr int kMaxSweepModels = 256;
constexpr int kMaxSweepHardware = 1024;
constexpr int kMaxSweepFormats = 256;
constexpr int kMaxSweepValues = 4096;
constexpr uint32_t kMaxShards = 65536;

void Summarize(const engine::AnalysisResult& r, const engine::Scenario& s,
               v1::SweepSummary* out) {
  out->set_model_id(r.model_id);
  out->set_hardware_id(r.hardware_id);
  out->set_batch(s.workload.batch);
  out->set_prompt_tokens(s.workload.prompt_tokens);
  out->set_generated_tokens(s.workload.generated_tokens);
  out->set_weights_format(s.precision.weights.name);
  out->set_activations_format(s.precision.activations.name);
  out->set_kv_cache_format(s.precision.kv_cache.name);
  out->set_ttft_seconds(r.ttft_seconds);
  out->set_tpot_mean_seconds(r.tpot_mean_seconds);
  out->set_e2e_seconds(r.e2e_seconds);
  out->set_decode_tokens_per_second_total(r.decode_tokens_per_second_total);
  out->set_fits(r.memory.fits);
  out->set_bound(std::string(engine::BoundName(r.bottleneck.bound)));
  out->set_bottleneck_op(std::string(engine::OpKindName(r.bottleneck.op)));
  out->set_matmul_math(std::string(engine::MathTypeName(r.matmul_math)));
  if (r.economy.usd_per_million_output_tokens) {
    out->set_usd_per_million_output_tokens(
        *r.economy.usd_per_million_output_tokens);
  }
  const std::string_view basis = engine::CostBasisName(r.economy.cost_basis);
  out->set_cost_basis(basis.data(), basis.size());
  if (r.economy.joules_per_output_token) {
    out->set_joules_per_output_token(*r.economy.joules_per_output_token);
  }
  if (r.economy.g_co2e_per_million_output_tokens) {
    out->set_g_co2e_per_million_output_tokens(
        *r.economy.g_co2e_per_million_output_tokens);
  }
  out->set_profile_name(s.efficiency.profile_name);
  // The placement's own rule (engine::MemoryFootprint::off_device).
  const auto& off = r.memory.off_device;
  out->set_spilled(
      std::any_of(off.begin(), off.end(), [](bool b) { return b; }));
}

}  // namespace

Backend::Backend(std::shared_ptr<const plugin_host::HardwareRegistry> registry,
                 std::shared_ptr<const calibration::ProfileStore> profiles,
                 Limits limits, BackendObserver* observer)
    : registry_(std::move(registry)),
      profiles_(std::move(profiles)),
      limits_(limits),
      observer_(observer),
      gate_(std::make_shared<ExpensiveCallGate>(
          limits.max_concurrent_expensive_calls)) {}

namespace {

// Runs the engine once, timing it for the observer.
absl::StatusOr<engine::AnalysisResult> RunEngine(const engine::Scenario& s,
                                                 BackendObserver* observer,
                                                 const char* kind) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<engine::AnalysisResult> r = absl::InternalError("");
  try {
    r = engine::Analyze(s);
    // Suggestions are explorations around the scenario (explore/).
    if (r.ok() && s.options.suggestions) {
      explore::AddSuggestions(s, &*r);
      // A suggestion stopped by should_stop is dropped there; say here why
      // the list is short.
      if (s.options.should_stop && s.options.should_stop()) {
        r = engine::StoppedError();
      }
    }
  } catch (const std::exception& e) {
    r = absl::InternalError(absl::StrCat("engine fault: ", e.what()));
  }
  if (observer != nullptr) {
    const std::chrono::duration<double> d =
        std::chrono::steady_clock::now() - start;
    observer->OnAnalysis(kind, d.count(), r.ok());
  }
  return r;
}

}  // namespace

namespace {

// The scenario fields of an AnalyzeRequest (shared by Analyze and Explore,
// whose request carries the same fields) into `s`; returns the calibration
// chosen (already applied).
absl::StatusOr<Chosen> ResolveScenarioFields(
    const plugin_host::HardwareRegistry& registry,
    const calibration::ProfileStore& profiles, BackendObserver* observer,
    const Limits& limits, const v1::AnalyzeRequest& req,
    engine::Scenario* out) {
  engine::Scenario& s = *out;
  RETURN_IF_ERROR(CheckInlineConfigSize(req.model(), "model", limits));
  RETURN_IF_ERROR(ResolveModelInto(req.model(), "model", &s.model));
  RETURN_IF_ERROR(
      ResolveHardwareInto(registry, req.hardware(), "hardware", &s.hardware));
  RETURN_IF_ERROR(CheckWorkload(req.workload(), &s.workload));
  ASSIGN_OR_RETURN(s.precision, ResolveFormats(req.formats(), "formats"));
  ASSIGN_OR_RETURN(Common c,
                   ResolveCommon(req.placement(), req.options(), req.economics(),
                                 req.parallelism(), true));
  RETURN_IF_ERROR(CheckPinsFit(c.pins, s.hardware, "hardware"));
  s.pins = c.pins;
  s.options = c.options;
  s.economics = c.economics;
  s.parallelism = c.parallelism;
  ASSIGN_OR_RETURN(Chosen chosen,
                   ChooseProfile(profiles, req.calibration(), s.hardware));
  // pure_roofline asks for the bound: a named profile is still validated,
  // but not applied, and not reported as used.
  if (s.options.pure_roofline) chosen = Chosen{};
  if (observer != nullptr) observer->OnCalibration(chosen.selected_by);
  ApplyProfile(chosen, req.options(), &s);
  // With options and calibration known: they decide the engine's steps.
  RETURN_IF_ERROR(CheckRequestCost(CostInputsOf(s), limits));
  return chosen;
}

}  // namespace

absl::Status Backend::ResolveScenario(const v1::AnalyzeRequest& req,
                                      engine::Scenario* s) const {
  return ResolveScenarioFields(*registry_, *profiles_, observer_, limits_,
                               req, s)
      .status();
}

absl::StatusOr<v1::AnalyzeResponse> Backend::Analyze(
    const v1::AnalyzeRequest& req) const {
  v1::AnalyzeResponse resp;
  RETURN_IF_ERROR(Analyze(req, &resp));
  return resp;
}

absl::Status Backend::Analyze(const v1::AnalyzeRequest& req,
                              v1::AnalyzeResponse* resp,
                              const std::function<bool()>& should_stop) const {
  if (!req.has_model()) {
    return OutOfRange("model", "set: one of catalog_id or hf_config_json",
                      "unset");
  }
  if (!req.has_hardware()) {
    return OutOfRange("hardware", "set: one of platform_id or description",
                      "unset");
  }
  if (!v1::AnalysisView_IsValid(req.view())) {
    return OutOfRange("view",
                      "ANALYSIS_VIEW_UNSPECIFIED (0), ANALYSIS_VIEW_BASIC (1) "
                      "or ANALYSIS_VIEW_FULL (2)",
                      absl::StrCat(req.view()));
  }
  // A fresh scenario per request: nothing carries over between requests.
  engine::Scenario s;
  ASSIGN_OR_RETURN(Chosen chosen,
                   ResolveScenarioFields(*registry_, *profiles_, observer_,
                                         limits_, req, &s));
  s.options.should_stop = should_stop;

  ASSIGN_OR_RETURN(engine::AnalysisResult r,
                   RunEngine(s, observer_, "analyze"));
  ToProto(r, resp->mutable_result(), req.view());
  v1::CalibrationUsed* cu = resp->mutable_calibration();
  cu->set_selected_by(chosen.selected_by);
  if (chosen.profile != nullptr) {
    cu->set_profile_name(chosen.profile->name);
    cu->set_fitted_from(chosen.profile->fitted_from);
  }
  cu->set_match(chosen.match);
  if (!chosen.warning.empty()) {
    cu->set_warning(chosen.warning);
    resp->mutable_result()->add_warnings(chosen.warning);
  }
  resp->set_upper_bound(r.pure_roofline);
  return absl::OkStatus();
}

absl::Status Backend::Sweep(
    const v1::SweepRequest& req,
    const std::function<bool(const v1::SweepPoint&)>& emit) const {
  auto check_len = [](absl::string_view name, int n, int lo,
                      int hi) -> absl::Status {
    if (n >= lo && n <= hi) return absl::OkStatus();
    return OutOfRange(name, absl::StrCat(lo, "..", hi, " entries"),
                      absl::StrCat(n, " entries"));
  };
  RETURN_IF_ERROR(check_len("models", req.models_size(), 1, kMaxSweepModels));
  RETURN_IF_ERROR(
      check_len("hardware", req.hardware_size(), 1, kMaxSweepHardware));
  RETURN_IF_ERROR(
      check_len("formats", req.formats_size(), 0, kMaxSweepFormats));
  RETURN_IF_ERROR(
      check_len("batch_sizes", req.batch_sizes_size(), 0, kMaxSweepValues));
  RETURN_IF_ERROR(
      check_len("prompt_tokens", req.prompt_tokens_size(), 0, kMaxSweepValues));
  RETURN_IF_ERROR(check_len("generated_tokens", req.generated_tokens_size(), 0,
                            kMaxSweepValues));
  if (!v1::AnalysisView_IsValid(req.result_view())) {
    return OutOfRange("result_view",
                      "ANALYSIS_VIEW_UNSPECIFIED (0), ANALYSIS_VIEW_BASIC (1) "
                      "or ANALYSIS_VIEW_FULL (2)",
                      absl::StrCat(req.result_view()));
  }
  const uint32_t shard_count = req.shard_count() == 0 ? 1 : req.shard_count();
  if (shard_count > kMaxShards) {
    return OutOfRange("shard_count", absl::StrCat("in [0, ", kMaxShards, "]"),
                      absl::StrCat(req.shard_count()));
  }
  if (req.shard_index() >= shard_count) {
    return OutOfRange("shard_index",
                      absl::StrCat("in [0, ", shard_count - 1, "]"),
                      absl::StrCat(req.shard_index()));
  }

  // An empty list is one default entry.
  const engine::Workload defaults;
  std::vector<int64_t> batches(req.batch_sizes().begin(),
                               req.batch_sizes().end());
  std::vector<int64_t> prompts(req.prompt_tokens().begin(),
                               req.prompt_tokens().end());
  std::vector<int64_t> gens(req.generated_tokens().begin(),
                            req.generated_tokens().end());
  if (batches.empty()) batches.push_back(defaults.batch);
  if (prompts.empty()) prompts.push_back(defaults.prompt_tokens);
  if (gens.empty()) gens.push_back(defaults.generated_tokens);
  for (size_t i = 0; i < batches.size(); ++i) {
    RETURN_IF_ERROR(CheckInt(absl::StrCat("batch_sizes[", i, "]"), batches[i],
                             engine::ranges::kBatch));
  }
  for (size_t i = 0; i < prompts.size(); ++i) {
    RETURN_IF_ERROR(CheckInt(absl::StrCat("prompt_tokens[", i, "]"), prompts[i],
                             engine::ranges::kPromptTokens));
  }
  for (size_t i = 0; i < gens.size(); ++i) {
    RETURN_IF_ERROR(CheckInt(absl::StrCat("generated_tokens[", i, "]"), gens[i],
                             engine::ranges::kGeneratedTokens));
  }

  // Sizes are capped above, so the product fits in 64 bits (< 2^62).
  const uint64_t n_formats = req.formats_size() == 0 ? 1 : req.formats_size();
  const uint64_t total = static_cast<uint64_t>(req.models_size()) *
                         req.hardware_size() * n_formats * batches.size() *
                         prompts.size() * gens.size();
  const uint64_t in_shard =
      total / shard_count + (req.shard_index() < total % shard_count ? 1 : 0);
  if (in_shard > static_cast<uint64_t>(limits_.max_sweep_points)) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "sweep: ", in_shard, " points", shard_count > 1 ? " in this shard" : "",
        " (", total, " in all) exceed the server's cap of ",
        limits_.max_sweep_points,
        " points per request; split it with shard_index/shard_count or "
        "shorter lists"));
  }

  std::vector<engine::ModelConfig> models;
  int64_t most_layers = 0;
  for (int i = 0; i < req.models_size(); ++i) {
    const std::string path = absl::StrCat("models[", i, "]");
    RETURN_IF_ERROR(CheckInlineConfigSize(req.models(i), path, limits_));
    ASSIGN_OR_RETURN(engine::ModelConfig m, ResolveModel(req.models(i), path));
    most_layers = std::max(most_layers, m.num_layers);
    models.push_back(std::move(m));
  }
  ASSIGN_OR_RETURN(Common c,
                   ResolveCommon(req.placement(), req.options(), req.economics(),
                                 req.parallelism(), false));
  std::vector<engine::Hardware> hardware;
  std::vector<Chosen> profiles;
  for (int i = 0; i < req.hardware_size(); ++i) {
    const std::string path = absl::StrCat("hardware[", i, "]");
    ASSIGN_OR_RETURN(engine::Hardware hw,
                     ResolveHardware(*registry_, req.hardware(i), path));
    RETURN_IF_ERROR(CheckPinsFit(c.pins, hw, path));
    ASSIGN_OR_RETURN(Chosen chosen,
                     ChooseProfile(*profiles_, req.calibration(), hw));
    if (c.options.pure_roofline) chosen = Chosen{};
    if (observer_ != nullptr) observer_->OnCalibration(chosen.selected_by);
    hardware.push_back(std::move(hw));
    profiles.push_back(chosen);
  }
  // The largest point of the sweep, before any point is sent: the longest
  // lengths on the part that steps the most (an efficiency hook walks the
  // decode; a profile would not, so none is assumed: an upper bound).
  {
    CostInputs largest;
    largest.batch = *std::max_element(batches.begin(), batches.end());
    largest.prompt_tokens = *std::max_element(prompts.begin(), prompts.end());
    largest.generated_tokens = *std::max_element(gens.begin(), gens.end());
    largest.layers = most_layers;
    largest.prefill_chunk_tokens = c.options.prefill_chunk_tokens;
    largest.analyses =
        1 + (c.options.suggestions ? explore::kMaxSuggestionAnalyses : 0);
    const engine::Workload w{largest.batch, largest.prompt_tokens,
                             largest.generated_tokens};
    for (const engine::Hardware& hw : hardware) {
      const engine::TimedSteps t =
          engine::CountTimedSteps(w, hw, engine::Efficiency{}, c.options);
      largest.steps.prefill_chunks =
          std::max(largest.steps.prefill_chunks, t.prefill_chunks);
      largest.steps.walked_decode_steps =
          std::max(largest.steps.walked_decode_steps, t.walked_decode_steps);
    }
    RETURN_IF_ERROR(CheckRequestCost(largest, limits_));
  }
  std::vector<engine::Precision> formats;
  if (req.formats_size() == 0) formats.push_back(engine::DefaultPrecision());
  for (int i = 0; i < req.formats_size(); ++i) {
    ASSIGN_OR_RETURN(
        engine::Precision p,
        ResolveFormats(req.formats(i), absl::StrCat("formats[", i, "]")));
    formats.push_back(std::move(p));
  }

  const uint64_t H = hardware.size(), F = formats.size(), B = batches.size(),
                 P = prompts.size(), G = gens.size();
  engine::Scenario s;
  s.pins = c.pins;
  s.options = c.options;
  s.economics = c.economics;
  s.parallelism = c.parallelism;
  v1::SweepPoint point;
  constexpr uint64_t kNone = ~uint64_t{0};
  uint64_t cur_m = kNone, cur_h = kNone, cur_f = kNone;
  // The stable order and sharding of explore/grid.h: models slowest,
  // generated lengths fastest; shard i of n owns index % n == i.
  const explore::MixedRadix grid({models.size(), H, F, B, P, G});
  const explore::Shard shard{req.shard_index(), shard_count};
  uint64_t digits[6];
  absl::Status stopped;
  explore::ForEachInShard(total, shard, 0, [&](uint64_t i) {
    grid.Decode(i, digits);
    const uint64_t m = digits[0], h = digits[1], f = digits[2], b = digits[3],
                   p = digits[4], g = digits[5];

    // The inner lists vary fastest: copy a model, hardware, formats or
    // profile (strings, vectors) only when its index changes.
    if (m != cur_m) s.model = models[cur_m = m];
    if (h != cur_h) {
      s.hardware = hardware[cur_h = h];
      ApplyProfile(profiles[h], req.options(), &s);
    }
    if (f != cur_f) s.precision = formats[cur_f = f];
    s.workload.batch = batches[b];
    s.workload.prompt_tokens = prompts[p];
    s.workload.generated_tokens = gens[g];

    point.Clear();
    point.set_index(i);
    point.set_total_points(total);
    point.set_model_index(static_cast<int32_t>(m));
    point.set_hardware_index(static_cast<int32_t>(h));
    point.set_formats_index(static_cast<int32_t>(f));
    point.set_batch_index(static_cast<int32_t>(b));
    point.set_prompt_index(static_cast<int32_t>(p));
    point.set_generated_index(static_cast<int32_t>(g));
    absl::StatusOr<engine::AnalysisResult> r = RunEngine(s, observer_, "sweep");
    if (r.ok()) {
      Summarize(*r, s, point.mutable_summary());
      if (req.include_full_result()) {
        ToProto(*r, point.mutable_result(), req.result_view());
      }
    } else {
      point.mutable_error()->set_code(static_cast<int32_t>(r.status().code()));
      point.mutable_error()->set_message(std::string(r.status().message()));
    }
    if (!emit(point)) {
      stopped = absl::CancelledError(
          absl::StrCat("sweep stopped after point ", i, " of ", total,
                       ": the client went away or the deadline passed"));
      return false;
    }
    return true;
  });
  return stopped;
}

namespace {

// A kernel dtype: empty = `def`; any known format name.
absl::StatusOr<engine::NumberFormat> KernelFormat(const std::string& name,
                                                  absl::string_view def,
                                                  absl::string_view path) {
  return ParseFormat(name.empty() ? std::string(def) : name, path);
}

void ToProto(const engine::KernelCost& c, const engine::Hardware& hw,
             v1::KernelCost* out) {
  out->set_flops(c.flops);
  out->set_bytes(c.bytes);
  out->set_intensity(c.bytes > 0 ? c.flops / c.bytes : 0);
  const std::string_view math = engine::MathTypeName(c.math);
  out->set_math(math.data(), math.size());
  out->set_tier(c.tier);
  if (c.tier >= 0 && c.tier < static_cast<int>(hw.tiers.size())) {
    out->set_tier_name(hw.tiers[c.tier].name);
  }
  out->set_onchip_resident(c.onchip_resident);
  out->set_onchip_bandwidth_unknown(c.onchip_bandwidth_unknown);
  out->set_compute_seconds(c.compute_seconds);
  out->set_memory_seconds(c.memory_seconds);
  out->set_overhead_seconds(c.overhead_seconds);
  out->set_seconds(c.seconds);
  const std::string_view bound = engine::BoundName(c.bound);
  out->set_bound(bound.data(), bound.size());
  if (c.seconds > 0) {
    out->set_attained_flops_per_second(c.flops / c.seconds);
    out->set_attained_bytes_per_second(c.bytes / c.seconds);
  }
}

}  // namespace

absl::StatusOr<v1::AnalyzeKernelResponse> Backend::AnalyzeKernel(
    const v1::AnalyzeKernelRequest& req) const {
  v1::AnalyzeKernelResponse resp;
  RETURN_IF_ERROR(AnalyzeKernel(req, &resp));
  return resp;
}

absl::Status Backend::AnalyzeKernel(
    const v1::AnalyzeKernelRequest& req, v1::AnalyzeKernelResponse* resp,
    const std::function<bool()>& should_stop) const {
  if (req.shape_case() == v1::AnalyzeKernelRequest::SHAPE_NOT_SET) {
    return OutOfRange("shape", "set: one of decode_attention or gemm",
                      "neither");
  }
  if (!req.has_hardware()) {
    return OutOfRange("hardware", "set: one of platform_id or description",
                      "unset");
  }
  ASSIGN_OR_RETURN(engine::Hardware hw,
                   ResolveHardware(*registry_, req.hardware(), "hardware"));
  int64_t gemv_max_tokens = engine::AnalysisOptions().gemv_max_tokens;
  if (req.has_gemv_max_tokens()) {
    RETURN_IF_ERROR(
        CheckInt("gemv_max_tokens", req.gemv_max_tokens(),
                 engine::ranges::kGemvMaxTokens));
    gemv_max_tokens = req.gemv_max_tokens();
  }
  engine::KernelOptions options;
  if (req.has_warm_cache()) options.warm_cache = req.warm_cache();
  options.pure_roofline = req.has_pure_roofline() && req.pure_roofline();
  // A kernel profile (profiles/kernels/: the kernel model fitted on kernel
  // tables) of the profile or framework asked first, as validate does for
  // kernel rows; then the others.
  absl::StatusOr<Chosen> kernel_profile =
      ChooseProfile(profiles_->kernels(), req.calibration(), hw);
  Chosen chosen;
  if (kernel_profile.ok() && kernel_profile->profile != nullptr &&
      kernel_profile->selected_by != "hardware-match") {
    chosen = *std::move(kernel_profile);
  } else {
    ASSIGN_OR_RETURN(chosen, ChooseProfile(*profiles_, req.calibration(), hw));
  }
  options.fp16_accumulation = Fp16Accumulation(chosen, req);
  // No profile is the pure bound (no launch overhead either), as in Analyze.
  if (options.pure_roofline || chosen.profile == nullptr) {
    chosen.profile = nullptr;
    if (options.pure_roofline) chosen.selected_by = "none";
    options.pure_roofline = true;
  }
  if (observer_ != nullptr) observer_->OnCalibration(chosen.selected_by);
  const engine::Efficiency efficiency = chosen.profile != nullptr
                                            ? chosen.profile->efficiency
                                            : engine::Efficiency{};
  engine::KernelOptions bound_options = options;
  bound_options.pure_roofline = true;

  // Runs the kernel model twice (calibrated and bound), timing both for the
  // observer as one analysis.
  auto run = [&](auto&& kernel) -> absl::Status {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<engine::KernelCost> cost = absl::InternalError("");
    absl::StatusOr<engine::KernelCost> bound = absl::InternalError("");
    auto stopped = [&] { return should_stop && should_stop(); };
    try {
      cost = stopped() ? engine::StoppedError() : kernel(efficiency, options);
      if (cost.ok()) {
        bound = stopped() ? engine::StoppedError()
                          : kernel(engine::Efficiency{}, bound_options);
      }
    } catch (const std::exception& e) {
      cost = absl::InternalError(absl::StrCat("engine fault: ", e.what()));
    }
    if (observer_ != nullptr) {
      const std::chrono::duration<double> d =
          std::chrono::steady_clock::now() - start;
      observer_->OnAnalysis("kernel", d.count(), cost.ok() && bound.ok());
    }
    if (!cost.ok()) return cost.status();
    if (!bound.ok()) return bound.status();
    ToProto(*cost, hw, resp->mutable_result());
    ToProto(*bound, hw, resp->mutable_bound());
    // Compute is a roof when the executed math type has a published peak.
    resp->set_compute_roof_known(bound->compute_seconds > 0);
    return absl::OkStatus();
  };

  if (req.has_decode_attention()) {
    const v1::DecodeAttentionKernelShape& in = req.decode_attention();
    constexpr std::string_view kPath = "decode_attention";
    engine::DecodeAttentionShape shape;
    if (in.has_batch()) shape.batch = in.batch();
    if (in.has_num_q_heads()) shape.num_q_heads = in.num_q_heads();
    shape.num_kv_heads =
        in.has_num_kv_heads() ? in.num_kv_heads() : shape.num_q_heads;
    if (in.has_head_dim()) shape.head_dim = in.head_dim();
    if (in.has_kv_length()) shape.kv_length = in.kv_length();
    ASSIGN_OR_RETURN(shape.dtype, KernelFormat(in.dtype(), "fp16",
                                               "decode_attention.dtype"));
    // Names "decode_attention.<field>", the range and the value.
    RETURN_IF_ERROR(engine::ValidateDecodeAttentionShape(shape, kPath));
    resp->set_kernel("decode_attention");
    resp->set_op_class(
        std::string(engine::OpClassName(engine::OpClass::kAttention)));
    RETURN_IF_ERROR(
        run([&](const engine::Efficiency& e, const engine::KernelOptions& o) {
          return engine::DecodeAttentionKernel(shape, hw, e, o);
        }));
  } else {
    const v1::GemmKernelShape& in = req.gemm();
    constexpr std::string_view kPath = "gemm";
    engine::GemmShape shape;
    shape.m = in.m();
    shape.n = in.n();
    shape.k = in.k();
    ASSIGN_OR_RETURN(shape.a,
                     KernelFormat(in.a_format(), "fp16", "gemm.a_format"));
    ASSIGN_OR_RETURN(
        shape.b, KernelFormat(in.b_format(), shape.a.name, "gemm.b_format"));
    if (!shape.a.native_math) {
      return OutOfRange("gemm.a_format",
                        "a format with a native math type (fp32, bf16, fp16, "
                        "fp8, int8, ...)",
                        Quote(in.a_format()));
    }
    RETURN_IF_ERROR(engine::ValidateGemmShape(shape, kPath));
    resp->set_kernel("gemm");
    resp->set_op_class(std::string(engine::OpClassName(
        shape.m <= gemv_max_tokens ? engine::OpClass::kGemv
                                   : engine::OpClass::kGemm)));
    RETURN_IF_ERROR(
        run([&](const engine::Efficiency& e, const engine::KernelOptions& o) {
          return engine::GemmKernel(shape, hw, e, o, gemv_max_tokens);
        }));
  }
  resp->set_hardware_id(hw.id);
  v1::CalibrationUsed* cu = resp->mutable_calibration();
  cu->set_selected_by(chosen.selected_by);
  if (chosen.profile != nullptr) {
    cu->set_profile_name(chosen.profile->name);
    cu->set_fitted_from(chosen.profile->fitted_from);
  }
  cu->set_match(chosen.match);
  cu->set_warning(chosen.warning);
  resp->set_upper_bound(chosen.profile == nullptr);
  return absl::OkStatus();
}

absl::StatusOr<v1::ListHardwareResponse> Backend::ListHardware(
    const v1::ListHardwareRequest& req) const {
  if (req.family().size() > kMaxIdChars) {
    return OutOfRange("family", "0..128 characters", Quote(req.family()));
  }
  v1::ListHardwareResponse resp;
  for (const engine::Hardware& hw : registry_->platforms()) {
    if (!req.family().empty() && hw.family != req.family()) continue;
    ToProto(hw, resp.add_hardware());
  }
  // A mistyped family would otherwise look like "no such hardware". With no
  // platforms loaded nothing is known, so the empty list stands.
  if (!req.family().empty() && resp.hardware_size() == 0 &&
      !registry_->platforms().empty()) {
    std::set<std::string> known;
    for (const engine::Hardware& hw : registry_->platforms()) {
      known.insert(hw.family);
    }
    return OutOfRange("family",
                      absl::StrCat("empty or a loaded family (",
                                   absl::StrJoin(known, ", "), ")"),
                      Quote(req.family()));
  }
  // Any caller may list hardware: the server's folders stay in its log,
  // callers see file names only (issue 14, defect 10).
  for (const plugin_host::LoadOutcome& o : registry_->outcomes()) {
    v1::PluginInfo* pi = resp.add_plugins();
    const std::filesystem::path path(o.path);
    pi->set_path(path.filename().string());
    pi->set_family(o.family);
    pi->set_plugin_version(o.plugin_version);
    pi->set_loaded(o.loaded);
    pi->set_reason(absl::StrReplaceAll(
        o.reason, {{path.parent_path().string() + "/", ""},
                   {o.path, path.filename().string()}}));
    pi->set_platforms(o.platforms);
  }
  return resp;
}

absl::StatusOr<v1::GetHardwareResponse> Backend::GetHardware(
    const v1::GetHardwareRequest& req) const {
  if (req.id().empty() || req.id().size() > kMaxIdChars) {
    return OutOfRange("id",
                      "a platform id of 1..128 characters (see ListHardware)",
                      Quote(req.id()));
  }
  absl::StatusOr<const engine::Hardware*> hw = registry_->Find(req.id());
  if (!hw.ok()) return Prefixed("id", hw.status());
  v1::GetHardwareResponse resp;
  ToProto(**hw, resp.mutable_hardware());
  return resp;
}

absl::StatusOr<v1::ListModelsResponse> Backend::ListModels(
    const v1::ListModelsRequest&) const {
  v1::ListModelsResponse resp;
  for (const engine::ModelConfig& m : engine::BuiltinModels()) {
    ToProto(m, resp.add_models());
  }
  return resp;
}

absl::StatusOr<v1::GetModelResponse> Backend::GetModel(
    const v1::GetModelRequest& req) const {
  if (req.id().empty() || req.id().size() > kMaxIdChars) {
    return OutOfRange("id",
                      "a catalog id of 1..128 characters (see ListModels)",
                      Quote(req.id()));
  }
  absl::StatusOr<engine::ModelConfig> m = engine::FindModel(req.id());
  if (!m.ok()) return Prefixed("id", m.status());
  v1::GetModelResponse resp;
  ToProto(*m, resp.mutable_model());
  return resp;
}

// The scenario of StepTime / StepTimeStream: Analyze's resolution minus the
// workload, which the step capacity stands in for (placement reserves room
// for capacity.max_sequences sequences at capacity.max_context_tokens).
absl::Status Backend::ResolveStepScenario(const v1::StepScenario& in,
                                          absl::string_view path,
                                          engine::Scenario* s,
                                          v1::CalibrationUsed* used) const {
  auto at = [path](absl::string_view field) {
    return path.empty() ? std::string(field) : absl::StrCat(path, ".", field);
  };
  if (!in.has_model()) {
    return OutOfRange(at("model"), "set: one of catalog_id or hf_config_json",
                      "unset");
  }
  if (!in.has_hardware()) {
    return OutOfRange(at("hardware"), "set: one of platform_id or description",
                      "unset");
  }
  RETURN_IF_ERROR(ResolveModelInto(in.model(), at("model"), &s->model));
  RETURN_IF_ERROR(ResolveHardwareInto(*registry_, in.hardware(), at("hardware"),
                                      &s->hardware));
  s->workload = engine::Workload();
  s->workload.batch = 1;
  // The model's context, at most the longest prompt a request may give
  // (MiniMax-M1's 10.24 M and a state-space model's unlimited one are more).
  s->workload.prompt_tokens =
      s->model.max_context > 0
          ? std::min(s->model.max_context, engine::ranges::kPromptTokens.hi)
          : 4096;
  s->workload.generated_tokens = 0;
  if (in.capacity().has_max_sequences()) {
    RETURN_IF_ERROR(CheckInt(at("capacity.max_sequences"),
                             in.capacity().max_sequences(), engine::ranges::kBatch.lo, engine::ranges::kBatch.hi));
    s->workload.batch = in.capacity().max_sequences();
  }
  if (in.capacity().has_max_context_tokens()) {
    RETURN_IF_ERROR(CheckInt(at("capacity.max_context_tokens"),
                             in.capacity().max_context_tokens(), 1, engine::ranges::kPromptTokens.hi));
    s->workload.prompt_tokens = in.capacity().max_context_tokens();
  }
  ASSIGN_OR_RETURN(s->precision, ResolveFormats(in.formats(), at("formats")));
  ASSIGN_OR_RETURN(Common c, ResolveCommon(in.placement(), in.options(),
                                           v1::EconomicsOverrides(),
                                           in.parallelism(), false));
  RETURN_IF_ERROR(CheckPinsFit(c.pins, s->hardware, at("hardware")));
  s->pins = c.pins;
  s->options = c.options;
  s->options.suggestions = false;
  s->economics = c.economics;
  s->parallelism = c.parallelism;
  ASSIGN_OR_RETURN(Chosen chosen,
                   ChooseProfile(*profiles_, in.calibration(), s->hardware));
  if (s->options.pure_roofline) chosen = Chosen{};
  if (observer_ != nullptr) observer_->OnCalibration(chosen.selected_by);
  ApplyProfile(chosen, in.options(), s);
  // The capacity is the workload Prepare builds (and chunks) once.
  RETURN_IF_ERROR(CheckRequestCost(CostInputsOf(*s), limits_));
  used->set_selected_by(chosen.selected_by);
  if (chosen.profile != nullptr) {
    used->set_profile_name(chosen.profile->name);
    used->set_fitted_from(chosen.profile->fitted_from);
  }
  return absl::OkStatus();
}

}  // namespace ridgeline::service
