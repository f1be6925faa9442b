// Helpers for workload tests: build a pass for a preset on a shipped GPU.
#pragma once

#include "arch/arch_locator.h"
#include "arch/spec_loader.h"
#include "workloads/kernel_program.h"
#include "workloads/presets.h"

namespace attnsim::test {

inline const arch::GpuSpec& gpu(const std::string& name) {
  static const arch::GpuSpec mi300x = arch::load_arch_file(arch::resolve_arch("mi300x")).spec;
  static const arch::GpuSpec h100 = arch::load_arch_file(arch::resolve_arch("h100")).spec;
  return name == "h100" ? h100 : mi300x;
}

inline workloads::PassPrograms build(const workloads::Problem& p, const std::string& kernel, workloads::Direction d) {
  const auto k = workloads::parse_kernel_spec(kernel);
  return workloads::build_pass(p, k, d, gpu(k.native_arch));
}

// The op of a compiled body by its name.
inline const workloads::OpTemplate& op_named(const workloads::CompiledBody& b, const std::string& name) {
  for (std::size_t i = 0; i < b.names.size(); ++i) {
    if (b.names[i] == name) return b.ops[i];
  }
  throw std::runtime_error("no op " + name);
}

}  // namespace attnsim::test
