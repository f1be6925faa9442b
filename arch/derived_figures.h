// Figures that follow from a spec by arithmetic: peaks, aggregate bandwidths, ridge points.
#pragma once

#include <vector>

#include "arch/clock_model.h"
#include "arch/gpu_spec.h"

namespace attnsim::arch {

// Matrix throughput of one dtype.
struct MatrixFigures {
  Dtype dtype = Dtype::bf16;
  double flops_per_clk_per_cu = 0;
  double peak_flops = 0;          // at clock.matrix_max
  ClockEstimate sustained;        // clock under full dense load of this dtype
  double sustained_flops = 0;     // at that clock
};

// Derived figures of a whole chip. Bandwidths are peaks at clock.engine_max (fabric clock for
// the memory-side cache, datasheet peak for HBM).
struct DerivedFigures {
  std::uint32_t total_cus = 0;
  std::uint32_t cus_per_partition = 0;  // CUs one kernel launch can use
  std::uint32_t vgprs_per_lane_per_simd = 0;
  std::vector<MatrixFigures> matrix;    // in kDtypes order
  double exp_per_clk_per_cu = 0;
  double exp_per_s = 0;                 // at clock.engine_max
  BytesPerSecond lds_bandwidth, l1_bandwidth, l2_read_bandwidth, l2_write_bandwidth, fabric_bandwidth,
      mall_bandwidth, hbm_bandwidth;
  Bytes l2_total;
  std::uint64_t l2_sets = 0;
  double hbm_bytes_per_channel_per_mclk = 0;
  ClockEstimate streaming;              // clock under a memory-streaming load
  ClockEstimate vector;                 // clock with every SIMD's vector pipe busy (clock.power.vector)
  // Arithmetic intensity (FLOP per byte) where bf16 matrix peak meets each level's bandwidth.
  double ridge_hbm = 0, ridge_mall = 0, ridge_l2 = 0;
};

// Contract: pure; the spec must come from the loader (validated).
DerivedFigures derive(const GpuSpec& spec);

}  // namespace attnsim::arch
