#include "sim/engine.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>

#include "arch/clock_model.h"
#include "arch/config_error.h"
#include "sim/compute_unit.h"
#include "sim/event_queue.h"
#include "sim/fast_forward.h"

namespace attnsim::sim {

using workloads::Action;
using workloads::CompiledBody;
using workloads::KernelProgram;
using workloads::OpTemplate;
using workloads::PassPrograms;
using workloads::Pipe;
using workloads::TileOp;
using workloads::TileRef;
using workloads::WorkgroupCursor;

namespace {

constexpr Tick kUnknown = std::numeric_limits<Tick>::max();
constexpr std::uint32_t kNoSlot = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint32_t kControl = 0, kFinish = 1;  // event kinds; 2 + lane wakes a lane
// Loop iterations are batched (EngineOptions::loop_batch) only in kernels whose grid fills at least
// kBatchRounds rounds of the GPU and whose passes span at least kBatchMinSteps batches on average
// (KernelRun::loop_batch_for; docs/model.md).
constexpr std::uint64_t kBatchRounds = 2;
constexpr std::uint64_t kBatchMinSteps = 16;

// One in-order issue stream of a workgroup: lane 0 issues its loads, lane 1 its stores and atomics
// (the compiler hoists the next tiles' loads above this tile's stores), lane 2 + g the compute
// operations of wave group g (one wave per SIMD). Lanes advance independently; they
// meet at dependences, at barriers (sync ops join every wave group) and at phase boundaries
// (prologue, loop, epilogue of each pass), where every lane waits for all work issued before.
struct Lane {
  std::optional<WorkgroupCursor> cursor;
  TileOp pending;
  bool has_pending = false, exhausted = false;
  bool waiting = false;    // blocked on a dependence another lane has not issued yet
  std::size_t awaited = 0;  // while waiting: the finish-table entry whose recording wakes the lane
  // The pending op's issue time and what bound it, once every dependence is recorded (recorded
  // finishes never change, so the lane's wake at that time need not look them up again).
  bool timed = false;
  Tick ready = 0;
  FinishCause ready_cause;
  bool at_phase = false;   // arrived at the phase boundary
  // A wave group's lane: when its last barrier released the waves (nothing after it issues
  // earlier: a wave resumes past s_barrier only once the barrier resolves).
  Tick released = 0;
  // A wave group's lane: when its waves have issued every instruction of their operations so far.
  Tick issued = 0;
};

// When an issued operation finishes and what bound it (kUnknown: not issued yet).
struct Finish {
  Tick time = kUnknown;
  FinishCause cause;
};
constexpr Finish kNotIssued{};

// A resident workgroup and the finish times of its issued operations.
struct Resident {
  std::uint64_t wg = 0;
  std::uint32_t cu = 0, xcd = 0, simd0 = 0;
  std::vector<Lane> lanes;
  std::uint32_t phase = 0, arrived = 0, joined = 0;
  Tick phase_start = 0, join_time = 0, max_finish = 0, start = 0;
  std::vector<Finish> table;       // finish times: [prologue | epilogue | loop ring slot] x op x lane
  std::vector<std::int64_t> ring;  // iteration held by each loop ring slot
  Tick ahead_finish = 0;  // the latest finish of the ops a producer issued ahead of the current phase
  // Loads whose waves keep few bytes in flight (OpCost::wave_bytes_in_flight): when the workgroup's
  // waves are through the ones issued so far (they load one after another).
  Tick loads_free = 0;
  // Persistent kernels (KernelProgram::persistent): `gated` while the workgroup whose CU slot this
  // one took has not retired (its wave groups issue nothing); `handed_off` once this one has given
  // its slot to the next; `successor`: the workgroup gated on this one (kNoSlot: none).
  bool gated = false, handed_off = false;
  std::uint32_t successor = kNoSlot;
};

// Static facts of the kernel being run, shared by its workgroups.
struct KernelShape {
  const PassPrograms* pp = nullptr;
  const KernelProgram* kp = nullptr;
  std::uint32_t groups = 1, lanes = 3;  // wave groups; lanes = groups + 2
  std::uint32_t batch = 1;              // loop iterations per loop step (EngineOptions::loop_batch)
  std::uint32_t ring = 1;               // loop steps whose finish times are kept (a power of two)
  std::uint32_t lookahead = 1;          // a loop memory op waits for the loop's last op this many steps back
  std::vector<std::uint16_t> carried_steps;  // each carried dependence's distance in loop steps
  std::size_t pro_offset = 0, epi_offset = 0, loop_offset = 0, loop_stride = 0, table_size = 0;
  // The first finish-table entry of each op within its body's block: a memory op has one entry
  // (its lane's), a compute or sync op one per wave group.
  std::array<std::vector<std::uint32_t>, 3> op_entry;
  // Who issues each op: its memory lane (kLoadLane, kStoreLane), or kFirstGroupLane for every wave
  // group (compute and sync ops). Kept apart from the op templates, which the hot path need not touch.
  std::array<std::vector<std::uint8_t>, 3> issuer;
  std::array<workloads::OpFilter, 3> filters;  // the operations the load, store and wave-group lanes issue
  const CompiledBody& body(std::uint8_t b) const { return b == 0 ? kp->prologue : (b == 1 ? kp->body : kp->epilogue); }
  std::uint32_t waves_in_group(std::uint32_t g, std::uint32_t simds) const {
    return std::min(simds, kp->waves - g * simds);
  }
};

std::uint32_t phase_of(const TileOp& op) { return op.pass * 3 + op.body; }
constexpr std::uint32_t kLoadLane = 0, kStoreLane = 1, kFirstGroupLane = 2;
bool is_memory_op(const OpTemplate& op) { return op.pipe == Pipe::memory; }
// The longest carried distance of a loop body, in iterations (1 without carried dependences).
std::uint32_t max_carried_distance(const CompiledBody& body) {
  std::uint32_t d = 1;
  for (const auto& c : body.carried) d = std::max<std::uint32_t>(d, c.distance);
  return d;
}
std::uint32_t memory_lane(const OpTemplate& op) { return workloads::is_store(op.action) ? kStoreLane : kLoadLane; }

const arch::MatrixInstruction* instruction_of(const arch::GpuSpec& gpu, const KernelProgram& kp) {
  return gpu.cu.matrix_instruction(kp.mfma);
}
// What the kernel's OpCost::mfma counts: its instruction's work unit (none without matrix work).
std::optional<arch::MatrixInstruction> work_unit_of(const arch::GpuSpec& gpu, const KernelProgram& kp) {
  const arch::MatrixInstruction* m = instruction_of(gpu, kp);
  if (!m) return std::nullopt;
  return m->work_unit();
}

// The activity the clock model needs, from what a stretch of `span` showed: the matrix and vector
// pipes' busy times (each summed over all SIMDs) and the HBM bytes moved. Fractions are capped at 1.
arch::Activity measured_activity(const arch::GpuSpec& gpu, const arch::MatrixInstruction* m, Tick matrix_busy,
                                 Tick vector_busy, std::uint64_t hbm_bytes, Tick span) {
  arch::Activity a;
  if (span <= 0) return a;
  const auto simds = static_cast<double>(gpu.total_simds());
  if (m) {
    a.matrix[static_cast<std::size_t>(m->dtype)] =
        std::min(1.0, static_cast<double>(matrix_busy) / (simds * static_cast<double>(span)));
  }
  a.vector = std::min(1.0, static_cast<double>(vector_busy) / (simds * static_cast<double>(span)));
  a.stream = std::min(1.0, static_cast<double>(hbm_bytes) / (static_cast<double>(span) / 1e12) / gpu.hbm.peak_bandwidth.value);
  return a;
}

// Runs one kernel on the GPU from `launch` on.
class KernelRun {
 public:
  KernelRun(const arch::GpuSpec& gpu, MemoryPath& memory, const PassPrograms& pp, const KernelProgram& kp,
            double clock_hz, const EngineOptions& options)
      : gpu_(gpu), memory_(memory), engine_(clock_hz), options_(options), mfma_unit_(work_unit_of(gpu, kp)) {
    shape_.pp = &pp;
    shape_.kp = &kp;
    const std::uint32_t simds = gpu.cu.simds;
    shape_.groups = std::max<std::uint32_t>(1, (kp.waves + simds - 1) / simds);
    shape_.lanes = shape_.groups + kFirstGroupLane;
    std::array<std::size_t, 3> widths{};
    for (std::uint8_t b = 0; b < 3; ++b) {
      const CompiledBody& body = shape_.body(b);
      for (std::uint16_t i = 0; i < body.ops.size(); ++i) {
        const OpTemplate& t = body.ops[i];
        const std::uint32_t issuer = is_memory_op(t) ? memory_lane(t) : kFirstGroupLane;
        shape_.op_entry[b].push_back(static_cast<std::uint32_t>(widths[b]));
        shape_.issuer[b].push_back(static_cast<std::uint8_t>(issuer));
        shape_.filters[issuer].ops[b].push_back(i);  // the wave-group lanes share the last filter
        widths[b] += is_memory_op(t) ? 1 : shape_.groups;
      }
    }
    shape_.pro_offset = 0;
    shape_.epi_offset = widths[0];
    shape_.loop_offset = shape_.epi_offset + widths[2];
    shape_.loop_stride = widths[1];
  }

