#include "workloads/functional.h"

#include <cmath>
#include <limits>
#include <random>

#include <tbb/parallel_for.h>

#include "workloads/reference.h"

namespace attnsim::workloads {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// One workgroup's on-chip state: the tiles its ops read and write.
struct WgState {
  std::uint64_t outer0 = 0, inner0 = 0;  // first row of the outer and current inner block
  std::vector<float> q, k, v, o, d_o, s, dp, acc_a, acc_b, part, lse, delta, m, l;
};

class Interpreter {
 public:
  Interpreter(const PassPrograms& pp, HostTensors& host) : pp_(pp), p_(pp.problem), host_(host) {
    scale_ = 1.0f / std::sqrt(static_cast<float>(p_.head_dim_qk));
  }

  void run_kernel(const KernelProgram& kp, TensorTraffic& traffic) {
    // Workgroups that touch the same outputs share a (batch, KV head); run each such group in
    // workgroup order on one thread, and groups in parallel.
    const std::uint64_t ngroups = static_cast<std::uint64_t>(p_.batch) * p_.heads_kv;
    std::vector<std::vector<std::uint64_t>> groups(ngroups);
    for (std::uint64_t wg = 0; wg < kp.workgroups(); ++wg) {
      const Pass ps = kp.pass(wg, 0);
      const std::uint32_t kvh = kp.heads_are_kv ? ps.head : ps.head / kp.group;
      groups[static_cast<std::uint64_t>(ps.b) * p_.heads_kv + kvh].push_back(wg);
    }
    std::vector<TensorTraffic> per_group(ngroups);
    tbb::parallel_for(std::uint64_t{0}, ngroups, [&](std::uint64_t g) {
      WgState st;
      for (std::uint64_t wg : groups[g]) run_workgroup(kp, wg, st, per_group[g]);
    });
    for (const auto& t : per_group) {
      for (std::size_t i = 0; i < kTensorCount; ++i) {
        traffic.read[i] += t.read[i];
        traffic.written[i] += t.written[i];
      }
    }
  }

 private:
  void run_workgroup(const KernelProgram& kp, std::uint64_t wg, WgState& st, TensorTraffic& tr) {
    for (std::uint32_t pi = 0; pi < kp.passes(wg); ++pi) {
      const Pass ps = kp.pass(wg, pi);
      st.outer0 = ps.outer * kp.outer_rows;
      begin_pass(kp, st);
      for (const auto& op : kp.prologue.ops) exec(kp, op, ps, 0, st, tr);
      for (std::uint64_t it = 0; it < ps.iterations(); ++it) {
        st.inner0 = iteration_block(ps, it) * kp.inner_rows;
        for (const auto& op : kp.body.ops) exec(kp, op, ps, it, st, tr);
      }
      for (const auto& op : kp.epilogue.ops) exec(kp, op, ps, ps.iterations() ? ps.iterations() - 1 : 0, st, tr);
    }
  }

  std::uint32_t width(TensorId t) const { return pp_.tensors->operator[](t).cols; }

  void begin_pass(const KernelProgram& kp, WgState& st) const {
    const std::size_t outer = kp.outer_rows;
    switch (kp.kind) {
      case KernelKind::fwd:
        st.acc_a.assign(outer * p_.head_dim_v, 0.0f);
        st.m.assign(outer, kNegInf);
        st.l.assign(outer, 0.0f);
        break;
      case KernelKind::bwd_main:
        st.acc_a.assign(outer * p_.head_dim_qk, 0.0f);  // dK
        st.acc_b.assign(outer * p_.head_dim_v, 0.0f);   // dV
        break;
      case KernelKind::bwd_dq:
        st.acc_a.assign(outer * p_.head_dim_qk, 0.0f);  // dQ
        break;
      default:
        break;
    }
  }

  // Loads rows of a tile into `dst` (rows x cols; rows past the tensor end read as zero).
  void load(const TensorDesc& d, const std::vector<float>& src, const TileRef& t, std::vector<float>& dst,
            TensorTraffic& tr, TensorId id, bool accumulate = false) {
    if (!accumulate) dst.assign(static_cast<std::size_t>(t.rows) * d.cols, 0.0f);
    std::uint64_t bytes = for_each_run(d, t.slice, t.b, t.head, t.row0, t.rows, [](std::uint64_t, std::uint64_t) {});
    tr.read[static_cast<std::size_t>(id)] += bytes;
    const std::uint64_t n = std::min<std::uint64_t>(t.rows, d.rows > t.row0 ? d.rows - t.row0 : 0);
    for (std::uint64_t r = 0; r < n; ++r) {
      for (std::uint32_t c = 0; c < d.cols; ++c) {
        const float x = src[d.element_index(t.slice, t.b, t.head, t.row0 + r, c)];
        if (accumulate) dst[r * d.cols + c] += x; else dst[r * d.cols + c] = x;
      }
    }
  }

