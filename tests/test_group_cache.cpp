// The approximate mode's tag state (GroupCache, and SmallGroupCache for a CU's L1) and how a
// tile's rows fall into groups (MemoryPath::for_each_group): hand-computed cases, and a plain LRU
// list as a reference.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <list>
#include <random>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/group_cache.h"
#include "sim/memory_path.h"
#include "sim/small_group_cache.h"

using namespace attnsim::sim;

namespace {
const GroupShape kRows{2048, 4};  // 256 B rows 2 KiB apart (K of one head, Hkv = 8, d = 128, bf16)
const auto kNoEvict = [](std::uint64_t, const GroupShape&, std::uint64_t) { FAIL("unexpected eviction"); };
}  // namespace

TEST_CASE("a group cache hits the units it holds and fills the ones it is given") {
  GroupCache c(64 * 64, 16);  // 64 units
  CHECK(c.access(0x10000, kRows, 0b1111, 0b1111, 0, kNoEvict) == 0);
  CHECK(c.valid_bytes() == 4 * 64);
  // Units 2, 3 held; 4, 5 not.
  CHECK(c.access(0x10000, kRows, 0b111100, 0b111100, 0, kNoEvict) == 0b1100);
  CHECK(c.valid_bytes() == 6 * 64);
  // A probe without a fill (write-through) neither allocates a missing group nor adds units.
  CHECK(c.access(0x20000, kRows, 0b1, 0, 0, kNoEvict) == 0);
  CHECK(c.groups() == 1);
  CHECK(c.access(0x10000, kRows, 0b11000000, 0, 0, kNoEvict) == 0);
  CHECK(c.valid_bytes() == 6 * 64);
}

TEST_CASE("a group cache evicts whole groups least recently used first once its units exceed the capacity") {
  GroupCache c(8 * 64, 16);  // 8 units
  std::vector<std::tuple<std::uint64_t, std::uint64_t>> evicted;  // key, dirty units
  const auto on_evict = [&](std::uint64_t key, const GroupShape&, std::uint64_t dirty) { evicted.emplace_back(key, dirty); };
  c.access(0x1000, kRows, 0b1111, 0b1111, 0b0011, on_evict);  // A: 4 units, 2 dirty
  c.access(0x2000, kRows, 0b11, 0b11, 0, on_evict);           // B: 2 units
  c.access(0x1000, kRows, 0b1, 0, 0, on_evict);               // A used again: B is now the oldest
  CHECK(evicted.empty());
  c.access(0x3000, kRows, 0b111, 0b111, 0, on_evict);  // C: 9 units > 8, B (clean) goes
  CHECK(c.groups() == 2);
  CHECK(c.valid_bytes() == 7 * 64);
  CHECK(evicted.empty());                                // B had nothing dirty to write back
  CHECK(c.access(0x2000, kRows, 0b11, 0, 0, on_evict) == 0);  // B is gone
  c.access(0x4000, kRows, 0b11, 0b11, 0, on_evict);  // D: 9 units, A (dirty, the oldest) goes
  REQUIRE(evicted.size() == 1);
  CHECK(std::get<0>(evicted[0]) == 0x1000);
  CHECK(std::get<1>(evicted[0]) == 0b0011);
  CHECK(c.valid_bytes() == 5 * 64);
}

TEST_CASE("a group cache out of group slots evicts the least recently used group") {
  GroupCache c(1 << 20, 2);  // room for many units, two groups
  std::vector<std::uint64_t> evicted;
  const auto on_evict = [&](std::uint64_t key, const GroupShape&, std::uint64_t) { evicted.push_back(key); };
  for (std::uint64_t k = 1; k <= 5; ++k) c.access(k * 0x1000, kRows, 1, 1, 1, on_evict);
  CHECK(evicted == std::vector<std::uint64_t>{0x1000, 0x2000, 0x3000});
  CHECK(c.groups() == 2);
  // The table still finds the survivors after the deletions shifted its probe runs.
  CHECK(c.access(0x4000, kRows, 1, 0, 0, on_evict) == 1);
  CHECK(c.access(0x5000, kRows, 1, 0, 0, on_evict) == 1);
}

