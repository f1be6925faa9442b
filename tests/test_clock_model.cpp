// The power-limited clock: hand-computed cases, and AMD's measured clocks under GEMM load.
#include <doctest/doctest.h>

#include <cmath>

#include "arch/arch_locator.h"
#include "arch/clock_model.h"
#include "arch/derived_figures.h"
#include "arch/spec_loader.h"

using namespace attnsim::arch;

namespace {
ClockSpec toy() {
  ClockSpec c;
  c.engine_max = Hertz{2e9};
  c.matrix_max = Hertz{2e9};
  c.power_reference_clock = Hertz{2e9};
  c.power_limit = Watts{100};
  c.power_baseline = Watts{20};
  c.power_matrix = {Watts{640}, Watts{80}, Watts{0}};
  c.power_stream = Watts{40};
  return c;
}
double mhz(const ClockEstimate& e) { return e.clock.value / 1e6; }
}  // namespace

TEST_CASE("hand-computed clocks: f = f_ref * cbrt((limit - baseline) / P_dyn)") {
  const ClockSpec c = toy();
  // bf16: 2 GHz * cbrt(80 / 640) = 2 GHz * 0.5 = 1 GHz, at exactly the 100 W limit.
  const auto bf16 = sustained_clock(c, matrix_load(Dtype::bf16));
  CHECK(bf16.power_limited);
  CHECK(mhz(bf16) == doctest::Approx(1000.0));
  CHECK(bf16.power.value == doctest::Approx(100.0));
  // fp16: 80 W of headroom covers 80 W dynamic power at 2 GHz: runs at the cap, not limited.
  const auto fp16 = sustained_clock(c, matrix_load(Dtype::fp16));
  CHECK_FALSE(fp16.power_limited);
  CHECK(mhz(fp16) == doctest::Approx(2000.0));
  // Half-busy bf16: 2 GHz * cbrt(80 / 320) = 1259.9 MHz.
  Activity half;
  half.matrix[0] = 0.5;
  CHECK(mhz(sustained_clock(c, half)) == doctest::Approx(2000.0 * std::cbrt(0.25)));
  // Nothing active: the engine cap, drawing only the baseline.
  const auto idle = sustained_clock(c, Activity{});
  CHECK(mhz(idle) == doctest::Approx(2000.0));
  CHECK(idle.power.value == doctest::Approx(20.0));
}

TEST_CASE("matrix work is capped at clock.matrix_max even with power to spare") {
  ClockSpec c = toy();
  c.matrix_max = Hertz{1.5e9};
  c.power_matrix[1] = Watts{1};
  CHECK(mhz(sustained_clock(c, matrix_load(Dtype::fp16))) == doctest::Approx(1500.0));
  Activity stream;
  stream.stream = 1;
  CHECK(mhz(sustained_clock(c, stream)) == doctest::Approx(2000.0));  // 20 + 40 W < 100 W at 2 GHz
}

