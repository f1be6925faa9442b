#include "workloads/schedule_for.h"

#include <algorithm>
#include <optional>

#include "arch/arch_locator.h"
#include "arch/config_error.h"
#include "arch/spec_loader.h"

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
  if (s.pads) out += "; smaller d padded";
  if (s.masks.causal_top_left != s.masks.causal_bottom_right) {
    out += s.masks.causal_top_left ? "; causal top-left" : "; causal bottom-right";
  }
  if (s.masks.window) out += "; window";
  out += ")";
  return out;
}

bool has_dtype(const CodeObjectShape& s, Dtype t) { return std::find(s.dtypes.begin(), s.dtypes.end(), t) != s.dtypes.end(); }

// The code object whose head dimensions p runs at: its own, or the smallest larger square one
// (Q/K and V equal), which pads p's (a multiple of 8) up to its own if it `pads`. Null if none.
const CodeObjectShape* by_head_dims(const std::vector<CodeObjectShape>& shapes, const Problem& p) {
  const CodeObjectShape* bucket = nullptr;
  for (const CodeObjectShape& s : shapes) {
    if (s.head_dim_qk == p.head_dim_qk && s.head_dim_v == p.head_dim_v) return &s;
    if (s.head_dim_qk == s.head_dim_v && p.head_dim_qk == p.head_dim_v && s.head_dim_qk > p.head_dim_qk &&
        (!bucket || s.head_dim_qk < bucket->head_dim_qk)) {
      bucket = &s;
    }
  }
  if (bucket && bucket->pads && p.head_dim_qk % 8 == 0) return bucket;
  return nullptr;
}

// Whether the code object implements p's mask: a window, or a causal mask along p's diagonal
// (either one where they agree, seqlen_q = seqlen_k).
bool has_mask(const CodeObjectMasks& m, const Problem& p) {
  if (p.window) return m.window;
  if (!p.causal) return true;
  if (p.seqlen_q == p.seqlen_k && (m.causal_top_left || m.causal_bottom_right)) return true;
  return p.align == CausalAlign::top_left ? m.causal_top_left : m.causal_bottom_right;
}

// Finds the shape of `shapes` for p, or throws naming what exists.
const CodeObjectShape& find_shape(const std::vector<CodeObjectShape>& shapes, const KernelSchedule& k, const Problem& p,
                                  Direction d, const std::string& origin) {
  const CodeObjectShape* dims = by_head_dims(shapes, p);
  // Another code object of the same head dimensions may hold the dtype (aiter's fp8 forward).
  const CodeObjectShape* typed = nullptr;
  for (const CodeObjectShape& s : shapes) {
    if (dims && s.head_dim_qk == dims->head_dim_qk && s.head_dim_v == dims->head_dim_v && has_dtype(s, p.dtype)) {
      typed = &s;
      break;
    }
  }
  if (typed && has_mask(typed->masks, p)) return *typed;
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
  const std::string what = "no " + pass + " code object of " + k.name;
  if (typed) {
    const std::string mask = p.window ? "a sliding window"
                                      : std::string("a causal mask along the ") +
                                            (p.align == CausalAlign::top_left ? "top-left" : "bottom-right") +
                                            " diagonal with seqlen_q != seqlen_k";
    throw arch::ConfigError(where, p.window ? "window" : "causal", what + " for " + mask + tail);
  }
  if (dims) {
    throw arch::ConfigError(where, "dtype",
                            what + " for " + std::string(arch::to_string(p.dtype)) + " at d=" + std::to_string(p.head_dim_qk) + tail);
  }
  std::string hd = std::to_string(p.head_dim_qk);
  if (p.head_dim_v != p.head_dim_qk) {
    hd += ':';
    hd += std::to_string(p.head_dim_v);
  }
  throw arch::ConfigError(where, "head_dim_qk", what + " for head dimension " + hd + tail);
}

