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
  // The CU's L1 while the kernel runs, and the shared-memory carve-out that left it (0 where the
  // L1 and the LDS are apart): set by split_l1.
  std::uint64_t l1_bytes = 0, lds_carveout = 0;
};

// Occupancy of workgroups of `waves` waves using `vgprs` registers per wave and `lds_bytes` of LDS.
// Waves of a workgroup spread over the SIMDs round-robin. VGPRs: waves per SIMD =
// floor(registers per lane per SIMD / allocation), allocation rounded up to the granule
// (arch-facts 1.2, ROCM-WL: 170 -> 176 -> 2 waves).
// Contract: returns 0 workgroups (with the limit named) when one workgroup cannot fit at all.
// Each workgroup's LDS counts l1.carveout_reserve beside its `lds_bytes` (the driver's share).
Occupancy occupancy(const arch::GpuSpec& gpu, std::uint32_t waves, std::uint32_t vgprs, std::uint32_t lds_bytes);

// Sets o.l1_bytes and o.lds_carveout. L1 and LDS apart (no l1.carveouts): l1.size, no carve-out.
// An L1 shared with the LDS: the carve-out is `recorded` when non-zero (the one a measured launch
// reported), else the smallest of l1.carveouts that holds o.workgroups_per_cu x (lds_bytes +
// l1.carveout_reserve); the L1 is l1.size + cu.lds_size less it.
// Contract: throws std::invalid_argument when `recorded` is not one of l1.carveouts or cannot hold
// the resident workgroups' shared memory.
void split_l1(const arch::GpuSpec& gpu, std::uint32_t lds_bytes, std::uint64_t recorded, Occupancy& o);

}  // namespace attnsim::sim
