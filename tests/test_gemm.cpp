// The GEMM microbenchmark: its tiles' addresses and instruction counts by hand, its errors, and its
// throughput against AMD's measured max-achievable FLOPs (BLOG-MAF2).
#include <doctest/doctest.h>

#include "arch/clock_model.h"
#include "arch/config_error.h"
#include "sim/micro_gemm.h"
#include "tests/cli_runner.h"
#include "tests/workload_fixture.h"
#include "workloads/gemm.h"

using namespace attnsim;
using workloads::TensorId;

namespace {

workloads::TileRows tile_of(const workloads::PassPrograms& pp, const char* op_name, std::uint64_t wg, std::uint64_t iteration) {
  const workloads::KernelProgram& kp = pp.kernels.front();
  const workloads::Pass pass = kp.pass(wg, 0);
  for (const workloads::CompiledBody* body : {&kp.body, &kp.epilogue}) {
    for (std::size_t i = 0; i < body->ops.size(); ++i) {
      if (body->names[i] != op_name) continue;
      workloads::TileRows r;
      const workloads::OpTemplate& op = body->ops[i];
      workloads::for_each_tile(pp, kp, op, pass, iteration, [&](const workloads::TileRef& t) {
        r = workloads::tile_rows((*pp.tensors)[op.tensor], t.slice, t.b, t.head, t.row0, t.rows);
      });
      return r;
    }
  }
  FAIL("no op " << op_name);
  return {};
}

}  // namespace

TEST_CASE("a GEMM workgroup reads column slices of A and B and writes its block of C") {
  const arch::GpuSpec& gpu = test::gpu("mi300x");
  const workloads::GemmShape shape{512, 768, 256, arch::Dtype::bf16};
  const auto pp = workloads::build_gemm(shape, workloads::gemm_tiling("v_mfma_f32_32x32x8_bf16", 64), gpu, "test");
  const workloads::KernelProgram& kp = pp.kernels.front();
  CHECK(kp.workgroups() == 2 * 3);
  CHECK(kp.pass(3, 0).iterations() == 256 / 64);
  const std::uint64_t a = (*pp.tensors)[TensorId::gemm_a].base, b = (*pp.tensors)[TensorId::gemm_b].base,
                      c = (*pp.tensors)[TensorId::gemm_c].base;
  CHECK(b - a == 512 * 256 * 2);  // allocated one after another, 4 KiB aligned
  CHECK(c - b == 768 * 256 * 2);
  // Workgroup 3 = row block 1, column block 1 (row blocks first); K slice 2 = columns 128..191.
  const workloads::TileRows ta = tile_of(pp, "load_a", 3, 2);
  CHECK(ta.address == a + (256 * 256 + 128) * 2);
  CHECK(ta.row_bytes == 128);
  CHECK(ta.stride == 256 * 2);
  CHECK(ta.rows == 256);
  const workloads::TileRows tb = tile_of(pp, "load_b", 3, 2);
  CHECK(tb.address == b + (256 * 256 + 128) * 2);
  CHECK(tb.rows == 256);
  const workloads::TileRows tc = tile_of(pp, "store_c", 3, 0);
  CHECK(tc.address == c + (256 * 768 + 256) * 2);
  CHECK(tc.row_bytes == 256 * 2);
  CHECK(tc.stride == 768 * 2);
  CHECK(tc.rows == 256);
}

