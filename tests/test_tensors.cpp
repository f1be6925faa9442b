// Tensor layouts in one address space, and the address runs of a tile.
#include <doctest/doctest.h>

#include <vector>

#include "workloads/tensors.h"

using namespace attnsim::workloads;

namespace {
Problem small(Layout l) {
  Problem p;
  p.batch = 2;
  p.heads_q = 4;
  p.heads_kv = 2;
  p.seqlen_q = p.seqlen_k = 10;
  p.head_dim_qk = p.head_dim_v = 8;
  p.layout = l;
  return p;
}
}  // namespace

TEST_CASE("BSHD: element (b s h c) of Q sits at ((b*S + s)*H + h)*D + c") {
  const TensorSet ts(small(Layout::bshd), TensorNeeds{});
  const TensorDesc& q = ts[TensorId::q];
  CHECK(q.base == 4096);
  CHECK(q.element_index(0, 1, 3, 5, 2) == ((1 * 10 + 5) * 4 + 3) * 8 + 2);
  // Three rows of head 1: three runs of 8 x 2 B, 4 heads x 8 x 2 B apart.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;
  const auto bytes = for_each_run(q, 0, 0, 1, 2, 3, [&](std::uint64_t a, std::uint64_t n) { runs.emplace_back(a, n); });
  CHECK(bytes == 48);
  REQUIRE(runs.size() == 3);
  CHECK(runs[0].first == 4096 + ((2 * 4 + 1) * 8) * 2);
  CHECK(runs[1].first - runs[0].first == 64);
  CHECK(runs[0].second == 16);
}

TEST_CASE("BHSD: a tile of one head is one run and rows past the end cost nothing") {
  const TensorSet ts(small(Layout::bhsd), TensorNeeds{});
  const TensorDesc& k = ts[TensorId::k];
  std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;
  const auto bytes = for_each_run(k, 0, 1, 1, 8, 5, [&](std::uint64_t a, std::uint64_t n) { runs.emplace_back(a, n); });
  CHECK(bytes == 2 * 8 * 2);  // rows 8 and 9 only
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].first == k.base + (((1 * 2 + 1) * 10 + 8) * 8) * 2);
  CHECK(tile_bytes(k, 8, 5) == 32);
  CHECK(tile_bytes(k, 10, 5) == 0);
}

TEST_CASE("tensors are 4 KiB aligned and disjoint and backward adds its tensors") {
  const TensorSet ts(small(Layout::bshd), TensorNeeds{true, 3, true});
  std::uint64_t prev_end = 0;
  for (std::size_t i = 0; i < kTensorCount; ++i) {
    const TensorDesc& d = ts[static_cast<TensorId>(i)];
    CAPTURE(to_string(static_cast<TensorId>(i)));
    const bool gemm = i >= static_cast<std::size_t>(TensorId::gemm_a);  // the GEMM microbenchmark's own
    REQUIRE(d.present == !gemm);
    if (gemm) continue;
    CHECK(d.base % 4096 == 0);
    CHECK(d.base >= prev_end);
    prev_end = d.base + d.bytes();
  }
  CHECK(ts[TensorId::dq_acc].slices == 3);
  CHECK(ts[TensorId::dq_acc].elem_bytes == 4);
  CHECK(ts[TensorId::lse].bytes() == 2 * 4 * 10 * 4);
  CHECK(ts[TensorId::dk_expanded].heads == 4);
}
