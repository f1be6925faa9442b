// Benchmark: wall time of the timed engine on the default case (MI300X, aiter-v3, B=1, Hq=64,
// Hkv=8, N=8192, d=128, bf16, causal, forward and backward), one core. Targets (issue "Simulate
// kernels end to end"): <= 1 s for the default case (about 140 million line requests), <= 1 GiB
// peak memory. Reports line requests, tile operations and events per second, and peak RSS.
// Usage: attnsim_bench_engine [--seqlen N] [--batch B] [--kernel PRESET] [--approximate [--loop-batch N]] [--fast-forward]
// (--approximate: the approximate mode with its loop batching, as `attnsim run --approximate`;
// --loop-batch: its most loop iterations per step, as `attnsim run --loop-batch`;
// --fast-forward: skip and interpolate rounds of large grids, as `attnsim run --fast-forward`. The
// largest preset case: --batch 8 --seqlen 16384 --approximate --fast-forward, target <= 10 s.)
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "arch/arch_locator.h"
#include "bench/peak_rss.h"
#include "arch/spec_loader.h"
#include "sim/engine.h"
#include "workloads/presets.h"

using namespace attnsim;
using namespace attnsim::workloads;


int main(int argc, char** argv) {
  Problem p;
  p.batch = 1;
  p.heads_q = 64;
  p.heads_kv = 8;
  p.seqlen_q = p.seqlen_k = 8192;
  p.causal = true;
  std::string kernel = "aiter-v3";
  sim::EngineOptions options;
  std::uint32_t loop_batch = sim::kApproximateLoopBatch;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--approximate")) {
      options.approximate = true;
    } else if (has_value && !std::strcmp(argv[i], "--loop-batch")) {
      loop_batch = static_cast<std::uint32_t>(std::stoul(argv[++i]));
    } else if (!std::strcmp(argv[i], "--fast-forward")) {
      options.fast_forward = true;
    } else if (has_value && !std::strcmp(argv[i], "--seqlen")) {
      p.seqlen_q = p.seqlen_k = std::stoull(argv[++i]);
    } else if (has_value && !std::strcmp(argv[i], "--batch")) {
      p.batch = static_cast<std::uint32_t>(std::stoul(argv[++i]));
    } else if (has_value && !std::strcmp(argv[i], "--kernel")) {
      kernel = argv[++i];
    } else {
      std::fprintf(stderr, "attnsim_bench_engine: unknown or incomplete option '%s'\n", argv[i]);
      return 2;
    }
  }
  const auto gpu = arch::load_arch_file(arch::resolve_arch("mi300x")).spec;
  const KernelSchedule k = parse_kernel_spec(kernel);
  const PassPrograms fwd = build_pass(p, k, Direction::fwd, gpu);
  const PassPrograms bwd = build_pass(p, k, Direction::bwd, gpu);
  const auto t0 = std::chrono::steady_clock::now();
  options.loop_batch = options.approximate ? loop_batch : 1;  // the exact mode times every iteration
  const sim::RunResult r = sim::simulate({&fwd, &bwd}, gpu, options);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::uint64_t tile_ops = 0;
  for (const auto& kr : r.kernels) tile_ops += kr.tile_ops;
  const double lines = static_cast<double>(r.total.tcc_req);
  std::uint64_t skipped = 0, workgroups = 0;
  for (const auto& kr : r.kernels) {
    skipped += kr.fast_forward.skipped_workgroups;
    workgroups += kr.workgroups;
  }
  std::printf("case: %s fwd+bwd %s on MI300X, %s mode%s\n", kernel.c_str(), p.describe().c_str(),
              options.approximate ? "approximate" : "exact", options.fast_forward ? ", fast-forward" : "");
  if (options.fast_forward) {
    std::printf("fast-forward: %llu of %llu workgroups skipped and interpolated (counts below include them)\n",
                static_cast<unsigned long long>(skipped), static_cast<unsigned long long>(workgroups));
  }
  std::printf("simulated %.1f us; wall %.2f s\n", static_cast<double>(r.time) / 1e6, s);
  std::printf("L2 line requests %.1f M (%.1f M/s), tile ops %.1f M (%.2f M/s), events %.1f M (%.0f ns/event)\n",
              lines / 1e6, lines / s / 1e6, static_cast<double>(tile_ops) / 1e6, static_cast<double>(tile_ops) / s / 1e6,
              static_cast<double>(r.events) / 1e6, s * 1e9 / static_cast<double>(r.events));
  std::printf("hierarchy state %.1f MiB; peak RSS %.1f MiB\n", static_cast<double>(r.hierarchy_state_bytes) / (1 << 20),
              static_cast<double>(bench::peak_rss_kib()) / 1024);
  return 0;
}
