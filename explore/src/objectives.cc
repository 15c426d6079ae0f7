// Metric names, objective and constraint parsing, violation (objectives.h).
#include "ridgeline/explore/objectives.h"

#include <charconv>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "av.h"
#include "absl/strings/str_join.h"

namespace ridgeline::explore {

using internal::Av;
namespace {

constexpr std::array<std::string_view, kMetricCount> kNames = {
    "decode_tok_s",   "decode_tok_s_total", "prefill_tok_s",
    "ttft_ms",        "tpot_ms",            "e2e_ms",
    "j_per_token",    "usd_per_mtoken",     "gco2_per_mtoken",
    "price_usd",      "power_w",            "gbs_per_w",
    "tflops_per_w",   "gbs_per_mm2",        "tflops_per_mm2",
    "usd_per_mm2"};

bool ParseDouble(std::string_view t, double* v) {
  const auto r = std::from_chars(t.data(), t.data() + t.size(), *v);
  return !t.empty() && r.ec == std::errc() && r.ptr == t.data() + t.size() &&
         std::isfinite(*v);
}

}  // namespace

std::string_view MetricName(Metric m) { return kNames[static_cast<int>(m)]; }

bool MetricMaximizedByDefault(Metric m) {
  switch (m) {
    case Metric::kDecodeTokS:
    case Metric::kDecodeTokSTotal:
    case Metric::kPrefillTokS:
      return true;
    default:
      return false;
  }
}

std::string MetricNames() {
  std::string out;
  for (std::string_view n : kNames) absl::StrAppend(&out, out.empty() ? "" : ", ", Av(n));
  return out;
}

static absl::StatusOr<Metric> ParseMetricImpl(std::string_view name,
                                   std::string_view field) {
  for (int i = 0; i < kMetricCount; ++i) {
    if (kNames[i] == name) return static_cast<Metric>(i);
  }
  return absl::InvalidArgumentError(
      absl::StrCat(Av(field), ": unknown metric \"", Av(name), "\"; one of ",
                   MetricNames()));
}

static absl::StatusOr<Objective> ParseObjectiveImpl(std::string_view spec,
                                         std::string_view field) {
  std::string_view name = spec, dir;
  if (const size_t colon = spec.find(':'); colon != std::string_view::npos) {
    name = spec.substr(0, colon);
    dir = spec.substr(colon + 1);
  }
  absl::StatusOr<Metric> m = ParseMetric(name, field);
  if (!m.ok()) return m.status();
  Objective o{std::string(name), *m, MetricMaximizedByDefault(*m)};
  if (dir == "max") {
    o.maximize = true;
  } else if (dir == "min") {
    o.maximize = false;
  } else if (!dir.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        Av(field), ": direction must be max or min, got \"", Av(dir), "\" in \"",
        Av(spec), "\""));
  }
  return o;
}

static absl::StatusOr<Constraint> ParseConstraintImpl(std::string_view spec,
                                           std::string_view field) {
  Constraint c;
  c.text = std::string(spec);
  if (spec == "fits") {
    c.fits_only = true;
    return c;
  }
  size_t op = spec.find("<=");
  c.upper = true;
  if (op == std::string_view::npos) {
    op = spec.find(">=");
    c.upper = false;
  }
  if (op == std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        Av(field), ": want METRIC<=VALUE, METRIC>=VALUE or fits, got \"", Av(spec),
        "\""));
  }
  absl::StatusOr<Metric> m = ParseMetric(spec.substr(0, op), field);
  if (!m.ok()) return m.status();
  c.metric = *m;
  if (!ParseDouble(spec.substr(op + 2), &c.bound)) {
    return absl::InvalidArgumentError(absl::StrCat(
        Av(field), ": bound must be a finite number, got \"", Av(spec.substr(op + 2)),
        "\" in \"", Av(spec), "\""));
  }
  return c;
}

double Violation(const MetricValues& v, bool fits, double memory_overflow,
                 const std::vector<Objective>& objectives,
                 const std::vector<Constraint>& constraints) {
  double total = 0;
  if (!fits) total += std::max(memory_overflow, 1e-6);
  for (const Objective& o : objectives) {
    if (std::isnan(v[static_cast<int>(o.metric)])) total += 1;
  }
  for (const Constraint& c : constraints) {
    if (c.fits_only) continue;
    const double x = v[static_cast<int>(c.metric)];
    if (std::isnan(x)) {
      total += 1;
      continue;
    }
    const double over = c.upper ? x - c.bound : c.bound - x;
    if (over > 0) total += over / std::max(std::abs(c.bound), 1e-300);
  }
  return total;
}

void MinimisedObjectives(const MetricValues& v,
                         const std::vector<Objective>& objectives,
                         double* out) {
  for (size_t k = 0; k < objectives.size(); ++k) {
    const double x = v[static_cast<int>(objectives[k].metric)];
    out[k] = objectives[k].maximize ? -x : x;
  }
}

absl::StatusOr<Objective> ParseObjective(std::string_view spec, std::string_view field) {
  absl::StatusOr<Objective> v = ParseObjectiveImpl(spec, field);
  if (!v.ok()) return internal::AtField(v.status(), field);
  return v;
}

absl::StatusOr<Constraint> ParseConstraint(std::string_view spec, std::string_view field) {
  absl::StatusOr<Constraint> v = ParseConstraintImpl(spec, field);
  if (!v.ok()) return internal::AtField(v.status(), field);
  return v;
}

absl::StatusOr<Metric> ParseMetric(std::string_view spec, std::string_view field) {
  absl::StatusOr<Metric> v = ParseMetricImpl(spec, field);
  if (!v.ok()) return internal::AtField(v.status(), field);
  return v;
}

}  // namespace ridgeline::explore
