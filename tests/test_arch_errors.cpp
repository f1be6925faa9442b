// Each class of bad config gives one clear message: file:line:column, the key, what was expected.
#include <doctest/doctest.h>

#include "arch/arch_locator.h"
#include "config_fixture.h"

using namespace attnsim;
using test::edited;
using test::line_of;
using test::load_error;

namespace {
const std::string& base() {
  static const std::string text = test::shipped_config_text("mi300x");
  return text;
}
std::string at(unsigned line, unsigned column) {
  return "cfg.toml:" + std::to_string(line) + ":" + std::to_string(column) + ": error: ";
}
}  // namespace

TEST_CASE("the unedited config loads (so each edit below is the only fault)") { CHECK(load_error(base()) == ""); }

TEST_CASE("invalid TOML syntax names the position") {
  const std::string text = edited(base(), "xcds = 8  #", "xcds = = 8  #");
  const std::string msg = load_error(text);
  CHECK(msg.rfind(at(line_of(text, "xcds ="), 8) + "invalid TOML: ", 0) == 0);
}

TEST_CASE("an unknown key is rejected with a suggestion for a near miss") {
  const std::string text = edited(base(), "lds_banks = 32", "lds_bank = 32");
  CHECK(load_error(text) == at(line_of(text, "lds_bank ="), 12) +
                                "key 'cu.lds_bank': unknown key; did you mean 'cu.lds_banks'? "
                                "(`attnsim arch params` lists every key)");
  const std::string far = edited(base(), "[fabric]\n", "[fabric]\nturbo = true  # src: CDNA3-WP\n");
  CHECK(load_error(far) == at(line_of(far, "turbo ="), 9) +
                               "key 'fabric.turbo': unknown key (`attnsim arch params` lists every key)");
}

TEST_CASE("an unknown section is rejected") {
  const std::string text = base() + "\n[turbo]\nboost = 1\n";
  CHECK(load_error(text) == at(line_of(text, "[turbo]"), 1) +
                                "key 'turbo': unknown section (`attnsim arch params` lists every key)");
}

TEST_CASE("a missing key names its section and what it should hold") {
  const std::string text = edited(base(), "lds_banks = 32  # src: ROCM-SPECS\n", "");
  CHECK(load_error(text) == at(line_of(text, "[cu]"), 1) +
                                "key 'cu.lds_banks': missing in [cu]; expected an integer in [1, 1024] that is a "
                                "power of two: LDS banks");
}

TEST_CASE("a missing section is named") {
  const auto start = base().find("[hbm]");
  const std::string text = base().substr(0, start);
  CHECK(load_error(text) == "cfg.toml: error: key 'hbm.stacks': missing (section [hbm] is missing); expected an "
                            "integer in [1, 64]: HBM stacks");
}

TEST_CASE("a wrong type is named with the value found") {
  const std::string text = edited(base(), "xcds = 8  #", "xcds = \"8\"  #");
  CHECK(load_error(text) == at(line_of(text, "xcds ="), 8) +
                                "key 'chip.xcds': expected an integer in [1, 64], got the string \"8\"");
  const std::string unitless = edited(base(), "lds_size = \"64KiB\"", "lds_size = 65536");
  CHECK(load_error(unitless) ==
        at(line_of(unitless, "lds_size ="), 12) +
            "key 'cu.lds_size': expected a size such as \"64KiB\" in [1 KiB, 16 MiB] as a quoted string with its "
            "unit (units: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), got the integer 65536");
}

TEST_CASE("a bad unit is named") {
  const std::string text = edited(base(), "peak_bandwidth = \"5.3TB/s\"", "peak_bandwidth = \"5.3TB\"");
  CHECK(load_error(text) == at(line_of(text, "peak_bandwidth ="), 18) +
                                "key 'hbm.peak_bandwidth': expected a bandwidth such as \"5.3TB/s\" (units: B/s, "
                                "KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s), got \"5.3TB\" (unknown unit "
                                "\"TB\")");
}