  // Stores (or adds) rows of a tile from `src`.
  void store(const TensorDesc& d, std::vector<float>& dst, const TileRef& t, const std::vector<float>& src,
             TensorTraffic& tr, TensorId id, bool add) {
    tr.written[static_cast<std::size_t>(id)] +=
        for_each_run(d, t.slice, t.b, t.head, t.row0, t.rows, [](std::uint64_t, std::uint64_t) {});
    const std::uint64_t n = std::min<std::uint64_t>(t.rows, d.rows > t.row0 ? d.rows - t.row0 : 0);
    for (std::uint64_t r = 0; r < n; ++r) {
      for (std::uint32_t c = 0; c < d.cols; ++c) {
        float& x = dst[d.element_index(t.slice, t.b, t.head, t.row0 + r, c)];
        x = add ? x + src[r * d.cols + c] : src[r * d.cols + c];
      }
    }
  }

  // C[i][j] = alpha * sum_c A[i][c] * B[j][c]  (A: n x w, B: m x w).
  static void abt(const std::vector<float>& a, const std::vector<float>& b, std::size_t n, std::size_t m,
                  std::size_t w, float alpha, std::vector<float>& c) {
    c.assign(n * m, 0.0f);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < m; ++j) {
        float acc = 0;
        for (std::size_t x = 0; x < w; ++x) acc += a[i * w + x] * b[j * w + x];
        c[i * m + j] = alpha * acc;
      }
    }
  }

  // C[i][x] += alpha * sum_j P[i][j] * B[j][x]  (P: n x m, B: m x w).
  static void pb(const std::vector<float>& pm, const std::vector<float>& b, std::size_t n, std::size_t m,
                 std::size_t w, float alpha, std::vector<float>& c) {
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < m; ++j) {
        const float f = alpha * pm[i * m + j];
        if (f == 0) continue;
        for (std::size_t x = 0; x < w; ++x) c[i * w + x] += f * b[j * w + x];
      }
    }
  }

  // C[j][x] += alpha * sum_i P[i][j] * B[i][x]  (P: n x m, B: n x w): the transposed product.
  static void ptb(const std::vector<float>& pm, const std::vector<float>& b, std::size_t n, std::size_t m,
                  std::size_t w, float alpha, std::vector<float>& c) {
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < m; ++j) {
        const float f = alpha * pm[i * m + j];
        if (f == 0) continue;
        for (std::size_t x = 0; x < w; ++x) c[j * w + x] += f * b[i * w + x];
      }
    }
  }

  // Applies the mask to S (rows from q0, columns from k0); masked entries become -inf.
  void mask_scores(std::vector<float>& s, std::uint64_t q0, std::size_t n, std::uint64_t k0, std::size_t m) const {
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < m; ++j) {
        if (!pp_.mask->allowed(q0 + i, k0 + j)) s[i * m + j] = kNegInf;
      }
    }
  }

  void exec(const KernelProgram& kp, const OpTemplate& op, const Pass& ps, std::uint64_t it, WgState& st,
            TensorTraffic& tr) {
    const std::size_t dqk = p_.head_dim_qk, dv = p_.head_dim_v;
    // Tile shapes: forward-like kernels have query rows outer, the main backward kernel inner.
    const bool q_outer = kp.kind != KernelKind::bwd_main;
    const std::size_t nq = q_outer ? kp.outer_rows : kp.inner_rows;
    const std::size_t nk = q_outer ? kp.inner_rows : kp.outer_rows;
    const std::uint64_t q0 = q_outer ? st.outer0 : st.inner0;
    const std::uint64_t k0 = q_outer ? st.inner0 : st.outer0;
    if (is_memory(op.action)) {
      for_each_tile(pp_, kp, op, ps, it, [&](const TileRef& t) { memory(kp, op, t, st, tr); });
      return;
    }
    switch (op.action) {
      case Action::qk:
      case Action::scores:
        abt(st.q, st.k, nq, nk, dqk, scale_, st.s);
        mask_scores(st.s, q0, nq, k0, nk);
        break;
      case Action::online_softmax:
        for (std::size_t i = 0; i < nq; ++i) {
          float mx = st.m[i];
          for (std::size_t j = 0; j < nk; ++j) mx = std::max(mx, st.s[i * nk + j]);
          if (mx == kNegInf) {
            for (std::size_t j = 0; j < nk; ++j) st.s[i * nk + j] = 0;
            continue;
          }
          const float alpha = st.m[i] == kNegInf ? 0.0f : std::exp(st.m[i] - mx);
          float sum = 0;
          for (std::size_t j = 0; j < nk; ++j) {
            float& x = st.s[i * nk + j];
            x = x == kNegInf ? 0.0f : std::exp(x - mx);
            sum += x;
          }
          st.l[i] = st.l[i] * alpha + sum;
          for (std::size_t c = 0; c < dv; ++c) st.acc_a[i * dv + c] *= alpha;
          st.m[i] = mx;
        }
        break;
      case Action::pv:
        pb(st.s, st.v, nq, nk, dv, 1.0f, st.acc_a);
        break;
      case Action::finalize:
        if (kp.kind == KernelKind::fwd) {
          st.o.assign(nq * dv, 0.0f);
          st.lse.assign(nq, kNegInf);
          for (std::size_t i = 0; i < nq; ++i) {
            if (st.l[i] <= 0) continue;
            for (std::size_t c = 0; c < dv; ++c) st.o[i * dv + c] = st.acc_a[i * dv + c] / st.l[i];
            st.lse[i] = st.m[i] + std::log(st.l[i]);
          }
        }
        break;
      case Action::row_dot:
        st.delta.assign(kp.outer_rows, 0.0f);
        for (std::size_t i = 0; i < kp.outer_rows; ++i) {
          float acc = 0;
          for (std::size_t c = 0; c < dv; ++c) acc += st.d_o[i * dv + c] * st.o[i * dv + c];
          st.delta[i] = acc;
        }
        break;
      case Action::probs:
        for (std::size_t i = 0; i < nq; ++i) {
          for (std::size_t j = 0; j < nk; ++j) {
            float& x = st.s[i * nk + j];
            x = (x == kNegInf || st.lse[i] == kNegInf) ? 0.0f : std::exp(x - st.lse[i]);
          }
        }
        break;
      case Action::dp:
        abt(st.d_o, st.v, nq, nk, dv, 1.0f, st.dp);
        break;
      case Action::ds:
        for (std::size_t i = 0; i < nq; ++i) {
          for (std::size_t j = 0; j < nk; ++j) st.dp[i * nk + j] = st.s[i * nk + j] * (st.dp[i * nk + j] - st.delta[i]);
        }
        break;
      case Action::dv_acc:
        ptb(st.s, st.d_o, nq, nk, dv, 1.0f, st.acc_b);
        break;
      case Action::dk_acc:
        ptb(st.dp, st.q, nq, nk, dqk, scale_, st.acc_a);
        break;
      case Action::dq_part:
        st.part.assign(nq * dqk, 0.0f);
        pb(st.dp, st.k, nq, nk, dqk, scale_, st.part);
        break;
      case Action::dq_acc_local:
        pb(st.dp, st.k, nq, nk, dqk, scale_, st.acc_a);
        break;
      case Action::sum_slices:
      case Action::sum_group:
      case Action::barrier:
        break;  // the sums happen as the loads accumulate; barriers order nothing in a serial run
      default:
        break;
    }
  }

  void memory(const KernelProgram& kp, const OpTemplate& op, const TileRef& t, WgState& st, TensorTraffic& tr) {
    const TensorDesc& d = (*pp_.tensors)[op.tensor];
    std::vector<float>& h = host_[op.tensor];
    switch (op.action) {
      case Action::load_q: load(d, h, t, st.q, tr, op.tensor); break;
      case Action::load_k: load(d, h, t, st.k, tr, op.tensor); break;
      case Action::load_v: load(d, h, t, st.v, tr, op.tensor); break;
      case Action::load_o: load(d, h, t, st.o, tr, op.tensor); break;
      case Action::load_do: load(d, h, t, st.d_o, tr, op.tensor); break;
      case Action::load_lse:
        load(d, h, t, st.lse, tr, op.tensor);
        for (std::size_t i = st.lse.size(); i-- > 0;) {
          if (t.row0 + i >= d.rows) st.lse[i] = kNegInf;
        }
        break;
      case Action::load_delta: load(d, h, t, st.delta, tr, op.tensor); break;
      case Action::load_dq_acc:
        if (t.slice == 0) st.part.assign(static_cast<std::size_t>(t.rows) * d.cols, 0.0f);
        load(d, h, t, st.part, tr, op.tensor, true);
        break;
      case Action::load_dk_expanded:
        if (t.head % p_.group() == 0) st.acc_a.assign(static_cast<std::size_t>(t.rows) * d.cols, 0.0f);
        load(d, h, t, st.acc_a, tr, op.tensor, true);
        break;
      case Action::load_dv_expanded:
        if (t.head % p_.group() == 0) st.acc_b.assign(static_cast<std::size_t>(t.rows) * d.cols, 0.0f);
        load(d, h, t, st.acc_b, tr, op.tensor, true);
        break;
      case Action::store_o: store(d, h, t, st.o, tr, op.tensor, false); break;
      case Action::store_lse: store(d, h, t, st.lse, tr, op.tensor, false); break;
      case Action::store_delta: store(d, h, t, st.delta, tr, op.tensor, false); break;
      case Action::store_dq:
        store(d, h, t, kp.kind == KernelKind::convert_dq ? st.part : st.acc_a, tr, op.tensor, false);
        break;
      case Action::store_dk:
      case Action::store_dk_expanded: store(d, h, t, st.acc_a, tr, op.tensor, false); break;
      case Action::store_dv:
      case Action::store_dv_expanded: store(d, h, t, st.acc_b, tr, op.tensor, false); break;
      case Action::store_dq_acc: store(d, h, t, st.part, tr, op.tensor, false); break;
      case Action::zero_dq_acc: {
        const std::vector<float> zeros(static_cast<std::size_t>(t.rows) * d.cols, 0.0f);
        store(d, h, t, zeros, tr, op.tensor, false);
        break;
      }
      case Action::atomic_dq: store(d, h, t, st.part, tr, op.tensor, true); break;
      default: break;
    }
  }

  const PassPrograms& pp_;
  const Problem& p_;
  HostTensors& host_;
  float scale_ = 1;
};

