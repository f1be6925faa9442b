// Helpers for workload tests: build a pass for a preset on a shipped GPU.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "arch/arch_locator.h"
#include "arch/spec_loader.h"
#include "workloads/kernel_program.h"
#include "workloads/presets.h"

namespace attnsim::test {

// A shipped GPU with overrides applied as `--set` applies them, loaded once per distinct list.
inline const arch::GpuSpec& gpu_with(const std::string& name, const std::vector<std::string>& sets) {
  static std::map<std::pair<std::string, std::vector<std::string>>, arch::GpuSpec> loaded;
  const auto key = std::make_pair(name, sets);
  auto it = loaded.find(key);
  if (it == loaded.end()) it = loaded.emplace(key, arch::load_arch_file(arch::resolve_arch(name), sets).spec).first;
  return it->second;
}

// A shipped GPU by name (any of configs/arch), loaded once.
inline const arch::GpuSpec& gpu(const std::string& name) { return gpu_with(name, {}); }

// A shipped GPU with every XCD at the controller's clock (clock.xcd_spread = 0): for hand
// calculations that time cycles at the one clock they name. The spread has tests of its own.
inline const arch::GpuSpec& one_clock(const std::string& name) { return gpu_with(name, {"clock.xcd_spread=0"}); }

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
