#include "sim/compute_unit.h"

#include <algorithm>

namespace attnsim::sim {

PipeCosts::PipeCosts(const arch::GpuSpec& gpu, const arch::MatrixInstruction* m, const Clock& engine) {
  if (m) {
    mfma = engine.ticks(static_cast<double>(m->cycles) * m->simds);
    mfma_block = engine.ticks(static_cast<double>(m->cycles - m->valu_coexec_cycles));
    if (m->latency > m->cycles) mfma_result = engine.ticks(static_cast<double>(m->latency - m->cycles));
  }
  valu = engine.ticks(static_cast<double>(gpu.cu.wave_size) / gpu.cu.valu_lanes_per_simd);
  trans = engine.ticks(static_cast<double>(gpu.cu.wave_size) / gpu.cu.trans_lanes_per_simd);
  barrier = engine.ticks(static_cast<double>(gpu.cu.barrier_latency.value));
  lds_result = engine.ticks(static_cast<double>(gpu.cu.lds_latency.value));
  issue = engine.ticks(static_cast<double>(gpu.cu.wave_issue_interval.value));
  cycle = 1e12 / engine.hz();
}

ComputeUnit::ComputeUnit(const arch::GpuSpec& gpu, double engine_hz, Tick start)
    : gpu_(&gpu),
      simds_(gpu.cu.simds),
      matrix_free_(gpu.cu.simds, start),
      vector_free_(gpu.cu.simds, start),
      lds_(static_cast<double>(gpu.cu.lds_bandwidth.value) * engine_hz),
      lds_bytes_per_clock_(gpu.cu.lds_bandwidth.value),
      l1_(static_cast<double>(gpu.l1.bandwidth.value) * engine_hz),
      l1_bytes_per_clock_(gpu.l1.bandwidth.value),
      window_(1e12 * gpu.cu.memory_inflight_lines) {}  // slots x (ps of slot time per ps)

Tick ComputeUnit::compute(Tick now, const GroupWork& w, const PipeCosts& pc, WaitCause* bound) {
  const workloads::OpCost& c = *w.cost;
  lds_.prune(now);  // operations are presented in time order: nothing arrives before `now` any more
  const Tick n = w.count;
  const Tick matrix_work = n * c.mfma * pc.mfma;
  const Tick vector_work = n * (c.mfma * pc.mfma_block + c.valu * pc.valu + c.trans * pc.trans) +
                           static_cast<Tick>(w.masked_count) * c.mask_valu * pc.valu;
  Tick matrix_done = now, vector_done = now;
  for (std::uint32_t i = 0; i < w.simds; ++i) {
    const std::uint32_t s = (w.simd0 + i) % simds_;
    const Tick busy_until = std::max(matrix_free_[s], vector_free_[s]);
    if (busy_until < now) waits_.add_wait(w.waited_on, now - busy_until);
    if (matrix_work) {
      matrix_free_[s] = std::max(now, matrix_free_[s]) + matrix_work;
      matrix_done = std::max(matrix_done, matrix_free_[s]);
    }
    if (vector_work) {
      vector_free_[s] = std::max(now, vector_free_[s]) + vector_work;
      vector_done = std::max(vector_done, vector_free_[s]);
    }
    busy_union_ += std::max<Tick>(0, std::max(matrix_free_[s], vector_free_[s]) - std::max(now, busy_until));
  }
  // The last instruction's result: `latency` after its issue, past the pipe's free time.
  if (matrix_work) matrix_done += pc.mfma_result;
  matrix_busy_ += matrix_work * w.simds;
  vector_busy_ += vector_work * w.simds;
  // A batch of iterations reads the LDS as its iterations would, one share per iteration's stretch
  // of the batch's pipe time (the LDS then interleaves with other operations as they do).
  // The LDS's time: the bytes at its bandwidth, or a clock per wavefront where those take longer.
  const std::uint64_t lds_bytes =
      std::max<std::uint64_t>(c.lds_read + c.lds_write, c.lds_wavefronts * lds_bytes_per_clock_) * w.simds;
  const Tick stretch = std::max(matrix_work, vector_work) / n;
  Tick lds_done =
      std::max(now, lds_series(static_cast<std::uint32_t>(n), lds_bytes, [&](std::uint32_t i) { return now + i * stretch; }));
  // The last read's data reaches the registers its load-to-use latency after its transfer (the
  // operation's instructions that use it follow; earlier reads' latencies overlap its later ones).
  if (c.lds_read > 0) lds_done += pc.lds_result;
  Tick issue_done = now;
  if (w.issued) {
    const Tick instructions =
        n * static_cast<Tick>(c.issued()) + static_cast<Tick>(w.masked_count) * c.mask_valu;
    Tick turns = instructions * pc.issue;
    if (c.issue_wait > 0) turns += static_cast<Tick>(std::llround(static_cast<double>(instructions) * c.issue_wait * pc.cycle));
    issue_done = std::max(now, *w.issued) + turns;
    *w.issued = issue_done;
  }
  const Tick done = std::max({matrix_done, vector_done, lds_done, issue_done});
  if (bound) {
    if (done == matrix_done && matrix_work) {
      *bound = WaitCause::sync;
    } else if (done == vector_done && vector_work) {
      *bound = WaitCause::vector;
    } else if (done == issue_done && issue_done > now) {
      *bound = WaitCause::issue;
    } else {
      *bound = WaitCause::lds;
    }
  }
  return done;
}

TimeBreakdown ComputeUnit::breakdown(Tick start, Tick end) const {
  TimeBreakdown b = waits_;
  b.matrix = matrix_busy_;
  b.vector = busy_union_ - matrix_busy_;
  Tick accounted = busy_union_;
  for (Tick w : waits_.waiting) accounted += w;
  b.tail = static_cast<Tick>(simds_) * (end - start) - accounted;
  return b;
}

void ComputeUnit::set_clock(double engine_hz) {
  lds_.set_rate(static_cast<double>(gpu_->cu.lds_bandwidth.value) * engine_hz);
  l1_.set_rate(static_cast<double>(gpu_->l1.bandwidth.value) * engine_hz);
}

}  // namespace attnsim::sim
