// The engine's approximate tag mode against the exact mode (the reference): time within 1 % and
// bytes at every level within 2 % (the bound of the engine issue) on small problems of each kind.
// Larger problems (docs/model.md, approximate mode) stay within 0.6 % except a low-hit-rate
// backward, +2.3 % in L2-to-fabric reads, and a causal backward whose heads-first grid keeps its
// working set at the L2's capacity (aotriton with triton-amd's grid, as the preset ran until
// session 36: -7.3 %; with AOTriton's own blocks-first grids, below, -1.2 %).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "arch/config_error.h"
#include "report/simulate_point.h"
#include "sim/engine.h"

using namespace attnsim;

namespace {
struct Case {
  const char* name;
  const char* arch;
  const char* kernel;
  std::uint32_t batch, heads_q, heads_kv;
  std::uint64_t seqlen;
  bool causal;
  workloads::Layout layout;
  const char* direction;
};

report::PointSpec point_of(const Case& c, bool approximate) {
  report::PointSpec s;
  s.arch = c.arch;
  s.kernel = c.kernel;
  s.direction = c.direction;
  s.problem.batch = c.batch;
  s.problem.heads_q = c.heads_q;
  s.problem.heads_kv = c.heads_kv;
  s.problem.seqlen_q = s.problem.seqlen_k = c.seqlen;
  s.problem.causal = c.causal;
  s.problem.layout = c.layout;
  s.approximate = approximate;
  return s;
}

double relative(double approximate, double exact) { return exact == 0 ? approximate : approximate / exact - 1; }

// The engine issue's bound: time within 1 %, bytes at every level within 2 %.
void check_within_bound(const nlohmann::json& approx, const nlohmann::json& exact) {
  CHECK(std::abs(relative(approx["time_us"], exact["time_us"])) <= 0.01);
  for (const char* level : {"l2_request_bytes", "l2_fabric_read_bytes", "l2_fabric_write_bytes", "mall_hit_bytes",
                            "hbm_read_bytes", "hbm_write_bytes"}) {
    CAPTURE(level);
    CHECK(std::abs(relative(approx["traffic"][level].get<double>(), exact["traffic"][level].get<double>())) <= 0.02);
  }
}
}  // namespace

TEST_CASE("the approximate tag mode stays within 1 % in time and 2 % in bytes per level of the exact mode") {
  const Case cases[] = {
      {"fwd", "mi300x", "aiter-v3", 1, 16, 4, 2048, false, workloads::Layout::bshd, "fwd"},
      {"bwd", "mi300x", "aiter-v3", 1, 16, 4, 1024, false, workloads::Layout::bshd, "bwd"},
      {"causal both", "mi300x", "aiter-v3", 1, 16, 4, 2048, true, workloads::Layout::bshd, "both"},
      {"bhsd both", "mi300x", "aiter-v3", 1, 16, 4, 2048, false, workloads::Layout::bhsd, "both"},
      {"MQA both", "mi300x", "aiter-v3", 2, 8, 1, 2048, false, workloads::Layout::bshd, "both"},
      // The H100's 50 MiB L2 keeps its lines across kernels (l2.kernel_end = keep): at 16 heads the
      // problem's tensors just fill it, where 16-way sets and fully associative groups part most
      // (docs/model.md, approximate mode); at 64 heads the kernels stream through it.
      {"H100 without a MALL", "h100", "fa2", 1, 64, 16, 2048, false, workloads::Layout::bshd, "both"},
      {"H100 FA3: producer warps and a persistent forward", "h100", "fa3", 1, 64, 16, 2048, true,
       workloads::Layout::bshd, "both"},
      // The H200's L1 of 4 sets (line mod 4): 16 heads of d = 128 put a head's rows 4 KiB apart,
      // in sets 0 and 1 only. Without the sets the approximate L1 (fully associative) hit more:
      // -3.3 % in time, -3.0 % in L2 requests; with them -0.8 % and -1.4 %. A sensitive case: other
      // seeds of the L2's victim draws move the approximate time by +1.1 and -1.4 %, and the exact
      // mode's own time moves by up to -2.8 % with other L2 index primes (docs/model.md).
      {"H200 validation kernels: the L1's few sets", "h200", "ref-cuda", 2, 16, 16, 4096, false,
       workloads::Layout::bshd, "both"},
      // A causal backward whose dQ kernel's working set sits at the L2's capacity: strict LRU over
      // groups keeps none of a set a little larger than the cache, the 16-way L2 keeps part of it
      // (+2.1 % L2-to-fabric reads); victims drawn as its sets draw them: +0.4 %.
      {"triton-amd causal at the L2's capacity", "mi300x", "triton-amd", 2, 32, 8, 4096, true,
       workloads::Layout::bshd, "both"},
      // AOTriton's grids are blocks first (ROCm/aotriton attn_fwd.cc, attn_bwd.cc): a head's tiles
      // spread over the XCDs, each XCD fetching every head's operands; measured -0.12 % in time,
      // -1.2 % in L2-to-fabric reads and MALL hits (session 37).
      {"aotriton causal: blocks-first grids", "mi300x", "aotriton", 2, 32, 8, 4096, true, workloads::Layout::bshd,
       "both"},
  };
  for (const Case& c : cases) {
    const std::string name = c.name;  // a string, so a failure names the case (not its address)
    CAPTURE(name);
    const nlohmann::json exact = report::simulate_point(point_of(c, false));
    const nlohmann::json approx = report::simulate_point(point_of(c, true));
    CHECK(exact["tags"] == "exact");
    CHECK(approx["tags"] == "approximate");
    check_within_bound(approx, exact);
    // Requests are counted by the same rules in both modes: what the CUs ask for is identical (what
    // reaches the L2 depends on the L1's tags, within the bound above).
    CHECK(approx["traffic"]["l1_request_bytes"] == exact["traffic"]["l1_request_bytes"]);
  }
}

