// The batch forms of the memory path (a tile operation timed as a whole): tags and counters exactly
// as line by line, and each channel serving the batch's bytes once (hand-computed cases).
#include <doctest/doctest.h>

#include <vector>

#include "sim/memory_path.h"
#include "workload_fixture.h"

using namespace attnsim;
using namespace attnsim::sim;

namespace {
// MI300X with 64 KiB L2s and a 1 MiB MALL, so that small request sets evict (dirty) lines.
const arch::GpuSpec& small_caches() { return test::gpu_with("mi300x", {"l2.size=64KiB", "mall.size=1MiB"}); }

// Line requests over a 4 MiB range with repeats and partial lines (a fixed linear congruence).
std::vector<LineRequest> scattered_requests(std::size_t n) {
  std::vector<LineRequest> q;
  std::uint64_t x = 12345;
  for (std::size_t i = 0; i < n; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const std::uint64_t line = (x >> 33) % 32768;
    const std::uint32_t lo = (x >> 20) % 4 == 0 ? 32 * static_cast<std::uint32_t>((x >> 24) % 3) : 0;
    q.push_back(LineRequest{line * 128, lo, lo + 32 + 32 * static_cast<std::uint32_t>((x >> 28) % ((128 - lo) / 32))});
  }
  return q;
}

void check_same_counters(const TrafficCounters& a, const TrafficCounters& b) {
  CHECK(a.to_json() == b.to_json());
  CHECK(a.tcc_req > 0);
}
}  // namespace

