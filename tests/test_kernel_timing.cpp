// Whole kernels on the timed engine: dispatch, wave quantisation, clocks, kernel boundaries,
// instruction counts against the closed form, determinism.
#include <doctest/doctest.h>

#include <algorithm>

#include "arch/arch_locator.h"
#include "arch/spec_loader.h"
#include "sim/engine.h"
#include "workloads/analytic.h"
#include "workload_fixture.h"

using namespace attnsim;
using namespace attnsim::workloads;

namespace {
const arch::GpuSpec& mi300x(const std::vector<std::string>& sets = {}) { return test::gpu_with("mi300x", sets); }

Problem heads(std::uint32_t h, std::uint64_t n) {
  Problem p;
  p.heads_q = p.heads_kv = h;
  p.seqlen_q = p.seqlen_k = n;
  return p;
}

sim::RunResult run(const PassPrograms& pp, const arch::GpuSpec& gpu, bool trace = false) {
  sim::EngineOptions o;
  o.trace = trace;
  return sim::simulate({&pp}, gpu, o);
}
}  // namespace

TEST_CASE("wave quantisation: one workgroup more than the CUs takes a second round") {
  // aiter-v3 forward: one 256-row workgroup per head at N = 256, one workgroup per CU (64 KiB LDS).
  const auto gpu = mi300x({"clock.engine=1.5GHz"});
  const auto full = run(test::build(heads(304, 256), "aiter-v3", Direction::fwd), gpu);
  const auto over = run(test::build(heads(305, 256), "aiter-v3", Direction::fwd), gpu, true);
  const auto lone = run(test::build(heads(1, 256), "aiter-v3", Direction::fwd), gpu);
  REQUIRE(full.kernels.size() == 1);
  CHECK(full.kernels[0].occupancy.workgroups_per_cu == 1);
  const auto span = [](const sim::KernelResult& k) { return static_cast<double>(k.end - k.start); };
  // The 305th workgroup starts when a first-round one retires and then needs at least the time it
  // takes alone (it shares the memory with the rest of the first round at most).
  sim::Tick first_retire = over.kernels[0].end;
  for (const auto& s : over.kernels[0].spans) first_retire = std::min(first_retire, s.end);
  CHECK(static_cast<double>(over.kernels[0].end - first_retire) >= 0.99 * span(lone.kernels[0]));
  // So the kernel takes about two rounds, not 305/304 of one: the second round is the lone
  // workgroup, shorter than a round of 304 sharing the memory, so the ratio is below 2.
  const double ratio = span(over.kernels[0]) / span(full.kernels[0]);
  CHECK(ratio > 1.5);
  CHECK(ratio < 2.05);
}

TEST_CASE("a pinned clock: compute-bound time scales with the clock and the controller stays off") {
  const auto pp = test::build(heads(8, 2048), "aiter-v3", Direction::fwd);
  const auto slow = run(pp, mi300x({"clock.engine=1GHz"}));
  const auto fast = run(pp, mi300x({"clock.engine=2GHz"}));
  CHECK(slow.kernels[0].clock_hz == doctest::Approx(1e9));
  CHECK(slow.kernels[0].clock_updates == 0);
  CHECK(slow.kernels[0].clock_pinned);
  const double ratio = static_cast<double>(slow.kernels[0].end - slow.kernels[0].start) /
                       static_cast<double>(fast.kernels[0].end - fast.kernels[0].start);
  CHECK(ratio > 1.8);  // memory latencies in ns do not scale
  CHECK(ratio <= 2.0);
}

TEST_CASE("the modelled clock of matrix-heavy work lies between the full-load clock and the maximum") {
  const auto pp = test::build(heads(64, 2048), "aiter-v3", Direction::fwd);
  const auto r = run(pp, mi300x());
  const auto& k = r.kernels[0];
  CHECK(k.clock_updates > 0);
  CHECK_FALSE(k.clock_pinned);
  // BLOG-MAF2: a bf16 GEMM (matrix pipes full) settles at 1207 MHz; less matrix activity, higher clock.
  CHECK(k.clock_hz > 1.20e9);
  CHECK(k.clock_hz <= 2.1e9);
  CHECK(k.matrix_activity > 0.2);
  CHECK(k.matrix_activity < 1.0);
}