TEST_CASE("a group cache's flush reports every dirty group and leaves it empty") {
  GroupCache c(1 << 16, 64);
  for (std::uint64_t k = 0; k < 40; ++k) c.access(k * 4096, kRows, 0b11, 0b11, k % 2 ? 0b10 : 0, kNoEvict);
  std::uint64_t dirty_groups = 0, dirty_units = 0;
  c.flush_and_invalidate([&](std::uint64_t key, const GroupShape&, std::uint64_t dirty) {
    CHECK(key / 4096 % 2 == 1);
    ++dirty_groups;
    dirty_units += static_cast<std::uint64_t>(__builtin_popcountll(dirty));
  });
  CHECK(dirty_groups == 20);
  CHECK(dirty_units == 20);
  CHECK(c.groups() == 0);
  CHECK(c.valid_bytes() == 0);
  CHECK(c.access(4096, kRows, 0b11, 0, 0, kNoEvict) == 0);
}

TEST_CASE("a group cache gives each evicted group back with its own shape") {
  // Three shapes (the group keeps its shape as an index in its key's top bits): flushed dirty,
  // each group comes back with the shape it was made with, whatever the order of first use.
  const GroupShape shapes[] = {kRows, {4096, 64}, {32768, 8}};
  GroupCache c(1 << 16, 64);
  for (std::uint64_t k = 0; k < 9; ++k) c.access((k + 1) << 20, shapes[(k * 2) % 3], 0b1, 0b1, 0b1, kNoEvict);
  std::uint64_t flushed = 0;
  c.flush_and_invalidate([&](std::uint64_t key, const GroupShape& shape, std::uint64_t dirty) {
    const GroupShape& made = shapes[((key >> 20) - 1) * 2 % 3];
    CHECK(shape.stride == made.stride);
    CHECK(shape.units_per_row == made.units_per_row);
    CHECK(dirty == 0b1);
    ++flushed;
  });
  CHECK(flushed == 9);
  // Keys are addresses below 2^48.
  CHECK_THROWS_AS(c.access(std::uint64_t{1} << 48, kRows, 0b1, 0b1, 0, kNoEvict), std::out_of_range);
}

TEST_CASE("a tile's rows fall into groups of 16 rows aligned on the row index") {
  // Rows 8..39 of one head: 256 B rows (4 units), 2 KiB apart; row 8 at 0x100000 + 8 x 2048.
  const RowSpan s{0x100000 + 8 * 2048, 256, 2048, 32, 8};
  std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> groups;  // key, units, hi
  MemoryPath::for_each_group(s, [&](std::uint64_t key, const GroupShape& shape, std::uint64_t units, std::uint64_t,
                                    std::uint64_t hi) {
    CHECK(shape.stride == 2048);
    CHECK(shape.units_per_row == 4);
    groups.emplace_back(key, units, hi);
  });
  REQUIRE(groups.size() == 3);
  // Rows 8..15 are the upper half of the group of rows 0..15 (units 32..63), 16..31 a whole group,
  // 32..39 the lower half of the group of rows 32..47.
  CHECK(std::get<0>(groups[0]) == 0x100000);
  CHECK(std::get<1>(groups[0]) == 0xffffffff00000000ull);
  CHECK(std::get<0>(groups[1]) == 0x100000 + 16 * 2048);
  CHECK(std::get<1>(groups[1]) == ~0ull);
  CHECK(std::get<0>(groups[2]) == 0x100000 + 32 * 2048);
  CHECK(std::get<1>(groups[2]) == 0xffffffffull);
  CHECK(std::get<2>(groups[0]) == ~0ull);  // whole-line rows
}

