// The vector L1 of each CU (TCP): hits served by the CU alone, LRU over its sets, fills of the
// 64 B units a read touches, writes passed through, atomics bypassing it, emptied at every kernel
// start, the approximate mode counting as the exact one, and the L1-level microbenchmarks (by hand).
#include <doctest/doctest.h>

#include <vector>

#include "arch/config_error.h"
#include "sim/cache.h"
#include "sim/lru_ring.h"
#include "sim/memory_path.h"
#include "sim/micro_memory.h"
#include "workload_fixture.h"

using namespace attnsim;
using namespace attnsim::sim;

namespace {
constexpr Tick kNs = 1000;  // ticks per ns; at 1 GHz one cycle
// MI300X at 1 GHz: L1 hit 118 cycles; an L2 hit adds 90 cycles and one cycle of channel service.
constexpr Tick kL1 = 118 * kNs, kL2 = (118 + 90 + 1) * kNs;
constexpr Tick kLater = 1'000'000'000;  // long after any earlier request
}  // namespace

TEST_CASE("the L1's recency rings hit exactly as a set-associative LRU cache of the same geometry") {
  // Whole-line reads, a third over 4x the lines the cache holds and the rest over a little more than
  // it holds (reuse at every distance), against SetAssocCache (modulo index, write-through): the
  // same hit or miss each time.
  // 64 ways: the byte-signature search; 120 and 56 (the H200's at 60 and 28 KiB): the same with a
  // last group of 8 ways; 4: the 4-wide tag compare; 6: scalar. Scaled by 1021 (1 mod 4: the same
  // sets), the tags spread over 18 bits and their signature bytes collide.
  for (const auto& [ways, scale] : {std::pair{64u, 1ull}, std::pair{64u, 1021ull}, std::pair{120u, 1021ull},
                                    std::pair{56u, 1ull}, std::pair{248u, 1021ull}, std::pair{4u, 1ull}, std::pair{6u, 1ull}}) {
    CAPTURE(ways);
    CAPTURE(scale);
    LruRing ring(ways * 4 * 128, ways, 128);
    SetAssocCache lru(ways * 4 * 128, ways, 128, WritePolicy::write_through);
    std::uint64_t x = 7, hits = 0;
    for (int i = 0; i < 200'000; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      const std::uint64_t held = 4ull * ways;
      const std::uint64_t line = scale * ((x >> 33) % (i % 3 == 0 ? 4 * held : held + held / 8));
      bool evicted = false;
      std::uint64_t victim = 0;
      const bool expected = lru.access_line(line * 128, false, evicted, victim);
      REQUIRE(ring.access(line * 128) == expected);
      hits += expected;
    }
    CHECK(hits > 50'000);  // both outcomes occur often
    CHECK(hits < 150'000);
  }
}

TEST_CASE("a wide set's presence filter stays exact when hundreds of its tags share a key") {
  // One set of 512 ways (the H200's L1 at its 256 KiB carve-out has 4 of them): 400 lines whose
  // tags share one key of the filter (more than its byte counts, which then saturate), each read
  // twice, then 600 other lines that evict them all, then the 400 again: against SetAssocCache.
  constexpr std::uint32_t kWays = 512;
  LruRing ring(kWays * 128, kWays, 128);
  SetAssocCache lru(kWays * 128, kWays, 128, WritePolicy::write_through);
  std::vector<std::uint64_t> shared, others;
  for (std::uint32_t tag = 1; shared.size() < 400 || others.size() < 600; ++tag) {
    (LruRing::key(tag) == LruRing::key(1) ? shared : others).push_back(tag);
    if (others.size() > 600) others.pop_back();
  }
  shared.resize(400);
  std::uint64_t hits = 0, lookups = 0;
  const auto read = [&](std::uint64_t line) {
    bool evicted = false;
    std::uint64_t victim = 0;
    const bool expected = lru.access_line(line * 128, false, evicted, victim);
    REQUIRE(ring.access(line * 128) == expected);
    hits += expected;
    ++lookups;
  };
  for (int pass = 0; pass < 2; ++pass) {
    for (std::uint64_t t : shared) read(t);
  }
  CHECK(hits == 400);  // the second pass hits every line
  for (std::uint64_t t : others) read(t);
  for (std::uint64_t t : shared) read(t);  // all evicted by the 600 others: misses
  CHECK(hits == 400);
  CHECK(lookups == 1800);
}

TEST_CASE("an L1 hit is served by the CU's L1 alone and counted as the profiler counts it") {
  MemoryPath path(test::one_clock("mi300x"), 1e9);
  TrafficCounters c;
  path.read(0, 0, 4096, 0, 128, 0, c);  // miss: L1 and L2
  CHECK(path.read(0, 0, 4096, 0, 128, kLater, c) == kLater + kL1);
  CHECK(c.tcp_accesses == 2);
  CHECK(c.tcp_read_hits == 1);
  CHECK(c.tcp_tcc_read_req == 1);
  CHECK(c.tcc_req == 1);  // the hit never reached the L2
  CHECK(c.l1_read_hit_bytes == 128);
  CHECK(c.requested_read_bytes == 128);
  // Another CU of the XCD has its own L1: an L2 hit.
  CHECK(path.read(0, 1, 4096, 0, 128, 2 * kLater, c) == 2 * kLater + kL2);
  const auto j = c.to_json();
  CHECK(j["TCP_TOTAL_CACHE_ACCESSES"] == 3);
  CHECK(j["TCP_TCC_READ_REQ"] == 2);
  CHECK(j["l1_read_hit_rate"].get<double>() == doctest::Approx(1.0 / 3));
  // Nsight Compute's names: the global-load sectors at the L1 (3 reads of 4) and those it held.
  const auto nv = c.to_json(arch::Vendor::nvidia);
  CHECK(nv["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 12);
  CHECK(nv["l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum"] == 4);
  CHECK(nv["lts__t_sectors_srcunit_tex_op_read.sum"] == 8);
}

TEST_CASE("the L1 is LRU in each of its sets (MI300X: 4 sets of 64 ways of 128 B lines)") {
  MemoryPath path(test::one_clock("mi300x"), 1e9);
  TrafficCounters c;
  Tick t = 0;
  const auto read = [&](std::uint64_t line) {
    t += kLater;
    return path.read(0, 7, line * 128, 0, 128, t, c) == t + kL1;  // true: an L1 hit
  };
  for (std::uint64_t line = 0; line < 256; ++line) CHECK_FALSE(read(line));  // fills every way of every set
  for (std::uint64_t line = 0; line < 256; ++line) CHECK(read(line));         // all still there
  CHECK_FALSE(read(256));  // set 0 is full: its least recently used line (0) goes
  CHECK(read(4));          // set 0's next oldest stays
  CHECK_FALSE(read(0));    // evicted; it evicts line 8 now (line 4 was just used)
  CHECK(read(1));          // set 1 untouched
  CHECK_FALSE(read(8));
  CHECK(c.tcp_tcc_read_req == 256 + 3);
}

TEST_CASE("an L1 miss fills the 64 B units its read touched") {
  MemoryPath path(test::one_clock("mi300x"), 1e9);
  TrafficCounters c;
  path.read(0, 0, 0, 0, 64, 0, c);                               // first half: miss
  CHECK(path.read(0, 0, 0, 0, 32, kLater, c) == kLater + kL1);  // within it: hit
  CHECK(path.read(0, 0, 0, 64, 128, 2 * kLater, c) > 2 * kLater + kL1);  // second half: miss
  CHECK(path.read(0, 0, 0, 0, 128, 3 * kLater, c) == 3 * kLater + kL1);  // now the whole line
  CHECK(c.tcp_tcc_read_req == 2);
  CHECK(c.requested_read_bytes == 128);  // the L2 saw each half once
}

TEST_CASE("writes pass the L1 without allocating and atomics bypass it") {
  MemoryPath path(test::one_clock("mi300x"), 1e9);
  TrafficCounters c;
  path.write(0, 0, 0, 0, 128, 0, c);
  path.atomic(0, 0, 8192, 0, 128, 0, c);
  CHECK(c.tcp_accesses == 1);  // the write looked up the tags, the atomic did not
  CHECK(c.tcp_tcc_write_req == 1);
  // Neither line is in the L1: both reads go to the L2.
  CHECK(path.read(0, 0, 0, 0, 128, kLater, c) > kLater + kL1);
  CHECK(path.read(0, 0, 8192, 0, 128, 2 * kLater, c) > 2 * kLater + kL1);
  CHECK(c.tcp_read_hits == 0);
  CHECK(c.tcp_tcc_read_req == 2);
}

TEST_CASE("every kernel starts with empty L1s") {
  MemoryPath path(test::one_clock("mi300x"), 1e9);
  TrafficCounters c;
  path.read(0, 0, 0, 0, 128, 0, c);
  path.start_kernel();
  CHECK(path.read(0, 0, 0, 0, 128, kLater, c) == kLater + kL2);  // an L2 hit, not an L1 one
  CHECK(c.tcp_read_hits == 0);
}

TEST_CASE("the approximate mode's L1 counts a tile's rows as the exact mode does") {
  // 16 rows of 256 B, 2 KiB apart (a K tile of one head in BSHD), read twice by one CU, then a
  // 64 B piece of a row (a flat group) twice: every second read hits.
  const auto& gpu = test::one_clock("mi300x");
  MemoryPath exact(gpu, 1e9), approx(gpu, 1e9, TagMode::approximate);
  TrafficCounters ce, ca;
  std::vector<LineRequest> lines;
  for (std::uint64_t r = 0; r < 16; ++r) {
    for (std::uint64_t l = 0; l < 2; ++l) lines.push_back(LineRequest{65536 + r * 2048 + l * 128, 0, 128});
  }
  const RowSpan rows{65536, 256, 2048, 16, 0};
  const LineRequest piece{1 << 20, 64, 128};
  const RowSpan piece_span{(1 << 20) + 64, 64, 64, 1, 0};
  for (int pass = 0; pass < 2; ++pass) {
    const Tick t = pass * kLater;
    exact.read_batch(0, 3, lines.data(), lines.size(), t, ce);
    approx.read_spans(0, 3, &rows, 1, t, ca);
    exact.read_batch(0, 3, &piece, 1, t, ce);
    approx.read_spans(0, 3, &piece_span, 1, t, ca);
  }
  CHECK(ce.tcp_accesses == 66);
  CHECK(ce.tcp_read_hits == 33);
  CHECK(ce.l1_read_hit_bytes == 32 * 128 + 64);
  CHECK(ca.to_json() == ce.to_json());
  CHECK(ca.l1_read_hit_bytes == ce.l1_read_hit_bytes);
  // A batch that hits its L1 throughout is done after the L1's latency.
  CHECK(exact.read_batch(0, 3, lines.data(), lines.size(), 2 * kLater, ce).finish == 2 * kLater + kL1);
  CHECK(approx.read_spans(0, 3, &rows, 1, 2 * kLater, ca).finish == 2 * kLater + kL1);
}

TEST_CASE("an approximate L1 of many sets keeps exact tags and counts as the exact mode") {
  // A 1 MiB L1 at the MI300X's 64 ways: 128 sets of 128 B lines, more than a group's word of sets
  // covers. Rows of 256 B 16 KiB apart (128 lines: every row's two lines in sets 0 and 1), read
  // twice: 64 rows fit the 64 ways, so the second pass hits every line; 65 rows cycle through them
  // in LRU order, so it hits none. The exact mode's line requests give the same L1 counts.
  const auto& gpu = test::gpu_with("mi300x", {"l1.size=1MiB"});
  REQUIRE(gpu.l1_sets() == 128);
  for (const std::uint32_t rows : {64u, 65u}) {
    CAPTURE(rows);
    MemoryPath exact(gpu, 1e9), approx(gpu, 1e9, TagMode::approximate);
    TrafficCounters ce, ca;
    std::vector<LineRequest> lines;
    for (std::uint64_t r = 0; r < rows; ++r) {
      for (std::uint64_t l = 0; l < 2; ++l) lines.push_back(LineRequest{(1 << 24) + r * 16384 + l * 128, 0, 128});
    }
    const RowSpan span{1 << 24, 256, 16384, rows, 0};
    for (int pass = 0; pass < 2; ++pass) {
      exact.read_batch(0, 3, lines.data(), lines.size(), pass * kLater, ce);
      approx.read_spans(0, 3, &span, 1, pass * kLater, ca);
    }
    CHECK(ca.tcp_accesses == 4 * rows);
    CHECK(ca.tcp_read_hits == (rows == 64 ? 128u : 0u));
    CHECK(ca.l1_read_hit_bytes == (rows == 64 ? 128u * 128 : 0u));
    CHECK(ce.tcp_accesses == ca.tcp_accesses);
    CHECK(ce.tcp_read_hits == ca.tcp_read_hits);
    CHECK(ce.l1_read_hit_bytes == ca.l1_read_hit_bytes);
  }
}

TEST_CASE("an approximate L1 of many sets finds each unit's part of its line") {
  // Rows of 64 B, 192 B apart: their units at 0, 192, 384, ... lie in halves 0, 1, 0, 1, ... of
  // lines 0, 1, 3, 4, 6, 7, 9, 10; the same rows 64 B further on, in the other halves of lines 0, 2,
  // 3, 5, 6, 8, 9, 11. Each hits when read again, neither where the other was read; then the 12
  // lines they lie in, read whole, hit where both halves were read: lines 0, 3, 6 and 9.
  const auto& gpu = test::gpu_with("mi300x", {"l1.size=1MiB"});
  MemoryPath approx(gpu, 1e9, TagMode::approximate);
  TrafficCounters c;
  const RowSpan first{1 << 24, 64, 192, 8, 0}, second{(1 << 24) + 64, 64, 192, 8, 0};
  approx.read_spans(0, 0, &first, 1, 0, c);
  approx.read_spans(0, 0, &second, 1, kLater, c);
  CHECK(c.tcp_read_hits == 0);
  approx.read_spans(0, 0, &first, 1, 2 * kLater, c);
  approx.read_spans(0, 0, &second, 1, 3 * kLater, c);
  CHECK(c.tcp_read_hits == 16);
  CHECK(c.l1_read_hit_bytes == 16 * 64);
  const RowSpan whole{1 << 24, 1536, 1536, 1, 0};
  approx.read_spans(0, 0, &whole, 1, 4 * kLater, c);
  CHECK(c.tcp_read_hits == 16 + 4);
  CHECK(c.l1_read_hit_bytes == 16 * 64 + 4 * 128);
}

TEST_CASE("an L1 the model cannot represent is refused by name") {
  const auto refused = [](const std::vector<std::string>& sets) {
    try {
      MemoryPath path(test::gpu_with("mi300x", sets), 1e9);
    } catch (const arch::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(refused({"l1.line=64B"}).find("l1.line") != std::string::npos);
  CHECK(refused({"l1.write_policy=write_back"}).find("l1.write_policy") != std::string::npos);
  CHECK(refused({}).empty());
}

TEST_CASE("L1-level microbenchmarks: a chase at the L1 latency and a stream bound by the requests in flight") {
  const auto& gpu = test::one_clock("mi300x");
  MemoryMicroOptions o;
  o.level = "l1";
  o.pattern = "chase";  // half an L1 on one CU: every timed load hits
  CHECK(run_memory_micro(gpu, o, 2.1e9).latency_ns == doctest::Approx(118 / 2.1).epsilon(0.001));
  // A stream keeps 64 line requests in flight per CU, each back after the L1's 118 cycles (its 128 B
  // per clock port is not the limit: 64 x 128 B per 118 cycles is 69 B/clk): Little's law gives
  // 304 CUs x 64 x 128 B / (118 / 2.1 GHz) = 44.3 TB/s. The timed kernel's first pass finds its L1s
  // empty (a kernel start) and waits on the L2: a little less.
  o.pattern = "stream-read";
  const double little = 304.0 * 64 * 128 / (118 / 2.1e9);
  const double measured = run_memory_micro(gpu, o, 2.1e9).bandwidth_bytes_per_s;
  CHECK(measured <= little);
  CHECK(measured >= 0.97 * little);
}
