#include "ridgeline/serving/router.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "ridgeline/engine/field_path.h"
#include "rng.h"

namespace ridgeline::serving {

size_t RoundRobinRouter::Pick(std::span<const int64_t> outstanding_tokens) {
  const size_t i = next_ % outstanding_tokens.size();
  next_ = i + 1;
  return i;
}

size_t LeastLoadedRouter::Pick(std::span<const int64_t> outstanding_tokens) {
  size_t best = 0;
  for (size_t i = 1; i < outstanding_tokens.size(); ++i) {
    if (outstanding_tokens[i] < outstanding_tokens[best]) best = i;
  }
  return best;
}

size_t PowerOfTwoRouter::Pick(std::span<const int64_t> outstanding_tokens) {
  const uint64_t n = outstanding_tokens.size();
  if (n == 1) return 0;
  internal::Rng rng(state_);
  state_ = rng.Next();  // the next pick's seed
  const size_t a = static_cast<size_t>(rng.Next() % n);
  // A second replica, distinct from the first.
  const size_t b = static_cast<size_t>((a + 1 + rng.Next() % (n - 1)) % n);
  return outstanding_tokens[b] < outstanding_tokens[a] ? b : a;
}

size_t PrefixAffinityRouter::Pick(std::span<const int64_t> outstanding_tokens) {
  return LeastLoadedRouter().Pick(outstanding_tokens);
}

size_t PrefixAffinityRouter::PickFor(std::span<const int64_t> outstanding,
                                     std::span<const int64_t> cached,
                                     int64_t request_tokens) {
  double total = static_cast<double>(request_tokens);
  for (int64_t l : outstanding) total += static_cast<double>(l);
  const double bound =
      kMeanLoadFactor * total / static_cast<double>(outstanding.size());
  size_t best = outstanding.size();
  for (size_t k = 0; k < outstanding.size(); ++k) {
    if (static_cast<double>(outstanding[k]) > bound) continue;
    if (best == outstanding.size() || cached[k] > cached[best] ||
        (cached[k] == cached[best] && outstanding[k] < outstanding[best])) {
      best = k;
    }
  }
  // The least loaded is at most the mean, so always within the bound.
  return best < outstanding.size() ? best : Pick(outstanding);
}

absl::StatusOr<std::unique_ptr<Router>> MakeRouter(std::string_view name,
                                                   uint64_t seed,
                                                   std::string_view field) {
  if (name == "round-robin") return std::make_unique<RoundRobinRouter>();
  if (name == "least-loaded") return std::make_unique<LeastLoadedRouter>();
  if (name == "power-of-two") return std::make_unique<PowerOfTwoRouter>(seed);
  if (name == "prefix-affinity") {
    return std::make_unique<PrefixAffinityRouter>();
  }
  return engine::WithFieldPath(
      absl::InvalidArgumentError(absl::StrCat(
          std::string(field), ": must be ", std::string(kRouterNames),
          "; got \"", std::string(name), "\"")),
      field);
}

}  // namespace ridgeline::serving
