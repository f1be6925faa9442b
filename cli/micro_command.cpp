#include "cli/micro_command.h"

#include <algorithm>
#include <array>
#include <iostream>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "arch/clock_model.h"
#include "arch/config_error.h"
#include "arch/units.h"
#include "cli/arch_options.h"
#include "report/run_report.h"
#include "report/text_table.h"
#include "sim/micro_compute.h"
#include "sim/micro_gemm.h"
#include "sim/micro_memory.h"

namespace attnsim::cli {

using report::fixed;
using report::TextTable;
namespace {

struct MicroState {
  ArchOptions arch;
  sim::MicroOptions o;
  sim::MemoryMicroOptions m;
  std::string footprint;
  std::optional<std::uint32_t> inflight;  // given: must be positive (absent: the config's window)
  std::string gemm_shape = "4096x4864x32896", gemm_tile = "256x256x64", dtype = "bf16";
  bool approximate = false;
  bool json = false;
};

// "MxNxK" as three positive integers; anything else is an error naming the option.
std::array<std::uint64_t, 3> parse_dims(const std::string& text, const std::string& option) {
  std::array<std::uint64_t, 3> d{};
  std::size_t pos = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    const std::size_t end = i < 2 ? text.find('x', pos) : text.size();
    const std::string part = end == std::string::npos ? std::string() : text.substr(pos, end - pos);
    if (part.empty() || part.size() > 12 || part.find_first_not_of("0123456789") != std::string::npos ||
        std::stoull(part) == 0) {
      throw arch::ConfigError(arch::ValueOrigin{option + " " + text, 0, 0, {}}, option.substr(2),
                              "expected MxNxK with three positive integers, e.g. 4096x4864x32896");
    }
    d[i] = std::stoull(part);
    pos = end + 1;
  }
  return d;
}

void run_gemm(const MicroState& st, const arch::GpuSpec& gpu) {
  sim::GemmMicroOptions g;
  const auto shape = parse_dims(st.gemm_shape, "--gemm-shape");
  const auto tile = parse_dims(st.gemm_tile, "--gemm-tile");
  if (tile[0] > 4096 || tile[1] > 4096 || tile[2] > 4096) {
    throw arch::ConfigError(arch::ValueOrigin{"--gemm-tile " + st.gemm_tile, 0, 0, {}}, "gemm-tile",
                            "tile dimensions are at most 4096");
  }
  const std::optional<arch::Dtype> dtype = arch::parse_dtype(st.dtype);
  if (!dtype) {
    throw arch::ConfigError(arch::ValueOrigin{"--dtype " + st.dtype, 0, 0, {}}, "dtype", "expected bf16, fp16 or fp8");
  }
  g.shape = workloads::GemmShape{shape[0], shape[1], shape[2], *dtype};
  g.tile_m = static_cast<std::uint32_t>(tile[0]);
  g.tile_n = static_cast<std::uint32_t>(tile[1]);
  g.tile_k = static_cast<std::uint32_t>(tile[2]);
  g.instruction = st.o.instruction;
  g.approximate = st.approximate;
  g.origin = "--gemm-shape " + st.gemm_shape + " --gemm-tile " + st.gemm_tile;
  const sim::GemmMicroResult r = sim::run_gemm_micro(gpu, g);
  const sim::KernelResult& k = r.kernel;
  nlohmann::json j;
  j["arch"] = gpu.name;
  j["pattern"] = "gemm";
  j["shape"] = {{"m", r.shape.m}, {"n", r.shape.n}, {"k", r.shape.k}, {"dtype", arch::to_string(r.shape.dtype)}};
  j["tile"] = {{"m", r.tiling.tile_m}, {"n", r.tiling.tile_n}, {"k", r.tiling.tile_k}};
  j["instruction"] = r.tiling.mfma;
  j["workgroups"] = k.workgroups;
  j["time_us"] = r.time_us;
  j["tflops"] = r.tflops;
  j["clock_mhz"] = k.clock_hz / 1e6;
  j["clock_basis"] = k.clock_pinned ? "pinned (clock.engine)" : "modelled (power-limited by the kernel's activity)";
  j["power_w"] = k.power_w;
  j["mfma_utilisation"] = k.matrix_activity;  // matrix pipes busy / (SIMDs x kernel time)
  j["efficiency_at_clock"] = r.efficiency_at_clock;
  j["approximate"] = st.approximate;
  j["kernel"] = report::kernel_json(gpu, k);
  if (st.json) {
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << "micro gemm " << r.shape.m << "x" << r.shape.n << "x" << r.shape.k << " " << arch::to_string(r.shape.dtype)
            << " on " << gpu.name << ", " << r.tiling.tile_m << "x" << r.tiling.tile_n << "x" << r.tiling.tile_k << " tiles, "
            << r.tiling.mfma << "\n";
  TextTable t;
  t.add({"workgroups", std::to_string(k.workgroups)});
  t.add({"time", fixed(r.time_us, 1) + " us"});
  t.add({"throughput", fixed(r.tflops, 1) + " TFLOP/s"});
  t.add({"clock", fixed(k.clock_hz / 1e6, 0) + " MHz, " + j["clock_basis"].get<std::string>() + ", " +
                      fixed(k.power_w, 0) + " W"});
  t.add({"matrix pipe busy", fixed(100 * k.matrix_activity, 1) + " %"});
  t.add({"efficiency at that clock", fixed(100 * r.efficiency_at_clock, 1) + " %"});
  std::cout << t.render();
}

bool listed(const std::vector<std::string>& patterns, const std::string& p) {
  return std::find(patterns.begin(), patterns.end(), p) != patterns.end();
}

void run_memory(const MicroState& st, const arch::GpuSpec& gpu) {
  sim::MemoryMicroOptions m = st.m;
  m.pattern = st.o.pattern;
  if (!st.footprint.empty()) {
    const arch::UnitParse f = arch::parse_quantity(st.footprint, arch::UnitKind::bytes);
    if (!f.canonical) {
      throw arch::ConfigError(arch::ValueOrigin{"--footprint " + st.footprint, 0, 0, {}}, "footprint", f.error);
    }
    m.footprint = static_cast<std::uint64_t>(*f.canonical);
    if (m.footprint == 0) {
      throw arch::ConfigError(arch::ValueOrigin{"--footprint " + st.footprint, 0, 0, {}}, "footprint",
                              "expected a positive size, got 0");
    }
  }
  if (st.inflight) {
    if (*st.inflight == 0) {
      throw arch::ConfigError(arch::ValueOrigin{"--inflight 0", 0, 0, {}}, "inflight",
                              "expected at least one outstanding line request per CU, got 0");
    }
    m.inflight = *st.inflight;
  }
  // A stream runs at the power-limited clock of its own HBM traffic; a chase (one load at a time)
  // draws little power and runs at the engine's maximum, as RRZE's chase did (2092 MHz).
  const sim::MemoryMicroResult r = [&] {
    try {
      return sim::run_memory_micro(gpu, m);
    } catch (const arch::ConfigError& e) {
      // The simulator names the footprint in bytes; the user is shown what they typed.
      if (e.key() != "footprint" || st.footprint.empty()) throw;
      throw arch::ConfigError(arch::ValueOrigin{"--footprint " + st.footprint, 0, 0, {}}, e.key(), e.problem());
    }
  }();
  const double clock = r.engine_clock_hz;
  nlohmann::json j;
  j["arch"] = gpu.name;
  j["pattern"] = r.pattern;
  j["level"] = r.level;
  j["footprint_bytes"] = r.footprint;
  j["clock_mhz"] = clock / 1e6;
  j["clock_basis"] = m.pattern == "chase" ? "modelled (idle: engine maximum)" : (gpu.clock.engine_pinned ? "pinned (clock.engine)" : "modelled (power-limited by its HBM traffic)");
  if (r.pattern == "chase") {
    j["latency_ns"] = r.latency_ns;
  } else {
    j["bandwidth_bytes_per_s"] = r.bandwidth_bytes_per_s;
    j["inflight_lines_per_cu"] = r.inflight;
    j["counters"] = r.counters.to_json(gpu.vendor);
    j["hbm_utilisation"] = r.hbm_utilisation;
  }
  if (r.pattern == "atomic") {
    j["atomic_adds_per_s"] = r.bandwidth_bytes_per_s / 4;  // fp32 adds
    j["latency_ns"] = r.latency_ns;
    j["atomics_site"] = arch::to_string(gpu.l2.atomics);
  }
  if (st.json) {
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << "micro " << r.pattern << " at " << r.level << " (" << arch::format(arch::Bytes{r.footprint}) << ") on "
            << gpu.name << " at " << fixed(clock / 1e6, 0) << " MHz\n";
  if (r.pattern == "chase") {
    std::cout << "  latency " << fixed(r.latency_ns, 1) << " ns\n";
  } else {
    std::cout << "  bandwidth " << fixed(r.bandwidth_bytes_per_s / 1e12, 2) << " TB/s (" << r.inflight
              << " lines in flight per CU; HBM busy " << fixed(100 * r.hbm_utilisation, 0) << " %)\n";
  }
  if (r.pattern == "atomic") {
    std::cout << "  " << fixed(r.bandwidth_bytes_per_s / 4 / 1e9, 1) << " G fp32 atomic adds/s, performed at "
              << arch::to_string(gpu.l2.atomics) << "; one at a time" << (gpu.dispatch.xcds_per_partition > 1 ? " across the XCDs" : "")
              << ": " << fixed(r.latency_ns, 1) << " ns each\n";
  }
}

void run_micro(const MicroState& st) {
  const arch::LoadedArch loaded = st.arch.load();
  const arch::GpuSpec& gpu = loaded.spec;
  if (listed(sim::memory_patterns(), st.o.pattern)) {
    run_memory(st, gpu);
    return;
  }
  if (st.o.pattern == "gemm") {
    run_gemm(st, gpu);
    return;
  }
  if (!listed(sim::compute_patterns(), st.o.pattern)) {
    std::string list;
    for (const auto* patterns : {&sim::compute_patterns(), &sim::memory_patterns()}) {
      for (const auto& p : *patterns) list += p + ", ";
    }
    throw arch::ConfigError(arch::ValueOrigin{"--pattern " + st.o.pattern, 0, 0, {}}, "pattern",
                            "expected one of " + list + "gemm");
  }
  const sim::MicroResult m = sim::run_compute_micro(gpu, st.o);
  const double cus = gpu.total_cus();
  const bool matrix = st.o.pattern == "mfma" || st.o.pattern == "mfma+trans";
  // Every CU of the chip doing what this one does: the clock its matrix and vector pipes' activity
  // settles at (engine_max for LDS work alone, which draws no class's power).
  arch::Activity activity;
  if (matrix) {
    if (const arch::MatrixInstruction* i = gpu.cu.matrix_instruction(m.instruction)) {
      activity.matrix[static_cast<std::size_t>(i->dtype)] = m.mfma_utilisation;
    }
  }
  activity.vector = m.vector_utilisation;
  const arch::ClockEstimate estimate = arch::sustained_clock(gpu, activity);
  const double clock = estimate.clock.value;

  nlohmann::json j;
  j["arch"] = gpu.name;
  j["pattern"] = m.pattern;
  j["waves_per_simd"] = st.o.waves_per_simd;
  j["instruction"] = m.instruction;
  j["cycles"] = m.issue.cycles;
  j["counts"] = {{"mfma", m.issue.mfma}, {"valu", m.issue.valu}, {"trans", m.issue.trans},
                 {"lds_reads", m.issue.lds_reads}, {"lds_bytes", m.issue.lds_bytes}};
  j["flops_per_clk_per_cu"] = m.flops_per_clk_per_cu;
  j["trans_per_clk_per_cu"] = m.trans_per_clk_per_cu;
  j["lds_bytes_per_clk_per_cu"] = m.lds_bytes_per_clk_per_cu;
  j["mfma_utilisation"] = m.mfma_utilisation;
  j["clock_mhz"] = clock / 1e6;
  j["vector_utilisation"] = m.vector_utilisation;
  j["clock_basis"] = gpu.clock.engine_pinned            ? "pinned (clock.engine)"
                     : estimate.power_limited            ? "modelled, power-limited at this matrix and vector utilisation"
                                                         : "modelled, below the power limit";
  j["chip_tflops"] = m.flops_per_clk_per_cu * cus * clock / 1e12;
  j["chip_trans_tera_per_s"] = m.trans_per_clk_per_cu * cus * clock / 1e12;
  j["chip_lds_tb_per_s"] = m.lds_bytes_per_clk_per_cu * cus * clock / 1e12;
  if (st.o.pattern == "lds") j["lds_stride"] = st.o.lds_stride;
  if (st.json) {
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << "micro " << m.pattern << " on one " << gpu.name << " CU, " << st.o.waves_per_simd << " wave(s) per SIMD"
            << (matrix ? ", " + m.instruction : std::string()) << "\n";
  TextTable t;
  t.add({"cycles", std::to_string(m.issue.cycles)});
  t.add({"FLOP/clk/CU", fixed(m.flops_per_clk_per_cu, 1)});
  t.add({"transcendentals/clk/CU", fixed(m.trans_per_clk_per_cu, 2)});
  t.add({"LDS B/clk/CU", fixed(m.lds_bytes_per_clk_per_cu, 1)});
  t.add({"matrix pipe busy", fixed(100 * m.mfma_utilisation, 1) + " %"});
  t.add({"vector pipe busy", fixed(100 * m.vector_utilisation, 1) + " %"});
  t.add({"chip at " + fixed(clock / 1e6, 0) + " MHz", fixed(j["chip_tflops"].get<double>(), 1) + " TFLOP/s, " +
                                                        fixed(j["chip_trans_tera_per_s"].get<double>(), 2) + " T exp/s, " +
                                                        fixed(j["chip_lds_tb_per_s"].get<double>(), 1) + " TB/s LDS"});
  std::cout << t.render();
}

}  // namespace

void add_micro_command(CLI::App& app) {
  auto st = std::make_shared<MicroState>();
  CLI::App* c = app.add_subcommand("micro", "Microbenchmarks on the simulated hardware: compute on one CU, memory streams and chases");
  st->arch.add_to(*c);
  c->add_option("--pattern", st->o.pattern,
                "mfma, valu, trans, mfma+trans, lds (one CU); stream-read, stream-write, copy, chase, atomic (memory); "
                "gemm (the whole GPU)")
      ->capture_default_str();
  c->add_option("--level", st->m.level, "memory patterns: l1, l2, mall or hbm (sets the default footprint)")
      ->capture_default_str();
  c->add_option("--footprint", st->footprint, "memory patterns: buffer size, e.g. 64MiB");
  c->add_option("--inflight", st->inflight, "streams: outstanding line requests per CU (default: cu.memory_inflight_lines)");
  c->add_option("--waves", st->o.waves_per_simd, "waves per SIMD (1 to the wave slots)")->capture_default_str();
  c->add_option("--instruction", st->o.instruction, "matrix instruction (default: a bf16 one that reaches the peak)");
  c->add_option("--trans-per-mfma", st->o.trans_per_mfma, "mfma+trans: transcendentals per MFMA")->capture_default_str();
  c->add_option("--lds-stride", st->o.lds_stride, "lds: bytes between consecutive lanes (16 = contiguous b128)")
      ->capture_default_str();
  c->add_option("--lds-width", st->o.lds_bytes_per_lane, "lds: bytes per lane, 4, 8 or 16")->capture_default_str();
  c->add_option("--iterations", st->o.iterations, "loop iterations per wave")->capture_default_str();
  c->add_option("--gemm-shape", st->gemm_shape, "gemm: MxNxK (default: AMD's bf16 MAF shape)")->capture_default_str();
  c->add_option("--gemm-tile", st->gemm_tile, "gemm: the workgroup's tile, MxNxK")->capture_default_str();
  c->add_option("--dtype", st->dtype, "gemm: bf16, fp16 or fp8")->capture_default_str();
  c->add_flag("--approximate", st->approximate, "gemm: the engine's approximate tag mode");
  c->add_flag("--json", st->json, "print JSON");
  c->footer(
      "Examples:\n"
      "  attnsim micro --pattern mfma --waves 2\n"
      "  attnsim micro --pattern mfma+trans --trans-per-mfma 2 --json\n"
      "  attnsim micro --pattern lds --lds-stride 32 --waves 4\n"
      "  attnsim micro --pattern stream-read --level hbm\n"
      "  attnsim micro --pattern chase --level mall --json\n"
      "  attnsim micro --pattern atomic --footprint 128B   (every CU of every XCD into one line)\n"
      "  attnsim micro --pattern gemm                      (AMD's bf16 MAF GEMM on the whole GPU)");
  c->callback([st] { run_micro(*st); });
}

}  // namespace attnsim::cli