TEST_CASE("the classes are stated at the reference clock: engine_max caps the clock and nothing else") {
  ClockSpec c = toy();
  // A chip that may clock twice as high draws the same power at a given clock: bf16 still settles
  // at 2 GHz x cbrt(80 / 640) = 1 GHz (under the 4 GHz caps), and idle runs at the new cap.
  c.engine_max = c.matrix_max = Hertz{4e9};
  CHECK(mhz(sustained_clock(c, matrix_load(Dtype::bf16))) == doctest::Approx(1000.0));
  CHECK(mhz(sustained_clock(c, Activity{})) == doctest::Approx(4000.0));
  // fp16's 80 W at 2 GHz now leaves room above it: 2 GHz x cbrt(80 / 80) = 2 GHz, power-limited.
  const auto fp16 = sustained_clock(c, matrix_load(Dtype::fp16));
  CHECK(fp16.power_limited);
  CHECK(mhz(fp16) == doctest::Approx(2000.0));
  // Classes stated at a reference twice as high draw an eighth at a given clock: bf16 at
  // 4 GHz x cbrt(80 / 640) = 2 GHz; pinned at 1 GHz it draws 20 + (1/4)^3 x 640 = 30 W.
  c.power_reference_clock = Hertz{4e9};
  CHECK(mhz(sustained_clock(c, matrix_load(Dtype::bf16))) == doctest::Approx(2000.0));
  c.engine_pinned = Hertz{1e9};
  CHECK(sustained_clock(c, matrix_load(Dtype::bf16)).power.value == doctest::Approx(30.0));
  // The shipped MI300X: a what-if of a 4.2 GHz engine_max leaves its full-load bf16 clock as it is.
  const auto base = load_arch_file(resolve_arch("mi300x")).spec;
  const auto fast = load_arch_file(resolve_arch("mi300x"), {"clock.engine_max=4.2GHz"}).spec;
  CHECK(sustained_clock(fast, matrix_load(Dtype::bf16)).clock.value ==
        doctest::Approx(sustained_clock(base, matrix_load(Dtype::bf16)).clock.value));
  CHECK(base.clock.power_reference_clock.value == doctest::Approx(base.clock.engine_max.value));
}

TEST_CASE("hand-computed clocks with vector work: its class adds to the dynamic power") {
  ClockSpec c = toy();
  c.power_vector = Watts{640};
  // bf16 at full load and the vector pipes half busy: 640 + 320 W at 2 GHz; 2 GHz x cbrt(80 / 960).
  Activity a = matrix_load(Dtype::bf16);
  a.vector = 0.5;
  CHECK(mhz(sustained_clock(c, a)) == doctest::Approx(2000.0 * std::cbrt(80.0 / 960.0)));
  // Vector work alone at full load: 2 GHz x cbrt(80 / 640) = 1 GHz, capped by engine_max, not matrix_max.
  Activity v;
  v.vector = 1;
  c.matrix_max = Hertz{0.5e9};
  CHECK(mhz(sustained_clock(c, v)) == doctest::Approx(1000.0));
  // Its class scales with the CUs as the matrix classes do.
  auto s = load_arch_file(resolve_arch("mi300x"), {"clock.power.vector=100W", "chip.cus_per_xcd=19"}).spec;
  CHECK(chip_clock(s).power_vector.value == doctest::Approx(50));
}

TEST_CASE("MI300X at 750 W: the streaming point it was calibrated on and matrix work alone") {
  const auto s = load_arch_file(resolve_arch("mi300x")).spec;
  Activity stream;
  stream.stream = 4073.0 / 5300.0;  // RRZE-ROOF's pure-streaming point: 4073 GB/s of the 5.3 TB/s peak
  CHECK(mhz(sustained_clock(s.clock, stream)) == doctest::Approx(1254).epsilon(0.005));
  // Matrix work alone (pipes 100 % busy, no memory traffic) runs a little above the measured GEMM
  // clocks, as the GEMMs the coefficients were solved on (tests/test_gemm.cpp) also stream from
  // HBM and keep the pipes 96-99 % busy: 2100 MHz x cbrt((750 - 415) / P_matrix).
  const auto full = [&](Dtype d) { return mhz(sustained_clock(s.clock, matrix_load(d))); };
  CHECK(full(Dtype::bf16) == doctest::Approx(2100 * std::cbrt(335.0 / 1593.0)).epsilon(0.0005));
  CHECK(full(Dtype::fp16) == doctest::Approx(2100 * std::cbrt(335.0 / 2064.0)).epsilon(0.0005));
  CHECK(full(Dtype::fp8) == doctest::Approx(2100 * std::cbrt(335.0 / 1816.0)).epsilon(0.0005));
  // The measured clocks are in the config as reference data (BLOG-MAF2 Table 1 medians).
  CHECK(s.clock.measured_matrix[0]->value == 1207e6);
  CHECK(s.clock.measured_matrix[1]->value == 1115e6);
  CHECK(s.clock.measured_matrix[2]->value == 1230e6);
  CHECK(full(Dtype::bf16) > 1207);
  // 1248.8 MHz x 304 CUs x 2048 FLOP/clk = 777.5 TF at full load (AMD's GEMM: 708 with its slowest XCD at 1207 MHz).
  const auto d = derive(s);
  CHECK(d.matrix[0].sustained_flops / 1e12 == doctest::Approx(777.5).epsilon(0.002));
  // Where no clock is published the key is absent.
  CHECK_FALSE(load_arch_file(resolve_arch("h100")).spec.clock.measured_matrix[0].has_value());
}

