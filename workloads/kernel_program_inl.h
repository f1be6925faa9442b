// Template definitions of kernel_program.h.
#pragma once

namespace attnsim::workloads {

inline std::uint32_t iteration_head(const Pass& pass, std::uint64_t iteration) {
  return pass.inner_head0 + static_cast<std::uint32_t>(iteration / std::max<std::uint64_t>(1, pass.inner.size()));
}
inline std::uint64_t iteration_block(const Pass& pass, std::uint64_t iteration) {
  return pass.inner.first + iteration % std::max<std::uint64_t>(1, pass.inner.size());
}

template <class F>
void for_each_tile(const PassPrograms& pp, const KernelProgram& kp, const OpTemplate& op, const Pass& pass,
                   std::uint64_t iteration, F&& f) {
  if (kp.kind == KernelKind::gemm) {
    // Outer blocks are row blocks of A and C, grid heads column blocks of C (rows of B), loop
    // iterations K slices; the operands' heads are their K slices, C's heads its column blocks.
    TileRef t;
    t.b = pass.b;
    const std::uint64_t k_slice = iteration_block(pass, iteration);
    if (op.tensor == TensorId::gemm_b) {
      t.head = static_cast<std::uint32_t>(k_slice);
      t.row0 = static_cast<std::uint64_t>(pass.head) * kp.inner_rows;
      t.rows = kp.inner_rows;
    } else {
      t.head = op.tensor == TensorId::gemm_a ? static_cast<std::uint32_t>(k_slice) : pass.head;
      t.row0 = pass.outer * kp.outer_rows;
      t.rows = kp.outer_rows;
    }
    f(static_cast<const TileRef&>(t));
    return;
  }
  const std::uint32_t group = kp.group;
  // Query head and KV head of this op's rows: kv_loop kernels walk the query heads of their KV head.
  const std::uint32_t qhead = kp.walks_group ? iteration_head(pass, iteration) : pass.head;
  const std::uint32_t kvhead = kp.heads_are_kv ? pass.head : pass.head / group;
  const bool kv_tensor = op.tensor == TensorId::k || op.tensor == TensorId::v || op.tensor == TensorId::dk ||
                         op.tensor == TensorId::dv;
  TileRef t;
  t.b = pass.b;
  t.head = kv_tensor ? kvhead : qhead;
  if (op.rows == RowsOf::outer) {
    t.row0 = pass.outer * kp.outer_rows;
    t.rows = kp.outer_rows;
  } else {
    t.row0 = iteration_block(pass, iteration) * kp.inner_rows;
    t.rows = kp.inner_rows;
  }
  switch (op.action) {
    case Action::load_dq_acc:
    case Action::zero_dq_acc:
      for (std::uint32_t s = 0; s < std::max<std::uint32_t>(1, pp.dq_slices); ++s) {
        t.slice = s;
        f(static_cast<const TileRef&>(t));
      }
      return;
    case Action::store_dq_acc:
      t.slice = static_cast<std::uint32_t>(pass.outer);
      f(static_cast<const TileRef&>(t));
      return;
    case Action::load_dk_expanded:
    case Action::load_dv_expanded:
      for (std::uint32_t g = 0; g < group; ++g) {
        t.head = pass.head * group + g;
        f(static_cast<const TileRef&>(t));
      }
      return;
    default:
      f(static_cast<const TileRef&>(t));
  }
}

}  // namespace attnsim::workloads
