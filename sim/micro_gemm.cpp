#include "sim/micro_gemm.h"

#include "sim/micro_compute.h"

namespace attnsim::sim {

GemmMicroResult run_gemm_micro(const arch::GpuSpec& gpu, const GemmMicroOptions& o) {
  const arch::MatrixInstruction& mfma = pick_matrix_instruction(gpu, o.shape.dtype, o.instruction);
  const workloads::GemmTiling tiling = workloads::gemm_tiling(mfma.name, gpu.cu.wave_size, o.tile_m, o.tile_n, o.tile_k);
  const workloads::PassPrograms pp = workloads::build_gemm(o.shape, tiling, gpu, o.origin);
  EngineOptions eo;
  eo.approximate = o.approximate;
  const RunResult run = simulate({&pp}, gpu, eo);

  GemmMicroResult r;
  r.shape = o.shape;
  r.tiling = tiling;
  r.kernel = run.kernels.front();
  const double seconds = static_cast<double>(r.kernel.end - r.kernel.launch) / 1e12;
  r.time_us = seconds * 1e6;
  r.tflops = workloads::gemm_flops(o.shape) / seconds / 1e12;
  const double peak_per_clk =
      static_cast<double>(gpu.cu.matrix_flops_per_clk[static_cast<std::size_t>(o.shape.dtype)]) * gpu.total_cus();
  r.efficiency_at_clock = r.tflops * 1e12 / (peak_per_clk * r.kernel.clock_hz);
  return r;
}

}  // namespace attnsim::sim
