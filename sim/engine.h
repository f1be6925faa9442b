// The timed simulation of whole kernels: workgroups dispatched to XCDs and CUs by occupancy, their
// tile operations timed on the CUs' pipes and through the memory hierarchy, kernel boundaries
// (launch gap, write-back of the L2s, drain of posted writes and atomics), and the engine clock
// set by a power controller from the activity of each control interval (clock.power).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "arch/gpu_spec.h"
#include "sim/counters.h"
#include "sim/memory_path.h"
#include "sim/occupancy.h"
#include "sim/time.h"
#include "sim/time_breakdown.h"
#include "workloads/kernel_program.h"

namespace attnsim::sim {

// Loop iterations per loop step in the approximate mode unless the user chooses: the most a kernel
// takes (docs/model.md, **Loop batching**).
inline constexpr std::uint32_t kApproximateLoopBatch = 8;
// A kernel whose passes are too short on average for EngineOptions::loop_batch halves it, but not
// below this (and not at all when loop_batch is below it).
inline constexpr std::uint32_t kHalvedLoopBatchFloor = 4;

struct EngineOptions {
  bool trace = false;        // record every workgroup's span (for --trace)
  bool approximate = false;  // tags per group of lines (TagMode::approximate; docs/model.md)
  // Loop iterations each loop-body operation stands for, at most (1: every iteration is timed on its
  // own). A batch of n issues as one operation of n times the work and tiles; a dependence d >= 1
  // iterations back becomes 1 + ceil((d - 1) / n) batches back. Each kernel takes the largest of
  // n, n / 2, n / 4, ... (not below kHalvedLoopBatchFloor) whose batches keep its timing, or 1
  // (KernelResult::loop_batch says which). Part of the approximate mode (docs/model.md).
  std::uint32_t loop_batch = 1;
  // Skip rounds of large grids, interpolating them from measured windows (sim/fast_forward.h).
  // Either tag mode; ignored with `trace` (a trace shows every workgroup).
  bool fast_forward = false;
  // Collect the per-channel statistics of the run (RunResult::stats). Not with fast_forward: the
  // channels serve only what was simulated.
  bool stats = false;
  // Each kernel starts with empty caches, their dirty lines written back outside any kernel's
  // counters and time: what a profiler's cache control does between the kernels it profiles
  // (`ncu --cache-control all`, Nsight Compute's default; NCU-CACHE). Off: kernels find what the
  // one before left (as `l2.kernel_end` says).
  bool empty_caches_per_kernel = false;
  // Simulate the passes once before the measured run and discard that run, as a benchmark's warm-up
  // calls do: the measured run finds the caches (dirty lines included), the channels' queues and
  // the engine clock the previous call left, and its times count from its own first launch. Not
  // with stats (the channels' totals would include the warm-up).
  bool warm_up = false;
  // Whether the run fast-forwards: asked for, and no trace.
  bool fast_forwards() const { return fast_forward && !trace; }
};

// What fast-forward did to a kernel (nothing when skipped_workgroups is 0).
struct FastForwardResult {
  std::uint64_t skipped_workgroups = 0;  // not simulated
  std::uint32_t windows = 0;             // measured windows the skips were interpolated from
  Tick extrapolated = 0;                 // time added for the skipped workgroups, net of the re-warm rounds replaced
};

// One workgroup's time on a CU (trace).
struct WorkgroupSpan {
  std::uint32_t xcd = 0, cu = 0;  // cu: index within the XCD
  std::uint64_t workgroup = 0;
  Tick start = 0, end = 0;
};

// Busy time of the engine-side units over a kernel.
struct UnitBusy {
  Tick matrix = 0, vector = 0, lds = 0;  // summed over SIMDs (matrix, vector) or CUs (LDS)
  LevelBusy memory;                      // summed over the channels of each level
};

struct KernelResult {
  std::string name;
  workloads::KernelKind kind = workloads::KernelKind::fwd;
  Tick launch = 0, start = 0, end = 0;  // launch: when the previous kernel ended
  std::uint64_t workgroups = 0, tile_ops = 0;
  std::uint32_t loop_batch = 1;   // loop iterations per loop step this kernel ran with
  bool persistent = false;        // KernelProgram::persistent: a CU's next workgroup loaded under its last
  Occupancy occupancy;
  double clock_hz = 0;            // time-averaged engine clock over the kernel
  double clock_min_hz = 0, clock_max_hz = 0, final_clock_hz = 0;
  std::uint32_t clock_updates = 0;  // power-controller intervals
  double power_w = 0;             // the clock model's board power at the kernel's mean activity
  bool power_limited = false, clock_pinned = false;
  double matrix_activity = 0, hbm_activity = 0, vector_activity = 0;  // what the clock model was given
  std::vector<TrafficCounters> per_xcd;
  TrafficCounters counters;  // sum of per_xcd
  UnitBusy busy;
  std::uint64_t mfma_instructions = 0, valu_instructions = 0, trans_instructions = 0;
  double mfma_flops = 0;          // issued by the matrix instructions
  std::uint64_t lds_bytes = 0;    // read and written, all waves
  Tick resident_time = 0;         // summed over workgroups: dispatch to retirement
  TimeBreakdown breakdown;        // SIMD time from start to the last retirement (`last_retire`)
  std::uint32_t simds = 0;        // SIMDs the breakdown sums over
  Tick last_retire = 0;           // the last workgroup's retirement (before posted atomics and write-back)
  std::vector<WorkgroupSpan> spans;  // with EngineOptions::trace
  FastForwardResult fast_forward;
  // EngineOptions::stats: the kernel's statistics, as RunResult::stats but counting what the kernel
  // served (its L2 write-back at the end included) and time_ps = end - launch; null otherwise.
  nlohmann::json stats;
  double time_us() const { return static_cast<double>(end - launch) / 1e6; }
};

struct RunResult {
  std::vector<KernelResult> kernels;  // in stream order
  TrafficCounters total;
  std::vector<TrafficCounters> per_xcd;  // each XCD's counters, summed over the kernels
  Tick time = 0;                      // end of the last kernel
  std::uint64_t events = 0;           // events scheduled
  std::uint64_t clock_updates = 0;    // power-controller intervals, all kernels
  std::uint64_t hierarchy_state_bytes = 0;
  bool approximate = false;           // run in the approximate tag mode
  bool fast_forward = false;          // EngineOptions::fast_forward was asked for
  bool warm_up = false;               // measured after a discarded warm-up run (EngineOptions::warm_up)
  // EngineOptions::stats: the run's statistics as nested JSON (Stats::to_json), null otherwise.
  // xcd[i].l2.{requests, hits, misses, fetch_bytes, write_bytes} per XCD (l2.* for one shared L2),
  // every channel's figures (MemoryPath::add_stats) and time_ps, the run's end.
  nlohmann::json stats;
};

// Simulates the kernels of `passes` in stream order on one GPU (the forward pass before the
// backward for `both`), after a discarded warm-up run of the same passes with `warm_up`. The
// memory-side cache keeps its contents across kernels; the L2s do what `l2.kernel_end` says at
// every kernel end (written back and invalidated, or kept); with `empty_caches_per_kernel` every
// cache is emptied before each kernel.
// Contract: deterministic (a pure function of its inputs); throws arch::ConfigError when a kernel's
// workgroup does not fit on a CU or the GPU's L2 line is not 128 B, and std::invalid_argument when
// options ask for stats together with fast-forward or a warm-up.
RunResult simulate(const std::vector<const workloads::PassPrograms*>& passes, const arch::GpuSpec& gpu,
                   const EngineOptions& options = {});

}  // namespace attnsim::sim
