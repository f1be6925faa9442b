// Benchmark: cache-line tag probes per second through the MI300X L2s (one per XCD) and the MALL,
// one core, probed a tile run at a time. Target: >= 150 million probes/s; hierarchy state <= 64 MiB.
// The stream replays the memory operations of the default case (B=1, Hq=64, Hkv=8, N=8192, d=128,
// bf16, causal, aiter-v3, forward and backward): workgroup i on XCD i mod 8, eight workgroups
// interleaved op by op as they run side by side; L2 misses and write-backs go to the MALL.
// With --approximate the same stream goes through the engine's memory path in the approximate tag
// mode (tags per group of a tile's rows, every line still counted; the channels' timing included,
// the CUs' L1s too), loop iterations in steps of sim::kApproximateLoopBatch, as the engine's
// approximate mode issues the default case's forward and main backward (every kernel here): it
// reports the line requests the L2s and the MALL resolved per second.
// Usage: attnsim_bench_cache_probes [--seqlen N] [--approximate]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "arch/arch_locator.h"
#include "arch/spec_loader.h"
#include "sim/cache.h"
#include "sim/engine.h"
#include "sim/memory_path.h"
#include "workloads/kernel_program.h"
#include "workloads/presets.h"

using namespace attnsim;
using namespace attnsim::sim;
using namespace attnsim::workloads;

namespace {

// A list of runs refilled per tile: appends stay inline (std::vector's push_back is out of line in
// the probe loop and cost 16 % of this benchmark); it grows, out of line, only while warming up.
class RunList {
 public:
  void clear() { size_ = 0; }
  void push(std::uint64_t address, std::uint64_t bytes) {
    if (size_ == runs_.size()) grow();
    runs_[size_++] = Run{address, bytes};
  }
  const Run* data() const { return runs_.data(); }
  std::size_t size() const { return size_; }
  const Run* begin() const { return runs_.data(); }
  const Run* end() const { return runs_.data() + size_; }

 private:
  [[gnu::noinline]] void grow() { runs_.resize(std::max<std::size_t>(64, 2 * runs_.size())); }
  std::vector<Run> runs_;
  std::size_t size_ = 0;
};

// Calls f(wg, cursor, op) for every memory operation of kernel `kp`: its workgroups eight at a time
// (workgroup i on XCD i mod 8), interleaved op by op as they run side by side, loop iterations in
// steps of `batch`.
template <class F>
void for_each_memory_op(const arch::GpuSpec& gpu, const PassPrograms& pp, const KernelProgram& kp, std::uint32_t batch,
                        F&& f) {
  std::vector<WorkgroupCursor> cursors;
  for (std::uint64_t wg0 = 0; wg0 < kp.workgroups(); wg0 += gpu.chip.xcds) {
    cursors.clear();
    for (std::uint64_t wg = wg0; wg < std::min(kp.workgroups(), wg0 + gpu.chip.xcds); ++wg) {
      cursors.emplace_back(pp, kp, wg, nullptr, batch);
    }
    for (bool any = true; any;) {
      any = false;
      for (std::size_t c = 0; c < cursors.size(); ++c) {
        TileOp op;
        if (!cursors[c].next(op)) continue;
        any = true;
        if (is_memory(op.op->action)) f(wg0 + c, cursors[c], op);
      }
    }
  }
}

// The default case's memory operations through MemoryPath in the approximate tag mode.
int replay_approximate(const arch::GpuSpec& gpu, const Problem& p, const KernelSchedule& k) {
  MemoryPath memory(gpu, gpu.clock.engine_max.value, TagMode::approximate);
  std::vector<TrafficCounters> per_xcd(gpu.chip.xcds);
  std::vector<RowSpan> spans;  // reused: no allocation once grown
  double seconds = 0;
  std::uint64_t bytes = 0;
  for (Direction d : {Direction::fwd, Direction::bwd}) {
    const PassPrograms pp = build_pass(p, k, d, gpu);
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& kp : pp.kernels) {
      memory.start_kernel();
      for_each_memory_op(gpu, pp, kp, kApproximateLoopBatch, [&](std::uint64_t wg, const WorkgroupCursor& cursor, const TileOp& op) {
        const std::uint32_t xcd = static_cast<std::uint32_t>(wg % gpu.chip.xcds);
        const std::uint32_t cu = static_cast<std::uint32_t>((wg / gpu.chip.xcds) % gpu.chip.cus_per_xcd);
        const TensorDesc& desc = (*pp.tensors)[op.op->tensor];
        spans.clear();
        for (std::uint64_t i = op.first; i < op.first + op.count; ++i) {  // a step of loop iterations
          for_each_tile(pp, kp, *op.op, cursor.current_pass(), i, [&](const TileRef& t) { bytes += append_tile_rows(spans, desc, t); });
        }
        if (spans.empty()) return;
        if (op.op->action == Action::atomic_dq) {
          memory.atomic_spans(xcd, xcd * gpu.chip.cus_per_xcd + cu, spans.data(), spans.size(), 0, per_xcd[xcd]);
        } else if (is_store(op.op->action)) {
          memory.write_spans(xcd, xcd * gpu.chip.cus_per_xcd + cu, spans.data(), spans.size(), 0, per_xcd[xcd]);
        } else {
          memory.read_spans(xcd, xcd * gpu.chip.cus_per_xcd + cu, spans.data(), spans.size(), 0, per_xcd[xcd]);
        }
      });
      memory.end_kernel(0, per_xcd);
    }
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  TrafficCounters total;
  for (const auto& c : per_xcd) total.add(c);
  const double l2 = static_cast<double>(total.tcc_req);
  const double mall = static_cast<double>(total.mall_read_hits + total.mall_read_misses);
  std::printf("case: %s aiter-v3 fwd+bwd, memory ops through the memory path, approximate tags\n", p.describe().c_str());
  std::printf("bytes requested: %.2f GB\nL2 line requests: %.1f M (hit rate %.1f %%), MALL line lookups: %.1f M\n", bytes / 1e9,
              l2 / 1e6, 100 * total.l2_hit_rate(), mall / 1e6);
  std::printf("time: %.3f s (workload streaming and channel timing included)\n", seconds);
  std::printf("rate: %.1f million L2 line requests/s, %.1f million L2 + MALL line lookups/s\n", l2 / seconds / 1e6,
              (l2 + mall) / seconds / 1e6);
  std::printf("hierarchy tag state: %.1f MiB\n", memory.state_bytes() / 1048576.0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t seqlen = 8192;
  bool approximate = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--approximate") == 0) {
      approximate = true;
    } else if (std::strcmp(argv[i], "--seqlen") == 0 && i + 1 < argc) {
      seqlen = std::stoull(argv[++i]);
    } else {
      std::fprintf(stderr, "attnsim_bench_cache_probes: unknown or incomplete option '%s'\n", argv[i]);
      return 2;
    }
  }
  const arch::GpuSpec gpu = arch::load_arch_file(arch::resolve_arch("mi300x")).spec;
  std::vector<SetAssocCache> l2;
  for (std::uint32_t x = 0; x < gpu.chip.xcds; ++x) {
    l2.emplace_back(gpu.l2.size.value, gpu.l2.ways, static_cast<std::uint32_t>(gpu.l2.line.value), WritePolicy::write_back, 1,
                    SetIndex::modulo, 0, gpu.hbm.capacity.value);
  }
  SetAssocCache mall(gpu.mall.size.value, gpu.mall.ways, static_cast<std::uint32_t>(gpu.mall.line.value),
                     WritePolicy::write_through, 1, SetIndex::modulo, 0, gpu.hbm.capacity.value);
  std::uint64_t state = mall.state_bytes();
  for (const auto& c : l2) state += c.state_bytes();

