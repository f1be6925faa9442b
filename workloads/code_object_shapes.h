// Precompiled kernels (aiter's asm v3) ship one code object per head dimension and dtype, each
// with its own tile: this picks the one a problem runs, or says plainly that none exists.
#pragma once

#include <string>

#include "workloads/kernel_program.h"
#include "workloads/problem.h"
#include "workloads/schedule.h"

namespace attnsim::workloads {

// The schedule that runs problem `p` in direction `d`: `k` with the tile of the code object that
// covers p's head dimensions and dtype, for each block size the `--kernel` spec did not set.
// Contract: a schedule whose direction lists no shapes (a templated kernel), or with
// `shapes=any`, is returned unchanged; otherwise throws arch::ConfigError (origin `origin`, field
// `head_dim_qk` or `dtype`) naming the shapes that exist and where they were read, when no code
// object covers the problem.
KernelSchedule schedule_for(const KernelSchedule& k, const Problem& p, Direction d, const std::string& origin);

}  // namespace attnsim::workloads
