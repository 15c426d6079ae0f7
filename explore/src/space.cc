// Axis parsing, ordering and application to a base part (space.h).
#include "ridgeline/explore/space.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "av.h"
#include "ridgeline/engine/ranges.h"
#include "ridgeline/engine/speculative.h"

namespace ridgeline::explore {

using internal::Av;
namespace {

using engine::Hardware;
using engine::MathType;
using engine::TierKind;

struct AxisName {
  std::string_view absolute;    // "bandwidth_gbs"
  std::string_view multiplier;  // "bandwidth_x"; "" for deployment axes
  AxisKind kind;
  // Allowed range of values (absolute or multiplier), integers only for
  // the integer deployment axes; lo itself allowed for integer axes and
  // closed_lo ones (a rate of 0), excluded for the others (figures > 0).
  double lo, hi;
  bool integer;
  bool closed_lo = false;
};
constexpr double kBig = 1e30;
constexpr std::array<AxisName, 20> kAxes = {{
    {"bandwidth_gbs", "bandwidth_x", AxisKind::kBandwidth, 0, kBig, false},
    {"peak_tflops", "peak_x", AxisKind::kPeak, 0, kBig, false},
    {"capacity_gb", "capacity_x", AxisKind::kCapacity, 0, kBig, false},
    {"sram_mb", "sram_x", AxisKind::kSram, 0, kBig, false},
    {"sram_bandwidth_gbs", "sram_bandwidth_x", AxisKind::kSramBandwidth, 0,
     kBig, false},
    {"tdp_w", "tdp_x", AxisKind::kTdp, 0, kBig, false},
    {"price_usd", "price_x", AxisKind::kPrice, 0, kBig, false},
    {"interconnect_gbs", "interconnect_x", AxisKind::kInterconnect, 0, kBig,
     false},
    {"pim_bandwidth_gbs", "pim_bandwidth_x", AxisKind::kPimBandwidth, 0, kBig,
     false},
    {"pim_tflops", "pim_x", AxisKind::kPim, 0, kBig, false},
    {"die_area_mm2", "", AxisKind::kDieArea, 0, kBig, false},
    {"batch", "", AxisKind::kBatch, 1, 65536, true},
    {"prompt", "", AxisKind::kPrompt, 1, 10'000'000, true},
    {"gen", "", AxisKind::kGen, 0, 10'000'000, true},
    {"weights", "", AxisKind::kWeights, 0, 0, false},
    {"activations", "", AxisKind::kActivations, 0, 0, false},
    {"kv", "", AxisKind::kKv, 0, 0, false},
    {"tensor_parallel", "", AxisKind::kTensorParallel, 1, 256, true},
    {"speculative_tokens", "", AxisKind::kSpeculativeTokens,
     engine::ranges::kSpeculativeTokens.lo,
     engine::ranges::kSpeculativeTokens.hi, true},
    {"acceptance_rate", "", AxisKind::kAcceptanceRate,
     engine::ranges::kAcceptanceRate.lo, engine::ranges::kAcceptanceRate.hi,
     false, true},
}};

std::string AllAxisNames() {
  std::string out;
  for (const AxisName& a : kAxes) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", Av(a.absolute));
    if (!a.multiplier.empty()) absl::StrAppend(&out, ", ", Av(a.multiplier));
  }
  return out;
}

bool ParseDouble(std::string_view t, double* v) {
  const auto r = std::from_chars(t.data(), t.data() + t.size(), *v);
  return !t.empty() && r.ec == std::errc() && r.ptr == t.data() + t.size() &&
         std::isfinite(*v);
}

bool IsFormatAxis(AxisKind k) {
  return k == AxisKind::kWeights || k == AxisKind::kActivations ||
         k == AxisKind::kKv;
}

void ScalePeaks(engine::PerMathType* peaks, const engine::PerMathType& base,
                double factor) {
  for (int t = 0; t < engine::kMathTypeCount; ++t) {
    if (base[t].has_value()) (*peaks)[t] = *base[t] * factor;
  }
}

// Digits after the decimal point `text` is written with: "500" 0, "0.25"
// 2, "2.50" 2, "1.5e-3" 4, "1e3" 0 (never below 0).
int DecimalPlaces(std::string_view text) {
  const size_t e = text.find_first_of("eE");
  const std::string_view mantissa = text.substr(0, e);
  const size_t dot = mantissa.find('.');
  int places = dot == std::string_view::npos
                   ? 0
                   : static_cast<int>(mantissa.size() - dot - 1);
  if (e != std::string_view::npos) {
    int exponent = 0;
    const std::string_view x = text.substr(e + 1);
    std::from_chars(x.data() + (x.starts_with('+') ? 1 : 0),
                    x.data() + x.size(), exponent);
    places -= exponent;
  }
  return std::max(places, 0);
}

// `v` rounded to `places` digits after the point (the nearest double of
// that decimal: an integer divided by a power of ten rounds once).
double RoundToPlaces(double v, int places) {
  const double scale = std::pow(10.0, places);
  return std::round(v * scale) / scale;
}

// The values of lo:hi:n between the end points, rounded to the precision
// the axis was given in (docs/explore.md, "Values"): each keeps at least
// the end points' decimal places and at least `s` significant digits,
// s = 3 or the fewest above it that keep all values distinct. The end
// points stay exactly as written. The grid holds the rounded values, so
// what is printed is what was evaluated, in every process.
void RoundLogSpaced(std::vector<double>* values, int end_places) {
  const size_t n = values->size();
  if (n < 3) return;
  for (int s = 3; s <= 17; ++s) {
    std::vector<double> r = *values;
    for (size_t k = 1; k + 1 < n; ++k) {
      const int magnitude = static_cast<int>(std::floor(std::log10(r[k])));
      r[k] = RoundToPlaces(r[k], std::max(end_places, s - 1 - magnitude));
    }
    bool distinct = true;
    for (size_t k = 1; k < n && distinct; ++k) distinct = r[k] != r[k - 1];
    if (distinct) {
      *values = std::move(r);
      return;
    }
  }
}

}  // namespace

