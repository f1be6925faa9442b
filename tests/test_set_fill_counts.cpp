// The set a line falls in without a cache's tags (SetIndexMap, against SetAssocCache itself), the
// evictions a set-associative cache makes by number (SetFillCounts, by hand), and the approximate
// mode's group cache evicting by them (GroupCache::set_fills, by hand).
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "sim/cache.h"
#include "sim/group_cache.h"
#include "sim/memory_path.h"
#include "sim/set_fill_counts.h"
#include "sim/set_index_map.h"
#include "workload_fixture.h"

using namespace attnsim::sim;

namespace {
// Lines drawn over the tag range of 64 GiB of 128 B lines (deterministic).
std::vector<std::uint64_t> some_lines(std::uint64_t limit) {
  std::mt19937_64 rng(7);
  std::vector<std::uint64_t> lines;
  for (int i = 0; i < 20000; ++i) lines.push_back(rng() % limit);
  for (std::uint64_t l = 0; l < 4096; ++l) lines.push_back(l);  // a contiguous run across tags too
  return lines;
}
// The map's set of each line is the cache's, and the lines to the next tag follow it set by set.
void check_map(const SetIndexMap& map, const SetAssocCache& cache, std::uint64_t limit) {
  for (std::uint64_t l : some_lines(limit)) {
    REQUIRE(map.set_of(l) == cache.set_of(l));
    const std::uint64_t n = map.lines_to_next_tag(l);
    REQUIRE(n >= 1);
    REQUIRE(n <= map.sets());
    if (n > 1) REQUIRE(cache.set_of(l + 1) == (cache.set_of(l) + 1) % map.sets());
    REQUIRE(cache.set_of(l + n - 1) == (cache.set_of(l) + n - 1) % map.sets());
  }
}
const auto kNoEvict = [](std::uint64_t, const GroupShape&, std::uint64_t) {};
const GroupShape kLine{128, 2};  // one 128 B line per row
}  // namespace

TEST_CASE("a set index map puts every line in the set the set-associative cache does") {
  const std::uint64_t limit = std::uint64_t{1} << 29;
  SUBCASE("hashed with a power of two of sets (an MI300X L2 of 4 MiB in 16 ways of 128 B)") {
    const SetAssocCache cache(4 << 20, 16, 128, WritePolicy::write_back, 1, SetIndex::hashed);
    const SetIndexMap map(cache.sets(), SetIndex::hashed, 1, SetAssocCache::kDefaultIndexPrime);
    check_map(map, cache, limit);
  }
  SUBCASE("hashed with sets not a power of two (an H100 L2 partition of 25 MiB) and another multiplier") {
    const SetAssocCache cache(25 << 20, 16, 128, WritePolicy::write_back, 1, SetIndex::hashed, 0, ~std::uint64_t{0},
                              668265263);
    CHECK(cache.sets() == 12800);
    const SetIndexMap map(12800, SetIndex::hashed, 1, 668265263);
    check_map(map, cache, limit);
  }
  SUBCASE("hashed as a granular cache of 64 B lines in pairs once split (a MALL)") {
    SetAssocCache cache(2 << 20, 16, 64, WritePolicy::write_through, 2, SetIndex::hashed);
    cache.split();
    const SetIndexMap map(2048, SetIndex::hashed, 2, SetAssocCache::kDefaultIndexPrime);
    check_map(map, cache, limit);
  }
  SUBCASE("modulo") {
    const SetAssocCache cache(96 << 10, 4, 128, WritePolicy::write_back);
    const SetIndexMap map(192, SetIndex::modulo, 1, SetAssocCache::kDefaultIndexPrime);
    check_map(map, cache, limit);
  }
  CHECK_THROWS_AS(SetIndexMap(2048, SetIndex::hashed, 3, 7), std::invalid_argument);
  CHECK_THROWS_AS(SetIndexMap(2048, SetIndex::hashed, 1, 8), std::invalid_argument);
  CHECK_THROWS_AS(SetIndexMap(0, SetIndex::modulo, 1, 7), std::invalid_argument);
}

TEST_CASE("set fill counts: a fill evicts once its set has had as many fills as ways") {
  // 4 sets x 2 ways, line mod 4.
  SetFillCounts f(SetIndexMap(4, SetIndex::modulo, 1, 7), 2);
  CHECK(f.fill(0) == 0);
  CHECK(f.fill(4) == 0);
  CHECK(f.fill(8) == 1);   // a third line into set 0
  CHECK(f.fill(12) == 1);  // and a fourth: set 0 stays full
  CHECK(f.fill(1) == 0);
  CHECK_FALSE(f.all_full());
  for (std::uint64_t l : {5, 2, 6, 3}) CHECK(f.fill(l) == 0);
  CHECK_FALSE(f.all_full());  // set 3 has one line
  CHECK(f.fill(7) == 0);
  CHECK(f.all_full());
  f.clear();
  CHECK_FALSE(f.all_full());
  CHECK(f.fill(8) == 0);
  CHECK_THROWS_AS(SetFillCounts(SetIndexMap(4, SetIndex::modulo, 1, 7), 0), std::invalid_argument);
}