// The instruction `name` as the kernel's native GPU defines it, where `gpu` lacks it (a gfx942
// kernel's schedule run on a gfx950 what-if). Empty if neither defines it.
std::optional<arch::MatrixInstruction> defined_instruction(const arch::GpuSpec& gpu, const std::string& name,
                                                           const std::string& native_arch) {
  if (const arch::MatrixInstruction* i = gpu.cu.matrix_instruction(name)) return *i;
  const arch::GpuSpec native = arch::load_arch_file(arch::resolve_arch(native_arch)).spec;
  if (const arch::MatrixInstruction* i = native.cu.matrix_instruction(name)) return *i;
  return std::nullopt;
}

// The instruction of `dtype` on `gpu` shaped as `name` (m x n, blocks, SIMDs): the GPU's fastest of
// that dtype and shape (`name` itself on its native GPU), else `name` where `gpu` has it and `dtype`
// runs at the same peak rate; else throws naming `field`.
std::string instruction_for(const arch::GpuSpec& gpu, const std::string& name, Dtype dtype, const std::string& native_arch,
                            const std::string& field, const std::string& origin) {
  const std::optional<arch::MatrixInstruction> from = defined_instruction(gpu, name, native_arch);
  if (!from) return name;  // an unknown name is reported where the kernel is built
  const bool on_gpu = gpu.cu.matrix_instruction(name) != nullptr;
  // The fastest of that dtype and shape (FLOPs per cycle; the first in the config of equals).
  const arch::MatrixInstruction* best = nullptr;
  const auto rate = [](const arch::MatrixInstruction& i) { return i.flops() / std::max<std::uint32_t>(i.cycles, 1); };
  for (const arch::MatrixInstruction& i : gpu.cu.matrix_instructions) {
    if (i.dtype == dtype && i.m == from->m && i.n == from->n && i.blocks == from->blocks && i.simds == from->simds &&
        (!best || rate(i) > rate(*best))) {
      best = &i;
    }
  }
  if (best) return best->name;
  const auto peak = [&](Dtype t) { return gpu.cu.matrix_flops_per_clk[static_cast<std::size_t>(t)]; };
  if (!on_gpu) return name;  // reported where the kernel is built, with the GPU's instructions
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

// Applies direction d of problem p to `out` (k's FwdSchedule or BwdSchedule `in`, copied): the
// dtype's matrix instruction, then the tile and launch of the code object that covers p, each for
// a field `--kernel` did not set. `pair` is the schedule's tile-pairing flag, `pair_field` its name.
template <class Sched>
void apply_direction(const KernelSchedule& k, const Sched& in, Sched& out, bool Sched::*pair, const char* pair_field,
                     const Problem& p, Direction d, const arch::GpuSpec& gpu, const std::string& origin) {
  const std::string prefix(to_string(d));
  const auto unset = [&](const char* field) { return !overridden(k, prefix + "." + field); };
  if (unset("mfma")) out.mfma = instruction_for(gpu, in.mfma, p.dtype, k.native_arch, prefix + ".mfma", origin);
  if (k.any_shape || in.shapes.empty()) return;
  const CodeObjectShape& s = find_shape(in.shapes, k, p, d, origin);
  if (unset("block_m")) out.block_m = s.block_m;
  if (unset("block_n")) out.block_n = s.block_n;
  if (s.waves && unset("waves")) out.waves = s.waves;
  if (s.vgprs && unset("vgprs")) out.vgprs = s.vgprs;
  if (s.lds_bytes && unset("lds_bytes")) out.lds_bytes = s.lds_bytes;
  if (s.heads_first_grid && unset("grid")) out.grid = GridOrder::heads_first;
  if (s.heads_first_grid && unset(pair_field)) out.*pair = false;
}

}  // namespace

KernelSchedule schedule_for(const KernelSchedule& k, const Problem& p, Direction d, const arch::GpuSpec& gpu,
                            const std::string& origin) {
  KernelSchedule out = k;
  if (d == Direction::fwd) {
    apply_direction(k, k.fwd, out.fwd, &FwdSchedule::pair_tiles, "pair_tiles", p, d, gpu, origin);
  } else {
    apply_direction(k, k.bwd, out.bwd, &BwdSchedule::pair_blocks, "pair_blocks", p, d, gpu, origin);
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