TEST_CASE("rows too wide for 16 per group form smaller groups and flat rows form 4 KiB chunks") {
  // fp32 rows of 512 B (8 units): 8 rows per group.
  std::vector<std::uint64_t> keys;
  MemoryPath::for_each_group(RowSpan{0x200000, 512, 16384, 16, 0},
                             [&](std::uint64_t key, const GroupShape& shape, std::uint64_t units, std::uint64_t, std::uint64_t) {
                               CHECK(shape.units_per_row == 8);
                               CHECK(units == ~0ull);
                               keys.push_back(key);
                             });
  CHECK(keys == std::vector<std::uint64_t>{0x200000, 0x200000 + 8 * 16384});
  // 32 fp32 values per row of a contiguous tensor (LSE), rows 40..71: bytes 160..288 of its chunk.
  std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t>> chunks;
  MemoryPath::for_each_group(RowSpan{0x300000 + 160, 4, 4, 32, 40},
                             [&](std::uint64_t key, const GroupShape& shape, std::uint64_t units, std::uint64_t lo,
                                 std::uint64_t hi) {
                               CHECK(shape.units_per_row == 64);
                               chunks.emplace_back(key, units, lo, hi);
                             });
  REQUIRE(chunks.size() == 1);
  CHECK(std::get<0>(chunks[0]) == 0x300000);
  CHECK(std::get<1>(chunks[0]) == 0b11100);  // units 2, 3, 4 (bytes 128..319)
  CHECK(std::get<2>(chunks[0]) == 160);
  CHECK(std::get<3>(chunks[0]) == 288);
}

namespace {
// The contract of GroupCache written the plain way: a list, most recent first, searched linearly;
// with sets > 1 each unit's set is found from its address on every count.
class ListGroupCache {
 public:
  ListGroupCache(std::uint64_t capacity_units, std::size_t max_groups, std::uint32_t sets = 1,
                 std::uint64_t line_bytes = 128)
      : capacity_(capacity_units), max_(max_groups), sets_(sets), line_(line_bytes) {}
  // As GroupCache::access; evicted dirty groups are appended to `evicted` as (key, dirty units).
  std::uint64_t access(std::uint64_t key, const GroupShape& shape, std::uint64_t mask, std::uint64_t fill,
                       std::uint64_t dirty, std::vector<std::pair<std::uint64_t, std::uint64_t>>& evicted) {
    auto it = std::find_if(groups_.begin(), groups_.end(), [&](const Entry& e) { return e.key == key; });
    if (it == groups_.end()) {
      if (fill == 0) return 0;
      if (groups_.size() == max_) evict_last(groups_.end(), evicted);
      groups_.push_front(Entry{key, shape, 0, 0});
    } else {
      groups_.splice(groups_.begin(), groups_, it);
    }
    Entry& e = groups_.front();
    const std::uint64_t hits = e.valid & mask;
    const std::uint64_t before = e.valid;
    e.valid |= fill;
    e.dirty |= dirty & e.valid;
    const std::uint64_t added = e.valid & ~before;
    for (std::uint32_t k = 0; sets_ > 1 && k < sets_; ++k) {
      // The least recently used group (not the one accessed) with units in set k, while set k, to
      // which the access added units, is over its share.
      Entry added_units = e;
      added_units.valid = added;
      if (in_set(added_units, k) == 0) continue;
      while (units_in_set(k) > std::max<std::uint64_t>(1, capacity_ / sets_)) {
        auto victim = groups_.end();
        for (auto j = std::next(groups_.begin()); j != groups_.end(); ++j) {
          if (in_set(*j, k)) victim = j;
        }
        if (victim == groups_.end()) break;
        if (victim->dirty) evicted.emplace_back(victim->key, victim->dirty);
        groups_.erase(victim);
      }
    }
    while (units() > capacity_ && groups_.size() > 1) evict_last(groups_.begin(), evicted);
    return hits;
  }