TEST_CASE("a lone GEMM workgroup keeps its matrix pipes busy for its MFMAs and issues 2MNK FLOPs") {
  // One workgroup, 256 x 256 x 1280 at a pinned 1 GHz: per K slice each of the four waves issues
  // 128 x 128 x 64 x 2 / 16384 = 128 MFMAs of 32 cycles; 20 slices. A window of 1024 lines per
  // CU takes the per-CU limit on outstanding requests out of the way: with the shipped 64 a lone
  // workgroup reading cold data from HBM (518 ns a line at 1 GHz) waits on it.
  const arch::GpuSpec& gpu = test::gpu_with("mi300x", {"clock.engine=1GHz", "cu.memory_inflight_lines=1024", "clock.xcd_spread=0"});
  sim::GemmMicroOptions o;
  o.shape = workloads::GemmShape{256, 256, 1280, arch::Dtype::bf16};
  const sim::GemmMicroResult r = sim::run_gemm_micro(gpu, o);
  CHECK(r.kernel.mfma_instructions == 4 * 128 * 20);
  CHECK(r.kernel.mfma_flops == doctest::Approx(2.0 * 256 * 256 * 1280));
  CHECK(r.kernel.busy.matrix == 4 * 20 * 128 * 32 * 1000);  // ps over the four SIMDs
  // Every slice of A and B is read once: (256 + 256) rows x 1280 columns x 2 B; C written once.
  CHECK(r.kernel.counters.requested_read_bytes == 512 * 1280 * 2);
  CHECK(r.kernel.counters.requested_write_bytes == 256 * 256 * 2);
  // The loads, staging and operand reads of a slice hide under the MFMAs of the slice before: the
  // time is the MFMAs' 81.92 us, the 2 us launch, and at most 4.5 us for the first slice's round
  // trip, staging and operand reads (about 1.7 us) and the epilogue's conversion and store of C.
  const double mfma_us = 20 * 128 * 32 / 1e3;
  CHECK(r.time_us > mfma_us + 2);
  CHECK(r.time_us < mfma_us + 2 + 4.5);
}

TEST_CASE("the MAF GEMMs land within 5 percent of AMD's measured throughput at the modelled clock") {
  // BLOG-MAF2 Table 1 (arch-facts.md 7.1): MI300X at 750 W, 4096 x 4864 x 32896, bf16 708 TFLOP/s
  // at a median 1207 MHz, fp16 654 TFLOP/s at 1115 MHz. The approximate tag mode is within 1 % of
  // the exact one on a GEMM (test below) and five times faster.
  const arch::GpuSpec& gpu = test::gpu("mi300x");
  sim::GemmMicroOptions o;
  o.approximate = true;
  const sim::GemmMicroResult bf16 = sim::run_gemm_micro(gpu, o);
  CHECK(bf16.tflops == doctest::Approx(708).epsilon(0.05));
  // The measured clocks are the slowest XCD's (hipBLASLt's lowest per-XCD median): XCD 7 runs at
  // 1 - spread / 2 of the controller's clock the kernel reports.
  const double slowest = 1 - gpu.clock.xcd_spread / 2;
  CHECK(bf16.kernel.clock_hz * slowest / 1e6 == doctest::Approx(1207).epsilon(0.01));
  o.shape.dtype = arch::Dtype::fp16;
  const sim::GemmMicroResult fp16 = sim::run_gemm_micro(gpu, o);
  CHECK(fp16.tflops == doctest::Approx(654).epsilon(0.05));
  CHECK(fp16.kernel.clock_hz * slowest / 1e6 == doctest::Approx(1115).epsilon(0.01));
}

TEST_CASE("the clock calibration is self-consistent: the simulated MAF GEMMs at their measured clocks draw the power limit") {
  // docs/model.md: the matrix coefficients and the baseline were solved so that the simulated
  // BLOG-MAF2 GEMMs, with their slowest XCD at AMD's measured median clocks (hipBLASLt reports the
  // lowest of the per-XCD medians), draw exactly the board limit with the activity the engine
  // gives them (matrix pipes 82-97 % busy, 5-7 % of the HBM peak). XCD 7 runs at 1 - spread / 2
  // of the controller's clock.
  sim::GemmMicroOptions o;
  o.approximate = true;
  const auto power_at = [&](const char* arch, double slowest_mhz) {
    const double controller = arch::controller_for_slowest_xcd(test::gpu(arch), slowest_mhz * 1e6) / 1e6;
    return sim::run_gemm_micro(test::gpu_with(arch, {"clock.engine=" + std::to_string(controller) + "MHz"}), o).kernel.power_w;
  };
  REQUIRE(test::gpu("mi300x").clock.xcd_spread > 0);
  CHECK(power_at("mi300x", 1207) == doctest::Approx(750).epsilon(0.005));
  CHECK(power_at("mi325x", 1447) == doctest::Approx(1000).epsilon(0.005));
  o.shape.dtype = arch::Dtype::fp16;
  CHECK(power_at("mi300x", 1115) == doctest::Approx(750).epsilon(0.005));
  o.shape.dtype = arch::Dtype::fp8;
  CHECK(power_at("mi300x", 1230) == doctest::Approx(750).epsilon(0.005));
}

