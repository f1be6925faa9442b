// The engine clock under load: a power-limited clock as a function of what the chip is doing.
#pragma once

#include <array>

#include "arch/gpu_spec.h"

namespace attnsim::arch {

// Fraction of time [0, 1] each power class is busy across the chip.
struct Activity {
  std::array<double, kDtypes.size()> matrix{};  // dense matrix work by Dtype
  double stream = 0;                            // HBM traffic as a fraction of the HBM peak bandwidth
  double vector = 0;                            // the SIMDs' vector pipes (VALU, transcendentals) busy
};

// The clock a sustained activity settles at, and whether the power cap set it.
struct ClockEstimate {
  Hertz clock;
  bool power_limited = false;
  Watts power;  // board power at that clock
};

// Model: P(f) = baseline + (f / f_ref)^3 * sum_k activity_k * P_k, where P_k is class k's
// dynamic power at f_ref = clock.power.reference_clock (dynamic power ~ f V^2 with V tracking f;
// the shipped configs state their engine_max there). The clock is the
// highest f <= cap with P(f) <= limit; cap is clock.matrix_max when any matrix work is active,
// else clock.engine_max.
// With clock.engine_pinned set, the clock is that value whatever the activity (power reported, not
// enforced). Contract: pure; activity values outside [0, 1] are clamped.
ClockEstimate sustained_clock(const ClockSpec& clock, const Activity& activity);

// `gpu`'s clock with its power classes for its own chip: clock.power.matrix_* and
// clock.power.vector scaled by its SIMDs (chip.xcds x chip.cus_per_xcd x cu.simds) over
// clock.power.reference_simds, clock.power.stream by
// hbm.peak_bandwidth over clock.power.reference_hbm_bandwidth. The shipped configs state their own
// chip, so both factors are 1 unless a what-if changes the SIMDs or the HBM peak. Contract: pure;
// the references positive (the loader's ranges ensure it for a loaded spec).
ClockSpec chip_clock(const GpuSpec& gpu);

// sustained_clock(chip_clock(gpu), activity): what the simulator uses.
ClockEstimate sustained_clock(const GpuSpec& gpu, const Activity& activity);

// Full dense matrix load of one dtype (what a large GEMM does).
Activity matrix_load(Dtype dtype);

// The engine clock of XCD `xcd` when the power controller sets `hz`: hz x (1 + clock.xcd_spread x
// (1/2 - xcd / (chip.xcds - 1))), not above max(hz, clock.engine_max); exactly hz on a GPU of one
// XCD or with no spread. Contract: pure; xcd < chip.xcds.
double xcd_clock(const GpuSpec& gpu, std::uint32_t xcd, double hz);

// The controller's clock at which the slowest XCD (the last) runs at `slowest_hz`: what a measured
// "lowest per-XCD clock" (hipBLASLt's lowest-median-freq, BLOG-MAF2) corresponds to. Contract: pure;
// the inverse of xcd_clock for the last XCD below engine_max; `slowest_hz` itself without a spread.
double controller_for_slowest_xcd(const GpuSpec& gpu, double slowest_hz);

}  // namespace attnsim::arch