TEST_CASE("H100: no power limit binds and matrix work runs at the 1830 MHz tensor clock") {
  const auto s = load_arch_file(resolve_arch("h100")).spec;
  const auto e = sustained_clock(s.clock, matrix_load(Dtype::bf16));
  CHECK_FALSE(e.power_limited);
  CHECK(mhz(e) == doctest::Approx(1830));
}

TEST_CASE("--set clock.engine pins the clock for every activity") {
  const auto pinned = load_arch_file(resolve_arch("mi300x"), {"clock.engine=1.9GHz"}).spec;
  REQUIRE(pinned.clock.engine_pinned.has_value());
  CHECK(mhz(sustained_clock(pinned.clock, matrix_load(Dtype::bf16))) == doctest::Approx(1900));
  Activity stream;
  stream.stream = 1;
  CHECK(mhz(sustained_clock(pinned.clock, stream)) == doctest::Approx(1900));
  CHECK_FALSE(sustained_clock(pinned.clock, matrix_load(Dtype::bf16)).power_limited);
  // 1900 MHz x 304 CUs x 2048 FLOP/clk = 1182.9 TFLOP/s.
  CHECK(derive(pinned).matrix[0].sustained_flops / 1e12 == doctest::Approx(1182.9).epsilon(0.0005));
  // Absent by default: modelled.
  CHECK_FALSE(load_arch_file(resolve_arch("mi300x")).spec.clock.engine_pinned.has_value());
  try {
    load_arch_file(resolve_arch("mi300x"), {"clock.engine=2.5GHz"});
    FAIL("expected an error");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) == "--set clock.engine=2.5GHz: error: key 'clock.engine': 2.5 GHz exceeds "
                                   "clock.engine_max = 2.1 GHz");
  }
}

TEST_CASE("per-XCD clocks: spread evenly around the controller clock and none above the maximum") {
  GpuSpec gpu;
  gpu.chip.xcds = 8;
  gpu.clock.engine_max = Hertz{2.1e9};
  gpu.clock.xcd_spread = 0.1;
  // XCD i of 8 at 1 + 0.1 x (1/2 - i/7): XCD 0 at 1.05, XCD 7 at 0.95, XCD 3 at 1 + 0.1/14.
  CHECK(xcd_clock(gpu, 0, 1.5e9) == doctest::Approx(1.575e9));
  CHECK(xcd_clock(gpu, 7, 1.5e9) == doctest::Approx(1.425e9));
  CHECK(xcd_clock(gpu, 3, 1.5e9) == doctest::Approx(1.5e9 * (1 + 0.1 / 14)));
  double sum = 0;
  for (std::uint32_t x = 0; x < 8; ++x) sum += xcd_clock(gpu, x, 1.5e9);
  CHECK(sum / 8 == doctest::Approx(1.5e9));  // the controller's clock is the mean
  // At the maximum clock the fast XCDs cannot go higher; the slow ones still drop.
  CHECK(xcd_clock(gpu, 0, 2.1e9) == 2.1e9);
  CHECK(xcd_clock(gpu, 7, 2.1e9) == doctest::Approx(1.995e9));
  // No spread, or one die: exactly the controller's clock.
  gpu.clock.xcd_spread = 0;
  CHECK(xcd_clock(gpu, 7, 1.5e9) == 1.5e9);
  gpu.clock.xcd_spread = 0.1;
  gpu.chip.xcds = 1;
  CHECK(xcd_clock(gpu, 0, 1.5e9) == 1.5e9);
}

