// A kernel whose waves keep few load bytes in flight (the schedule's loop_load_bytes_in_flight,
// OpCost::wave_bytes_in_flight): each loop load holds the workgroup's capacity (waves x bytes) for
// its lines' round trips, one load after another (Little's law), checked against hand bounds from
// the H200 config's latencies (l1.latency 32 cycles, l2.latency 248, l2.far_latency 220, hbm.latency
// 204 ns) at a pinned clock.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "report/simulate_point.h"
#include "workloads/schedule.h"

using namespace attnsim;

namespace {
// The forward of one head of d = 128, N = 1024 on an H200 at 1830 MHz: 16 workgroups of 4 warps,
// each on an SM of its own, each loading 16 K and 16 V tiles of 64 rows x 256 B = 128 lines. The
// loop's shared-memory wavefronts (its LDS at its bandwidth) and its measured issue-only
// instructions and waits are left out, so that the loads bind.
double forward_us(std::uint32_t bytes_in_flight) {
  report::PointSpec s;
  s.arch = "h200";
  s.sets = {"clock.engine=1830MHz"};
  s.kernel = "ref-cuda,fwd.loop.lds_wavefronts_per_tile_byte=0,fwd.loop.lds_wavefronts_per_score_lane=0,"
             "fwd.loop.issue_only_per_tile_byte=0,fwd.loop.issue_only_per_score_lane=0,"
             "fwd.loop.issue_wait_per_instruction=0,fwd.loop_load_bytes_in_flight=" +
             std::to_string(bytes_in_flight);
  s.direction = "fwd";
  s.problem.batch = 1;
  s.problem.heads_q = s.problem.heads_kv = 1;
  s.problem.seqlen_q = s.problem.seqlen_k = 1024;
  s.problem.causal = false;
  return report::simulate_point(s)["kernels"][0]["time_us"].get<double>();
}
}  // namespace

TEST_CASE("loads with few bytes in flight per wave take a round trip per capacity's worth of lines") {
  // 16 iterations x 256 lines of K and V per workgroup. With 64 B per warp, 4 warps hold 256 B:
  // each 128 B line holds half of it for its round trip, so the loads take at least 16 x 256 / 2 =
  // 2048 round trips of an L2 hit (L1 32 + L2 248 cycles = 280 cycles = 153.0 ns at 1830 MHz):
  // 313.4 us; with 128 B per warp half that. A round trip is at most L1 + L2 + far partition +
  // DRAM: 500 cycles + 204 ns = 477.2 ns.
  const double hit_ns = 280 / 1.83, worst_ns = 500 / 1.83 + 204;
  const double unlimited = forward_us(0), narrow = forward_us(64), wider = forward_us(128);
  CHECK(narrow >= 2048 * hit_ns / 1e3);
  CHECK(wider >= 1024 * hit_ns / 1e3);
  // Doubling the bytes in flight halves the loads' time: the difference is the other half.
  CHECK(narrow - wider >= 1024 * hit_ns / 1e3);
  CHECK(narrow - wider <= 1024 * worst_ns / 1e3);
  // Without a limit of the kernel's own the CU's window (98 lines per SM) binds instead: far faster.
  CHECK(unlimited < wider / 4);
}

TEST_CASE("the ref kernels' loops keep one or two 2-byte loads per lane in flight and the other presets no limit") {
  // H200-REF: ref_kernels.sass, each LDG.E.U16 of the loop's tiles followed by its STS.U16: 32 x 2 B.
  const auto cuda = workloads::parse_kernel_spec("ref-cuda");
  CHECK(cuda.fwd.loop_load_bytes_in_flight == 64);
  CHECK(cuda.bwd.loop_load_bytes_in_flight == 64);
  // hipcc 5.2 gfx940: two global_load_ushort (K and V, or Q and dO) before their waits: 2 x 64 x 2 B.
  const auto hip = workloads::parse_kernel_spec("ref-hip");
  CHECK(hip.fwd.loop_load_bytes_in_flight == 256);
  CHECK(hip.bwd.loop_load_bytes_in_flight == 256);
  for (const char* name : {"aiter-v3", "fa2", "fa3", "ck"}) {
    CAPTURE(name);
    const auto k = workloads::parse_kernel_spec(name);
    CHECK(k.fwd.loop_load_bytes_in_flight == 0);
    CHECK(k.bwd.loop_load_bytes_in_flight == 0);
  }
}
