// splitmix64: the same sequence on every platform (the standard library's
// distributions are implementation-defined). Internal to serving/.
#pragma once

#include <cstdint>

namespace ridgeline::serving::internal {

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed + 0x9E3779B97F4A7C15ull) {}
  uint64_t Next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double Uniform01() {  // [0, 1)
    return static_cast<double>(Next() >> 11) * 0x1.0p-53;
  }

 private:
  uint64_t s_;
};

}  // namespace ridgeline::serving::internal
