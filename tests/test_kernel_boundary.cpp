// What the caches hold across a kernel boundary: the L2 written back and invalidated (MI300X) or
// kept (NVIDIA), as `l2.kernel_end` says, and a profiler's cache control emptying every cache
// before a kernel outside any counter (ncu --cache-control all). Counts by hand.
#include <doctest/doctest.h>

#include <vector>

#include "config_fixture.h"
#include "sim/memory_path.h"
#include "workload_fixture.h"

using namespace attnsim;
using namespace attnsim::sim;

namespace {
constexpr double kHz = 1.83e9;
constexpr std::uint64_t kLines = 64;
constexpr std::uint64_t kBase = 1 << 24;

// Writes kLines whole 128 B lines, ends the kernel, then reads them back in a second kernel;
// returns the first kernel's counters (writes and its end) and the second's (the reads).
struct TwoKernels {
  TrafficCounters first, second;
};
TwoKernels write_then_read(const arch::GpuSpec& gpu, bool empty_between) {
  MemoryPath path(gpu, kHz);
  TwoKernels k;
  for (std::uint64_t i = 0; i < kLines; ++i) path.write(0, kBase + 128 * i, 0, 128, 0, k.first);
  std::vector<TrafficCounters> end(gpu.l2_instances());
  path.end_kernel(0, end);
  for (const auto& c : end) k.first.add(c);
  if (empty_between) path.empty_caches();
  path.start_kernel();
  for (std::uint64_t i = 0; i < kLines; ++i) path.read(0, 0, kBase + 128 * i, 0, 128, 1000, k.second);
  return k;
}
}  // namespace

TEST_CASE("the shipped configs say what the L2 does at a kernel's end") {
  CHECK(test::gpu("mi300x").l2.kernel_end == arch::L2KernelEnd::write_back);
  CHECK(test::gpu("h200").l2.kernel_end == arch::L2KernelEnd::keep);
  CHECK(test::gpu("h100").l2.kernel_end == arch::L2KernelEnd::keep);
  const std::string text = test::shipped_config_text("h200");
  const std::string bad = test::edited(text, "kernel_end = \"keep\"", "kernel_end = \"flush\"");
  CHECK(test::load_error(bad) == "cfg.toml:" + std::to_string(test::line_of(bad, "kernel_end =")) +
                                     ":14: error: key 'l2.kernel_end': expected one of \"write_back\", \"keep\", got the string \"flush\"");
}

TEST_CASE("an NVIDIA L2 keeps a kernel's dirty lines: nothing is written at its end and the next kernel hits them") {
  const TwoKernels k = write_then_read(test::gpu("h200"), false);
  CHECK(k.first.requested_write_bytes == 128 * kLines);
  CHECK(k.first.hbm_write_bytes == 0);
  CHECK(k.second.tcc_hit == kLines);
  CHECK(k.second.hbm_read_bytes == 0);
}

TEST_CASE("an L2 that writes back at a kernel's end writes every dirty line once and the next kernel misses") {
  const TwoKernels k = write_then_read(test::gpu_with("h200", {"l2.kernel_end=write_back"}), false);
  CHECK(k.first.hbm_write_bytes == 128 * kLines);
  CHECK(k.second.tcc_miss == kLines);
  CHECK(k.second.hbm_read_bytes == 128 * kLines);  // no memory-side cache on the H200
}

TEST_CASE("a profiler's cache control empties the caches between kernels without counting the write-backs") {
  const TwoKernels k = write_then_read(test::gpu("h200"), true);
  CHECK(k.first.hbm_write_bytes == 0);  // the flush happens outside the kernel
  CHECK(k.second.tcc_miss == kLines);
  CHECK(k.second.hbm_read_bytes == 128 * kLines);
}

TEST_CASE("on MI300X the cache control empties the memory-side cache too where kernel boundaries keep it") {
  // A kernel reads the lines (the L2 and the MALL allocate them), the next reads them again.
  const auto read_twice = [](bool empty_between) {
    MemoryPath path(test::gpu("mi300x"), 2.1e9);
    TrafficCounters first, second;
    for (std::uint64_t i = 0; i < kLines; ++i) path.read(0, 0, kBase + 128 * i, 0, 128, 0, first);
    std::vector<TrafficCounters> end(8);
    path.end_kernel(0, end);
    if (empty_between) path.empty_caches();
    path.start_kernel();
    for (std::uint64_t i = 0; i < kLines; ++i) path.read(0, 0, kBase + 128 * i, 0, 128, 1000, second);
    CHECK(first.hbm_read_bytes == 128 * kLines);
    return second;
  };
  const TrafficCounters kept = read_twice(false), emptied = read_twice(true);
  CHECK(kept.tcc_miss == kLines);  // the L2 was invalidated at the kernel's end
  CHECK(kept.mall_read_hits == 2 * kLines);  // 64 B MALL lines
  CHECK(kept.hbm_read_bytes == 0);
  CHECK(emptied.mall_read_hits == 0);
  CHECK(emptied.hbm_read_bytes == 128 * kLines);
}
