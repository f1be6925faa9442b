// The shapes of the approximate mode's line groups and the sets of a few-set cache their units lie
// in, shared by GroupCache and SmallGroupCache.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/divisor.h"

namespace attnsim::sim {

// The number of units set in a mask: the POPCNT instruction where the build targets it
// (ATTNSIM_POPCNT), else a portable bit count that inlines (the builtin would become a library call
// on the x86-64 baseline, which lacks the instruction).
inline std::uint64_t count_units(std::uint64_t x) {
#if defined(__POPCNT__)
  return static_cast<std::uint64_t>(__builtin_popcountll(x));
#else
  x -= (x >> 1) & 0x5555555555555555ull;
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return (x * 0x0101010101010101ull) >> 56;
#endif
}

// The first 64 B unit of each 128 B line that has a unit in `units` (units 2k and 2k + 1 of a row).
inline std::uint64_t line_starts(std::uint64_t units) { return (units | (units >> 1)) & 0x5555555555555555ull; }

// Where a group's 64 B units lie: unit u is at key + (u / units_per_row) * stride + (u % units_per_row) * 64.
struct GroupShape {
  std::uint64_t stride = 0;         // bytes between the group's rows
  std::uint32_t units_per_row = 0;  // 64 B units per row (rows x units_per_row <= 64)
};

// The distinct group shapes a cache has seen, numbered in the order first seen. Contract:
// index_of(shape) returns the shape's number, adding it if new (std::length_error beyond 65536
// shapes); the last one found is tried first. Allocates only for a shape beyond the first 16.
class GroupShapes {
 public:
  GroupShapes() { shapes_.reserve(16); }
  std::uint64_t index_of(const GroupShape& shape);
  const GroupShape& operator[](std::uint64_t i) const { return shapes_[i]; }

 private:
  std::vector<GroupShape> shapes_;
  std::uint64_t last_ = 0;
};

// Contract: of(key, shape) returns sets + 1 words: for each set k < sets the units of a group of
// `shape` at `key` that lie in set k (unit u at key + (u / units_per_row) * stride +
// (u % units_per_row) * 64 lies in set (its address / line_bytes) mod sets), then a word with bit
// k set when set k (k < 64) holds one of them. Found once per shape and 64 B key offset within
// sets x line_bytes (a key off a 64 B boundary is found on each call); the pointer is valid until
// the next call. Not thread-safe: one instance per simulation (or per cache).
// line_bytes a positive multiple of 64, sets >= 1 (else std::invalid_argument).
class GroupSetMasks {
 public:
  GroupSetMasks(std::uint32_t sets, std::uint32_t line_bytes);
  const std::uint64_t* of(std::uint64_t key, const GroupShape& shape);
  std::uint32_t sets() const { return sets_; }
  std::uint64_t state_bytes() const;
  // state_bytes() of a GroupSetMasks just built for `sets` sets (its scratch entry; the memo grows
  // with the shapes and key offsets seen). Pure.
  static std::uint64_t state_bytes_for(std::uint32_t sets) { return (std::uint64_t{sets} + 1) * sizeof(std::uint64_t); }

 private:
  std::uint32_t sets_;
  Divisor line_div_, period_div_;
  GroupShapes shapes_;
  std::vector<std::uint64_t> memo_;     // per shape and key offset: sets + 1 words
  std::vector<std::uint8_t> ready_;     // per shape and key offset: found yet
  std::vector<std::uint64_t> scratch_;  // a key off a 64 B boundary
  // The last call's shape and key offset, and its answer (memo_ moves only when an entry is added,
  // which sets them again).
  GroupShape last_shape_{};
  std::uint64_t last_offset_ = ~std::uint64_t{0};
  const std::uint64_t* last_ = nullptr;
};

// Calls f(k) for each set k of a cache of `sets` sets that the words `m` (GroupSetMasks::of's) say a
// group has units in, in ascending order; every set when there are more than 64 (the word of sets
// has a bit for the first 64 only).
template <class F>
void for_each_set(const std::uint64_t* m, std::uint32_t sets, F&& f) {
  if (sets > 64) {
    for (std::uint32_t k = 0; k < sets; ++k) f(k);
    return;
  }
  for (std::uint64_t in = m[sets]; in; in &= in - 1) f(static_cast<std::uint32_t>(__builtin_ctzll(in)));
}

}  // namespace attnsim::sim
