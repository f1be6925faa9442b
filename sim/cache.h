// Tag state of a set-associative LRU cache, probed a contiguous run of lines at a time.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "sim/host_prefetch.h"
#include "sim/huge_page_allocator.h"
#include "sim/set_index_map.h"

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
// address / line_bytes, with tag line / sets and index line mod sets. SetIndex::modulo maps a line
// to set index; SetIndex::hashed to (index + d(tag)) mod sets, a displacement by the tag times a
// large odd multiplier (prime displacement: Kharbutli et al., HPCA 2004; kDefaultIndexPrime unless
// the constructor is given another), so that lines a power of two of
// sets apart spread over the sets as a hardware index hash spreads them, where plain modulo would
// pile them into one set. For a fixed tag either map is a rotation, so a set and a tag still name
// exactly one line. A miss allocates immediately, so a later request to the same line hits even
// while the fill is in flight (the hardware's hit-on-miss).
//
// Granules: a cache built with granule_lines = g > 1 keeps one tag entry per aligned group of g
// lines, in sets / g sets. Lines g k .. g k + g - 1 fall in consecutive sets with the same tag (the
// hashed index displaces by multiples of g, computed on the granule sets), so
// as long as every access covers whole granules, each such set sees the same sequence of granule
// tags and holds the same state: one entry stands exactly for g. The caller probes whole granules
// while granular() and calls split() before the first access that does not cover whole granules;
// split() expands every entry to its g lines, after which the cache is the line cache it stood for.
// Contract: exact LRU per set (per the line cache a granular one stands for); deterministic; no
// allocation after construction, except once in split(). The victim of a miss is the set's first
// invalid way, else its least recently used.
class SetAssocCache {
 public:
  // `displacement_lines`: the hashed index displaces by multiples of this many lines (0: the
  // granule); a line cache equals a granular one of granule g only if both displace by multiples
  // of g.
  // `address_limit`: no address at or above it is ever probed (the GPU's memory capacity); when
  // every tag below it is below 0x7FFF (15 bits, less the invalid tag), the tag state is kept in
  // 16-bit words.
  // `index_prime`: the hashed index's multiplier, odd and below 2^32 (else std::invalid_argument).
  SetAssocCache(std::uint64_t size_bytes, std::uint32_t ways, std::uint32_t line_bytes, WritePolicy policy,
                std::uint32_t granule_lines = 1, SetIndex index = SetIndex::modulo, std::uint32_t displacement_lines = 0,
                std::uint64_t address_limit = ~std::uint64_t{0}, std::uint64_t index_prime = kDefaultIndexPrime);
  static constexpr std::uint64_t kDefaultIndexPrime = 2654435761u;  // a prime near 2^32 / golden ratio

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
    const std::uint64_t set = set_of(address >> line_shift_);
    const char* first = narrow_ ? reinterpret_cast<const char*>(set_words<std::uint16_t>(set))
                                : reinterpret_cast<const char*>(set_words<std::uint32_t>(set));
    prefetch_host_line(first);
    prefetch_host_line(first + set_bytes_ - 1);  // a set may span two host lines
  }
  std::uint32_t line_bytes() const { return line_bytes_; }
  std::uint64_t sets() const { return sets_; }
  // The set of a line (of the unit an entry stands for), and back: the line a tag names in a set.
  std::uint64_t set_of(std::uint64_t line) const { return index_map_.set_of(line); }
  std::uint64_t line_of(std::uint32_t tag, std::uint64_t set) const {
    const std::uint64_t d = displacement(tag);
    return static_cast<std::uint64_t>(tag) * sets_ + (set >= d ? set - d : set + sets_ - d);
  }
  std::uint32_t ways() const { return ways_; }
  std::uint64_t state_bytes() const;  // memory the tag state holds
  // The tag state a cache of this geometry (valid arguments) holds as a line cache: its
  // state_bytes() once split(), or from construction without a granule. Pure.
  static std::uint64_t state_bytes_split(std::uint64_t size_bytes, std::uint32_t ways, std::uint32_t line_bytes,
                                         std::uint64_t address_limit = ~std::uint64_t{0});
  bool narrow() const { return narrow_; }  // whether the tag state is kept in 16-bit words
  bool contains(std::uint64_t address) const;

 private:
  // How a set's tag state is laid out in words (the constructor's choice, for `line_sets` line sets).
  struct WordLayout {
    bool narrow = false, ordered = false;
    std::uint64_t word = 4, tag_words = 0, set_words = 0;
  };
  static WordLayout word_layout(std::uint64_t line_sets, std::uint32_t ways, std::uint32_t line_bytes,
                                std::uint64_t address_limit);
  // A set is `ways` tags, in words of 16 bits (narrow_: every tag below the address limit is below
  // kInvalidTag) or 32 bits, with the word's top bit as the dirty bit; an invalid way holds the tag
  // kInvalidTag, which no probe carries. Its recency is kept in one of two forms:
  // - ordered_ (at most 16 ways): one 64-bit word after the tags (padded to 8 bytes), nibble p the
  //   way at recency position p (0 the most recent). Invalid ways sit at the least recent end,
  //   lowest way last, so a miss always takes the way at position ways - 1: the first invalid way,
  //   else the least recently used. A narrow 16-way set is 40 bytes, a wide one 72.
  // - otherwise: `ways` ranks after the tags, a rank being the way's place in the set's recency
  //   order, 1 for the most recently used up to the number of valid ways, 0 for an invalid way.
  // Either way the tag compare and the update are straight vector or bit operations.
  template <class Word>
  static constexpr Word kDirtyBit = static_cast<Word>(Word{1} << (8 * sizeof(Word) - 1));
  template <class Word>
  static constexpr Word kInvalidTag = static_cast<Word>(kDirtyBit<Word> - 1);

  // The way a miss replaces (ranked sets): the first invalid way, else the least recently used.
  template <std::uint32_t W, class Word>
  std::uint32_t victim_way(const Word* ranks) const;
  // Makes way `way` (rank `rank`, 0 if invalid) the most recently used of its set's ranks.
  template <std::uint32_t W, class Word>
  void make_most_recent(Word* ranks, std::uint32_t way, Word rank) const;
  // The way holding `tag` in a set's tags, or `ways` if none.
  template <std::uint32_t W, class Word>
  std::uint32_t find_way(const Word* tags, std::uint32_t tag) const;
  // Probes one line; returns true on a hit. On a miss allocates and reports a dirty victim.
  // W is the associativity when known at compile time (0: use ways_).
  template <std::uint32_t W, class Word>
  bool probe(std::uint64_t set, std::uint32_t tag, bool write, bool& evicted_dirty, std::uint64_t& victim_line);
  template <std::uint32_t W, class Word, class OnMiss, class OnWriteback>
  ProbeResult access_impl(std::uint64_t address, std::uint64_t bytes, bool write, OnMiss&& on_miss,
                          OnWriteback&& on_writeback);
  template <std::uint32_t W, class OnMiss, class OnWriteback>
  ProbeResult access_words(std::uint64_t address, std::uint64_t bytes, bool write, OnMiss&& on_miss,
                           OnWriteback&& on_writeback) {
    return narrow_ ? access_impl<W, std::uint16_t>(address, bytes, write, on_miss, on_writeback)
                   : access_impl<W, std::uint32_t>(address, bytes, write, on_miss, on_writeback);
  }
  template <class Word>
  bool contains_words(std::uint64_t address) const;
  template <class Word, class OnWriteback>
  std::uint64_t flush_words(OnWriteback&& on_writeback);
  template <class Word>
  void invalidate_words(std::vector<Word, HugePageAllocator<Word>>& state);
  // An ordered set's recency word (after its tags), read and written whole.
  template <class Word>
  std::uint64_t order_of(const Word* tags) const {
    std::uint64_t order;
    std::memcpy(&order, tags + tag_words_, sizeof order);
    return order;
  }
  template <class Word>
  void set_order(Word* tags, std::uint64_t order) const {
    std::memcpy(tags + tag_words_, &order, sizeof order);
  }
  // The hashed index's displacement of a tag's lines, in sets (0 for SetIndex::modulo).
  std::uint64_t displacement(std::uint32_t tag) const { return index_map_.displacement(tag); }
  // The first word of a set (its tags; its ranks follow them).
  template <class Word>
  Word* set_words(std::uint64_t set) {
    if constexpr (sizeof(Word) == 2) return &narrow_state_[set * set_words_];
    else return &wide_state_[set * set_words_];
  }
  template <class Word>
  const Word* set_words(std::uint64_t set) const {
    if constexpr (sizeof(Word) == 2) return &narrow_state_[set * set_words_];
    else return &wide_state_[set * set_words_];
  }

  std::uint64_t sets_;
  std::uint32_t ways_, line_bytes_, line_shift_;  // line_shift_: of the unit an entry stands for
  std::uint32_t granule_lines_ = 1;
  // Entry -> set: of granule sets with a step of displacement lines / granule (its multiplier below
  // 2^32: no overflow).
  SetIndexMap index_map_;
  bool narrow_ = false;
  std::uint32_t tag_limit_ = 0;  // tags at or above it do not fit a word (beside the dirty bit and kInvalidTag)
  WritePolicy policy_;
  bool ordered_ = false;          // recency as a nibble order (at most 16 ways), else as ranks
  std::uint64_t tag_words_ = 0;   // words before a set's recency state
  std::uint64_t set_words_ = 0;   // words per set
  std::uint32_t set_bytes_ = 0;
  std::vector<std::uint16_t, HugePageAllocator<std::uint16_t>> narrow_state_;  // per set: tags, then order or ranks
  std::vector<std::uint32_t, HugePageAllocator<std::uint32_t>> wide_state_;    // the same in 32-bit words
};

}  // namespace attnsim::sim

#include "sim/cache_inl.h"
