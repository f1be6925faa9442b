// The placement probe: which compute unit each workgroup of a launch runs on, in what order, for a
// kernel that fits a given number of workgroups per compute unit. attnsim gives a single-die GPU's
// workgroups to the compute unit with the most room, so that consecutive ids land on different
// units; whether the hardware does decides whether co-resident workgroups of one head share their
// K and V reads in the L1. Each workgroup records its unit (NVIDIA %smid; AMD __smid(), the CU and
// shader engine ids packed) and the time it started (NVIDIA %globaltimer; AMD s_memrealtime).
#pragma once

#include <cstdint>

#include "gpu_portability.h"

namespace attn {

#if defined(ATTN_GPU_AMD) || defined(ATTN_GPU_NVIDIA)
ATTN_DEVICE inline std::uint32_t unit_id() {
#if defined(ATTN_GPU_NVIDIA)
  std::uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
#else
  return __smid();
#endif
}

ATTN_DEVICE inline unsigned long long start_stamp() {
#if defined(ATTN_GPU_NVIDIA)
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#elif defined(__HIP_DEVICE_COMPILE__)
  return __builtin_amdgcn_s_memrealtime();  // the constant-rate counter HIP's wall_clock64() reads
#else
  return 0;  // hipcc's host pass
#endif
}

// Thread 0 records the workgroup's unit and start, then every thread spins `spin` clock64 ticks.
// The dynamic LDS the launch asks for is what limits the workgroups per unit; it is not touched.
__global__ void placement_probe_kernel(std::uint32_t* unit, unsigned long long* started, long long spin) {
  if (threadIdx.x == 0) {
    unit[blockIdx.x] = unit_id();
    started[blockIdx.x] = start_stamp();
  }
  const long long t0 = clock64();
  while (clock64() - t0 < spin) {
  }
}
#endif

}  // namespace attn
