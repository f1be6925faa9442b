// Tile operations and the dependence graph of a loop body: built by name, checked once with
// Boost.Graph (acyclic, topological order, critical path), then compiled to flat arrays.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/tensors.h"

namespace attnsim::workloads {

// What an operation does. Memory actions move one tile of one tensor; compute actions update the
// workgroup's tiles. The functional interpreter gives each its semantics; the simulator its cost.
enum class Action : std::uint8_t {
  load_q, load_k, load_v, load_o, load_do, load_lse, load_delta, load_dq_acc, load_dk_expanded, load_dv_expanded,
  load_a, load_b,                          // GEMM operands (into registers)
  store_o, store_lse, store_delta, store_dq, store_dk, store_dv, store_dq_acc, store_dk_expanded, store_dv_expanded,
  store_c,                                 // GEMM product
  zero_dq_acc, atomic_dq,
  qk, online_softmax, pv, finalize,        // forward
  row_dot,                                  // preprocess: D = rowsum(dO * O)
  scores, probs, dp, ds, dv_acc, dk_acc, dq_part, dq_acc_local,  // backward
  sum_slices, sum_group,                    // convert, GQA reduction
  lds_stage, lds_operands, mma,             // GEMM: registers to LDS, LDS to operand registers, the product
  barrier,
};
std::string_view to_string(Action a);
bool is_memory(Action a);
bool is_store(Action a);  // stores and atomics

// The unit an operation occupies.
enum class Pipe : std::uint8_t { memory, lds, matrix, vector, sync };
std::string_view to_string(Pipe p);

// Which rows of its tensor a memory operation touches.
enum class RowsOf : std::uint8_t { none, outer, inner };

// Instruction counts one wave issues for the operation.
struct OpCost {
  // Matrix work in the kernel's work units (arch::MatrixInstruction::work_unit: the instruction
  // itself, or an N = n_step slice of a variable-N instruction).
  std::uint32_t mfma = 0;
  std::uint32_t mfma_issued = 0;  // matrix instructions issued when they are not `mfma` (variable N), else 0
  std::uint32_t valu = 0;      // VALU instructions, transcendentals excluded
  std::uint32_t trans = 0;     // transcendental instructions (exp)
  std::uint32_t mask_valu = 0; // extra VALU when the tile needs masking
  // Engine cycles the wave waits after each of its instructions before issuing the next, beyond its
  // issue turn (fixed-latency dependences: LoopDensity::issue_wait_per_instruction); 0: none.
  float issue_wait = 0;
  std::uint64_t lds_read = 0;  // bytes
  std::uint64_t lds_write = 0; // bytes
  // LDS wavefronts per wave (bank passes, one per LDS clock) when they take longer than the bytes at
  // the LDS's bandwidth (narrow or conflicting accesses); 0: the bytes' time.
  std::uint64_t lds_wavefronts = 0;
  std::uint32_t barriers = 0;
  // Instructions that take only the wave's issue turns (SALU and SMEM, branches, s_waitcnt, LDS
  // and vector-memory instructions; s_nop as its wait states), no VALU or matrix pipe time.
  std::uint32_t issue_only = 0;
  // Memory loads: L1 tag lookups per unit the profiler counts (32 B sector on NVIDIA, 128 B line on
  // AMD) the waves' load instructions make; the ones after the first hit (FwdSchedule::q_l1_lookups).
  std::uint32_t l1_lookups = 1;
  // Memory loads: the bytes each wave keeps in flight while the operation loads (0: no limit of the
  // kernel's own, only the CU's window), e.g. 64 for a warp that loads one 2-byte element per lane
  // and waits for it before the next (FwdSchedule::loop_load_bytes_in_flight).
  std::uint32_t wave_bytes_in_flight = 0;
  // Pipe instructions and barriers (a body's critical path). Issue-only instructions are left out:
  // counted from a code object they include its s_barriers, which `barriers` counts already.
  std::uint64_t instructions() const { return issued_mfma() + valu + trans + barriers; }
  // Instructions a wave issues for the operation (one unmasked iteration), a turn each: its matrix,
  // VALU, transcendental and issue-only ones.
  std::uint64_t issued() const { return issued_mfma() + valu + trans + issue_only; }
  std::uint32_t issued_mfma() const { return mfma_issued ? mfma_issued : mfma; }
};

// A dependence on an operation `distance` iterations earlier (loop-carried).
struct CarriedDep {
  std::uint16_t op = 0;
  std::uint16_t distance = 1;
};

// One operation of a compiled body.
struct OpTemplate {
  Action action = Action::barrier;
  Pipe pipe = Pipe::sync;
  TensorId tensor = TensorId::count;  // memory operations only
  RowsOf rows = RowsOf::none;
  OpCost cost;
  std::uint16_t deps_begin = 0, deps_end = 0;        // into CompiledBody::deps
  std::uint16_t carried_begin = 0, carried_end = 0;  // into CompiledBody::carried
};

// A body as flat arrays in topological order: what the simulator and the interpreter walk.
struct CompiledBody {
  std::vector<OpTemplate> ops;
  std::vector<std::uint16_t> deps;     // same-iteration predecessors, by op index
  std::vector<CarriedDep> carried;     // predecessors in earlier iterations
  std::vector<std::string> names;      // op names, for traces and errors
  std::uint64_t critical_path = 0;     // longest chain of one iteration, in instructions per wave
  bool empty() const { return ops.empty(); }
};

// Collects operations and dependences by name, then compiles them.
class BodyBuilder {
 public:
  explicit BodyBuilder(std::string body_name) : body_(std::move(body_name)) {}

  // Adds an op; `after` names same-iteration predecessors that must already exist or be added later.
  BodyBuilder& op(std::string name, Action a, Pipe p, OpCost cost, std::vector<std::string> after = {},
                  TensorId tensor = TensorId::count, RowsOf rows = RowsOf::none);
  // Adds a loop-carried dependence: `name` in iteration i waits for `on` in iteration i - distance.
  BodyBuilder& carried(const std::string& name, const std::string& on, std::uint16_t distance);
  // Keeps the ops in the order they were added (a lane issues its ops in body order, as a wave its
  // instruction stream); without it the order is Boost's topological order. compile() then
  // rejects an op that depends on one added after it.
  BodyBuilder& program_order() {
    program_order_ = true;
    return *this;
  }

  // Contract: throws std::logic_error naming the body and the ops when a name is unknown, the
  // same-iteration dependences form a cycle (found with Boost.Graph's topological sort), or, in
  // program order, an op depends on a later one.
  CompiledBody compile() const;

 private:
  struct Pending {
    std::string name;
    Action action;
    Pipe pipe;
    OpCost cost;
    std::vector<std::string> after;
    TensorId tensor;
    RowsOf rows;
  };
  struct PendingCarried {
    std::string name, on;
    std::uint16_t distance;
  };
  std::string body_;
  bool program_order_ = false;
  std::vector<Pending> ops_;
  std::vector<PendingCarried> carried_;
};

}  // namespace attnsim::workloads
