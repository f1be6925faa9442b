#include "workloads/code_object_shapes.h"

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

}  // namespace

KernelSchedule schedule_for(const KernelSchedule& k, const Problem& p, Direction d, const std::string& origin) {
  KernelSchedule out = k;
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

}  // namespace attnsim::workloads