TEST_CASE("on a memory-starved what-if the approximate mode keeps the HBM channels' imbalance") {
  // HBM at 0.5 TB/s: the backward's dQ atomics, which every workgroup adds into the same rows at
  // the same time, camp on a few HBM channels. The approximate mode spreads MALL bytes evenly over
  // the channels but keeps each row's HBM channel: spreading HBM too departed by -2.0 % in time on
  // this problem (docs/model.md, approximate mode, **Channels**), per row it is within 0.3 %.
  const Case c{"starved", "mi300x", "aiter-v3", 1, 16, 4, 2048, true, workloads::Layout::bshd, "both"};
  report::PointSpec exact_spec = point_of(c, false), approx_spec = point_of(c, true);
  exact_spec.sets = approx_spec.sets = {"hbm.peak_bandwidth=0.5TB/s"};
  const nlohmann::json exact = report::simulate_point(exact_spec);
  const nlohmann::json approx = report::simulate_point(approx_spec);
  for (const auto& k : exact["kernels"]) {
    if (k["name"] == "bwd_dkdv") CHECK(k["bound_by"] == "hbm");  // matrix-bound at the MI300X's 5.3 TB/s
  }
  check_within_bound(approx, exact);
}

TEST_CASE("the approximate mode's loop batching stays within 1 % in time and 2 % in bytes per level of the exact mode") {
  // Problems whose main kernels batch loop iterations (two rounds of workgroups, one workgroup per
  // CU, prefetching loops): 8 per step where the passes span 128 iterations or more on average, 4
  // where they span 64 to 127 (the forward at N = 2048: 2048 / 32 keys per iteration; the causal
  // backward at N = 2048: 2048 / 16 queries, 64.5 on average), none below. The bound
  // of the engine issue holds with batching as without (measured: within 0.6 % in time, 0.9 % in
  // bytes).
  struct Batched {
    Case c;
    std::vector<std::pair<std::string, std::uint32_t>> batched;  // kernels that must batch, and by how many
  };
  const Batched cases[] = {
      {{"both", "mi300x", "aiter-v3", 3, 32, 8, 2048, false, workloads::Layout::bshd, "both"}, {{"fwd", 4}, {"bwd_dkdv", 8}}},
      {{"causal both", "mi300x", "aiter-v3", 4, 32, 8, 2048, true, workloads::Layout::bshd, "both"}, {{"bwd_dkdv", 4}}},
      {{"bhsd causal bwd", "mi300x", "aiter-v3", 2, 32, 8, 4096, true, workloads::Layout::bhsd, "bwd"}, {{"bwd_dkdv", 8}}},
  };
  for (const Batched& b : cases) {
    const std::string name = b.c.name;  // a string, so a failure names the case (not its address)
    CAPTURE(name);
    const nlohmann::json exact = report::simulate_point(point_of(b.c, false));
    const nlohmann::json approx = report::simulate_point(point_of(b.c, true));
    for (const auto& k : approx["kernels"]) {
      CAPTURE(k["name"].get<std::string>());
      std::uint32_t expected = 1;
      for (const auto& [name, batch] : b.batched) {
        if (name == k["name"].get<std::string>()) expected = batch;
      }
      CHECK(k["loop_batch"] == expected);
    }
    for (const auto& k : exact["kernels"]) CHECK(k["loop_batch"] == 1);
    check_within_bound(approx, exact);
    // Batches cover the same tiles: the same operations, instructions and requested bytes.
    CHECK(approx["traffic"]["l1_request_bytes"] == exact["traffic"]["l1_request_bytes"]);
    for (std::size_t i = 0; i < exact["kernels"].size(); ++i) {
      CHECK(approx["kernels"][i]["tile_ops"] == exact["kernels"][i]["tile_ops"]);
    }
  }
}

