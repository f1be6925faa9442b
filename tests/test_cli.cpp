// The attnsim binary end to end: output, JSON keys, help texts and exit codes.
#include <doctest/doctest.h>

#include <cmath>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "config_fixture.h"

namespace {

using attnsim::test::contains;
using Run = attnsim::test::CliRun;
using attnsim::test::run_attnsim;

}  // namespace

TEST_CASE("arch show --json gives the MI300X figures") {
  const Run r = run_attnsim("arch show --arch mi300x --json", false);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["name"] == "AMD Instinct MI300X");
  CHECK(j["derived"]["total_cus"] == 304);
  CHECK(j["derived"]["xcds"] == 8);
  CHECK(j["derived"]["matrix"]["bf16"]["peak_tflops"].get<double>() == doctest::Approx(1307.4).epsilon(0.0001));
  CHECK(j["derived"]["bandwidth_tb_per_s"]["hbm_peak"].get<double>() == doctest::Approx(5.3));
  CHECK(j["derived"]["matrix"]["bf16"]["sustained_clock_mhz"].get<double>() ==
        doctest::Approx(2100 * std::cbrt((750.0 - 415.0) / 1593.0)).epsilon(0.0005));
  CHECK(j["params"]["clock.measured.matrix_bf16"]["value"].get<double>() == 1.207e9);  // BLOG-MAF2
  CHECK(j["derived"]["matrix"]["bf16"]["measured_gemm_clock_mhz"].get<double>() == 1207);
  CHECK(j["params"]["clock.measured.matrix_bf16"]["source"] == "BLOG-MAF2 (median clock of the BF16 MAF GEMMs at 750 W)");
  CHECK(j["params"]["cu.lds_size"]["value"] == 65536);
  CHECK(j["params"]["cu.lds_size"]["source"] == "ROCM-SPECS");
  CHECK(j["overrides"].empty());
  // Vector work alone draws nothing as shipped (clock.power.vector 0 W); with the FMA sweep's fit,
  // 2100 MHz x cbrt((750 - 415) / 1341).
  CHECK(j["derived"]["vector_clock_mhz"].get<double>() == doctest::Approx(2100));
  const Run fit = run_attnsim("arch show --arch mi300x --json --set clock.power.vector=1341W", false);
  REQUIRE(fit.exit_code == 0);
  CHECK(nlohmann::json::parse(fit.out)["derived"]["vector_clock_mhz"].get<double>() ==
        doctest::Approx(2100 * std::cbrt(335.0 / 1341.0)).epsilon(0.0005));
}

TEST_CASE("arch show --set changes the derived figures") {
  const Run r = run_attnsim("arch show --arch mi300x --set hbm.peak_bandwidth=8TB/s --json", false);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["derived"]["bandwidth_tb_per_s"]["hbm_peak"].get<double>() == doctest::Approx(8.0));
  CHECK(j["derived"]["ridge_flop_per_byte"]["hbm"].get<double>() == doctest::Approx(1307.4 / 8).epsilon(0.0001));
  CHECK(j["overrides"][0] == "hbm.peak_bandwidth=8TB/s");
  CHECK(j["params"]["hbm.peak_bandwidth"]["origin"] == "--set hbm.peak_bandwidth=8TB/s");
}

TEST_CASE("arch show prints a readable summary and --params adds every value with its source") {
  const Run r = run_attnsim("arch show --arch mi300x");
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "AMD Instinct MI300X (gfx942)"));
  CHECK(contains(r.out, "304 (8 XCD x 38)"));
  CHECK(contains(r.out, "1307.4 TFLOP/s peak at 2.1 GHz"));
  CHECK(contains(r.out, "5.3 TB/s peak"));
  const Run p = run_attnsim("arch show --arch h100 --params");
  REQUIRE(p.exit_code == 0);
  CHECK(contains(p.out, "989.4 TFLOP/s peak at 1.83 GHz"));
  CHECK(contains(p.out, "hbm.peak_bandwidth"));
  CHECK(contains(p.out, "CC-H100, SCALING"));
}

TEST_CASE("a config given as a file path loads") {
  const Run r = run_attnsim("arch show --arch " + attnsim::test::source_path("configs/arch/mi355x.toml") + " --json", false);
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["derived"]["total_cus"] == 256);
}

