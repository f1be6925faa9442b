// Simulated time: integer picoseconds, and conversion from cycles of a named clock.
#pragma once

#include <cmath>
#include <cstdint>

namespace attnsim::sim {

// Simulated time in picoseconds. Integer, so event order never depends on rounding.
using Tick = std::int64_t;

inline constexpr Tick kTicksPerNs = 1000;

// A clock domain (engine, memory, fabric) at a fixed frequency.
class Clock {
 public:
  explicit Clock(double hz) : ps_per_cycle_(1e12 / hz) {}
  // Duration of `cycles` cycles, rounded to the nearest picosecond once (not per cycle).
  Tick ticks(double cycles) const { return static_cast<Tick>(std::llround(cycles * ps_per_cycle_)); }
  double cycles(Tick t) const { return static_cast<double>(t) / ps_per_cycle_; }
  double hz() const { return 1e12 / ps_per_cycle_; }

 private:
  double ps_per_cycle_;
};

}  // namespace attnsim::sim