std::string FormatNumber(double v) {
  std::array<char, 64> buf;
  const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return std::string(buf.data(), r.ptr);
}

std::string Axis::Label(size_t k) const {
  return formats.empty() ? FormatNumber(values[k]) : formats[k].name;
}

static absl::StatusOr<Axis> ParseAxisImpl(std::string_view spec, std::string_view field) {
  const size_t eq = spec.find('=');
  if (eq == std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        Av(field), ": want NAME=VALUES (a list a,b,c or lo:hi:n), got \"", Av(spec),
        "\""));
  }
  Axis axis;
  axis.name = std::string(spec.substr(0, eq));
  const std::string_view values = spec.substr(eq + 1);
  std::string_view stem = axis.name;
  if (const size_t dot = stem.find('.'); dot != std::string_view::npos) {
    const std::string_view type = stem.substr(dot + 1);
    stem = stem.substr(0, dot);
    axis.math = engine::ParseMathType(type);
    if (!axis.math.has_value() || (stem != "peak_tflops" && stem != "peak_x")) {
      return absl::InvalidArgumentError(absl::StrCat(
          Av(field), ": \"", axis.name,
          "\": only peak_tflops.<type> and peak_x.<type> name a math type "
          "(fp64, fp32, tf32, bf16, fp16, fp8, fp4, int8, int4, fp16-acc16)"));
    }
  }
  const AxisName* def = nullptr;
  for (const AxisName& a : kAxes) {
    if (a.absolute == stem || (!a.multiplier.empty() && a.multiplier == stem)) {
      def = &a;
      axis.multiplier = a.multiplier == stem;
    }
  }
  if (def == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(Av(field), ": unknown axis \"", axis.name, "\"; one of ",
                     AllAxisNames()));
  }
  axis.kind = def->kind;
  if (values.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Av(field), ": axis ", axis.name, " has no values"));
  }
  if (IsFormatAxis(axis.kind)) {
    for (std::string_view name : internal::Split(values, ',')) {
      absl::StatusOr<engine::NumberFormat> f = engine::ParseNumberFormat(name);
      if (!f.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(Av(field), ": axis ", axis.name, ": ", f.status().message()));
      }
      axis.formats.push_back(*std::move(f));
    }
    std::sort(axis.formats.begin(), axis.formats.end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
    axis.formats.erase(
        std::unique(axis.formats.begin(), axis.formats.end(),
                    [](const auto& a, const auto& b) { return a.name == b.name; }),
        axis.formats.end());
  } else {
    const bool multiplier = axis.multiplier;
    const double lo_ok = multiplier ? 0 : def->lo;
    const double hi_ok = multiplier ? kBig : def->hi;
    // Hardware figures and multipliers: > 0; integer axes: whole numbers
    // in [lo, hi].
    const bool open_lo = multiplier || (!def->integer && !def->closed_lo);
    auto check = [&](double v, std::string_view text) -> absl::Status {
      const bool in = (open_lo ? v > lo_ok : v >= lo_ok) && v <= hi_ok;
      const bool integral = !def->integer || multiplier || v == std::floor(v);
      if (in && integral) return absl::OkStatus();
      return absl::InvalidArgumentError(absl::StrCat(
          Av(field), ": axis ", axis.name, " value ", Av(text), " out of range: want ",
          def->integer && !multiplier ? "an integer " : "a number ",
          open_lo ? "> " : ">= ", FormatNumber(lo_ok), " and <= ",
          FormatNumber(hi_ok)));
    };
    const std::vector<std::string_view> parts = internal::Split(values, ':');
    if (parts.size() == 3) {
      double lo, hi, n;
      if (!ParseDouble(parts[0], &lo) || !ParseDouble(parts[1], &hi) ||
          !ParseDouble(parts[2], &n) || n != std::floor(n) || n < 1 ||
          n > kMaxAxisValues || lo <= 0 || hi <= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            Av(field), ": axis ", axis.name, ": lo:hi:n wants lo > 0, hi > 0 and "
            "an integer n in 1..", kMaxAxisValues, ", got \"", Av(values), "\""));
      }
      const int count = static_cast<int>(n);
      for (int k = 0; k < count; ++k) {
        double v = count == 1 ? lo
                              : lo * std::pow(hi / lo, static_cast<double>(k) /
                                                           (count - 1));
        if (k == count - 1) v = hi;  // exact end point
        if (def->integer && !multiplier) v = std::round(v);
        axis.values.push_back(v);
      }
      if (!def->integer || multiplier) {
        RoundLogSpaced(&axis.values, std::max(DecimalPlaces(parts[0]),
                                              DecimalPlaces(parts[1])));
      }
      for (double v : axis.values) {
        absl::Status st = check(v, FormatNumber(v));
        if (!st.ok()) return st;
      }
    } else if (parts.size() == 1) {
      for (std::string_view text : internal::Split(values, ',')) {
        double v;
        if (!ParseDouble(text, &v)) {
          return absl::InvalidArgumentError(absl::StrCat(
              Av(field), ": axis ", axis.name, ": \"", Av(text),
              "\" is not a finite number"));
        }
        absl::Status st = check(v, text);
        if (!st.ok()) return st;
        axis.values.push_back(v);
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          Av(field), ": axis ", axis.name,
          ": want a list a,b,c or lo:hi:n, got \"", Av(values), "\""));
    }
    std::sort(axis.values.begin(), axis.values.end());
    axis.values.erase(std::unique(axis.values.begin(), axis.values.end()),
                      axis.values.end());
  }
  if (axis.size() > kMaxAxisValues) {
    return absl::InvalidArgumentError(absl::StrCat(
        Av(field), ": axis ", axis.name, " has ", axis.size(),
        " values; at most ", kMaxAxisValues));
  }
  return axis;
}

