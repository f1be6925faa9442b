// The dispatch probe: does one XCD start workgroups ahead of the others in the id sequence while
// another XCD is still full (attnsim's dispatch.order = round_robin), or does the dispatcher hand
// ids out in order and wait (round_robin_blocking)? Every workgroup takes a ticket (its place in
// the order workgroups started) and then spins; the workgroups of every `modulus`-th id, which
// round-robin dispatch puts on one XCD, spin `long_cycles`, the others `short_cycles`, so that
// XCD's share runs slower. The host turns the tickets into the largest run-ahead
// (harness_core.h, largest_run_ahead).
#pragma once

#include <cstdint>

#include "gpu_portability.h"

namespace attn {

#if defined(ATTN_GPU_AMD) || defined(ATTN_GPU_NVIDIA)
__global__ void dispatch_probe_kernel(std::uint32_t* counter, std::uint32_t* ticket, long long short_cycles,
                                      long long long_cycles, std::uint32_t modulus) {
  if (threadIdx.x == 0) ticket[blockIdx.x] = atomicAdd(counter, 1u);
  const long long spin = blockIdx.x % modulus == 0 ? long_cycles : short_cycles;
  const long long start = clock64();
  while (clock64() - start < spin) {
  }
}
#endif

}  // namespace attn
