// Benchmark: tile operations instantiated per second by WorkgroupCursor for the largest preset
// case (B=8, Hq=64, Hkv=8, N=16384, d=128, bf16, causal), forward and backward, on one core.
// Target (issue "Flash-attention workloads"): >= 100 million per second; memory independent of
// the number of workgroups. Usage: attnsim_bench_tile_ops [--kernel PRESET] [--seqlen N]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "arch/arch_locator.h"
#include "bench/peak_rss.h"
#include "arch/spec_loader.h"
#include "workloads/kernel_program.h"
#include "workloads/presets.h"

using namespace attnsim;
using namespace attnsim::workloads;


int main(int argc, char** argv) {
  std::string kernel = "aiter-v3";
  std::uint64_t seqlen = 16384;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--kernel") == 0) kernel = argv[i + 1];
    if (std::strcmp(argv[i], "--seqlen") == 0) seqlen = std::stoull(argv[i + 1]);
  }
  Problem p;
  p.batch = 8;
  p.heads_q = 64;
  p.heads_kv = 8;
  p.seqlen_q = p.seqlen_k = seqlen;
  p.causal = true;
  const KernelSchedule k = parse_kernel_spec(kernel);
  const arch::GpuSpec gpu = arch::load_arch_file(arch::resolve_arch(k.native_arch)).spec;

  std::uint64_t ops = 0, memory_ops = 0, workgroups = 0;
  double seconds = 0;
  for (Direction d : {Direction::fwd, Direction::bwd}) {
    const PassPrograms pp = build_pass(p, k, d, gpu);
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& kp : pp.kernels) {
      for (std::uint64_t wg = 0; wg < kp.workgroups(); ++wg) {
        WorkgroupCursor cur(pp, kp, wg);
        TileOp op;
        while (cur.next(op)) {
          ++ops;
          memory_ops += op.op->pipe == Pipe::memory;
        }
      }
      workgroups += kp.workgroups();
    }
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  std::printf("case: %s, kernel %s, fwd+bwd\n", p.describe().c_str(), k.name.c_str());
  std::printf("workgroups: %llu\ntile ops: %llu (memory ops %llu)\ntime: %.3f s\nrate: %.1f million tile ops/s\n",
              static_cast<unsigned long long>(workgroups), static_cast<unsigned long long>(ops),
              static_cast<unsigned long long>(memory_ops), seconds, ops / seconds / 1e6);
  std::printf("peak RSS: %.1f MiB\n", bench::peak_rss_kib() / 1024.0);
  return 0;
}
