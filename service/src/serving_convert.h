// Request pieces the serving RPCs (Plan, Simulate) share: model, formats,
// token lengths and economics from their v1 messages, with errors naming
// the field. Internal to service/src.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ridgeline/calibration/profiles.h"
#include "ridgeline/engine/hardware.h"
#include "ridgeline/engine/model.h"
#include "ridgeline/plugin_host/registry.h"
#include "ridgeline/engine/scenario.h"
#include "ridgeline/serving/simulate.h"
#include "ridgeline/v1/ridgeline.pb.h"

namespace ridgeline::service::serving_convert {

absl::Status Bad(absl::string_view field, absl::string_view range,
                 absl::string_view got);
absl::Status Prefixed(absl::string_view path, const absl::Status& s);
absl::StatusOr<serving::LengthDistribution> Lengths(const v1::TokenLengths& l,
                                                    absl::string_view field);
absl::StatusOr<engine::ModelConfig> Model(const v1::ModelSpec& spec);
// A trace's arrivals with, when it gives them, its lengths and prompt
// blocks (serving/trace.h); errors name traffic.trace.*. The lengths are
// checked by the simulation, the blocks' count here.
absl::StatusOr<serving::Arrivals> TraceArrivals(const v1::ArrivalTrace& t);
// ServingOptions over the defaults (vLLM's), validated ("serving.<field>").
absl::StatusOr<serving::ServingConfig> ServingConfigOf(
    const v1::ServingOptions& so);
absl::StatusOr<engine::Precision> Precision(const v1::Formats& f,
                                            const std::string& path);
absl::Status Economics(const v1::EconomicsOverrides& e,
                       engine::Economics* out);
std::string FormatsLabel(const engine::Precision& p);

// A catalog platform or an inline description; errors name `path`.
absl::StatusOr<engine::Hardware> Hardware(
    const plugin_host::HardwareRegistry& registry, const v1::HardwareSpec& spec,
    const std::string& path);

// The calibration for `hw`: a named profile, or the best match for a
// framework (none: the pure roofline). `path` names the field in errors.
// A framework query takes the framework's serving profile, else the kernel
// profiles' best match (request::ChooseProfile); `match` says which and how,
// `warning` is set when it is not the framework asked for (or nothing is).
struct Calibrated {
  engine::Efficiency efficiency;
  bool fp16_accumulation = false;
  std::string profile_name;  // "" = pure roofline
  std::string fitted_from;
  std::string selected_by = "none";  // as v1::CalibrationUsed.selected_by
  std::string match;
  std::string warning;
  // The serving profile chosen, if any (owned by the store): where it was
  // fitted (Profile::serving_fit), for ExtrapolationFloor.
  const calibration::Profile* serving_profile = nullptr;
};
absl::StatusOr<Calibrated> Calibration(const calibration::ProfileStore& store,
                                       const v1::Calibration& cal,
                                       const engine::Hardware& hw,
                                       const std::string& path);

// Where `cal`'s serving profile was not fitted (another part, another
// tensor-parallel degree, expert parallelism: calibration::
// FittedOnDeployment), sets the profile's floor on `s->efficiency` (each
// step no slower than the pure roofline's / min_speed_fraction) and returns
// the warning that says so; "" otherwise (fitted there, a kernel profile,
// the pure roofline).
std::string ExtrapolationFloor(const Calibrated& cal, engine::Scenario* s);

// A simulation's timeline as its v1 message.
void ToProto(const serving::Timeline& t, v1::SimulateTimeline* out);

}  // namespace ridgeline::service::serving_convert
