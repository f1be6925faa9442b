// Timing state of one compute unit at the granularity of tile operations: the matrix and vector
// pipes of each SIMD, the LDS, and the vector-memory issue path with its window of outstanding
// line requests.
#pragma once

#include <cstdint>
#include <vector>

#include "arch/gpu_spec.h"
#include "sim/backfill_server.h"
#include "sim/memory_path.h"
#include "sim/time.h"
#include "sim/time_breakdown.h"
#include "workloads/tile_program.h"

namespace attnsim::sim {

// Per-kernel cycle costs of the pipes, from the arch spec and the kernel's matrix instruction.
struct PipeCosts {
  Tick mfma = 0;        // matrix-pipe time of one instruction on one SIMD
  Tick mfma_block = 0;  // of that, time the SIMD's VALU cannot co-issue
  Tick mfma_result = 0; // an operation's results after its last instruction leaves the pipe (latency - cycles)
  Tick lds_result = 0;  // an LDS read's data after its transfer: cu.lds_latency (load to use)
  Tick valu = 0;        // one VALU instruction of a wave
  Tick trans = 0;       // one transcendental instruction of a wave
  Tick barrier = 0;     // one s_barrier round trip
  Tick issue = 0;       // a wave's turn at the scheduler: between two instruction issues of one wave
  double cycle = 0;     // one engine cycle, unrounded (OpCost::issue_wait's unit)
  PipeCosts() = default;
  // Contract: `mfma` may be null (a kernel without matrix work).
  PipeCosts(const arch::GpuSpec& gpu, const arch::MatrixInstruction* mfma, const Clock& engine);
};

// What a compute operation of one wave group needs: the SIMDs it spans and its instruction mix,
// `count` times over (a batch of loop iterations), `masked_count` of them with the mask cost.
struct GroupWork {
  std::uint32_t simd0 = 0, simds = 1;  // SIMDs [simd0, simd0 + simds) mod the CU's SIMDs, one wave on each
  const workloads::OpCost* cost = nullptr;
  std::uint32_t masked_count = 0;
  FinishCause waited_on;  // what the operation's issue waited on (for the time breakdown)
  std::uint32_t count = 1;
  // When the group's waves have issued their earlier operations' instructions (advanced by this
  // one's); null: instruction issue not timed.
  Tick* issued = nullptr;
};

// One CU. Contract: operations are presented in non-decreasing time order (the event engine's
// order); each reserves its pipes first come, first served, and the returned time is when its
// results are available. The MFMA pipe leaves `valu_coexec` cycles of each instruction to the
// VALU, so independent vector work of other waves overlaps matrix work (arch-facts 1.3).
class ComputeUnit {
 public:
  // `start`: when the kernel starts (the SIMDs' idle time is counted from there).
  ComputeUnit(const arch::GpuSpec& gpu, double engine_hz, Tick start = 0);

