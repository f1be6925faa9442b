// Every preset computes attention correctly on the CPU, and its bytes agree three ways.
#include <doctest/doctest.h>

#include <tbb/global_control.h>

#include "workload_fixture.h"
#include "workloads/analytic.h"
#include "workloads/functional.h"

using namespace attnsim;
using namespace attnsim::workloads;

namespace {

struct Case {
  std::uint64_t nq, nk;
  bool causal;
  CausalAlign align;
  std::optional<Window> window;
  std::uint32_t hq, hkv;
};

// Small shapes that are not multiples of the block sizes, GQA, Nq != Nk, windows.
const Case kCases[] = {
    {200, 200, false, CausalAlign::bottom_right, std::nullopt, 4, 2},
    {200, 200, true, CausalAlign::bottom_right, std::nullopt, 2, 1},
    {150, 333, true, CausalAlign::bottom_right, std::nullopt, 2, 2},
    {333, 150, true, CausalAlign::bottom_right, std::nullopt, 3, 1},
    {257, 190, true, CausalAlign::top_left, Window{40, 0}, 2, 2},
    {190, 257, false, CausalAlign::bottom_right, Window{33, 17}, 4, 1},
};

Problem make(const Case& c) {
  Problem p;
  p.batch = 1;
  p.heads_q = c.hq;
  p.heads_kv = c.hkv;
  p.seqlen_q = c.nq;
  p.seqlen_k = c.nk;
  p.head_dim_qk = p.head_dim_v = 32;
  p.causal = c.causal;
  p.align = c.align;
  p.window = c.window;
  return p;
}

void check_all(const std::string& kernel) {
  for (const Case& c : kCases) {
    const Problem p = make(c);
    for (Direction d : {Direction::fwd, Direction::bwd}) {
      CAPTURE(kernel);
      CAPTURE(p.describe());
      CAPTURE(to_string(d));
      const PassPrograms pp = test::build(p, kernel, d);
      const FunctionalResult r = run_functional(pp, 3);
      CHECK(r.worst < kCheckTolerance);
      const PassCounts a = analytic_counts(pp);
      CHECK(a.traffic == r.traffic);
      CHECK(program_traffic(pp) == r.traffic);
    }
  }
}

}  // namespace

TEST_CASE("aiter-v3 computes attention correctly") { check_all("aiter-v3"); }
TEST_CASE("aiter-v3-a16 computes attention correctly") { check_all("aiter-v3-a16"); }
TEST_CASE("aiter-v3 as its C++ API runs it (memset and dK/dV group sum left to the caller) computes attention correctly") {
  check_all("aiter-v3,bwd.zero_dq_acc=false,bwd.sum_dkdv=false");
}
TEST_CASE("ck computes attention correctly") { check_all("ck"); }
TEST_CASE("ck with split dQ and kv_loop GQA computes attention correctly") { check_all("ck,bwd.dq=split,bwd.gqa=kv_loop"); }
TEST_CASE("triton-amd computes attention correctly") { check_all("triton-amd"); }
TEST_CASE("aotriton computes attention correctly") { check_all("aotriton"); }
TEST_CASE("fa2 computes attention correctly") { check_all("fa2"); }
TEST_CASE("fa3 computes attention correctly") { check_all("fa3"); }

TEST_CASE("BHSD layout and fp16 compute correctly") {
  Problem p = make(kCases[2]);
  p.layout = Layout::bhsd;
  p.dtype = Dtype::fp16;
  for (Direction d : {Direction::fwd, Direction::bwd}) {
    const auto pp = test::build(p, "ck", d);
    const auto r = run_functional(pp, 5);
    CHECK(r.worst < kCheckTolerance);
    CHECK(analytic_counts(pp).traffic == r.traffic);
  }
}

TEST_CASE("a tile never written is caught: outputs start poisoned") {
  Problem p = make(kCases[0]);
  PassPrograms pp = test::build(p, "ck", Direction::fwd);
  // Drop the LSE store from the epilogue: the check must fail on lse, not pass on stale memory.
  CompiledBody& epi = pp.kernels[0].epilogue;
  for (std::size_t i = 0; i < epi.ops.size(); ++i) {
    if (epi.ops[i].action == Action::store_lse) epi.ops[i].action = Action::barrier;
  }
  const auto r = run_functional(pp, 3);
  CHECK(r.worst_tensor == "lse");
  CHECK(r.worst > 1.0);
}

TEST_CASE("a schedule with a wrong dependence structure computes a wrong answer") {
  // Skipping the online-softmax rescale would be caught; here we drop the P.V product.
  PassPrograms pp = test::build(make(kCases[1]), "aiter-v3", Direction::fwd);
  for (auto& op : pp.kernels[0].body.ops) {
    if (op.action == Action::pv) op.action = Action::barrier;
  }
  CHECK(run_functional(pp, 3).worst > 0.1);
}

TEST_CASE("the functional run is deterministic whatever the thread count") {
  const PassPrograms pp = test::build(make(kCases[0]), "aiter-v3", Direction::bwd);
  FunctionalResult one, two;
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
    one = run_functional(pp, 9);
  }
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 2);
    two = run_functional(pp, 9);
  }
  CHECK(one.worst == two.worst);
  CHECK(one.max_rel_error == two.max_rel_error);
  CHECK(one.traffic == two.traffic);
}
TEST_CASE("XCD-remapped grids compute attention correctly") { check_all("aiter-v3,fwd.xcd_remap=8,bwd.xcd_remap=8"); }