TEST_CASE("MI325X at 1000 W: its fp16 GEMM clock is predicted from MI300X's coefficients (BLOG-MAF2)") {
  // Only MI300X's GEMMs and the two bf16 clocks set the shared coefficients; MI325X's fp16 MAF GEMM
  // clock (1354 MHz median at 1000 W, BLOG-MAF2 Table 1) was not used to calibrate anything.
  sim::GemmMicroOptions o;
  o.approximate = true;
  o.shape.dtype = arch::Dtype::fp16;
  const sim::GemmMicroResult r = sim::run_gemm_micro(test::gpu("mi325x"), o);
  CHECK(r.kernel.clock_hz / 1e6 == doctest::Approx(1354).epsilon(0.02));
}

TEST_CASE("the GEMM in the approximate tag mode stays within the engine's bounds of the exact mode") {
  const arch::GpuSpec& gpu = test::gpu("mi300x");
  sim::GemmMicroOptions o;
  o.shape = workloads::GemmShape{1024, 1280, 4096, arch::Dtype::bf16};
  const sim::GemmMicroResult exact = sim::run_gemm_micro(gpu, o);
  o.approximate = true;
  const sim::GemmMicroResult approx = sim::run_gemm_micro(gpu, o);
  CHECK(approx.time_us == doctest::Approx(exact.time_us).epsilon(0.01));
  const auto fetch = [](const sim::GemmMicroResult& r) { return static_cast<double>(r.kernel.counters.fetch_size_bytes()); };
  CHECK(fetch(approx) == doctest::Approx(fetch(exact)).epsilon(0.02));
}

TEST_CASE("a GEMM the microbenchmark cannot run is refused naming the problem") {
  const arch::GpuSpec& gpu = test::gpu("mi300x");
  const auto tiling = workloads::gemm_tiling("v_mfma_f32_32x32x8_bf16", 64);
  CHECK_THROWS_WITH_AS(workloads::build_gemm({300, 256, 64, arch::Dtype::bf16}, tiling, gpu, "--gemm-shape 300x256x64"),
                       doctest::Contains("300 is not a positive multiple of the 256 tile"), arch::ConfigError);
  CHECK_THROWS_WITH_AS(workloads::build_gemm({256, 256, 64, arch::Dtype::fp16}, tiling, gpu, "x"),
                       doctest::Contains("is not a fp16 matrix instruction"), arch::ConfigError);
  // 512 x 512 x 64 bf16 slices need 128 KiB of LDS; an MI300X workgroup has 64 KiB.
  CHECK_THROWS_WITH_AS(workloads::build_gemm({512, 512, 64, arch::Dtype::bf16},
                                             workloads::gemm_tiling("v_mfma_f32_32x32x8_bf16", 64, 512, 512, 64), gpu, "x"),
                       doctest::Contains("does not fit a AMD Instinct MI300X CU"), arch::ConfigError);
  CHECK_THROWS_WITH_AS(workloads::build_gemm({1 << 20, 1 << 20, 1 << 20, arch::Dtype::bf16}, tiling, gpu, "x"),
                       doctest::Contains("workgroup K slices (this shape has 274877906944)"), arch::ConfigError);
  // 2^20 x 256 x 2^18 bf16 is within the slice bound (4096 x 1 x 4096 slices) but A alone is
  // 2^20 x 2^18 x 2 B = 549.8 GB.
  CHECK_THROWS_WITH_AS(workloads::build_gemm({1 << 20, 256, 1 << 18, arch::Dtype::bf16}, tiling, gpu, "--gemm-shape big"),
                       doctest::Contains("--gemm-shape big: error: key 'hbm.capacity': the GEMM's matrices need 550"),
                       arch::ConfigError);
  const test::CliRun shape = test::run_attnsim("micro --pattern gemm --gemm-shape 4096x4864");
  CHECK(shape.exit_code == 2);
  CHECK(test::contains(shape.out, "expected MxNxK with three positive integers"));
  const test::CliRun pattern = test::run_attnsim("micro --pattern gemmm");
  CHECK(pattern.exit_code == 2);
  CHECK(test::contains(pattern.out, "expected one of mfma, valu, trans, mfma+trans, lds, stream-read, stream-write, copy, chase, atomic, gemm"));
  const test::CliRun dtype = test::run_attnsim("micro --pattern gemm --dtype fp32");
  CHECK(dtype.exit_code == 2);
  CHECK(test::contains(dtype.out, "expected bf16, fp16 or fp8"));
}
