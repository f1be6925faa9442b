// Compute microbenchmarks reproduce the ISA rates and co-execution rules of arch-facts.md section 1.3.
#include <doctest/doctest.h>

#include "arch/config_error.h"
#include "sim/micro_compute.h"
#include "workload_fixture.h"

using namespace attnsim;
using namespace attnsim::sim;

namespace {
MicroResult micro(const std::string& pattern, std::uint32_t waves, const std::string& gpu = "mi300x") {
  MicroOptions o;
  o.pattern = pattern;
  o.waves_per_simd = waves;
  return run_compute_micro(test::gpu(gpu), o);
}
}  // namespace

TEST_CASE("MI300X rates per CU per clock for 1 to 8 waves per SIMD") {
  for (std::uint32_t w = 1; w <= 8; ++w) {
    CAPTURE(w);
    // 4 SIMDs x 16384 FLOP / 32 cycles (v_mfma_f32_32x32x8_bf16) = 2048 (CDNA3-WP, MIC).
    CHECK(micro("mfma", w).flops_per_clk_per_cu == doctest::Approx(2048));
    // 4 SIMDs x 64 lanes x 2 FLOP per 4-cycle wave64 FMA = 128 (RPC VALU peak 64 x 2 per CU).
    CHECK(micro("valu", w).flops_per_clk_per_cu == doctest::Approx(128));
    // Quarter rate: 4 SIMDs x 64 results / 16 cycles = 16 per CU (LLVM-SCHED).
    CHECK(micro("trans", w).trans_per_clk_per_cu == doctest::Approx(16));
    // LDS: 128 B/clk/CU for contiguous ds_read_b128 (RPC).
    CHECK(micro("lds", w).lds_bytes_per_clk_per_cu == doctest::Approx(128).epsilon(0.002));
    // The vector pipe: busy every cycle with VALU or transcendental work alone, never with LDS reads
    // or matrix work alone.
    CHECK(micro("valu", w).vector_utilisation == doctest::Approx(1).epsilon(0.002));
    CHECK(micro("trans", w).vector_utilisation == doctest::Approx(1).epsilon(0.002));
    CHECK(micro("lds", w).vector_utilisation == 0);
    CHECK(micro("mfma", w).vector_utilisation == 0);
  }
}

TEST_CASE("16x16x16 bf16 reaches the same peak and fp8 doubles it") {
  MicroOptions o;
  o.pattern = "mfma";
  o.instruction = "v_mfma_f32_16x16x16_bf16";
  CHECK(run_compute_micro(test::gpu("mi300x"), o).flops_per_clk_per_cu == doctest::Approx(2048));
  o.instruction = "v_mfma_f32_32x32x16_fp8_fp8";
  CHECK(run_compute_micro(test::gpu("mi300x"), o).flops_per_clk_per_cu == doctest::Approx(4096));
}

TEST_CASE("MFMA co-execution: 28 of 32 cycles are open to VALU work") {
  const auto& gpu = test::gpu("mi300x");
  const SimdIssueRules rules(gpu, gpu.cu.matrix_instructions[0]);  // v_mfma_f32_32x32x8_bf16
  auto cycles_per_iteration = [&](int valus, int trans) {
    std::vector<Instr> body{Instr{Instr::mfma}};
    for (int i = 0; i < valus; ++i) body.push_back(Instr{Instr::valu});
    for (int i = 0; i < trans; ++i) body.push_back(Instr{Instr::trans});
    const IssueResult r = run_on_cu(gpu, rules, body, 1, 256);
    return static_cast<double>(r.cycles) / 256;
  };
  // 7 VALU x 4 cycles = 28: hidden under the MFMA. An 8th costs 4 cycles.
  CHECK(cycles_per_iteration(7, 0) == doctest::Approx(32).epsilon(0.01));
  CHECK(cycles_per_iteration(8, 0) == doctest::Approx(36).epsilon(0.01));
  // One exp (16) + 3 VALU (12) = 28: hidden; two exps (32) + the MFMA's 4 blocked cycles = 36.
  CHECK(cycles_per_iteration(3, 1) == doctest::Approx(32).epsilon(0.01));
  CHECK(cycles_per_iteration(0, 2) == doctest::Approx(36).epsilon(0.01));
  MicroOptions o;
  o.pattern = "mfma+trans";
  o.trans_per_mfma = 2;
  CHECK(run_compute_micro(gpu, o).flops_per_clk_per_cu == doctest::Approx(2048.0 * 32 / 36).epsilon(0.002));
  o.trans_per_mfma = 1;
  const auto one = run_compute_micro(gpu, o);
  CHECK(one.flops_per_clk_per_cu == doctest::Approx(2048));
  CHECK(one.trans_per_clk_per_cu == doctest::Approx(4 * 64.0 / 32));  // one exp per MFMA per SIMD
}

