// Analytic counts: the seed's figures, FLOPs, visited tiles by hand.
#include <doctest/doctest.h>

#include "workload_fixture.h"
#include "workloads/analytic.h"

using namespace attnsim;
using namespace attnsim::workloads;

namespace {
// The seed measurement's problem (fa-schedules.md Part A): B=1, H=32, N=1024, d=128, bf16.
Problem seed() {
  Problem p;
  p.heads_q = p.heads_kv = 32;
  p.seqlen_q = p.seqlen_k = 1024;
  return p;
}
}  // namespace

TEST_CASE("the seed figures: 58720256 B minimum and 721420288 B two-pass re-read and 8.59 GFLOP per matmul") {
  CHECK(seed_minimum_bwd_bytes(seed()) == 58'720'256);
  CHECK(seed_two_pass_bwd_bytes(seed(), 64) == 721'420'288);
  CHECK(matmul_flops(seed()) == doctest::Approx(8.589934592e9));
  // TraceLens: 5 matmuls / 2 (causal) = 21.47 G.
  CHECK(5 * matmul_flops(seed()) / 2 / 1e9 == doctest::Approx(21.47).epsilon(0.001));
}

TEST_CASE("FA-convention FLOPs: 4 B H N^2 d forward and halved when causal and 2.5x backward") {
  Problem p = seed();
  CHECK(fa_flops(p, Direction::fwd) == doctest::Approx(4.0 * 32 * 1024 * 1024 * 128));
  CHECK(fa_flops(p, Direction::bwd) == doctest::Approx(2.5 * 4.0 * 32 * 1024 * 1024 * 128));
  p.causal = true;
  CHECK(fa_flops(p, Direction::fwd) == doctest::Approx(2.0 * 32 * 1024 * 1024 * 128));
}

TEST_CASE("issued matrix work equals the FA count when tiles divide the problem") {
  Problem p = seed();
  p.seqlen_q = p.seqlen_k = 1536;  // a multiple of 256 (fwd) and 192 (bwd key blocks) and 16
  const double mfma_flops_32x32x8 = 16384, mfma_flops_16x16x16 = 8192;
  const auto fwd = analytic_counts(test::build(p, "aiter-v3", Direction::fwd));
  CHECK(fwd.mfma_instructions * mfma_flops_32x32x8 == doctest::Approx(fa_flops(p, Direction::fwd)));
  CHECK(fwd.mfma_flops_issued == doctest::Approx(fa_flops(p, Direction::fwd)));
  const auto bwd = analytic_counts(test::build(p, "aiter-v3", Direction::bwd));
  CHECK(bwd.mfma_instructions * mfma_flops_16x16x16 == doctest::Approx(fa_flops(p, Direction::bwd)));
  // Two-pass: the dK/dV kernel does S, dP, dV, dK (4 matmuls); the dQ kernel recomputes S and dP and
  // computes dQ (3): 7 matmuls instead of 5.
  const auto two = analytic_counts(test::build(p, "aiter-v3,bwd.dq=two_pass,bwd.dq_block_m=64", Direction::bwd));
  CHECK(two.mfma_instructions * mfma_flops_16x16x16 == doctest::Approx(fa_flops(p, Direction::bwd) * 7 / 5));
}

TEST_CASE("causal block skipping: visited tiles by hand") {
  Problem p;
  p.seqlen_q = p.seqlen_k = 512;
  p.causal = true;
  // aiter-v3 forward, 256 x 32 tiles: Q block 0 visits key blocks 0..7, Q block 1 visits 0..15.
  const auto c = analytic_counts(test::build(p, "aiter-v3", Direction::fwd));
  CHECK(c.iterations == 8 + 16);
  CHECK(c.workgroups == 1);  // paired: one workgroup takes the head and the tail tile
  // Without the mask every Q block visits all 16 key blocks.
  p.causal = false;
  CHECK(analytic_counts(test::build(p, "aiter-v3", Direction::fwd)).iterations == 32);
}

TEST_CASE("bytes per tensor by hand: the aiter forward re-reads K and V once per Q block") {
  Problem p;
  p.heads_q = 4;
  p.heads_kv = 2;
  p.seqlen_q = p.seqlen_k = 1024;
  const auto c = analytic_counts(test::build(p, "aiter-v3", Direction::fwd));
  const std::uint64_t head_bytes = 1024 * 128 * 2;
  CHECK(c.traffic.read[static_cast<std::size_t>(TensorId::q)] == 4 * head_bytes);
  // 4 Q blocks of 256 rows per query head, each reading its KV head's whole K: 4 x 4 x head_bytes.
  CHECK(c.traffic.read[static_cast<std::size_t>(TensorId::k)] == 16 * head_bytes);
  CHECK(c.traffic.written[static_cast<std::size_t>(TensorId::o)] == 4 * head_bytes);
  CHECK(c.traffic.written[static_cast<std::size_t>(TensorId::lse)] == 4 * 1024 * 4);
}

TEST_CASE("non-matrix work: one exp per score plus the forward rescale") {
  Problem p;
  p.seqlen_q = p.seqlen_k = 1024;
  const auto c = analytic_counts(test::build(p, "aiter-v3", Direction::fwd));
  // 4 Q blocks x 32 key blocks = 128 iterations x 8 waves x 17 exp x 64 lanes, plus the
  // prologue/epilogue's 19 + 4 exp per wave x 8 waves x 64 lanes per workgroup (4 workgroups).
  CHECK(c.exps == doctest::Approx(128.0 * 8 * 17 * 64 + 4.0 * 8 * 23 * 64));
  // VALU: 170 per iteration per wave (no masking), 219 + 450 per wave outside the loop.
  CHECK(c.valu_ops == doctest::Approx((128.0 * 170 + 4.0 * (219 + 450)) * 8 * 64));
}