absl::StatusOr<Axis> ParseAxis(std::string_view spec, std::string_view field) {
  absl::StatusOr<Axis> a = ParseAxisImpl(spec, field);
  if (!a.ok()) return internal::AtField(a.status(), field);
  return a;
}

MixedRadix Space::Grid() const {
  std::vector<uint64_t> radices;
  radices.reserve(axes.size());
  for (const Axis& a : axes) radices.push_back(a.size());
  return MixedRadix(std::move(radices));
}

int DeviceMemoryTier(const Hardware& hw) {
  for (size_t t = 0; t < hw.tiers.size(); ++t) {
    switch (hw.tiers[t].kind) {
      case TierKind::kHbm:
      case TierKind::kGddr:
      case TierKind::kLpddr:
      case TierKind::kDdr:
      case TierKind::kUnified:
        return static_cast<int>(t);
      default:
        break;
    }
  }
  return -1;
}

int SramTier(const Hardware& hw) {
  for (size_t t = 0; t < hw.tiers.size(); ++t) {
    if (hw.tiers[t].kind == TierKind::kSram) return static_cast<int>(t);
  }
  return -1;
}

int PimTier(const Hardware& hw) {
  for (size_t t = 0; t < hw.tiers.size(); ++t) {
    if (hw.tiers[t].near_memory_compute.has_value()) return static_cast<int>(t);
  }
  return -1;
}

double ReferencePeak(const engine::PerMathType& peaks) {
  const auto& bf16 = peaks[static_cast<int>(MathType::kBf16)];
  if (bf16.has_value()) return *bf16;
  return peaks[static_cast<int>(MathType::kFp16)].value_or(0);
}