  // The loop iterations per step that keep this kernel's timing (1: none), as measured against
  // unbatched and exact runs (docs/model.md, **Loop batching**): batching keeps a kernel's
  // throughput, not a lone workgroup's critical path (so the grid must fill kBatchRounds rounds of
  // the GPU's `slots`); only a workgroup alone on its CU keeps its pipes' interleaving (its lanes
  // advance in step, while several workgroups' batches would interleave coarsely); a loop without
  // prefetch pays each iteration's load latency, a batch only once; and the passes must span
  // kBatchMinSteps batches on average (each pass fills and drains its pipeline in steps of its own),
  // so short passes halve EngineOptions::loop_batch, down to kHalvedLoopBatchFloor.
  std::uint32_t loop_batch_for(const KernelProgram& kp, std::uint64_t slots) const {
    std::uint32_t batch = std::max<std::uint32_t>(1, options_.loop_batch);
    if (batch == 1 || per_cu_ != 1 || kp.inner_rows == 0 || kp.workgroups() < kBatchRounds * slots) return 1;
    if (max_carried_distance(kp.body) < 2) return 1;
    // The passes of one period of the grid (every period repeats its blocks).
    std::uint64_t passes = 0, iterations = 0;
    for (std::uint64_t wg = 0; wg < std::min(grid_period(kp), kp.workgroups()); ++wg) {
      const std::uint32_t n = kp.passes(wg);
      for (std::uint32_t i = 0; i < n; ++i) iterations += kp.pass(wg, i).iterations();
      passes += n;
    }
    while (iterations < kBatchMinSteps * batch * passes) {
      if (batch / 2 < kHalvedLoopBatchFloor) return 1;  // a batch at or below the floor is never halved
      batch /= 2;
    }
    return batch;
  }

  // The grid's period in dispatch order: a batch, or under longest_first a section of heads (its
  // work runs from the longest blocks to the shortest once per section).
  static std::uint64_t grid_period(const KernelProgram& kp) {
    return kp.grid == workloads::GridOrder::longest_first ? kp.section_heads * kp.grid_blocks : kp.grid_blocks * kp.heads;
  }

  // Sets the loop iterations per step and what depends on it. A dependence d >= 1 iterations back
  // lets an operation start d - 1 iterations before its dependence's next ones finish (d = 2: a
  // load one iteration ahead of the compute); in steps that is 1 + ceil((d - 1) / batch) steps
  // back, which keeps the overlap (a step's loads during the step before) and is d for a batch of 1.
  void set_batch(std::uint32_t batch) {
    const KernelProgram& kp = *shape_.kp;
    shape_.batch = batch = std::max<std::uint32_t>(1, batch);
    const auto steps = [batch](std::uint32_t d) { return d == 0 ? 0 : 1 + (d - 1 + batch - 1) / batch; };
    shape_.carried_steps.clear();
    for (const auto& c : kp.body.carried) shape_.carried_steps.push_back(static_cast<std::uint16_t>(steps(c.distance)));
    shape_.lookahead = steps(max_carried_distance(kp.body));
    shape_.ring = std::bit_ceil(2 * shape_.lookahead + 2);
    shape_.table_size = shape_.loop_offset + shape_.ring * shape_.loop_stride;
  }

