#include "workloads/schedule_for.h"

#include <algorithm>

#include "arch/config_error.h"

namespace attnsim::workloads {

namespace {

bool overridden(const KernelSchedule& k, const std::string& field) {
  return std::find(k.overridden.begin(), k.overridden.end(), field) != k.overridden.end();
}

std::string describe(const CodeObjectShape& s) {
  // Appended piecewise: GCC 12 misreports `literal + string` as -Wrestrict (PR 105329).
  std::string out = "d=";
  out += std::to_string(s.head_dim_qk);
  if (s.head_dim_v != s.head_dim_qk) {
    out += ':';
    out += std::to_string(s.head_dim_v);
  }
  out += " (";
  for (std::size_t i = 0; i < s.dtypes.size(); ++i) {
    if (i) out += ", ";
    out += arch::to_string(s.dtypes[i]);
  }
  out += ")";
  return out;
}

// Finds the shape of `shapes` for p, or throws naming what exists.
const CodeObjectShape& find_shape(const std::vector<CodeObjectShape>& shapes, const KernelSchedule& k, const Problem& p,
                                  Direction d, const std::string& origin) {
  const CodeObjectShape* same_dims = nullptr;
  for (const CodeObjectShape& s : shapes) {
    if (s.head_dim_qk != p.head_dim_qk || s.head_dim_v != p.head_dim_v) continue;
    same_dims = &s;
    if (std::find(s.dtypes.begin(), s.dtypes.end(), p.dtype) != s.dtypes.end()) return s;
  }
  std::string list;
  for (const CodeObjectShape& s : shapes) {
    if (!list.empty()) list += ", ";
    list += describe(s);
  }
  const std::string pass(to_string(d));
  const std::string tail = "; " + k.name + "'s " + pass + " code objects cover " + list + " (" + k.shapes_source +
                           "). To simulate its schedule at this shape anyway (a kernel that does not exist), " +
                           "use --kernel " + k.name + ",shapes=any";
  const arch::ValueOrigin where{origin, 0, 0, {}};
  if (same_dims) {
    throw arch::ConfigError(where, "dtype",
                            "no " + pass + " code object of " + k.name + " for " + std::string(arch::to_string(p.dtype)) +
                                " at d=" + std::to_string(p.head_dim_qk) + tail);
  }
  std::string dims = std::to_string(p.head_dim_qk);
  if (p.head_dim_v != p.head_dim_qk) {
    dims += ':';
    dims += std::to_string(p.head_dim_v);
  }
  throw arch::ConfigError(where, "head_dim_qk", "no " + pass + " code object of " + k.name + " for head dimension " + dims + tail);
}

// The instruction of `dtype` shaped as `name` (m x n, blocks, SIMDs), or `name` itself where the
// GPU has none and `dtype` runs at the same peak rate; else throws naming `field`.
std::string instruction_for(const arch::GpuSpec& gpu, const std::string& name, Dtype dtype, const std::string& field,
                            const std::string& origin) {
  const arch::MatrixInstruction* from = gpu.cu.matrix_instruction(name);
  if (!from || from->dtype == dtype) return name;  // an unknown name is reported where the kernel is built
  for (const arch::MatrixInstruction& i : gpu.cu.matrix_instructions) {
    if (i.dtype == dtype && i.m == from->m && i.n == from->n && i.blocks == from->blocks && i.simds == from->simds) {
      return i.name;
    }
  }
  const auto peak = [&](Dtype t) { return gpu.cu.matrix_flops_per_clk[static_cast<std::size_t>(t)]; };
  if (peak(dtype) == peak(from->dtype)) return name;
  std::string problem = "the ";
  problem += gpu.name;
  problem += " config has no ";
  problem += arch::to_string(dtype);
  problem += " matrix instruction of the shape of " + name + " (" + std::to_string(from->m) + "x" +
             std::to_string(from->n) + "), and " + std::string(arch::to_string(dtype)) + " runs at another rate than " +
             std::string(arch::to_string(from->dtype)) + "; name one with --kernel ...," + field + "=INSTRUCTION";
  throw arch::ConfigError(arch::ValueOrigin{origin, 0, 0, {}}, field, problem);
}

}  // namespace

KernelSchedule schedule_for(const KernelSchedule& k, const Problem& p, Direction d, const arch::GpuSpec& gpu,
                            const std::string& origin) {
  KernelSchedule out = k;
  if (d == Direction::fwd && !overridden(k, "fwd.mfma")) {
    out.fwd.mfma = instruction_for(gpu, k.fwd.mfma, p.dtype, "fwd.mfma", origin);
  }
  if (d == Direction::bwd && !overridden(k, "bwd.mfma")) {
    out.bwd.mfma = instruction_for(gpu, k.bwd.mfma, p.dtype, "bwd.mfma", origin);
  }
  if (k.any_shape) return out;
  if (d == Direction::fwd && !k.fwd.shapes.empty()) {
    const CodeObjectShape& s = find_shape(k.fwd.shapes, k, p, d, origin);
    if (!overridden(k, "fwd.block_m")) out.fwd.block_m = s.block_m;
    if (!overridden(k, "fwd.block_n")) out.fwd.block_n = s.block_n;
  }
  if (d == Direction::bwd && !k.bwd.shapes.empty()) {
    const CodeObjectShape& s = find_shape(k.bwd.shapes, k, p, d, origin);
    if (!overridden(k, "bwd.block_m")) out.bwd.block_m = s.block_m;
    if (!overridden(k, "bwd.block_n")) out.bwd.block_n = s.block_n;
  }
  validate(out, origin);
  return out;
}

KernelSchedule checkable_schedule(const KernelSchedule& k, const Problem& p, Direction d, const arch::GpuSpec& gpu) {
  try {
    return schedule_for(k, p, d, gpu, "--kernel " + k.name);
  } catch (const arch::ConfigError&) {
    return k;  // no code object or instruction for this shape: its logic is still checkable
  }
}

}  // namespace attnsim::workloads
