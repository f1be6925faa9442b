#include "sim/micro_compute.h"

#include "arch/config_error.h"

namespace attnsim::sim {

using arch::ConfigError;
using arch::ValueOrigin;

const std::vector<std::string>& compute_patterns() {
  static const std::vector<std::string> p{"mfma", "valu", "trans", "mfma+trans", "lds"};
  return p;
}

const arch::MatrixInstruction& pick_matrix_instruction(const arch::GpuSpec& gpu, arch::Dtype dtype,
                                                       const std::string& name) {
  if (!name.empty()) {
    if (const arch::MatrixInstruction* i = gpu.cu.matrix_instruction(name)) return *i;
    throw ConfigError(ValueOrigin{"--instruction " + name, 0, 0, {}}, "instruction",
                      "not in " + gpu.name + "'s cu.matrix.instructions");
  }
  const auto peak = static_cast<double>(gpu.cu.matrix_flops_per_clk[static_cast<std::size_t>(dtype)]);
  for (const auto& i : gpu.cu.matrix_instructions) {
    if (i.dtype == dtype && i.flops() / i.cycles * gpu.cu.simds / i.simds >= peak) return i;
  }
  for (const auto& i : gpu.cu.matrix_instructions) {
    if (i.dtype == dtype) return i;
  }
  return gpu.cu.matrix_instructions.front();
}

MicroResult run_compute_micro(const arch::GpuSpec& gpu, const MicroOptions& o) {
  if (o.waves_per_simd == 0 || o.waves_per_simd > gpu.cu.wave_slots_per_simd) {
    throw ConfigError(ValueOrigin{"--waves " + std::to_string(o.waves_per_simd), 0, 0, {}}, "waves",
                      "expected 1 to " + std::to_string(gpu.cu.wave_slots_per_simd) + " waves per SIMD (" + gpu.name +
                          " has " + std::to_string(gpu.cu.wave_slots_per_simd) + " wave slots per SIMD)");
  }
  if (o.lds_stride == 0 || o.lds_stride % 4 != 0 || (o.lds_bytes_per_lane != 4 && o.lds_bytes_per_lane != 8 &&
                                                     o.lds_bytes_per_lane != 16)) {
    throw ConfigError(ValueOrigin{"--lds-stride " + std::to_string(o.lds_stride), 0, 0, {}}, "lds_stride",
                      "expected a positive multiple of 4 bytes, with 4, 8 or 16 bytes per lane");
  }
  const arch::MatrixInstruction& mfma = pick_matrix_instruction(gpu, arch::Dtype::bf16, o.instruction);
  const SimdIssueRules rules(gpu, mfma);
  std::vector<Instr> body;
  const auto add = [&](Instr::Kind k, int n) {
    for (int i = 0; i < n; ++i) body.push_back(Instr{k, o.lds_bytes_per_lane, o.lds_stride});
  };
  if (o.pattern == "mfma") {
    add(Instr::mfma, 8);
  } else if (o.pattern == "valu") {
    add(Instr::valu, 8);
  } else if (o.pattern == "trans") {
    add(Instr::trans, 8);
  } else if (o.pattern == "mfma+trans") {
    for (int i = 0; i < 4; ++i) {
      add(Instr::mfma, 1);
      add(Instr::trans, static_cast<int>(o.trans_per_mfma));
    }
  } else if (o.pattern == "lds") {
    add(Instr::lds_read, 8);
    add(Instr::wait, 1);
  } else {
    std::string list;
    for (const auto& p : compute_patterns()) list += (list.empty() ? "" : ", ") + p;
    throw ConfigError(ValueOrigin{"--pattern " + o.pattern, 0, 0, {}}, "pattern", "expected one of " + list);
  }
  MicroResult m;
  m.pattern = o.pattern;
  m.instruction = mfma.name;
  m.issue = run_on_cu(gpu, rules, body, o.waves_per_simd, o.iterations);
  const double cycles = static_cast<double>(m.issue.cycles);
  // Matrix FLOPs plus VALU FMA FLOPs (2 per lane); each pattern issues only one of the two.
  m.flops_per_clk_per_cu = (m.issue.mfma * mfma.flops() + m.issue.valu * 2.0 * gpu.cu.wave_size) / cycles;
  m.trans_per_clk_per_cu = m.issue.trans * static_cast<double>(gpu.cu.wave_size) / cycles;
  m.lds_bytes_per_clk_per_cu = m.issue.lds_bytes / cycles;
  m.mfma_utilisation = m.issue.matrix_busy / (cycles * gpu.cu.simds);
  m.vector_utilisation = m.issue.vector_busy / (cycles * gpu.cu.simds);
  return m;
}

}  // namespace attnsim::sim
