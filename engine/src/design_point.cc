// DesignPointModel (see design_point.h): Prepare once, then per point only
// placement and AnalyzePrepared.
#include "ridgeline/engine/design_point.h"

#include <utility>

#include "absl/status/status.h"
#include "analysis.h"
#include "economy.h"
#include "placement.h"
#include "validate_util.h"
#include "prepare.h"
#include "ridgeline/engine/status_macros.h"

namespace ridgeline::engine {

struct DesignPointModel::Impl {
  Scenario s;  // owned: the graph context points into it
  internal::Prepared prep;
  std::array<bool, kMathTypeCount> peaks{};  // published at Create
  size_t tiers = 0;
  std::array<bool, kMaxTiers> pim{};
  internal::PointTallies tallies;  // of the last Evaluate
  bool priced = false;             // tallies hold a successful Evaluate
};

DesignPointModel::DesignPointModel(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
DesignPointModel::DesignPointModel(DesignPointModel&&) noexcept = default;
DesignPointModel& DesignPointModel::operator=(DesignPointModel&&) noexcept =
    default;
DesignPointModel::~DesignPointModel() = default;

absl::StatusOr<DesignPointModel> DesignPointModel::Create(
    const Scenario& base) {
  RETURN_IF_ERROR(ValidateScenario(base));
  auto impl = std::make_unique<Impl>();
  impl->s = base;
  impl->s.options.suggestions = false;
  RETURN_IF_ERROR(internal::Prepare(impl->s, &impl->prep));
  const Hardware& hw = impl->s.hardware;
  for (int t = 0; t < kMathTypeCount; ++t) {
    impl->peaks[t] = hw.peak_ops_per_second[t].has_value();
  }
  impl->tiers = hw.tiers.size();
  for (size_t t = 0; t < hw.tiers.size(); ++t) {
    impl->pim[t] = hw.tiers[t].near_memory_compute.has_value();
  }
  return DesignPointModel(std::move(impl));
}

Hardware& DesignPointModel::hardware() { return impl_->s.hardware; }
const Scenario& DesignPointModel::scenario() const { return impl_->s; }

absl::Status DesignPointModel::Evaluate(AnalysisResult* out) {
  Impl& m = *impl_;
  m.priced = false;
  const Hardware& hw = m.s.hardware;
  bool same = hw.tiers.size() == m.tiers;
  for (int t = 0; same && t < kMathTypeCount; ++t) {
    same = hw.peak_ops_per_second[t].has_value() == m.peaks[t];
  }
  for (size_t t = 0; same && t < hw.tiers.size(); ++t) {
    same = hw.tiers[t].near_memory_compute.has_value() == m.pim[t];
  }
  if (!same) {
    return absl::FailedPreconditionError(
        "design point: the hardware's tiers or set of published peaks "
        "changed since Create; only numbers may change");
  }
  RETURN_IF_ERROR(ValidateHardware(hw));
  if (m.s.options.prefill_chunk_tokens == 0) {
    // The default prefill chunking depends on the capacity: where it may
    // differ from Create's choice (the whole prompt's activations do not
    // fit here, or they do but Create chunked), prepare this point anew so
    // the result equals Analyze.
    internal::PlacementInfo probe;
    const bool whole_fits =
        internal::Place(hw, m.s.pins, m.prep.need_whole_prompt, &probe).fits;
    if (!whole_fits || m.prep.prefill_chunks > 1) {
      internal::Prepared fresh;
      RETURN_IF_ERROR(internal::Prepare(m.s, &fresh));
      ASSIGN_OR_RETURN(*out,
                       internal::AnalyzePrepared(m.s, &fresh,
                                                 internal::Detail::kPoint,
                                                 &m.tallies));
      m.priced = true;
      return absl::OkStatus();
    }
  }
  m.prep.place = internal::PlacementInfo();
  m.prep.memory = internal::Place(hw, m.s.pins, m.prep.need, &m.prep.place);
  ASSIGN_OR_RETURN(*out,
                   internal::AnalyzePrepared(m.s, &m.prep,
                                             internal::Detail::kPoint,
                                             &m.tallies));
  m.priced = true;
  return absl::OkStatus();
}

absl::Status DesignPointModel::Reprice(AnalysisResult* out) {
  Impl& m = *impl_;
  if (!m.priced) {
    return absl::FailedPreconditionError(
        "design point: Reprice needs a successful Evaluate first");
  }
  const Hardware& hw = m.s.hardware;
  // The only numbers that may have changed; ValidateHardware names a bad one.
  if ((hw.tdp_watts.has_value() && !internal::IsPositive(*hw.tdp_watts, false)) ||
      (hw.price_usd.has_value() && !internal::IsPositive(*hw.price_usd, true))) {
    m.priced = false;
    RETURN_IF_ERROR(ValidateHardware(hw));
  }
  internal::FinishEconomy(m.s, m.tallies.prefill, m.tallies.decode,
                          out->e2e_seconds, &out->economy);
  return absl::OkStatus();
}

}  // namespace ridgeline::engine
