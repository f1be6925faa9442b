// The kernels of a forward or backward pass as tile programs: how workgroups map to blocks, and
// each kernel's prologue, loop body and epilogue as compiled dependence graphs with their costs.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "arch/gpu_spec.h"
#include "workloads/mask.h"
#include "workloads/schedule.h"
#include "workloads/tensors.h"
#include "workloads/tile_program.h"

namespace attnsim::workloads {

enum class Direction { fwd, bwd };
std::string_view to_string(Direction d);

enum class KernelKind : std::uint8_t { fwd, preprocess, zero_dq_acc, bwd_main, bwd_dq, convert_dq, reduce_dkdv, gemm };
std::string_view to_string(KernelKind k);

// One stretch of a workgroup's work: a fixed outer block and a run of inner iterations.
// Iteration i visits query head inner_head0 + i / inner.size() and inner block inner.first + i % inner.size().
struct Pass {
  std::uint32_t b = 0;
  std::uint32_t head = 0;         // head of the outer block (query head; KV head for kv_loop and reduce)
  std::uint64_t outer = 0;        // outer block index
  std::uint32_t inner_head0 = 0;  // first query head the iterations walk
  std::uint32_t inner_heads = 1;
  Range inner;
  std::uint64_t iterations() const { return inner.size() * inner_heads; }
};

// One kernel launch.
struct KernelProgram {
  KernelKind kind = KernelKind::fwd;
  std::string name;
  std::uint32_t waves = 1;       // waves that run the ops below (costs are per such wave)
  std::uint32_t load_waves = 0;  // further producer waves: they occupy slots, their loads are the memory ops
  // A persistent kernel: each CU's workgroup hands its slot to the next one once its loads are all
  // issued, and the next one's compute starts when it retires (docs/model.md, **Producer warpgroups and
  // persistent kernels**).
  bool persistent = false;
  std::uint32_t vgprs = 0;
  std::uint32_t lds_bytes = 0;
  // The shared-memory carve-out a measured launch of it reported, on a GPU whose L1 shares the LDS's
  // array (FwdSchedule::lds_carveout); 0: the rule of sim::split_l1.
  std::uint32_t lds_carveout = 0;
  // Its atomic ops: the requests each 32 B sector they touch receives (BwdSchedule's field).
  std::uint32_t atomic_requests_per_sector = 1;
  std::string mfma;              // matrix instruction name (empty: none)
  double mfma_flops = 0;         // FLOPs of one such instruction
  std::uint32_t outer_rows = 0;  // rows per outer block
  std::uint32_t inner_rows = 0;  // rows per inner block (0: no loop)
  CompiledBody prologue, body, epilogue;  // prologue and epilogue run once per pass

  // Grid: `blocks` outer blocks (after pairing) x `heads` x batch, ordered by `grid`.
  std::uint64_t workgroups() const { return grid_blocks * heads * batch; }
  std::uint32_t passes(std::uint64_t wg) const;
  Pass pass(std::uint64_t wg, std::uint32_t i) const;
  // The tile operations workgroup `wg` runs, each loop iteration counted (what WorkgroupCursor
  // yields, summed over TileOp::count): per pass the prologue, the epilogue and every iteration's body.
  std::uint64_t tile_ops(std::uint64_t wg) const;

  // A dispatch id's grid coordinates (after any XCD remap): grid block, head, batch.
  struct GridCoord {
    std::uint64_t block = 0, head = 0, batch = 0;
  };
  GridCoord grid_coord(std::uint64_t dispatch_id) const;

