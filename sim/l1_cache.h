// The vector L1 of every compute unit: tag state only (data is never modelled), write-through,
// allocating on reads, bypassed by atomics, invalidated at the start of every kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "arch/gpu_spec.h"
#include "sim/divisor.h"
#include "sim/group_cache.h"
#include "sim/lru_ring.h"
#include "sim/small_group_cache.h"

namespace attnsim::sim {

// Contract: one L1 per CU index in [0, chip.xcds x chip.cus_per_xcd). Exact mode: an LRU cache of
// the configured geometry (MI300X: 4 sets of 64 ways of 128 B lines, modulo set index; LruRing)
// that keeps validity per 64 B unit of a line: a miss fills the units the request touched (the L1
// forwards the request's byte range, which the L2's request-size rules then see), so a later
// request hits only if every unit it touches is valid. Approximate mode: a GroupCache of the L1's
// size and sets per CU, keyed like the L2's groups (also valid per 64 B unit); held as a
// SmallGroupCache (the same outcome, faster) when it has room for at most
// SmallGroupCache::kMaxGroups groups (MI300X: 32); an L1 of more than kMaxGroupSets sets (a
// what-if of a large L1 at the configured ways) keeps the exact mode's tags instead, a group's
// units looked up line by line (its groups' per-set counts would grow with the sets). Deterministic.
class L1Caches {
 public:
  // Contract: `gpu` as the loader validated it, whose checks (arch/spec_checks.cpp) hold what this
  // model needs: l1.line equal to l2.line (requests are L2 lines) and l1.write_policy write_through
  // (GPU L1s hold no dirty global data); std::invalid_argument otherwise.
  L1Caches(const arch::GpuSpec& gpu, bool approximate);

  // Exact mode: a read of [lo, hi) of the line at `line_address` by CU `cu`. Returns true when
  // every 64 B unit it touches is valid; either way makes them valid and the line the most
  // recently used of its set.
  bool read(std::uint32_t cu, std::uint64_t line_address, std::uint32_t lo, std::uint32_t hi);
  // Approximate mode: a read of the 64 B units `units` of group `key` by CU `cu`; returns the units
  // that were present, then fills the others.
  std::uint64_t read_group(std::uint32_t cu, std::uint64_t key, const GroupShape& shape, std::uint64_t units) {
    if (set_masks_) return small_[cu].access(key, shape, units, units, *set_masks_);
    if (!groups_.empty()) return groups_[cu].access(key, shape, units, units, 0, [](auto&&...) {});
    return read_units(cu, key, shape, units);
  }
  // The most sets an approximate L1 keeps as groups (the sets a group's word of sets covers).
  static constexpr std::uint64_t kMaxGroupSets = 64;
  // Drops every line of every L1 (the command processor does so when a kernel starts).
  void invalidate();
  // Gives every L1 `bytes` of capacity (the sets and line of l1.size; a whole number of ways),
  // empty. A kernel's L1 on a GPU whose L1 shares the LDS's array (sim::split_l1).
  void resize(std::uint64_t bytes);
  std::uint64_t size_bytes() const { return size_; }
  std::uint64_t state_bytes() const;
  // The most state_bytes() the L1s of `gpu` hold in either mode: at the largest capacity a kernel
  // can give them (l1.size, or beside the smallest carve-out), the set-mask memos as built. Pure.
  static std::uint64_t state_bytes_at_most(const arch::GpuSpec& gpu, bool approximate);

 private:
  // Whether the approximate L1 of `bytes` is a SmallGroupCache (else a GroupCache), given that it
  // keeps groups at all (groups_for).
  static bool small_groups(std::uint64_t bytes) { return GroupCache::room_for(bytes) <= SmallGroupCache::kMaxGroups; }
  // Whether the L1s of `gpu` keep groups in the mode (else the exact mode's tags).
  static bool groups_for(const arch::GpuSpec& gpu, bool approximate) {
    return approximate && gpu.l1_sets() <= kMaxGroupSets;
  }
  // read_group on the exact tags: each unit of `units` looked up as its part of its line.
  std::uint64_t read_units(std::uint32_t cu, std::uint64_t key, const GroupShape& shape, std::uint64_t units);
  void build(std::uint64_t bytes);
  const arch::GpuSpec* gpu_;
  bool approximate_;
  Divisor line_;  // l1.line
  std::uint64_t size_ = 0;
  std::vector<LruRing> exact_;         // per CU: the exact mode's, or an approximate L1 of many sets
  std::vector<GroupCache> groups_;     // per CU, approximate mode (large L1s)
  std::vector<SmallGroupCache> small_; // per CU, approximate mode (small L1s)
  std::optional<GroupSetMasks> set_masks_;  // the small L1s' sets of each group shape
};

}  // namespace attnsim::sim
