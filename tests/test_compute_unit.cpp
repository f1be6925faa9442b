// One CU's pipes at the tile-operation level: matrix work per SIMD, VALU co-issue beside MFMAs,
// the LDS, and the window of outstanding line requests (hand-computed cases, MI300X at 1 GHz).
#include <doctest/doctest.h>

#include "sim/compute_unit.h"
#include "workload_fixture.h"

using namespace attnsim;
using namespace attnsim::sim;

namespace {
const arch::MatrixInstruction& mfma32(const arch::GpuSpec& gpu) {
  for (const auto& m : gpu.cu.matrix_instructions) {
    if (m.name == "v_mfma_f32_32x32x8_bf16") return m;
  }
  throw std::runtime_error("no 32x32x8 bf16 MFMA");
}
}  // namespace

TEST_CASE("matrix work: 32 cycles per 32x32x8 MFMA on every SIMD the group spans and groups queue") {
  const auto& gpu = test::gpu("mi300x");
  const Clock ghz(1e9);  // 1 cycle = 1 ns
  const PipeCosts pc(gpu, &mfma32(gpu), ghz);
  CHECK(pc.mfma == 32'000);
  CHECK(pc.mfma_block == 4'000);  // 32 - 28 co-issue cycles
  ComputeUnit cu(gpu, 1e9);
  workloads::OpCost four;
  four.mfma = 4;
  GroupWork w{0, 4, &four, false, {}};
  CHECK(cu.compute(0, w, pc) == 128'000);
  CHECK(cu.compute(0, w, pc) == 256'000);  // a second wave group on the same SIMDs waits
  CHECK(cu.matrix_busy() == 2 * 4 * 128'000);
}

TEST_CASE("the pipes' busy time by a given moment counts what they executed and not what was reserved") {
  // MI300X at 1 GHz: 4 MFMAs of 32 cycles on each of 4 SIMDs reserve 128 ns of matrix pipe each,
  // and 16 ns of VALU (4 blocked cycles per MFMA). A second group queues behind on the same SIMDs.
  const auto& gpu = test::gpu("mi300x");
  const PipeCosts pc(gpu, &mfma32(gpu), Clock(1e9));
  ComputeUnit cu(gpu, 1e9);
  workloads::OpCost four;
  four.mfma = 4;
  cu.compute(0, GroupWork{0, 4, &four, false, {}}, pc);
  cu.compute(0, GroupWork{0, 4, &four, false, {}}, pc);  // matrix [128, 256) ns, VALU [16, 32) ns
  CHECK(cu.matrix_busy() == 4 * 256'000);
  CHECK(cu.matrix_busy_by(64'000) == 4 * 64'000);
  CHECK(cu.matrix_busy_by(200'000) == 4 * 200'000);
  CHECK(cu.matrix_busy_by(300'000) == cu.matrix_busy());
  CHECK(cu.vector_busy_by(24'000) == 4 * 24'000);
  CHECK(cu.vector_busy_by(64'000) == cu.vector_busy());
}

TEST_CASE("an operation's matrix results come the instruction's latency after its last issue and the pipe frees earlier") {
  // H200's mma.sync.m16n8k16: 6 cycles per instruction, latency 24 (measured, H200-PROBE). Four
  // instructions on one sub-partition: the last issues at 18, its result is ready at 18 + 24 = 42;
  // the pipe is free at 24, so a second group's four end at 48 and are ready at 66.
  const auto& gpu = test::gpu("h200");
  const arch::MatrixInstruction* mma = nullptr;
  for (const auto& m : gpu.cu.matrix_instructions) {
    if (m.name == "mma.sync.m16n8k16.f32.bf16") mma = &m;
  }
  REQUIRE(mma != nullptr);
  REQUIRE(mma->latency == 24);
  const PipeCosts pc(gpu, mma, Clock(1e9));
  CHECK(pc.mfma_result == 18'000);
  ComputeUnit cu(gpu, 1e9);
  workloads::OpCost four;
  four.mfma = 4;
  CHECK(cu.compute(0, GroupWork{0, 1, &four, false, {}}, pc) == 42'000);
  CHECK(cu.compute(0, GroupWork{0, 1, &four, false, {}}, pc) == 66'000);
  CHECK(cu.matrix_busy() == 48'000);
  // Without a latency (the MI300X configs) results come when the pipe frees (the case above).
  CHECK(PipeCosts(test::gpu("mi300x"), &mfma32(test::gpu("mi300x")), Clock(1e9)).mfma_result == 0);
}

TEST_CASE("VALU work of another wave overlaps MFMAs except for their blocked cycles") {
  const auto& gpu = test::gpu("mi300x");
  const PipeCosts pc(gpu, &mfma32(gpu), Clock(1e9));
  ComputeUnit cu(gpu, 1e9);
  workloads::OpCost matrix, vector;
  matrix.mfma = 4;
  vector.valu = 10;  // 10 x 4 cycles (wave64 on 16 lanes)
  vector.trans = 1;  // 16 cycles (quarter rate)
  CHECK(cu.compute(0, GroupWork{0, 1, &matrix, false, {}}, pc) == 128'000);
  // The MFMAs hold the VALU for 4 x 4 cycles; then 40 + 16 cycles of vector work.
  CHECK(cu.compute(0, GroupWork{0, 1, &vector, false, {}}, pc) == 16'000 + 56'000);
  // On another SIMD nothing waits.
  CHECK(cu.compute(0, GroupWork{1, 1, &vector, false, {}}, pc) == 56'000);
  // Masking adds its VALU instructions.
  vector.mask_valu = 5;
  CHECK(cu.compute(0, GroupWork{2, 1, &vector, true, {}}, pc) == 56'000 + 20'000);
}

TEST_CASE("a wave issues one instruction per turn at the scheduler: 4 cycles on MI300X") {
  const auto& gpu = test::gpu("mi300x");
  const PipeCosts pc(gpu, &mfma32(gpu), Clock(1e9));
  CHECK(pc.issue == 4'000);  // one SIMD per clock, round robin over 4 SIMDs
  ComputeUnit cu(gpu, 1e9);
  workloads::OpCost scalar;
  scalar.valu = 10;        // 40 cycles of VALU
  scalar.issue_only = 30;  // 40 instructions: 160 cycles of issue
  Tick issued = 0;
  GroupWork w{0, 1, &scalar, false, {}};
  w.issued = &issued;
  CHECK(cu.compute(0, w, pc) == 160'000);
  CHECK(issued == 160'000);
  // The wave's next operation issues after this one's last instruction, whatever the pipes allow.
  workloads::OpCost matrix;
  matrix.mfma = 2;  // 2 turns, then 64 cycles of matrix work from `now`
  GroupWork m{0, 1, &matrix, false, {}};
  m.issued = &issued;
  CHECK(cu.compute(0, m, pc) == 168'000);
  CHECK(issued == 168'000);
  // Four iterations at once issue four times the instructions; untimed issue (null) is not bound.
  Tick other = 1'000'000;
  GroupWork batch{1, 1, &scalar, false, {}};
  batch.count = 4;
  batch.issued = &other;
  CHECK(cu.compute(0, batch, pc) == 1'000'000 + 4 * 160'000);
  batch.issued = nullptr;
  CHECK(cu.compute(0, batch, pc) == 4 * 40'000 + 4 * 40'000);  // the VALU only, after the last batch's VALU
}

TEST_CASE("an NVIDIA sub-partition issues one instruction per clock: issue never binds VALU work") {
  const auto& gpu = test::gpu("h100");
  const PipeCosts pc(gpu, nullptr, Clock(1e9));
  CHECK(pc.issue == 1'000);
  CHECK(pc.valu == 1'000);  // a warp of 32 on 32 lanes
  ComputeUnit cu(gpu, 1e9);
  workloads::OpCost v;
  v.valu = 10;
  Tick issued = 0;
  GroupWork w{0, 1, &v, false, {}};
  w.issued = &issued;
  CHECK(cu.compute(0, w, pc) == 10'000);
  CHECK(issued == 10'000);
}

TEST_CASE("a wave waits an operation's fixed-latency cycles after each instruction and its SIMD's pipes do not") {
  // H100 at 1 GHz: 10 VALU and 20 issue-only instructions, each followed by 1.5 cycles of wait:
  // 30 x (1 + 1.5) = 75 cycles of the wave's own issue, where the VALU is busy 10.
  const auto& gpu = test::gpu("h100");
  const PipeCosts pc(gpu, nullptr, Clock(1e9));
  CHECK(pc.cycle == doctest::Approx(1000.0));
  ComputeUnit cu(gpu, 1e9);
  workloads::OpCost v;
  v.valu = 10;
  v.issue_only = 20;
  v.issue_wait = 1.5f;
  Tick issued = 0;
  GroupWork w{0, 1, &v, false, {}};
  w.issued = &issued;
  WaitCause bound = WaitCause::lds;
  CHECK(cu.compute(0, w, pc, &bound) == 75'000);
  CHECK(issued == 75'000);
  CHECK(bound == WaitCause::issue);  // the wave's own stream, not a pipe
  // The waits are the wave's own: a second wave group on the same SIMD gets the VALU at 10 cycles
  // (after the first one's 10), not after the first one's issue stream.
  Tick other = 0;
  workloads::OpCost u;
  u.valu = 10;
  GroupWork x{0, 1, &u, false, {}};
  x.issued = &other;
  CHECK(cu.compute(0, x, pc) == 20'000);
  // Two iterations batched wait twice as long; a masked tile's VALU waits too: 2 x 30 + 4 = 64
  // instructions, 160 cycles.
  v.mask_valu = 4;
  Tick batch = 0;
  GroupWork b{1, 1, &v, false, {}};
  b.count = 2;
  b.masked_count = 1;
  b.issued = &batch;
  cu.compute(0, b, pc);
  CHECK(batch == 160'000);
  // A SIMD idle while its wave waits on its own stream charges that time to `issue`: the next
  // operation of the first group, issued at 75 ns, finds SIMD 0 idle since 20 ns.
  workloads::OpCost next;
  next.valu = 1;
  GroupWork after{0, 1, &next, false, FinishCause{WaitCause::issue, 0}};
  cu.compute(75'000, after, pc);
  CHECK(cu.breakdown(0, 100'000).waiting[static_cast<std::size_t>(WaitCause::issue)] == 55'000);
}

TEST_CASE("LDS bytes of an op are served at 128 B per clock per CU") {
  // The reads' data reaches the registers cu.lds_latency (51 cycles on the MI300X) after the last
  // read's transfer; the LDS itself is free after the transfers.
  const auto& gpu = test::gpu("mi300x");
  const PipeCosts pc(gpu, &mfma32(gpu), Clock(1e9));
  REQUIRE(gpu.cu.lds_latency.value == 51);
  CHECK(pc.lds_result == 51'000);
  ComputeUnit cu(gpu, 1e9);
  workloads::OpCost reads;
  reads.lds_read = 1024;  // per wave; 4 waves: 4096 B = 32 cycles
  CHECK(cu.compute(0, GroupWork{0, 4, &reads, false, {}}, pc) == 32'000 + 51'000);
  CHECK(cu.lds_busy() == 32'000);
}

TEST_CASE("an op waits for its LDS reads' load-to-use latency only where the LDS binds it") {
  // MI300X at 1 GHz: lds_latency 51 cycles, 128 B per clock.
  const auto& gpu = test::gpu("mi300x");
  const PipeCosts pc(gpu, &mfma32(gpu), Clock(1e9));
  ComputeUnit cu(gpu, 1e9);
  // Writes only (a tile stored to the LDS): no load-to-use latency. 4 waves x 1024 B: 32 cycles.
  workloads::OpCost writes;
  writes.lds_write = 1024;
  CHECK(cu.compute(0, GroupWork{0, 4, &writes, false, {}}, pc) == 32'000);
  // Reads beside matrix work that outlasts them: 4 MFMAs (128 cycles) on each SIMD; the reads'
  // 32 cycles (queued after the writes: 32..64) plus 51 end at 115, before the MFMAs.
  workloads::OpCost gemm;
  gemm.mfma = 4;
  gemm.lds_read = 1024;
  CHECK(cu.compute(0, GroupWork{0, 4, &gemm, false, {}}, pc) == 128'000);
  // Reads that end later than the matrix work: 4 waves x 8192 B = 256 cycles, from 64 (after the
  // two operations above): their data is in at 64 + 256 + 51 = 371; the MFMAs end at 256.
  workloads::OpCost heavy;
  heavy.mfma = 4;
  heavy.lds_read = 8192;
  CHECK(cu.compute(0, GroupWork{0, 4, &heavy, false, {}}, pc) == 371'000);
}

TEST_CASE("an op's LDS wavefronts take a clock each when they take longer than its bytes") {
  // 1024 B per wave would take 8 clocks at 128 B per clock; 20 wavefronts (2-byte accesses with bank
  // conflicts) take 20. Four waves: 80 clocks. An op whose wavefronts take less keeps its bytes' time.
  const auto& gpu = test::gpu("mi300x");
  const PipeCosts pc(gpu, &mfma32(gpu), Clock(1e9));
  ComputeUnit cu(gpu, 1e9);
  workloads::OpCost narrow;
  narrow.lds_read = 1024;
  narrow.lds_wavefronts = 20;
  // Each op's reads' data comes cu.lds_latency (51 cycles) after its last transfer.
  CHECK(cu.compute(0, GroupWork{0, 4, &narrow, false, {}}, pc) == 80'000 + 51'000);
  CHECK(cu.lds_busy() == 80'000);
  workloads::OpCost wide;
  wide.lds_read = 1024;
  wide.lds_wavefronts = 4;
  CHECK(cu.compute(80'000, GroupWork{0, 4, &wide, false, {}}, pc) == 80'000 + 32'000 + 51'000);
}

TEST_CASE("the window of outstanding line requests bounds a memory operation by Little's law") {
  const auto& gpu = test::gpu("mi300x");
  ComputeUnit cu(gpu, 1e9);
  const std::uint32_t window = gpu.cu.memory_inflight_lines;
  REQUIRE(window == 64);
  // 256 requests of 1 us round trip through 64 slots: 4 rounds, 4 us.
  CHECK(cu.hold_window(0, 256 * 1'000'000) == 4'000'000);
  // The next operation's requests wait for the slots: 64 more requests end one round later.
  CHECK(cu.hold_window(1'000'000, 64 * 1'000'000) == 5'000'000);
  // An idle window: an operation of fewer requests than slots is bounded by n L / slots only.
  ComputeUnit idle(gpu, 1e9);
  CHECK(idle.hold_window(0, 8 * 1'000'000) == 125'000);
  // The L1 issue path serves 128 B per clock: 64 lines of 128 B take 64 cycles.
  CHECK(cu.issue(0, 64 * 128) == 64'000);
}

TEST_CASE("a SIMD's time splits into matrix work and vector work alone and waits by cause and the tail (by hand)") {
  const auto& gpu = test::gpu("mi300x");
  const PipeCosts pc(gpu, &mfma32(gpu), Clock(1e9));
  ComputeUnit cu(gpu, 1e9, 100'000);  // the kernel starts at 100 ns
  workloads::OpCost matrix, vector;
  matrix.mfma = 4;   // 128 ns of matrix pipe (its 16 ns of blocked VALU inside it)
  vector.valu = 10;  // 40 ns of VALU
  WaitCause bound = WaitCause::count;
  // SIMD 0 idles from the start until 150 ns, waiting on an HBM load whose duration was 20 % latency.
  GroupWork w{0, 1, &matrix, false, FinishCause{WaitCause::hbm, 51}};
  CHECK(cu.compute(150'000, w, pc, &bound) == 278'000);
  CHECK(bound == WaitCause::sync);  // bound by its matrix work
  // Then vector work alone on SIMD 0 from 300 ns (idle 22 ns, waiting on the LDS).
  GroupWork v{0, 1, &vector, false, FinishCause{WaitCause::lds, 0}};
  CHECK(cu.compute(300'000, v, pc, &bound) == 340'000);
  CHECK(bound == WaitCause::vector);
  const TimeBreakdown b = cu.breakdown(100'000, 500'000);
  CHECK(b.matrix == 128'000);
  CHECK(b.vector == 40'000);
  CHECK(b.waiting[static_cast<std::size_t>(WaitCause::latency)] == 10'000);  // 50 ns x 51 / 255
  CHECK(b.waiting[static_cast<std::size_t>(WaitCause::hbm)] == 40'000);
  CHECK(b.waiting[static_cast<std::size_t>(WaitCause::lds)] == 22'000);
  // SIMD 0 idle from 340 to 500 ns, SIMDs 1-3 idle all 400 ns.
  CHECK(b.tail == 160'000 + 3 * 400'000);
  CHECK(b.total() == 4 * 400'000);
}