 private:
  struct Entry {
    std::uint64_t key;
    GroupShape shape;
    std::uint64_t valid, dirty;
  };
  // Entry e's valid units in set k: unit u lies at key + (u / per_row) stride + (u % per_row) 64,
  // its set is (address / line) mod sets.
  std::uint64_t in_set(const Entry& e, std::uint32_t k) const {
    std::uint64_t n = 0;
    for (std::uint32_t u = 0; u < 64; ++u) {
      const std::uint64_t address =
          e.key + (u / e.shape.units_per_row) * e.shape.stride + (u % e.shape.units_per_row) * 64;
      n += (e.valid >> u & 1) && address / line_ % sets_ == k;
    }
    return n;
  }
  std::uint64_t units_in_set(std::uint32_t k) const {
    std::uint64_t n = 0;
    for (const Entry& e : groups_) n += in_set(e, k);
    return n;
  }
  std::uint64_t units() const {
    std::uint64_t n = 0;
    for (const Entry& e : groups_) n += count_units(e.valid);
    return n;
  }
  // Evicts the least recently used group other than `keep` (end(): none kept).
  void evict_last(std::list<Entry>::iterator keep, std::vector<std::pair<std::uint64_t, std::uint64_t>>& evicted) {
    auto victim = std::prev(groups_.end());
    if (victim == keep) {
      if (victim == groups_.begin()) return;
      victim = std::prev(victim);
    }
    if (victim->dirty) evicted.emplace_back(victim->key, victim->dirty);
    groups_.erase(victim);
  }
  std::uint64_t capacity_;
  std::size_t max_;
  std::uint32_t sets_;
  std::uint64_t line_;
  std::list<Entry> groups_;
};
}  // namespace

TEST_CASE("a group cache behaves as a plain LRU list of groups over a long random run") {
  // Few groups and a table of few slots, so that probe runs collide and evictions shift them (the
  // miss's insert reuses the slot its probe ended on unless an eviction moved the table).
  std::mt19937_64 random(27);
  for (const std::uint32_t max_groups : {2u, 3u, 8u, 40u}) {
    CAPTURE(max_groups);
    const std::uint64_t capacity_units = 24 * max_groups;  // the units bind before the slots, or not
    GroupCache cache(capacity_units * 64, max_groups);
    ListGroupCache reference(capacity_units, max_groups);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> got, expected;
    const auto on_evict = [&](std::uint64_t key, const GroupShape&, std::uint64_t dirty) { got.emplace_back(key, dirty); };
    for (int i = 0; i < 20000; ++i) {
      const std::uint64_t key = 4096 * (random() % (3 * max_groups + 5));
      const std::uint64_t mask = random() & random();  // about a quarter of the units
      const int kind = static_cast<int>(random() % 4);  // read, write, probe without allocation, write-through
      const std::uint64_t fill = kind <= 1 ? mask : 0, dirty = kind == 1 ? mask : 0;
      const std::uint64_t hits = cache.access(key, kRows, mask, fill, dirty, on_evict);
      REQUIRE(hits == reference.access(key, kRows, mask, fill, dirty, expected));
      REQUIRE(got == expected);
    }
  }
}

