// The device price rule and the rental list (see prices.h).
#include "ridgeline/engine/prices.h"

namespace ridgeline::engine {

std::string_view CostBasisName(CostBasis basis) {
  switch (basis) {
    case CostBasis::kRental:
      return "rental";
    case CostBasis::kPurchase:
      return "purchase";
    case CostBasis::kEnergyOnly:
      return "energy-only";
    case CostBasis::kNone:
      break;
  }
  return "";
}

// On-demand list prices per GPU-hour (single on-demand GPU, no commitment).
// Cloud prices move; these are dated quotes, overridable per request
// (Economics.usd_per_device_hour: PlanRequest.pricing, `ridgeline plan
// --usd-per-device-hour`). No B200 / H200 / MI300X / H100 price is
// invented: each line names where it is published. Parts not listed here
// have no default rental price.
const std::vector<RentalPrice>& DefaultRentalPrices() {
  static const std::vector<RentalPrice> kPrices = {
      {"nvidia-h100-sxm-80gb", 2.99,
       "Lambda on-demand H100 SXM $2.99/GPU-hour, as quoted by "
       "cliffcenter.com/research/amd-inference-economics (research note "
       "2026-05-18)"},
      {"nvidia-h200-sxm-141gb", 4.54,
       "Spheron on-demand H200 $4.54/GPU-hour as of 2026-03-17 "
       "(spheron.network/blog/nvidia-h200-vs-b200-vs-gb200)"},
      {"nvidia-b200-180gb", 6.03,
       "Spheron on-demand B200 $6.03/GPU-hour as of 2026-03-17 "
       "(spheron.network/blog/nvidia-h200-vs-b200-vs-gb200)"},
      {"amd-mi300x", 1.85,
       "Vultr on-demand MI300X $1.85/GPU-hour, as quoted by "
       "cliffcenter.com/research/amd-inference-economics (research note "
       "2026-05-18)"},
  };
  return kPrices;
}

std::optional<RentalPrice> FindRentalPrice(std::string_view hardware_id) {
  for (const RentalPrice& p : DefaultRentalPrices()) {
    if (p.hardware_id == hardware_id) return p;
  }
  return std::nullopt;
}

DevicePrice DevicePriceOf(const Hardware& hw, const Economics& econ) {
  constexpr double kSecondsPerYear = 365.25 * 24 * 3600;
  DevicePrice p;
  auto rental = [&](double usd_per_hour, std::string_view source) {
    p.basis = CostBasis::kRental;
    p.usd_per_device_hour = usd_per_hour;
    p.usd_per_served_second = usd_per_hour / 3600 / econ.utilization;
    p.source = source;
  };
  auto purchase = [&](double usd, std::string_view source) {
    p.basis = CostBasis::kPurchase;
    p.price_usd = usd;
    p.usd_per_served_second =
        usd / (econ.amortization_years * kSecondsPerYear * econ.utilization);
    p.source = source;
  };
  if (econ.usd_per_device_hour) {
    rental(*econ.usd_per_device_hour, "request");
  } else if (econ.price_usd) {
    purchase(*econ.price_usd, "request");
  } else if (std::optional<RentalPrice> listed =
                 econ.list_rental_price ? FindRentalPrice(hw.id)
                                        : std::nullopt) {
    rental(listed->usd_per_device_hour, listed->source);
  } else if (hw.price_usd) {
    purchase(*hw.price_usd, "hardware");
  }
  return p;
}

}  // namespace ridgeline::engine
