// The router in front of a pool's replicas: which replica takes the next
// request, from the replicas' outstanding work (tokens still to compute:
// prompt left + tokens left, KV in flight to them included). A policy is an
// object; a prefix-affinity policy comes with the next serving issue.
// Thread-compatible (power-of-two keeps its random stream).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "absl/status/statusor.h"

namespace ridgeline::serving {

class Router {
 public:
  virtual ~Router() = default;
  virtual std::string_view name() const = 0;
  // `outstanding_tokens` has one entry per replica (non-empty); returns the
  // chosen index.
  virtual size_t Pick(std::span<const int64_t> outstanding_tokens) = 0;
};

// Replica 0, 1, ..., N - 1, 0, ...
class RoundRobinRouter final : public Router {
 public:
  std::string_view name() const override { return "round-robin"; }
  size_t Pick(std::span<const int64_t> outstanding_tokens) override;

 private:
  size_t next_ = 0;
};

// The fewest outstanding tokens; ties to the lowest index.
class LeastLoadedRouter final : public Router {
 public:
  std::string_view name() const override { return "least-loaded"; }
  size_t Pick(std::span<const int64_t> outstanding_tokens) override;
};

// Two distinct replicas drawn at random, the less loaded of them (ties to
// the first drawn): Mitzenmacher's power of two choices.
class PowerOfTwoRouter final : public Router {
 public:
  explicit PowerOfTwoRouter(uint64_t seed) : state_(seed) {}
  std::string_view name() const override { return "power-of-two"; }
  size_t Pick(std::span<const int64_t> outstanding_tokens) override;

 private:
  uint64_t state_;
};

// The router names the CLI and the API take.
inline constexpr std::string_view kRouterNames =
    "round-robin, least-loaded or power-of-two";
// INVALID_ARGUMENT naming `field`, the allowed names and the value.
absl::StatusOr<std::unique_ptr<Router>> MakeRouter(std::string_view name,
                                                   uint64_t seed,
                                                   std::string_view field);

}  // namespace ridgeline::serving
