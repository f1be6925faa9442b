// The matrix rate probe: how many matrix FLOPs a compute unit completes per clock when its waves
// issue independent matrix instructions back to back, with no memory traffic. It runs the kernels'
// own instruction (gpu_portability.h, mma()): on NVIDIA the legacy mma.sync.m16n8k16 (bf16, fp32
// accumulate) that FlashAttention-2 issues, whose Hopper rate and latency attnsim's H100/H200 configs
// take from this probe's H200 run (docs/sources.md, H200-PROBE); on AMD v_mfma_f32_16x16x16_bf16. The host turns the
// cycles into FLOP per clock per compute unit (harness_core.h, matrix_flop_per_clock).
#pragma once

#include <cstdint>

#include "gpu_portability.h"

namespace attn {

inline constexpr int kRateChains = 8;       // independent accumulators per wave: more than the MMA latency needs
inline constexpr int kRateWaves = 8;        // waves (warps) per workgroup: two per SIMD (sub-partition)
inline constexpr double kFlopPerMma = 2.0 * 16 * 16 * 16;  // one mma(): C 16x16 += A 16x16 B 16x16

#if defined(ATTN_GPU_AMD) || defined(ATTN_GPU_NVIDIA)
// Each wave runs `Chains` accumulator chains of `iterations` mma() each; thread 0 of each
// workgroup writes the workgroup's clock64() cycles. `sink` is written only if the sums take a value
// they cannot take, which keeps the chains from being optimised away. kRateChains chains measure the
// rate; one chain on one wave, each mma() waiting for the last, the latency of a result.
template <int Chains>
__global__ void matrix_rate_kernel(float* sink, long long* cycles, int iterations) {
  const int lane = lane_id();
  FragA a;
  FragB b;
  FragC c[Chains];
  for (int i = 0; i < Native::a_elems; ++i) a.v[i] = static_cast<std::uint16_t>(0x3C00 + ((lane + i) & 7));  // bf16 ~0.008
  for (int i = 0; i < Native::b_elems; ++i) b.v[i] = static_cast<std::uint16_t>(0x3C00 + ((lane * 3 + i) & 7));
  for (int k = 0; k < Chains; ++k) zero(c[k]);
  __syncthreads();
  const long long start = clock64();
  for (int it = 0; it < iterations; ++it) {
ATTN_UNROLL
    for (int k = 0; k < Chains; ++k) mma(c[k], a, b);
  }
  const long long end = clock64();
  float sum = 0;
  for (int k = 0; k < Chains; ++k) {
    for (int i = 0; i < Native::c_elems; ++i) sum += c[k].v[i];
  }
  if (sum == -1.0f) sink[blockIdx.x] = sum;  // the products are positive
  if (threadIdx.x == 0) cycles[blockIdx.x] = end - start;
}
#endif

}  // namespace attn
