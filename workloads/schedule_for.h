// The schedule a kernel preset runs for one problem on one GPU: precompiled kernels (aiter's asm
// v3) ship one code object per head dimension and dtype, each with its own tile, and every kernel
// runs its matrix products with the instructions of the problem's dtype.
#pragma once

#include <string>

#include "arch/gpu_spec.h"
#include "workloads/kernel_program.h"
#include "workloads/problem.h"
#include "workloads/schedule.h"

namespace attnsim::workloads {

// The schedule that runs problem `p` in direction `d` on `gpu`:
// - the tile of the code object that covers p's head dimensions and dtype, for each block size the
//   `--kernel` spec did not set. A direction that lists no shapes (a templated kernel), or
//   `shapes=any`, keeps its tile. No code object for p: arch::ConfigError (field `head_dim_qk` or
//   `dtype`) naming the shapes that exist and where they were read.
// - the GPU's fastest matrix instruction of p's dtype with the shape (m x n, blocks, SIMDs) of the
//   schedule's, unless `--kernel` set it; the shape is read from the preset's native GPU where
//   `gpu` lacks the named instruction. Where the GPU has none of that shape, a dtype of the same
//   peak rate keeps the schedule's instruction (bf16 and fp16 on every shipped GPU); another throws
//   arch::ConfigError (field `fwd.mfma` or `bwd.mfma`).
// Errors carry `origin`.
KernelSchedule schedule_for(const KernelSchedule& k, const Problem& p, Direction d, const arch::GpuSpec& gpu,
                            const std::string& origin);

// The schedule `attnsim check` interprets: schedule_for's where it has one, else `k` as given (a
// schedule's logic can be checked at any shape, and small head dimensions keep the check fast).
KernelSchedule checkable_schedule(const KernelSchedule& k, const Problem& p, Direction d, const arch::GpuSpec& gpu);

}  // namespace attnsim::workloads