TEST_CASE("a group cache with set fill counts evicts when a set is full long before its capacity") {
  // A cache of 4 sets x 2 ways of 128 B lines (1 KiB), groups of one line, least recently used
  // first (no sampling).
  const auto with_fills = [] {
    GroupCache c(1024, 8, 1, 128, 0);
    c.set_fills(SetIndexMap(4, SetIndex::modulo, 1, 7), 2);
    return c;
  };
  SUBCASE("three lines of one set: the first goes as in the 2-way set") {
    GroupCache c = with_fills();
    for (std::uint64_t line : {0, 4, 8}) c.access(line * 128, kLine, 0b11, 0b11, 0, kNoEvict);
    CHECK(c.valid_bytes() == 2 * 128);
    CHECK(c.access(0, kLine, 0b11, 0, 0, kNoEvict) == 0);        // line 0 missed
    CHECK(c.access(4 * 128, kLine, 0b11, 0, 0, kNoEvict) == 0b11);  // line 4 held
    // Without the counts the same three lines all fit the 8 lines of capacity.
    GroupCache plain(1024, 8, 1, 128, 0);
    for (std::uint64_t line : {0, 4, 8}) plain.access(line * 128, kLine, 0b11, 0b11, 0, kNoEvict);
    CHECK(plain.access(0, kLine, 0b11, 0, 0, kNoEvict) == 0b11);
  }
  SUBCASE("every set full: each new line evicts one line as the 2-way cache does (the victim the least recent line of all where that cache takes its set's)") {
    GroupCache c = with_fills();
    for (std::uint64_t line = 0; line < 8; ++line) c.access(line * 128, kLine, 0b11, 0b11, 0, kNoEvict);
    CHECK(c.valid_bytes() == 8 * 128);
    c.access(9 * 128, kLine, 0b11, 0b11, 0, kNoEvict);  // set 1 is full: line 0, the least recent, goes
    CHECK(c.valid_bytes() == 8 * 128);
    CHECK(c.access(0, kLine, 0b11, 0, 0, kNoEvict) == 0);
    CHECK(c.access(1 * 128, kLine, 0b11, 0, 0, kNoEvict) == 0b11);
  }
  SUBCASE("a line filled half and then whole is one fill") {
    GroupCache c = with_fills();
    c.access(0, kLine, 0b01, 0b01, 0, kNoEvict);
    c.access(0, kLine, 0b10, 0b10, 0, kNoEvict);
    c.access(4 * 128, kLine, 0b11, 0b11, 0, kNoEvict);
    CHECK(c.access(0, kLine, 0b11, 0, 0, kNoEvict) == 0b11);  // set 0 had two fills: nothing evicted
  }
  SUBCASE("emptied the counts start again") {
    GroupCache c = with_fills();
    for (std::uint64_t line : {0, 4}) c.access(line * 128, kLine, 0b11, 0b11, 0, kNoEvict);
    c.invalidate();
    for (std::uint64_t line : {8, 12}) c.access(line * 128, kLine, 0b11, 0b11, 0, kNoEvict);
    CHECK(c.access(8 * 128, kLine, 0b11, 0, 0, kNoEvict) == 0b11);
  }
  GroupCache few_sets(1024, 8, 2, 128, 0);
  CHECK_THROWS_AS(few_sets.set_fills(SetIndexMap(4, SetIndex::modulo, 1, 7), 2), std::invalid_argument);
}

TEST_CASE("the approximate L2 counts fills in the exact L2's sets and the MALL goes by capacity") {
  for (const char* name : {"mi300x", "mi355x", "h100", "h200"}) {
    const std::string gpu_name = name;
    CAPTURE(gpu_name);
    const attnsim::arch::GpuSpec& gpu = attnsim::test::gpu(name);
    const GroupCacheGeometry l2 = MemoryPath::approximate_l2(gpu);
    REQUIRE(l2.fill_sets.has_value());
    // One set per ways x 128 B of each L2 instance (an H100 partition: 25 MiB / 2 KiB = 12,800).
    CHECK(l2.fill_sets->map.sets() == gpu.l2_instance_bytes() / (std::uint64_t{gpu.l2.ways} * 128));
    CHECK(l2.fill_sets->ways == gpu.l2.ways);
    const SetAssocCache exact(gpu.l2_instance_bytes(), gpu.l2.ways, 128, WritePolicy::write_back, 1, SetIndex::hashed, 0,
                              ~std::uint64_t{0}, gpu.l2.index_prime);
    check_map(l2.fill_sets->map, exact, std::uint64_t{1} << 29);
    if (gpu.mall.present) CHECK_FALSE(MemoryPath::approximate_mall(gpu).fill_sets.has_value());
  }
  CHECK(MemoryPath::approximate_l2(attnsim::test::gpu("h100")).fill_sets->map.sets() == 12800);
}
