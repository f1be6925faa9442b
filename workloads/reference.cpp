#include "workloads/reference.h"

#include <cmath>
#include <limits>

namespace attnsim::workloads {

void reference_attention(const Problem& p, const TensorSet& ts, HostTensors& t, bool backward) {
  const Mask mask(p);
  const double scale = 1.0 / std::sqrt(static_cast<double>(p.head_dim_qk));
  const double neg_inf = -std::numeric_limits<double>::infinity();
  const auto nq = p.seqlen_q, nk = p.seqlen_k;
  const auto dqk = p.head_dim_qk, dv = p.head_dim_v;
  const auto& Q = ts[TensorId::q];
  const auto& K = ts[TensorId::k];
  const auto& V = ts[TensorId::v];
  const auto& O = ts[TensorId::o];
  const auto& L = ts[TensorId::lse];
  std::vector<double> s(nk), pr(nk), dp(nk), dk, dvv;
  for (std::uint32_t b = 0; b < p.batch; ++b) {
    for (std::uint32_t hkv = 0; hkv < p.heads_kv; ++hkv) {
      if (backward) {
        dk.assign(nk * dqk, 0.0);
        dvv.assign(nk * dv, 0.0);
      }
      for (std::uint32_t g = 0; g < p.group(); ++g) {
        const std::uint32_t h = hkv * p.group() + g;
        for (std::uint64_t i = 0; i < nq; ++i) {
          double m = neg_inf;
          for (std::uint64_t j = 0; j < nk; ++j) {
            if (!mask.allowed(i, j)) {
              s[j] = neg_inf;
              continue;
            }
            double acc = 0;
            for (std::uint32_t c = 0; c < dqk; ++c) {
              acc += static_cast<double>(t[TensorId::q][Q.element_index(0, b, h, i, c)]) *
                     t[TensorId::k][K.element_index(0, b, hkv, j, c)];
            }
            s[j] = acc * scale;
            m = std::max(m, s[j]);
          }
          double l = 0;
          for (std::uint64_t j = 0; j < nk; ++j) {
            pr[j] = (m == neg_inf || s[j] == neg_inf) ? 0.0 : std::exp(s[j] - m);
            l += pr[j];
          }
          const double lse = l > 0 ? m + std::log(l) : neg_inf;
          for (std::uint64_t j = 0; j < nk; ++j) pr[j] = l > 0 ? pr[j] / l : 0.0;
          std::vector<double> out(dv, 0.0);
          for (std::uint64_t j = 0; j < nk; ++j) {
            if (pr[j] == 0) continue;
            for (std::uint32_t c = 0; c < dv; ++c) out[c] += pr[j] * t[TensorId::v][V.element_index(0, b, hkv, j, c)];
          }
          if (!backward) {
            for (std::uint32_t c = 0; c < dv; ++c) t[TensorId::o][O.element_index(0, b, h, i, c)] = static_cast<float>(out[c]);
            t[TensorId::lse][L.element_index(0, b, h, i, 0)] = static_cast<float>(lse);
            continue;
          }
          const auto& DO = ts[TensorId::d_o];
          const auto& DQ = ts[TensorId::dq];
          double delta = 0;
          for (std::uint32_t c = 0; c < dv; ++c) delta += out[c] * t[TensorId::d_o][DO.element_index(0, b, h, i, c)];
          std::vector<double> dq(dqk, 0.0);
          for (std::uint64_t j = 0; j < nk; ++j) {
            if (pr[j] == 0) continue;
            double dpj = 0;
            for (std::uint32_t c = 0; c < dv; ++c) {
              const double g_o = t[TensorId::d_o][DO.element_index(0, b, h, i, c)];
              dpj += g_o * t[TensorId::v][V.element_index(0, b, hkv, j, c)];
              dvv[j * dv + c] += pr[j] * g_o;
            }
            const double ds = pr[j] * (dpj - delta);
            for (std::uint32_t c = 0; c < dqk; ++c) {
              dq[c] += ds * scale * t[TensorId::k][K.element_index(0, b, hkv, j, c)];
              dk[j * dqk + c] += ds * scale * t[TensorId::q][Q.element_index(0, b, h, i, c)];
            }
          }
          for (std::uint32_t c = 0; c < dqk; ++c) t[TensorId::dq][DQ.element_index(0, b, h, i, c)] = static_cast<float>(dq[c]);
        }
      }
      if (backward) {
        const auto& DK = ts[TensorId::dk];
        const auto& DV = ts[TensorId::dv];
        for (std::uint64_t j = 0; j < nk; ++j) {
          for (std::uint32_t c = 0; c < dqk; ++c) t[TensorId::dk][DK.element_index(0, b, hkv, j, c)] = static_cast<float>(dk[j * dqk + c]);
          for (std::uint32_t c = 0; c < dv; ++c) t[TensorId::dv][DV.element_index(0, b, hkv, j, c)] = static_cast<float>(dvv[j * dv + c]);
        }
      }
    }
  }
}

}  // namespace attnsim::workloads
