#include "workloads/analytic.h"

namespace attnsim::workloads {
namespace {

std::uint64_t rows_bytes(const TensorDesc& d, std::uint64_t row0, std::uint64_t row_end) {
  const std::uint64_t end = std::min(row_end, d.rows);
  return end > row0 ? (end - row0) * d.cols * d.elem_bytes : 0;
}

std::uint32_t fanout(const PassPrograms& pp, const KernelProgram& kp, const OpTemplate& op) {
  switch (op.action) {
    case Action::load_dq_acc:
    case Action::zero_dq_acc: return std::max<std::uint32_t>(1, pp.dq_slices);
    case Action::load_dk_expanded:
    case Action::load_dv_expanded: return kp.group;
    default: return 1;
  }
}

void add(TensorTraffic& t, const OpTemplate& op, std::uint64_t bytes) {
  const auto i = static_cast<std::size_t>(op.tensor);
  if (is_store(op.action)) t.written[i] += bytes; else t.read[i] += bytes;
}

}  // namespace

double fa_flops(const Problem& p, Direction d) {
  double f = 2.0 * p.batch * p.heads_q * static_cast<double>(p.seqlen_q) * static_cast<double>(p.seqlen_k) *
             (p.head_dim_qk + p.head_dim_v);
  if (p.causal) f /= 2;
  return d == Direction::fwd ? f : 2.5 * f;
}

PassCounts analytic_counts(const PassPrograms& pp) {
  PassCounts c;
  c.fa_flops = fa_flops(pp.problem, pp.direction);
  for (const auto& kp : pp.kernels) {
    double mfma_per_iter = 0, trans_per_iter = 0, valu_per_iter = 0, mask_per_iter = 0;
    for (const auto& op : kp.body.ops) {
      mfma_per_iter += op.cost.mfma;
      trans_per_iter += op.cost.trans;
      valu_per_iter += op.cost.valu;
      mask_per_iter += op.cost.mask_valu;
    }
    double mfma_fixed = 0, valu_fixed = 0, trans_fixed = 0;
    for (const CompiledBody* b : {&kp.prologue, &kp.epilogue}) {
      for (const auto& op : b->ops) {
        mfma_fixed += op.cost.mfma;
        valu_fixed += op.cost.valu;
        trans_fixed += op.cost.trans;
      }
    }
    const double lanes = static_cast<double>(kp.waves) * pp.wave_size;
    c.workgroups += kp.workgroups();
    for (std::uint64_t wg = 0; wg < kp.workgroups(); ++wg) {
      for (std::uint32_t pi = 0; pi < kp.passes(wg); ++pi) {
        const Pass ps = kp.pass(wg, pi);
        const std::uint64_t iters = ps.iterations();
        c.iterations += iters;
        c.tile_ops += kp.prologue.ops.size() + kp.epilogue.ops.size() + iters * kp.body.ops.size();
        c.mfma_instructions += (iters * mfma_per_iter + mfma_fixed) * kp.waves;
        c.mfma_flops_issued += (iters * mfma_per_iter + mfma_fixed) * kp.waves * kp.mfma_flops;
        c.exps += (iters * trans_per_iter + trans_fixed) * lanes;
        std::uint64_t masked = 0;  // iterations whose tile pays the masking VALU
        for (std::uint64_t it = 0; it < iters && mask_per_iter > 0; ++it) masked += iteration_masked(kp, ps, it);
        c.valu_ops += (iters * valu_per_iter + masked * mask_per_iter + valu_fixed) * lanes;
        for (const CompiledBody* b : {&kp.prologue, &kp.body, &kp.epilogue}) {
          for (const auto& op : b->ops) {
            if (!is_memory(op.action)) continue;
            const TensorDesc& d = (*pp.tensors)[op.tensor];
            std::uint64_t bytes;
            if (op.rows == RowsOf::outer) {
              const std::uint64_t r0 = ps.outer * kp.outer_rows;
              bytes = rows_bytes(d, r0, r0 + kp.outer_rows);
              if (b == &kp.body) bytes *= iters;
            } else {
              // Every inner block of the range, once per walked head: rows [first, last) in one sum.
              bytes = rows_bytes(d, ps.inner.first * kp.inner_rows, ps.inner.last * kp.inner_rows) * ps.inner_heads;
            }
            add(c.traffic, op, bytes * fanout(pp, kp, op));
          }
        }
      }
    }
  }
  return c;
}

TensorTraffic program_traffic(const PassPrograms& pp) {
  TensorTraffic t;
  for (const auto& kp : pp.kernels) {
    for (std::uint64_t wg = 0; wg < kp.workgroups(); ++wg) {
      WorkgroupCursor cur(pp, kp, wg);
      TileOp op;
      while (cur.next(op)) {
        if (!is_memory(op.op->action)) continue;
        for_each_tile(pp, kp, *op.op, cur.current_pass(), op.iteration, [&](const TileRef& r) {
          const TensorDesc& d = (*pp.tensors)[op.op->tensor];
          add(t, *op.op, for_each_run(d, r.slice, r.b, r.head, r.row0, r.rows, [](std::uint64_t, std::uint64_t) {}));
        });
      }
    }
  }
  return t;
}

std::uint64_t seed_minimum_bwd_bytes(const Problem& p) {
  const std::uint64_t e = p.elem_bytes();
  const std::uint64_t q = std::uint64_t{p.batch} * p.heads_q * p.seqlen_q * p.head_dim_qk;
  const std::uint64_t k = std::uint64_t{p.batch} * p.heads_kv * p.seqlen_k * p.head_dim_qk;
  const std::uint64_t v = std::uint64_t{p.batch} * p.heads_kv * p.seqlen_k * p.head_dim_v;
  const std::uint64_t o = std::uint64_t{p.batch} * p.heads_q * p.seqlen_q * p.head_dim_v;
  return (q + k + v + o /* dO */ + q /* dQ */ + k /* dK */ + v /* dV */) * e;
}

std::uint64_t seed_two_pass_bwd_bytes(const Problem& p, std::uint64_t block) {
  const std::uint64_t e = p.elem_bytes();
  const std::uint64_t q = std::uint64_t{p.batch} * p.heads_q * p.seqlen_q * p.head_dim_qk;
  const std::uint64_t k = std::uint64_t{p.batch} * p.heads_kv * p.seqlen_k * p.head_dim_qk;
  const std::uint64_t v = std::uint64_t{p.batch} * p.heads_kv * p.seqlen_k * p.head_dim_v;
  const std::uint64_t o = std::uint64_t{p.batch} * p.heads_q * p.seqlen_q * p.head_dim_v;
  const std::uint64_t kv_blocks = (p.seqlen_k + block - 1) / block;
  const std::uint64_t q_blocks = (p.seqlen_q + block - 1) / block;
  const std::uint64_t dkv_reads = kv_blocks * (q + o + o /* O and dO */) + k + v;
  const std::uint64_t dq_reads = q_blocks * (k + v) + q;
  const std::uint64_t writes = q + k + v;
  return (dkv_reads + dq_reads + writes) * e;
}

double matmul_flops(const Problem& p) {
  return 2.0 * p.batch * p.heads_q * static_cast<double>(p.seqlen_q) * static_cast<double>(p.seqlen_k) * p.head_dim_qk;
}

}  // namespace attnsim::workloads
