// Default rental prices per device-hour for the datacenter parts whose
// plugins publish no purchase price. Each carries its source and date.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace ridgeline::serving {

struct RentalPrice {
  std::string_view hardware_id;
  double usd_per_device_hour;
  std::string_view source;  // who lists it, where we read it, as of when
};

const std::vector<RentalPrice>& DefaultRentalPrices();
std::optional<RentalPrice> FindRentalPrice(std::string_view hardware_id);

}  // namespace ridgeline::serving