TEST_CASE("a loop batch is halved for passes short on average down to 4") {
  // aiter-v3 at N = 2048: the forward's full pass is 2048 / 32 keys = 64 iterations, the
  // backward's 2048 / 16 queries = 128. A pass must span 16 steps.
  const Case c{"both", "mi300x", "aiter-v3", 3, 32, 8, 2048, false, workloads::Layout::bshd, "both"};
  const auto batches = [&](std::uint32_t loop_batch) {
    report::PointSpec s = point_of(c, true);
    s.loop_batch = loop_batch;
    const nlohmann::json r = report::simulate_point(s);
    std::pair<std::uint32_t, std::uint32_t> fwd_bwd{0, 0};
    for (const auto& k : r["kernels"]) {
      if (k["name"] == "fwd") fwd_bwd.first = k["loop_batch"];
      if (k["name"] == "bwd_dkdv") fwd_bwd.second = k["loop_batch"];
    }
    return fwd_bwd;
  };
  // 16: the forward halves twice (64 < 16 x 16, 64 < 16 x 8), the backward once.
  CHECK(batches(16) == std::pair<std::uint32_t, std::uint32_t>{4, 8});
  // 6: 64 iterations < 16 x 6 and 3 is below the floor, so the forward runs unbatched.
  CHECK(batches(6) == std::pair<std::uint32_t, std::uint32_t>{1, 6});
  // Below the floor a batch is kept where the pass is long enough, never halved.
  CHECK(batches(2) == std::pair<std::uint32_t, std::uint32_t>{2, 2});
  // Causal passes are half as long on average: FA3's forward at N = 16384 (128 keys per
  // iteration) runs passes of 1 to 128 iterations, 64.5 on average, so it takes 4, not 8.
  const Case fa3{"fa3", "h100", "fa3", 1, 16, 4, 16384, true, workloads::Layout::bshd, "fwd"};
  const nlohmann::json r = report::simulate_point(point_of(fa3, true));
  CHECK(r["kernels"][0]["loop_batch"] == sim::kHalvedLoopBatchFloor);
}

TEST_CASE("small grids are not batched and batching needs the approximate mode") {
  // One round of workgroups or fewer: the time is a workgroup's critical path, which batching
  // would coarsen (measured +3.5 % on this forward), so every iteration is timed.
  const Case c{"small", "mi300x", "aiter-v3", 1, 16, 4, 1024, false, workloads::Layout::bshd, "both"};
  report::PointSpec s = point_of(c, true);
  const nlohmann::json small = report::simulate_point(s);  // kept: a range over a temporary's member dangles
  for (const auto& k : small["kernels"]) CHECK(k["loop_batch"] == 1);
  s.approximate = false;
  s.loop_batch = 4;
  CHECK_THROWS_WITH_AS(report::simulate_point(s), doctest::Contains("--approximate"), arch::ConfigError);
  // A batch of 1 asked for explicitly is kept, also when the options ask for the approximate mode.
  const Case big{"batchable", "mi300x", "aiter-v3", 3, 32, 8, 2048, false, workloads::Layout::bshd, "fwd"};
  report::PointSpec one = point_of(big, false);
  one.loop_batch = 1;
  sim::EngineOptions approximate;
  approximate.approximate = true;
  approximate.loop_batch = 8;  // not used: the spec decides
  const nlohmann::json unbatched = report::simulate_point(one, approximate);
  CHECK(unbatched["tags"] == "approximate");
  for (const auto& k : unbatched["kernels"]) CHECK(k["loop_batch"] == 1);
}

TEST_CASE("with the hashed set index a BHSD backward agrees in both modes and under modulo its heads crowd the sets") {
  // BHSD puts each head's rows 1 MiB apart (4096 x 128 x 2 B), a multiple of the 256 KiB an MI300X
  // L2 way spans (2048 sets x 128 B): under the modulo index the heads that run together fall into
  // the same sets and evict each other, while the approximate mode has no sets.
  const Case c{"bhsd bwd", "mi300x", "aiter-v3", 1, 16, 4, 4096, false, workloads::Layout::bhsd, "bwd"};
  report::PointSpec exact = point_of(c, false), approx = point_of(c, true);
  const nlohmann::json e = report::simulate_point(exact), a = report::simulate_point(approx);
  CHECK(std::abs(relative(a["time_us"], e["time_us"])) <= 0.01);
  CHECK(std::abs(relative(a["traffic"]["l2_fabric_read_bytes"].get<double>(), e["traffic"]["l2_fabric_read_bytes"].get<double>())) <= 0.02);
  exact.sets = {"l2.set_index=modulo", "mall.set_index=modulo"};
  const nlohmann::json m = report::simulate_point(exact);
  // Session 6 measured 20.3 % L2 hits under modulo against 27.8 % hashed (docs/model.md).
  CHECK(m["traffic"]["l2_hit_rate"].get<double>() < e["traffic"]["l2_hit_rate"].get<double>() - 0.05);
}

TEST_CASE("the approximate tag mode needs 64 B MALL lines") {
  report::PointSpec s = point_of({"x", "mi300x", "aiter-v3", 1, 8, 8, 256, false, workloads::Layout::bshd, "fwd"}, true);
  s.sets = {"mall.line=128B"};
  CHECK_THROWS_WITH_AS(report::simulate_point(s), doctest::Contains("mall.line"), arch::ConfigError);
}