  KernelResult run(Tick launch) {
    const KernelProgram& kp = *shape_.kp;
    KernelResult r;
    r.name = kp.name;
    r.kind = kp.kind;
    r.launch = launch;
    r.start = launch + gpu_.dispatch.launch_overhead.value;
    r.workgroups = kp.workgroups();
    r.persistent = kp.persistent;
    r.occupancy = occupancy(gpu_, kp.waves + kp.load_waves, std::max<std::uint32_t>(kp.vgprs, 1), kp.lds_bytes);
    if (r.occupancy.workgroups_per_cu == 0) {
      throw arch::ConfigError(arch::ValueOrigin{"--kernel " + shape_.pp->schedule.name, 0, 0, {}}, kp.name,
                              "a workgroup does not fit on a " + gpu_.name + " CU (limited by " +
                                  r.occupancy.limited_by + ")");
    }
    try {
      split_l1(gpu_, kp.lds_bytes, kp.lds_carveout, r.occupancy);
    } catch (const std::invalid_argument& e) {
      throw arch::ConfigError(arch::ValueOrigin{"--kernel " + shape_.pp->schedule.name, 0, 0, {}},
                              std::string(kp.kind == workloads::KernelKind::fwd ? "fwd" : "bwd") + ".lds_carveout", e.what());
    }
    if (!gpu_.l1.carveouts.empty()) memory_.set_l1_bytes(r.occupancy.l1_bytes);  // the kernel's split of the array
    if (options_.empty_caches_per_kernel) {
      memory_.empty_caches();
    } else {
      memory_.start_kernel();
    }
    const LevelBusy memory_before = memory_.busy();
    xcds_ = gpu_.dispatch.xcds_per_partition;
    cus_per_xcd_ = gpu_.chip.cus_per_xcd;
    per_cu_ = r.occupancy.workgroups_per_cu;
    const std::uint64_t slots = static_cast<std::uint64_t>(xcds_) * cus_per_xcd_ * per_cu_;
    set_batch(loop_batch_for(kp, slots));
    r.loop_batch = shape_.batch;
    const std::uint64_t caches = gpu_.l2_total_bytes() + (gpu_.mall.present ? gpu_.mall.size.value : 0);
    const bool fast_forward = options_.fast_forwards();
    const std::uint64_t period = grid_period(kp);
    bool equal_work = true;  // over a period (every batch repeats it)
    const std::uint64_t first_ops = fast_forward ? kp.tile_ops(0) : 0;
    for (std::uint64_t wg = 1; fast_forward && equal_work && wg < std::min(period, r.workgroups); ++wg) {
      equal_work = kp.tile_ops(wg) == first_ops;
    }
    fast_forward_ = FastForward(fast_forward, r.workgroups, slots, static_cast<std::uint64_t>(cus_per_xcd_) * per_cu_,
                                caches, period, equal_work);
    if (fast_forward_.active() && !equal_work && kp.grid == workloads::GridOrder::longest_first) fast_forward_.set_sorted_periods();
    fast_forward_.set_sequence([this](std::uint32_t x, std::uint64_t n) { return sequence_ops(*shape_.kp, x, n, 1); });
    dispatched_ = 0;
    cus_.clear();
    cus_.reserve(static_cast<std::size_t>(xcds_) * cus_per_xcd_);
    for (std::uint32_t i = 0; i < xcds_ * cus_per_xcd_; ++i) cus_.emplace_back(gpu_, engine_.hz(), r.start);
    apply_clock(engine_.hz());  // each XCD's CUs, pipe costs and L2 at its own clock
    next_simd_.assign(cus_.size(), 0);
    residents_.clear();
    // A persistent kernel's CU holds a workgroup that has handed its slot on and the one that took it.
    const std::uint64_t per_slot = kp.persistent ? 2 : 1;
    residents_.resize(std::min<std::uint64_t>(r.workgroups, cus_.size() * per_cu_ * per_slot));
    awaiting_.assign(cus_.size(), {});
    free_.clear();
    for (std::size_t i = residents_.size(); i-- > 0;) free_.push_back(static_cast<std::uint32_t>(i));
    for (Resident& s : residents_) {
      s.lanes.resize(shape_.lanes);
      s.table.assign(shape_.table_size, kNotIssued);
      s.ring.assign(shape_.ring, -1);
    }
    next_of_xcd_.assign(xcds_, 0);
    xcd_tile_ops_.assign(xcds_, 0);
    next_id_ = 0;
    per_xcd_.assign(xcds_, TrafficCounters{});
    result_ = &r;
    last_end_ = r.start;
    drain_ = r.start;
    active_ = 0;
    control_start_ = r.start;
    control_matrix_ = 0;
    control_vector_ = 0;
    control_hbm_ = 0;
    clock_time_ = 0;
    r.clock_min_hz = r.clock_max_hz = engine_.hz();
    for (std::uint32_t x = 0; x < xcds_; ++x) dispatch(x, r.start);
    if (!gpu_.clock.engine_pinned) queue_.schedule(r.start + gpu_.clock.control_interval.value, 2, 0, kControl);
    Event e;
    while (queue_.pop(e)) {
      if (e.kind == kControl) {
        control(e.time);
      } else if (e.kind == kFinish) {
        retire(e.target, e.time);
      } else {
        step(e.target, residents_[e.target], e.kind - 2, e.time);
      }
    }
    Tick end = std::max(last_end_, drain_);
    clock_time_ += engine_.hz() * static_cast<double>(end - control_start_);
    r.final_clock_hz = engine_.hz();
    r.end = memory_.end_kernel(end, per_xcd_);
    r.per_xcd = per_xcd_;
    for (const auto& c : per_xcd_) r.counters.add(c);
    r.last_retire = last_end_;
    r.simds = static_cast<std::uint32_t>(cus_.size()) * gpu_.cu.simds;
    for (const ComputeUnit& cu : cus_) {
      r.breakdown.add(cu.breakdown(r.start, last_end_));
      r.busy.matrix += cu.matrix_busy();
      r.busy.vector += cu.vector_busy();
      r.busy.lds += cu.lds_busy();
    }
    const LevelBusy after = memory_.busy();
    r.busy.memory = after;
    r.busy.memory.l2 -= memory_before.l2;
    r.busy.memory.link -= memory_before.link;
    r.busy.memory.mall -= memory_before.mall;
    r.busy.memory.hbm -= memory_before.hbm;
    const Tick before = r.end;
    fast_forward_.extrapolate(r, r.simds, clock_time_);
    end += r.end - before;
    r.clock_hz = end > r.start ? clock_time_ / static_cast<double>(end - r.start) : engine_.hz();
    r.mfma_flops = static_cast<double>(r.mfma_instructions) * (mfma_unit_ ? mfma_unit_->flops() : 0.0);
    events_ = queue_.scheduled();
    return r;
  }

  std::uint64_t events() const { return events_; }

 private:
  void wake(std::uint32_t slot, std::uint32_t lane, Tick t) { queue_.schedule(t, 0, slot, 2 + lane); }
  // The kernel's matrix work unit, or null for a kernel without matrix work.
  const arch::MatrixInstruction* mfma() const { return mfma_unit_ ? &*mfma_unit_ : nullptr; }

  // The workgroup id XCD `x` starts n-th: ids go to XCDs round-robin from dispatch.first_xcd.
  std::uint64_t workgroup_of(std::uint32_t x, std::uint64_t n) const {
    return (x + xcds_ - gpu_.dispatch.first_xcd % xcds_) % xcds_ + n * xcds_;
  }

  // The tile operations of the `count` workgroups XCD `x` starts from its `first`-th on (ids past
  // the grid's end count none).
  std::uint64_t sequence_ops(const KernelProgram& kp, std::uint32_t x, std::uint64_t first, std::uint64_t count) const {
    std::uint64_t ops = 0;
    for (std::uint64_t n = first; n < first + count; ++n) {
      const std::uint64_t wg = workgroup_of(x, n);
      if (wg < kp.workgroups()) ops += kp.tile_ops(wg);
    }
    return ops;
  }

  // The XCD workgroup id `wg` goes to (the inverse of workgroup_of).
  std::uint32_t xcd_of(std::uint64_t wg) const {
    return static_cast<std::uint32_t>((wg + gpu_.dispatch.first_xcd) % xcds_);
  }

  // The least loaded CU of XCD `x` with room for a workgroup (its index within the XCD), or
  // cus_per_xcd_ when every one is full.
  std::uint32_t roomiest_cu(std::uint32_t x) const {
    std::uint32_t best = cus_per_xcd_;
    for (std::uint32_t c = 0; c < cus_per_xcd_; ++c) {
      const std::uint32_t r = cus_[x * cus_per_xcd_ + c].resident;
      if (r < per_cu_ && (best == cus_per_xcd_ || r < cus_[x * cus_per_xcd_ + best].resident)) best = c;
    }
    return best;
  }

  // Starts what the dispatcher can after XCD `x` gained room (or at launch). round_robin: each XCD
  // starts its own share in id order while one of its CUs has room, whatever the others do.
  // round_robin_blocking: one dispatcher hands out ids in order and waits at an id whose XCD is
  // full, so no XCD runs more than one workgroup ahead of the others in the id sequence.
  void dispatch(std::uint32_t x, Tick now) {
    const std::uint64_t total = shape_.kp->workgroups();
    if (gpu_.dispatch.order == arch::DispatchOrder::round_robin_blocking) {
      for (;;) {
        const std::uint64_t wg = next_id_;
        if (wg >= total || free_.empty()) return;
        const std::uint32_t to = xcd_of(wg);
        const std::uint32_t best = roomiest_cu(to);
        if (best == cus_per_xcd_) return;
        ++next_id_;
        start(to, best, wg, now);
      }
    }
    for (;;) {
      const std::uint64_t wg = workgroup_of(x, next_of_xcd_[x]);
      if (wg >= total || free_.empty()) return;
      const std::uint32_t best = roomiest_cu(x);
      if (best == cus_per_xcd_) return;
      start(x, best, wg, now);
    }
  }

