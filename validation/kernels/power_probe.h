// The power probe's vector kernels: sustained FP32 fused multiply-adds, or sustained exponentials
// (the transcendental unit: MUFU.EX2 on NVIDIA, v_exp_f32 on AMD), with no memory traffic, so that
// a clock and power sampler sees what each kind of vector work draws (attnsim's clock model has
// power classes for matrix work and HBM traffic, none yet for vector work: docs/model.md, **Engine
// clock under load**). The harness runs them beside the matrix rate probe's kernel and the memory
// probe's read stream (harness_main.cpp, run_power_probe; host side in harness/power_probe_core.h).
#pragma once

#include "gpu_portability.h"

namespace attn {

inline constexpr int kPowerChains = 8;  // independent chains per thread: more than the pipes' latency needs

#if defined(ATTN_GPU_AMD) || defined(ATTN_GPU_NVIDIA)
// Each thread runs kPowerChains chains of `iterations` steps: x = fma(x, 0.999, 1e-4) (2 FLOP; x
// settles near 0.1), or with Exp x = exp2(x) - 1 (one exponential and one add; x stays in [0, 1)).
// `sink` is written only if the sum takes a value it cannot take, which keeps the chains.
template <bool Exp>
__global__ void vector_power_kernel(float* sink, int iterations) {
  float x[kPowerChains];
ATTN_UNROLL
  for (int k = 0; k < kPowerChains; ++k) x[k] = 1e-3f * static_cast<float>((threadIdx.x + k) & 255);
  for (int it = 0; it < iterations; ++it) {
ATTN_UNROLL
    for (int k = 0; k < kPowerChains; ++k) x[k] = Exp ? exp2f(x[k]) - 1.0f : fmaf(x[k], 0.999f, 1e-4f);
  }
  float sum = 0;
ATTN_UNROLL
  for (int k = 0; k < kPowerChains; ++k) sum += x[k];
  if (sum == -1.0f) sink[blockIdx.x] = sum;
}
#endif

}  // namespace attn
