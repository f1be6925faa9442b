// Cache tag state: hits, misses and write-backs exactly as an LRU of that geometry must give them.
#include <doctest/doctest.h>

#include <optional>
#include <stdexcept>
#include <vector>

#include "sim/cache.h"

using namespace attnsim::sim;

namespace {
struct Log {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> misses;  // (address, lines)
  std::vector<std::uint64_t> writebacks;
};
ProbeResult run(SetAssocCache& c, std::uint64_t line, bool write, Log& log, std::uint64_t lines = 1) {
  return c.access(line * c.line_bytes(), lines * c.line_bytes(), write,
                  [&](std::uint64_t a, std::uint64_t n) { log.misses.emplace_back(a, n); },
                  [&](std::uint64_t a) { log.writebacks.push_back(a); });
}
}  // namespace

TEST_CASE("2 sets x 2 ways: LRU by hand") {
  SetAssocCache c(256, 2, 64, WritePolicy::write_back);
  REQUIRE(c.sets() == 2);
  Log log;
  // Even lines all map to set 0: 0, 2, 0, 4, 0, 2 -> miss, miss, hit, miss (evicts 2), hit, miss (evicts 4).
  std::vector<bool> hits;
  for (std::uint64_t l : {0, 2, 0, 4, 0, 2}) hits.push_back(run(c, l, false, log).hits == 1);
  CHECK(hits == std::vector<bool>{false, false, true, false, true, false});
  CHECK(c.contains(0));
  CHECK(c.contains(2 * 64));
  CHECK_FALSE(c.contains(4 * 64));
  // Three lines cycling through two ways never hit.
  SetAssocCache t(256, 2, 64, WritePolicy::write_back);
  std::uint64_t h = 0;
  for (std::uint64_t l : {0, 2, 4, 0, 2, 4, 0}) h += run(t, l, false, log).hits;
  CHECK(h == 0);
}

TEST_CASE("MI300X L2 geometry: a 4 MiB stream fits and one more line thrashes one set") {
  SetAssocCache c(4 << 20, 16, 128, WritePolicy::write_back);
  CHECK(c.sets() == 2048);
  auto pass = [&](std::uint64_t bytes) {
    return c.access(0, bytes, false, [](std::uint64_t, std::uint64_t) {}, [](std::uint64_t) {});
  };
  CHECK(pass(4 << 20).misses == 32768);
  const ProbeResult again = pass(4 << 20);
  CHECK(again.hits == 32768);
  CHECK(again.misses == 0);
  c.invalidate();
  // 32769 lines: set 0 holds 17 of them (lines 0, 2048, ..., 32768) in 16 ways, so it misses every
  // time in a cyclic stream; every other set holds 16 and hits.
  pass((4 << 20) + 128);
  const ProbeResult second = pass((4 << 20) + 128);
  CHECK(second.misses == 17);
  CHECK(second.hits == 32769 - 17);
}

TEST_CASE("write-back: dirty victims and flush") {
  SetAssocCache c(128, 2, 64, WritePolicy::write_back);  // one set, two ways
  Log log;
  CHECK(run(c, 0, true, log).misses == 1);  // write-allocate, no fill
  run(c, 1, true, log);
  const ProbeResult r = run(c, 2, false, log);  // evicts line 0, dirty
  CHECK(r.writebacks == 1);
  REQUIRE(log.writebacks.size() == 1);
  CHECK(log.writebacks[0] == 0);
  log.writebacks.clear();
  CHECK(c.flush([&](std::uint64_t a) { log.writebacks.push_back(a); }) == 1);
  CHECK(log.writebacks == std::vector<std::uint64_t>{64});
  CHECK(c.flush([](std::uint64_t) {}) == 0);  // now clean
  CHECK(c.contains(64));                       // flush keeps the lines
}

