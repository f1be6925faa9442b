// Compute microbenchmarks on one simulated CU: MFMA, VALU, transcendental, MFMA + transcendental
// co-execution, and LDS reads with bank conflicts (`attnsim micro --pattern ...`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arch/gpu_spec.h"
#include "sim/simd_issue.h"

namespace attnsim::sim {

struct MicroOptions {
  std::string pattern = "mfma";  // mfma | valu | trans | mfma+trans | lds
  std::uint32_t waves_per_simd = 1;
  std::string instruction;       // matrix instruction (default: the first bf16 one that reaches the peak)
  std::uint32_t trans_per_mfma = 1;
  std::uint32_t lds_stride = 16;          // bytes between lanes (16 = contiguous ds_read_b128)
  std::uint32_t lds_bytes_per_lane = 16;  // 4, 8 or 16
  std::uint32_t iterations = 512;
};

struct MicroResult {
  std::string pattern;
  IssueResult issue;
  double flops_per_clk_per_cu = 0;   // matrix (mfma patterns) or VALU FMA (valu) FLOP
  double trans_per_clk_per_cu = 0;
  double lds_bytes_per_clk_per_cu = 0;
  double mfma_utilisation = 0;       // matrix-pipe busy / (cycles x SIMDs)
  double vector_utilisation = 0;     // vector-pipe busy / (cycles x SIMDs)
  std::string instruction;
};

// Contract: throws arch::ConfigError (exit 2 in the CLI) on an unknown pattern or instruction, a
// wave count beyond the slots, or an LDS width/stride that is not a positive multiple of 4 bytes.
MicroResult run_compute_micro(const arch::GpuSpec& gpu, const MicroOptions& o);

// The matrix instruction a microbenchmark uses: `name` when given, else the first instruction of
// `dtype` that reaches the CU's peak for it. Contract: throws arch::ConfigError (naming
// --instruction) when `name` is not in the config.
const arch::MatrixInstruction& pick_matrix_instruction(const arch::GpuSpec& gpu, arch::Dtype dtype,
                                                       const std::string& name);

// The patterns this module runs.
const std::vector<std::string>& compute_patterns();

}  // namespace attnsim::sim