TEST_CASE("a group cache of few sets gives each set its share as a cache indexed by line modulo sets") {
  // 4 sets of 128 B lines, 64 units (16 per set). kRows's rows are 2 KiB apart: 16 lines, a
  // multiple of 4, so every row's two lines fall in sets 0 and 1, and a group of 16 rows fills
  // them with 32 units each: more than their 16. Fully associative, the same 64 units would fit.
  GroupCache flat(64 * 64, 16);
  GroupCache sets(64 * 64, 16, 4, 128);
  std::uint64_t evicted = 0;
  const auto count = [&](std::uint64_t, const GroupShape&, std::uint64_t) { ++evicted; };
  const std::uint64_t eight_rows = 0xffffffffull;  // 8 rows of 4 units: 16 units in set 0, 16 in set 1
  CHECK(sets.access(0x10000, kRows, eight_rows, eight_rows, eight_rows, count) == 0);
  CHECK(sets.valid_bytes_in_set(0) == 16 * 64);
  CHECK(sets.valid_bytes_in_set(1) == 16 * 64);
  CHECK(sets.valid_bytes_in_set(2) == 0);
  CHECK(evicted == 0);
  // A second such group: sets 0 and 1 are over their share, so the first group goes.
  CHECK(sets.access(0x90000, kRows, eight_rows, eight_rows, 0, count) == 0);
  CHECK(evicted == 1);
  CHECK(sets.access(0x10000, kRows, eight_rows, 0, 0, count) == 0);
  CHECK(flat.access(0x10000, kRows, eight_rows, eight_rows, 0, kNoEvict) == 0);
  CHECK(flat.access(0x90000, kRows, eight_rows, eight_rows, 0, kNoEvict) == 0);
  CHECK(flat.access(0x10000, kRows, eight_rows, 0, 0, kNoEvict) == eight_rows);
  // Rows 256 B apart (contiguous) spread over the four sets: two groups of 32 units fit.
  const GroupShape contiguous{256, 4};
  GroupCache spread(64 * 64, 16, 4, 128);
  CHECK(spread.access(0x20000, contiguous, eight_rows, eight_rows, 0, kNoEvict) == 0);
  CHECK(spread.access(0x20800, contiguous, eight_rows, eight_rows, 0, kNoEvict) == 0);
  for (std::uint32_t k = 0; k < 4; ++k) CHECK(spread.valid_bytes_in_set(k) == 16 * 64);
  CHECK(spread.access(0x20000, contiguous, eight_rows, 0, 0, kNoEvict) == eight_rows);
  CHECK_THROWS_AS(GroupCache(64 * 64, 16, 4, 96), std::invalid_argument);
}

TEST_CASE("a group cache of few sets behaves as a plain LRU list with per-set shares over a long random run") {
  // Keys of two shapes (rows 2 KiB apart, two sets; contiguous rows, all four), some keys 64 B off
  // a line, so that the sets' memo of each shape and key offset, and the per-unit path, are used.
  // Also 128 sets of 64 B lines: more sets than a word has bits.
  std::mt19937_64 random(30);
  const GroupShape strided{2048, 4}, contiguous{256, 4};
  struct Geometry {
    std::uint32_t max_groups, sets, line;
  };
  for (const Geometry& geometry : {Geometry{3, 4, 128}, Geometry{8, 4, 128}, Geometry{40, 4, 128}, Geometry{40, 128, 64}}) {
    const std::uint32_t max_groups = geometry.max_groups;
    CAPTURE(max_groups);
    CAPTURE(geometry.sets);
    const std::uint64_t capacity_units = 24 * max_groups;
    GroupCache cache(capacity_units * 64, max_groups, geometry.sets, geometry.line);
    ListGroupCache reference(capacity_units, max_groups, geometry.sets, geometry.line);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> got, expected;
    const auto on_evict = [&](std::uint64_t key, const GroupShape&, std::uint64_t dirty) { got.emplace_back(key, dirty); };
    for (int i = 0; i < 6000; ++i) {
      const std::uint64_t n = random() % (3 * max_groups + 5);
      const std::uint64_t key = 0x100000 * n + (n % 3 == 0 ? 64 : 0) + (n % 5) * 128;
      const GroupShape& shape = n % 2 ? strided : contiguous;  // a key keeps its shape
      const std::uint64_t mask = random() & random();
      const int kind = static_cast<int>(random() % 4);
      const std::uint64_t fill = kind <= 1 ? mask : 0, dirty = kind == 1 ? mask : 0;
      const std::uint64_t hits = cache.access(key, shape, mask, fill, dirty, on_evict);
      REQUIRE(hits == reference.access(key, shape, mask, fill, dirty, expected));
      REQUIRE(got == expected);
    }
  }
}

