// The memory probe: the bandwidth of a whole GPU streaming a buffer, as `attnsim micro --pattern
// stream-read|stream-write|copy` simulates it. Every thread moves 16-byte words, four independent
// ones per step, over a grid-stride walk of the buffer; each pass starts eight workgroups' words
// further on, so that a workgroup reads what the workgroup eight ids on read in the pass before:
// another compute unit (whose L1 the reader does not share), of the same XCD under an MI300X's
// round-robin over 8 XCDs (whose L2 holds it). On NVIDIA the loads also bypass the L1 (ld.global.cg). The host turns bytes and
// time into bandwidth (harness_core.h, stream_bandwidth).
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpu_portability.h"

namespace attn {

enum class StreamPattern { read, write, copy };

inline constexpr int kProbeWordsPerStep = 4;     // independent 16-byte loads or stores in flight per thread
inline constexpr int kProbeShiftWorkgroups = 8;  // a pass starts this many workgroups' words further on

#if defined(ATTN_GPU_AMD) || defined(ATTN_GPU_NVIDIA)
struct alignas(16) Word16 {
  std::uint32_t x, y, z, w;
};

ATTN_DEVICE inline Word16 load_word(const Word16* p) {
#if defined(ATTN_GPU_NVIDIA)
  const uint4 v = __ldcg(reinterpret_cast<const uint4*>(p));
  return Word16{v.x, v.y, v.z, v.w};
#else
  return *p;
#endif
}

// `passes` passes over `words` 16-byte words of src (read, copy) and/or dst (write, copy). `sink`
// is written only if the loaded words xor to a value the host's fill cannot give (never), which
// keeps the loads from being optimised away.
template <StreamPattern P>
__global__ void memory_probe_kernel(const Word16* src, Word16* dst, std::size_t words, int passes, std::uint32_t* sink) {
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t shift = static_cast<std::size_t>(blockDim.x) * kProbeShiftWorkgroups;
  std::uint32_t acc = 0;
  std::size_t offset = 0;
  for (int pass = 0; pass < passes; ++pass, offset = offset + shift >= words ? (offset + shift) % words : offset + shift) {
    for (std::size_t base = first; base < words; base += threads * kProbeWordsPerStep) {
      std::size_t at[kProbeWordsPerStep];
      bool in[kProbeWordsPerStep];
ATTN_UNROLL
      for (int k = 0; k < kProbeWordsPerStep; ++k) {
        const std::size_t i = base + k * threads;
        in[k] = i < words;
        const std::size_t j = i + offset;
        at[k] = j >= words ? j - words : j;
      }
      if constexpr (P == StreamPattern::write) {
ATTN_UNROLL
        for (int k = 0; k < kProbeWordsPerStep; ++k) {
          if (in[k]) dst[at[k]] = Word16{static_cast<std::uint32_t>(at[k]), 1u, 2u, 3u};
        }
      } else {
        Word16 v[kProbeWordsPerStep];
        if (in[kProbeWordsPerStep - 1]) {
          // The whole step lies in the buffer: unpredicated loads, which the compiler issues together
          // (with a predicate per load nvcc 13 kept two of the four in flight and reused their registers).
ATTN_UNROLL
          for (int k = 0; k < kProbeWordsPerStep; ++k) v[k] = load_word(src + at[k]);
        } else {
ATTN_UNROLL
          for (int k = 0; k < kProbeWordsPerStep; ++k) v[k] = in[k] ? load_word(src + at[k]) : Word16{0, 0, 0, 0};
        }
ATTN_UNROLL
        for (int k = 0; k < kProbeWordsPerStep; ++k) {
          if constexpr (P == StreamPattern::copy) {
            if (in[k]) dst[at[k]] = v[k];
          } else {
            acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
          }
        }
      }
    }
  }
  if (acc == 0xFFFFFFFFu) sink[0] = acc;  // the host fills the buffer with zeros
}
#endif

}  // namespace attn
