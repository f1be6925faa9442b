// A bound on the host memory a simulation's cache tags take, checked before any is allocated.
#pragma once

#include <cstdint>

#include "arch/gpu_spec.h"

namespace attnsim::sim {

enum class TagMode : std::uint8_t;

// The most host memory one simulation's tag state may take (every cache of the hierarchy, as
// MemoryPath::state_bytes counts it).
inline constexpr std::uint64_t kMaxStateBytes = std::uint64_t{4} << 30;

// Contract: an upper bound on MemoryPath(gpu, ..., mode).state_bytes() from the geometry alone
// (each cache's own state_bytes_for / state_bytes_split / state_bytes_at_most; the approximate
// caches' set-mask memos, which grow with the group shapes seen, aside), with the config key of
// the level that takes the most. Pure.
struct StateEstimate {
  std::uint64_t bytes = 0;
  const char* largest_key = "l2.size";  // the level with the most: l1.size, l2.size or mall.size
  std::uint64_t largest_bytes = 0;
};
StateEstimate estimate_state_bytes(const arch::GpuSpec& gpu, TagMode mode);

// Throws arch::ConfigError naming the largest level's key when the estimate exceeds
// kMaxStateBytes: a config whose caches the host cannot hold is refused before it is allocated.
// Returns `gpu` (a constructor checks it in its first member's initialiser, before any cache).
const arch::GpuSpec& check_state_budget(const arch::GpuSpec& gpu, TagMode mode);

}  // namespace attnsim::sim