TEST_CASE("bad input exits with code 2 and a message naming the problem") {
  const Run unknown = run_attnsim("arch show --arch mi999x");
  CHECK(unknown.exit_code == 2);
  CHECK(contains(unknown.out, "--arch mi999x: error: unknown architecture"));
  const Run bad_set = run_attnsim("arch show --set cu.lds_size=64");
  CHECK(bad_set.exit_code == 2);
  CHECK(contains(bad_set.out, "--set cu.lds_size=64: error: key 'cu.lds_size'"));
  const Run bad_flag = run_attnsim("arch show --frobnicate");
  CHECK(bad_flag.exit_code == 2);
  const Run nothing = run_attnsim("");
  CHECK(nothing.exit_code == 2);
  // Loop batching belongs to the approximate mode, and a batch of 0 iterations means nothing.
  const Run exact_batch = run_attnsim("run --loop-batch 4");
  CHECK(exact_batch.exit_code == 2);
  CHECK(contains(exact_batch.out, "--loop-batch 4: error: key 'loop_batch'"));
  CHECK(contains(exact_batch.out, "--approximate"));
  const Run zero_batch = run_attnsim("run --approximate --loop-batch 0");
  CHECK(zero_batch.exit_code == 2);
  CHECK(contains(zero_batch.out, "--loop-batch"));
  // Fast-forward skips workgroups; a trace shows every one: refused before anything is simulated.
  const Run traced = run_attnsim("run --fast-forward --trace /nonexistent-dir/t.json");
  CHECK(traced.exit_code == 2);
  CHECK(contains(traced.out, "key 'fast_forward'"));
}

TEST_CASE("every command's --help explains itself with an example") {
  for (const std::string cmd : {"", "arch", "arch show", "arch params", "arch list", "arch lint", "check", "micro", "traffic", "run", "validate"}) {
    CAPTURE(cmd);
    const Run r = run_attnsim(cmd + " --help");
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "Example"));
  }
}

TEST_CASE("arch list names the five shipped GPUs and arch params lists every key") {
  const Run list = run_attnsim("arch list");
  REQUIRE(list.exit_code == 0);
  for (const char* name : {"mi300x", "mi325x", "mi355x", "h100", "h200"}) CHECK(contains(list.out, name));
  const Run params = run_attnsim("arch params --json", false);
  REQUIRE(params.exit_code == 0);
  const auto j = nlohmann::json::parse(params.out);
  CHECK(j.size() > 60);
  CHECK(j[0]["key"] == "schema_version");
}

TEST_CASE("arch lint passes shipped configs and fails a value without a source") {
  CHECK(run_attnsim("arch lint --arch mi300x").exit_code == 0);
  const auto dir = std::filesystem::temp_directory_path() / "attnsim_lint_test";
  std::filesystem::create_directories(dir);
  const auto file = dir / "gpu.toml";
  std::ofstream(file) << attnsim::test::edited(attnsim::test::shipped_config_text("mi300x"),
                                               "xcds = 8  # src: CDNA3-WP", "xcds = 8");
  const Run r = run_attnsim("arch lint --arch " + file.string());
  CHECK(r.exit_code == 2);
  CHECK(contains(r.out, "gpu.toml:10: value without a '# src: KEY' comment: xcds = 8"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("check passes a preset and reports JSON") {
  const Run r = run_attnsim("check --kernel aiter-v3 --direction bwd --heads 4:2 --seqlen 200:250 --head-dim 32 --causal --json",
                            false);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["passed"] == true);
  CHECK(j["bytes_match"] == true);
  CHECK(j["max_rel_error"].get<double>() < 1e-4);
  CHECK(j["bytes"]["dq_acc"]["functional_written"] == j["bytes"]["dq_acc"]["analytic_written"]);
  CHECK(j["kernels"].size() == 5);  // preprocess, zero dq_acc, dK/dV, convert, GQA reduction
}

TEST_CASE("check refuses bad problem flags with exit code 2") {
  const Run gqa = run_attnsim("check --heads 6:4");
  CHECK(gqa.exit_code == 2);
  CHECK(contains(gqa.out, "problem flags: error: key 'heads_q': 6 is not a multiple of heads_kv = 4"));
  const Run window = run_attnsim("check --causal --window 64:8");
  CHECK(window.exit_code == 2);
  CHECK(contains(window.out, "key 'window': a right window of 8 conflicts with causal masking"));
  const Run seq = run_attnsim("check --seqlen 12x");
  CHECK(seq.exit_code == 2);
  CHECK(contains(seq.out, "--seqlen 12x: error: key 'seqlen_q': expected a positive integer, got \"12x\""));
  const Run kernel = run_attnsim("check --kernel fa3 --arch mi300x");
  CHECK(kernel.exit_code == 2);
  CHECK(contains(kernel.out, "matrix instruction 'wgmma.m64n256k16.f32.bf16' is not in the AMD Instinct MI300X config"));
}

TEST_CASE("micro reports JSON and refuses a wave count beyond the slots") {
  const Run r = run_attnsim("micro --pattern mfma+trans --waves 2 --json", false);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["flops_per_clk_per_cu"].get<double>() == doctest::Approx(2048));
  // Full bf16 matrix load and no memory traffic: 2100 MHz x cbrt((750 - 415) / 1593) = 1248.8 MHz
  // (above the measured 1207 MHz of AMD's GEMMs, which also move HBM traffic; docs/model.md).
  CHECK(j["clock_mhz"].get<double>() == doctest::Approx(2100 * std::cbrt((750.0 - 415.0) / 1593.0)).epsilon(0.0005));
  // VALU work alone at the clock its vector class allows: 0 W as shipped (2100 MHz); with 1341 W,
  // 2100 x cbrt(335 / 1341) = 1322.5 MHz, and 128 FLOP/clk/CU x 304 CUs at that clock.
  const auto valu = [](const std::string& sets) {
    const Run v = run_attnsim("micro --pattern valu --waves 2 --json" + sets, false);
    REQUIRE(v.exit_code == 0);
    return nlohmann::json::parse(v.out);
  };
  CHECK(valu("")["clock_mhz"].get<double>() == doctest::Approx(2100));
  const auto fit = valu(" --set clock.power.vector=1341W");
  CHECK(fit["clock_mhz"].get<double>() == doctest::Approx(2100 * std::cbrt(335.0 / 1341.0)).epsilon(0.0005));
  CHECK(fit["chip_tflops"].get<double>() == doctest::Approx(128 * 304 * fit["clock_mhz"].get<double>() * 1e6 / 1e12));
  const Run bad = run_attnsim("micro --pattern mfma --waves 9");
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.out, "expected 1 to 8 waves per SIMD"));
}