TEST_CASE("misses are reported as runs of consecutive lines") {
  SetAssocCache c(64 * 1024, 4, 64, WritePolicy::write_back);
  Log log;
  run(c, 3, false, log, 3);  // lines 3, 4, 5
  log.misses.clear();
  const ProbeResult r = run(c, 0, false, log, 10);
  CHECK(r.hits == 3);
  CHECK(r.misses == 7);
  REQUIRE(log.misses.size() == 2);
  CHECK(log.misses[0] == std::make_pair<std::uint64_t, std::uint64_t>(0, 3));
  CHECK(log.misses[1] == std::make_pair<std::uint64_t, std::uint64_t>(6 * 64, 4));
}

TEST_CASE("write-through: writes always reach the next level and never allocate") {
  SetAssocCache c(64 * 1024, 4, 64, WritePolicy::write_through);
  Log log;
  run(c, 0, false, log);  // read allocates
  log.misses.clear();
  const ProbeResult hit = run(c, 0, true, log);
  CHECK(hit.hits == 1);
  CHECK(log.misses.size() == 1);  // forwarded anyway
  const ProbeResult miss = run(c, 9, true, log);
  CHECK(miss.misses == 1);
  CHECK_FALSE(c.contains(9 * 64));
  CHECK(c.flush([](std::uint64_t) {}) == 0);
}

TEST_CASE("non-power-of-two set counts (H100: 50 MiB / 16 ways / 128 B)") {
  SetAssocCache c(50ull << 20, 16, 128, WritePolicy::write_back);
  CHECK(c.sets() == 25600);
  Log log;
  run(c, 25600 * 3 + 7, false, log);
  CHECK(c.contains((25600ull * 3 + 7) * 128));
  CHECK_FALSE(c.contains(7 * 128));  // same set, other tag
}

TEST_CASE("a granular cache is the line cache it stands for: before and after split") {
  // 64 KiB, 4 ways, 64 B lines (256 sets), granules of 2 lines, under write-back so dirty victims
  // and the flush order are compared too. First every access covers whole granules; then the
  // cache is split and accesses are single lines.
  for (const auto& [policy, index] : {std::pair{WritePolicy::write_back, SetIndex::modulo},
                                     std::pair{WritePolicy::write_through, SetIndex::modulo},
                                     std::pair{WritePolicy::write_back, SetIndex::hashed},
                                     std::pair{WritePolicy::write_through, SetIndex::hashed}}) {
    SetAssocCache lines(64 << 10, 4, 64, policy, 1, index, 2), granules(64 << 10, 4, 64, policy, 2, index);
    CHECK(granules.granular());
    CHECK(granules.unit_bytes() == 128);
    CHECK(granules.state_bytes() * 2 == lines.state_bytes());
    std::uint64_t x = 99;
    const auto next = [&] {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      return x >> 33;
    };
    for (int i = 0; i < 20000; ++i) {
      const std::uint64_t granule = next() % 2048;  // 256 KiB: four times the cache
      const bool write = next() % 3 == 0;
      bool hit[2], evicted[2];
      std::uint64_t victim[2];
      for (int j = 0; j < 2; ++j) hit[j] = lines.access_line((2 * granule + j) * 64, write, evicted[j], victim[j]);
      bool g_evicted = false;
      std::uint64_t g_victim = 0;
      const bool g_hit = granules.access_line(granule * 128, write, g_evicted, g_victim);
      REQUIRE(hit[0] == g_hit);
      REQUIRE(hit[1] == g_hit);
      REQUIRE(evicted[0] == g_evicted);
      REQUIRE(evicted[1] == g_evicted);
      if (g_evicted) {
        CHECK(victim[0] == g_victim);
        CHECK(victim[1] == g_victim + 64);
      }
    }
    granules.split();
    CHECK_FALSE(granules.granular());
    CHECK(granules.state_bytes() == lines.state_bytes());
    for (int i = 0; i < 20000; ++i) {
      const std::uint64_t line = next() % 4096;
      const bool write = next() % 3 == 0;
      bool e1 = false, e2 = false;
      std::uint64_t v1 = 0, v2 = 0;
      REQUIRE(lines.access_line(line * 64, write, e1, v1) == granules.access_line(line * 64, write, e2, v2));
      REQUIRE(e1 == e2);
      if (e1) CHECK(v1 == v2);
    }
    std::vector<std::uint64_t> flushed_lines, flushed_granules;
    lines.flush([&](std::uint64_t a) { flushed_lines.push_back(a); });
    granules.flush([&](std::uint64_t a) { flushed_granules.push_back(a); });
    CHECK(flushed_lines == flushed_granules);
  }
}

