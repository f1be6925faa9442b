#include "arch/clock_model.h"

#include <algorithm>
#include <cmath>

namespace attnsim::arch {

ClockEstimate sustained_clock(const ClockSpec& clock, const Activity& activity) {
  // Every class's dynamic power at the reference clock for this activity, whether the clock is
  // modelled or pinned, and the board power it draws at clock f.
  double dynamic_at_ref = 0;
  bool matrix_active = false;
  for (std::size_t i = 0; i < activity.matrix.size(); ++i) {
    const double a = std::clamp(activity.matrix[i], 0.0, 1.0);
    matrix_active = matrix_active || a > 0;
    dynamic_at_ref += a * clock.power_matrix[i].value;
  }
  dynamic_at_ref += std::clamp(activity.stream, 0.0, 1.0) * clock.power_stream.value;
  dynamic_at_ref += std::clamp(activity.vector, 0.0, 1.0) * clock.power_vector.value;
  const double f_ref = clock.power_reference_clock.value;
  const auto power_at = [&](double f) { return clock.power_baseline.value + std::pow(f / f_ref, 3) * dynamic_at_ref; };
  if (clock.engine_pinned) {
    // A pinned clock: the power the activity draws there is reported, not enforced.
    return ClockEstimate{*clock.engine_pinned, false, Watts{power_at(clock.engine_pinned->value)}};
  }

  const double cap = matrix_active ? clock.matrix_max.value : clock.engine_max.value;
  if (dynamic_at_ref <= 0 || power_at(cap) <= clock.power_limit.value) {
    return ClockEstimate{Hertz{cap}, false, Watts{power_at(cap)}};
  }
  const double headroom = std::max(0.0, clock.power_limit.value - clock.power_baseline.value);
  const double f = f_ref * std::cbrt(headroom / dynamic_at_ref);
  return ClockEstimate{Hertz{f}, true, Watts{power_at(f)}};
}

ClockSpec chip_clock(const GpuSpec& gpu) {
  ClockSpec c = gpu.clock;
  const double simds = static_cast<double>(gpu.total_simds()) / static_cast<double>(c.power_reference_simds);
  for (Watts& w : c.power_matrix) w.value *= simds;
  c.power_vector.value *= simds;
  c.power_stream.value *= gpu.hbm.peak_bandwidth.value / c.power_reference_hbm_bandwidth.value;
  return c;
}

ClockEstimate sustained_clock(const GpuSpec& gpu, const Activity& activity) {
  return sustained_clock(chip_clock(gpu), activity);
}

Activity matrix_load(Dtype dtype) {
  Activity a;
  a.matrix[static_cast<std::size_t>(dtype)] = 1.0;
  return a;
}

double xcd_clock(const GpuSpec& gpu, std::uint32_t xcd, double hz) {
  if (gpu.clock.xcd_spread == 0 || gpu.chip.xcds < 2) return hz;
  const double place = static_cast<double>(xcd) / static_cast<double>(gpu.chip.xcds - 1);
  const double f = hz * (1 + gpu.clock.xcd_spread * (0.5 - place));
  return std::min(f, std::max(hz, gpu.clock.engine_max.value));
}

double controller_for_slowest_xcd(const GpuSpec& gpu, double slowest_hz) {
  if (gpu.clock.xcd_spread == 0 || gpu.chip.xcds < 2) return slowest_hz;
  return slowest_hz / (1 - gpu.clock.xcd_spread / 2);
}

}  // namespace attnsim::arch