TEST_CASE("issued instructions equal the closed-form counts for every kernel of a pass") {
  for (const char* kernel : {"aiter-v3", "ck", "triton-amd"}) {
    for (const Direction d : {Direction::fwd, Direction::bwd}) {
      Problem p = heads(4, 512);
      p.heads_kv = 2;
      p.causal = true;
      const auto pp = test::build(p, kernel, d);
      const auto r = run(pp, mi300x({"clock.engine=1.5GHz"}));
      double mfma = 0;
      for (const auto& k : r.kernels) mfma += static_cast<double>(k.mfma_instructions);
      CAPTURE(kernel);
      CHECK(mfma == doctest::Approx(analytic_counts(pp).mfma_instructions));
    }
  }
}

TEST_CASE("fa3 on H100: the matrix work issued is the tile's FLOPs and takes the tensor cores' peak rate") {
  // Non-causal d128 forward, N = 1408 = 11 x kBlockM (128) = 8 x kBlockN (176), no partial tile:
  // the loop's two GEMMs issue exactly 4 x N x N x d FLOPs per head (no N = 256 padding, PTX-ISA),
  // counted in m64n8k16 slices.
  Problem p = heads(2, 1408);
  p.causal = false;
  p.dtype = Dtype::fp16;
  const auto pp = test::build(p, "fa3", Direction::fwd);
  const arch::GpuSpec& h100 = test::gpu_with("h100", {"clock.engine=1.5GHz"});
  const auto r = run(pp, h100);
  REQUIRE(r.kernels.size() == 1);
  const double flops = 4.0 * 2 * 1408 * 1408 * 128;
  CHECK(r.kernels[0].mfma_flops == doctest::Approx(flops));
  CHECK(static_cast<double>(r.kernels[0].mfma_instructions) == doctest::Approx(analytic_counts(pp).mfma_instructions));
  // The matrix pipes' busy time is those FLOPs at 4096 FLOP/clk per SM (1024 per sub-partition) at
  // 1.5 GHz, summed over the sub-partitions: flops / 1024 / 1.5 GHz (a slice's 16 cycles on a
  // wave's sub-partition are 10666.7 ps, rounded to 10667: 3e-5 over).
  CHECK(static_cast<double>(r.kernels[0].busy.matrix) == doctest::Approx(flops / 1024 / 1.5e9 * 1e12).epsilon(1e-4));
}

namespace {
// An H100 cut to one SM whose memory is so slow that a kernel's time counts its round trips to HBM:
// each 100 us more than an L2 hit, with a window of outstanding lines wide enough for any tile (so
// the loads are latency-bound, not window-bound).
const arch::GpuSpec& one_sm_slow_memory_h100() {
  return test::gpu_with("h100", {"clock.engine=1.5GHz", "clock.xcd_spread=0", "hbm.latency=100us",
                                 "cu.memory_inflight_lines=65536", "chip.cus_per_xcd=1"});
}

Problem fa3_heads(std::uint64_t n) {
  Problem p = heads(1, n);
  p.causal = false;
  p.dtype = Dtype::fp16;
  return p;
}
}  // namespace

TEST_CASE("a producer's loop loads overlap its prologue: a lone fa3 workgroup waits one round trip to memory and not two") {
  // N = 128: one query block and one key block (a single iteration). FA3's producer warpgroup loads
  // Q, K and V at once; without producer waves (fwd.load_waves = 0) the loop's K and V loads wait
  // for the prologue (Q's arrival and the setup): a second round trip of 100 us.
  const Problem p = fa3_heads(128);
  const auto& gpu = one_sm_slow_memory_h100();
  const auto producer = run(test::build(p, "fa3,fwd.persistent=false", Direction::fwd), gpu);
  const auto in_order = run(test::build(p, "fa3,fwd.persistent=false,fwd.load_waves=0", Direction::fwd), gpu);
  REQUIRE(producer.kernels.at(0).workgroups == 1);
  CHECK(in_order.kernels.at(0).time_us() - producer.kernels[0].time_us() == doctest::Approx(100.0).epsilon(0.01));
  CHECK(producer.total.hbm_read_bytes == in_order.total.hbm_read_bytes);
}

