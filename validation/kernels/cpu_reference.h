// The CPU reference the harness checks every kernel output against, in double precision from the
// same bf16 inputs: one forward row, one dQ row, one key's dK and dV at a time, so that sampled
// rows of a full-size problem can be checked as cheaply as every row of a small one.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "attention_tiling.h"

namespace attn {

// Host copies of the inputs (bf16 storage), in the kernels' layouts.
struct HostInputs {
  Shape shape;
  float scale = 1.0f;
  std::vector<std::uint16_t> q, k, v, d_o;
};

// Fills a tensor with bf16 values uniform in [-1, 1) from a fixed linear congruence.
inline void fill_random(std::vector<std::uint16_t>& t, std::uint64_t seed) {
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& e : t) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    e = to_bf16(static_cast<float>(static_cast<double>(x >> 40) / static_cast<double>(1ull << 24) * 2.0 - 1.0));
  }
}

// Scaled scores of row i of head h against every key (-inf where masked).
inline void reference_scores(const HostInputs& in, int b, int h, int i, std::vector<double>& s) {
  const Shape& sh = in.shape;
  const int hk = kv_head(sh, h);
  s.assign(sh.seqlen_k, -std::numeric_limits<double>::infinity());
  for (int j = 0; j < sh.seqlen_k; ++j) {
    if (!visible(sh, i, j)) continue;
    double dot = 0;
    for (int d = 0; d < sh.head_dim; ++d) dot += from_bf16(in.q[q_offset(sh, b, i, h, d)]) * from_bf16(in.k[kv_offset(sh, b, j, hk, d)]);
    s[j] = dot * in.scale;
  }
}

// Forward row: O (head_dim values) and LSE (natural log; -inf and O = 0 for a row that sees no key).
inline void reference_forward_row(const HostInputs& in, int b, int h, int i, std::vector<double>& out, double& lse) {
  const Shape& sh = in.shape;
  std::vector<double> s;
  reference_scores(in, b, h, i, s);
  double m = -std::numeric_limits<double>::infinity();
  for (double x : s) m = std::max(m, x);
  out.assign(sh.head_dim, 0.0);
  if (m == -std::numeric_limits<double>::infinity()) {
    lse = m;
    return;
  }
  double l = 0;
  const int hk = kv_head(sh, h);
  for (int j = 0; j < sh.seqlen_k; ++j) {
    const double p = std::exp(s[j] - m);
    l += p;
    for (int d = 0; d < sh.head_dim; ++d) out[d] += p * from_bf16(in.v[kv_offset(sh, b, j, hk, d)]);
  }
  for (double& o : out) o /= l;
  lse = m + std::log(l);
}

// dP(i, j) = dO_i . V_j.
inline double reference_dp(const HostInputs& in, int b, int h, int i, int j) {
  const Shape& sh = in.shape;
  double dot = 0;
  for (int d = 0; d < sh.head_dim; ++d) dot += from_bf16(in.d_o[q_offset(sh, b, i, h, d)]) * from_bf16(in.v[kv_offset(sh, b, j, kv_head(sh, h), d)]);
  return dot;
}

// dQ row i, given the row's LSE and delta (the forward's statistics).
inline void reference_dq_row(const HostInputs& in, int b, int h, int i, double lse, double delta, std::vector<double>& dq) {
  const Shape& sh = in.shape;
  std::vector<double> s;
  reference_scores(in, b, h, i, s);
  dq.assign(sh.head_dim, 0.0);
  for (int j = 0; j < sh.seqlen_k; ++j) {
    if (s[j] == -std::numeric_limits<double>::infinity()) continue;
    const double ds = std::exp(s[j] - lse) * (reference_dp(in, b, h, i, j) - delta);
    for (int d = 0; d < sh.head_dim; ++d) dq[d] += ds * from_bf16(in.k[kv_offset(sh, b, j, kv_head(sh, h), d)]) * in.scale;
  }
}

// dK and dV of key j of head h (heads_q == heads_kv), given every row's LSE and delta of that head
// (lse[i], delta[i] for i in [0, Nq)).
inline void reference_dkdv_row(const HostInputs& in, int b, int h, int j, const std::vector<double>& lse,
                               const std::vector<double>& delta, std::vector<double>& dk, std::vector<double>& dv) {
  const Shape& sh = in.shape;
  dk.assign(sh.head_dim, 0.0);
  dv.assign(sh.head_dim, 0.0);
  for (int i = 0; i < sh.seqlen_q; ++i) {
    if (!visible(sh, i, j) || lse[i] == -std::numeric_limits<double>::infinity()) continue;
    double dot = 0;
    for (int d = 0; d < sh.head_dim; ++d) dot += from_bf16(in.q[q_offset(sh, b, i, h, d)]) * from_bf16(in.k[kv_offset(sh, b, j, h, d)]);
    const double p = std::exp(dot * in.scale - lse[i]);
    const double ds = p * (reference_dp(in, b, h, i, j) - delta[i]);
    for (int d = 0; d < sh.head_dim; ++d) {
      dv[d] += p * from_bf16(in.d_o[q_offset(sh, b, i, h, d)]);
      dk[d] += ds * from_bf16(in.q[q_offset(sh, b, i, h, d)]) * in.scale;
    }
  }
}

// The error of a computed row against its reference, relative to the reference's largest
// magnitude (so rows of small values are not judged by absolute error alone).
template <class Computed>
double row_error(const std::vector<double>& ref, Computed&& computed) {
  double scale = 1e-3, err = 0;
  for (double r : ref) scale = std::max(scale, std::abs(r));
  for (std::size_t d = 0; d < ref.size(); ++d) err = std::max(err, std::abs(computed(d) - ref[d]));
  return err / scale;
}

}  // namespace attn
