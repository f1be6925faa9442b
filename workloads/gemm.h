// A dense matrix product as a tile program, for the GEMM microbenchmark (`attnsim micro --pattern
// gemm`): C[M x N] = A[M x K] x B[N x K]^T, both operands K-contiguous (BLAS "TN"), the product
// written in 16 bits. It runs on the same engine, hierarchy and clock model as the attention kernels.
#pragma once

#include <cstdint>
#include <string>

#include "arch/gpu_spec.h"
#include "workloads/kernel_program.h"

namespace attnsim::workloads {

// The product's dimensions and input dtype.
struct GemmShape {
  std::uint64_t m = 4096, n = 4864, k = 32896;  // BLOG-MAF2 Appendix B: AMD's bf16/fp16 MAF shape
  arch::Dtype dtype = arch::Dtype::bf16;
};

// How a workgroup computes its tile of C: a tile_m x tile_n block, looping over K in tile_k slices.
// Each slice is fetched into registers `prefetch` slices ahead, written to one LDS buffer, and read
// back as the waves' operands in two halves so that one half's reads overlap the other's MFMAs.
// The waves split the block as waves_m x waves_n.
struct GemmTiling {
  std::uint32_t tile_m = 256, tile_n = 256, tile_k = 64;
  std::uint32_t waves_m = 2, waves_n = 2;
  std::uint32_t prefetch = 2;       // global-read prefetch depth, in K slices
  std::uint32_t vgprs = 512;        // per wave, ArchVGPR and AccVGPR together
  std::uint32_t epilogue_valu = 0;  // per wave: converting and packing the fp32 accumulators
  std::string mfma;                 // matrix instruction (arch config name)
};

// The tiling of a four-wave GEMM kernel of a tile_m x tile_n x tile_k block (256 x 256 x 64 is
// the macro tile of AMD's MAF shapes) with matrix instruction `mfma`: operands and the accumulator
// block in registers, one LDS buffer.
GemmTiling gemm_tiling(const std::string& mfma, std::uint32_t wave_size, std::uint32_t tile_m = 256,
                       std::uint32_t tile_n = 256, std::uint32_t tile_k = 64);

// Limits on the shapes build_gemm accepts (the engine times every K slice of every workgroup).
inline constexpr std::uint64_t kMaxGemmDimension = std::uint64_t{1} << 20;
inline constexpr std::uint64_t kMaxGemmSlices = std::uint64_t{1} << 24;

// Builds the GEMM as one kernel: a workgroup per C block (row blocks first), K slices as its loop.
// Contract: throws arch::ConfigError naming `origin` (where the shape came from) when a dimension
// is zero, not a multiple of its tile or beyond the limits above, the instruction is not in the arch config or does not
// take the shape's dtype, the tile does not split into the instruction's blocks, or the workgroup
// does not fit a CU (waves, registers, LDS).
PassPrograms build_gemm(const GemmShape& shape, const GemmTiling& tiling, const arch::GpuSpec& gpu,
                        const std::string& origin);

// 2 M N K.
inline double gemm_flops(const GemmShape& s) {
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
}

}  // namespace attnsim::workloads