TEST_CASE("a persistent kernel loads its next tile while the last one computes and saves a round trip per hand-off") {
  // N = 256, one head: two workgroups (query blocks) on one SM reading the same K and V, which the
  // second finds in the L2, so each has one round trip to HBM (its Q). Launched a CTA per tile, the
  // second starts when the first retires and waits 100 us for its Q. Persistent, its producer loads
  // Q, K and V as soon as the first has issued all its loads (at its start: two iterations fit the
  // two stages), and only its compute waits for the first to retire.
  const Problem p = fa3_heads(256);
  const auto& gpu = one_sm_slow_memory_h100();
  const auto per_tile = run(test::build(p, "fa3,fwd.persistent=false", Direction::fwd), gpu);
  const auto persistent = run(test::build(p, "fa3", Direction::fwd), gpu, true);
  const sim::KernelResult& k = persistent.kernels.at(0);
  REQUIRE(k.workgroups == 2);
  CHECK(per_tile.kernels.at(0).time_us() - k.time_us() == doctest::Approx(100.0).epsilon(0.01));
  CHECK(per_tile.total.hbm_read_bytes == persistent.total.hbm_read_bytes);
  CHECK(per_tile.total.tcc_req == persistent.total.tcc_req);
  // The second workgroup is on the SM before the first retires, and its compute follows the
  // first's: from the first's retirement to the kernel's last, at least one workgroup's matrix
  // work on one sub-partition (the kernel's matrix busy time over 2 workgroups x 4 sub-partitions).
  REQUIRE(k.spans.size() == 2);
  auto spans = k.spans;
  std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) { return a.workgroup < b.workgroup; });
  CHECK(spans[1].start < spans[0].end);
  CHECK(static_cast<double>(k.last_retire - spans[0].end) >= static_cast<double>(k.busy.matrix) / 8);
}

TEST_CASE("kernel boundaries: each kernel launches when the previous ends plus the launch gap") {
  const auto gpu = mi300x();
  const auto r = run(test::build(heads(4, 1024), "aiter-v3", Direction::bwd), gpu);
  REQUIRE(r.kernels.size() >= 3);
  CHECK(r.kernels[0].launch == 0);
  for (std::size_t i = 0; i < r.kernels.size(); ++i) {
    CAPTURE(r.kernels[i].name);
    if (i > 0) CHECK(r.kernels[i].launch == r.kernels[i - 1].end);
    CHECK(r.kernels[i].start - r.kernels[i].launch == gpu.dispatch.launch_overhead.value);
    CHECK(r.kernels[i].end > r.kernels[i].start);
  }
  CHECK(r.time == r.kernels.back().end);
}

TEST_CASE("workgroups go round-robin to the XCDs and every one is traced once") {
  const auto pp = test::build(heads(20, 256), "aiter-v3", Direction::fwd);
  const auto r = run(pp, mi300x({"clock.engine=1.5GHz"}), true);
  const auto& k = r.kernels[0];
  REQUIRE(k.spans.size() == 20);
  std::vector<int> seen(20, 0);
  for (const auto& s : k.spans) {
    CHECK(s.xcd == s.workgroup % 8);
    CHECK(s.start >= k.start);
    CHECK(s.end <= k.end);
    ++seen[s.workgroup];
  }
  CHECK(std::count(seen.begin(), seen.end(), 1) == 20);
}

namespace {
// The largest number of ids by which a workgroup started ahead of one that had not started yet:
// over the workgroups in order of start, the id minus the number started before it.
std::int64_t largest_run_ahead(const sim::KernelResult& k) {
  std::vector<sim::WorkgroupSpan> spans = k.spans;
  std::stable_sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) {
    return a.start != b.start ? a.start < b.start : a.workgroup < b.workgroup;
  });
  std::int64_t ahead = 0;
  for (std::size_t i = 0; i < spans.size(); ++i) ahead = std::max(ahead, static_cast<std::int64_t>(spans[i].workgroup) - static_cast<std::int64_t>(i));
  return ahead;
}
}  // namespace

