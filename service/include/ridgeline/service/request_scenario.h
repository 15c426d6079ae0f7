// Request -> Scenario translation: the one place where the fields that v1
// requests share (model, hardware, workload, formats, placement, options,
// economics, parallelism, calibration) are validated and turned into
// engine inputs. Every RPC adapter (Analyze, Sweep, AnalyzeKernel, and the
// multi-scenario ones) builds its scenarios here, so a rule and its message
// exist once. Errors are INVALID_ARGUMENT naming the request's field path,
// the allowed range and the value, with the path also as a Status payload
// (engine/field_path.h). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ridgeline/engine/ranges.h"
#include "ridgeline/calibration/profiles.h"
#include "ridgeline/engine/formats.h"
#include "ridgeline/engine/hardware.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/engine/scenario.h"
#include "ridgeline/plugin_host/registry.h"
#include "ridgeline/v1/ridgeline.pb.h"

namespace ridgeline::service::request {

// Numeric ranges enforced at the edge are the engine's own table
// (ridgeline/engine/ranges.h), checked here so the error names the
// request's field path; only the id length is the service's.
inline constexpr size_t kMaxIdChars = 128;

// Client text quoted for an error message, cut to a short prefix.
std::string Quote(absl::string_view s);

// INVALID_ARGUMENT "<path>: must be <range>; got <got>" with the path as
// payload.
absl::Status OutOfRange(absl::string_view path, absl::string_view range,
                        absl::string_view got);
absl::Status CheckInt(absl::string_view path, int64_t v, int64_t lo,
                      int64_t hi);
// NaN fails every comparison, so it is rejected too.
absl::Status CheckDouble(absl::string_view path, double v, double lo,
                         bool lo_open, double hi);
// The same against a row of the engine's ranges table.
absl::Status CheckInt(absl::string_view path, int64_t v,
                      const engine::IntRange& r);
absl::Status CheckDouble(absl::string_view path, double v,
                         const engine::DoubleRange& r);
// A nested error (engine, registry) seen from the request's field `path`.
absl::Status Prefixed(absl::string_view path, const absl::Status& s);

// The catalog entry whose id equals `id` ignoring case, or null (no
// allocation: the hot path of every Analyze).
const engine::ModelConfig* FindCatalogModel(absl::string_view id);
absl::StatusOr<engine::ModelConfig> ResolveModel(const v1::ModelSpec& spec,
                                                 absl::string_view path);
// As ResolveModel, assigning into `*out`.
absl::Status ResolveModelInto(const v1::ModelSpec& spec, absl::string_view path,
                              engine::ModelConfig* out);

absl::StatusOr<engine::Hardware> ResolveHardware(
    const plugin_host::HardwareRegistry& registry, const v1::HardwareSpec& spec,
    absl::string_view path);
absl::Status ResolveHardwareInto(const plugin_host::HardwareRegistry& registry,
                                 const v1::HardwareSpec& spec,
                                 absl::string_view path, engine::Hardware* out);
// Inline hardware: translation only (unknown kind names are
// INVALID_ARGUMENT naming `path`); ResolveHardware also validates.
engine::PerMathType FromProto(const v1::PerMathType& in);
absl::StatusOr<engine::Hardware> FromProto(const v1::Hardware& in,
                                           absl::string_view path);

// "" is bf16.
absl::StatusOr<engine::NumberFormat> ParseFormat(const std::string& name,
                                                 absl::string_view path);
absl::StatusOr<engine::Precision> ResolveFormats(const v1::Formats& f,
                                                 absl::string_view path);

// options.speculative and options.lora into `out` (Analyze, StepTime,
// Sweep, Explore, Simulate and Plan share it). Names only (method, modules);
// the ranges and the draft's fit are the engine's checks.
absl::Status ApplyDecodeVariants(const v1::AnalysisOptions& opts,
                                 engine::AnalysisOptions* out);

// Everything in a request that is shared by all points of a sweep.
struct Common {
  engine::PlacementPins pins;
  engine::AnalysisOptions options;
  engine::Economics economics;
  engine::Parallelism parallelism;
};
absl::StatusOr<Common> ResolveCommon(const v1::PlacementPins& pins,
                                     const v1::AnalysisOptions& opts,
                                     const v1::EconomicsOverrides& econ,
                                     const v1::Parallelism& parallelism,
                                     bool suggestions_default);

// Pins beyond the hardware's tier count are a request error, not an engine
// one: the client chose both.
absl::Status CheckPinsFit(const engine::PlacementPins& pins,
                          const engine::Hardware& hw,
                          absl::string_view hw_path);

// The calibration profile a request selects, and how it was selected:
// "profile", "framework-match", "hardware-match" or "none".
struct Chosen {
  const calibration::Profile* profile = nullptr;
  std::string selected_by = "none";
  std::string match;    // how a framework query was matched, in words
  std::string warning;  // set when the profile is not the framework asked for
};
absl::StatusOr<Chosen> ChooseProfile(const calibration::ProfileStore& store,
                                     const v1::Calibration& cal,
                                     const engine::Hardware& hw);

// fp16 accumulation: what the request says, else what the chosen profile's
// framework does (a profile fitted with it is only right with it), unless
// the profile is only a fallback fitted with another framework.
template <typename Request>  // v1::AnalysisOptions or v1::AnalyzeKernelRequest
bool Fp16Accumulation(const Chosen& chosen, const Request& requested) {
  if (requested.has_fp16_accumulation()) return requested.fp16_accumulation();
  return chosen.profile != nullptr && chosen.selected_by != "hardware-match" &&
         chosen.profile->fp16_accumulation;
}

// The chosen profile's efficiency and framework numerics into `*s`.
void ApplyProfile(const Chosen& chosen, const v1::AnalysisOptions& requested,
                  engine::Scenario* s);

// Workload fields that are set replace the defaults in `*out`.
absl::Status CheckWorkload(const v1::Workload& w, engine::Workload* out);

}  // namespace ridgeline::service::request
