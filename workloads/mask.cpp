#include "workloads/mask.h"

#include <algorithm>
#include <limits>

namespace attnsim::workloads {
namespace {
constexpr std::int64_t kUnbounded = std::numeric_limits<std::int64_t>::max() / 4;
}  // namespace

Mask::Mask(const Problem& p)
    : nq_(static_cast<std::int64_t>(p.seqlen_q)),
      nk_(static_cast<std::int64_t>(p.seqlen_k)),
      offset_(p.align == CausalAlign::bottom_right ? nk_ - nq_ : 0),
      left_(p.window ? static_cast<std::int64_t>(p.window->left) : kUnbounded),
      right_(p.causal ? 0 : (p.window ? static_cast<std::int64_t>(p.window->right) : kUnbounded)),
      causal_(p.causal),
      window_(p.window.has_value()) {
  if (!causal_ && !window_) offset_ = 0;
}

std::int64_t Mask::lo(std::int64_t q) const { return left_ >= kUnbounded ? -kUnbounded : q + offset_ - left_; }
std::int64_t Mask::hi(std::int64_t q) const { return right_ >= kUnbounded ? kUnbounded : q + offset_ + right_; }

bool Mask::allowed(std::uint64_t q, std::uint64_t k) const {
  const auto kk = static_cast<std::int64_t>(k);
  const auto qq = static_cast<std::int64_t>(q);
  return qq < nq_ && kk < nk_ && kk >= lo(qq) && kk <= hi(qq);
}

Range Mask::keys_of(std::uint64_t q) const {
  const auto qq = static_cast<std::int64_t>(q);
  const std::int64_t first = std::max<std::int64_t>(0, lo(qq));
  const std::int64_t last = std::min<std::int64_t>(nk_, hi(qq) + 1);
  if (first >= last) return {};
  return {static_cast<std::uint64_t>(first), static_cast<std::uint64_t>(last)};
}

Range Mask::queries_of(std::uint64_t k) const {
  const auto kk = static_cast<std::int64_t>(k);
  // lo(q) <= k  <=>  q <= k - offset + left;   hi(q) >= k  <=>  q >= k - offset - right.
  const std::int64_t first = right_ >= kUnbounded ? 0 : std::max<std::int64_t>(0, kk - offset_ - right_);
  const std::int64_t last = left_ >= kUnbounded ? nq_ : std::min<std::int64_t>(nq_, kk - offset_ + left_ + 1);
  if (first >= last) return {};
  return {static_cast<std::uint64_t>(first), static_cast<std::uint64_t>(last)};
}

TileMask Mask::classify(std::uint64_t q0, std::uint64_t bm, std::uint64_t k0, std::uint64_t bn) const {
  const auto a = static_cast<std::int64_t>(q0);
  const auto c = static_cast<std::int64_t>(k0);
  const std::int64_t b = std::min<std::int64_t>(nq_, a + static_cast<std::int64_t>(bm));  // clipped row end
  const std::int64_t d = std::min<std::int64_t>(nk_, c + static_cast<std::int64_t>(bn));  // clipped key end
  if (a >= b || c >= d) return TileMask::empty;
  // Rows whose interval meets [c, d): hi(q) >= c and lo(q) <= d - 1 (both monotone in q).
  const std::int64_t row_first = std::max(a, right_ >= kUnbounded ? a : c - offset_ - right_);
  const std::int64_t row_last = std::min(b - 1, left_ >= kUnbounded ? b - 1 : d - 1 - offset_ + left_);
  if (row_first > row_last) return TileMask::empty;
  const bool overhangs = a + static_cast<std::int64_t>(bm) > nq_ || c + static_cast<std::int64_t>(bn) > nk_;
  const bool covered = lo(b - 1) <= c && hi(a) >= d - 1;
  return covered && !overhangs ? TileMask::full : TileMask::partial;
}

namespace {
// Floor and ceiling of n / d for d > 0, n of either sign.
std::int64_t floor_div(std::int64_t n, std::int64_t d) { return n >= 0 ? n / d : -((-n + d - 1) / d); }
std::int64_t ceil_div(std::int64_t n, std::int64_t d) { return n >= 0 ? (n + d - 1) / d : -(-n / d); }
Range block_range(std::int64_t first, std::int64_t last) {
  first = std::max<std::int64_t>(0, first);
  if (first >= last) return {};
  return {static_cast<std::uint64_t>(first), static_cast<std::uint64_t>(last)};
}
}  // namespace

Range Mask::full_key_blocks(std::uint64_t q0, std::uint64_t bm, std::uint64_t bn) const {
  // classify's full: no overhang (the rows end by nq, key block j by nk: j < nk / bn), and every
  // row covers the keys [j bn, (j + 1) bn - 1]: lo(b - 1) <= j bn and hi(a) >= (j + 1) bn - 1.
  const auto a = static_cast<std::int64_t>(q0), m = static_cast<std::int64_t>(bm), n = static_cast<std::int64_t>(bn);
  if (m <= 0 || n <= 0 || a + m > nq_) return {};
  const std::int64_t first = left_ >= kUnbounded ? 0 : ceil_div(lo(a + m - 1), n);
  std::int64_t last = nk_ / n;
  if (right_ < kUnbounded) last = std::min(last, floor_div(hi(a) + 1, n));
  return block_range(first, last);
}

Range Mask::full_query_blocks(std::uint64_t k0, std::uint64_t bn, std::uint64_t bm) const {
  // The same conditions for query block i against the keys [c, c + bn): i < nq / bm,
  // lo((i + 1) bm - 1) <= c and hi(i bm) >= c + bn - 1, solved for i (lo and hi have slope 1).
  const auto c = static_cast<std::int64_t>(k0), n = static_cast<std::int64_t>(bn), m = static_cast<std::int64_t>(bm);
  if (m <= 0 || n <= 0 || c + n > nk_) return {};
  const std::int64_t first = right_ >= kUnbounded ? 0 : ceil_div(c + n - 1 - offset_ - right_, m);
  std::int64_t last = nq_ / m;
  if (left_ < kUnbounded) last = std::min(last, floor_div(c - offset_ + left_ + 1, m));
  return block_range(first, last);
}

Range Mask::key_blocks(std::uint64_t q0, std::uint64_t bm, std::uint64_t bn) const {
  const auto a = static_cast<std::int64_t>(q0);
  const std::int64_t b = std::min<std::int64_t>(nq_, a + static_cast<std::int64_t>(bm));
  if (a >= b) return {};
  const std::int64_t kmin = std::max<std::int64_t>(0, lo(a));
  const std::int64_t kmax = std::min<std::int64_t>(nk_, hi(b - 1) + 1);  // exclusive
  if (kmin >= kmax) return {};
  const auto n = static_cast<std::int64_t>(bn);
  return {static_cast<std::uint64_t>(kmin / n), static_cast<std::uint64_t>((kmax + n - 1) / n)};
}

Range Mask::query_blocks(std::uint64_t k0, std::uint64_t bn, std::uint64_t bm) const {
  const auto c = static_cast<std::int64_t>(k0);
  const std::int64_t d = std::min<std::int64_t>(nk_, c + static_cast<std::int64_t>(bn));
  if (c >= d) return {};
  // Queries of the keys in [c, d): from the first query of key c to the last query of key d - 1.
  const std::int64_t qmin = right_ >= kUnbounded ? 0 : std::max<std::int64_t>(0, c - offset_ - right_);
  const std::int64_t qmax = left_ >= kUnbounded ? nq_ : std::min<std::int64_t>(nq_, d - 1 - offset_ + left_ + 1);
  if (qmin >= qmax) return {};
  const auto m = static_cast<std::int64_t>(bm);
  return {static_cast<std::uint64_t>(qmin / m), static_cast<std::uint64_t>((qmax + m - 1) / m)};
}

}  // namespace attnsim::workloads