absl::Status ValidateSpace(const Space& space, std::string_view field) {
  const Hardware& hw = space.base.hardware;
  if (space.axes.size() > kMaxAxes) {
    return internal::AtField(absl::InvalidArgumentError(absl::StrCat(
        Av(field), ": ", space.axes.size(), " axes; at most ", kMaxAxes)), field);
  }
  // The grid's size must fit the 63-bit indices (before any cap).
  unsigned __int128 points = 1;
  for (const Axis& a : space.axes) {
    points *= a.size();
    if (points > (static_cast<unsigned __int128>(1) << 62)) {
      return internal::AtField(absl::ResourceExhaustedError(absl::StrCat(
          Av(field), ": the grid of all axes has more than 2^62 points; use "
          "fewer values or NSGA-II")), field);
    }
  }
  for (size_t k = 0; k < space.axes.size(); ++k) {
    const Axis& a = space.axes[k];
    const std::string path = absl::StrCat(Av(field), "[", k, "]");
    auto bad = [&](std::string_view why) {
      return internal::AtField(absl::InvalidArgumentError(absl::StrCat(
          Av(field), "[", k, "]: axis ", a.name, ": the base part ", hw.id, " ",
          Av(why))), path);
    };
    for (size_t j = 0; j < k; ++j) {
      if (space.axes[j].name == a.name) {
        return internal::AtField(absl::InvalidArgumentError(absl::StrCat(
            Av(field), "[", k, "]: axis ", a.name, " given twice")), path);
      }
    }
    switch (a.kind) {
      case AxisKind::kBandwidth:
      case AxisKind::kCapacity:
        if (DeviceMemoryTier(hw) < 0)
          return bad("has no device-memory tier (hbm, gddr, lpddr, ddr, "
                     "unified)");
        break;
      case AxisKind::kSram:
      case AxisKind::kSramBandwidth:
        if (SramTier(hw) < 0) return bad("has no sram tier");
        break;
      case AxisKind::kPimBandwidth:
        if (PimTier(hw) < 0) return bad("has no processing-in-memory tier");
        break;
      case AxisKind::kPim:
        if (PimTier(hw) < 0) return bad("has no processing-in-memory tier");
        if (ReferencePeak(hw.tiers[PimTier(hw)].near_memory_compute
                              ->peak_ops_per_second) <= 0)
          return bad("has no BF16 or FP16 peak in its PIM tier to scale");
        break;
      case AxisKind::kPeak:
        if (a.math.has_value()) {
          if (!hw.peak_ops_per_second[static_cast<int>(*a.math)].has_value())
            return bad(absl::StrCat("publishes no ",
                                    Av(engine::MathTypeName(*a.math)),
                                    " peak (the set of math types stays the "
                                    "base part's)"));
        } else if (ReferencePeak(hw.peak_ops_per_second) <= 0) {
          return bad("has no BF16 or FP16 peak to scale");
        }
        break;
      case AxisKind::kTdp:
        if (a.multiplier && !hw.tdp_watts.has_value()) return bad("has no TDP");
        break;
      case AxisKind::kPrice:
        if (a.multiplier && !hw.price_usd.has_value())
          return bad("has no price");
        break;
      case AxisKind::kInterconnect:
        if (a.multiplier && !hw.interconnect_bytes_per_second.has_value())
          return bad("has no interconnect bandwidth");
        break;
      case AxisKind::kSpeculativeTokens:
      case AxisKind::kAcceptanceRate: {
        const engine::SpeculativeDecoding& spec =
            space.base.options.speculative;
        auto refuse = [&](std::string_view why) {
          return internal::AtField(
              absl::InvalidArgumentError(absl::StrCat(
                  Av(field), "[", k, "]: axis ", a.name, ": ", Av(why))),
              path);
        };
        if (!spec.enabled()) {
          return refuse(
              "the base scenario has no speculative decoding to vary (set "
              "options.speculative, --speculative)");
        }
        if (!spec.acceptance_by_position.empty()) {
          return refuse(
              "the base scenario gives one acceptance rate per position "
              "(options.speculative.acceptance_by_position); vary a single "
              "acceptance_rate instead");
        }
        break;
      }
      default:
        break;
    }
  }
  return absl::OkStatus();
}