TEST_CASE("out-of-range and not-a-power-of-two values are rejected") {
  const std::string zero = edited(base(), "xcds = 8  #", "xcds = 0  #");
  CHECK(load_error(zero) == at(line_of(zero, "xcds ="), 8) +
                                "key 'chip.xcds': expected an integer in [1, 64], got 0 (out of range)");
  const std::string banks = edited(base(), "lds_banks = 32", "lds_banks = 33");
  CHECK(load_error(banks) == at(line_of(banks, "lds_banks ="), 13) +
                                 "key 'cu.lds_banks': expected an integer in [1, 1024] that is a power of two, got "
                                 "33 (not a power of two)");
  const std::string clock = edited(base(), "engine_max = \"2100MHz\"", "engine_max = \"21GHz\"");
  CHECK(load_error(clock) == at(line_of(clock, "engine_max ="), 14) +
                                 "key 'clock.engine_max': expected a frequency such as \"2.1GHz\" in [100 MHz, 10 GHz], "
                                 "got \"21GHz\" (out of range)");
}

TEST_CASE("inconsistent values are rejected at the key that breaks the rule") {
  const std::string ways = edited(base(), "ways = 16  # src: CDNA3-WP\nline = \"128B\"  # src: CDNA3-WP\nchannels = 16",
                                  "ways = 12  # src: CDNA3-WP\nline = \"128B\"  # src: CDNA3-WP\nchannels = 16");
  const unsigned l2_size_line = line_of(ways, "size = \"4MiB\"");
  CHECK(load_error(ways) == at(l2_size_line, 8) +
                                "key 'l2.size': 4 MiB is not a multiple of l2.ways x l2.line = 12 x 128 B = 1.5 KiB");
  const std::string lds = edited(base(), "lds_max_per_workgroup = \"64KiB\"", "lds_max_per_workgroup = \"128KiB\"");
  CHECK(load_error(lds) == at(line_of(lds, "lds_max_per_workgroup ="), 25) +
                               "key 'cu.lds_max_per_workgroup': 128 KiB exceeds cu.lds_size = 64 KiB");
  const std::string power = edited(base(), "baseline = \"415W\"", "baseline = \"800W\"");
  CHECK(load_error(power) == at(line_of(power, "baseline ="), 12) +
                                 "key 'clock.power.baseline': 800 W leaves no power under clock.power.limit = 750 W");
  const std::string queue = edited(base(), "write_queue = \"4KiB\"", "write_queue = \"64B\"");
  CHECK(load_error(queue) == at(line_of(queue, "write_queue ="), 15) +
                                 "key 'hbm.write_queue': 64 B cannot hold one write-back of an L2 line (128 B)");
}

TEST_CASE("matrix instructions are checked field by field and against the dtype's peak") {
  const std::string unknown_field =
      edited(base(), "k = 8, blocks = 1, simds = 1, cycles = 32, valu_coexec_cycles = 28 },  # src: MIC, BLOG-MFMA\n  { name = \"v_mfma_f32_16x16x16_bf16\"",
             "k = 8, blocks = 1, simds = 1, cycles = 32, valu_coexec_cycles = 28, issue_width = 4 },  # src: MIC, BLOG-MFMA\n  { name = \"v_mfma_f32_16x16x16_bf16\"");
  const std::string msg = load_error(unknown_field);
  CHECK(msg.find("key 'cu.matrix.instructions': unknown field 'issue_width' in a matrix instruction") != std::string::npos);
  CHECK(msg.rfind("cfg.toml:" + std::to_string(line_of(unknown_field, "  { name = \"v_mfma_f32_32x32x8_bf16\"")) + ":", 0) == 0);

  const std::string too_fast = edited(base(), "k = 8, blocks = 1, simds = 1, cycles = 32, valu_coexec_cycles = 28 },  # src: MIC, BLOG-MFMA\n  { name = \"v_mfma_f32_16x16x16_bf16\"",
                                      "k = 8, blocks = 1, simds = 1, cycles = 16, valu_coexec_cycles = 12 },  # src: MIC, BLOG-MFMA\n  { name = \"v_mfma_f32_16x16x16_bf16\"");
  CHECK(load_error(too_fast).find("key 'cu.matrix.instructions': v_mfma_f32_32x32x8_bf16 would deliver 4096 FLOP/clk "
                                  "per CU, above cu.matrix.flops_per_clk.bf16 = 2048") != std::string::npos);

  const std::string bad_dtype = edited(base(), "dtype = \"fp8\", m = 32", "dtype = \"int8\", m = 32");
  CHECK(load_error(bad_dtype).find("field 'dtype': expected one of \"bf16\", \"fp16\", \"fp8\", got the string \"int8\"") !=
        std::string::npos);

  const std::string unreachable = edited(base(), "flops_per_clk = { bf16 = 2048, fp16 = 2048, fp8 = 4096 }",
                                         "flops_per_clk = { bf16 = 2048, fp16 = 2048, fp8 = 8192 }");
  CHECK(load_error(unreachable).find("key 'cu.matrix.flops_per_clk.fp8': 8192 FLOP/clk per CU is not reached by any "
                                     "fp8 instruction in cu.matrix.instructions (best: 4096)") != std::string::npos);
}

