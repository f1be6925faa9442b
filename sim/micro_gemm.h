// The GEMM microbenchmark (`attnsim micro --pattern gemm`): a tiled dense matrix product run on the
// whole simulated GPU (every CU, the memory hierarchy, the power-limited clock), to hold the
// engine and the clock model to AMD's measured max-achievable GEMM throughput (BLOG-MAF2).
#pragma once

#include <string>

#include "arch/gpu_spec.h"
#include "sim/engine.h"
#include "workloads/gemm.h"

namespace attnsim::sim {

// What to run: the shape, the workgroup's tile, the instruction and the tag mode.
struct GemmMicroOptions {
  workloads::GemmShape shape;           // default: AMD's bf16 MAF shape 4096 x 4864 x 32896
  std::uint32_t tile_m = 256, tile_n = 256, tile_k = 64;
  std::string instruction;              // default: the dtype's instruction that reaches the peak
  bool approximate = false;             // the engine's approximate tag mode
  std::string origin = "--gemm-shape";  // named in errors about the shape
};

// The simulated kernel and the figures AMD's MAF reports (throughput, clock, efficiency at it).
struct GemmMicroResult {
  workloads::GemmShape shape;
  workloads::GemmTiling tiling;
  KernelResult kernel;            // the simulated kernel (clock, activity, traffic, breakdown)
  double time_us = 0;             // launch to end
  double tflops = 0;              // 2 M N K / time
  double efficiency_at_clock = 0; // tflops / (peak FLOP/clk x CUs x the kernel's mean clock)
};

// Contract: deterministic; throws arch::ConfigError on a shape or tile the GEMM cannot run
// (workloads::build_gemm) or an unknown instruction.
GemmMicroResult run_gemm_micro(const arch::GpuSpec& gpu, const GemmMicroOptions& o);

}  // namespace attnsim::sim