  // Matrix instructions go to each SIMD's matrix pipe; VALU and transcendental instructions (and
  // the non-co-issuable part of each MFMA) to its VALU; LDS bytes (per wave) to the CU's LDS, at its
  // bandwidth or, when the operation's wavefronts take longer, a clock per wavefront; an operation
  // that reads the LDS has its last read's data `pc.lds_result` after that read's transfer.
  // Each wave issues its instructions in order, one per `pc.issue` plus the operation's
  // fixed-latency wait per instruction (OpCost::issue_wait cycles; every instruction of the
  // operation, issue-only ones included), after its earlier operations' (*w.issued): the operation
  // finishes no earlier than its last issue (bound: issue, the wave's own instruction stream).
  // Sets *bound (when given) to what the finish was bound by: vector or LDS work, or matrix work
  // (sync, for operations waiting on it from other SIMDs). Each SIMD idle since its last work
  // until `now` adds that stretch to the breakdown as waiting on w.waited_on.
  Tick compute(Tick now, const GroupWork& w, const PipeCosts& pc, WaitCause* bound = nullptr);
  // A new engine clock for the engine-clocked servers (LDS, L1 issue).
  void set_clock(double engine_hz);
  // LDS traffic of `bytes` arriving at `now` (shared by the CU's SIMDs), served in the LDS's free
  // time from then on (loads present their writes at their data's arrival, in the future).
  Tick lds(Tick now, std::uint64_t bytes) { return bytes ? lds_.serve(now, bytes) : now; }
  // n such transfers of `bytes`, the i-th arriving at arrival_of(i): the latest of their lds()
  // returns (0 for n = 0).
  template <class ArrivalOf>
  Tick lds_series(std::uint32_t n, std::uint64_t bytes, ArrivalOf&& arrival_of) {
    return lds_.serve_series(n, bytes, arrival_of);  // a transfer of no bytes returns its arrival
  }
  // Issues a memory operation's `bytes` at `now` through the L1's issue path: when its last byte
  // has been issued.
  Tick issue(Tick now, std::uint64_t bytes) {
    lds_.prune(now);  // presented in time order, as compute operations
    return l1_.serve(now, bytes);
  }
  // A memory operation of `bytes` (issued at `now` by issue()) whose L1 lookups are `lookups`
  // wavefronts, one per clock through the L1's data stage: charges the clocks they take beyond the
  // bytes' issue time and returns when the last one is through.
  Tick lookups(Tick now, std::uint64_t lookups, std::uint64_t bytes) {
    const std::uint64_t as_bytes = lookups * l1_bytes_per_clock_;
    return l1_.serve(now, as_bytes > bytes ? as_bytes - bytes : 0);
  }
  // Holds the window of outstanding line requests for a memory operation issued at `now` whose
  // requests each hold a slot for their round trip, `slot_time` in all: when the operation's last
  // request has had its slot. The window is `memory_inflight_lines` slots served as one (Little's
  // law: at most that many requests in flight, so an operation of n requests of latency L takes at
  // least n L / slots once the window is its bottleneck).
  Tick hold_window(Tick now, Tick slot_time) { return window_.serve(now, static_cast<std::uint64_t>(slot_time)); }

  // The SIMD time so far, with the tail of each SIMD up to `end` (the kernel's last retirement).
  TimeBreakdown breakdown(Tick start, Tick end) const;
  Tick matrix_busy() const { return matrix_busy_; }  // summed over SIMDs
  Tick vector_busy() const { return vector_busy_; }
  // The part of matrix_busy() (vector_busy()) the pipes have executed by `now`: an operation
  // reserves its pipes when it issues, up to an end that may lie beyond `now`, and each SIMD's
  // reservations beyond `now` are back to back (each starts at the pipe's free time or at its
  // issue, no later than `now`). Contract: no operation presented after `now` yet.
  Tick matrix_busy_by(Tick now) const { return matrix_busy_ - reserved_beyond(matrix_free_, now); }
  Tick vector_busy_by(Tick now) const { return vector_busy_ - reserved_beyond(vector_free_, now); }
  Tick lds_busy() const { return lds_.busy(); }
  std::uint32_t resident = 0;  // workgroups on the CU now (set by the dispatcher)

 private:
  static Tick reserved_beyond(const std::vector<Tick>& free, Tick now) {
    Tick t = 0;
    for (Tick f : free) t += f > now ? f - now : 0;
    return t;
  }
  const arch::GpuSpec* gpu_;
  std::uint32_t simds_;
  std::vector<Tick> matrix_free_, vector_free_;
  BackfillServer lds_;  // tile loads write it when their data arrives, ahead of the ops issued meanwhile
  std::uint64_t lds_bytes_per_clock_ = 0;  // cu.lds_bandwidth: a wavefront's clock on lds_
  BandwidthServer l1_;
  std::uint64_t l1_bytes_per_clock_ = 0;  // l1.bandwidth: a wavefront's clock on l1_
  BandwidthServer window_;  // slot time of outstanding line requests, `memory_inflight_lines` slots
  Tick matrix_busy_ = 0, vector_busy_ = 0;
  Tick busy_union_ = 0;        // time some pipe of a SIMD was busy, summed over SIMDs
  TimeBreakdown waits_;        // idle stretches by cause
};

}  // namespace attnsim::sim
