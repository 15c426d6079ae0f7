// The router in front of a pool's replicas: which replica takes the next
// request, from the replicas' outstanding work (tokens still to compute:
// prompt left + tokens left, KV in flight to them included) and, for a
// prefix-aware policy, how much of the request's prompt each replica's
// prefix cache holds. A policy is an object. Thread-compatible
// (power-of-two keeps its random stream).
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
  // A policy that reads the prefix caches says so; only then is PickFor
  // called, with `cached_tokens` (per replica, the request's prompt tokens
  // its prefix cache holds) and the request's own outstanding tokens.
  virtual bool reads_prefix_cache() const { return false; }
  virtual size_t PickFor(std::span<const int64_t> outstanding_tokens,
                         std::span<const int64_t> /*cached_tokens*/,
                         int64_t /*request_tokens*/) {
    return Pick(outstanding_tokens);
  }
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

// The replica holding the longest cached prefix of the request, among
// those whose load is within kMeanLoadFactor of the mean load with the
// request counted (consistent hashing with bounded loads' bound, on tokens
// rather than requests; llm-d's precise prefix-cache scorer also weighs
// hits against load); no hit or a tie: the least loaded of them. Pick
// alone (a decode pool's hand-off): least loaded.
class PrefixAffinityRouter final : public Router {
 public:
  // KubeAI's prefix-hash load balancing default (Model CRD,
  // loadBalancing.prefixHash.meanLoadFactor: 125 %).
  static constexpr double kMeanLoadFactor = 1.25;
  std::string_view name() const override { return "prefix-affinity"; }
  size_t Pick(std::span<const int64_t> outstanding_tokens) override;
  bool reads_prefix_cache() const override { return true; }
  size_t PickFor(std::span<const int64_t> outstanding_tokens,
                 std::span<const int64_t> cached_tokens,
                 int64_t request_tokens) override;
};

// The router names the CLI and the API take.
inline constexpr std::string_view kRouterNames =
    "round-robin, least-loaded, power-of-two or prefix-affinity";
// INVALID_ARGUMENT naming `field`, the allowed names and the value.
absl::StatusOr<std::unique_ptr<Router>> MakeRouter(std::string_view name,
                                                   uint64_t seed,
                                                   std::string_view field);

}  // namespace ridgeline::serving
