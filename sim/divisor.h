// Division and remainder by a divisor fixed at construction, as a shift and a mask when it is a
// power of two (the common case for cache sets and channel counts) and a hardware divide otherwise.
#pragma once

#include <cstdint>
#include <stdexcept>

namespace attnsim::sim {

// A fixed divisor. Contract: div(x) == x / d and mod(x) == x % d for every x; d > 0.
class Divisor {
 public:
  Divisor() = default;
  explicit Divisor(std::uint64_t d) : d_(d) {
    if (d == 0) throw std::invalid_argument("Divisor: zero");
    pow2_ = (d & (d - 1)) == 0;
    while ((std::uint64_t{1} << shift_) < d) ++shift_;
  }
  std::uint64_t div(std::uint64_t x) const { return pow2_ ? x >> shift_ : x / d_; }
  std::uint64_t mod(std::uint64_t x) const { return pow2_ ? x & (d_ - 1) : x % d_; }
  std::uint64_t value() const { return d_; }

 private:
  std::uint64_t d_ = 1;
  std::uint32_t shift_ = 0;
  bool pow2_ = true;
};

}  // namespace attnsim::sim
