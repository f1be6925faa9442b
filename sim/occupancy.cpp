#include "sim/occupancy.h"

#include <algorithm>
#include <stdexcept>
#include <string>

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
  const std::uint64_t per_workgroup = lds_bytes + gpu.l1.carveout_reserve.value;
  const std::uint32_t by_lds = per_workgroup == 0 ? by_slots : static_cast<std::uint32_t>(std::min<std::uint64_t>(
                                                                   by_slots, cu.lds_size.value / per_workgroup));
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

void split_l1(const arch::GpuSpec& gpu, std::uint32_t lds_bytes, std::uint64_t recorded, Occupancy& o) {
  const arch::L1Spec& l1 = gpu.l1;
  o.l1_bytes = l1.size.value;
  o.lds_carveout = 0;
  if (l1.carveouts.empty()) return;
  const std::uint64_t need = std::uint64_t{o.workgroups_per_cu} * (lds_bytes + l1.carveout_reserve.value);
  const auto held = [&](std::uint64_t c) { return c >= need; };
  if (recorded != 0) {
    if (!gpu.is_l1_carveout(recorded)) throw std::invalid_argument(std::to_string(recorded) + " B is not one of the " + gpu.name + "'s l1.carveouts");
    if (!held(recorded)) {
      throw std::invalid_argument(std::to_string(recorded) + " B cannot hold " + std::to_string(o.workgroups_per_cu) +
                                  " workgroups' shared memory (" + std::to_string(need) + " B)");
    }
    o.lds_carveout = recorded;
  } else {
    const auto it = std::find_if(l1.carveouts.begin(), l1.carveouts.end(), [&](const arch::Bytes& c) { return held(c.value); });
    o.lds_carveout = it == l1.carveouts.end() ? l1.carveouts.back().value : it->value;  // occupancy keeps need <= cu.lds_size
  }
  o.l1_bytes = gpu.l1_left_by(o.lds_carveout);
}

}  // namespace attnsim::sim