TEST_CASE("a wave issues at most one instruction per turn: every 4 cycles on MI300X and every cycle on H100") {
  // A body of instructions that need no pipe (s_waitcnt with nothing outstanding): only the turns.
  const std::vector<Instr> waits{Instr{Instr::wait}};
  const auto& mi300x = test::gpu("mi300x");
  const SimdIssueRules amd(mi300x, mi300x.cu.matrix_instructions[0]);
  CHECK(amd.issue_interval() == 4);
  CHECK(run_on_cu(mi300x, amd, waits, 1, 10).cycles == 36);  // issued at 0, 4, ..., 36
  // Two waves on a SIMD take the turns in between (the SIMD issues one instruction per cycle).
  CHECK(run_on_cu(mi300x, amd, waits, 2, 10).cycles == 37);
  const auto& h100 = test::gpu("h100");
  const SimdIssueRules nv(h100, h100.cu.matrix_instructions[0]);
  CHECK(nv.issue_interval() == 1);
  CHECK(run_on_cu(h100, nv, waits, 1, 10).cycles == 9);
}

TEST_CASE("LDS bank conflicts by lane stride") {
  const auto& gpu = test::gpu("mi300x");
  MicroOptions o;
  o.pattern = "lds";
  o.waves_per_simd = 4;
  // ds_read_b128: 8 lanes per phase over 32 four-byte banks. Stride 32 B puts lanes i and i + 4 on
  // the same banks (2-way conflict), 64 B four-way, 128 B eight-way; 20 B two-way (dwords 3 and 35).
  for (auto [stride, expect] : {std::pair{16u, 128.0}, {32u, 64.0}, {64u, 32.0}, {128u, 16.0}, {20u, 64.0}}) {
    CAPTURE(stride);
    o.lds_stride = stride;
    CHECK(run_compute_micro(gpu, o).lds_bytes_per_clk_per_cu == doctest::Approx(expect).epsilon(0.003));
  }
  // ds_read_b32, 32 lanes per phase: contiguous is conflict-free; a stride of 8 B is 2-way.
  o.lds_bytes_per_lane = 4;
  o.lds_stride = 4;
  CHECK(run_compute_micro(gpu, o).lds_bytes_per_clk_per_cu == doctest::Approx(128).epsilon(0.003));
  o.lds_stride = 8;
  CHECK(run_compute_micro(gpu, o).lds_bytes_per_clk_per_cu == doctest::Approx(64).epsilon(0.003));
}

TEST_CASE("other GPUs: MI355X LDS doubles and H100 issues a warp per clock") {
  CHECK(micro("lds", 2, "mi300x").lds_bytes_per_clk_per_cu == doctest::Approx(128).epsilon(0.003));
  MicroOptions o;
  o.pattern = "lds";
  o.waves_per_simd = 2;
  const auto mi355x = arch::load_arch_file(arch::resolve_arch("mi355x")).spec;
  CHECK(run_compute_micro(mi355x, o).lds_bytes_per_clk_per_cu == doctest::Approx(256).epsilon(0.003));
  o.pattern = "mfma";
  CHECK(run_compute_micro(mi355x, o).flops_per_clk_per_cu == doctest::Approx(4096));
  // H100: 4 sub-partitions x 32 lanes x 2 FLOP per clock = 256 FLOP/clk/SM; 16 MUFU/clk/SM.
  CHECK(micro("valu", 1, "h100").flops_per_clk_per_cu == doctest::Approx(256));
  CHECK(micro("trans", 1, "h100").trans_per_clk_per_cu == doctest::Approx(16));
  CHECK(micro("mfma", 1, "h100").flops_per_clk_per_cu == doctest::Approx(4096));
}

TEST_CASE("bad micro input names the problem") {
  CHECK_THROWS_WITH_AS(micro("mfma", 9), "--waves 9: error: key 'waves': expected 1 to 8 waves per SIMD (AMD Instinct "
                                         "MI300X has 8 wave slots per SIMD)",
                       arch::ConfigError);
  CHECK_THROWS_WITH_AS(micro("gemm", 1), "--pattern gemm: error: key 'pattern': expected one of mfma, valu, trans, "
                                         "mfma+trans, lds",
                       arch::ConfigError);
  MicroOptions o;
  o.pattern = "lds";
  o.lds_stride = 6;
  CHECK_THROWS_AS(run_compute_micro(test::gpu("mi300x"), o), arch::ConfigError);
}