  // Starts workgroup `wg` on CU `best` of XCD `x`.
  void start(std::uint32_t x, std::uint32_t best, std::uint64_t wg, Tick now) {
    const KernelProgram& kp = *shape_.kp;
    ++next_of_xcd_[x];
    const std::uint32_t cu = x * cus_per_xcd_ + best;
    ++cus_[cu].resident;
    const std::uint32_t slot = free_.back();
    free_.pop_back();
    Resident& s = residents_[slot];
    s.wg = wg;
    s.cu = cu;
    s.xcd = x;
    s.simd0 = next_simd_[cu];
    next_simd_[cu] = (next_simd_[cu] + kp.waves) % gpu_.cu.simds;
    s.phase = 0;
    s.arrived = s.joined = 0;
    s.phase_start = s.max_finish = s.start = now;
    s.join_time = 0;
    s.ahead_finish = 0;
    s.loads_free = now;
    std::fill(s.table.begin(), s.table.end(), kNotIssued);
    std::fill(s.ring.begin(), s.ring.end(), -1);
    s.gated = s.handed_off = false;
    s.successor = kNoSlot;
    if (!awaiting_[cu].empty()) {  // the slot of a workgroup still finishing: compute after it retires
      residents_[awaiting_[cu].front()].successor = slot;
      awaiting_[cu].erase(awaiting_[cu].begin());
      s.gated = true;
    }
    ++dispatched_;
    fast_forward(now);
    for (std::uint32_t l = 0; l < shape_.lanes; ++l) {
      Lane& lane = s.lanes[l];
      lane.cursor.emplace(*shape_.pp, kp, wg, &shape_.filters[std::min(l, kFirstGroupLane)], shape_.batch);
      lane.has_pending = lane.exhausted = lane.waiting = lane.at_phase = lane.timed = false;
      lane.released = now;
      lane.issued = now;
      wake(slot, l, now);
    }
    ++active_;
  }

  // After a dispatch: at a fast-forward window's boundary, takes the kernel's snapshot and skips
  // what the plan says: the workgroups next in each XCD's dispatch order (sim/fast_forward.h).
  void fast_forward(Tick now) {
    if (!fast_forward_.active()) return;
    DispatchProgress p;
    p.dispatched = dispatched_;
    p.tile_ops = result_->tile_ops;
    p.now = now;
    for (const TrafficCounters& c : per_xcd_) {
      p.filled_bytes += c.fetch_size_bytes() + c.requested_write_bytes;
      p.fabric_requests += c.ea_rdreq;
      p.memory_read_bytes += c.hbm_read_bytes;
    }
    const KernelProgram& kp = *shape_.kp;
    std::vector<std::uint64_t>& remaining = remaining_;
    remaining.resize(xcds_);
    for (std::uint32_t x = 0; x < xcds_; ++x) {
      const std::uint64_t first = workgroup_of(x, 0);
      const std::uint64_t ids = kp.workgroups() > first ? (kp.workgroups() - first + xcds_ - 1) / xcds_ : 0;
      remaining[x] = ids - next_of_xcd_[x];
      p.least_remaining = std::min(p.least_remaining, remaining[x]);
    }
    if (!fast_forward_.after_dispatch(p)) return;
    std::vector<std::uint64_t> skip = fast_forward_.boundary(snapshot(now), remaining);
    if (gpu_.dispatch.order == arch::DispatchOrder::round_robin_blocking) {
      // Ids go out in order: skip one block of consecutive ids, the same count on every XCD (any
      // xcds_ consecutive ids go to each XCD once), as many as the XCD that may skip least.
      const std::uint64_t k = *std::min_element(skip.begin(), skip.end());
      std::fill(skip.begin(), skip.end(), k);
      next_id_ += k * xcds_;
    }
    for (std::uint32_t x = 0; x < xcds_; ++x) {
      if (skip[x] == 0) continue;
      const std::uint64_t ops = sequence_ops(kp, x, next_of_xcd_[x], skip[x]);
      next_of_xcd_[x] += skip[x];
      fast_forward_.skipped(skip[x], ops);
    }
  }

  // The kernel's additive results so far (fast-forward's window).
  KernelSnapshot snapshot(Tick now) const {
    KernelSnapshot k;
    k.time = now;
    k.tile_ops = result_->tile_ops;
    k.mfma = result_->mfma_instructions;
    k.valu = result_->valu_instructions;
    k.trans = result_->trans_instructions;
    k.lds_bytes = result_->lds_bytes;
    k.resident_time = result_->resident_time;
    k.per_xcd = per_xcd_;
    for (const ComputeUnit& cu : cus_) {
      k.breakdown.add(cu.breakdown(result_->start, now));
      k.matrix += cu.matrix_busy();
      k.vector += cu.vector_busy();
      k.lds += cu.lds_busy();
    }
    k.memory = memory_.busy();
    k.clock_integral = clock_time_ + engine_.hz() * static_cast<double>(now - control_start_);
    k.clock_updates = result_->clock_updates;
    k.dispatched = next_of_xcd_;
    k.xcd_tile_ops = xcd_tile_ops_;
    return k;
  }

  // The power controller: sets the engine clock for the next interval from the activity of the
  // last one (the matrix and vector pipes' busy fractions, HBM traffic over its peak), as the clock
  // model says. The pipes' busy time is what they executed in the interval, not what operations
  // issued in it reserved (which may run into the next intervals).
  void control(Tick now) {
    // The last workgroup may retire before a pending control event: the kernel is over, and its
    // clock integral must end at its last retirement, not here.
    if (active_ == 0) return;
    Tick matrix = 0, vector = 0;
    for (const ComputeUnit& cu : cus_) {
      matrix += cu.matrix_busy_by(now);
      vector += cu.vector_busy_by(now);
    }
    std::uint64_t hbm = 0;
    for (const auto& c : per_xcd_) hbm += c.hbm_read_bytes + c.hbm_write_bytes;
    const arch::Activity a = measured_activity(gpu_, mfma(), matrix - control_matrix_, vector - control_vector_,
                                               hbm - control_hbm_, now - control_start_);
    clock_time_ += engine_.hz() * static_cast<double>(now - control_start_);
    control_start_ = now;
    control_matrix_ = matrix;
    control_vector_ = vector;
    control_hbm_ = hbm;
    set_clock(arch::sustained_clock(gpu_, a).clock.value);
    ++result_->clock_updates;
    if (active_ > 0) queue_.schedule(now + gpu_.clock.control_interval.value, 2, 0, kControl);
  }

  void set_clock(double hz) {
    apply_clock(hz);
    result_->clock_min_hz = std::min(result_->clock_min_hz, hz);
    result_->clock_max_hz = std::max(result_->clock_max_hz, hz);
  }

