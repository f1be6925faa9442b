// Where a kernel's time went: every SIMD's time from the kernel's start to its last retirement is
// accounted for once, empty CUs are tail, and memory-bound kernels wait on memory.
#include <doctest/doctest.h>

#include "arch/arch_locator.h"
#include "arch/spec_loader.h"
#include "sim/engine.h"
#include "workload_fixture.h"

using namespace attnsim;
using namespace attnsim::workloads;
using attnsim::sim::Tick;

namespace {
Problem problem(std::uint32_t hq, std::uint32_t hkv, std::uint64_t n, bool causal) {
  Problem p;
  p.heads_q = hq;
  p.heads_kv = hkv;
  p.seqlen_q = p.seqlen_k = n;
  p.causal = causal;
  return p;
}

Tick wait(const sim::TimeBreakdown& b, sim::WaitCause c) { return b.waiting[static_cast<std::size_t>(c)]; }
}  // namespace

TEST_CASE("the time breakdown accounts for every SIMD's time in every kernel") {
  const auto gpu = arch::load_arch_file(arch::resolve_arch("mi300x"), {}).spec;
  for (const char* kernel : {"aiter-v3", "ck", "triton-amd"}) {
    for (bool causal : {false, true}) {
      CAPTURE(kernel);
      CAPTURE(causal);
      const auto fwd = test::build(problem(8, 2, 512, causal), kernel, Direction::fwd);
      const auto bwd = test::build(problem(8, 2, 512, causal), kernel, Direction::bwd);
      const auto r = sim::simulate({&fwd, &bwd}, gpu);
      for (const auto& k : r.kernels) {
        CAPTURE(k.name);
        CHECK(k.simds == gpu.total_cus() * gpu.cu.simds);
        CHECK(k.breakdown.total() == static_cast<Tick>(k.simds) * (k.last_retire - k.start));
        CHECK(k.breakdown.matrix == k.busy.matrix);
        CHECK(k.breakdown.vector <= k.busy.vector);  // vector work alone, not the part under matrix work
        CHECK(k.last_retire <= k.end);
      }
    }
  }
}

TEST_CASE("one workgroup on the GPU: the other CUs' SIMDs are all tail") {
  // aiter-v3 forward at N = 256 with one head: a single workgroup on one CU of 304.
  const auto gpu = arch::load_arch_file(arch::resolve_arch("mi300x"), {"clock.engine=1.5GHz"}).spec;
  const auto pp = test::build(problem(1, 1, 256, false), "aiter-v3", Direction::fwd);
  const auto r = sim::simulate({&pp}, gpu, {});
  REQUIRE(r.kernels.size() == 1);
  const auto& k = r.kernels[0];
  REQUIRE(k.workgroups == 1);
  const Tick exec = k.last_retire - k.start;
  CHECK(k.breakdown.tail >= static_cast<Tick>(k.simds - gpu.cu.simds) * exec);
  CHECK(k.breakdown.matrix > 0);
}

TEST_CASE("a streaming kernel's SIMDs wait on memory more than they compute") {
  // The backward preprocess reads O and dO and writes one fp32 per row: memory-bound.
  const auto gpu = arch::load_arch_file(arch::resolve_arch("mi300x"), {}).spec;
  const auto pp = test::build(problem(32, 8, 2048, false), "aiter-v3", Direction::bwd);
  const auto r = sim::simulate({&pp}, gpu, {});
  const sim::KernelResult* pre = nullptr;
  for (const auto& k : r.kernels) {
    if (k.name == "bwd_preprocess") pre = &k;
  }
  REQUIRE(pre);
  const auto& b = pre->breakdown;
  const Tick memory = wait(b, sim::WaitCause::l2) + wait(b, sim::WaitCause::fabric) + wait(b, sim::WaitCause::hbm) +
                      wait(b, sim::WaitCause::latency);
  CHECK(memory > b.matrix + b.vector + wait(b, sim::WaitCause::vector));
  CHECK(b.matrix == 0);
}
