// Closed-form counts of a pass: FLOPs (FA convention and as issued) and bytes per tensor, from the
// schedule's block ranges without running it; and the seed model's formulas (TraceLens PR #757).
#pragma once

#include <cstdint>

#include "workloads/functional.h"
#include "workloads/kernel_program.h"

namespace attnsim::workloads {

struct PassCounts {
  TensorTraffic traffic;          // bytes per tensor, read and written
  double fa_flops = 0;            // FA convention: fwd 2*B*Hq*Nq*Nk*(dqk+dv), halved when causal; bwd 2.5x
  double mfma_flops_issued = 0;   // matrix work actually issued: visited tiles at full tile size
  double mfma_instructions = 0;   // all waves
  double exps = 0;                // transcendental lane operations (instructions x wave size), all waves
  double valu_ops = 0;            // VALU lane operations (instructions x wave size), masking included, all waves
  std::uint64_t workgroups = 0;
  std::uint64_t iterations = 0;   // loop iterations of all workgroups
  std::uint64_t tile_ops = 0;     // operations instantiated (prologue + body x iterations + epilogue)
};

// Contract: pure; counts only from block ranges and tile sizes (each pass's rows are summed in
// closed form), independent of the functional run and of the op-by-op instantiation.
PassCounts analytic_counts(const PassPrograms& pp);

// The bytes the op-by-op instantiation (what the simulator will request) moves per tensor.
TensorTraffic program_traffic(const PassPrograms& pp);

// FA-convention FLOPs of one direction.
double fa_flops(const Problem& p, Direction d);

// The seed's formulas, reproduced to check the reconstruction of its measurements
// (fa-schedules.md Part A): the single-pass minimum (Q, K, V, dO read; dQ, dK, dV written once) and
// the two-pass re-read formula with block_q = block_kv = `block`.
std::uint64_t seed_minimum_bwd_bytes(const Problem& p);
std::uint64_t seed_two_pass_bwd_bytes(const Problem& p, std::uint64_t block);
// FLOPs of one Q K^T matmul, 2 * B * Hq * Nq * Nk * dqk (not halved for causal).
double matmul_flops(const Problem& p);

}  // namespace attnsim::workloads
