// The memory path: bandwidth servers, latencies summed level by level, streams bounded by peaks.
#include <doctest/doctest.h>

#include "arch/config_error.h"
#include "sim/memory_path.h"
#include "sim/micro_memory.h"
#include "workload_fixture.h"

using namespace attnsim;
using namespace attnsim::sim;

namespace {
// MI300X with a 16 MiB MALL, so that HBM-level footprints (twice the MALL) stay small for tests.
const arch::GpuSpec& small_mall() { return test::gpu_with("mi300x", {"mall.size=16MiB"}); }
}  // namespace

TEST_CASE("a request's 32 B sectors: those its byte range touches") {
  CHECK(sectors_touched(0, 128) == 4);
  CHECK(sectors_touched(0, 1) == 1);
  CHECK(sectors_touched(31, 33) == 2);  // straddles a sector boundary
  CHECK(sectors_touched(32, 64) == 1);
  CHECK(sectors_touched(100, 128) == 1);
  CHECK(sectors_touched(4, 100) == 4);
}

TEST_CASE("a bandwidth server serves in arrival order at its rate") {
  BandwidthServer s(1e9);  // 1 byte per ns
  CHECK(s.serve(0, 10) == 10'000);
  CHECK(s.serve(5'000, 10) == 20'000);   // queued behind the first
  CHECK(s.serve(50'000, 1) == 51'000);   // idle gap
  CHECK(s.busy() == 21'000);
}

TEST_CASE("pointer chase: each level adds its latency and one line's service time (by hand)") {
  const auto& gpu = test::gpu("mi300x");
  MemoryMicroOptions o;
  o.pattern = "chase";
  // L2 hit: L1 118 + L2 90 cycles + one cycle of L2 channel service (128 B at 128 B/clk), 2.1 GHz.
  o.level = "l2";
  const double l2 = (118 + 90 + 1) / 2.1;
  CHECK(run_memory_micro(gpu, o, 2.1e9).latency_ns == doctest::Approx(l2).epsilon(0.001));
  // MALL hit: + link (2 cycles: 128 B at 64 B/clk) + MALL channel (2 fabric cycles) + 118 ns.
  o.level = "mall";
  const double mall = l2 + 2 / 2.1 + 2 / 2.1 + 118;
  CHECK(run_memory_micro(gpu, o, 2.1e9).latency_ns == doctest::Approx(mall).epsilon(0.001));
  // HBM: + one line over one of 128 channels (5.3 TB/s / 128) + 192 ns.
  o.level = "hbm";
  const double hbm = mall + 128 / (5.3e12 / 128) * 1e9 + 192;
  CHECK(run_memory_micro(small_mall(), o, 2.1e9).latency_ns == doctest::Approx(hbm).epsilon(0.001));
}

TEST_CASE("HBM streams never exceed the datasheet peak") {
  const auto& gpu = small_mall();
  MemoryMicroOptions o;
  o.level = "hbm";
  for (const char* p : {"stream-read", "stream-write"}) {
    CAPTURE(p);
    o.pattern = p;
    const auto r = run_memory_micro(gpu, o, 1.254e9);
    CHECK(r.bandwidth_bytes_per_s <= 5.3e12);
    CHECK(r.bandwidth_bytes_per_s > 2e12);
    CHECK(r.hbm_utilisation <= 1.0);
  }
}

TEST_CASE("HBM write queues: accepted when an entry is free and one turnaround per burst between reads (by hand)") {
  // One channel at 1 byte/ps, two entries, a 256 B burst, a 50 ps turnaround.
  HbmWriteQueues q(1, 2, 1e12, 256, 50);
  auto a = q.accept(0, 0, 128, 0);  // drains 0-128
  CHECK(a.at == 0);
  CHECK(a.turnaround == 0);
  a = q.accept(0, 0, 128, 128);  // drains 128-256; a burst ends, but the channel served no reads
  CHECK(a.at == 0);
  CHECK(a.turnaround == 0);
  a = q.accept(0, 0, 128, 256);  // both entries taken: waits for the first to drain (128), drains 256-384
  CHECK(a.at == 128);
  CHECK(a.turnaround == 0);
  a = q.accept(0, 0, 128, 384 + 100);  // 100 B of reads since: the burst that ends here pays the switch
  CHECK(a.at == 256);
  CHECK(a.turnaround == 50);
  a = q.accept(0, 600, 128, 612);  // idle until 600: accepted on arrival
  CHECK(a.at == 600);
  CHECK(a.turnaround == 0);
  a = q.accept(0, 600, 128, 740);  // a burst ends, no reads since the last switch: none paid
  CHECK(a.turnaround == 0);
}

TEST_CASE("copy pays the HBM read/write turnaround but streams that only read or only write do not") {
  const auto& plain = small_mall();
  const auto& free_turn = test::gpu_with("mi300x", {"mall.size=16MiB", "hbm.turnaround=0ns"});
  MemoryMicroOptions o;
  o.level = "hbm";
  o.pattern = "copy";
  const double copy = run_memory_micro(plain, o, 1.254e9).bandwidth_bytes_per_s;
  const double copy_free = run_memory_micro(free_turn, o, 1.254e9).bandwidth_bytes_per_s;
  CHECK(copy < 0.95 * copy_free);
  for (const char* p : {"stream-read", "stream-write"}) {
    CAPTURE(p);
    o.pattern = p;
    CHECK(run_memory_micro(plain, o, 1.254e9).bandwidth_bytes_per_s == run_memory_micro(free_turn, o, 1.254e9).bandwidth_bytes_per_s);
  }
}

TEST_CASE("bad memory micro input names the problem") {
  const auto& gpu = test::gpu("mi300x");
  MemoryMicroOptions o;
  o.level = "l3";
  CHECK_THROWS_WITH_AS(run_memory_micro(gpu, o, 2.1e9), "--level l3: error: key 'level': expected l1, l2, mall or hbm",
                       arch::ConfigError);
  o.level = "l2";
  o.footprint = 1000;
  CHECK_THROWS_WITH_AS(run_memory_micro(gpu, o, 2.1e9),
                       "--footprint 1000: error: key 'footprint': expected a positive multiple of the 128-byte L2 line",
                       arch::ConfigError);
  // A copy's two 1 GiB buffers (the destination a MiB past the first MiB boundary after the source)
  // do not fit a GPU with 2 GiB of memory.
  arch::GpuSpec small = gpu;
  small.hbm.capacity.value = 2ull << 30;
  o.level = "hbm";
  o.pattern = "copy";
  o.footprint = 1ull << 30;
  CHECK_THROWS_WITH_AS(run_memory_micro(small, o, 2.1e9),
                       "--footprint 1073741824: error: key 'footprint': the buffers need 2149580800 bytes of memory, "
                       "more than the 2147483648 of hbm.capacity",
                       arch::ConfigError);
}

// The MI300X's L1 port moves 128 B a clock and a hit returns after 118 cycles, so 118 lines of
// 128 B in flight keep a CU's port busy at any clock (the bandwidth-delay product); the timed
// passes are sized by a window of at most four times that, 472 lines. Each CU streams a 16 KiB
// slice (128 lines) after one warm-up pass: 1 + 128 x 472 / 128 = 473 passes of 128 lines. One CU per
// XCD (8 CUs) keeps the run short; the product is per CU.
TEST_CASE("a stream's window beyond four times the bandwidth-delay product sizes its passes as that product does") {
  const auto& gpu = test::gpu_with("mi300x", {"chip.cus_per_xcd=1"});
  MemoryMicroOptions o;
  o.level = "l1";
  o.pattern = "stream-read";
  o.inflight = 4096;
  const MemoryMicroResult wide = run_memory_micro(gpu, o, 2.1e9);
  CHECK(wide.inflight == 4096);
  CHECK(wide.counters.tcp_accesses == 8ull * 473 * 128);
  // The window, not the sizing, sets the figure: 4,096 lines fill the port (8 x 128 B x 2.1 GHz).
  CHECK(wide.bandwidth_bytes_per_s == doctest::Approx(8 * 128 * 2.1e9).epsilon(0.005));
  o.inflight = 200;  // below the bound: 1 + 200 passes
  CHECK(run_memory_micro(gpu, o, 2.1e9).counters.tcp_accesses == 8ull * 201 * 128);
}

// Measured MI300X figures (arch-facts 1.5, RRZE gpu-stream/mi300x.txt): read-only 4.20 TB/s and
// write-only 4.85 TB/s, best over occupancy. The simulation runs each stream at the clock its own
// HBM traffic settles at under the 750 W limit; nothing in the config states a sustained bandwidth.
TEST_CASE("HBM read and write streams land within 5 percent of the measured MI300X figures") {
  const auto& gpu = test::gpu("mi300x");
  MemoryMicroOptions o;
  o.level = "hbm";
  o.pattern = "stream-read";
  CHECK(run_memory_micro(gpu, o).bandwidth_bytes_per_s / 1e12 == doctest::Approx(4.20).epsilon(0.05));
  o.pattern = "stream-write";
  CHECK(run_memory_micro(gpu, o).bandwidth_bytes_per_s / 1e12 == doctest::Approx(4.85).epsilon(0.05));
}

TEST_CASE("channel stats: a line read twice is one channel's two requests and one hit") {
  // Hand calculation: MI300X's L2 channels read 128 B per engine clock, so at 2.1 GHz a 128 B line
  // takes 1e12 / 2.1e9 = 476.19 ps, rounded to 476 ps, on its channel; the first read misses the
  // L2 and the MALL, so its 128 B pass the L2-fabric link, a MALL channel and an HBM channel.
  const auto& gpu = test::gpu("mi300x");
  MemoryPath path(gpu, 2.1e9);
  TrafficCounters c;
  const Tick first = path.read(0, 0, 1 << 20, 0, 128, 0, c);
  path.start_kernel();  // a new kernel invalidates the L1, so the second read reaches the L2
  path.read(0, 0, 1 << 20, 0, 128, first, c);
  Stats stats;
  path.add_stats(stats);
  const nlohmann::json j = stats.to_json();
  REQUIRE(j["xcd"].size() == 8);
  std::uint64_t requests = 0, channels_used = 0;
  for (const auto& x : j["xcd"]) {
    for (const auto& ch : x["l2"]["channel"]) {
      requests += ch["requests"].get<std::uint64_t>();
      if (ch["requests"].get<std::uint64_t>() == 0) continue;
      ++channels_used;
      CHECK(ch["requests"] == 2);
      CHECK(ch["hits"] == 1);
      CHECK(ch["read_bytes"] == 256);
      CHECK(ch["read_busy_ps"] == 2 * 476);
      CHECK(ch["link_bytes"] == 128);
    }
  }
  CHECK(requests == 2);
  CHECK(channels_used == 1);
  CHECK(c.tcc_req == 2);
  double mall = 0, hbm = 0;
  std::uint64_t hbm_channels_used = 0;
  for (const auto& ch : j["mall"]["channel"]) mall += ch["bytes"].get<double>();
  for (const auto& ch : j["hbm"]["channel"]) {
    hbm += ch["bytes"].get<double>();
    hbm_channels_used += ch["bytes"].get<double>() > 0;
  }
  CHECK(mall == 128);
  CHECK(hbm == 128);
  CHECK(hbm_channels_used == 1);
}

TEST_CASE("the exact L2 takes its set index's multiplier from l2.index_prime") {
  // A direct-mapped 4 MiB L2 of 128 B lines has 32768 sets: line 0 is in set 0 and line
  // 32768 + 32767 (index 32767, tag 1) in (32767 + multiplier) mod 32768. The default,
  // 2654435761 = 0x9E3779B1, is 31153 mod 32768: set 31152, apart from line 0, which a second read
  // then finds in the L2. With multiplier 1 the second line lands in set 0 and evicts line 0.
  for (const auto& [prime, hits] : {std::pair<std::string, std::uint64_t>{"", 1}, {"l2.index_prime=1", 0}}) {
    CAPTURE(prime);
    std::vector<std::string> sets = {"l2.ways=1"};
    if (!prime.empty()) sets.push_back(prime);
    MemoryPath path(test::gpu_with("mi300x", sets), 2.1e9);
    TrafficCounters c;
    const std::uint64_t other = (std::uint64_t{32768} + 32767) * 128;
    Tick t = path.read(0, 0, 0, 0, 128, 0, c);
    t = path.read(0, 0, other, 0, 128, t, c);
    path.start_kernel();  // the L1s forget both lines; the L2 keeps them
    path.read(0, 0, 0, 0, 128, t, c);
    CHECK(c.tcc_req == 3);
    CHECK(c.tcc_hit == hits);
  }
}

TEST_CASE("per-XCD clocks: an L2 hit takes its latency at its own XCD's clock") {
  // Hand calculation: an L2 hit costs the L1 latency (118 cycles), one 128 B transfer on the L2
  // channel (1 cycle) and the L2 latency (90 cycles), 209 cycles. With clock.xcd_spread = 0.1 on
  // 8 XCDs and the controller at 2.0 GHz, XCD 0 runs at 2.1 GHz and XCD 7 at 1.9 GHz.
  const auto& gpu = test::gpu_with("mi300x", {"clock.xcd_spread=0.1"});
  MemoryPath path(gpu, 2.0e9);
  TrafficCounters c;
  const auto hit_time = [&](std::uint32_t xcd, std::uint64_t address) {
    const Tick first = path.read(xcd, xcd * 38, address, 0, 128, 0, c);  // brings the line into the XCD's L2
    path.start_kernel();                                                  // the L1s forget it
    return static_cast<double>(path.read(xcd, xcd * 38, address, 0, 128, first, c) - first);
  };
  CHECK(hit_time(0, 1 << 20) == doctest::Approx(209 / 2.1e9 * 1e12).epsilon(1e-4));
  CHECK(hit_time(7, 2 << 20) == doctest::Approx(209 / 1.9e9 * 1e12).epsilon(1e-4));
}
