// An L1 that shares one array with the LDS (NVIDIA's unified L1/shared memory, l1.carveouts): each
// kernel's L1 is what its shared-memory carve-out leaves, the carve-out the smallest that holds its
// resident workgroups (with the driver's reserve per workgroup) or the one a measured launch
// recorded. Hand calculations, the H200's recorded carve-outs (H200-REF, ncu
// launch__shared_mem_config_size), the L1's capacity in the exact tags, and config errors.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "config_fixture.h"
#include "sim/l1_cache.h"
#include "sim/occupancy.h"
#include "workload_fixture.h"

using namespace attnsim;
using namespace attnsim::sim;

namespace {
constexpr std::uint64_t kKiB = 1024;

Occupancy split(const arch::GpuSpec& g, std::uint32_t waves, std::uint32_t vgprs, std::uint32_t lds,
                std::uint64_t recorded = 0) {
  Occupancy o = occupancy(g, waves, vgprs, lds);
  split_l1(g, lds, recorded, o);
  return o;
}
}  // namespace

TEST_CASE("the H200 L1 is what the kernel's carve-out leaves of the 256 KiB array") {
  const arch::GpuSpec& h = test::gpu("h200");
  REQUIRE(h.l1.carveouts.size() == 10);
  CHECK(h.l1.size.value + h.cu.lds_size.value == 256 * kKiB);
  // The validation forward (4 warps, 167 registers -> 168, 58,112 B of shared memory): 512
  // registers per lane per sub-partition / 168 = 3 workgroups; 3 x (58,112 + 1,024) = 177,408 B,
  // above 164 KiB (167,936), within 196 KiB (200,704): the carve-out ncu recorded for it.
  const Occupancy fwd = split(h, 4, 167, 58112);
  CHECK(fwd.workgroups_per_cu == 3);
  CHECK(fwd.lds_carveout == 200704);
  CHECK(fwd.l1_bytes == 256 * kKiB - 200704);  // 60 KiB
  // The validation backward (255 registers -> 256: 2 workgroups of 41,216 + 1,024 B = 84,480 B):
  // the rule gives 100 KiB (an L1 of 156 KiB), where the driver chose 132 KiB (124 KiB of L1).
  const Occupancy bwd = split(h, 4, 255, 41216);
  CHECK(bwd.workgroups_per_cu == 2);
  CHECK(bwd.lds_carveout == 100 * kKiB);
  CHECK(bwd.l1_bytes == 156 * kKiB);
  const Occupancy recorded = split(h, 4, 255, 41216, 132 * kKiB);
  CHECK(recorded.lds_carveout == 132 * kKiB);
  CHECK(recorded.l1_bytes == 124 * kKiB);
  // A recorded carve-out must be one of the list and hold the resident workgroups.
  CHECK_THROWS_AS(split(h, 4, 255, 41216, 120 * kKiB), std::invalid_argument);
  CHECK_THROWS_AS(split(h, 4, 255, 41216, 64 * kKiB), std::invalid_argument);
}

TEST_CASE("the driver's reserve per workgroup counts in the LDS occupancy on NVIDIA and nothing on AMD") {
  const arch::GpuSpec& h = test::gpu("h200");
  CHECK(h.l1.carveout_reserve.value == kKiB);
  // Two workgroups of 113 KiB need 2 x 114 = 228 KiB: they fit; of 114 KiB, 2 x 115 KiB do not.
  CHECK(occupancy(h, 4, 32, 113 * kKiB).workgroups_per_cu == 2);
  const Occupancy one = occupancy(h, 4, 32, 114 * kKiB);
  CHECK(one.workgroups_per_cu == 1);
  CHECK(one.limited_by == "lds");
  // MI300X: its LDS is apart from its L1 (no carve-outs): 64 KiB of LDS hold two of 32 KiB.
  const arch::GpuSpec& m = test::gpu("mi300x");
  CHECK(m.l1.carveouts.empty());
  const Occupancy amd = split(m, 4, 64, 32 * kKiB);
  CHECK(amd.workgroups_per_cu == 2);
  CHECK(amd.lds_carveout == 0);
  CHECK(amd.l1_bytes == m.l1.size.value);
}

TEST_CASE("a resized exact L1 keeps its sets and holds as many lines as its ways") {
  // H200 L1: 4 sets of 128 B lines (ACCEL-SIM), modulo set index; l1.size 28 KiB = 56 ways (224
  // lines), 60 KiB = 120 ways (480 lines). Reading n lines `stride` lines apart twice in the same
  // order: the second pass hits every line when each set holds all of its lines and none when a set
  // has more lines than ways (each evicts the one it needs next, in LRU order).
  const arch::GpuSpec& h = test::gpu("h200");
  CHECK(h.l1_sets() == 4);
  CHECK(h.l1_ways_at(60 * kKiB) == 120);
  L1Caches l1(h, false);
  const auto second_pass_hits = [&](std::uint64_t n, std::uint64_t stride) {
    l1.invalidate();
    for (std::uint64_t i = 0; i < n; ++i) l1.read(0, i * stride * 128, 0, 128);
    std::uint32_t hits = 0;
    for (std::uint64_t i = 0; i < n; ++i) hits += l1.read(0, i * stride * 128, 0, 128) ? 1 : 0;
    return hits;
  };
  CHECK(l1.size_bytes() == 28 * kKiB);
  CHECK(second_pass_hits(224, 1) == 224);  // 56 lines per set
  CHECK(second_pass_hits(480, 1) == 0);    // 120 lines per set
  l1.resize(60 * kKiB);
  CHECK(l1.size_bytes() == 60 * kKiB);
  CHECK(second_pass_hits(480, 1) == 480);
  // Rows 4 KiB apart (32 lines: set 0 every time), as K's and V's rows of 16 heads of d = 128:
  // 120 of them fit the one set's 120 ways, 121 do not. (With 4 ways in 120 sets, the geometry
  // before ACCEL-SIM, these rows fell in 15 sets and 60 of them fitted.)
  CHECK(second_pass_hits(120, 32) == 120);
  CHECK(second_pass_hits(121, 32) == 0);
  l1.resize(60 * kKiB);  // the same size: emptied all the same
  CHECK(!l1.read(0, 0, 0, 128));
}

