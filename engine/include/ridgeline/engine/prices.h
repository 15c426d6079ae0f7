// What one device of a scenario costs: the one price rule every command
// uses (Analyze, Sweep, Explore, Plan, the web views), and the dated rental
// list prices it falls back on. Plain data and pure functions; thread-safe.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "ridgeline/engine/hardware.h"
#include "ridgeline/engine/scenario.h"

namespace ridgeline::engine {

// What $/Mtoken charges a device at, in the words every response uses.
enum class CostBasis {
  kNone,        // "": neither a price nor energy is known (no $/Mtoken)
  kRental,      // "rental": a price per device-hour (power included)
  kPurchase,    // "purchase": price amortised over years x utilization,
                //   plus electricity
  kEnergyOnly,  // "energy-only": no device price known, electricity only
};
std::string_view CostBasisName(CostBasis basis);

struct RentalPrice {
  std::string_view hardware_id;
  double usd_per_device_hour;
  std::string_view source;  // who lists it, where we read it, as of when
};

// On-demand list prices per device-hour of the datacenter parts, each with
// its source and date (prices.cc).
const std::vector<RentalPrice>& DefaultRentalPrices();
std::optional<RentalPrice> FindRentalPrice(std::string_view hardware_id);

// The price of one device of `hw` under `econ`, first that applies: the
// request's rental price (econ.usd_per_device_hour), the request's purchase
// price (econ.price_usd), the dated rental list price of the part (unless
// econ.list_rental_price is false), the hardware's purchase price. None of
// them: basis kEnergyOnly (the caller makes it kNone when energy is
// unknown too).
struct DevicePrice {
  CostBasis basis = CostBasis::kEnergyOnly;
  // Dollars per second one device serves: rental / 3600 / utilization, or
  // purchase / (amortization_years x seconds per year x utilization); 0
  // for kEnergyOnly.
  double usd_per_served_second = 0;
  double usd_per_device_hour = 0;  // kRental
  double price_usd = 0;            // kPurchase, per device
  // Where the price is from: "request", "hardware", or the list entry's
  // source (static storage).
  std::string_view source;
  // A rental price includes power; purchase and energy-only add
  // electricity.
  bool plus_electricity() const { return basis != CostBasis::kRental; }
};
DevicePrice DevicePriceOf(const Hardware& hw, const Economics& econ);

}  // namespace ridgeline::engine
