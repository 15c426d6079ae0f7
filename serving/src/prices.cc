#include "ridgeline/serving/prices.h"

namespace ridgeline::serving {

// On-demand list prices per GPU-hour (single on-demand GPU, no commitment).
// Cloud prices move; these are dated quotes, overridable per request
// (PlanRequest.pricing, `ridgeline plan --usd-per-device-hour`). No B200 /
// H200 / MI300X / H100 price is invented: each line names where it is
// published. Parts not listed here have no default rental price.
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

}  // namespace ridgeline::serving