double max_rel_error(const std::vector<float>& got, const std::vector<float>& want) {
  double ref_max = 0;
  for (float w : want) {
    if (std::isfinite(w)) ref_max = std::max(ref_max, std::fabs(static_cast<double>(w)));
  }
  const double denom = std::max(ref_max, 1e-30);
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double g = got[i], w = want[i];
    if (std::isinf(w) && g == w) continue;  // rows that see no key: LSE = -inf on both sides
    const double err = std::isfinite(g) ? std::fabs(g - w) / denom : std::numeric_limits<double>::infinity();
    worst = std::max(worst, err);
  }
  return worst;
}

}  // namespace

FunctionalResult run_functional(const PassPrograms& pp, std::uint64_t seed) {
  const Problem& p = pp.problem;
  const TensorSet& ts = *pp.tensors;
  const bool backward = pp.direction == Direction::bwd;
  HostTensors host;
  for (std::size_t i = 0; i < kTensorCount; ++i) {
    const TensorDesc& d = ts[static_cast<TensorId>(i)];
    if (d.present) host.data[i].assign(d.bytes() / d.elem_bytes, std::numeric_limits<float>::quiet_NaN());
  }
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (TensorId t : {TensorId::q, TensorId::k, TensorId::v}) {
    for (float& x : host[t]) x = normal(rng);
  }
  if (backward) {
    for (float& x : host[TensorId::d_o]) x = normal(rng);
  }

  // The reference: forward outputs always; gradients for the backward check.
  HostTensors want = host;
  reference_attention(p, ts, want, false);
  if (backward) {
    host[TensorId::o] = want[TensorId::o];  // the backward pass reads the forward's O and LSE
    host[TensorId::lse] = want[TensorId::lse];
    reference_attention(p, ts, want, true);
  }

  FunctionalResult result;
  Interpreter interp(pp, host);
  // What the caller does outside the pass (the memset before it, the group sum of expanded dK/dV
  // after it) runs too, so that the outputs can be compared; its bytes are not the pass's.
  TensorTraffic outside;
  for (const auto& kp : pp.caller_before) interp.run_kernel(kp, outside);
  for (const auto& kp : pp.kernels) {
    interp.run_kernel(kp, result.traffic);
  }
  for (const auto& kp : pp.caller_after) interp.run_kernel(kp, outside);
  const std::vector<TensorId> outputs =
      backward ? std::vector<TensorId>{TensorId::dq, TensorId::dk, TensorId::dv} : std::vector<TensorId>{TensorId::o, TensorId::lse};
  for (TensorId t : outputs) {
    const double e = max_rel_error(host[t], want[t]);
    result.max_rel_error[static_cast<std::size_t>(t)] = e;
    if (e > result.worst || result.worst_tensor.empty()) {
      result.worst = std::max(result.worst, e);
      if (e >= result.worst) result.worst_tensor = std::string(to_string(t));
    }
  }
  return result;
}

}  // namespace attnsim::workloads
