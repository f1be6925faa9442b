// Occupancy from VGPRs (with the allocation granule), LDS and wave slots.
#include <doctest/doctest.h>

#include "sim/occupancy.h"
#include "workloads/presets.h"
#include "workloads/schedule_for.h"
#include "workload_fixture.h"

using namespace attnsim;
using namespace attnsim::sim;

TEST_CASE("VGPR allocation rounds up: 170 registers to 176 gives 2 waves per SIMD (ROCM-WL)") {
  const auto o = occupancy(test::gpu("mi300x"), 4, 170, 0);
  CHECK(o.vgprs_allocated == 176);
  CHECK(o.workgroups_per_cu == 2);  // 4-wave workgroups, one wave per SIMD each
  CHECK(o.waves_per_simd == 2);
  CHECK(o.limited_by == "vgprs");
}

TEST_CASE("aiter-v3 kernels: one workgroup per CU (aiter-v3-kernels.md section 2)") {
  const auto& gpu = test::gpu("mi300x");
  // Forward: 8 waves, 256 VGPRs (2 waves/SIMD), 64 KiB LDS: LDS allows one workgroup.
  const auto fwd = occupancy(gpu, 8, 256, 65536);
  CHECK(fwd.workgroups_per_cu == 1);
  CHECK(fwd.waves_per_simd == 2);
  CHECK(fwd.limited_by == "vgprs");  // 2 waves/SIMD by VGPRs equals the workgroup's 2 per SIMD
  // Backward: 4 waves, 512 VGPRs: one wave per SIMD.
  const auto bwd = occupancy(gpu, 4, 512, 65536);
  CHECK(bwd.workgroups_per_cu == 1);
  CHECK(bwd.waves_per_simd == 1);
  // odo / dq_convert: 128 VGPRs (4 waves/SIMD), 40,960 B LDS: LDS allows one 4-wave workgroup.
  const auto odo = occupancy(gpu, 4, 128, 40960);
  CHECK(odo.workgroups_per_cu == 1);
  CHECK(odo.limited_by == "lds");
}

TEST_CASE("wave slots bound small workgroups and oversized ones do not fit") {
  const auto& gpu = test::gpu("mi300x");
  const auto small = occupancy(gpu, 1, 16, 0);
  CHECK(small.workgroups_per_cu == 8 * 4 / 4);  // 8 slots per SIMD; 1-wave workgroups land on one SIMD each
  CHECK(small.limited_by == "wave slots");
  CHECK(occupancy(gpu, 17, 64, 0).workgroups_per_cu == 0);  // 17 x 64 threads > 1024
  CHECK(occupancy(gpu, 4, 64, 70000).workgroups_per_cu == 0);  // more LDS than the CU has
}

TEST_CASE("every kernel preset fits a CU of the GPU it was written for") {
  for (const auto& name : attnsim::workloads::preset_names()) {
    CAPTURE(name);
    const auto k = *attnsim::workloads::preset(name);
    const auto& gpu = test::gpu(k.native_arch);
    const auto fwd = occupancy(gpu, k.fwd.waves + k.fwd.load_waves, k.fwd.vgprs, k.fwd.lds_bytes);
    const auto bwd = occupancy(gpu, k.bwd.waves + k.bwd.load_waves, k.bwd.vgprs, k.bwd.lds_bytes);
    CHECK(fwd.workgroups_per_cu >= 1);
    CHECK(bwd.workgroups_per_cu >= 1);
  }
}

TEST_CASE("ref-cuda's main kernels fit per head dimension as many workgroups as the H200 launched") {
  // H200-REF (ncu_raw.csv, launch__occupancy_limit_registers and _shared_mem): the forward 3 at
  // d = 128 (167 registers, 58,112 B) and 4 at d = 64 (101, 41,728 B); the main backward 2 at d = 128
  // (255 registers) and 3 at d = 64 (166 registers, 24,832 B; shared memory would allow 5).
  const auto& gpu = test::gpu("h200");
  const struct {
    std::uint32_t d, fwd, bwd;
  } launched[] = {{128, 3, 2}, {64, 4, 3}};
  for (const auto& l : launched) {
    CAPTURE(l.d);
    attnsim::workloads::Problem p;
    p.heads_q = p.heads_kv = 1;
    p.seqlen_q = p.seqlen_k = 1024;
    p.head_dim_qk = p.head_dim_v = l.d;
    // The launch of the code object that covers the problem (schedule_for), as `attnsim run` builds it.
    const auto build = [&](attnsim::workloads::Direction d) {
      const auto k = attnsim::workloads::schedule_for(*attnsim::workloads::preset("ref-cuda"), p, d, gpu, "test");
      return attnsim::workloads::build_pass(p, k, d, gpu);
    };
    const auto fwd = build(attnsim::workloads::Direction::fwd).kernels.front();
    CHECK(occupancy(gpu, fwd.waves, fwd.vgprs, fwd.lds_bytes).workgroups_per_cu == l.fwd);
    for (const auto& kp : build(attnsim::workloads::Direction::bwd).kernels) {
      if (kp.kind == attnsim::workloads::KernelKind::bwd_main) {
        CHECK(occupancy(gpu, kp.waves, kp.vgprs, kp.lds_bytes).workgroups_per_cu == l.bwd);
      }
    }
  }
}
