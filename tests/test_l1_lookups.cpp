// L1 lookups a kernel's load instructions make per profiler unit (workloads::OpCost::l1_lookups, the
// schedule's *_l1_lookups): loads of single elements into matrix fragments, or of one row per
// thread, look each 32 B sector up several times, and the lookups after the first hit. Checked
// against the H200's Nsight Compute counts of the validation kernels (H200-REF:
// validation/measurements/h200_detail_20261204/ncu_raw.csv, d = 128, B = 1, 16 heads, N = 4096,
// ncu --cache-control all): the model's sector lookups equal ncu's, kernel by kernel.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "report/simulate_point.h"
#include "tests/point_fixture.h"
#include "workloads/schedule.h"

using namespace attnsim;

namespace {
constexpr const char* kLookups = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
constexpr const char* kHits = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum";

// Each kernel's counters of one run of B=1, `heads` heads of d = 128, N = `seqlen`, every kernel
// starting with empty caches (as ncu's --cache-control all).
std::map<std::string, nlohmann::json> counters_by_kernel(const char* arch, const std::string& kernel, const char* direction,
                                                         std::uint32_t heads, std::uint64_t seqlen, bool approximate = false) {
  report::PointSpec s = test::point_spec(arch, kernel, direction, heads, seqlen);
  s.empty_caches_per_kernel = true;
  s.approximate = approximate;
  const nlohmann::json result = report::simulate_point(s);
  std::map<std::string, nlohmann::json> m;
  for (const auto& k : result["kernels"]) m[k["name"].get<std::string>()] = k["counters"];
  return m;
}

// The H200 detail run's problem (16 heads, N = 4096), in the approximate mode: sectors are counted
// per request in either mode.
std::map<std::string, nlohmann::json> run(const std::string& kernel, const char* direction) {
  return counters_by_kernel("h200", kernel, direction, 16, 4096, true);
}
}  // namespace