TEST_CASE("a granular cache flushes line by line in the line cache's order") {
  SetAssocCache lines(4096, 2, 64, WritePolicy::write_back), granules(4096, 2, 64, WritePolicy::write_back, 2);
  bool e = false;
  std::uint64_t v = 0;
  for (std::uint64_t g : {0, 5, 17, 33, 2}) {
    lines.access_line(g * 128, true, e, v);
    lines.access_line(g * 128 + 64, true, e, v);
    granules.access_line(g * 128, true, e, v);
  }
  std::vector<std::uint64_t> a, b;
  CHECK(lines.flush([&](std::uint64_t x) { a.push_back(x); }) == 10);
  CHECK(granules.flush([&](std::uint64_t x) { b.push_back(x); }) == 10);
  CHECK(a == b);
}

// The hashed index displaces tag t's lines by (t x 2654435761) mod sets; 2654435761 = 1 mod 4, so
// with 4 sets the displacement is t mod 4.
TEST_CASE("hashed set index: lines a multiple of the sets apart spread over the sets") {
  Log log;
  // 4 sets x 2 ways. Lines 0, 4, 8, 12 have index 0 and tags 0..3.
  SetAssocCache modulo(512, 2, 64, WritePolicy::write_back, 1, SetIndex::modulo);
  SetAssocCache hashed(512, 2, 64, WritePolicy::write_back, 1, SetIndex::hashed);
  std::uint64_t modulo_hits = 0, hashed_hits = 0;
  for (std::uint64_t l : {0, 4, 8, 12, 0, 4, 8, 12}) {
    modulo_hits += run(modulo, l, false, log).hits;  // all in set 0: four lines cycle through two ways
    hashed_hits += run(hashed, l, false, log).hits;  // sets 0, 1, 2, 3: each stays
  }
  CHECK(modulo_hits == 0);
  CHECK(hashed_hits == 4);
  // Line 5 (index 1, tag 1) goes to set 2, where line 8 (index 0, tag 2) lives: two ways hold both.
  CHECK(run(hashed, 5, false, log).misses == 1);
  CHECK(run(hashed, 8, false, log).hits == 1);
}

TEST_CASE("hashed set index: another multiplier moves a tag's lines as (tag x multiplier) mod sets") {
  // Direct-mapped, 4 sets. Multiplier 3: tag 1 is displaced by 3, so line 4 (index 0, tag 1) goes
  // to set 3 and no longer meets line 1 (index 1, tag 0) in set 1, as it does under the default
  // (2654435761 = 1 mod 4, the test above); line 6 (index 2, tag 1) goes to set (2 + 3) mod 4 = 1.
  SetAssocCache c(256, 1, 64, WritePolicy::write_back, 1, SetIndex::hashed, 0, ~std::uint64_t{0}, 3);
  Log log;
  run(c, 1, true, log);
  run(c, 4, false, log);
  CHECK(log.writebacks.empty());
  CHECK(c.contains(64));
  CHECK(c.contains(4 * 64));
  run(c, 6, false, log);
  CHECK(log.writebacks == std::vector<std::uint64_t>{64});
  CHECK_FALSE(c.contains(64));
  CHECK(c.contains(4 * 64));
  // Even multipliers would reach only some displacements of a power-of-two set count.
  CHECK_THROWS_AS(SetAssocCache(256, 1, 64, WritePolicy::write_back, 1, SetIndex::hashed, 0, ~std::uint64_t{0}, 4),
                  std::invalid_argument);
  CHECK_THROWS_AS(SetAssocCache(256, 1, 64, WritePolicy::write_back, 1, SetIndex::hashed, 0, ~std::uint64_t{0},
                                std::uint64_t{1} << 32 | 1),
                  std::invalid_argument);
}

