#include "serving_convert.h"

#include "absl/strings/str_cat.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/service/request_scenario.h"
#include "ridgeline/serving/candidates.h"
#include "ridgeline/serving/trace.h"

namespace ridgeline::service::serving_convert {

// The shared request rules (request_scenario.h), under the names the
// serving RPCs use.
absl::Status Bad(absl::string_view field, absl::string_view range,
                 absl::string_view got) {
  return request::OutOfRange(field, range, got);
}

absl::Status Prefixed(absl::string_view path, const absl::Status& s) {
  return request::Prefixed(path, s);
}

absl::StatusOr<serving::LengthDistribution> Lengths(const v1::TokenLengths& l,
                                                    absl::string_view field) {
  switch (l.kind_case()) {
    case v1::TokenLengths::kFixed:
      return serving::LengthDistribution::Fixed(l.fixed());
    case v1::TokenLengths::kUniform:
      return serving::LengthDistribution::Uniform(l.uniform().min(),
                                                  l.uniform().max());
    case v1::TokenLengths::kHistogram:
      return serving::LengthDistribution::Empirical(
          {l.histogram().values().begin(), l.histogram().values().end()},
          {l.histogram().weights().begin(), l.histogram().weights().end()});
    case v1::TokenLengths::KIND_NOT_SET:
      break;
  }
  return Bad(field, "set: one of fixed, uniform or histogram", "unset");
}

absl::StatusOr<engine::ModelConfig> Model(const v1::ModelSpec& spec) {
  return request::ResolveModel(spec, "model");
}

absl::StatusOr<engine::Precision> Precision(const v1::Formats& f,
                                            const std::string& path) {
  return request::ResolveFormats(f, path);
}

absl::Status Economics(const v1::EconomicsOverrides& e,
                       engine::Economics* out) {
  ASSIGN_OR_RETURN(request::Common c,
                   request::ResolveCommon({}, {}, e, {}, false));
  *out = c.economics;
  return absl::OkStatus();
}

std::string FormatsLabel(const engine::Precision& p) {
  return serving::FormatsLabel(p);
}

absl::StatusOr<engine::Hardware> Hardware(
    const plugin_host::HardwareRegistry& registry, const v1::HardwareSpec& spec,
    const std::string& path) {
  return request::ResolveHardware(registry, spec, path);
}

std::string ExtrapolationFloor(const Calibrated& cal, engine::Scenario* s) {
  const calibration::Profile* p = cal.serving_profile;
  if (p == nullptr || s->options.pure_roofline) return "";
  const engine::Parallelism& par = s->parallelism;
  if (calibration::FittedOnDeployment(*p, s->hardware.id, par.tensor_parallel,
                                      par.expert_parallel)) {
    return "";
  }
  s->efficiency.min_speed_fraction = p->serving_fit.min_speed_fraction;
  std::string shape = absl::StrCat("TP ", par.tensor_parallel);
  if (par.expert_parallel > 1)
    absl::StrAppend(&shape, " EP ", par.expert_parallel);
  if (par.pipeline_parallel > 1)
    absl::StrAppend(&shape, " PP ", par.pipeline_parallel);
  return calibration::ExtrapolationWarning(*p, s->hardware.id, shape);
}

absl::StatusOr<Calibrated> Calibration(const calibration::ProfileStore& store,
                                       const v1::Calibration& cal,
                                       const engine::Hardware& hw,
                                       const std::string& path) {
  // A serving profile (fitted on the serving model, by framework) wins over
  // the kernel profiles for that framework; "serving.<framework>" names one.
  const calibration::ProfileStore& serving = store.serving();
  const calibration::Profile* fitted = nullptr;
  if (cal.selector_case() == v1::Calibration::kFramework) {
    fitted = serving.Match("", "", cal.framework());
  } else if (cal.selector_case() == v1::Calibration::kProfile &&
             cal.profile().starts_with("serving.")) {
    absl::StatusOr<const calibration::Profile*> p = serving.Find(cal.profile());
    if (!p.ok()) {
      return engine::WithFieldPath(p.status(), absl::StrCat(path, ".profile"));
    }
    fitted = *p;
  }
  if (fitted != nullptr) {
    Calibrated c;
    c.efficiency = fitted->efficiency;
    c.fp16_accumulation = fitted->fp16_accumulation;
    c.profile_name = fitted->name;
    c.fitted_from = fitted->fitted_from;
    c.serving_profile = fitted;
    if (cal.selector_case() == v1::Calibration::kProfile) {
      c.selected_by = "profile";
      return c;
    }
    c.selected_by = "framework-match";
    // The last clause of a serving profile's provenance says how it was
    // checked: cross-validated, or in-sample on one platform
    // (calibration::ServingProfiles).
    const size_t cut = fitted->fitted_from.rfind("; ");
    c.match = absl::StrCat(
        "serving profile ", fitted->name, ": ",
        calibration::DescribeMatch(*fitted, hw.id, cal.framework()),
        cut == std::string::npos
            ? std::string()
            : absl::StrCat(" (", fitted->fitted_from.substr(cut + 2), ")"));
    return c;
  }
  absl::StatusOr<request::Chosen> chosen =
      request::ChooseProfile(store, cal, hw);
  if (!chosen.ok()) {
    // ChooseProfile names "calibration.*"; nested requests say where.
    return path == "calibration" ? chosen.status()
                                 : Prefixed(path, chosen.status());
  }
  engine::Scenario s;
  request::ApplyProfile(*chosen, v1::AnalysisOptions(), &s);
  Calibrated c;
  c.efficiency = s.efficiency;
  c.fp16_accumulation = s.options.fp16_accumulation;
  if (chosen->profile != nullptr) {
    c.profile_name = chosen->profile->name;
    c.fitted_from = chosen->profile->fitted_from;
  }
  c.selected_by = chosen->selected_by;
  c.match = chosen->match;
  c.warning = chosen->warning;
  if (cal.selector_case() == v1::Calibration::kFramework) {
    // Serving profiles are fitted on the serving model; a kernel profile
    // times single steps, so say that none was found for this framework.
    const std::string no_serving = absl::StrCat(
        "no serving profile for framework \"", cal.framework(),
        "\" (profiles/serving/ has none fitted for it)");
    if (c.warning.empty()) {
      c.match = absl::StrCat(c.match, "; ", no_serving);
    } else {
      c.warning = absl::StrCat(c.warning, "; ", no_serving);
    }
  }
  return c;
}

void ToProto(const serving::Timeline& t, v1::SimulateTimeline* out) {
  out->set_start_seconds(t.start_seconds);
  out->set_bucket_seconds(t.bucket_seconds);
  out->mutable_arrivals()->Add(t.arrivals.begin(), t.arrivals.end());
  auto copy = [](const std::vector<double>& from,
                 google::protobuf::RepeatedField<double>* to) {
    to->Add(from.begin(), from.end());
  };
  copy(t.ttft_p50_seconds, out->mutable_ttft_p50_seconds());
  copy(t.ttft_p90_seconds, out->mutable_ttft_p90_seconds());
  copy(t.tpot_p90_seconds, out->mutable_tpot_p90_seconds());
  copy(t.e2e_p90_seconds, out->mutable_e2e_p90_seconds());
  copy(t.queue_mean, out->mutable_queue_mean());
  copy(t.running_mean, out->mutable_running_mean());
  copy(t.kv_usage_mean, out->mutable_kv_usage_mean());
  for (const serving::Timeline::TierSeries& tier : t.kv_tiers) {
    v1::KvTierTimeline* o = out->add_kv_tiers();
    o->set_name(tier.name);
    copy(tier.usage_mean, o->mutable_usage_mean());
  }
}

absl::StatusOr<serving::ServingConfig> ServingConfigOf(
    const v1::ServingOptions& so) {
  serving::ServingConfig config;
  if (so.has_memory_fraction()) config.memory_fraction = so.memory_fraction();
  if (so.has_max_num_seqs()) config.max_num_seqs = so.max_num_seqs();
  if (so.has_max_num_batched_tokens()) {
    config.max_num_batched_tokens = so.max_num_batched_tokens();
  }
  if (so.has_block_size()) config.block_size = so.block_size();
  if (so.has_prefix_caching()) config.prefix_caching = so.prefix_caching();
  if (so.has_kv_offload()) {
    ASSIGN_OR_RETURN(config.kv_offload,
                     serving::ParseKvOffload(so.kv_offload()));
  }
  if (so.has_preemption()) {
    ASSIGN_OR_RETURN(config.preemption,
                     serving::ParsePreemption(so.preemption()));
  }
  RETURN_IF_ERROR(serving::ValidateServingConfig(config));
  return config;
}

absl::StatusOr<serving::Arrivals> TraceArrivals(const v1::ArrivalTrace& t) {
  const int n = t.arrival_seconds_size();
  if (t.prompt_blocks_size() != 0 && t.prompt_blocks_size() != n) {
    return Bad("traffic.trace.prompt_blocks", "empty or one per arrival",
               absl::StrCat(t.prompt_blocks_size(), " for ", n, " arrivals"));
  }
  const int64_t unit =
      t.block_tokens() != 0 ? t.block_tokens() : serving::kMooncakeBlockTokens;
  if (unit < 1 || unit > 1'000'000) {
    return Bad("traffic.trace.block_tokens", "in [1, 1000000]",
               absl::StrCat(unit));
  }
  std::vector<serving::TraceRequest> trace(static_cast<size_t>(n));
  const bool lengths =
      t.prompt_tokens_size() > 0 || t.generated_tokens_size() > 0;
  if (lengths &&
      (t.prompt_tokens_size() != n || t.generated_tokens_size() != n)) {
    return Bad("traffic.trace",
               "one prompt and one generated length per arrival",
               absl::StrCat(t.prompt_tokens_size(), " prompt and ",
                            t.generated_tokens_size(),
                            " generated lengths for ", n, " arrivals"));
  }
  for (int i = 0; i < n; ++i) {
    serving::TraceRequest& r = trace[i];
    r.arrival_seconds = t.arrival_seconds(i);
    if (t.prompt_blocks_size() > 0) {
      r.block_hashes.assign(t.prompt_blocks(i).hash_ids().begin(),
                            t.prompt_blocks(i).hash_ids().end());
    }
  }
  serving::Arrivals a = serving::TraceArrivals(trace, unit);
  if (lengths) {  // as given: the simulation checks their range
    a.prompt_tokens.assign(t.prompt_tokens().begin(), t.prompt_tokens().end());
    a.generated_tokens.assign(t.generated_tokens().begin(),
                              t.generated_tokens().end());
  }
  return a;
}

}  // namespace ridgeline::service::serving_convert
