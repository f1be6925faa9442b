// Tag state of a set-associative LRU cache, probed a contiguous run of lines at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/divisor.h"
#include "sim/host_prefetch.h"
#include "sim/huge_page_allocator.h"

namespace attnsim::sim {

// What a write does to the cache.
enum class WritePolicy : std::uint8_t {
  write_back,     // allocate on a write miss (no fill: GPU writes carry byte masks); dirty until evicted or flushed
  write_through,  // writes go to the next level; a present line is updated, a missing one not allocated
};

// A contiguous byte range to probe.
struct Run {
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
};

// Outcome of probing one run of lines.
struct ProbeResult {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t writebacks = 0;  // dirty lines evicted by the run's allocations
};

// One cache instance (an L2 of one XCD, the MALL, an L1). Lines are identified by
// address / line_bytes; a line maps to set (line mod sets). A miss allocates immediately, so a
// later request to the same line hits even while the fill is in flight (the hardware's hit-on-miss).
//
// Granules: a cache built with granule_lines = g > 1 keeps one tag entry per aligned group of g
// lines, in sets / g sets. Lines g k .. g k + g - 1 fall in consecutive sets with the same tag, so
// as long as every access covers whole granules, each such set sees the same sequence of granule
// tags and holds the same state: one entry stands exactly for g. The caller probes whole granules
// while granular() and calls split() before the first access that does not cover whole granules;
// split() expands every entry to its g lines, after which the cache is the line cache it stood for.
// Contract: exact LRU per set (per the line cache a granular one stands for); deterministic; no
// allocation after construction, except once in split().
class SetAssocCache {
 public:
  SetAssocCache(std::uint64_t size_bytes, std::uint32_t ways, std::uint32_t line_bytes, WritePolicy policy,
                std::uint32_t granule_lines = 1);

  // Whether entries stand for granules; the bytes a probe covers (the line, or the granule).
  bool granular() const { return granule_lines_ > 1; }
  std::uint32_t unit_bytes() const { return 1u << line_shift_; }
  // Turns a granular cache into the line cache it stands for (no effect on a line cache).
  void split();

  // Probes every line overlapping [address, address + bytes). For each maximal run of missed
  // lines calls on_miss(first_line_address, line_count) (reads, and write-through writes); for
  // each dirty line evicted calls on_writeback(line_address).
  template <class OnMiss, class OnWriteback>
  ProbeResult access(std::uint64_t address, std::uint64_t bytes, bool write, OnMiss&& on_miss,
                     OnWriteback&& on_writeback);

  // Probes the one line holding `address`: returns true on a hit. Exactly access() of that line;
  // when the allocation evicts a dirty line, sets `evicted` and `victim_address`.
  bool access_line(std::uint64_t address, bool write, bool& evicted, std::uint64_t& victim_address);

  // Probes several runs (a tile's rows) as one batch: the sets' tag state is prefetched for every
  // run first, so the host's memory latency overlaps across runs; then each run is probed in
  // order exactly as access() would. Results and callbacks are identical to calling access() per run.
  template <class OnMiss, class OnWriteback>
  ProbeResult access_runs(const Run* runs, std::size_t count, bool write, OnMiss&& on_miss, OnWriteback&& on_writeback);

  // Writes back every dirty line (on_writeback per line) and marks it clean; returns their count.
  template <class OnWriteback>
  std::uint64_t flush(OnWriteback&& on_writeback);
  // Drops every line (kernel-boundary invalidation), dirty or not.
  void invalidate();

  // Fetches the tag set of `address` into the host's cache (a hint; no effect on results).
  void prefetch(std::uint64_t address) const {
    const std::uint32_t* set = &state_[set_div_.mod(address >> line_shift_) * 2 * ways_];
    prefetch_host_line(set);
    if (ways_ >= 16) prefetch_host_line(set + 16);  // the stamps, in the next 64 B host line
  }
  std::uint32_t line_bytes() const { return line_bytes_; }
  std::uint64_t sets() const { return sets_; }
  std::uint32_t ways() const { return ways_; }
  std::uint64_t state_bytes() const;  // memory the tag state holds
  bool contains(std::uint64_t address) const;

 private:
  // A set is stored as `ways` tags then `ways` stamps, contiguous (128 B for 16 ways), so the tag
  // compare and the LRU search are straight vector loops. A tag is line / sets with kDirty as its
  // top bit; a stamp is the cache-wide clock at last use, 0 for an invalid way.
  static constexpr std::uint32_t kDirty = 0x80000000u;

  // Probes one line; returns true on a hit. On a miss allocates and reports a dirty victim.
  // W is the associativity when known at compile time (0: use ways_).
  template <std::uint32_t W>
  bool probe(std::uint64_t set, std::uint32_t tag, bool write, bool& evicted_dirty, std::uint64_t& victim_line);
  template <std::uint32_t W, class OnMiss, class OnWriteback>
  ProbeResult access_impl(std::uint64_t address, std::uint64_t bytes, bool write, OnMiss&& on_miss,
                          OnWriteback&& on_writeback);
  void renumber();  // re-ranks every set's stamps when the clock is about to wrap
  std::uint32_t* set_tags(std::uint64_t set) { return &state_[set * 2 * ways_]; }
  const std::uint32_t* set_tags(std::uint64_t set) const { return &state_[set * 2 * ways_]; }

  std::uint64_t sets_;
  Divisor set_div_;  // line -> set (remainder) and tag (quotient)
  std::uint32_t ways_, line_bytes_, line_shift_;  // line_shift_: of the unit an entry stands for
  std::uint32_t granule_lines_ = 1;
  WritePolicy policy_;
  std::vector<std::uint32_t, HugePageAllocator<std::uint32_t>> state_;  // per set: tags[ways], stamps[ways]
  std::uint32_t clock_ = 0;
};

}  // namespace attnsim::sim

#include "sim/cache_inl.h"
