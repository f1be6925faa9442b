// Device-scope atomics, performed where the arch spec's l2.atomics says: at the memory side
// (MI300X) or in the L2 (NVIDIA). Counters and round trips by hand, and the cross-XCD atomic
// microbenchmark's contention (every CU into one line) against the one channel that serves it.
#include <doctest/doctest.h>

#include <vector>

#include "arch/clock_model.h"
#include "arch/config_error.h"
#include "config_fixture.h"
#include "sim/memory_path.h"
#include "sim/micro_memory.h"
#include "workload_fixture.h"

using namespace attnsim;
using namespace attnsim::sim;

namespace {
// MI300X with its atomics moved into the L2 (a what-if: its L2s are not coherent across XCDs).
const arch::GpuSpec& mi300x_l2_atomics() { return test::gpu_with("mi300x", {"l2.atomics=l2", "clock.xcd_spread=0"}); }
constexpr double kHz = 2.1e9;
double ns(Tick t) { return static_cast<double>(t) / kTicksPerNs; }
// The atomic micro into one line from every CU, eight in flight per CU.
MemoryMicroOptions one_line_atomics() {
  MemoryMicroOptions o;
  o.pattern = "atomic";
  o.level = "l2";
  o.footprint = 128;
  o.inflight = 8;
  return o;
}
// The line requests of `rows` rows of 256 B, 1 KiB apart from 1 MiB on (a 64-wide fp32 dQ tile's
// rows of a 256-wide row); RowSpan{1 << 20, 256, 1024, rows, 0} in the approximate mode.
std::vector<LineRequest> dq_tile_lines(std::uint64_t rows) {
  std::vector<LineRequest> lines;
  for (std::uint64_t r = 0; r < rows; ++r) {
    for (std::uint64_t b = 0; b < 256; b += 128) lines.push_back(LineRequest{(1 << 20) + r * 1024 + b, 0, 128});
  }
  return lines;
}
}  // namespace

TEST_CASE("the shipped configs say where atomics are performed") {
  CHECK(test::gpu("mi300x").l2.atomics == arch::AtomicSite::memory_side);
  CHECK(test::gpu("h100").l2.atomics == arch::AtomicSite::l2);
  const std::string text = test::shipped_config_text("mi300x");
  const std::string bad = test::edited(text, "atomics = \"memory_side\"", "atomics = \"l1\"");
  CHECK(test::load_error(bad) == "cfg.toml:" + std::to_string(test::line_of(bad, "atomics =")) +
                                     ":11: error: key 'l2.atomics': expected one of \"memory_side\", \"l2\", got the string \"l1\"");
}

TEST_CASE("a memory-side atomic passes the L2 as a miss and writes its 64 B chunks to HBM (by hand)") {
  const auto& gpu = test::gpu("mi300x");
  MemoryPath path(gpu, kHz);
  TrafficCounters c;
  path.atomic(0, 0, 4096, 0, 128, 0, c);
  path.atomic(1, 0, 4096, 0, 128, 0, c);  // another XCD, the same line
  CHECK(c.atomic_bytes == 256);
  CHECK(c.tcc_req == 2);
  CHECK(c.tcc_miss == 2);
  CHECK(c.ea_wrreq == 4);  // two 64 B chunks per line
  CHECK(c.ea_wrreq_64b == 4);
  CHECK(c.ea_rdreq == 0);
  CHECK(c.hbm_read_bytes == 128);  // the first brings the line into the MALL; the second hits it
  CHECK(c.mall_read_misses == 2);
  CHECK(c.mall_read_hits == 2);
  CHECK(c.hbm_write_bytes == 256);
  std::vector<TrafficCounters> end(8);
  path.end_kernel(0, end);
  for (const auto& e : end) CHECK(e.ea_wrreq == 0);  // nothing was left dirty in an L2
}