TEST_CASE("micro memory patterns report latency and bandwidth") {
  const Run chase = run_attnsim("micro --pattern chase --level l2 --json", false);
  REQUIRE(chase.exit_code == 0);
  const auto j = nlohmann::json::parse(chase.out);
  CHECK(j["latency_ns"].get<double>() == doctest::Approx((118 + 90 + 1) / 2.1).epsilon(0.001));
  CHECK(j["clock_mhz"].get<double>() == doctest::Approx(2100));
  const Run bad = run_attnsim("micro --pattern stream-read --footprint 100B");
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.out, "--footprint 100B: error: key 'footprint': expected a positive multiple of the 128-byte L2 line"));
  // The value as typed, whatever its unit (the simulator counts bytes).
  CHECK(contains(run_attnsim("micro --pattern chase --footprint 1KB").out,
                 "--footprint 1KB: error: key 'footprint': expected a positive multiple of the 128-byte L2 line"));
  const Run zero = run_attnsim("micro --pattern stream-read --inflight 0");
  CHECK(zero.exit_code == 2);
  CHECK(contains(zero.out, "--inflight 0: error: key 'inflight': expected at least one outstanding line request per CU, got 0"));
  const Run empty = run_attnsim("micro --pattern chase --footprint 0B");
  CHECK(empty.exit_code == 2);
  CHECK(contains(empty.out, "key 'footprint': expected a positive size, got 0"));
  const Run huge = run_attnsim("micro --pattern chase --footprint 1TiB");
  CHECK(huge.exit_code == 2);
  CHECK(contains(huge.out, "key 'footprint': at most 4GiB"));
  const Run atomic = run_attnsim("micro --pattern atomic --level l2 --footprint 128B --inflight 4 --json", false);
  REQUIRE(atomic.exit_code == 0);
  const auto a = nlohmann::json::parse(atomic.out);
  CHECK(a["atomics_site"] == "memory_side");
  CHECK(a["atomic_adds_per_s"].get<double>() == doctest::Approx(a["bandwidth_bytes_per_s"].get<double>() / 4));
  CHECK(a["latency_ns"].get<double>() > 0);
  CHECK(a["counters"]["atomic_bytes"].get<double>() > 0);
  const Run bad_site = run_attnsim("micro --pattern atomic --set l2.atomics=l3");
  CHECK(bad_site.exit_code == 2);
  CHECK(contains(bad_site.out, "l2.atomics"));
}