  // Sets the controller's clock `hz`: each XCD's CUs, pipe costs and L2 run at that XCD's clock
  // (arch::xcd_clock: hz itself unless clock.xcd_spread is set).
  void apply_clock(double hz) {
    engine_ = Clock(hz);
    pipes_.resize(xcds_);
    for (std::uint32_t x = 0; x < xcds_; ++x) {
      const double xcd_hz = arch::xcd_clock(gpu_, x, hz);
      pipes_[x] = PipeCosts(gpu_, mfma(), Clock(xcd_hz));
      for (std::uint32_t c = x * cus_per_xcd_; c < (x + 1) * cus_per_xcd_ && c < cus_.size(); ++c) cus_[c].set_clock(xcd_hz);
    }
    memory_.set_engine_clock(hz);
  }

  void retire(std::uint32_t slot, Tick now) {
    Resident& s = residents_[slot];
    if (options_.trace) {
      result_->spans.push_back(
          WorkgroupSpan{s.xcd, s.cu % cus_per_xcd_, s.wg, s.start, now});
    }
    --active_;
    result_->resident_time += now - s.start;
    if (s.handed_off) {
      std::vector<std::uint32_t>& a = awaiting_[s.cu];
      a.erase(std::remove(a.begin(), a.end(), slot), a.end());
    } else {
      --cus_[s.cu].resident;
    }
    free_.push_back(slot);
    last_end_ = std::max(last_end_, now);
    if (s.successor != kNoSlot) release_successor(s.successor, now);
    dispatch(s.xcd, now);
  }

  // Persistent kernels: the workgroup in `slot` has issued all its loads (its producer moves on to
  // the next tile), so it gives its CU slot to the next workgroup, whose loads may start now and
  // whose compute waits until this one retires. Only once (and not while it waits itself): a CU
  // holds at most one workgroup finishing and the one that took its slot.
  void hand_off(std::uint32_t slot, Resident& s, Tick now) {
    if (!shape_.kp->persistent || s.gated || s.handed_off) return;
    s.handed_off = true;
    --cus_[s.cu].resident;
    awaiting_[s.cu].push_back(slot);
    dispatch(s.xcd, now);
  }

  // The workgroup the one in `slot` waited on has retired: its wave groups issue from `now` on.
  void release_successor(std::uint32_t slot, Tick now) {
    Resident& s = residents_[slot];
    s.gated = false;
    for (std::uint32_t g = kFirstGroupLane; g < shape_.lanes; ++g) {
      s.lanes[g].released = std::max(s.lanes[g].released, now);
      wake(slot, g, now);
    }
    if (s.lanes[kLoadLane].exhausted) hand_off(slot, s, now);
  }

  // Where the finish of `op` (of `body`, `iteration`) issued by lane `lane` is kept in a
  // workgroup's finish table (loop iterations share ring slots).
  std::size_t entry_index(std::uint8_t body, std::uint64_t iteration, std::uint16_t op, std::uint32_t lane) const {
    const std::size_t base = body == 0   ? shape_.pro_offset
                             : body == 2 ? shape_.epi_offset
                                         : shape_.loop_offset + (iteration & (shape_.ring - 1)) * shape_.loop_stride;
    return base + shape_.op_entry[body][op] + (lane >= kFirstGroupLane ? lane - kFirstGroupLane : 0);
  }

  Finish* entry(Resident& s, std::uint8_t body, std::uint64_t iteration, std::uint16_t op, std::uint32_t lane,
              bool for_write) {
    if (body == 1) {
      const std::size_t r = iteration & (shape_.ring - 1);
      if (s.ring[r] != static_cast<std::int64_t>(iteration)) {
        if (!for_write) {
          if (s.ring[r] > static_cast<std::int64_t>(iteration)) {
            throw std::logic_error("engine: a loop iteration's finish times were overwritten while still needed");
          }
          return nullptr;  // not issued yet
        }
        std::fill_n(s.table.begin() + static_cast<std::ptrdiff_t>(shape_.loop_offset + r * shape_.loop_stride),
                    shape_.loop_stride, kNotIssued);
        s.ring[r] = static_cast<std::int64_t>(iteration);
      }
    }
    return &s.table[entry_index(body, iteration, op, lane)];
  }

  // The entry `lane` issues or finds `op` in, if issued (else null, and missing_ names the entry
  // whose recording the reader must wait for).
  const Finish* issued_entry(Resident& s, std::uint8_t body, std::uint64_t iteration, std::uint16_t op,
                             std::uint32_t lane) {
    const Finish* e = entry(s, body, iteration, op, lane, false);
    if (e && e->time != kUnknown) return e;
    missing_ = entry_index(body, iteration, op, lane);
    return nullptr;
  }

  // The finish of `op` (of `body`, `iteration`) as lane `lane` sees it; time kUnknown if not issued
  // (then missing_ names the entry to wait for).
  Finish finish_of(Resident& s, std::uint8_t body, std::uint64_t iteration, std::uint16_t op, std::uint32_t lane) {
    const std::uint32_t issuer = shape_.issuer[body][op];
    if (issuer < kFirstGroupLane || lane >= kFirstGroupLane) {
      const Finish* e = issued_entry(s, body, iteration, op, issuer < kFirstGroupLane ? issuer : lane);
      return e ? *e : kNotIssued;
    }
    Finish latest{0, {}};  // a memory lane waits for every wave group
    for (std::uint32_t g = kFirstGroupLane; g < shape_.lanes; ++g) {
      const Finish* e = issued_entry(s, body, iteration, op, g);
      if (!e) return kNotIssued;
      if (e->time > latest.time) latest = *e;
    }
    return latest;
  }

  // When `op` can issue on lane `lane` (false: a dependence is not issued yet), and what the
  // latest of its dependences was bound by (sync when the phase's start is later than all).
  bool ready_time(Resident& s, const TileOp& op, std::uint32_t lane, Tick& ready, FinishCause& cause) {
    const CompiledBody& b = shape_.body(op.body);
    ready = s.phase_start;
    cause = FinishCause{};
    if (s.lanes[lane].released > ready) {
      ready = s.lanes[lane].released;
      cause = FinishCause{WaitCause::sync, 0};
    }
    const auto wait_for = [&](const Finish& f) {
      if (f.time == kUnknown) return false;
      if (f.time > ready) {
        ready = f.time;
        cause = f.cause;
      }
      return true;
    };
    for (std::uint16_t i = op.op->deps_begin; i < op.op->deps_end; ++i) {
      if (!wait_for(finish_of(s, op.body, op.iteration, b.deps[i], lane))) return false;
    }
    if (op.body != 1) return true;
    for (std::uint16_t i = op.op->carried_begin; i < op.op->carried_end; ++i) {
      const std::uint16_t distance = shape_.carried_steps[i];
      if (op.iteration < distance) continue;
      if (!wait_for(finish_of(s, 1, op.iteration - distance, b.carried[i].op, lane))) return false;
    }
    if (lane == kLoadLane && op.iteration >= shape_.lookahead) {
      // Loads run at most `lookahead` iterations ahead of the loop's end (the buffers they fill).
      if (!wait_for(finish_of(s, 1, op.iteration - shape_.lookahead, static_cast<std::uint16_t>(b.ops.size() - 1), lane))) {
        return false;
      }
    }
    return true;
  }

