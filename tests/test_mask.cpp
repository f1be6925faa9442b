// Masks: hand-computed rows, and the closed-form tile and block ranges against brute force.
#include <doctest/doctest.h>

#include <random>

#include "workloads/mask.h"

using namespace attnsim::workloads;

namespace {
Problem sized(std::uint64_t nq, std::uint64_t nk) {
  Problem p;
  p.seqlen_q = nq;
  p.seqlen_k = nk;
  return p;
}

// A random problem (dense, causal, window or causal window; either alignment; up to 90 queries and
// keys) and tile sizes.
struct Tiling {
  Problem problem;
  std::uint64_t bm, bn;
};
Tiling random_tiling(std::mt19937& rng) {
  Problem p = sized(1 + rng() % 90, 1 + rng() % 90);
  const int kind = static_cast<int>(rng() % 4);
  p.causal = kind == 1 || kind == 3;
  p.align = rng() % 2 ? CausalAlign::top_left : CausalAlign::bottom_right;
  if (kind >= 2) p.window = Window{rng() % 20, p.causal ? 0 : rng() % 20};
  const std::uint64_t bm = 1 + rng() % 17, bn = 1 + rng() % 17;
  return {p, bm, bn};
}
}  // namespace

TEST_CASE("causal alignment: top-left and bottom-right diagonals") {
  Problem p = sized(4, 6);
  p.causal = true;
  p.align = CausalAlign::bottom_right;  // query i sees keys j <= i + 2
  const Mask br(p);
  CHECK(br.keys_of(0).first == 0);
  CHECK(br.keys_of(0).last == 3);
  CHECK(br.keys_of(3).last == 6);
  CHECK(br.queries_of(5).first == 3);
  p.align = CausalAlign::top_left;  // query i sees keys j <= i
  const Mask tl(p);
  CHECK(tl.keys_of(0).last == 1);
  CHECK(tl.allowed(2, 2));
  CHECK_FALSE(tl.allowed(2, 3));
  // More queries than keys, bottom-right: the first rows see no key at all.
  Problem q = sized(6, 4);
  q.causal = true;
  const Mask few(q);
  CHECK(few.keys_of(0).empty());
  CHECK(few.keys_of(1).empty());
  CHECK(few.keys_of(2).last == 1);
}

TEST_CASE("sliding window around the diagonal") {
  Problem p = sized(10, 10);
  p.window = Window{2, 1};  // keys in [i - 2, i + 1]
  const Mask m(p);
  CHECK(m.keys_of(0).first == 0);
  CHECK(m.keys_of(0).last == 2);
  CHECK(m.keys_of(5).first == 3);
  CHECK(m.keys_of(5).last == 7);
  CHECK(m.queries_of(5).first == 4);
  CHECK(m.queries_of(5).last == 8);
}

TEST_CASE("tile classes: hand-computed on a causal 8x8 with 4x4 tiles") {
  Problem p = sized(8, 8);
  p.causal = true;
  const Mask m(p);
  CHECK(m.classify(0, 4, 0, 4) == TileMask::partial);  // diagonal
  CHECK(m.classify(0, 4, 4, 4) == TileMask::empty);    // above the diagonal
  CHECK(m.classify(4, 4, 0, 4) == TileMask::full);     // below
  CHECK(m.classify(4, 8, 0, 4) == TileMask::partial);  // overhangs the sequence end
  Problem d = sized(8, 8);
  CHECK(Mask(d).classify(0, 4, 4, 4) == TileMask::full);
}

TEST_CASE("closed-form block ranges and tile classes match brute force") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const auto [p, bm, bn] = random_tiling(rng);
    const Mask m(p);
    CAPTURE(p.describe());
    CAPTURE(bm);
    CAPTURE(bn);
    for (std::uint64_t q0 = 0; q0 < p.seqlen_q; q0 += bm) {
      std::uint64_t first = UINT64_MAX, last = 0;
      for (std::uint64_t k0 = 0; k0 < p.seqlen_k; k0 += bn) {
        bool any = false, all = q0 + bm <= p.seqlen_q && k0 + bn <= p.seqlen_k;
        for (std::uint64_t i = q0; i < std::min(q0 + bm, p.seqlen_q); ++i) {
          for (std::uint64_t j = k0; j < std::min(k0 + bn, p.seqlen_k); ++j) {
            any = any || m.allowed(i, j);
            all = all && m.allowed(i, j);
          }
        }
        const TileMask want = !any ? TileMask::empty : all ? TileMask::full : TileMask::partial;
        REQUIRE(m.classify(q0, bm, k0, bn) == want);
        if (any) {
          first = std::min(first, k0 / bn);
          last = k0 / bn + 1;
        }
      }
      const Range r = m.key_blocks(q0, bm, bn);
      if (first == UINT64_MAX) {
        CHECK(r.empty());
      } else {
        CHECK(r.first == first);
        CHECK(r.last == last);
      }
    }
    for (std::uint64_t k0 = 0; k0 < p.seqlen_k; k0 += bn) {
      std::uint64_t first = UINT64_MAX, last = 0;
      for (std::uint64_t q0 = 0; q0 < p.seqlen_q; q0 += bm) {
        if (m.classify(q0, bm, k0, bn) != TileMask::empty) {
          first = std::min(first, q0 / bm);
          last = q0 / bm + 1;
        }
      }
      const Range r = m.query_blocks(k0, bn, bm);
      if (first == UINT64_MAX) {
        CHECK(r.empty());
      } else {
        CHECK(r.first == first);
        CHECK(r.last == last);
      }
    }
  }
}

TEST_CASE("the full block ranges hold exactly the tiles classify calls full") {
  // Against classify (itself checked against brute force above): every block of a row of tiles,
  // and a few beyond the sequence ends, is full exactly when it lies in the range.
  std::mt19937 rng(11);
  for (int trial = 0; trial < 400; ++trial) {
    const auto [p, bm, bn] = random_tiling(rng);
    const Mask m(p);
    CAPTURE(p.describe());
    CAPTURE(bm);
    CAPTURE(bn);
    const auto in = [](const Range& r, std::uint64_t x) { return x >= r.first && x < r.last; };
    for (std::uint64_t i = 0; i * bm < p.seqlen_q + 2 * bm; ++i) {
      const Range r = m.full_key_blocks(i * bm, bm, bn);
      for (std::uint64_t j = 0; j * bn < p.seqlen_k + 2 * bn; ++j) {
        CAPTURE(i);
        CAPTURE(j);
        REQUIRE((m.classify(i * bm, bm, j * bn, bn) == TileMask::full) == in(r, j));
      }
    }
    for (std::uint64_t j = 0; j * bn < p.seqlen_k + 2 * bn; ++j) {
      const Range r = m.full_query_blocks(j * bn, bn, bm);
      for (std::uint64_t i = 0; i * bm < p.seqlen_q + 2 * bm; ++i) {
        CAPTURE(i);
        CAPTURE(j);
        REQUIRE((m.classify(i * bm, bm, j * bn, bn) == TileMask::full) == in(r, i));
      }
    }
  }
}
