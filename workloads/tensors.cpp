#include "workloads/tensors.h"

namespace attnsim::workloads {

std::string_view to_string(TensorId t) {
  static constexpr std::array<std::string_view, kTensorCount> names{
      "q", "k", "v", "o", "lse", "do", "delta", "dq", "dk", "dv", "dq_acc", "dk_expanded", "dv_expanded",
      "gemm_a", "gemm_b", "gemm_c"};
  return names[static_cast<std::size_t>(t)];
}

namespace {

constexpr std::uint64_t kAlign = 4096;

// A [batch, heads, rows, cols] tensor in the problem's layout.
TensorDesc matrix(const Problem& p, std::uint32_t heads, std::uint64_t rows, std::uint32_t cols,
                  std::uint32_t elem_bytes, std::uint32_t slices = 1) {
  TensorDesc t;
  t.present = true;
  t.elem_bytes = elem_bytes;
  t.slices = slices;
  t.batch = p.batch;
  t.heads = heads;
  t.rows = rows;
  t.cols = cols;
  if (p.layout == Layout::bshd) {
    t.stride_row = static_cast<std::uint64_t>(heads) * cols;
    t.stride_head = cols;
    t.stride_batch = rows * t.stride_row;
  } else {
    t.stride_row = cols;
    t.stride_head = rows * cols;
    t.stride_batch = heads * t.stride_head;
  }
  t.stride_slice = p.batch * t.stride_batch;
  return t;
}

// A [batch, heads, rows] fp32 row statistic (LSE, D), always head-major as the kernels store it.
TensorDesc row_stat(const Problem& p) {
  TensorDesc t;
  t.present = true;
  t.elem_bytes = 4;
  t.batch = p.batch;
  t.heads = p.heads_q;
  t.rows = p.seqlen_q;
  t.cols = 1;
  t.stride_row = 1;
  t.stride_head = p.seqlen_q;
  t.stride_batch = p.heads_q * p.seqlen_q;
  t.stride_slice = p.batch * t.stride_batch;
  return t;
}

}  // namespace

TensorSet::TensorSet(const Problem& p, const TensorNeeds& needs) {
  const std::uint32_t e = p.elem_bytes();
  auto put = [&](TensorId id, TensorDesc d) { descs_[static_cast<std::size_t>(id)] = d; };
  put(TensorId::q, matrix(p, p.heads_q, p.seqlen_q, p.head_dim_qk, e));
  put(TensorId::k, matrix(p, p.heads_kv, p.seqlen_k, p.head_dim_qk, e));
  put(TensorId::v, matrix(p, p.heads_kv, p.seqlen_k, p.head_dim_v, e));
  // Outputs and gradients are written in 16-bit even for fp8 inputs.
  const std::uint32_t out = 2;
  put(TensorId::o, matrix(p, p.heads_q, p.seqlen_q, p.head_dim_v, out));
  put(TensorId::lse, row_stat(p));
  if (needs.backward) {
    put(TensorId::d_o, matrix(p, p.heads_q, p.seqlen_q, p.head_dim_v, out));
    put(TensorId::delta, row_stat(p));
    put(TensorId::dq, matrix(p, p.heads_q, p.seqlen_q, p.head_dim_qk, out));
    put(TensorId::dk, matrix(p, p.heads_kv, p.seqlen_k, p.head_dim_qk, out));
    put(TensorId::dv, matrix(p, p.heads_kv, p.seqlen_k, p.head_dim_v, out));
    if (needs.dq_acc_slices > 0) {
      put(TensorId::dq_acc, matrix(p, p.heads_q, p.seqlen_q, p.head_dim_qk, 4, needs.dq_acc_slices));
    }
    if (needs.expanded_dkdv) {
      put(TensorId::dk_expanded, matrix(p, p.heads_q, p.seqlen_k, p.head_dim_qk, out));
      put(TensorId::dv_expanded, matrix(p, p.heads_q, p.seqlen_k, p.head_dim_v, out));
    }
  }
  allocate();
}

TensorSet::TensorSet(const std::array<TensorDesc, kTensorCount>& descs) : descs_(descs) { allocate(); }

void TensorSet::allocate() {
  std::uint64_t next = kAlign;  // address 0 stays unused
  for (auto& d : descs_) {
    if (!d.present) continue;
    d.base = next;
    next += (d.bytes() + kAlign - 1) / kAlign * kAlign;
  }
  end_ = next;
}

}  // namespace attnsim::workloads
