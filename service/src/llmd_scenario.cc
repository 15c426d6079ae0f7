// Backend::PodLatencyModelFor: the scenario of the llm-d latency
// predictor's pods, resolved as Simulate resolves its request.
#include "absl/strings/str_cat.h"
#include "ridgeline/engine/field_path.h"
#include "ridgeline/engine/status_macros.h"
#include "ridgeline/service/backend.h"
#include "serving_convert.h"

namespace ridgeline::service {
namespace {

absl::Status AsFlag(const absl::Status& s, const std::string& flag) {
  if (s.ok()) return s;
  return engine::WithFieldPath(
      absl::Status(s.code(), absl::StrCat("--", flag, ": ", s.message())),
      flag);
}

}  // namespace

absl::StatusOr<Backend::PodModel> Backend::PodLatencyModelFor(
    const std::string& model_id, const std::string& hardware_id,
    int64_t tensor_parallel, const std::string& framework) const {
  engine::Scenario s;
  v1::ModelSpec model;
  model.set_catalog_id(model_id);
  absl::StatusOr<engine::ModelConfig> m = serving_convert::Model(model);
  if (!m.ok()) return AsFlag(m.status(), "llmd-model");
  s.model = *std::move(m);
  v1::HardwareSpec hw;
  hw.set_platform_id(hardware_id);
  absl::StatusOr<engine::Hardware> h =
      serving_convert::Hardware(*registry_, hw, "hardware");
  if (!h.ok()) return AsFlag(h.status(), "llmd-hardware");
  s.hardware = *std::move(h);
  ASSIGN_OR_RETURN(s.precision,
                   serving_convert::Precision(v1::Formats(), "formats"));
  if (tensor_parallel < 1 || tensor_parallel > 256) {
    return AsFlag(absl::InvalidArgumentError(absl::StrCat(
                      "must be in [1, 256]; got ", tensor_parallel)),
                  "llmd-tensor-parallel");
  }
  s.parallelism.tensor_parallel = tensor_parallel;
  v1::Calibration cal;
  if (!framework.empty()) cal.set_framework(framework);
  absl::StatusOr<serving_convert::Calibrated> c =
      serving_convert::Calibration(*profiles_, cal, s.hardware, "calibration");
  if (!c.ok()) return AsFlag(c.status(), "llmd-framework");
  s.efficiency = c->efficiency;
  s.options.fp16_accumulation = c->fp16_accumulation;
  s.options.suggestions = false;
  if (absl::Status st = engine::ValidateScenario(s); !st.ok()) {
    return AsFlag(st, "llmd-hardware");
  }
  absl::StatusOr<std::unique_ptr<serving::PodLatencyModel>> pod =
      serving::PodLatencyModel::Create(s, serving::ServingConfig{});
  if (!pod.ok()) return AsFlag(pod.status(), "llmd-model");
  PodModel out;
  out.model = *std::move(pod);
  out.calibration = c->profile_name;
  out.warning = c->warning;
  return out;
}

}  // namespace ridgeline::service