TEST_CASE("hashed set index: a dirty victim is written back at its own address") {
  // Direct-mapped, 4 sets: line 1 (index 1, tag 0) and line 4 (index 0, tag 1) share set 1.
  SetAssocCache c(256, 1, 64, WritePolicy::write_back, 1, SetIndex::hashed);
  Log log;
  run(c, 1, true, log);
  CHECK(c.contains(64));
  run(c, 4, false, log);
  CHECK(log.writebacks == std::vector<std::uint64_t>{64});
  CHECK(c.contains(4 * 64));
  CHECK_FALSE(c.contains(64));
  run(c, 6, true, log);  // index 2, tag 1 -> set 3
  std::vector<std::uint64_t> flushed;
  CHECK(c.flush([&](std::uint64_t a) { flushed.push_back(a); }) == 1);
  CHECK(flushed == std::vector<std::uint64_t>{6 * 64});
}

TEST_CASE("hashed set index: runs across tag boundaries probe as line by line does") {
  // 16 KiB, 4 ways, 128 B lines: 32 sets, so a tag changes every 4 KiB; runs of up to 40 lines
  // cross one or two tag boundaries.
  SetAssocCache runs(16 << 10, 4, 128, WritePolicy::write_back, 1, SetIndex::hashed);
  SetAssocCache lines(16 << 10, 4, 128, WritePolicy::write_back, 1, SetIndex::hashed);
  std::uint64_t x = 7;
  const auto next = [&] {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x >> 33;
  };
  Log a, b;
  for (int i = 0; i < 5000; ++i) {
    const std::uint64_t first = next() % 1024, count = 1 + next() % 40;
    const bool write = next() % 2 == 0;
    const ProbeResult r = run(runs, first, write, a, count);
    std::uint64_t hits = 0;
    for (std::uint64_t l = first; l < first + count; ++l) hits += run(lines, l, write, b).hits;
    REQUIRE(r.hits == hits);
  }
  CHECK(a.writebacks == b.writebacks);
  CHECK_FALSE(a.writebacks.empty());
}

namespace {
// A reference LRU cache written the plain way: per set, its lines from most to least recently
// used, a dirty flag each; modulo index, write-back. Returns hit or miss and any dirty victim.
struct ReferenceLru {
  std::uint64_t sets, ways;
  std::vector<std::vector<std::pair<std::uint64_t, bool>>> order;  // per set: (line, dirty), most recent first
  ReferenceLru(std::uint64_t sets_, std::uint64_t ways_) : sets(sets_), ways(ways_), order(sets_) {}
  bool access(std::uint64_t line, bool write, std::optional<std::uint64_t>& victim) {
    auto& o = order[line % sets];
    victim.reset();
    for (std::size_t i = 0; i < o.size(); ++i) {
      if (o[i].first != line) continue;
      const bool dirty = o[i].second || write;
      o.erase(o.begin() + static_cast<std::ptrdiff_t>(i));
      o.insert(o.begin(), {line, dirty});
      return true;
    }
    if (o.size() == ways) {
      if (o.back().second) victim = o.back().first;
      o.pop_back();
    }
    o.insert(o.begin(), {line, write});
    return false;
  }
};
}  // namespace