TEST_CASE("an in-L2 atomic fetches the line on a miss and hits it after and leaves it dirty (by hand)") {
  const auto& gpu = mi300x_l2_atomics();
  MemoryPath path(gpu, kHz);
  TrafficCounters c;
  const Tick first = path.atomic(0, 0, 4096, 0, 128, 0, c);
  CHECK(c.tcc_miss == 1);
  CHECK(c.ea_rdreq == 1);
  CHECK(c.ea_rdreq_128b == 1);  // the whole line's sectors, one 128 B request
  CHECK(c.hbm_read_bytes == 128);
  CHECK(c.ea_wrreq == 0);
  // The miss's round trip reaches HBM: at least every level's latency.
  CHECK(ns(first) >= (118 + 90) / 2.1 + 118 + 192);
  const Tick t = 10'000'000;  // 10 us later: every server idle
  const Tick second = path.atomic(0, 0, 4096, 32, 64, t, c);
  CHECK(c.tcc_hit == 1);
  CHECK(c.atomic_bytes == 128 + 32);
  // A hit: L1 and L2 latency and half a cycle of the L2 channel's write port (32 B at 64 B/clk).
  CHECK(ns(second - t) == doctest::Approx((118 + 90 + 0.5) / 2.1).epsilon(0.001));
  // Another XCD's L2 does not hold the line: its own miss.
  path.atomic(1, 0, 4096, 0, 128, t, c);
  CHECK(c.tcc_miss == 2);
  std::vector<TrafficCounters> end(8);
  path.end_kernel(2 * t, end);
  CHECK(end[0].ea_wrreq == 2);  // each XCD writes its dirty line back as two 64 B requests
  CHECK(end[1].ea_wrreq == 2);
  CHECK(end[0].hbm_write_bytes + end[1].hbm_write_bytes == 256);
}

TEST_CASE("in-L2 atomics in a batch and in the approximate mode's spans count what they do line by line") {
  const auto& gpu = mi300x_l2_atomics();
  // A tile's rows: 64 rows of 256 B, 1 KiB apart (a 64 x 64 fp32 dQ tile of a 256-wide row).
  const std::vector<LineRequest> lines = dq_tile_lines(64);
  const RowSpan span{1 << 20, 256, 1024, 64, 0};
  MemoryPath by_line(gpu, kHz), batch(gpu, kHz), spans(gpu, kHz, TagMode::approximate);
  TrafficCounters a, b, s;
  for (int pass = 0; pass < 2; ++pass) {  // a miss pass, then a hit pass
    for (const LineRequest& q : lines) by_line.atomic(2, 0, q.address, q.lo, q.hi, 0, a);
    batch.atomic_batch(2, 0, lines.data(), lines.size(), 0, b);
    spans.atomic_spans(2, 0, &span, 1, 0, s);
  }
  CHECK(a.to_json() == b.to_json());
  CHECK(a.to_json() == s.to_json());
  CHECK(a.tcc_hit == lines.size());
  CHECK(a.tcc_miss == lines.size());
  CHECK(a.atomic_bytes == 2 * 64 * 256);
  CHECK(a.atomic_sectors == a.atomic_bytes / 32);  // whole lines: NVIDIA's op_red sectors
  CHECK(a.to_json(arch::Vendor::nvidia)["lts__t_sectors_srcunit_tex_op_red.sum"] == a.atomic_sectors);
}

TEST_CASE("one atomic at a time across the XCDs takes its level's round trip (by hand)") {
  MemoryMicroOptions o = one_line_atomics();
  // MI300X, memory side, idle clock 2.1 GHz, a MALL hit: L1 118 + L2 90 cycles, two cycles of the
  // L2 write port (128 B at 64 B/clk), the two 64 B chunks over the link (2 cycles) and the MALL
  // channel, their two 64 B writes over one HBM channel (5.3 TB/s / 128), and the MALL's 118 ns.
  // Chips and Cheese measured 116-202.5 ns for atomics on MI300X (CC-MI300X): the model is above.
  const auto& mi300x = test::one_clock("mi300x");
  REQUIRE(arch::sustained_clock(mi300x, arch::Activity{}).clock.value == doctest::Approx(kHz));
  const double memory_side = (118 + 90 + 2 + 2) / 2.1 + 2 * 64 / (5.3e12 / 128) * 1e9 + 118;
  CHECK(run_memory_micro(mi300x, o, kHz).latency_ns == doctest::Approx(memory_side).epsilon(0.001));
  // The same in the L2: L1 + L2 latency and the two write-port cycles (a hit after the first).
  CHECK(run_memory_micro(mi300x_l2_atomics(), o, kHz).latency_ns == doctest::Approx((118 + 90 + 2) / 2.1).epsilon(0.001));
}

