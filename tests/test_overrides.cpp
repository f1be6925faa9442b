// `--set key=value` what-if overrides: they change the spec and its derived figures, and are
// validated exactly like the file.
#include <doctest/doctest.h>

#include "arch/arch_locator.h"
#include "arch/derived_figures.h"
#include "config_fixture.h"

using namespace attnsim;
using namespace attnsim::arch;

namespace {
LoadedArch mi300x(const std::vector<std::string>& sets) { return load_arch_file(resolve_arch("mi300x"), sets); }
std::string set_error(const std::vector<std::string>& sets, const std::string& arch = "mi300x") {
  try {
    load_arch_file(resolve_arch(arch), sets);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("--set hbm.peak_bandwidth=8TB/s changes the HBM figures and the ridge point") {
  const auto base = derive(mi300x({}).spec);
  const auto loaded = mi300x({"hbm.peak_bandwidth=8TB/s"});
  const auto d = derive(loaded.spec);
  CHECK(d.hbm_bandwidth.value == doctest::Approx(8e12));
  CHECK(d.ridge_hbm == doctest::Approx(2048.0 * 304 * 2.1e9 / 8e12));
  CHECK(d.hbm_bytes_per_channel_per_mclk == doctest::Approx(8e12 / (128 * 1.3e9)));
  CHECK(d.matrix[0].peak_flops == base.matrix[0].peak_flops);  // nothing else moves
  CHECK(loaded.origins.at("hbm.peak_bandwidth").source == "--set");
  CHECK(loaded.origins.at("hbm.peak_bandwidth").where.where() == "--set hbm.peak_bandwidth=8TB/s");
  REQUIRE(loaded.overrides.size() == 1);
  CHECK(loaded.overrides[0].path == "hbm.peak_bandwidth");
}

TEST_CASE("overrides of counts and sizes and clocks and choices") {
  const auto s = mi300x({"cu.lds_size=160KiB", "cu.lds_max_per_workgroup=160KiB", "clock.engine_max=1.9GHz",
                         "clock.matrix_max=1.9GHz", "l2.scope=shared", "chip.cus_per_xcd=40"})
                     .spec;
  CHECK(s.cu.lds_size.value == 160 * 1024);
  CHECK(s.clock.engine_max.value == doctest::Approx(1.9e9));
  CHECK(s.l2.scope == L2Scope::shared);
  CHECK(s.l2_instances() == 1);
  const auto d = derive(s);
  CHECK(d.total_cus == 320);
  CHECK(d.matrix[0].peak_flops == doctest::Approx(2048.0 * 320 * 1.9e9));
}

TEST_CASE("CPX mode: one XCD per kernel launch") {
  const auto d = derive(mi300x({"dispatch.xcds_per_partition=1"}).spec);
  CHECK(d.cus_per_partition == 38);
  CHECK(d.total_cus == 304);
}

TEST_CASE("a later override of the same key wins") {
  CHECK(mi300x({"chip.cus_per_xcd=30", "chip.cus_per_xcd=20"}).spec.chip.cus_per_xcd == 20);
}

TEST_CASE("a whole array can be overridden with TOML text") {
  const auto s = mi300x({"cu.matrix.instructions=[{name=\"a\", dtype=\"bf16\", m=32, n=32, k=8, blocks=1, simds=1, "
                         "cycles=32, valu_coexec_cycles=28}, {name=\"b\", dtype=\"fp16\", m=32, n=32, k=8, blocks=1, "
                         "simds=1, cycles=32, valu_coexec_cycles=28}, {name=\"c\", dtype=\"fp8\", m=32, n=32, k=16, "
                         "blocks=1, simds=1, cycles=32, valu_coexec_cycles=28}]"})
                     .spec;
  REQUIRE(s.cu.matrix_instructions.size() == 3);
  CHECK(s.cu.matrix_instructions[2].name == "c");
}

TEST_CASE("bad overrides: each names the --set argument") {
  CHECK(set_error({"hbm.peak_bandwith=8TB/s"}) ==
        "--set hbm.peak_bandwith=8TB/s: error: key 'hbm.peak_bandwith': unknown key; did you mean "
        "'hbm.peak_bandwidth'? (`attnsim arch params` lists every key)");
  CHECK(set_error({"hbm.peak_bandwidth=8TB/x"}) ==
        "--set hbm.peak_bandwidth=8TB/x: error: key 'hbm.peak_bandwidth': expected a bandwidth such as \"5.3TB/s\" "
        "(units: B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s), got \"8TB/x\" (unknown unit \"TB/x\")");
  CHECK(set_error({"chip.xcds=eight"}) ==
        "--set chip.xcds=eight: error: key 'chip.xcds': expected an integer in [1, 64], got the string \"eight\"");
  // The power controller's period from 100 ns (each period is an event; 100 ps was accepted).
  CHECK(set_error({"clock.power.control_interval=10ns"}) ==
        "--set clock.power.control_interval=10ns: error: key 'clock.power.control_interval': expected a duration "
        "such as \"218ns\" in [100 ns, 1000 ms], got \"10ns\" (out of range)");
  CHECK(set_error({"clock.power.control_interval=100ns"}).empty());
  CHECK(set_error({"chip.xcds"}) == "--set chip.xcds: error: expected key.path=value");
  CHECK(set_error({"=4"}) == "--set =4: error: expected key.path=value (the key is empty)");
  CHECK(set_error({"chip.xcds="}) == "--set chip.xcds=: error: key 'chip.xcds': no value after '='");
}

TEST_CASE("a hashed index's multiplier must be odd and fit 32 bits") {
  CHECK(set_error({"l2.index_prime=3266489917"}) == "");
  CHECK(set_error({"mall.index_prime=1"}) == "");
  CHECK(set_error({"l2.index_prime=4"}) ==
        "--set l2.index_prime=4: error: key 'l2.index_prime': expected an integer in [1, 4294967295] that is odd, got 4 "
        "(even)");
  CHECK(set_error({"mall.index_prime=4294967297"}) ==
        "--set mall.index_prime=4294967297: error: key 'mall.index_prime': expected an integer in [1, 4294967295] that "
        "is odd, got 4294967297 (out of range)");
}

TEST_CASE("an override that breaks a cross-field rule is blamed instead of the file") {
  CHECK(set_error({"chip.xcds=3"}) ==
        "--set chip.xcds=3: error: key 'chip.xcds': dispatch.xcds_per_partition: 8 does not divide chip.xcds = 3");
  CHECK(set_error({"l2.ways=12"}) ==
        "--set l2.ways=12: error: key 'l2.ways': l2.size: 4 MiB is not a multiple of l2.ways x l2.line = 12 x 128 B = 1.5 KiB");
  CHECK(set_error({"chip.xcds=4", "dispatch.xcds_per_partition=4"}) == "");
}

TEST_CASE("an override that breaks another key's rule is blamed and the error names that key") {
  // clock.matrix_max (2.1 GHz in the file) may not exceed clock.engine_max.
  CHECK(set_error({"clock.engine_max=100MHz"}) ==
        "--set clock.engine_max=100MHz: error: key 'clock.engine_max': clock.matrix_max: 2.1 GHz exceeds "
        "clock.engine_max = 100 MHz");
  // 16 SIMDs share the 256 KiB register file: 128 registers per lane, below the H100's 255 per wave.
  CHECK(set_error({"cu.simds=16"}, "h100") ==
        "--set cu.simds=16: error: key 'cu.simds': cu.max_vgprs_per_wave: 255 exceeds the 128 registers per lane a "
        "SIMD's share of cu.vgpr_file holds");
  CHECK(set_error({"cu.matrix.flops_per_clk.bf16=1"}, "h100") ==
        "--set cu.matrix.flops_per_clk.bf16=1: error: key 'cu.matrix.flops_per_clk.bf16': cu.matrix.instructions: "
        "wgmma.m64n256k16.f32.bf16 would deliver 4096 FLOP/clk per CU, above cu.matrix.flops_per_clk.bf16 = 1");
  // Half the SIMDs leave the MI300X's best bf16 instruction 1024 FLOP/clk per CU, below the peak the
  // file states: the override is blamed, and the message names the key whose rule it broke.
  CHECK(set_error({"cu.simds=2"}) ==
        "--set cu.simds=2: error: key 'cu.simds': cu.matrix.flops_per_clk.bf16: 2048 FLOP/clk per CU is not reached "
        "by any bf16 instruction in cu.matrix.instructions (best: 1024)");
  // What the simulator's L1 models, checked with the config (not when the simulation starts).
  CHECK(set_error({"l1.line=16B"}, "h100") ==
        "--set l1.line=16B: error: key 'l1.line': 16 B: the L1 is modelled per L2 line, so it must equal l2.line = "
        "128 B");
  CHECK(set_error({"l1.write_policy=write_back"}) ==
        "--set l1.write_policy=write_back: error: key 'l1.write_policy': the L1 is modelled write-through (a GPU's L1 "
        "holds no dirty global data)");
}

TEST_CASE("overriding one key of an absent optional section asks for the rest") {
  CHECK(set_error({"mall.size=256MiB"}, "h100") ==
        "--set mall.size=256MiB: error: key 'mall.ways': missing in [mall]; expected an integer in [1, 1024]: "
        "memory-side cache associativity");
}
