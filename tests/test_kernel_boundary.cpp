// What the caches hold across a kernel boundary: the L2 written back and invalidated (MI300X) or
// kept (NVIDIA), as `l2.kernel_end` says, a profiler's cache control emptying every cache before a
// kernel outside any counter (ncu --cache-control all), and a warm-up run before the measured one.
// Counts by hand.
#include <doctest/doctest.h>

#include <vector>

#include <nlohmann/json.hpp>

#include "arch/config_error.h"
#include "cli_runner.h"
#include "config_fixture.h"
#include "report/simulate_point.h"
#include "sim/memory_path.h"
#include "point_fixture.h"
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
  for (std::uint64_t i = 0; i < kLines; ++i) path.write(0, 0, kBase + 128 * i, 0, 128, 0, k.first);
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

namespace {
// A forward whose Q, K and V (2 heads of 1024 rows) fit every cache, simulated cold or after a
// warm-up run of itself.
nlohmann::json small_forward(const std::string& arch, const std::string& kernel, std::uint32_t d, bool warm) {
  report::PointSpec s = test::point_spec(arch, kernel, "fwd", 2, 1024);
  s.problem.head_dim_qk = s.problem.head_dim_v = d;
  s.warm_up = warm;
  return report::simulate_point(s);
}
}  // namespace

TEST_CASE("after a warm-up run the measured run finds what it left: the H200's L2 and MI300X's memory-side cache") {
  // Q, K and V: 3 tensors of 2 x 1024 x d bf16 values.
  const std::uint64_t h200_qkv = 3 * 2 * 1024 * 64 * 2, mi300x_qkv = 3 * 2 * 1024 * 128 * 2;
  const auto cold = small_forward("h200", "ref-cuda", 64, false), warm = small_forward("h200", "ref-cuda", 64, true);
  CHECK(cold["traffic"]["hbm_read_bytes"] == h200_qkv);
  CHECK(warm["traffic"]["hbm_read_bytes"] == 0);  // the kept L2 holds them
  CHECK(warm["traffic"]["l2_hit_rate"] == 1.0);
  CHECK(warm["warm_up"] == true);
  CHECK(cold["warm_up"] == false);
  CHECK(warm["kernels"][0]["launch_us"] == 0.0);  // times count from the measured run's launch
  CHECK(warm["time_us"].get<double>() == doctest::Approx(warm["kernels"][0]["end_us"].get<double>()));
  // MI300X's L2s are invalidated at the warm-up's end; its MALL keeps the lines, so nothing comes
  // from HBM, and O and LSE (2 x 1024 x 128 x 2 + 2 x 1024 x 4 bytes) are written back either way.
  const auto amd_cold = small_forward("mi300x", "aiter-v3", 128, false);
  const auto amd_warm = small_forward("mi300x", "aiter-v3", 128, true);
  CHECK(amd_cold["traffic"]["hbm_read_bytes"] == mi300x_qkv);
  CHECK(amd_warm["traffic"]["hbm_read_bytes"] == 0);
  CHECK(amd_warm["traffic"]["mall_hit_bytes"] == amd_warm["traffic"]["l2_fabric_read_bytes"]);
  CHECK(amd_cold["traffic"]["hbm_write_bytes"] == 2 * 1024 * 128 * 2 + 2 * 1024 * 4);
  CHECK(amd_warm["traffic"]["hbm_write_bytes"] == amd_cold["traffic"]["hbm_write_bytes"]);
}

TEST_CASE("a warm-up run with channel statistics is refused with the reason") {
  report::PointSpec s;
  s.warm_up = s.stats = true;
  CHECK_THROWS_WITH_AS(report::check_stats_option(s),
                       "--warm-up: error: key 'warm_up': the channel statistics would count the warm-up's traffic too: drop "
                       "--stats or --warm-up",
                       arch::ConfigError);
}

TEST_CASE("run --empty-caches: each backward kernel reads what it needs from HBM (by hand)") {
  // H200, ref-cuda backward, B=1, 2 heads, N=1024, d=64: each bf16 tensor 2 x 1024 x 64 x 2 B, the
  // fp32 dQ accumulator twice that, LSE and D 2 x 1024 x 4 B each; everything fits the 50 MiB L2.
  const std::uint64_t tensor = 2 * 1024 * 64 * 2, acc = 2 * tensor, stats = 2 * 1024 * 4;
  const auto reads = [](const std::string& extra) {
    const auto r = test::run_attnsim("run --json --arch h200 --kernel ref-cuda --direction bwd --batch 1 --heads 2:2 "
                                     "--seqlen 1024 --head-dim 64 --no-causal " + extra);
    REQUIRE(r.exit_code == 0);
    const auto report = nlohmann::json::parse(r.out);
    std::vector<std::uint64_t> by_kernel;
    for (const auto& k : report["kernels"]) by_kernel.push_back(k["counters"]["hbm_read_bytes"]);
    return by_kernel;  // preprocess, dQ accumulator memset, main, convert
  };
  // As the GPU runs the pass: the main kernel finds dO, D and the zeroed accumulator the kernels
  // before it left in the kept L2 and reads Q, K, V and LSE; the convert finds the accumulator.
  CHECK(reads("") == std::vector<std::uint64_t>{2 * tensor, 0, 3 * tensor + stats, 0});
  // As ncu profiles it: every kernel starts cold; the main kernel's atomics fetch the accumulator.
  CHECK(reads("--empty-caches") == std::vector<std::uint64_t>{2 * tensor, 0, 4 * tensor + 2 * stats + acc, acc});
}
