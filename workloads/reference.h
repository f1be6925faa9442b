// Naive attention in double precision: the ground truth the tiled schedules are checked against.
#pragma once

#include <vector>

#include "workloads/mask.h"
#include "workloads/problem.h"
#include "workloads/tensors.h"

namespace attnsim::workloads {

// Host copies of tensors as float, indexed like TensorDesc::element_index; empty when absent.
struct HostTensors {
  std::array<std::vector<float>, kTensorCount> data;
  std::vector<float>& operator[](TensorId t) { return data[static_cast<std::size_t>(t)]; }
  const std::vector<float>& operator[](TensorId t) const { return data[static_cast<std::size_t>(t)]; }
};

// Forward: O and LSE (natural log; -inf and O = 0 for a row that sees no key).
// Backward (when `backward`): dQ, dK, dV from dO, using the forward's O and LSE.
// Contract: reads Q, K, V (and dO) from `t` with the layouts of `ts`; writes O, LSE (and dQ, dK, dV).
void reference_attention(const Problem& p, const TensorSet& ts, HostTensors& t, bool backward);

}  // namespace attnsim::workloads