TEST_CASE("a kernel runs with the L1 its carve-out leaves: fewer L2 reads with a larger one") {
  // The validation forward at B=1, 16 heads, N=4096, d=128 (dense), BHSD: every workgroup of a head
  // reads the same K and V, a head's rows contiguous; with the recorded 196 KiB carve-out its L1 is
  // 60 KiB, with 228 KiB (which also holds its three workgroups) 28 KiB, and the larger L1 serves
  // more of K and V. In BSHD the 16 heads put a head's rows 4 KiB apart: each row's two lines fall
  // in sets 0 and 1 of the four (line mod 4), so half of either L1 holds K and V and neither keeps
  // them: the same L2 reads (the approximate mode's groups keep the sets' shares, as the exact mode).
  const std::string common = "run --json --arch h200 --direction fwd --batch 1 --heads 16:16 --seqlen 4096 "
                             "--head-dim 128 --no-causal --approximate";
  const std::string base = common + " --kernel ref-cuda";
  const std::string bhsd = common + " --layout bhsd --kernel ref-cuda";
  const auto kernel_of = [](const std::string& args) {
    const auto r = test::run_attnsim(args, false);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out)["kernels"][0];
  };
  const auto a = kernel_of(bhsd);
  const auto b = kernel_of(bhsd + ",fwd.lds_carveout=233472");
  CHECK(a["occupancy"]["l1_bytes"] == 60 * kKiB);
  CHECK(a["occupancy"]["lds_carveout_bytes"] == 200704);
  CHECK(b["occupancy"]["l1_bytes"] == 28 * kKiB);
  const auto l2_reads = [](const nlohmann::json& k) {
    return k["counters"]["lts__t_sectors_srcunit_tex_op_read.sum"].get<double>();
  };
  CHECK(l2_reads(a) < l2_reads(b));
  CHECK(a["counters"]["l1_read_hit_rate"].get<double>() > b["counters"]["l1_read_hit_rate"].get<double>());
  CHECK(l2_reads(kernel_of(base)) == l2_reads(kernel_of(base + ",fwd.lds_carveout=233472")));
}

TEST_CASE("carve-outs are checked: the largest is the LDS and they increase and leave whole ways and a recorded one is listed") {
  const std::string text = test::shipped_config_text("h200");
  CHECK(test::load_error(text, {"l1.carveouts=[\"0KiB\", \"100KiB\"]"}).find(
            "key 'l1.carveouts': the largest carve-out, 100 KiB, must be cu.lds_size = 228 KiB") != std::string::npos);
  CHECK(test::load_error(text, {"l1.carveouts=[\"8KiB\", \"0KiB\", \"228KiB\"]"}).find("(not increasing)") !=
        std::string::npos);
  CHECK(test::load_error(text, {"l1.carveouts=[\"100B\", \"228KiB\"]"}).find("not whole ways of its 4 sets") != std::string::npos);
  CHECK(test::load_error(text, {"l1.carveouts=[]"}).find("key 'l1.carveouts': expected a non-empty array") !=
        std::string::npos);
  CHECK(test::load_error(test::shipped_config_text("mi300x"), {"l1.carveout_reserve=1KiB"})
            .find("needs l1.carveouts") != std::string::npos);
  const auto bad = test::run_attnsim("run --arch h200 --direction fwd --kernel ref-cuda,fwd.lds_carveout=123456");
  CHECK(bad.exit_code == 2);
  CHECK(test::contains(bad.out, "fwd.lds_carveout"));
  CHECK(test::contains(bad.out, "is not a carve-out of the NVIDIA H200 SXM"));
  const auto small = test::run_attnsim("run --arch h200 --direction fwd --kernel ref-cuda,fwd.lds_carveout=65536");
  CHECK(small.exit_code == 2);
  CHECK(test::contains(small.out, "cannot hold 3 workgroups' shared memory"));
}

TEST_CASE("attnsim arch show prints the array the L1 shares with the LDS") {
  const test::CliRun h200 = test::run_attnsim("arch show --arch h200");
  CHECK(test::contains(h200.out, "L1 + LDS array        256 KiB/CU, L1 28 KiB to 256 KiB per kernel (4 sets of 56 to 512 ways)"));
  CHECK(!test::contains(test::run_attnsim("arch show --arch mi300x").out, "L1 + LDS array"));
}