  Problem p;
  p.heads_q = 64;
  p.heads_kv = 8;
  p.seqlen_q = p.seqlen_k = seqlen;
  p.causal = true;
  const KernelSchedule k = parse_kernel_spec("aiter-v3");
  if (approximate) return replay_approximate(gpu, p, k);
  std::uint64_t probes = 0, l2_misses = 0, mall_misses = 0, bytes = 0;
  RunList runs, misses, writebacks;  // reused: no allocation once grown
  double seconds = 0;
  for (Direction d : {Direction::fwd, Direction::bwd}) {
    const PassPrograms pp = build_pass(p, k, d, gpu);
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& kp : pp.kernels) {
      for_each_memory_op(gpu, pp, kp, 1, [&](std::uint64_t wg, const WorkgroupCursor& cursor, const TileOp& op) {
        SetAssocCache& cache = l2[wg % gpu.chip.xcds];
        const bool write = is_store(op.op->action);
        // Batch a tile's rows: L2 probes for all of them, then the MALL probes of all its misses.
        runs.clear();
        for_each_tile(pp, kp, *op.op, cursor.current_pass(), op.iteration, [&](const TileRef& t) {
          const TensorDesc& desc = (*pp.tensors)[op.op->tensor];
          for_each_run(desc, t.slice, t.b, t.head, t.row0, t.rows, [&](std::uint64_t a, std::uint64_t n) { runs.push(a, n); });
        });
        misses.clear();
        writebacks.clear();
        for (const Run& r : runs) bytes += r.bytes;
        const ProbeResult r = cache.access_runs(
            runs.data(), runs.size(), write,
            [&](std::uint64_t ma, std::uint64_t lines) { misses.push(ma, lines * gpu.l2.line.value); },
            [&](std::uint64_t wa) { writebacks.push(wa, gpu.l2.line.value); });
        probes += r.hits + r.misses;
        l2_misses += r.misses;
        const ProbeResult m =
            mall.access_runs(misses.data(), misses.size(), false, [](std::uint64_t, std::uint64_t) {}, [](std::uint64_t) {});
        const ProbeResult w =
            mall.access_runs(writebacks.data(), writebacks.size(), true, [](std::uint64_t, std::uint64_t) {}, [](std::uint64_t) {});
        probes += m.hits + m.misses + w.hits + w.misses;
        mall_misses += m.misses;
      });
      for (auto& c : l2) c.invalidate();  // kernel boundary
      if (std::getenv("ATTNSIM_BENCH_VERBOSE")) std::fprintf(stderr, "%s done: %llu probes\n", kp.name.c_str(), static_cast<unsigned long long>(probes));
    }
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  std::printf("case: %s aiter-v3 fwd+bwd, memory ops replayed through 8 L2s and the MALL\n", p.describe().c_str());
  std::printf("bytes requested: %.2f GB\ntag probes: %llu (L2 misses %llu, MALL misses %llu)\n", bytes / 1e9,
              static_cast<unsigned long long>(probes), static_cast<unsigned long long>(l2_misses),
              static_cast<unsigned long long>(mall_misses));
  std::printf("time: %.3f s (workload streaming included)\nrate: %.1f million probes/s\n", seconds, probes / seconds / 1e6);
  std::printf("hierarchy tag state: %.1f MiB (8 L2s + MALL)\n", state / 1048576.0);
  return 0;
}