TEST_CASE("dispatch.order: round_robin lets an XCD run ahead and round_robin_blocking hands ids out in order") {
  // CK's causal backward: key block j of a head meets the query blocks from j on, so the blocks
  // an XCD gets (every eighth) differ in work and, with 2 CUs per XCD (16 slots for 128
  // workgroups), the XCDs with lighter blocks start their next ones first.
  Problem p = heads(8, 2048);
  p.heads_kv = 2;
  p.causal = true;
  const auto pp = test::build(p, "ck", Direction::bwd);
  const std::vector<std::string> small = {"chip.cus_per_xcd=2", "clock.engine=1.5GHz"};
  auto blocking_sets = small;
  blocking_sets.push_back("dispatch.order=round_robin_blocking");
  const auto free_run = run(pp, mi300x(small), true);
  const auto blocking = run(pp, mi300x(blocking_sets), true);
  REQUIRE(free_run.kernels.size() == blocking.kernels.size());
  bool drifted = false;
  for (std::size_t i = 0; i < blocking.kernels.size(); ++i) {
    const auto& k = blocking.kernels[i];
    CAPTURE(k.name);
    // Blocking: when a workgroup starts, every lower id has started (ties broken by id).
    CHECK(largest_run_ahead(k) == 0);
    for (const auto& s : k.spans) CHECK(s.xcd == s.workgroup % 8);  // the same mapping
    drifted = drifted || largest_run_ahead(free_run.kernels[i]) >= 8;
  }
  CHECK(drifted);  // at least one kernel's XCDs ran a round or more ahead of another's
  // The work is the same; only who waits differs.
  CHECK(blocking.total.tcc_req == free_run.total.tcc_req);
}

TEST_CASE("clock.xcd_spread: the fast XCD's workgroups take less time and the slow one's more") {
  // One round of compute-bound forward workgroups (one per CU) at a pinned 1.5 GHz, without and
  // with a 10 % spread: XCD 0 at 1.05 x, XCD 7 at 0.95 x. A workgroup's compute time scales with its
  // XCD's clock and its memory time beyond the L2 does not, so XCD 0's mean span shrinks by at most
  // 1 - 1/1.05 and XCD 7's grows by at most 1/0.95 - 1; the kernel waits for the slowest.
  const auto pp = test::build(heads(304, 256), "aiter-v3", Direction::fwd);
  const auto even = run(pp, mi300x({"clock.engine=1.5GHz"}), true);
  const auto spread = run(pp, mi300x({"clock.engine=1.5GHz", "clock.xcd_spread=0.1"}), true);
  const auto mean_span = [](const sim::KernelResult& k, std::uint32_t xcd) {
    double sum = 0, n = 0;
    for (const auto& s : k.spans) {
      if (s.xcd != xcd) continue;
      sum += static_cast<double>(s.end - s.start);
      ++n;
    }
    return sum / n;
  };
  const double fast = mean_span(spread.kernels[0], 0) / mean_span(even.kernels[0], 0);
  const double slow = mean_span(spread.kernels[0], 7) / mean_span(even.kernels[0], 7);
  CHECK(fast < 0.98);
  CHECK(fast >= 1 / 1.05 - 1e-3);
  CHECK(slow > 1.02);
  CHECK(slow <= 1 / 0.95 + 1e-3);
  CHECK(spread.kernels[0].end - spread.kernels[0].start > even.kernels[0].end - even.kernels[0].start);
}

TEST_CASE("the timed run is deterministic") {
  Problem p = heads(8, 1024);
  p.heads_kv = 2;
  p.causal = true;
  const auto pp = test::build(p, "ck", Direction::bwd);
  const auto a = run(pp, mi300x());
  const auto b = run(pp, mi300x());
  CHECK(a.time == b.time);
  CHECK(a.total.to_json() == b.total.to_json());
  CHECK(a.events == b.events);
}