TEST_CASE("narrow and wide tag words: the same hits and victims as a plain LRU") {
  // 16 ways (the vector loops) and 6 ways (the scalar loops), whose recency is a nibble order, and
  // 32 ways, kept as ranks; each with tags in 16-bit words (the address limit fits them) and in
  // 32-bit words (no limit): every probe against the reference.
  for (const std::uint32_t ways : {16u, 6u, 32u}) {
    const std::uint64_t sets = 64, line = 64, size = sets * ways * line;
    SetAssocCache narrow(size, ways, static_cast<std::uint32_t>(line), WritePolicy::write_back, 1, SetIndex::modulo, 0,
                         64ull << 20);  // tags below 64 MiB / (64 sets x 64 B) = 16384
    SetAssocCache wide(size, ways, static_cast<std::uint32_t>(line), WritePolicy::write_back);
    CHECK(narrow.narrow());
    CHECK_FALSE(wide.narrow());
    // Bytes per set: the tags padded to 8 bytes and an 8-byte order (at most 16 ways), else tags and ranks.
    const std::uint64_t narrow_set = ways == 16 ? 32 + 8 : ways == 6 ? 16 + 8 : 2 * 32 * 2;
    const std::uint64_t wide_set = ways == 16 ? 64 + 8 : ways == 6 ? 24 + 8 : 2 * 32 * 4;
    CHECK(narrow.state_bytes() == sets * narrow_set);
    CHECK(wide.state_bytes() == sets * wide_set);
    ReferenceLru ref(sets, ways);
    std::uint64_t x = 12345, hits = 0, victims = 0;
    for (int i = 0; i < 50000; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      // Lines over 3 x the cache, with a hot quarter so that sets see hits at every recency.
      const std::uint64_t span = (x >> 60) < 4 ? sets * ways / 4 : 3 * sets * ways;
      const std::uint64_t l = (x >> 20) % span;
      const bool write = (x >> 40) % 4 == 0;
      std::optional<std::uint64_t> expected_victim;
      const bool expected = ref.access(l, write, expected_victim);
      for (SetAssocCache* c : {&narrow, &wide}) {
        bool evicted = false;
        std::uint64_t victim = 0;
        REQUIRE(c->access_line(l * line, write, evicted, victim) == expected);
        REQUIRE(evicted == expected_victim.has_value());
        if (evicted) REQUIRE(victim == *expected_victim * line);
      }
      hits += expected;
      victims += expected_victim.has_value();
    }
    CHECK(hits > 10000);  // the comparison covered hits, misses and dirty victims
    CHECK(victims > 1000);
  }
}

TEST_CASE("narrow tag words only when every tag below the address limit fits 15 bits") {
  // MI300X's MALL (256 MiB, 16 ways, 64 B lines): a tag is address / 16 MiB, so 192 GB of HBM
  // needs tags up to 11444 (narrow); 2^39 - 2^24 bytes need tags up to 32766 (narrow), one byte more
  // needs 32767, the invalid tag's word (wide).
  const std::uint64_t mall = 256ull << 20;
  CHECK(SetAssocCache(mall, 16, 64, WritePolicy::write_through, 2, SetIndex::hashed, 0, 192'000'000'000ull).narrow());
  CHECK(SetAssocCache(mall, 16, 64, WritePolicy::write_through, 1, SetIndex::modulo, 0, (1ull << 39) - (1ull << 24)).narrow());
  CHECK_FALSE(SetAssocCache(mall, 16, 64, WritePolicy::write_through, 1, SetIndex::modulo, 0, (1ull << 39) - (1ull << 24) + 1).narrow());
  // MI300X's L2 (4 MiB per XCD, 16 ways, 128 B): tags are address / 256 KiB, too many for 15 bits.
  CHECK_FALSE(SetAssocCache(4ull << 20, 16, 128, WritePolicy::write_back, 1, SetIndex::hashed, 0, 192'000'000'000ull).narrow());
  // Beyond a narrow cache's tags: refused, not aliased onto a smaller address.
  SetAssocCache c(mall, 16, 64, WritePolicy::write_through, 1, SetIndex::modulo, 0, 1ull << 30);
  bool evicted = false;
  std::uint64_t victim = 0;
  CHECK_THROWS_AS(c.access_line(1ull << 39, false, evicted, victim), std::out_of_range);
  CHECK_FALSE(c.contains(1ull << 39));
}
