// Instruction-level issue on one compute unit: waves on SIMDs issuing MFMA, VALU, transcendental
// and LDS instructions with the ISA's rates, co-execution rules and LDS bank conflicts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arch/gpu_spec.h"

namespace attnsim::sim {

// One instruction of a wave's loop body.
struct Instr {
  enum Kind : std::uint8_t { mfma, valu, trans, lds_read, wait } kind = valu;
  std::uint32_t lds_bytes_per_lane = 16;  // lds_read: 4 (b32), 8 (b64) or 16 (b128)
  std::uint32_t lds_stride = 16;          // lds_read: bytes between consecutive lanes' addresses
};

// The per-SIMD and per-CU pipe rules, from the arch spec (CDNA3 section 1.3 of arch-facts):
// - an MFMA occupies the SIMD's matrix pipe for its issue-to-issue cycles (times the SIMDs it spans),
//   and blocks the VALU for (cycles - valu_coexec_cycles) of them; the rest are open to VALU work;
// - a VALU instruction occupies the VALU for wave_size / valu_lanes_per_simd cycles, a
//   transcendental for wave_size / trans_lanes_per_simd cycles;
// - LDS accesses share the CU's banks: a wave's access is split into phases of
//   (banks x bank_width / bytes_per_lane) lanes; a phase takes as many cycles as the most distinct
//   dwords any one bank must deliver.
class SimdIssueRules {
 public:
  SimdIssueRules(const arch::GpuSpec& gpu, const arch::MatrixInstruction& mfma);
  // Matrix-pipe cycles one SIMD spends per instruction. An instruction that spans several SIMDs
  // (Hopper's warpgroup MMA over 4 sub-partitions) occupies each for its share: cycles x simds.
  std::uint32_t mfma_cycles() const { return mfma_.cycles * mfma_.simds; }
  std::uint32_t mfma_valu_block() const { return mfma_.cycles - mfma_.valu_coexec_cycles; }
  std::uint32_t valu_cycles() const { return valu_cycles_; }
  std::uint32_t trans_cycles() const { return trans_cycles_; }
  // Cycles the LDS needs for one wave's read with this lane width and stride.
  std::uint32_t lds_cycles(std::uint32_t bytes_per_lane, std::uint32_t stride) const;
  std::uint32_t lds_latency() const { return lds_latency_; }
  // Cycles between two instructions of one wave (its SIMD's turn at the scheduler).
  std::uint32_t issue_interval() const { return issue_interval_; }
  const arch::MatrixInstruction& mfma() const { return mfma_; }

 private:
  arch::MatrixInstruction mfma_;
  std::uint32_t wave_size_, valu_cycles_, trans_cycles_, banks_, bank_width_, lds_latency_, issue_interval_;
};

// Result of running a loop on one CU.
struct IssueResult {
  std::uint64_t cycles = 0;             // until the last instruction completes
  std::uint64_t mfma = 0, valu = 0, trans = 0, lds_reads = 0, lds_bytes = 0;
  std::uint64_t matrix_busy = 0;        // matrix-pipe cycles, summed over SIMDs
  std::uint64_t vector_busy = 0;        // vector-pipe cycles (VALU and transcendental), summed over SIMDs
};

// Runs `iterations` of `body` on every wave: `waves_per_simd` waves on each SIMD of one CU.
// Waves issue in order, each at most one instruction per `issue_interval()`; each SIMD issues at
// most one instruction per cycle, choosing the ready wave that has waited longest. A `wait`
// instruction waits for the wave's LDS results.
// Contract: deterministic; throws std::invalid_argument when waves_per_simd exceeds the slots.
IssueResult run_on_cu(const arch::GpuSpec& gpu, const SimdIssueRules& rules, const std::vector<Instr>& body,
                      std::uint32_t waves_per_simd, std::uint32_t iterations);

}  // namespace attnsim::sim
