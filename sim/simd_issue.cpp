#include "sim/simd_issue.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace attnsim::sim {

SimdIssueRules::SimdIssueRules(const arch::GpuSpec& gpu, const arch::MatrixInstruction& mfma)
    : mfma_(mfma),
      wave_size_(gpu.cu.wave_size),
      valu_cycles_(gpu.cu.wave_size / gpu.cu.valu_lanes_per_simd),
      trans_cycles_(gpu.cu.wave_size / gpu.cu.trans_lanes_per_simd),
      banks_(gpu.cu.lds_banks),
      bank_width_(static_cast<std::uint32_t>(gpu.cu.lds_bank_width.value)),
      lds_latency_(static_cast<std::uint32_t>(gpu.cu.lds_latency.value)),
      issue_interval_(static_cast<std::uint32_t>(gpu.cu.wave_issue_interval.value)) {}

std::uint32_t SimdIssueRules::lds_cycles(std::uint32_t bytes_per_lane, std::uint32_t stride) const {
  // Lanes per phase: the banks deliver banks x bank_width bytes per cycle without conflicts.
  const std::uint32_t lanes_per_phase = std::max<std::uint32_t>(1, banks_ * bank_width_ / bytes_per_lane);
  std::uint32_t cycles = 0;
  for (std::uint32_t first = 0; first < wave_size_; first += lanes_per_phase) {
    std::map<std::uint32_t, std::vector<std::uint64_t>> dwords_per_bank;
    for (std::uint32_t lane = first; lane < std::min(wave_size_, first + lanes_per_phase); ++lane) {
      for (std::uint32_t b = 0; b < bytes_per_lane; b += bank_width_) {
        const std::uint64_t address = static_cast<std::uint64_t>(lane) * stride + b;
        const std::uint64_t dword = address / bank_width_;
        auto& v = dwords_per_bank[static_cast<std::uint32_t>(dword % banks_)];
        if (std::find(v.begin(), v.end(), dword) == v.end()) v.push_back(dword);  // same dword: broadcast
      }
    }
    std::uint32_t worst = 1;
    for (const auto& [bank, v] : dwords_per_bank) worst = std::max<std::uint32_t>(worst, static_cast<std::uint32_t>(v.size()));
    cycles += worst;
  }
  return cycles;
}

namespace {

struct Wave {
  std::uint32_t simd = 0;
  std::uint64_t ready = 0;          // cycle the wave can issue its next instruction
  std::uint64_t results_ready = 0;  // cycle its outstanding LDS results arrive
  std::uint64_t last_issue = 0;     // for oldest-first arbitration
  std::size_t pc = 0;
  std::uint32_t iteration = 0;
  bool done = false;
};

struct Simd {
  std::uint64_t matrix_free = 0, valu_free = 0, issue_free = 0;
};

}  // namespace

IssueResult run_on_cu(const arch::GpuSpec& gpu, const SimdIssueRules& rules, const std::vector<Instr>& body,
                      std::uint32_t waves_per_simd, std::uint32_t iterations) {
  if (waves_per_simd == 0 || waves_per_simd > gpu.cu.wave_slots_per_simd) {
    throw std::invalid_argument("waves per SIMD must be between 1 and " + std::to_string(gpu.cu.wave_slots_per_simd));
  }
  std::vector<Simd> simds(gpu.cu.simds);
  std::vector<Wave> waves;
  for (std::uint32_t s = 0; s < gpu.cu.simds; ++s) {
    for (std::uint32_t w = 0; w < waves_per_simd; ++w) waves.push_back(Wave{s});
  }
  std::uint64_t lds_free = 0, end = 0;
  IssueResult r;
  if (body.empty() || iterations == 0) return r;
  // Bank-conflict cycles depend only on the instruction: compute them once per body entry.
  std::vector<std::uint32_t> lds_cycles(body.size(), 0);
  for (std::size_t i = 0; i < body.size(); ++i) {
    if (body[i].kind == Instr::lds_read) lds_cycles[i] = rules.lds_cycles(body[i].lds_bytes_per_lane, body[i].lds_stride);
  }
  for (;;) {
    // The next issue: the earliest (cycle, last issue, wave index) over waves that have work.
    std::size_t pick = waves.size();
    std::uint64_t best = UINT64_MAX;
    for (std::size_t i = 0; i < waves.size(); ++i) {
      Wave& w = waves[i];
      if (w.done) continue;
      const Instr& in = body[w.pc];
      const Simd& s = simds[w.simd];
      std::uint64_t t = std::max(w.ready, s.issue_free);
      switch (in.kind) {
        case Instr::mfma: t = std::max(t, s.matrix_free); break;
        case Instr::valu:
        case Instr::trans: t = std::max(t, s.valu_free); break;
        case Instr::lds_read: break;  // queued at the LDS, which serves accesses in arrival order
        case Instr::wait: t = std::max(t, w.results_ready); break;
      }
      if (t < best || (t == best && pick < waves.size() && w.last_issue < waves[pick].last_issue)) {
        best = t;
        pick = i;
      }
    }
    if (pick == waves.size()) break;
    Wave& w = waves[pick];
    Simd& s = simds[w.simd];
    const Instr& in = body[w.pc];
    const std::uint64_t t = best;
    switch (in.kind) {
      case Instr::mfma:
        s.matrix_free = t + rules.mfma_cycles();
        s.valu_free = std::max(s.valu_free, t + rules.mfma_valu_block());
        w.ready = t + rules.mfma_valu_block();
        end = std::max(end, s.matrix_free);
        r.matrix_busy += rules.mfma_cycles();
        ++r.mfma;
        break;
      case Instr::valu:
        s.valu_free = t + rules.valu_cycles();
        w.ready = t + rules.valu_cycles();
        end = std::max(end, s.valu_free);
        ++r.valu;
        r.vector_busy += rules.valu_cycles();
        break;
      case Instr::trans:
        s.valu_free = t + rules.trans_cycles();
        w.ready = t + rules.trans_cycles();
        end = std::max(end, s.valu_free);
        ++r.trans;
        r.vector_busy += rules.trans_cycles();
        break;
      case Instr::lds_read: {
        // The LDS serves accesses in arrival order; the wave moves on after issuing.
        const std::uint64_t start = std::max(t, lds_free);
        lds_free = start + lds_cycles[w.pc];
        w.results_ready = std::max(w.results_ready, lds_free + rules.lds_latency());
        w.ready = t + 1;
        end = std::max(end, lds_free);
        ++r.lds_reads;
        r.lds_bytes += static_cast<std::uint64_t>(in.lds_bytes_per_lane) * gpu.cu.wave_size;
        break;
      }
      case Instr::wait:
        w.ready = t;
        end = std::max(end, t);
        break;
    }
    w.ready = std::max(w.ready, t + rules.issue_interval());  // the wave's next turn at the scheduler
    s.issue_free = t + 1;  // one instruction per SIMD per cycle
    w.last_issue = t;
    if (++w.pc == body.size()) {
      w.pc = 0;
      if (++w.iteration == iterations) w.done = true;
    }
  }
  r.cycles = end;
  return r;
}

}  // namespace attnsim::sim
