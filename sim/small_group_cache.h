// The approximate mode's tag state of a small cache of few sets (a CU's vector L1): GroupCache's
// outcome for clean groups, held in flat slots found by a byte tag, the sets of each group shape
// found once for every cache that shares them.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/group_sets.h"

namespace attnsim::sim {

// Contract: the outcome of GroupCache(capacity_bytes, max_groups, masks.sets(), line) for accesses
// that never dirty a group (a write-through cache: dirty = 0), access for access: the same units
// hit, the same groups evicted in the same order, the same valid bytes in every set; see
// GroupCache for the rules (LRU over whole groups, each set held to its share of the capacity,
// at most max_groups groups). For caches of at most kMaxGroups groups (else std::invalid_argument):
// each group keeps its slot while resident, found by a byte of its key's hash compared across the
// slots at once; the recency order is a list of slots, least recent first, walked from its head
// for the first group with units in the set to fit. Keys are whole 64-bit values (GroupCache's
// must lie below 2^48: the two agree on every key it takes). Deterministic; no allocation after
// construction.
class SmallGroupCache {
 public:
  static constexpr std::uint32_t kMaxGroups = 64;
  SmallGroupCache(std::uint64_t capacity_bytes, std::uint32_t max_groups, std::uint32_t sets);

  // Probes the units `mask` of group `key` (of `shape`, whose sets `masks` gives; `masks` of this
  // cache's number of sets, and the same for every access): returns the
  // units of `mask` that were valid; then makes `fill` valid (0: a probe that allocates nothing)
  // and the group most recently used if it is present afterwards.
  std::uint64_t access(std::uint64_t key, const GroupShape& shape, std::uint64_t mask, std::uint64_t fill,
                       GroupSetMasks& masks);
  // Drops every group.
  void invalidate();

  std::uint64_t valid_bytes() const { return used_units_ * 64; }
  std::uint64_t valid_bytes_in_set(std::uint32_t set) const { return used_in_set_[set] * 64; }
  std::uint32_t groups() const { return count_; }
  std::uint64_t state_bytes() const;
  // state_bytes() of a SmallGroupCache built with these arguments. Pure.
  static std::uint64_t state_bytes_for(std::uint32_t max_groups, std::uint32_t sets);

 private:
  static constexpr std::uint32_t kNone = 0xffffffffu;
  static constexpr std::uint8_t kEnd = 0xff;  // the end of the recency list
  static std::uint8_t tag_of(std::uint64_t key) { return static_cast<std::uint8_t>((key * 0x9E3779B97F4A7C15ull) >> 56); }
  const std::uint64_t* set_units(std::uint32_t slot) const { return &masks_[std::size_t{slot} * width_]; }
  // The slot holding `key`, or kNone.
  std::uint32_t find(std::uint64_t key) const;
  // The least recently used group of the slots `among` (a bit per slot), or kNone.
  std::uint32_t least_recent(std::uint64_t among) const;
  // Slot s's valid units `units`, just made valid (Sign = +1) or about to go (-1), counted in
  // their sets.
  template <int Sign>
  void count_in_sets(std::uint32_t s, std::uint64_t units);
  void unlink(std::uint32_t s);
  void push_back(std::uint32_t s);  // as the most recently used
  void evict(std::uint32_t s);
  // Evicts, in each set `added` (units of slot `keep`) lies in, the least recently used groups
  // with units there until the set is within its share.
  void fit_sets(std::uint32_t keep, std::uint64_t added);

  std::uint64_t capacity_units_, set_capacity_units_;
  std::uint32_t max_groups_, sets_, width_;  // width_: sets + 1 words per group's masks
  std::uint32_t count_ = 0;
  std::uint64_t occupied_ = 0;  // a bit per slot
  std::uint64_t used_units_ = 0;
  alignas(16) std::uint8_t tags_[kMaxGroups] = {};  // per slot: tag_of(its key)
  std::uint8_t prev_[kMaxGroups] = {}, next_[kMaxGroups] = {};  // the recency list, per slot
  std::uint8_t head_ = kEnd, tail_ = kEnd;           // least and most recently used
  std::vector<std::uint64_t> keys_, valid_;          // per slot
  std::vector<std::uint64_t> masks_;                 // per slot: GroupSetMasks::of's words
  std::vector<std::uint64_t> used_in_set_;           // valid units per set
  std::vector<std::uint64_t> slots_in_set_;          // per set: a bit per slot with valid units there
};

}  // namespace attnsim::sim