TEST_CASE("a small group cache of few sets gives each set its share as a cache indexed by line modulo sets") {
  // The hand-computed case of the group cache above: 4 sets of 128 B lines, 64 units (16 per set);
  // eight kRows rows fill sets 0 and 1 with 16 units each, so a second such group evicts the first.
  GroupSetMasks masks(4, 128);
  SmallGroupCache c(64 * 64, 16, 4);
  const std::uint64_t eight_rows = 0xffffffffull;
  CHECK(c.access(0x10000, kRows, eight_rows, eight_rows, masks) == 0);
  CHECK(c.valid_bytes_in_set(0) == 16 * 64);
  CHECK(c.valid_bytes_in_set(1) == 16 * 64);
  CHECK(c.valid_bytes_in_set(2) == 0);
  CHECK(c.access(0x10000, kRows, 0b11, 0, masks) == 0b11);  // a probe: held
  CHECK(c.access(0x90000, kRows, eight_rows, eight_rows, masks) == 0);
  CHECK(c.groups() == 1);
  CHECK(c.access(0x10000, kRows, eight_rows, 0, masks) == 0);  // evicted; a probe does not allocate
  CHECK(c.groups() == 1);
  // Rows 256 B apart spread over the four sets: two groups of 32 units fit.
  const GroupShape contiguous{256, 4};
  SmallGroupCache spread(64 * 64, 16, 4);
  CHECK(spread.access(0x20000, contiguous, eight_rows, eight_rows, masks) == 0);
  CHECK(spread.access(0x20800, contiguous, eight_rows, eight_rows, masks) == 0);
  for (std::uint32_t k = 0; k < 4; ++k) CHECK(spread.valid_bytes_in_set(k) == 16 * 64);
  CHECK(spread.access(0x20000, contiguous, eight_rows, 0, masks) == eight_rows);
  spread.invalidate();
  CHECK(spread.valid_bytes() == 0);
  CHECK(spread.access(0x20000, contiguous, eight_rows, 0, masks) == 0);
  CHECK_THROWS_AS(SmallGroupCache(1 << 20, SmallGroupCache::kMaxGroups + 1, 4), std::invalid_argument);
  CHECK_THROWS_AS(GroupSetMasks(4, 96), std::invalid_argument);
  CHECK_THROWS_AS(GroupSetMasks(0, 128), std::invalid_argument);
}

TEST_CASE("a small group cache gives a group cache's outcome access for access over a long random run") {
  // Reads and probes only (an L1 allocates on reads and holds nothing dirty). Keys of two shapes,
  // some 64 B off a line (their sets found on every insert); 128 sets of 64 B lines, more sets than
  // a word has bits; up to the most groups a small cache holds.
  std::mt19937_64 random(38);
  const GroupShape strided{2048, 4}, contiguous{256, 4};
  struct Geometry {
    std::uint32_t max_groups, sets, line;
  };
  for (const Geometry& g : {Geometry{2, 4, 128}, Geometry{8, 4, 128}, Geometry{32, 4, 128},
                            Geometry{SmallGroupCache::kMaxGroups, 4, 128}, Geometry{40, 128, 64}}) {
    CAPTURE(g.max_groups);
    CAPTURE(g.sets);
    const std::uint64_t capacity_units = 24 * g.max_groups;
    GroupSetMasks masks(g.sets, g.line);
    SmallGroupCache small(capacity_units * 64, g.max_groups, g.sets);
    GroupCache cache(capacity_units * 64, g.max_groups, g.sets, g.line);
    ListGroupCache reference(capacity_units, g.max_groups, g.sets, g.line);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> evicted;
    for (int i = 0; i < 6000; ++i) {
      const std::uint64_t n = random() % (3 * g.max_groups + 5);
      const std::uint64_t key = 0x100000 * n + (n % 3 == 0 ? 64 : 0) + (n % 5) * 128;
      const GroupShape& shape = n % 2 ? strided : contiguous;  // a key keeps its shape
      const std::uint64_t mask = random() & random();
      const std::uint64_t fill = random() % 4 ? mask : 0;  // a read, or a probe without allocation
      const std::uint64_t hits = small.access(key, shape, mask, fill, masks);
      REQUIRE(hits == reference.access(key, shape, mask, fill, 0, evicted));
      REQUIRE(hits == cache.access(key, shape, mask, fill, 0, kNoEvict));
      REQUIRE(small.groups() == cache.groups());
      REQUIRE(small.valid_bytes() == cache.valid_bytes());
      for (std::uint32_t k = 0; k < g.sets; ++k) REQUIRE(small.valid_bytes_in_set(k) == cache.valid_bytes_in_set(k));
    }
    CHECK(evicted.empty());
  }
}

