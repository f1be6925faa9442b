// How many lines a set-associative cache has evicted, counted for a cache that keeps no sets (the
// approximate mode's GroupCache): per set, the lines filled into it since it was last emptied.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/set_index_map.h"

namespace attnsim::sim {

// The sets of a set-associative cache and their ways: what SetFillCounts counts fills into.
struct FillSets {
  SetIndexMap map;
  std::uint32_t ways = 0;
};

// A line leaves a set of a set-associative cache only when a fill into that set finds it full, so
// after f_s fills into set s since the cache was emptied the set holds min(f_s, ways) lines and has
// evicted max(0, f_s - ways), whatever the replacement policy. Contract: fill(line) counts one fill
// of `line` into its set (SetIndexMap) and returns 1 when that fill evicts a line, else 0 (fill_run:
// consecutive lines at once); all_full() says when every set is full (each further fill then evicts
// a line, whatever its set); clear() empties the cache. Deterministic; no allocation after
// construction. ways in 1..65535 (else std::invalid_argument).
class SetFillCounts {
 public:
  SetFillCounts(const SetIndexMap& map, std::uint32_t ways);
  std::uint32_t fill(std::uint64_t line) { return fill_run(line, 1); }
  // fill() of the `n` consecutive lines from `line` on: how many of them evict a line.
  std::uint32_t fill_run(std::uint64_t line, std::uint64_t n) {
    std::uint32_t evicting = 0;
    while (n > 0) {
      // Up to the next tag, the lines' sets follow each other (wrapping at the last set).
      const std::uint64_t in_tag = std::min(n, map_.lines_to_next_tag(line));
      std::uint64_t set = map_.set_of(line);
      for (std::uint64_t k = 0; k < in_tag; ++k, set = set + 1 == filled_.size() ? 0 : set + 1) {
        std::uint16_t& f = filled_[set];
        if (f == ways_) {
          ++evicting;
        } else if (++f == ways_) {
          ++full_sets_;
        }
      }
      line += in_tag;
      n -= in_tag;
    }
    return evicting;
  }
  // Every set full: each further fill evicts a line (until clear()).
  bool all_full() const { return full_sets_ == filled_.size(); }
  void clear();
  std::uint64_t state_bytes() const { return filled_.size() * sizeof(std::uint16_t); }
  static std::uint64_t state_bytes_for(std::uint64_t sets) { return sets * sizeof(std::uint16_t); }

 private:
  SetIndexMap map_;
  std::uint16_t ways_;
  std::vector<std::uint16_t> filled_;  // per set: fills since clear(), up to ways_
  std::uint64_t full_sets_ = 0;
};

}  // namespace attnsim::sim
