#include "arch/derived_figures.h"

namespace attnsim::arch {

DerivedFigures derive(const GpuSpec& s) {
  DerivedFigures d;
  d.total_cus = s.total_cus();
  d.cus_per_partition = s.dispatch.xcds_per_partition * s.chip.cus_per_xcd;
  d.vgprs_per_lane_per_simd = static_cast<std::uint32_t>(s.cu.vgpr_file.value / (std::uint64_t{s.cu.simds} * s.cu.wave_size * 4));
  const double cus = d.total_cus;
  const double f_max = s.clock.engine_max.value;
  for (Dtype dt : kDtypes) {
    MatrixFigures m;
    m.dtype = dt;
    m.flops_per_clk_per_cu = static_cast<double>(s.cu.matrix_flops_per_clk[static_cast<std::size_t>(dt)]);
    m.peak_flops = m.flops_per_clk_per_cu * cus * s.clock.matrix_max.value;
    m.sustained = sustained_clock(s, matrix_load(dt));
    m.sustained_flops = m.flops_per_clk_per_cu * cus * m.sustained.clock.value;
    d.matrix.push_back(m);
  }
  d.exp_per_clk_per_cu = static_cast<double>(s.cu.trans_lanes_per_simd) * s.cu.simds;
  d.exp_per_s = d.exp_per_clk_per_cu * cus * f_max;
  d.lds_bandwidth = BytesPerSecond{static_cast<double>(s.cu.lds_bandwidth.value) * cus * f_max};
  d.l1_bandwidth = BytesPerSecond{static_cast<double>(s.l1.bandwidth.value) * cus * f_max};
  const double l2_channels = static_cast<double>(s.l2_instance_channels()) * s.l2_instances();
  d.l2_read_bandwidth = BytesPerSecond{static_cast<double>(s.l2.read_bandwidth.value) * l2_channels * f_max};
  d.l2_write_bandwidth = BytesPerSecond{static_cast<double>(s.l2.write_bandwidth.value) * l2_channels * f_max};
  d.fabric_bandwidth = BytesPerSecond{static_cast<double>(s.fabric.l2_link_bandwidth.value) * l2_channels * f_max};
  d.l2_total = Bytes{s.l2_total_bytes()};
  d.l2_sets = s.l2.sets();
  if (s.mall.present) {
    d.mall_bandwidth =
        BytesPerSecond{static_cast<double>(s.mall.bandwidth.value) * s.mall.channels * s.clock.fabric.value};
  }
  d.hbm_bandwidth = s.hbm.peak_bandwidth;
  d.hbm_bytes_per_channel_per_mclk = s.hbm.peak_bandwidth.value / (static_cast<double>(s.hbm.channels) * s.clock.memory.value);
  Activity stream;
  stream.stream = 1.0;
  d.streaming = sustained_clock(s, stream);
  Activity vector;
  vector.vector = 1.0;
  d.vector = sustained_clock(s, vector);
  const double bf16_peak = d.matrix[static_cast<std::size_t>(Dtype::bf16)].peak_flops;
  d.ridge_hbm = bf16_peak / d.hbm_bandwidth.value;
  d.ridge_l2 = bf16_peak / d.l2_read_bandwidth.value;
  d.ridge_mall = s.mall.present ? bf16_peak / d.mall_bandwidth.value : 0.0;
  return d;
}

}  // namespace attnsim::arch
