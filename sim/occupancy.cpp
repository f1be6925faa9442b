#include "sim/occupancy.h"

#include <algorithm>

namespace attnsim::sim {

Occupancy occupancy(const arch::GpuSpec& gpu, std::uint32_t waves, std::uint32_t vgprs, std::uint32_t lds_bytes) {
  const arch::CuSpec& cu = gpu.cu;
  Occupancy o;
  const std::uint32_t granule = cu.vgpr_alloc_granule;
  o.vgprs_allocated = std::max<std::uint32_t>(granule, (vgprs + granule - 1) / granule * granule);
  const auto regs_per_lane = static_cast<std::uint32_t>(cu.vgpr_file.value / (std::uint64_t{cu.simds} * cu.wave_size * 4));
  if (waves == 0 || waves * cu.wave_size > cu.max_workgroup_size) {
    o.limited_by = "workgroup size";
    return o;
  }
  const std::uint32_t waves_per_simd_vgpr = std::min(cu.wave_slots_per_simd, regs_per_lane / o.vgprs_allocated);
  // Waves of one workgroup per SIMD (round-robin placement): the busiest SIMD sets the limit.
  const std::uint32_t per_simd = (waves + cu.simds - 1) / cu.simds;
  const std::uint32_t by_slots = cu.wave_slots_per_simd / per_simd;
  const std::uint32_t by_vgprs = waves_per_simd_vgpr / per_simd;
  const std::uint32_t by_lds = lds_bytes == 0 ? by_slots : static_cast<std::uint32_t>(cu.lds_size.value / lds_bytes);
  o.workgroups_per_cu = std::min({by_slots, by_vgprs, by_lds});
  if (o.workgroups_per_cu == by_lds && by_lds < std::min(by_slots, by_vgprs)) {
    o.limited_by = "lds";
  } else if (o.workgroups_per_cu == by_vgprs && by_vgprs < by_slots) {
    o.limited_by = "vgprs";
  } else {
    o.limited_by = "wave slots";
  }
  o.waves_per_simd = o.workgroups_per_cu * per_simd;
  return o;
}

}  // namespace attnsim::sim
