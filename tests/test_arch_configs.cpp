// The five shipped configs load, cite their sources, and give the derived figures of
// shared/reference/arch-facts.md section 6 ("Suggested simulator defaults").
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "arch/arch_locator.h"
#include "arch/derived_figures.h"
#include "arch/provenance.h"
#include "cli/arch_report.h"
#include "config_fixture.h"

using namespace attnsim;
using namespace attnsim::arch;

namespace {

// One column of arch-facts.md section 6, plus the datasheet peak it implies.
struct Section6Row {
  const char* config;
  std::uint32_t units;
  double peak_clock_ghz;         // clock the matrix peak is quoted at
  std::uint64_t bf16_flop_per_clk;
  double exp_per_clk;
  std::uint64_t lds_bytes;
  std::uint64_t lds_bytes_per_clk;
  L2Scope l2_scope;
  std::uint64_t l2_bytes;          // per instance
  double l2_read_bytes_per_clk;    // per XCD (AMD); 0 where section 6 gives only a measurement
  std::uint64_t mall_bytes;        // 0: none
  double hbm_peak_tbps;
  double bf16_peak_tflops;         // datasheet
  double hbm_capacity_gb;          // arch-facts sections 1.5, 2, 3 and 4 (stacks x stack size)
};

const Section6Row kRows[] = {
    {"mi300x", 304, 2.1, 2048, 16, 64 * 1024, 128, L2Scope::per_xcd, 4 << 20, 2048, 256ull << 20, 5.3, 1307.4, 192},
    {"mi325x", 304, 2.1, 2048, 16, 64 * 1024, 128, L2Scope::per_xcd, 4 << 20, 2048, 256ull << 20, 6.0, 1307.4, 256},
    {"mi355x", 256, 2.4, 4096, 16, 160 * 1024, 256, L2Scope::per_xcd, 4 << 20, 2048, 256ull << 20, 8.0, 2516.6, 288},
    {"h100", 132, 1.83, 4096, 16, 228 * 1024, 128, L2Scope::shared, 50ull << 20, 0, 0, 3.35, 989.4, 80},
    {"h200", 132, 1.83, 4096, 16, 228 * 1024, 128, L2Scope::shared, 50ull << 20, 0, 0, 4.8, 989.4, 141},
};

}  // namespace

TEST_CASE("every shipped config loads and matches arch-facts section 6") {
  for (const auto& row : kRows) {
    CAPTURE(row.config);
    const LoadedArch loaded = load_arch_file(resolve_arch(row.config));
    const GpuSpec& s = loaded.spec;
    const DerivedFigures d = derive(s);
    CHECK(d.total_cus == row.units);
    CHECK(s.clock.matrix_max.value == doctest::Approx(row.peak_clock_ghz * 1e9));
    CHECK(s.cu.matrix_flops_per_clk[static_cast<std::size_t>(Dtype::bf16)] == row.bf16_flop_per_clk);
    CHECK(d.exp_per_clk_per_cu == row.exp_per_clk);
    CHECK(s.cu.lds_size.value == row.lds_bytes);
    CHECK(s.cu.lds_bandwidth.value == row.lds_bytes_per_clk);
    CHECK(s.l2.scope == row.l2_scope);
    CHECK(s.l2.size.value == row.l2_bytes);
    if (row.l2_read_bytes_per_clk > 0) {
      CHECK(static_cast<double>(s.l2.channels * s.l2.read_bandwidth.value) == row.l2_read_bytes_per_clk);
    }
    CHECK(s.mall.present == (row.mall_bytes != 0));
    if (s.mall.present) CHECK(s.mall.size.value == row.mall_bytes);
    CHECK(d.hbm_bandwidth.value == doctest::Approx(row.hbm_peak_tbps * 1e12));
    CHECK(static_cast<double>(s.hbm.capacity.value) == doctest::Approx(row.hbm_capacity_gb * 1e9));
    CHECK(d.matrix[static_cast<std::size_t>(Dtype::bf16)].peak_flops / 1e12 ==
          doctest::Approx(row.bf16_peak_tflops).epsilon(0.0005));
  }
}

