// The L1 probe: one thread chases a cycle of lines `stride` bytes apart through the L1 and times a
// lap of it in clocks, after a lap that loads them. A cycle of lines that the L1 holds comes back
// at the L1 hit latency per step, one it cannot (more lines than the ways of the sets the stride
// maps them to, or than its capacity) at the L2's. Its workgroup asks for `lds` bytes of dynamic
// shared memory, so that on a GPU whose L1 shares the array with the LDS (NVIDIA) the driver
// picks a carve-out at least that large and the probe sees the L1 it leaves. The chain's elements
// hold the index (in 32-bit words) of the next; the host builds it (harness_core.h, l1_chase_chain).
#pragma once

#include <cstdint>

#include "gpu_portability.h"

namespace attn {

#if defined(ATTN_GPU_AMD) || defined(ATTN_GPU_NVIDIA)
// A load that the L1 may serve (NVIDIA: ld.global.ca, cached at every level; AMD: a plain load).
ATTN_DEVICE inline std::uint32_t load_cached(const std::uint32_t* p) {
#if defined(ATTN_GPU_NVIDIA)
  return __ldca(p);
#else
  return *p;
#endif
}

// Chases `steps` links from `start`, twice; cycles[0] gets the clocks of the second (timed) pass.
// `sink` is written only if the chase ends on an index no chain holds (never), which keeps the
// loads from being optimised away.
__global__ void l1_chase_kernel(const std::uint32_t* chain, std::uint32_t start, std::uint32_t steps,
                                unsigned long long* cycles, std::uint32_t* sink) {
  extern __shared__ std::uint32_t reserved[];  // only sized, never used: it sets the carve-out
  (void)reserved;
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  std::uint32_t j = start;
  for (std::uint32_t i = 0; i < steps; ++i) j = load_cached(chain + j);
  const long long t0 = clock64();
  for (std::uint32_t i = 0; i < steps; ++i) j = load_cached(chain + j);
  const long long t1 = clock64();
  cycles[0] = static_cast<unsigned long long>(t1 - t0);
  if (j == 0xffffffffu) sink[0] = j;
}
#endif

}  // namespace attn