TEST_CASE("a batch probes and counts exactly what its lines do one by one") {
  const auto& gpu = small_caches();
  const std::vector<LineRequest> q = scattered_requests(20'000);
  constexpr std::uint32_t kCu = 3 * 38;  // a CU of XCD 3 (its L1 sees the repeated lines again)
  for (const char* kind : {"read", "write", "atomic", "write then read"}) {
    CAPTURE(kind);
    MemoryPath lines(gpu, 2.1e9), batches(gpu, 2.1e9);
    TrafficCounters by_line, by_batch;
    const std::string k = kind;
    const auto run = [&](const std::string& what) {
      for (const LineRequest& r : q) {
        if (what == "read") lines.read(3, kCu, r.address, r.lo, r.hi, 0, by_line);
        if (what == "write") lines.write(3, 0, r.address, r.lo, r.hi, 0, by_line);
        if (what == "atomic") lines.atomic(3, 0, r.address, r.lo, r.hi, 0, by_line);
      }
      // Batches of 100 requests, as tile operations would present them.
      for (std::size_t i = 0; i < q.size(); i += 100) {
        if (what == "read") batches.read_batch(3, kCu, &q[i], 100, 0, by_batch);
        if (what == "write") batches.write_batch(3, 0, &q[i], 100, 0, by_batch);
        if (what == "atomic") batches.atomic_batch(3, 0, &q[i], 100, 0, by_batch);
      }
    };
    if (k == "write then read") {
      run("write");
      run("read");
    } else {
      run(k);
    }
    check_same_counters(by_line, by_batch);
    if (k != "read" && k != "atomic") CHECK(by_batch.ea_wrreq > 0);  // dirty lines were evicted
  }
}

TEST_CASE("a batch of L2 hits is served once by its channel (by hand)") {
  // One L2 channel per XCD: every line goes through it. MI300X at 1 GHz: L1 118 and L2 90 cycles of
  // latency, 128 B per clock per channel.
  const arch::GpuSpec gpu = arch::load_arch_file(arch::resolve_arch("mi300x"), {"l2.channels=1", "clock.xcd_spread=0"}).spec;
  MemoryPath path(gpu, 1e9);
  std::vector<LineRequest> q;
  for (std::uint64_t i = 0; i < 16; ++i) q.push_back(LineRequest{i * 128, 0, 128});
  TrafficCounters c;
  path.read_batch(0, 0, q.data(), q.size(), 0, c);  // misses: brings the lines in
  REQUIRE(c.tcc_miss == 16);
  const Tick t = 100'000'000;                       // long after the fills
  // Other CUs of the XCD read them: their L1s miss, the L2 hits.
  const BatchTiming b = path.read_batch(0, 1, q.data(), q.size(), t, c);
  CHECK(c.tcc_hit == 16);
  CHECK(b.finish == t + (118 + 16 + 90) * 1000);   // latency, 16 lines at one per clock, L2 latency
  CHECK(b.latency_sum == 16 * (118 + 90) * 1000);  // each request's unloaded round trip
  // A second batch at the same time queues behind the first on the channel.
  CHECK(path.read_batch(0, 2, q.data(), q.size(), t, c).finish == t + (118 + 32 + 90) * 1000);
}

TEST_CASE("a batch of HBM reads ends when its busiest channel is done plus every level's latency") {
  // HBM slowed to 1 GB/s per channel (128 channels, 128 GB/s): a 128 B line takes 128 ns on its
  // channel, far more than on any other level, so the batch's end is set by its HBM channels.
  const arch::GpuSpec gpu = arch::load_arch_file(arch::resolve_arch("mi300x"), {"hbm.peak_bandwidth=128GB/s"}).spec;
  const auto finish = [&](std::uint64_t stride) {
    MemoryPath path(gpu, 1e9);
    TrafficCounters c;
    std::vector<LineRequest> q;
    for (std::uint64_t i = 0; i < 8; ++i) q.push_back(LineRequest{i * stride, 0, 128});
    const Tick end = path.read_batch(0, 0, q.data(), q.size(), 0, c).finish;
    CHECK(c.hbm_read_bytes == 8 * 128);
    return end;
  };
  MemoryPath path(gpu, 1e9);
  TrafficCounters c;
  const LineRequest single{0, 0, 128};
  const Tick alone = path.read_batch(0, 0, &single, 1, 0, c).finish;
  // Eight lines in one 4 KiB interleave chunk share one HBM channel: 7 more line services.
  CHECK(finish(128) == alone + 7 * 128'000);
  // Eight lines 4 KiB apart fall on distinct channels (the folded interleave): served side by side.
  CHECK(finish(4096) < alone + 128'000);
}

TEST_CASE("the approximate mode spreads a tile's L2 bytes evenly over the XCD's channels (by hand)") {
  // K tiles of one head in BSHD: 256 B rows 2 KiB apart (lines 16 r and 16 r + 1). MI300X at 1 GHz:
  // 16 L2 channels of 128 B per clock, L1 118 and L2 90 cycles of latency. The folded hash puts
  // line x on channel (x ^ h) mod 16, h from x's 128-line block: rows 8k..8k+7 share block k, so
  // their 16 lines land on channels k and k ^ 1 only.
  const auto& gpu = test::one_clock("mi300x");
  const auto second_read = [&](std::uint32_t rows, TagMode mode) {
    MemoryPath path(gpu, 1e9, mode);
    std::vector<LineRequest> lines;
    for (std::uint64_t r = 0; r < rows; ++r) {
      for (std::uint64_t l = 0; l < 2; ++l) lines.push_back(LineRequest{r * 2048 + l * 128, 0, 128});
    }
    const RowSpan span{0, 256, 2048, rows, 0};
    TrafficCounters c;
    const auto read = [&](std::uint32_t cu, Tick t) {
      return mode == TagMode::exact ? path.read_batch(0, cu, lines.data(), lines.size(), t, c)
                                    : path.read_spans(0, cu, &span, 1, t, c);
    };
    read(0, 0);                          // CU 0 brings the tile into the L2
    const Tick t = 100'000'000;          // long after
    const Tick end = read(1, t).finish;  // CU 1 (same XCD): its L1 misses, every line hits the L2
    CHECK(c.tcc_hit == 2 * rows);
    return (end - t) / 1000 - 118 - 90;  // clocks on the busiest L2 channel
  };
  // A whole tile of 128 rows: blocks 0..15 take channel pairs (k, k ^ 1), 16 lines on every channel,
  // in both modes.
  CHECK(second_read(128, TagMode::exact) == 16);
  CHECK(second_read(128, TagMode::approximate) == 16);
  // 16 rows: the exact hash puts all 32 lines on channels 0 and 1 (16 clocks); the approximate mode
  // spreads them, 2 lines a channel (docs/model.md, approximate mode: its departure on small batches).
  CHECK(second_read(16, TagMode::exact) == 16);
  CHECK(second_read(16, TagMode::approximate) == 2);
}