TEST_CASE("every CU of every XCD adding into one line runs at the rate of the one channel that performs it") {
  MemoryMicroOptions o = one_line_atomics();
  // Memory side: each 128 B atomic writes 128 B to the line's one HBM channel (5.3 TB/s / 128).
  const MemoryMicroResult side = run_memory_micro(test::gpu("mi300x"), o, kHz);
  CHECK(side.bandwidth_bytes_per_s == doctest::Approx(5.3e12 / 128).epsilon(0.02));
  CHECK(side.counters.hbm_write_bytes == side.counters.atomic_bytes);
  // In the L2 (H100, one L2): the line's slice's write port, 64 B per clock.
  const auto& h100 = test::gpu("h100");
  const MemoryMicroResult l2 = run_memory_micro(h100, o, 1.98e9);
  CHECK(l2.bandwidth_bytes_per_s == doctest::Approx(64 * 1.98e9).epsilon(0.02));
  CHECK(l2.counters.tcc_miss == 1);            // the first fetch; every later atomic hits
  CHECK(l2.counters.hbm_write_bytes == 0);     // the dirty line stays in the L2 at the end (l2.kernel_end = keep)
  // Spread over 4 MiB (still every line from every XCD) the same atomics use every channel: the
  // one-line rate was contention. Eight in flight per CU are then bound by the round trip
  // (304 x 8 x 128 B per ~222 ns, about 1.4 TB/s), some 30 times the one-line rate.
  o.footprint = 4ull << 20;
  CHECK(run_memory_micro(test::gpu("mi300x"), o, kHz).bandwidth_bytes_per_s > 20 * side.bandwidth_bytes_per_s);
}

TEST_CASE("atomic requests that each add half a sector are two L2 sector operations per sector (by hand)") {
  // The validation kernels' dQ atomics on NVIDIA: one atomicAdd instruction per element of an
  // mma.sync accumulator fragment adds 4 of a 32 B sector's 8 floats in each of 8 rows (PTX ISA's C
  // layout), so every sector receives two requests; the H200's ncu counted 2.0 red sectors per 32 B
  // of dQ in every case (H200-REF). 16 rows of 256 B, 1 KiB apart: 32 lines, 128 sectors.
  const auto& gpu = test::gpu("h200");
  const std::vector<LineRequest> lines = dq_tile_lines(16);
  const RowSpan span{1 << 20, 256, 1024, 16, 0};
  MemoryPath once(gpu, kHz), twice(gpu, kHz), twice_spans(gpu, kHz, TagMode::approximate);
  TrafficCounters a, b, s;
  const BatchTiming ta = once.atomic_batch(0, 0, lines.data(), lines.size(), 0, a, 1);
  const BatchTiming tb = twice.atomic_batch(0, 0, lines.data(), lines.size(), 0, b, 2);
  twice_spans.atomic_spans(0, 0, &span, 1, 0, s, 2);
  CHECK(a.atomic_sectors == 128);
  CHECK(b.atomic_sectors == 256);
  CHECK(s.atomic_sectors == 256);
  CHECK(b.atomic_bytes == a.atomic_bytes);  // the same bytes added
  CHECK(b.hbm_read_bytes == a.hbm_read_bytes);  // the same lines fetched
  CHECK(b.to_json(arch::Vendor::nvidia)["lts__t_sectors_srcunit_tex_op_red.sum"] == 256);
  CHECK(tb.finish >= ta.finish);
  // Each request takes a sector's slot on its L2 channel: one line that hits, added into once more
  // later, holds its channel 128 B / 64 B per clock = 2 cycles, or 4 when each sector is requested
  // twice; the acknowledgement moves by the 2 cycles.
  const Tick later = 1'000'000'000;
  TrafficCounters c;
  const LineRequest line{1 << 20, 0, 128};
  const double one = ns(once.atomic_batch(0, 0, &line, 1, later, c, 1).finish - later);
  const double two = ns(twice.atomic_batch(0, 0, &line, 1, later, c, 2).finish - later);
  CHECK(two - one == doctest::Approx(2 / (kHz / 1e9)).epsilon(0.01));
}