void ApplyHardwareAxes(const Space& space, const uint64_t* digits,
                       Hardware* hw) {
  const Hardware& base = space.base.hardware;
  for (size_t k = 0; k < space.axes.size(); ++k) {
    const Axis& a = space.axes[k];
    if (!a.hardware()) continue;
    const double v = a.values[digits[k]];
    // value = multiplier x base, or the absolute value in the axis's unit.
    auto pick = [&](double base_value, double unit) {
      return a.multiplier ? v * base_value : v * unit;
    };
    switch (a.kind) {
      case AxisKind::kBandwidth: {
        const int t = DeviceMemoryTier(base);
        hw->tiers[t].read_bandwidth_bytes_per_second =
            pick(base.tiers[t].read_bandwidth_bytes_per_second, 1e9);
        hw->tiers[t].write_bandwidth_bytes_per_second =
            pick(base.tiers[t].write_bandwidth_bytes_per_second, 1e9);
        break;
      }
      case AxisKind::kCapacity: {
        const int t = DeviceMemoryTier(base);
        hw->tiers[t].capacity_bytes =
            pick(base.tiers[t].capacity_bytes, 1024.0 * 1024 * 1024);
        break;
      }
      case AxisKind::kSram: {
        const int t = SramTier(base);
        hw->tiers[t].capacity_bytes =
            pick(base.tiers[t].capacity_bytes, 1024.0 * 1024);
        break;
      }
      case AxisKind::kSramBandwidth: {
        const int t = SramTier(base);
        hw->tiers[t].read_bandwidth_bytes_per_second =
            pick(base.tiers[t].read_bandwidth_bytes_per_second, 1e9);
        hw->tiers[t].write_bandwidth_bytes_per_second =
            pick(base.tiers[t].write_bandwidth_bytes_per_second, 1e9);
        break;
      }
      case AxisKind::kPeak:
        if (a.math.has_value()) {
          const int m = static_cast<int>(*a.math);
          hw->peak_ops_per_second[m] =
              pick(*base.peak_ops_per_second[m], 1e12);
        } else {
          const double ref = ReferencePeak(base.peak_ops_per_second);
          ScalePeaks(&hw->peak_ops_per_second, base.peak_ops_per_second,
                     a.multiplier ? v : v * 1e12 / ref);
        }
        break;
      case AxisKind::kTdp:
        hw->tdp_watts = pick(base.tdp_watts.value_or(0), 1);
        break;
      case AxisKind::kPrice:
        hw->price_usd = pick(base.price_usd.value_or(0), 1);
        break;
      case AxisKind::kInterconnect:
        hw->interconnect_bytes_per_second =
            pick(base.interconnect_bytes_per_second.value_or(0), 1e9);
        break;
      case AxisKind::kPimBandwidth: {
        const int t = PimTier(base);
        hw->tiers[t].near_memory_compute->internal_bandwidth_bytes_per_second =
            pick(base.tiers[t]
                     .near_memory_compute->internal_bandwidth_bytes_per_second,
                 1e9);
        break;
      }
      case AxisKind::kPim: {
        const int t = PimTier(base);
        const auto& peaks = base.tiers[t].near_memory_compute->peak_ops_per_second;
        ScalePeaks(&hw->tiers[t].near_memory_compute->peak_ops_per_second,
                   peaks, a.multiplier ? v : v * 1e12 / ReferencePeak(peaks));
        break;
      }
      default:
        break;
    }
  }
}

double DieAreaMm2(const Space& space, const uint64_t* digits) {
  for (size_t k = 0; k < space.axes.size(); ++k) {
    if (space.axes[k].kind == AxisKind::kDieArea) {
      return space.axes[k].values[digits[k]];
    }
  }
  return std::numeric_limits<double>::quiet_NaN();
}

void ApplyDeploymentAxes(const Space& space, const uint64_t* digits,
                         engine::Scenario* s) {
  for (size_t k = 0; k < space.axes.size(); ++k) {
    const Axis& a = space.axes[k];
    if (a.hardware()) continue;
    const size_t d = digits[k];
    switch (a.kind) {
      case AxisKind::kBatch:
        s->workload.batch = static_cast<int64_t>(a.values[d]);
        break;
      case AxisKind::kPrompt:
        s->workload.prompt_tokens = static_cast<int64_t>(a.values[d]);
        break;
      case AxisKind::kGen:
        s->workload.generated_tokens = static_cast<int64_t>(a.values[d]);
        break;
      case AxisKind::kWeights:
        s->precision.weights = a.formats[d];
        break;
      case AxisKind::kActivations:
        s->precision.activations = a.formats[d];
        break;
      case AxisKind::kKv:
        s->precision.kv_cache = a.formats[d];
        break;
      case AxisKind::kTensorParallel:
        s->parallelism.tensor_parallel = static_cast<int64_t>(a.values[d]);
        break;
      case AxisKind::kSpeculativeTokens:
        s->options.speculative.tokens = static_cast<int64_t>(a.values[d]);
        break;
      case AxisKind::kAcceptanceRate:
        s->options.speculative.acceptance_rate = a.values[d];
        break;
      default:
        break;
    }
  }
}

}  // namespace ridgeline::explore
