#include "sim/compute_unit.h"

#include <algorithm>

namespace attnsim::sim {

PipeCosts::PipeCosts(const arch::GpuSpec& gpu, const arch::MatrixInstruction* m, const Clock& engine) {
  if (m) {
    mfma = engine.ticks(static_cast<double>(m->cycles) * m->simds);
    mfma_block = engine.ticks(static_cast<double>(m->cycles - m->valu_coexec_cycles));
  }
  valu = engine.ticks(static_cast<double>(gpu.cu.wave_size) / gpu.cu.valu_lanes_per_simd);
  trans = engine.ticks(static_cast<double>(gpu.cu.wave_size) / gpu.cu.trans_lanes_per_simd);
  barrier = engine.ticks(static_cast<double>(gpu.cu.barrier_latency.value));
}

ComputeUnit::ComputeUnit(const arch::GpuSpec& gpu, double engine_hz)
    : gpu_(&gpu),
      simds_(gpu.cu.simds),
      matrix_free_(gpu.cu.simds, 0),
      vector_free_(gpu.cu.simds, 0),
      lds_(static_cast<double>(gpu.cu.lds_bandwidth.value) * engine_hz),
      l1_(static_cast<double>(gpu.l1.bandwidth.value) * engine_hz),
      window_(1e12 * gpu.cu.memory_inflight_lines) {}  // slots x (ps of slot time per ps)

Tick ComputeUnit::compute(Tick now, const GroupWork& w, const PipeCosts& pc) {
  const workloads::OpCost& c = *w.cost;
  const Tick matrix_work = c.mfma * pc.mfma;
  const Tick vector_work = c.mfma * pc.mfma_block + (c.valu + (w.masked ? c.mask_valu : 0)) * pc.valu + c.trans * pc.trans;
  Tick done = now;
  for (std::uint32_t i = 0; i < w.simds; ++i) {
    const std::uint32_t s = (w.simd0 + i) % simds_;
    if (matrix_work) {
      matrix_free_[s] = std::max(now, matrix_free_[s]) + matrix_work;
      done = std::max(done, matrix_free_[s]);
    }
    if (vector_work) {
      vector_free_[s] = std::max(now, vector_free_[s]) + vector_work;
      done = std::max(done, vector_free_[s]);
    }
  }
  matrix_busy_ += matrix_work * w.simds;
  vector_busy_ += vector_work * w.simds;
  return std::max(done, lds(now, (c.lds_read + c.lds_write) * w.simds));
}

void ComputeUnit::set_clock(double engine_hz) {
  lds_.set_rate(static_cast<double>(gpu_->cu.lds_bandwidth.value) * engine_hz);
  l1_.set_rate(static_cast<double>(gpu_->l1.bandwidth.value) * engine_hz);
}

}  // namespace attnsim::sim
