// The backward's loop-free kernels (preprocess, dQ zeroing, dQ convert) launch with their own
// resources (BwdSchedule::preprocess_kernel, zero_kernel, convert_kernel), so their occupancy is
// theirs, not aiter's. Occupancies checked against Nsight Compute's launch__occupancy_limit_* of the
// measured launches on an H200 (H200-REF: validation/measurements/h200_detail_20261204/ncu_raw.csv;
// torch 2.11's FlashAttention-2: h200_torch_fa2_ncu_raw_20261204.csv), and by hand on the MI300X.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "arch/config_error.h"
#include "report/simulate_point.h"
#include "tests/point_fixture.h"
#include "tests/workload_fixture.h"
#include "workloads/presets.h"
#include "workloads/schedule.h"

using namespace attnsim;

namespace {
// Workgroups per CU of each kernel of a B=1, 16-head, d = 128, N = 1024 backward.
std::map<std::string, std::uint64_t> workgroups_per_cu(const char* arch, const char* kernel) {
  report::PointSpec s = test::point_spec(arch, kernel, "bwd", 16, 1024);
  s.approximate = true;
  const nlohmann::json result = report::simulate_point(s);
  std::map<std::string, std::uint64_t> m;
  for (const auto& k : result["kernels"]) m[k["name"].get<std::string>()] = k["occupancy"]["workgroups_per_cu"];
  return m;
}
}  // namespace

TEST_CASE("the ref-cuda loop-free kernels are as resident on an H200 as Nsight Compute said") {
  // 256 threads (8 warps of the SM's 64) and 30, 28 or 16 registers: ncu's limits 8 by warps,
  // 8 (30 and 28 registers: 65,536 / (256 x 32)) or 16 by registers; 8 per SM in each case.
  const auto wg = workgroups_per_cu("h200", "ref-cuda");
  CHECK(wg.at("bwd_preprocess") == 8);
  CHECK(wg.at("bwd_zero_dq_acc") == 8);
  CHECK(wg.at("bwd_convert_dq") == 8);
  CHECK(wg.at("bwd_dkdv") == 2);  // the main kernel unchanged: 255 registers, ncu's limit 2
}

TEST_CASE("FlashAttention-2's preprocess and convert are register-limited on an H200 as measured") {
  // flash_bwd_dot_do_o_kernel: 50 registers (56 allocated per thread, 8 per warp's granule): ncu's
  // register limit 4 (65,536 / (256 x 56) = 4.6); flash_bwd_convert_dq_kernel: 48 registers, limit 5
  // (5.3), under its shared-memory limit 7.
  const auto wg = workgroups_per_cu("h200", "fa2");
  CHECK(wg.at("bwd_preprocess") == 4);
  CHECK(wg.at("bwd_convert_dq") == 5);
}

TEST_CASE("the loop-free kernels keep aiter's resources where a preset does not give its own") {
  // aiter-v3 on the MI300X: 40,960 B of LDS in 64 KiB: one workgroup per CU (AITER-CO section 2).
  const auto aiter = workgroups_per_cu("mi300x", "aiter-v3");
  CHECK(aiter.at("bwd_preprocess") == 1);
  CHECK(aiter.at("bwd_convert_dq") == 1);
  // ref-hip: 4 waves of 64, 16, 7 or 10 VGPRs and no LDS: one wave per SIMD per workgroup, 8 wave
  // slots per SIMD, so 8 workgroups per CU.
  const auto hip = workgroups_per_cu("mi300x", "ref-hip");
  CHECK(hip.at("bwd_preprocess") == 8);
  CHECK(hip.at("bwd_zero_dq_acc") == 8);
  CHECK(hip.at("bwd_convert_dq") == 8);
  // The fields override them one by one.
  const auto spec = workloads::parse_kernel_spec("aiter-v3,bwd.preprocess_kernel.lds_bytes=0,bwd.preprocess_kernel.vgprs=64");
  CHECK(spec.bwd.preprocess_kernel.lds_bytes == 0);
  CHECK(spec.bwd.preprocess_kernel.vgprs == 64);
  CHECK(spec.bwd.convert_kernel.vgprs == 128);
  CHECK(spec.bwd.rows_kernels_source.rfind("overridden (--kernel); was: AITER-CO", 0) == 0);
  for (const std::string& name : workloads::preset_names()) {
    CAPTURE(name);
    CHECK_FALSE(workloads::parse_kernel_spec(name).bwd.rows_kernels_source.empty());
  }
  const auto overridden = workgroups_per_cu("mi300x", "aiter-v3,bwd.preprocess_kernel.lds_bytes=0,bwd.preprocess_kernel.vgprs=64");
  CHECK(overridden.at("bwd_preprocess") == 8);  // 4 waves of 64 VGPRs: the 8 wave slots per SIMD bind
  CHECK(overridden.at("bwd_convert_dq") == 1);
}

TEST_CASE("a loop-free kernel that does not fit is refused with its field") {
  workloads::Problem p;
  p.batch = 1;
  p.heads_q = p.heads_kv = 16;
  p.seqlen_q = p.seqlen_k = 1024;
  CHECK_THROWS_WITH_AS(test::build(p, "aiter-v3,bwd.convert_kernel.lds_bytes=100000", workloads::Direction::bwd),
                       "--kernel aiter-v3,bwd.convert_kernel.lds_bytes=100000: error: key 'bwd.convert_kernel.lds_bytes': "
                       "100000 B of LDS exceed the AMD Instinct MI300X limit of 64 KiB per workgroup",
                       arch::ConfigError);
  CHECK_THROWS_WITH_AS(test::build(p, "aiter-v3,bwd.zero_kernel.waves=32", workloads::Direction::bwd),
                       "--kernel aiter-v3,bwd.zero_kernel.waves=32: error: key 'bwd.zero_kernel.waves': 32 waves of 64 "
                       "exceed the AMD Instinct MI300X workgroup limit of 1024 threads",
                       arch::ConfigError);
}