TEST_CASE("the ref-cuda kernels look up as many L1 sectors as Nsight Compute counted on the H200") {
  // Forward: K and V tiles, coalesced, 64 iterations x 64 rows x 256 B x 2 per workgroup, 1,024
  // workgroups: 67,108,864 sectors once each; Q into mma.sync fragments, 524,288 sectors 4 times.
  const auto fwd = run("ref-cuda", "fwd");
  CHECK(fwd.at("fwd")[kLookups] == 69'206'016);
  CHECK(fwd.at("fwd")[kHits].get<std::uint64_t>() >= 3 * 524'288);  // the repeats hit
  const auto bwd = run("ref-cuda", "bwd");
  // Preprocess: one row per thread, element by element: 1,048,576 sectors of O and dO, 16 times
  // each (ncu: 15,726,396 hits; the model's 15 repeats of each sector, 15,728,640, all hit).
  CHECK(bwd.at("bwd_preprocess")[kLookups] == 16'777'216);
  CHECK(bwd.at("bwd_preprocess")[kHits] == 15'728'640);
  // Main kernel: Q and dO tiles 67,108,864 + LSE and delta 1,048,576 + K 5 x 524,288 (fragments,
  // then the LDS tile) + V 4 x 524,288.
  CHECK(bwd.at("bwd_dkdv")[kLookups] == 72'876'032);
  CHECK(bwd.at("bwd_convert_dq")[kLookups] == 1'048'576);
  CHECK(bwd.at("bwd_convert_dq")[kHits] == 0);
  // The same kernels with one lookup per sector (aiter-v3's default): no repeats, the L2 traffic
  // unchanged (the repeats hit, they move nothing).
  const auto plain = run("ref-cuda,bwd.preprocess_l1_lookups=1", "bwd");
  CHECK(plain.at("bwd_preprocess")[kLookups] == 1'048'576);
  CHECK(plain.at("bwd_preprocess")[kHits] == 0);
  CHECK(plain.at("bwd_preprocess")["lts__t_sectors_srcunit_tex_op_read.sum"] ==
        bwd.at("bwd_preprocess")["lts__t_sectors_srcunit_tex_op_read.sum"]);
}

TEST_CASE("L1 lookups per sector are schedule fields of at least 1") {
  CHECK(workloads::parse_kernel_spec("ref-cuda").fwd.q_l1_lookups == 4);
  CHECK(workloads::parse_kernel_spec("ref-cuda").bwd.k_l1_lookups == 5);
  CHECK(workloads::parse_kernel_spec("ref-cuda").bwd.v_l1_lookups == 4);
  CHECK(workloads::parse_kernel_spec("ref-cuda").bwd.preprocess_l1_lookups == 16);
  // hipcc 5.2 gfx940's code (workloads/presets.cpp): per 128 B line, the MFMA A fragments' 16 loads,
  // K's LDS tile once more, and the preprocess's 64 single-element loads.
  CHECK(workloads::parse_kernel_spec("ref-hip").fwd.q_l1_lookups == 16);
  CHECK(workloads::parse_kernel_spec("ref-hip").bwd.k_l1_lookups == 17);
  CHECK(workloads::parse_kernel_spec("ref-hip").bwd.v_l1_lookups == 16);
  CHECK(workloads::parse_kernel_spec("ref-hip").bwd.preprocess_l1_lookups == 64);
  CHECK(workloads::parse_kernel_spec("aiter-v3").fwd.q_l1_lookups == 1);
  CHECK_THROWS_WITH(workloads::parse_kernel_spec("ref-cuda,fwd.q_l1_lookups=0"),
                    doctest::Contains("fwd.q_l1_lookups"));
}

TEST_CASE("on AMD the repeated lookups are TCP accesses that hit and the hit rate follows") {
  // The preprocess of B=1 Hq=4 N=256 d=128 on MI300X: O and dO are 2 x 4 x 256 rows of 256 B, each
  // row two 128 B lines: 4,096 line requests looked up once. With 8 lookups per line the TCP sees
  // 7 x 4,096 more accesses, all hits; the L2 sees the same requests.
  const auto once = counters_by_kernel("mi300x", "ref-hip,bwd.preprocess_l1_lookups=1", "bwd", 4, 256).at("bwd_preprocess");
  const auto eight = counters_by_kernel("mi300x", "ref-hip,bwd.preprocess_l1_lookups=8", "bwd", 4, 256).at("bwd_preprocess");
  const auto preset = counters_by_kernel("mi300x", "ref-hip", "bwd", 4, 256).at("bwd_preprocess");  // 64 per line
  CHECK(preset["TCP_TOTAL_CACHE_ACCESSES"].get<std::uint64_t>() - once["TCP_TOTAL_CACHE_ACCESSES"].get<std::uint64_t>() ==
        63 * 4096);
  CHECK(once["TCP_TOTAL_CACHE_ACCESSES"].get<std::uint64_t>() - once["TCP_TCC_WRITE_REQ"].get<std::uint64_t>() == 4096);
  CHECK(eight["TCP_TOTAL_CACHE_ACCESSES"].get<std::uint64_t>() - once["TCP_TOTAL_CACHE_ACCESSES"].get<std::uint64_t>() ==
        7 * 4096);
  CHECK(eight["TCP_TCC_READ_REQ"] == once["TCP_TCC_READ_REQ"]);
  CHECK(eight["TCC_REQ"] == once["TCC_REQ"]);
  // 1 - TCP_TCC_READ_REQ / read accesses: 4,096 misses of 32,768 lookups.
  CHECK(eight["l1_read_hit_rate"].get<double>() == doctest::Approx(1.0 - 4096.0 / 32768.0));
}

TEST_CASE("a load of single elements takes a clock per L1 lookup through the data stage") {
  // The preprocess of B=1 Hq=4 N=256 d=128 on the H200 at a pinned 1.5 GHz: 4 workgroups of 256
  // rows, one per SM, each reading 256 rows of O and dO (2 x 256 x 8 sectors) and looking each
  // sector up 16 times: 65,536 wavefronts, one per clock (H200-REF: the measured preprocess's
  // l1tex__data_pipe_lsu_wavefronts, 127,405 per SM, equal its 16,777,216 sector lookups / 132 in
  // 131,208 active cycles), 43.69 us. Coalesced (one lookup per sector), its 128 KiB pass the
  // L1 at 128 B per clock in 0.68 us and the kernel is latency-bound, far shorter.
  const auto time_of = [](const std::string& kernel) {
    report::PointSpec s = test::point_spec("h200", kernel, "bwd", 4, 256);
    s.sets = {"clock.engine=1.5GHz"};
    const nlohmann::json r = report::simulate_point(s);
    for (const auto& k : r["kernels"]) {
      if (k["name"] == "bwd_preprocess") return k["end_us"].get<double>() - k["start_us"].get<double>();  // from its start
    }
    FAIL("no preprocess kernel");
    return 0.0;
  };
  const double wavefronts_us = 65536 / 1.5e9 * 1e6;
  const double element_wise = time_of("ref-cuda"), coalesced = time_of("ref-cuda,bwd.preprocess_l1_lookups=1");
  CHECK(element_wise >= wavefronts_us);
  CHECK(element_wise <= wavefronts_us + 3.0);  // and the last lookups' round trip
  CHECK(coalesced < wavefronts_us / 4);
}
