// How many workgroups of a kernel fit on one compute unit at once, and what limits it.
#pragma once

#include <cstdint>
#include <string>

#include "arch/gpu_spec.h"

namespace attnsim::sim {

struct Occupancy {
  std::uint32_t workgroups_per_cu = 0;
  std::uint32_t waves_per_simd = 0;   // resident waves per SIMD at that occupancy
  std::uint32_t vgprs_allocated = 0;  // per wave, after rounding to the allocation granule
  std::string limited_by;             // "lds", "vgprs", "wave slots" or "workgroup size"
};

// Occupancy of workgroups of `waves` waves using `vgprs` registers per wave and `lds_bytes` of LDS.
// Waves of a workgroup spread over the SIMDs round-robin. VGPRs: waves per SIMD =
// floor(registers per lane per SIMD / allocation), allocation rounded up to the granule
// (arch-facts 1.2, ROCM-WL: 170 -> 176 -> 2 waves).
// Contract: returns 0 workgroups (with the limit named) when one workgroup cannot fit at all.
Occupancy occupancy(const arch::GpuSpec& gpu, std::uint32_t waves, std::uint32_t vgprs, std::uint32_t lds_bytes);

}  // namespace attnsim::sim