TEST_CASE("a wave resumes past a barrier only once it resolves: each barrier's latency is on a lone workgroup's path") {
  // One aiter-v3 forward workgroup alone on the GPU: every wave group waits at every barrier, so
  // raising cu.barrier_latency by 1000 cycles delays the kernel by 1000 cycles per barrier it
  // passes (counted from the program: prologue, iterations x loop body, epilogue).
  const auto pp = test::build(heads(1, 256), "aiter-v3", Direction::fwd);
  const auto& kp = pp.kernels.at(0);
  const auto barriers = [](const CompiledBody& b) {
    std::uint64_t n = 0;
    for (const auto& op : b.ops) n += op.pipe == Pipe::sync ? op.cost.barriers : 0;
    return n;
  };
  const std::uint64_t passed =
      barriers(kp.prologue) + kp.pass(0, 0).iterations() * barriers(kp.body) + barriers(kp.epilogue);
  REQUIRE(kp.workgroups() == 1);
  REQUIRE(kp.passes(0) == 1);
  REQUIRE(passed > 0);
  const auto base = run(pp, mi300x({"clock.engine=1GHz", "cu.barrier_latency=20cyc", "clock.xcd_spread=0"}));
  const auto slow = run(pp, mi300x({"clock.engine=1GHz", "cu.barrier_latency=1020cyc", "clock.xcd_spread=0"}));
  const auto span = [](const sim::RunResult& r) { return static_cast<double>(r.kernels[0].end - r.kernels[0].start); };
  const double added_cycles = (span(slow) - span(base)) / 1000.0;  // 1 GHz: 1000 ticks (ps) per cycle
  CHECK(added_cycles == doctest::Approx(1000.0 * static_cast<double>(passed)).epsilon(0.01));
}

TEST_CASE("instruction issue: one wave per SIMD pays its issue turns and two waves per SIMD hide them") {
  // aiter-v3 backward main kernel: one wave per SIMD (512 registers), 421 instructions per
  // iteration against 1920 cycles of MFMA: at 4 cycles per turn its issue nearly fills the MFMA
  // time, and dependences expose it. The forward has two waves per SIMD: one issues while the
  // other's MFMAs and VALU run.
  const auto time_of = [](const Direction d, const std::string& interval, KernelKind kind) {
    const auto pp = test::build(heads(16, 2048), "aiter-v3", d);
    const auto r = run(pp, mi300x({"clock.engine=1.5GHz", "cu.wave_issue_interval=" + interval}));
    for (const auto& k : r.kernels) {
      if (k.kind == kind) return static_cast<double>(k.end - k.start);
    }
    throw std::runtime_error("kernel not run");
  };
  const double bwd1 = time_of(Direction::bwd, "1cyc", KernelKind::bwd_main);
  const double bwd4 = time_of(Direction::bwd, "4cyc", KernelKind::bwd_main);
  CHECK(bwd4 > 1.05 * bwd1);
  const double fwd1 = time_of(Direction::fwd, "1cyc", KernelKind::fwd);
  const double fwd4 = time_of(Direction::fwd, "4cyc", KernelKind::fwd);
  CHECK(fwd4 == doctest::Approx(fwd1).epsilon(0.005));
}

TEST_CASE("fixed-latency waits: a lone workgroup's issue-bound loop takes its waits once per instruction") {
  // One aiter-v3 forward workgroup without a mask at 1 GHz, its loop's instructions followed by
  // 100 or 200 cycles of wait each (a what-if): the waves' issue streams are then the loop's
  // critical path, so the kernel takes 100 cycles more per instruction a wave group issues in the
  // loop (iterations x the body's compute instructions); the prologue and epilogue do not wait.
  Problem p = heads(1, 256);
  p.causal = false;
  const auto pass = [&](int wait) {
    return test::build(p, "aiter-v3,fwd.loop.issue_wait_per_instruction=" + std::to_string(wait), Direction::fwd);
  };
  const auto base = pass(100), slow = pass(200);
  const auto& kp = base.kernels.at(0);
  REQUIRE(kp.workgroups() == 1);
  std::uint64_t per_iteration = 0;
  for (const auto& op : kp.body.ops) {
    if (op.pipe != Pipe::matrix && op.pipe != Pipe::vector) continue;
    per_iteration += op.cost.issued();
  }
  const std::uint64_t instructions = kp.pass(0, 0).iterations() * per_iteration;
  REQUIRE(instructions > 0);
  const auto& gpu = mi300x({"clock.engine=1GHz", "clock.xcd_spread=0"});
  const auto span = [&](const PassPrograms& pp) {
    const auto r = run(pp, gpu);
    return static_cast<double>(r.kernels[0].end - r.kernels[0].start);
  };
  const double added_cycles = (span(slow) - span(base)) / 1000.0;  // 1 GHz: 1000 ticks (ps) per cycle
  CHECK(added_cycles == doctest::Approx(100.0 * static_cast<double>(instructions)).epsilon(0.01));
}
