// Helper for tests that simulate a whole point: the PointSpec `attnsim run` would build.
#pragma once

#include <cstdint>
#include <string>

#include "report/simulate_point.h"

namespace attnsim::test {

// B = 1, `heads` query and key heads, N = `seqlen` for queries and keys, the problem's defaults
// otherwise (d = 128, bf16, not causal), the exact mode: what `attnsim run --arch ARCH --kernel
// KERNEL --direction DIRECTION --batch 1 --heads H:H --seqlen N` simulates.
inline report::PointSpec point_spec(const std::string& arch, const std::string& kernel, const std::string& direction,
                                    std::uint32_t heads, std::uint64_t seqlen) {
  report::PointSpec s;
  s.arch = arch;
  s.kernel = kernel;
  s.direction = direction;
  s.problem.batch = 1;
  s.problem.heads_q = s.problem.heads_kv = heads;
  s.problem.seqlen_q = s.problem.seqlen_k = seqlen;
  return s;
}

}  // namespace attnsim::test