  void record(std::uint32_t slot, Resident& s, const TileOp& op, std::uint32_t lane, const Finish& finish, Tick now) {
    // A waiting lane wakes when the entry it waits for is recorded (it cannot issue before).
    const bool sync = op.op->pipe == Pipe::sync;  // written for every wave group
    const std::uint32_t first_lane = sync ? kFirstGroupLane : lane, last_lane = sync ? shape_.lanes - 1 : lane;
    for (std::uint32_t g = first_lane; g <= last_lane; ++g) *entry(s, op.body, op.iteration, op.index, g, true) = finish;
    const std::size_t first = entry_index(op.body, op.iteration, op.index, first_lane);
    const std::size_t last = first + (last_lane - first_lane);
    Tick& latest = phase_of(op) == s.phase ? s.max_finish : s.ahead_finish;
    latest = std::max(latest, finish.time);
    for (std::uint32_t l = 0; l < shape_.lanes; ++l) {
      Lane& w = s.lanes[l];
      if (w.waiting && w.awaited >= first && w.awaited <= last) {
        w.waiting = false;
        wake(slot, l, now);
      }
    }
  }

  // Lane `l` of the workgroup in `slot` issues what it can at `now`.
  void step(std::uint32_t slot, Resident& s, std::uint32_t l, Tick now) {
    Lane& lane = s.lanes[l];
    if (s.gated && l >= kFirstGroupLane) return;  // woken again when the predecessor retires
    for (;;) {
      if (!lane.has_pending) {
        if (!lane.cursor->next(lane.pending)) {
          lane.exhausted = true;
          if (l == kLoadLane) hand_off(slot, s, now);
          arrive(slot, s, l, now);
          return;
        }
        lane.has_pending = true;
        lane.timed = false;
      }
      const TileOp& op = lane.pending;
      if (phase_of(op) != s.phase) {
        const bool ahead = runs_ahead(s, l, op);
        arrive(slot, s, l, now);
        // Every lane is woken when the next phase starts; a producer issues on meanwhile.
        if (!ahead || phase_of(op) == s.phase) return;
      }
      Tick ready = lane.ready;
      FinishCause waited_on = lane.ready_cause;
      if (!lane.timed) {
        if (!ready_time(s, op, l, ready, waited_on)) {
          lane.waiting = true;
          lane.awaited = missing_;
          return;
        }
        if (ready > now) {
          lane.timed = true;
          lane.ready = ready;
          lane.ready_cause = waited_on;
          wake(slot, l, ready);
          return;
        }
      } else if (ready > now) {
        return;  // woken early; its own wake at `ready` is queued
      }
      if (op.op->pipe == Pipe::sync) {
        // A barrier: every wave group must arrive; the last one releases all.
        s.join_time = std::max(s.join_time, now);
        if (++s.joined < shape_.groups) return;
        const Finish finish{s.join_time + static_cast<Tick>(op.count) * op.op->cost.barriers * pipes_[s.xcd].barrier,
                            FinishCause{WaitCause::sync, 0}};
        s.joined = 0;
        s.join_time = 0;
        for (std::uint32_t g = kFirstGroupLane; g < shape_.lanes; ++g) {
          s.lanes[g].has_pending = false;
          s.lanes[g].released = finish.time;
          if (g != l) wake(slot, g, finish.time);  // nothing of theirs issues before the release
        }
        result_->tile_ops += op.count;
        xcd_tile_ops_[s.xcd] += op.count;
        record(slot, s, op, l, finish, now);
        continue;
      }
      const Finish finish = l < kFirstGroupLane ? issue_memory(s, l, op, now) : issue_compute(s, op, l, waited_on, now);
      if (l <= kFirstGroupLane) {  // a memory op, or a compute op of every group
        result_->tile_ops += op.count;
        xcd_tile_ops_[s.xcd] += op.count;
      }
      lane.has_pending = false;
      record(slot, s, op, l, finish, now);
    }
  }

  // A lane reached the end of the current phase (or of its work).
  void arrive(std::uint32_t slot, Resident& s, std::uint32_t l, Tick now) {
    Lane& lane = s.lanes[l];
    if (lane.at_phase) return;
    lane.at_phase = true;
    if (++s.arrived < shape_.lanes) return;
    bool all_done = true;
    for (const Lane& x : s.lanes) all_done = all_done && x.exhausted;
    if (all_done) {
      const Tick end = std::max(s.max_finish, now);
      if (end > now) {
        queue_.schedule(end, 1, slot, kFinish);
      } else {
        retire(slot, now);
      }
      return;
    }
    // A new phase: the finish times of the last one are covered by phase_start (every dependence
    // on them is met), and a new pass numbers its iterations from 0 again. Only the ending body's
    // entries are cleared: a producer may have issued the next phase's loads already (runs_ahead),
    // and the other bodies' entries were cleared when their phases ended.
    clear_body(s, static_cast<std::uint8_t>(s.phase % 3));
    ++s.phase;
    s.arrived = 0;
    s.phase_start = std::max(s.max_finish, now);
    s.max_finish = std::max(s.phase_start, s.ahead_finish);
    s.ahead_finish = 0;
    for (std::uint32_t i = 0; i < shape_.lanes; ++i) {
      s.lanes[i].at_phase = false;
      wake(slot, i, s.phase_start);
    }
  }

  // Whether lane `l` may issue `op` before the workgroup's current phase ends: the producer waves of
  // a kernel that has them (KernelProgram::load_waves) load a pass's loop tiles while its compute
  // waves are still in the pass's prologue (they wait on buffers, the loop's carried dependences,
  // not on the compute waves' progress).
  bool runs_ahead(const Resident& s, std::uint32_t l, const TileOp& op) const {
    return l == kLoadLane && shape_.kp->load_waves > 0 && op.body == 1 && phase_of(op) == s.phase + 1 && s.phase % 3 == 0;
  }

  // Clears the finish times of one body's operations (a loop's ring with them).
  void clear_body(Resident& s, std::uint8_t body) {
    const auto fill = [&](std::size_t from, std::size_t to) {
      std::fill(s.table.begin() + static_cast<std::ptrdiff_t>(from), s.table.begin() + static_cast<std::ptrdiff_t>(to), kNotIssued);
    };
    if (body == 0) fill(shape_.pro_offset, shape_.epi_offset);
    if (body == 2) fill(shape_.epi_offset, shape_.loop_offset);
    if (body == 1) {
      fill(shape_.loop_offset, shape_.table_size);
      std::fill(s.ring.begin(), s.ring.end(), -1);
    }
  }

  Finish issue_compute(Resident& s, const TileOp& op, std::uint32_t l, const FinishCause& waited_on, Tick now) {
    const std::uint32_t simds = gpu_.cu.simds;
    const std::uint32_t g = l - kFirstGroupLane;
    GroupWork w;
    w.cost = &op.op->cost;
    w.masked_count = op.masked_count;
    w.count = op.count;
    w.waited_on = waited_on;
    // A workgroup of fewer waves than SIMDs sits on the SIMDs the dispatcher chose for it.
    w.simd0 = shape_.kp->waves >= simds ? 0 : s.simd0;
    w.simds = shape_.waves_in_group(g, simds);
    w.issued = &s.lanes[l].issued;
    const std::uint64_t n = op.count;
    result_->mfma_instructions += n * w.cost->mfma * w.simds;
    result_->valu_instructions +=
        (n * w.cost->valu + static_cast<std::uint64_t>(op.masked_count) * w.cost->mask_valu) * w.simds;
    result_->trans_instructions += n * w.cost->trans * w.simds;
    result_->lds_bytes += n * (w.cost->lds_read + w.cost->lds_write) * w.simds;
    Finish f;
    f.time = cus_[s.cu].compute(now, w, pipes_[s.xcd], &f.cause.bound);
    return f;
  }

