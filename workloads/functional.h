// Runs a pass's tile programs on the CPU in fp32 (TBB across independent workgroup groups),
// op by op, and compares the outputs with naive attention; counts the bytes each tensor moves.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "workloads/kernel_program.h"

namespace attnsim::workloads {

// Bytes read and written per tensor (atomic adds count as written).
struct TensorTraffic {
  std::array<std::uint64_t, kTensorCount> read{};
  std::array<std::uint64_t, kTensorCount> written{};
  bool operator==(const TensorTraffic&) const = default;
};

// The outcome of a functional check.
struct FunctionalResult {
  // Largest |tiled - reference| / max |reference| per output tensor (O, LSE; or dQ, dK, dV).
  std::array<double, kTensorCount> max_rel_error{};
  double worst = 0;
  std::string worst_tensor;
  TensorTraffic traffic;  // what the run loaded and stored
};

// Contract: deterministic for a seed, whatever the thread count; outputs are poisoned (NaN)
// before the run, so a tile never written shows as an infinite error.
FunctionalResult run_functional(const PassPrograms& pp, std::uint64_t seed = 1);

// Relative tolerance `attnsim check` requires.
inline constexpr double kCheckTolerance = 1e-4;

}  // namespace attnsim::workloads