  // Mapping details (set by the builder).
  GridOrder grid = GridOrder::blocks_first;
  // GridOrder::longest_first: heads x batch per section (the last section takes the remainder) and
  // the outer blocks in dispatch order, longest loop first.
  std::uint64_t section_heads = 1;
  std::vector<std::uint32_t> block_order;
  std::uint32_t xcd_remap = 0;    // > 1: dispatch id -> logical id so consecutive logical ids share an XCD
  std::uint64_t blocks = 0;       // outer blocks per head
  std::uint64_t grid_blocks = 0;  // blocks per head in the grid (halved when paired)
  bool paired = false;
  std::uint32_t heads = 0, batch = 0;
  std::uint32_t group = 1;        // query heads per KV head
  bool heads_are_kv = false;      // grid heads index KV heads
  bool walks_group = false;       // iterations walk all query heads of the KV head (kv_loop)
  bool inner_is_keys = true;      // inner blocks are key blocks (fwd, bwd_dq) or query blocks (bwd_main)
  const Mask* mask = nullptr;     // none: no tile is masked
  std::uint64_t fixed_inner = 0;  // > 0: every pass walks inner blocks [0, fixed_inner) (GEMM: its K slices)
};

// Everything needed to run a pass: the problem, the schedule, the mask, the tensors, the kernels.
struct PassPrograms {
  Problem problem;
  KernelSchedule schedule;
  Direction direction = Direction::fwd;
  std::unique_ptr<Mask> mask;
  std::unique_ptr<TensorSet> tensors;
  std::vector<KernelProgram> kernels;  // in stream order
  // Kernels the caller runs outside the pass (not timed, not counted): before it (the dQ
  // accumulator's memset when the schedule leaves it to the caller) and after it (the group sum of
  // expanded dK/dV when left to the caller). The functional check runs them to compare results.
  std::vector<KernelProgram> caller_before, caller_after;
  std::uint32_t dq_slices = 0;         // split dQ: accumulator slices (= key blocks)
  std::uint32_t wave_size = 64;        // of the GPU the costs were computed for
};

// The logical workgroup a dispatch id runs under an XCD remap over `xcds` XCDs (round-robin
// dispatch sends id i to XCD i mod xcds): XCD x's ids get the x-th contiguous chunk of logical ids.
// A bijection on [0, workgroups); the identity when xcds <= 1.
std::uint64_t remap_for_xcds(std::uint64_t id, std::uint64_t workgroups, std::uint32_t xcds);

// Contract: throws arch::ConfigError (key hbm.capacity, origin `origin`) when `tensors` end beyond
// the GPU's memory; `what` names them in the message ("the fwd pass's tensors").
void check_fits_memory(const TensorSet& tensors, const arch::GpuSpec& gpu, const std::string& origin, const std::string& what);

// Builds the kernels of one direction. Instruction counts use the arch's wave size and the
// FLOPs of the schedule's matrix instruction.
// Contract: throws arch::ConfigError when the arch lacks the schedule's matrix instruction or the
// schedule does not fit the arch (a workgroup larger than a CU allows, LDS beyond the CU's).
PassPrograms build_pass(const Problem& p, const KernelSchedule& k, Direction d, const arch::GpuSpec& gpu);

// The row block a memory op of `iteration` in `pass` touches, and its query/KV head.
struct TileRef {
  std::uint32_t b = 0, head = 0, slice = 0;
  std::uint64_t row0 = 0;
  std::uint32_t rows = 0;
};

// Resolves a memory operation to the tile(s) it touches; calls f(const TileRef&) for each (an op
// that covers every dQ slice or every head of a group touches several).
template <class F>
void for_each_tile(const PassPrograms& pp, const KernelProgram& kp, const OpTemplate& op, const Pass& pass,
                   std::uint64_t iteration, F&& f);

// One instantiated tile operation, as the simulator receives it.
struct TileOp {
  const OpTemplate* op = nullptr;
  std::uint16_t index = 0;       // op index in its body
  std::uint8_t body = 0;         // 0 prologue, 1 loop body, 2 epilogue
  bool masked = false;           // some tile of the operation needs masking work
  std::uint32_t pass = 0;
  std::uint64_t iteration = 0;   // the loop step (a batch of `count` loop iterations), or 0
  // The loop iterations the operation covers: [first, first + count), of which `masked_count` pay
  // the mask cost. Outside the loop body: first 0, count 1, masked_count 0.
  std::uint64_t first = 0;
  std::uint32_t count = 1;
  std::uint32_t masked_count = 0;
};

// The operations of each body (prologue, loop body, epilogue) one reader of a cursor wants: their
// indices in the body, in ascending order.
struct OpFilter {
  std::array<std::vector<std::uint16_t>, 3> ops;
};

// Streams one workgroup's tile operations in program order, pass by pass, without storing them.
class WorkgroupCursor {
 public:
  // Contract: with a filter, yields exactly the operations the unfiltered cursor yields whose index
  // the filter lists for their body (a body with none listed is skipped, however many
  // iterations it has). The filter must outlive the cursor.
  // With `batch` > 1, each loop-body operation stands for a step of consecutive iterations: the
  // first and the last iteration of a pass are steps of their own, and the iterations between go
  // `batch` per step (the last such step takes what remains); the operation carries iteration = j,
  // the step's index. With batch 1 (the default) every step is one iteration (first == iteration).
  WorkgroupCursor(const PassPrograms& pp, const KernelProgram& kp, std::uint64_t wg, const OpFilter* filter = nullptr,
                  std::uint32_t batch = 1);
  // Contract: fills `out` and returns true while operations remain; once it has returned false it
  // keeps returning false.
  bool next(TileOp& out);
  const Pass& current_pass() const { return pass_; }

 private:
  bool start_pass();
  const PassPrograms& pp_;
  const KernelProgram& kp_;
  std::uint64_t wg_;
  std::uint32_t npasses_, pass_index_ = 0;
  Pass pass_;
  std::uint8_t body_ = 0;
  const OpFilter* filter_;
  std::uint16_t op_ = 0;  // the position in the body (in the filter's list with a filter)
  std::uint64_t iteration_ = 0;
  std::uint32_t batch_ = 1;
  std::uint64_t first_ = 0;                      // of the current loop step
  std::uint32_t count_ = 1, masked_count_ = 0;
  Range full_;  // the pass's inner blocks whose tiles are full (full_inner_blocks)
  // The first iteration of loop step j of a pass of `iterations`: iteration 0 and the last
  // iteration are steps of their own, the ones between go batch_ per step.
  std::uint64_t step_first(std::uint64_t j, std::uint64_t iterations) const {
    return j == 0 ? 0 : std::min(1 + (j - 1) * batch_, iterations - 1);
  }
  bool started_ = false;
  bool done_ = false;
};

// Is the tile of this iteration partially masked or overhanging (does it pay the mask cost)?
bool iteration_masked(const KernelProgram& kp, const Pass& pass, std::uint64_t iteration);
// The inner blocks (iteration_block's values) whose tiles in `pass` are full: an iteration is
// masked exactly when its block lies outside (all of them full without a mask).
Range full_inner_blocks(const KernelProgram& kp, const Pass& pass);

}  // namespace attnsim::workloads

#include "workloads/kernel_program_inl.h"