  // Calls f(tile) for every tile of `op`, issued by lane `l`, in each loop iteration it covers.
  template <class F>
  void for_each_iteration_tile(Resident& s, std::uint32_t l, const TileOp& op, F&& f) {
    const workloads::Pass& pass = s.lanes[l].cursor->current_pass();
    for (std::uint64_t i = op.first; i < op.first + op.count; ++i) {
      workloads::for_each_tile(*shape_.pp, *shape_.kp, *op.op, pass, i, f);
    }
  }

  // Issues a memory operation's line requests as one batch at `now`: returns when its data is in
  // the LDS or registers (loads) or accepted by the L2 (stores). Atomics are posted: the operation
  // finishes once issued, and their completion at the memory side extends the kernel's drain.
  Finish issue_memory(Resident& s, std::uint32_t l, const TileOp& op, Tick now) {
    const PassPrograms& pp = *shape_.pp;
    const workloads::TensorDesc& d = (*pp.tensors)[op.op->tensor];
    std::uint64_t bytes = 0;
    const bool approximate = memory_.mode() == TagMode::approximate;
    if (approximate) {
      spans_.clear();
      for_each_iteration_tile(s, l, op, [&](const TileRef& t) { bytes += append_tile_rows(spans_, d, t); });
    } else {
      const std::uint64_t line = memory_.line_bytes();
      lines_.clear();
      for_each_iteration_tile(s, l, op, [&](const TileRef& t) {
        workloads::for_each_run(d, t.slice, t.b, t.head, t.row0, t.rows, [&](std::uint64_t addr, std::uint64_t n) {
          bytes += n;
          for (std::uint64_t la = addr / line * line; la < addr + n; la += line) {
            lines_.push_back(LineRequest{la, static_cast<std::uint32_t>(std::max(addr, la) - la),
                                         static_cast<std::uint32_t>(std::min(addr + n, la + line) - la)});
          }
        });
      });
    }
    ComputeUnit& cu = cus_[s.cu];
    TrafficCounters& c = per_xcd_[s.xcd];
    Finish f{now, FinishCause{WaitCause::l2, 0}};
    Tick latency = 0;  // the unloaded latency within the operation's duration
    if (bytes > 0) {
      const Tick issued = cu.issue(now, bytes);
      const Action a = op.op->action;
      BatchTiming b;
      if (a == Action::atomic_dq) {
        const std::uint32_t per_sector = shape_.kp->atomic_requests_per_sector;
        b = approximate ? memory_.atomic_spans(s.xcd, s.cu, spans_.data(), spans_.size(), now, c, per_sector)
                        : memory_.atomic_batch(s.xcd, s.cu, lines_.data(), lines_.size(), now, c, per_sector);
        drain_ = std::max(drain_, b.finish);
        b = BatchTiming{issued, 0, WaitCause::l2, 0};  // posted: done once issued
      } else if (workloads::is_store(a)) {
        b = approximate ? memory_.write_spans(s.xcd, s.cu, spans_.data(), spans_.size(), now, c)
                        : memory_.write_batch(s.xcd, s.cu, lines_.data(), lines_.size(), now, c);
      } else {
        // A load whose instructions look each L1 unit up more than once: the lookups after the
        // first hit (OpCost::l1_lookups).
        const std::uint32_t repeats = op.op->cost.l1_lookups - 1;
        const std::uint64_t looked_up = repeats ? c.l1_read_lookups(gpu_.vendor) : 0;
        b = approximate ? memory_.read_spans(s.xcd, s.cu, spans_.data(), spans_.size(), now, c)
                        : memory_.read_batch(s.xcd, s.cu, lines_.data(), lines_.size(), now, c);
        if (repeats) {
          const std::uint64_t lookups = c.l1_read_lookups(gpu_.vendor) - looked_up;  // each unit's first
          c.add_l1_repeat_hits(gpu_.vendor, repeats * lookups);
          // Such a load's lanes each touch another line, so each lookup is a wavefront of its own
          // through the L1's data stage, one per clock (docs/model.md, **Counters**).
          const Tick looked = cu.lookups(now, (repeats + 1) * lookups, bytes);
          if (looked > b.finish) b = BatchTiming{looked, b.latency_sum, WaitCause::l2, b.latency};
        }
      }
      f = Finish{b.finish, FinishCause{b.bound, 0}};
      latency = b.latency;
      if (issued > f.time) f = Finish{issued, FinishCause{WaitCause::l2, 0}};  // the L1 issue path
      const Tick window = cu.hold_window(now, b.latency_sum);
      if (window > f.time) {  // too few requests in flight for the latency: latency-bound
        f.time = window;
        latency = window - now;
      }
      if (const std::uint32_t per_wave = op.op->cost.wave_bytes_in_flight; per_wave && !workloads::is_store(a)) {
        // The workgroup's waves keep per_wave bytes each in flight: each line's bytes hold that
        // capacity for the line's round trip (Little's law), after the loads issued before.
        const std::uint64_t capacity = std::uint64_t{per_wave} * shape_.kp->waves;
        const auto held = static_cast<Tick>(static_cast<double>(b.latency_sum) * static_cast<double>(memory_.line_bytes()) /
                                            static_cast<double>(capacity));
        s.loads_free = std::max(now, s.loads_free) + held;
        if (s.loads_free > f.time) {
          f = Finish{s.loads_free, FinishCause{WaitCause::l2, 0}};
          latency = s.loads_free - now;
        }
      }
    }
    // Tiles loaded straight into the LDS (or staged through it) are written there by every wave.
    // A batch's tiles arrive one after another over its duration, each written as it arrives.
    const std::uint64_t lds = op.op->cost.lds_write * shape_.kp->waves;
    result_->lds_bytes += op.count * lds;
    const Tick written = std::max(f.time, cu.lds_series(op.count, lds, [&](std::uint32_t i) {
      return now + (f.time - now) * (i + 1) / op.count;
    }));
    if (written > f.time) f = Finish{written, FinishCause{WaitCause::lds, 0}};
    f.cause.latency_share = latency_share(latency, f.time - now);
    return f;
  }