namespace {
// Hits of `rounds` cyclic passes over `groups` whole groups (64 units each, 4 KiB apart) through
// `c`; the first pass (compulsory misses) not counted. `after(g)` runs after each access to group g.
template <class After = void (*)(std::uint64_t)>
std::uint64_t cyclic_hits(GroupCache& c, std::uint64_t groups, int rounds, After after = [](std::uint64_t) {}) {
  const auto ignore = [](std::uint64_t, const GroupShape&, std::uint64_t) {};
  std::uint64_t hits = 0;
  for (int r = 0; r < rounds; ++r) {
    for (std::uint64_t g = 0; g < groups; ++g) {
      const std::uint64_t h = c.access(g * 4096, GroupShape{4096, 64}, ~0ull, ~0ull, 0, ignore);
      if (r > 0) hits += h == ~0ull;
      after(g);
    }
  }
  return hits;
}
}  // namespace

TEST_CASE("a group cache with sampled victims keeps part of a cyclic set larger than it") {
  // 256 groups of capacity, 280 in a cycle. Strict LRU evicts each group just before its reuse: no
  // hits. A victim that is the least recent of 16 groups drawn from 256 is seldom the least recent
  // of all, so many groups outlive a pass, as lines in a 16-way cache's lighter sets do.
  constexpr std::uint64_t kCapacity = 256 * 4096;
  GroupCache lru(kCapacity, 1024), sampled(kCapacity, 1024, 1, 128, 16);
  CHECK(cyclic_hits(lru, 280, 20) == 0);
  const std::uint64_t hits = cyclic_hits(sampled, 280, 20);
  CAPTURE(hits);
  CHECK(hits > 19 * 280 / 10);  // more than a tenth of the reuses
  CHECK(hits < 19 * 280);
  // A set that fits is all hits either way: no victim is ever needed.
  GroupCache fits(kCapacity, 1024, 1, 128, 16);
  CHECK(cyclic_hits(fits, 256, 5) == 4 * 256);
  // Draws far outnumbering the residents find the least recent one: strict LRU again.
  GroupCache many(kCapacity, 1024, 1, 128, 65536);
  CHECK(cyclic_hits(many, 280, 5) == 0);
  // Deterministic, and invalidate() restarts the draws: the same run gives the same hits.
  GroupCache again(kCapacity, 1024, 1, 128, 16);
  CHECK(cyclic_hits(again, 280, 20) == hits);
  again.invalidate();
  CHECK(cyclic_hits(again, 280, 20) == hits);
  // Renumbering the access stamps (as access() does before the clock would wrap) changes nothing.
  GroupCache renumbered(kCapacity, 1024, 1, 128, 16);
  CHECK(cyclic_hits(renumbered, 280, 20, [&](std::uint64_t g) {
          if (g % 7 == 0) renumbered.renumber_stamps();
        }) == hits);
  // Draws are over one set only.
  CHECK_THROWS_AS(GroupCache(kCapacity, 1024, 4, 128, 16), std::invalid_argument);
}

TEST_CASE("a group cache with sampled victims flushes its dirty groups most recently used first") {
  GroupCache c(64 * 4096, 256, 1, 128, 16);
  for (std::uint64_t key : {0x1000, 0x2000, 0x3000}) c.access(key, kRows, 0b11, 0b11, 0b11, kNoEvict);
  c.access(0x1000, kRows, 0b1100, 0b1100, 0, kNoEvict);  // a read: 0x1000 most recent, still dirty
  std::vector<std::pair<std::uint64_t, std::uint64_t>> flushed;
  c.flush_and_invalidate([&](std::uint64_t key, const GroupShape&, std::uint64_t dirty) { flushed.emplace_back(key, dirty); });
  CHECK(flushed == std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0x1000, 0b11}, {0x3000, 0b11}, {0x2000, 0b11}});
  CHECK(c.groups() == 0);
  CHECK(c.valid_bytes() == 0);
}