// The power classes are stated for the config's own chip (clock.power.reference_simds,
// reference_hbm_bandwidth): a what-if of twice the CUs (or SIMDs) doubles the matrix classes (the
// same energy per matrix operation), twice the HBM peak the stream class (the same energy per byte). MI300X at
// 750 W with a 415 W baseline: bf16 alone at 2100 MHz x cbrt(335 / (2 x 1593)) = 2100 x cbrt(335 /
// 1593) / cbrt(2); a full HBM stream at 2100 x cbrt(335 / (2 x 2047)).
TEST_CASE("a chip of other CUs or SIMDs or another HBM peak draws its power classes in proportion") {
  const auto base = load_arch_file(resolve_arch("mi300x")).spec;
  const auto wide = load_arch_file(resolve_arch("mi300x"), {"chip.cus_per_xcd=76"}).spec;
  const double bf16_304 = 2100 * std::cbrt(335.0 / 1593.0);
  CHECK(mhz(sustained_clock(base, matrix_load(Dtype::bf16))) == doctest::Approx(bf16_304).epsilon(0.0005));
  CHECK(mhz(sustained_clock(wide, matrix_load(Dtype::bf16))) ==
        doctest::Approx(bf16_304 / std::cbrt(2.0)).epsilon(0.0005));
  CHECK(chip_clock(wide).power_matrix[0].value == doctest::Approx(2 * 1593));
  // Twice the SIMDs per CU (with the register file and matrix peaks that need) is the same chip of
  // pipes: the classes are per SIMD.
  const auto simds = load_arch_file(resolve_arch("mi300x"), {"cu.simds=8", "cu.vgpr_file=1MiB", "cu.matrix.flops_per_clk.bf16=4096",
                                                             "cu.matrix.flops_per_clk.fp16=4096", "cu.matrix.flops_per_clk.fp8=8192"})
                         .spec;
  CHECK(mhz(sustained_clock(simds, matrix_load(Dtype::bf16))) ==
        doctest::Approx(bf16_304 / std::cbrt(2.0)).epsilon(0.0005));
  // The ClockSpec form takes the classes as given (the reference chip's).
  CHECK(mhz(sustained_clock(wide.clock, matrix_load(Dtype::bf16))) == doctest::Approx(bf16_304).epsilon(0.0005));
  // Stating the reference as the wider chip's takes the classes at face value again.
  const auto restated =
      load_arch_file(resolve_arch("mi300x"), {"chip.cus_per_xcd=76", "clock.power.reference_simds=2432"}).spec;
  CHECK(mhz(sustained_clock(restated, matrix_load(Dtype::bf16))) == doctest::Approx(bf16_304).epsilon(0.0005));

  Activity stream;
  stream.stream = 1;
  const auto fast = load_arch_file(resolve_arch("mi300x"), {"hbm.peak_bandwidth=10.6TB/s"}).spec;
  CHECK(mhz(sustained_clock(base, stream)) == doctest::Approx(2100 * std::cbrt(335.0 / 2047.0)).epsilon(0.0005));
  CHECK(mhz(sustained_clock(fast, stream)) == doctest::Approx(2100 * std::cbrt(335.0 / 4094.0)).epsilon(0.0005));
  // The shipped chips state themselves: the factors are exactly 1.
  for (const char* name : {"mi300x", "mi325x", "mi355x", "h100", "h200"}) {
    CAPTURE(name);
    const auto s = load_arch_file(resolve_arch(name)).spec;
    CHECK(chip_clock(s).power_matrix == s.clock.power_matrix);
    CHECK(chip_clock(s).power_stream == s.clock.power_stream);
  }
}