  const arch::GpuSpec& gpu_;
  MemoryPath& memory_;
  Clock engine_;
  const EngineOptions& options_;
  KernelShape shape_;
  std::optional<arch::MatrixInstruction> mfma_unit_;  // the unit OpCost::mfma counts
  std::vector<PipeCosts> pipes_;  // per XCD, at its clock
  EventQueue queue_;
  std::vector<ComputeUnit> cus_;
  std::vector<std::uint32_t> next_simd_;
  std::vector<Resident> residents_;
  std::vector<std::uint32_t> free_;
  std::vector<std::vector<std::uint32_t>> awaiting_;  // per CU: persistent workgroups that handed off, no successor yet
  std::vector<std::uint64_t> next_of_xcd_;  // workgroups each XCD started (and fast-forward skipped)
  std::vector<std::uint64_t> remaining_;    // fast-forward: workgroups each XCD has still to start
  std::vector<std::uint64_t> xcd_tile_ops_;  // tile operations each XCD ran (fast-forward's rates per XCD)
  std::uint64_t next_id_ = 0;               // round_robin_blocking: the next id the dispatcher hands out
  std::vector<TrafficCounters> per_xcd_;
  std::vector<LineRequest> lines_;  // the memory operation being issued (no allocation once grown)
  std::vector<RowSpan> spans_;      // the same, in the approximate mode
  std::size_t missing_ = 0;         // set by finish_of when an operation is not issued yet
  std::uint32_t xcds_ = 1, cus_per_xcd_ = 1, per_cu_ = 1;
  std::uint64_t active_ = 0;  // resident workgroups
  FastForward fast_forward_{false, 0, 1, 1, 0, 1, true};
  std::uint64_t dispatched_ = 0;  // workgroups dispatched so far (not those fast-forward skipped)
  Tick control_start_ = 0, control_matrix_ = 0, control_vector_ = 0;
  std::uint64_t control_hbm_ = 0;
  double clock_time_ = 0;     // integral of the clock over time (Hz x ps)
  KernelResult* result_ = nullptr;
  Tick last_end_ = 0, drain_ = 0;
  std::uint64_t events_ = 0;
};

// The clock a kernel settles at given the activity it showed (or, before any run, the activity of
// its class: full matrix load for a kernel with matrix work, full streaming otherwise).
arch::ClockEstimate clock_for(const arch::GpuSpec& gpu, const KernelProgram& kp, const KernelResult* seen) {
  arch::Activity a;
  const arch::MatrixInstruction* m = instruction_of(gpu, kp);
  if (!seen) {
    if (m) {
      a = arch::matrix_load(m->dtype);
    } else {
      a.stream = 1.0;
    }
  } else {
    if (m) a.matrix[static_cast<std::size_t>(m->dtype)] = seen->matrix_activity;
    a.stream = seen->hbm_activity;
    a.vector = seen->vector_activity;
  }
  return arch::sustained_clock(gpu, a);
}

void set_activity(const arch::GpuSpec& gpu, const KernelProgram& kp, KernelResult& k) {
  const arch::MatrixInstruction* m = instruction_of(gpu, kp);
  const arch::Activity a = measured_activity(gpu, m, k.busy.matrix, k.busy.vector,
                                             k.counters.hbm_read_bytes + k.counters.hbm_write_bytes,
                                             k.end - k.start);
  k.matrix_activity = m ? a.matrix[static_cast<std::size_t>(m->dtype)] : 0.0;
  k.hbm_activity = a.stream;
  k.vector_activity = a.vector;
}

// Each XCD's L2 counters (`per_xcd`) into `stats`: <l2>.{requests, hits, misses, fetch_bytes, write_bytes}.
void add_l2_counters(Stats& stats, const MemoryPath& memory, const std::vector<TrafficCounters>& per_xcd) {
  for (std::uint32_t x = 0; x < per_xcd.size(); ++x) {
    const TrafficCounters& c = per_xcd[x];
    const std::string name = memory.xcd_l2_stats_name(x) + ".";
    stats.counter(name + "requests") += c.tcc_req;
    stats.counter(name + "hits") += c.tcc_hit;
    stats.counter(name + "misses") += c.tcc_miss;
    stats.counter(name + "fetch_bytes") += c.fetch_size_bytes();
    stats.counter(name + "write_bytes") += c.write_size_bytes();
  }
}

// The run's statistics (RunResult::stats): each XCD's L2 counters (r.per_xcd), then every channel's.
nlohmann::json run_stats(const MemoryPath& memory, const RunResult& r) {
  Stats stats;
  add_l2_counters(stats, memory, r.per_xcd);
  memory.add_stats(stats);
  stats.counter("time_ps") = static_cast<std::uint64_t>(r.time);
  return stats.to_json();
}

// A kernel's statistics (KernelResult::stats): its L2 counters, and what every channel served from
// the `before` snapshot on, which then becomes the snapshot after the kernel.
nlohmann::json kernel_stats(const MemoryPath& memory, const KernelResult& k,
                            std::unique_ptr<Stats>& before) {
  auto now = std::make_unique<Stats>();
  memory.add_stats(*now);
  Stats stats;
  add_l2_counters(stats, memory, k.per_xcd);
  stats.add_difference(*now, *before);
  stats.counter("time_ps") = static_cast<std::uint64_t>(k.end - k.launch);
  before = std::move(now);
  return stats.to_json();
}

// Moves a kernel's times `origin` earlier (a run measured after a warm-up starts at 0).
void rebase(KernelResult& k, Tick origin) {
  for (Tick* at : {&k.launch, &k.start, &k.end, &k.last_retire}) *at -= origin;
  for (WorkgroupSpan& s : k.spans) {
    s.start -= origin;
    s.end -= origin;
  }
}

RunResult run_passes(const std::vector<const PassPrograms*>& passes, const arch::GpuSpec& gpu,
                     const EngineOptions& options, MemoryPath& memory, Tick& t, double& clock) {
  RunResult result;
  auto channels_before = std::make_unique<Stats>();  // what the channels had served before the kernel
  for (const PassPrograms* pp : passes) {
    for (const KernelProgram& kp : pp->kernels) {
      // The first kernel starts at the clock of its class of work; later ones at the clock the
      // previous kernel left (the controller does not reset between kernels).
      if (clock == 0 || gpu.clock.engine_pinned) clock = clock_for(gpu, kp, nullptr).clock.value;
      KernelRun run(gpu, memory, *pp, kp, clock, options);
      KernelResult k = run.run(t);
      k.clock_pinned = gpu.clock.engine_pinned.has_value();
      set_activity(gpu, kp, k);
      const arch::ClockEstimate at_mean = clock_for(gpu, kp, &k);
      k.power_limited = !k.clock_pinned && at_mean.power_limited;
      k.power_w = at_mean.power.value;
      clock = k.final_clock_hz;
      if (options.stats) k.stats = kernel_stats(memory, k, channels_before);
      result.events += run.events();
      result.clock_updates += k.clock_updates;
      t = k.end;
      result.total.add(k.counters);
      result.per_xcd.resize(std::max(result.per_xcd.size(), k.per_xcd.size()));
      for (std::size_t x = 0; x < k.per_xcd.size(); ++x) result.per_xcd[x].add(k.per_xcd[x]);
      result.kernels.push_back(std::move(k));
    }
  }
  return result;
}

}  // namespace

RunResult simulate(const std::vector<const PassPrograms*>& passes, const arch::GpuSpec& gpu,
                   const EngineOptions& options) {
  if (options.stats && options.fast_forwards()) {
    throw std::invalid_argument("stats count what the channels served, and fast-forward skips workgroups: ask for one of them");
  }
  if (options.stats && options.warm_up) {
    throw std::invalid_argument("stats count what the channels served since the start, the warm-up's included: ask for one of them");
  }
  MemoryPath memory(gpu, gpu.clock.engine_max.value, options.approximate ? TagMode::approximate : TagMode::exact);
  Tick t = 0;
  double clock = 0;
  if (options.warm_up) {
    // The same passes once, their results discarded: the measured run finds the caches, the
    // channels' queues and the engine clock this one leaves.
    EngineOptions quiet = options;
    quiet.fast_forward = options.fast_forwards();  // as the measured run decides it
    quiet.warm_up = quiet.trace = false;
    run_passes(passes, gpu, quiet, memory, t, clock);
  }
  const Tick origin = t;
  RunResult result = run_passes(passes, gpu, options, memory, t, clock);
  for (KernelResult& k : result.kernels) rebase(k, origin);
  result.time = t - origin;
  if (options.stats) result.stats = run_stats(memory, result);
  result.hierarchy_state_bytes = memory.state_bytes();
  result.approximate = options.approximate;
  result.fast_forward = options.fast_forwards();
  result.warm_up = options.warm_up;
  return result;
}


}  // namespace attnsim::sim
