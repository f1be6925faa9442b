#include "cli/micro_command.h"

#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "arch/clock_model.h"
#include "cli/arch_options.h"
#include "cli/text_table.h"
#include "sim/micro_compute.h"

namespace attnsim::cli {
namespace {

struct MicroState {
  ArchOptions arch;
  sim::MicroOptions o;
  bool json = false;
};

void run_micro(const MicroState& st) {
  const arch::LoadedArch loaded = st.arch.load();
  const arch::GpuSpec& gpu = loaded.spec;
  const sim::MicroResult m = sim::run_compute_micro(gpu, st.o);
  const double cus = gpu.total_cus();
  const bool matrix = st.o.pattern == "mfma" || st.o.pattern == "mfma+trans";
  arch::Activity activity;
  if (matrix) {
    for (const auto& i : gpu.cu.matrix_instructions) {
      if (i.name == m.instruction) activity.matrix[static_cast<std::size_t>(i.dtype)] = m.mfma_utilisation;
    }
  }
  const double clock = matrix ? arch::sustained_clock(gpu.clock, activity).clock.value : gpu.clock.engine_max.value;

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
  j["clock_basis"] = matrix ? "modelled (power-limited, at this matrix utilisation)" : "clock.engine_max";
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
  t.add({"chip at " + fixed(clock / 1e6, 0) + " MHz", fixed(j["chip_tflops"].get<double>(), 1) + " TFLOP/s, " +
                                                        fixed(j["chip_trans_tera_per_s"].get<double>(), 2) + " T exp/s, " +
                                                        fixed(j["chip_lds_tb_per_s"].get<double>(), 1) + " TB/s LDS"});
  std::cout << t.render();
}

}  // namespace

void add_micro_command(CLI::App& app) {
  auto st = std::make_shared<MicroState>();
  CLI::App* c = app.add_subcommand("micro", "Microbenchmarks on the simulated hardware (compute patterns on one CU)");
  st->arch.add_to(*c);
  c->add_option("--pattern", st->o.pattern, "mfma, valu, trans, mfma+trans or lds")->capture_default_str();
  c->add_option("--waves", st->o.waves_per_simd, "waves per SIMD (1 to the wave slots)")->capture_default_str();
  c->add_option("--instruction", st->o.instruction, "matrix instruction (default: a bf16 one that reaches the peak)");
  c->add_option("--trans-per-mfma", st->o.trans_per_mfma, "mfma+trans: transcendentals per MFMA")->capture_default_str();
  c->add_option("--lds-stride", st->o.lds_stride, "lds: bytes between consecutive lanes (16 = contiguous b128)")
      ->capture_default_str();
  c->add_option("--lds-width", st->o.lds_bytes_per_lane, "lds: bytes per lane, 4, 8 or 16")->capture_default_str();
  c->add_option("--iterations", st->o.iterations, "loop iterations per wave")->capture_default_str();
  c->add_flag("--json", st->json, "print JSON");
  c->footer(
      "Examples:\n"
      "  attnsim micro --pattern mfma --waves 2\n"
      "  attnsim micro --pattern mfma+trans --trans-per-mfma 2 --json\n"
      "  attnsim micro --pattern lds --lds-stride 32 --waves 4\n"
      "Memory patterns (stream-read, stream-write, copy, chase, atomic) come with the memory hierarchy model.");
  c->callback([st] { run_micro(*st); });
}

}  // namespace attnsim::cli