TEST_CASE("a variable-N matrix instruction's step must divide N and leave whole cycles per slice") {
  const std::string h100 = test::shipped_config_text("h100");
  CHECK(load_error(h100) == "");
  // The H100 config with its fp16 wgmma's n_step set to `step`.
  const auto with_step = [&](const std::string& step) {
    const std::string entry = "dtype = \"fp16\", m = 64, n = 256, k = 16, blocks = 1, simds = 4, cycles = 128, "
                              "valu_coexec_cycles = 128, n_step = ";
    return edited(h100, entry + "8 },", entry + step + " },");
  };
  const std::string uneven = with_step("24");
  const std::string msg = load_error(uneven);
  CHECK(msg.find("key 'cu.matrix.instructions': field 'n_step': 24 must divide n (256) and leave whole cycles per slice") !=
        std::string::npos);
  CHECK(msg.rfind("cfg.toml:" + std::to_string(line_of(uneven, "  { name = \"wgmma.m64n256k16.f32.f16\"")) + ":", 0) == 0);
  CHECK(load_error(with_step("0")).find("field 'n_step': expected an integer in [1, n = 256], got the integer 0") !=
        std::string::npos);
  // 128 cycles x 2 / 256 is one cycle per N = 2 slice: allowed; x 1 / 256 is not whole.
  CHECK(load_error(with_step("2")) == "");
  CHECK(load_error(with_step("1")).find("field 'n_step': 1 must divide n (256) and leave whole cycles per slice") !=
        std::string::npos);
}

TEST_CASE("a matrix instruction's latency is at least its cycles") {
  const std::string h200 = test::shipped_config_text("h200");
  CHECK(load_error(h200) == "");
  const auto with_latency = [&](const std::string& latency) {
    return edited(h200, "cycles = 6, valu_coexec_cycles = 0, latency = 24 }", "cycles = 6, valu_coexec_cycles = 0, latency = " + latency + " }");
  };
  CHECK(load_error(with_latency("6")) == "");  // results as the instruction leaves the pipe
  CHECK(load_error(with_latency("5")).find("field 'latency': expected an integer in [cycles = 6, 4096] (a result is not "
                                           "ready before the instruction leaves the pipe), got the integer 5") !=
        std::string::npos);
  CHECK(load_error(with_latency("\"24\"")).find("field 'latency': expected an integer") != std::string::npos);
}

TEST_CASE("an unsupported schema version is rejected") {
  const std::string text = edited(base(), "schema_version = 1", "schema_version = 2");
  CHECK(load_error(text) == at(1 + line_of(text, "schema_version =") - 1, 18) +
                                "key 'schema_version': schema version 2 is not supported; this attnsim reads version 1");
}

TEST_CASE("the MALL section is optional as a whole but not in part") {
  const auto start = base().find("[mall]");
  const auto end = base().find("[hbm]");
  const std::string without = base().substr(0, start) + base().substr(end);
  CHECK(load_error(without) == "");
  const std::string partial = edited(base(), "size = \"256MiB\"  # src: CDNA3-WP\n", "");
  CHECK(load_error(partial) == at(line_of(partial, "[mall]"), 1) +
                                   "key 'mall.size': missing in [mall]; expected a size such as \"64KiB\" in [1 MiB, "
                                   "64 GiB]: memory-side cache capacity");
}

TEST_CASE("files and names that do not resolve") {
  try {
    arch::load_arch_file("/nonexistent/gpu.toml");
    FAIL("expected an error");
  } catch (const arch::ConfigError& e) {
    CHECK(std::string(e.what()) == "/nonexistent/gpu.toml: error: cannot open the file");
  }
  try {
    arch::resolve_arch("mi999x");
    FAIL("expected an error");
  } catch (const arch::ConfigError& e) {
    CHECK(std::string(e.what()) == "--arch mi999x: error: unknown architecture; shipped: h100, h200, mi300x, mi325x, "
                                   "mi355x; or give the path of a .toml file");
  }
  try {
    arch::resolve_arch("./missing.toml");
    FAIL("expected an error");
  } catch (const arch::ConfigError& e) {
    CHECK(std::string(e.what()) == "--arch ./missing.toml: error: no such config file");
  }
}