TEST_CASE("MI300X derived figures: 304 CUs in 8 XCDs and 1307.4 TFLOP/s bf16 at 2.1 GHz and 5.3 TB/s") {
  const DerivedFigures d = derive(load_arch_file(resolve_arch("mi300x")).spec);
  CHECK(d.total_cus == 304);
  CHECK(d.cus_per_partition == 304);
  // 2048 FLOP/clk/CU x 304 x 2.1 GHz = 1307.4 TFLOP/s (CDNA3-WP); fp8 doubles it.
  CHECK(d.matrix[0].peak_flops == doctest::Approx(2048.0 * 304 * 2.1e9));
  CHECK(d.matrix[2].peak_flops / 1e12 == doctest::Approx(2614.9).epsilon(0.0001));
  // LDS 128 B/clk x 304 x 2.1 GHz = 81.7 TB/s (arch-facts 1.2).
  CHECK(d.lds_bandwidth.value / 1e12 == doctest::Approx(81.7).epsilon(0.001));
  // L2 16 ch x 128 B x 8 XCDs x 2.1 GHz = 34.4 TB/s; L2 -> fabric 16 x 64 B x 8 x 2.1 GHz = 17.2 TB/s.
  CHECK(d.l2_read_bandwidth.value / 1e12 == doctest::Approx(34.4).epsilon(0.001));
  CHECK(d.fabric_bandwidth.value / 1e12 == doctest::Approx(17.2).epsilon(0.001));
  // MALL 128 ch x 64 B x 2.1 GHz = 17.2 TB/s (CDNA3-WP, CC-CDNA3).
  CHECK(d.mall_bandwidth.value / 1e12 == doctest::Approx(17.2).epsilon(0.001));
  // exp: 16 x 304 x 2.1 GHz = 10.2 T/s (arch-facts 1.3).
  CHECK(d.exp_per_s / 1e12 == doctest::Approx(10.2).epsilon(0.002));
  // 512 KiB / (4 SIMDs x 64 lanes x 4 B) = 512 registers per lane.
  CHECK(d.vgprs_per_lane_per_simd == 512);
  // Ridge: 1307.4 TFLOP/s / 5.3 TB/s = 246.7 FLOP/B.
  CHECK(d.ridge_hbm == doctest::Approx(1307.4 / 5.3).epsilon(0.001));
  CHECK(d.l2_sets == 2048);  // 4 MiB / (16 ways x 128 B)
}

TEST_CASE("every value of every shipped config cites a source listed in docs/sources.md") {
  const SourceRegistry& reg = builtin_sources();
  for (const char* name : {"mi300x", "mi325x", "mi355x", "h100", "h200"}) {
    CAPTURE(name);
    const auto problems = check_provenance(test::shipped_config_text(name), reg);
    for (const auto& p : problems) FAIL_CHECK(name << ":" << p.line << ": " << p.message);
  }
}

TEST_CASE("the compiled-in source registry is docs/sources.md") {
  const auto reg = SourceRegistry::from_markdown(test::read_text(test::source_path("docs/sources.md")));
  CHECK(reg.size() == builtin_sources().size());
  CHECK(reg.size() > 30);
  CHECK(builtin_sources().contains("CDNA3-WP"));
}

TEST_CASE("loading is deterministic: the same file gives the same JSON") {
  const auto a = load_arch_file(resolve_arch("mi300x"));
  const auto b = load_arch_file(resolve_arch("mi300x"));
  CHECK(cli::arch_json(a, derive(a.spec)).dump() == cli::arch_json(b, derive(b.spec)).dump());
}

TEST_CASE("each value's origin and source are recorded") {
  const auto loaded = load_arch_file(resolve_arch("mi300x"));
  const auto& o = loaded.origins.at("cu.lds_size");
  CHECK(o.source == "ROCM-SPECS");
  CHECK(o.where.line == test::line_of(test::shipped_config_text("mi300x"), "lds_size ="));
  CHECK(loaded.origins.at("cu.matrix.instructions").source == "MIC, BLOG-MFMA; MIC");
}

TEST_CASE("an absent optional section (the MALL on NVIDIA) is recorded as absent and not defaulted") {
  const auto h100 = load_arch_file(resolve_arch("h100"));
  CHECK_FALSE(h100.spec.mall.present);
  CHECK(h100.origins.count("mall.size") == 0);
  const DerivedFigures d = derive(h100.spec);
  CHECK(d.mall_bandwidth.value == 0);
  CHECK(d.ridge_mall == 0);
}
