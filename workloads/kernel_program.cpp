#include "workloads/kernel_program.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>

#include "arch/config_error.h"

namespace attnsim::workloads {

using arch::ConfigError;
using arch::ValueOrigin;

std::string_view to_string(Direction d) { return d == Direction::fwd ? "fwd" : "bwd"; }

std::string_view to_string(KernelKind k) {
  switch (k) {
    case KernelKind::fwd: return "fwd";
    case KernelKind::preprocess: return "bwd_preprocess";
    case KernelKind::zero_dq_acc: return "bwd_zero_dq_acc";
    case KernelKind::bwd_main: return "bwd_dkdv";
    case KernelKind::bwd_dq: return "bwd_dq";
    case KernelKind::convert_dq: return "bwd_convert_dq";
    case KernelKind::reduce_dkdv: return "bwd_reduce_dkdv";
    case KernelKind::gemm: return "gemm";
  }
  return "?";
}

namespace {

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }
std::uint32_t rounded(double x) { return static_cast<std::uint32_t>(std::llround(x)); }

// Part `index` of `parts` of a byte total, so that the parts add up to the rounded total exactly.
double share(double total, std::uint32_t parts, std::uint32_t index) {
  const auto t = static_cast<std::uint64_t>(std::llround(total));
  return static_cast<double>(t / parts + (index < t % parts ? 1 : 0));
}

// What one wave issues of a GEMM's matrix instructions: `work` in units of the kernel's matrix
// work unit (arch::MatrixInstruction::work_unit), `issued` instructions (0: as many as `work`).
struct MatrixCount {
  std::uint32_t work = 0, issued = 0;
};

// Instruction counts per wave for one loop iteration, from a density and the tile shape.
struct LoopCosts {
  LoopCosts(const arch::MatrixInstruction& instruction, std::uint32_t waves_, std::uint32_t wave_size_)
      : mfma(&instruction), unit(instruction.work_unit()), waves(waves_), wave_size(wave_size_) {}
  const arch::MatrixInstruction* mfma = nullptr;
  arch::MatrixInstruction unit;  // what `MatrixCount::work` counts
  std::uint32_t waves = 1, wave_size = 64;
  std::uint64_t score_lanes(std::uint64_t rows, std::uint64_t cols) const {
    return ceil_div(rows * cols, static_cast<std::uint64_t>(waves) * wave_size);
  }
  // Matrix instructions per wave for an m x n x k GEMM (n: the output dimension the instruction's
  // N spans). Work: the GEMM's FLOPs in work units, shared among the waves. A variable-N instruction
  // (Hopper's wgmma) takes N = n rounded up to its step, at most its n; each instruction is issued by
  // every wave of the group of `simds` waves that executes it together (a warpgroup).
  MatrixCount gemm(std::uint64_t m, std::uint64_t n, std::uint64_t k) const {
    const std::uint64_t gemm_flops = 2 * m * n * k;
    MatrixCount c;
    c.work = static_cast<std::uint32_t>(ceil_div(ceil_div(gemm_flops, static_cast<std::uint64_t>(unit.flops())), waves));
    if (mfma->n_step == 0) return c;
    const std::uint64_t step = mfma->n_step;
    const std::uint64_t width = std::min<std::uint64_t>(mfma->n, ceil_div(n, step) * step);
    const std::uint64_t flops = 2 * std::uint64_t{mfma->m} * width * mfma->k * mfma->blocks;
    const std::uint64_t groups = std::max<std::uint64_t>(1, waves / mfma->simds);
    c.issued = static_cast<std::uint32_t>(ceil_div(ceil_div(gemm_flops, flops), groups));
    return c;
  }
};

const arch::MatrixInstruction& find_instruction(const arch::GpuSpec& gpu, const std::string& name,
                                                const std::string& kernel) {
  if (const arch::MatrixInstruction* i = gpu.cu.matrix_instruction(name)) return *i;
  std::string list;
  for (const auto& i : gpu.cu.matrix_instructions) list += (list.empty() ? "" : ", ") + i.name;
  throw ConfigError(ValueOrigin{"--kernel " + kernel, 0, 0, {}}, "mfma",
                    "matrix instruction '" + name + "' is not in the " + gpu.name +
                        " config (cu.matrix.instructions: " + list + "); pick another --arch or override fwd.mfma / bwd.mfma");
}

void check_fits(const arch::GpuSpec& gpu, const KernelProgram& kp, const std::string& kernel, std::string field = {}) {
  if (field.empty()) field = kp.kind == KernelKind::fwd ? "fwd" : "bwd";
  const ValueOrigin where{"--kernel " + kernel, 0, 0, {}};
  if ((kp.waves + kp.load_waves) * gpu.cu.wave_size > gpu.cu.max_workgroup_size) {
    throw ConfigError(where, field + ".waves",
                      std::to_string(kp.waves + kp.load_waves) + " waves of " + std::to_string(gpu.cu.wave_size) + " exceed the " +
                          gpu.name + " workgroup limit of " + std::to_string(gpu.cu.max_workgroup_size) + " threads");
  }
  if (kp.lds_bytes > gpu.cu.lds_max_per_workgroup.value) {
    throw ConfigError(where, field + ".lds_bytes",
                      std::to_string(kp.lds_bytes) + " B of LDS exceed the " + gpu.name + " limit of " +
                          arch::format(gpu.cu.lds_max_per_workgroup) + " per workgroup");
  }
  if (kp.lds_carveout != 0 && !gpu.l1.carveouts.empty() && !gpu.is_l1_carveout(kp.lds_carveout)) {
    std::string list;
    for (const arch::Bytes& c : gpu.l1.carveouts) list += (list.empty() ? "" : ", ") + arch::format(c);
    throw ConfigError(where, field + ".lds_carveout",
                      std::to_string(kp.lds_carveout) + " B is not a carve-out of the " + gpu.name + " (l1.carveouts: " + list + ")");
  }
  if (kp.vgprs > gpu.cu.max_vgprs_per_wave + 1) {
    throw ConfigError(where, field + ".vgprs",
                      std::to_string(kp.vgprs) + " registers exceed the " + gpu.name + " limit of " +
                          std::to_string(gpu.cu.max_vgprs_per_wave) + " per wave");
  }
}

OpCost fixed_cost(const FixedMix& m) {
  OpCost c;
  c.mfma = m.mfma;
  c.valu = m.valu;
  c.trans = m.trans;
  c.barriers = m.barriers;
  c.lds_read = m.lds_read_bytes;
  c.lds_write = m.lds_write_bytes;
  c.issue_only = m.issue_only;
  c.issue_wait = m.issue_wait;
  return c;
}

OpCost mem_cost(double lds_write) {
  OpCost c;
  c.lds_write = static_cast<std::uint64_t>(std::llround(lds_write));
  return c;
}

// A loop's tile load that writes `lds_write` bytes of LDS, each wave keeping `in_flight` bytes in
// flight (the schedule's loop_load_bytes_in_flight; 0: no limit of its own).
OpCost loop_load_cost(double lds_write, std::uint32_t in_flight) {
  OpCost c = mem_cost(lds_write);
  c.wave_bytes_in_flight = in_flight;
  return c;
}

// A load whose instructions look up each L1 unit `l1_lookups` times (schedule's *_l1_lookups).
OpCost lookups_cost(std::uint32_t l1_lookups) {
  OpCost c;
  c.l1_lookups = l1_lookups;
  return c;
}

OpCost mfma_cost(MatrixCount n, double lds_read) {
  OpCost c;
  c.mfma = n.work;
  c.mfma_issued = n.issued;
  c.lds_read = static_cast<std::uint64_t>(std::llround(lds_read));
  return c;
}

// `c` with `wavefronts` LDS wavefronts per wave (LoopDensity::lds_wavefronts_per_*).
OpCost with_wavefronts(OpCost c, double wavefronts) {
  c.lds_wavefronts = static_cast<std::uint64_t>(std::llround(wavefronts));
  return c;
}

// A loop's LDS reads per wave over its matrix products, from its density and input tiles' bytes:
// each product takes part `index` of `parts` of the bytes, of the wavefronts and of the issue-only
// instructions that grow with the tiles.
struct TileLds {
  TileLds(const LoopDensity& d, double tile_bytes)
      : bytes(d.lds_read_per_tile_byte * tile_bytes),
        wavefronts(d.lds_wavefronts_per_tile_byte * tile_bytes),
        issue_only(d.issue_only_per_tile_byte * tile_bytes) {}
  OpCost gemm(MatrixCount n, std::uint32_t parts, std::uint32_t index) const {
    OpCost c = with_wavefronts(mfma_cost(n, share(bytes, parts, index)), share(wavefronts, parts, index));
    c.issue_only = rounded(share(issue_only, parts, index));
    return c;
  }
  double bytes, wavefronts, issue_only;
};

OpCost vector_cost(std::uint32_t valu, std::uint32_t trans, std::uint32_t mask_valu, std::uint32_t issue_only) {
  OpCost c;
  c.valu = valu;
  c.trans = trans;
  c.mask_valu = mask_valu;
  c.issue_only = issue_only;
  return c;
}

// A loop body compiled with its density's fixed-latency waits on every compute operation (the
// matrix and vector ones, whose instructions the waves issue; memory operations' issue is the L1's).
CompiledBody with_issue_waits(CompiledBody body, const LoopDensity& d) {
  for (OpTemplate& op : body.ops) {
    if (op.pipe == Pipe::matrix || op.pipe == Pipe::vector) op.cost.issue_wait = static_cast<float>(d.issue_wait_per_instruction);
  }
  return body;
}

OpCost barrier_cost(std::uint32_t n) {
  OpCost c;
  c.barriers = n;
  return c;
}

// Sets the grid of a kernel whose outer blocks tile `rows` rows per head.
void set_grid(KernelProgram& kp, const Problem& p, std::uint64_t rows, std::uint32_t outer_rows, std::uint32_t heads,
              GridOrder grid, bool paired) {
  kp.outer_rows = outer_rows;
  kp.blocks = ceil_div(rows, outer_rows);
  kp.paired = paired && kp.blocks > 1;
  kp.grid_blocks = kp.paired ? ceil_div(kp.blocks, 2) : kp.blocks;
  kp.heads = heads;
  kp.batch = p.batch;
  kp.grid = grid;
  kp.group = p.group();
}

// GridOrder::longest_first under a mask (a dense grid is blocks_first, FA3's static order): the
// outer blocks by descending loop work, equal work in block order, and sections of the heads x
// batch whose loop tensors (`head_bytes` per grid head) fit `section_bytes`: the largest power of
// two that fits, at least one, times `per_kv_head` (FA3's forward scales its sections by the query
// heads per KV head, tile_scheduler.hpp); 0 bytes: one section of every head.
void order_longest_first(KernelProgram& kp, const Mask& mask, std::uint64_t head_bytes, std::uint32_t section_bytes,
                         std::uint32_t per_kv_head) {
  if (mask.is_dense()) {
    kp.grid = GridOrder::blocks_first;
    return;
  }
  std::vector<std::uint64_t> work(kp.blocks);
  for (std::uint64_t b = 0; b < kp.blocks; ++b) {
    const std::uint64_t outer0 = b * kp.outer_rows;
    work[b] = (kp.inner_is_keys ? mask.key_blocks(outer0, kp.outer_rows, kp.inner_rows)
                                : mask.query_blocks(outer0, kp.outer_rows, kp.inner_rows))
                  .size();
  }
  kp.block_order.resize(kp.blocks);
  for (std::uint32_t b = 0; b < kp.blocks; ++b) kp.block_order[b] = b;
  std::stable_sort(kp.block_order.begin(), kp.block_order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return work[a] > work[b]; });
  const std::uint64_t all = static_cast<std::uint64_t>(kp.heads) * kp.batch;
  if (section_bytes == 0) {
    kp.section_heads = std::max<std::uint64_t>(1, all);
    return;
  }
  const std::uint64_t fit = std::max<std::uint64_t>(1, section_bytes / std::max<std::uint64_t>(1, head_bytes));
  kp.section_heads = std::max<std::uint64_t>(1, std::min(all, std::bit_floor(fit) * per_kv_head));
}

// The bytes of one KV head's K and V: what a loop over key blocks streams per head.
std::uint64_t kv_head_bytes(const Problem& p) { return p.seqlen_k * (p.head_dim_qk + p.head_dim_v) * p.elem_bytes(); }

// The launch shape a looped kernel takes from its schedule (forward or backward).
template <class Schedule>
KernelProgram looped_kernel(KernelKind kind, const Schedule& s, const Mask& mask, std::uint32_t inner_rows) {
  KernelProgram kp;
  kp.kind = kind;
  kp.name = std::string(to_string(kind));
  kp.waves = s.waves;
  kp.load_waves = s.load_waves;
  kp.persistent = s.persistent;
  kp.vgprs = s.vgprs;
  kp.lds_bytes = s.lds_bytes;
  kp.lds_carveout = s.lds_carveout;
  kp.mfma = s.mfma;
  kp.mask = &mask;
  kp.inner_rows = inner_rows;
  kp.xcd_remap = s.xcd_remap;
  return kp;
}

KernelProgram forward(const Problem& p, const KernelSchedule& k, const Mask& mask, const arch::GpuSpec& gpu) {
  const FwdSchedule& s = k.fwd;
  KernelProgram kp = looped_kernel(KernelKind::fwd, s, mask, k.fwd_block_n(p));
  set_grid(kp, p, p.seqlen_q, s.block_m, p.heads_q, s.grid, s.pair_tiles && !mask.is_dense());
  kp.inner_is_keys = true;
  if (s.grid == GridOrder::longest_first) {
    order_longest_first(kp, mask, kv_head_bytes(p), s.l2_section_bytes, p.group());
  }

  const LoopCosts lc(find_instruction(gpu, s.mfma, k.name), s.waves, gpu.cu.wave_size);
  kp.mfma_flops = lc.unit.flops();
  const std::uint64_t bm = s.block_m, bn = kp.inner_rows, e = p.elem_bytes();
  const double k_tile = static_cast<double>(bn * p.head_dim_qk * e), v_tile = static_cast<double>(bn * p.head_dim_v * e);
  const std::uint64_t lanes = lc.score_lanes(bm, bn);
  const LoopDensity& d = s.loop;

  BodyBuilder pro("fwd prologue");
  pro.op("load_q", Action::load_q, Pipe::memory, lookups_cost(s.q_l1_lookups), {}, TensorId::q, RowsOf::outer)
      .op("setup", Action::barrier, Pipe::vector, fixed_cost(s.prologue), {"load_q"});
  kp.prologue = pro.compile();

  BodyBuilder body("fwd loop");
  const std::uint32_t in_flight = s.loop_load_bytes_in_flight;
  body.op("load_k", Action::load_k, Pipe::memory, loop_load_cost(d.lds_write_per_tile_byte * k_tile, in_flight), {}, TensorId::k,
          RowsOf::inner)
      .op("load_v", Action::load_v, Pipe::memory, loop_load_cost(d.lds_write_per_tile_byte * v_tile, in_flight), {}, TensorId::v,
          RowsOf::inner)
      .op("qk", Action::qk, Pipe::matrix, TileLds(d, k_tile).gemm(lc.gemm(bm, bn, p.head_dim_qk), 1, 0), {"load_k"})
      .op("softmax", Action::online_softmax, Pipe::vector,
          with_wavefronts(vector_cost(rounded(d.valu_per_score_lane * lanes), static_cast<std::uint32_t>(lanes) + d.extra_trans,
                                      rounded(d.mask_valu_per_score_lane * lanes), rounded(d.issue_only_per_score_lane * lanes)),
                          d.lds_wavefronts_per_score_lane * static_cast<double>(lanes)),
          {"qk"})
      .op("pv", Action::pv, Pipe::matrix, TileLds(d, v_tile).gemm(lc.gemm(bm, p.head_dim_v, bn), 1, 0), {"softmax", "load_v"})
      .op("sync", Action::barrier, Pipe::sync, barrier_cost(d.barriers), {"pv"})
      .carried("load_k", "qk", static_cast<std::uint16_t>(s.stages))
      .carried("load_v", "pv", static_cast<std::uint16_t>(s.stages))
      .carried("softmax", "softmax", 1)
      .carried("pv", "pv", 1);
  kp.body = with_issue_waits(body.compile(), d);

  BodyBuilder epi("fwd epilogue");
  epi.op("finalize", Action::finalize, Pipe::vector, fixed_cost(s.epilogue))
      .op("store_o", Action::store_o, Pipe::memory, {}, {"finalize"}, TensorId::o, RowsOf::outer)
      .op("store_lse", Action::store_lse, Pipe::memory, {}, {"finalize"}, TensorId::lse, RowsOf::outer);
  kp.epilogue = epi.compile();
  check_fits(gpu, kp, k.name);
  return kp;
}

// A loop-free kernel's waves per workgroup: its resources' waves, else the main kernel's.
std::uint32_t rows_kernel_waves(const KernelSchedule& k, const RowsKernelResources& r) {
  return r.waves ? r.waves : k.bwd.waves;
}

// A loop-free kernel over row blocks of the query rows (preprocess, zero, convert) or key rows
// (reduce), launched with `resources` (`field`: their schedule field, named by a fit error).
KernelProgram rows_kernel(const Problem& p, const KernelSchedule& k, const arch::GpuSpec& gpu, KernelKind kind,
                          const RowsKernelResources& resources, const std::string& field, std::uint32_t rows,
                          std::uint32_t heads, bool heads_are_kv, const BodyBuilder& ops) {
  KernelProgram kp;
  kp.kind = kind;
  kp.name = std::string(to_string(kind));
  kp.waves = rows_kernel_waves(k, resources);
  kp.vgprs = resources.vgprs;  // BwdSchedule::rows_kernels_source
  kp.lds_bytes = resources.lds_bytes;
  check_fits(gpu, kp, k.name, field);
  set_grid(kp, p, heads_are_kv ? p.seqlen_k : p.seqlen_q, rows, heads, GridOrder::blocks_first, false);
  kp.heads_are_kv = heads_are_kv;
  kp.prologue = ops.compile();
  return kp;
}

// The ops both backward loops share: recompute S and P, dP, dS. `q_side` loops stream Q and dO
// (the main kernel); the others stream K and V with Q, dO and the row statistics held from the prologue.
void backward_loop_ops(BodyBuilder& b, const LoopCosts& lc, const LoopDensity& d, const Problem& p, std::uint64_t bm,
                       std::uint64_t bn, bool q_side, double tile_bytes, std::uint32_t gemms) {
  // Each of the loop's `gemms` matrix products (S, dP, dV, dK, dQ) reads its share of the LDS bytes.
  const std::uint64_t lanes = lc.score_lanes(bm, bn);
  const TileLds lds(d, tile_bytes);
  const std::uint32_t valu = rounded(d.valu_per_score_lane * lanes);
  const std::uint32_t mask = rounded(d.mask_valu_per_score_lane * lanes);
  const std::uint32_t issue_only = rounded(d.issue_only_per_score_lane * lanes);  // split as the VALU
  const double score_wavefronts = d.lds_wavefronts_per_score_lane * static_cast<double>(lanes);  // likewise
  using Names = std::vector<std::string>;
  b.op("scores", Action::scores, Pipe::matrix, lds.gemm(lc.gemm(bm, bn, p.head_dim_qk), gemms, 0),
       q_side ? Names{"load_q"} : Names{"load_k"})
      .op("probs", Action::probs, Pipe::vector,
          with_wavefronts(vector_cost(valu / 2, static_cast<std::uint32_t>(lanes) + d.extra_trans, mask, issue_only / 2),
                          share(score_wavefronts, 2, 0)),
          q_side ? Names{"scores", "load_lse"} : Names{"scores"})
      .op("dp", Action::dp, Pipe::matrix, lds.gemm(lc.gemm(bm, bn, p.head_dim_v), gemms, 1),
          q_side ? Names{"load_do"} : Names{"load_v"})
      .op("ds", Action::ds, Pipe::vector,
          with_wavefronts(vector_cost(valu - valu / 2, 0, 0, issue_only - issue_only / 2), share(score_wavefronts, 2, 1)),
          q_side ? Names{"probs", "dp", "load_delta"} : Names{"probs", "dp"});
}

KernelProgram backward_main(const Problem& p, const KernelSchedule& k, const Mask& mask, const arch::GpuSpec& gpu,
                            bool expanded) {
  const BwdSchedule& s = k.bwd;
  KernelProgram kp = looped_kernel(KernelKind::bwd_main, s, mask, k.bwd_block_m(p));
  kp.atomic_requests_per_sector = s.atomic_requests_per_sector;
  const bool kv_loop = s.gqa == GqaMode::kv_loop;
  set_grid(kp, p, p.seqlen_k, s.block_n, kv_loop ? p.heads_kv : p.heads_q, s.grid, s.pair_blocks && !mask.is_dense());
  kp.heads_are_kv = kv_loop;
  kp.walks_group = kv_loop;
  kp.inner_is_keys = false;
  if (s.grid == GridOrder::longest_first) {  // a section holds Q, dO and the fp32 dQ accumulator
    const std::uint64_t head_bytes = p.seqlen_q * ((p.head_dim_qk + p.head_dim_v) * p.elem_bytes() + p.head_dim_qk * 4);
    order_longest_first(kp, mask, head_bytes * (kv_loop ? p.group() : 1), s.l2_section_bytes, 1);
  }

  const LoopCosts lc(find_instruction(gpu, s.mfma, k.name), s.waves, gpu.cu.wave_size);
  kp.mfma_flops = lc.unit.flops();
  const std::uint64_t bm = kp.inner_rows, bn = s.block_n, e = p.elem_bytes();
  const double q_tile = static_cast<double>(bm * p.head_dim_qk * e), do_tile = static_cast<double>(bm * p.head_dim_v * 2);
  const LoopDensity& d = s.loop;

  BodyBuilder pro("bwd_dkdv prologue");
  pro.op("load_k", Action::load_k, Pipe::memory, lookups_cost(s.k_l1_lookups), {}, TensorId::k, RowsOf::outer)
      .op("load_v", Action::load_v, Pipe::memory, lookups_cost(s.v_l1_lookups), {}, TensorId::v, RowsOf::outer)
      .op("setup", Action::barrier, Pipe::vector, fixed_cost(s.prologue), {"load_k", "load_v"});
  kp.prologue = pro.compile();

  BodyBuilder b("bwd_dkdv loop");
  const std::uint32_t in_flight = s.loop_load_bytes_in_flight;
  b.op("load_q", Action::load_q, Pipe::memory, loop_load_cost(d.lds_write_per_tile_byte * q_tile, in_flight), {}, TensorId::q,
       RowsOf::inner)
      .op("load_do", Action::load_do, Pipe::memory, loop_load_cost(d.lds_write_per_tile_byte * do_tile, in_flight), {},
          TensorId::d_o, RowsOf::inner)
      .op("load_lse", Action::load_lse, Pipe::memory, loop_load_cost(0, in_flight), {}, TensorId::lse, RowsOf::inner)
      .op("load_delta", Action::load_delta, Pipe::memory, loop_load_cost(0, in_flight), {}, TensorId::delta, RowsOf::inner);
  const std::uint32_t gemms = s.dq == DqMode::two_pass ? 4 : 5;
  backward_loop_ops(b, lc, d, p, bm, bn, true, q_tile + do_tile, gemms);
  const TileLds lds(d, q_tile + do_tile);
  b.op("dv_acc", Action::dv_acc, Pipe::matrix, lds.gemm(lc.gemm(bn, p.head_dim_v, bm), gemms, 2), {"probs", "load_do"})
      .op("dk_acc", Action::dk_acc, Pipe::matrix, lds.gemm(lc.gemm(bn, p.head_dim_qk, bm), gemms, 3), {"ds", "load_q"})
      .carried("dv_acc", "dv_acc", 1)
      .carried("dk_acc", "dk_acc", 1)
      .carried("load_q", "dk_acc", static_cast<std::uint16_t>(s.stages))
      .carried("load_do", "dv_acc", static_cast<std::uint16_t>(s.stages));
  std::vector<std::string> last{"dv_acc", "dk_acc"};
  if (s.dq != DqMode::two_pass) {
    b.op("dq_part", Action::dq_part, Pipe::matrix, lds.gemm(lc.gemm(bm, p.head_dim_qk, bn), 5, 4), {"ds"});
    if (s.dq == DqMode::split) {
      b.op("store_dq_acc", Action::store_dq_acc, Pipe::memory, {}, {"dq_part"}, TensorId::dq_acc, RowsOf::inner);
      last.push_back("store_dq_acc");
    } else {
      b.op("atomic_dq", Action::atomic_dq, Pipe::memory, {}, {"dq_part"}, s.dq_acc_fp32 ? TensorId::dq_acc : TensorId::dq,
           RowsOf::inner);
      last.push_back("atomic_dq");
    }
  }
  b.op("sync", Action::barrier, Pipe::sync, barrier_cost(d.barriers), last);
  kp.body = with_issue_waits(b.compile(), d);

  BodyBuilder epi("bwd_dkdv epilogue");
  epi.op("finalize", Action::finalize, Pipe::vector, fixed_cost(s.epilogue));
  if (expanded) {
    epi.op("store_dk", Action::store_dk_expanded, Pipe::memory, {}, {"finalize"}, TensorId::dk_expanded, RowsOf::outer)
        .op("store_dv", Action::store_dv_expanded, Pipe::memory, {}, {"finalize"}, TensorId::dv_expanded, RowsOf::outer);
  } else {
    epi.op("store_dk", Action::store_dk, Pipe::memory, {}, {"finalize"}, TensorId::dk, RowsOf::outer)
        .op("store_dv", Action::store_dv, Pipe::memory, {}, {"finalize"}, TensorId::dv, RowsOf::outer);
  }
  kp.epilogue = epi.compile();
  check_fits(gpu, kp, k.name);
  return kp;
}

KernelProgram backward_dq(const Problem& p, const KernelSchedule& k, const Mask& mask, const arch::GpuSpec& gpu) {
  const BwdSchedule& s = k.bwd;
  KernelProgram kp = looped_kernel(KernelKind::bwd_dq, s, mask, s.dq_block_n);
  set_grid(kp, p, p.seqlen_q, s.dq_block_m, p.heads_q, s.grid, false);
  kp.inner_is_keys = true;
  if (s.grid == GridOrder::longest_first) {  // its loop streams K and V, as the forward's
    order_longest_first(kp, mask, kv_head_bytes(p), s.l2_section_bytes, p.group());
  }

  const LoopCosts lc(find_instruction(gpu, s.mfma, k.name), s.waves, gpu.cu.wave_size);
  kp.mfma_flops = lc.unit.flops();
  const std::uint64_t bm = s.dq_block_m, bn = s.dq_block_n, e = p.elem_bytes();
  const double k_tile = static_cast<double>(bn * p.head_dim_qk * e), v_tile = static_cast<double>(bn * p.head_dim_v * e);
  const LoopDensity& d = s.dq_loop;

  BodyBuilder pro("bwd_dq prologue");
  pro.op("load_q", Action::load_q, Pipe::memory, {}, {}, TensorId::q, RowsOf::outer)
      .op("load_do", Action::load_do, Pipe::memory, {}, {}, TensorId::d_o, RowsOf::outer)
      .op("load_lse", Action::load_lse, Pipe::memory, {}, {}, TensorId::lse, RowsOf::outer)
      .op("load_delta", Action::load_delta, Pipe::memory, {}, {}, TensorId::delta, RowsOf::outer);
  kp.prologue = pro.compile();

  BodyBuilder b("bwd_dq loop");
  b.op("load_k", Action::load_k, Pipe::memory, mem_cost(d.lds_write_per_tile_byte * k_tile), {}, TensorId::k, RowsOf::inner)
      .op("load_v", Action::load_v, Pipe::memory, mem_cost(d.lds_write_per_tile_byte * v_tile), {}, TensorId::v, RowsOf::inner);
  backward_loop_ops(b, lc, d, p, bm, bn, false, k_tile + v_tile, 3);
  b.op("dq_acc", Action::dq_acc_local, Pipe::matrix, TileLds(d, k_tile + v_tile).gemm(lc.gemm(bm, p.head_dim_qk, bn), 3, 2),
       {"ds", "load_k"})
      .op("sync", Action::barrier, Pipe::sync, barrier_cost(d.barriers), {"dq_acc"})
      .carried("dq_acc", "dq_acc", 1)
      .carried("load_k", "dq_acc", static_cast<std::uint16_t>(s.stages))
      .carried("load_v", "dp", static_cast<std::uint16_t>(s.stages));
  kp.body = with_issue_waits(b.compile(), d);

  BodyBuilder epi("bwd_dq epilogue");
  epi.op("store_dq", Action::store_dq, Pipe::memory, {}, {}, TensorId::dq, RowsOf::outer);
  kp.epilogue = epi.compile();
  check_fits(gpu, kp, k.name);
  return kp;
}

// Bytes in decimal gigabytes, as memory capacities are stated ("192.0 GB").
std::string gigabytes(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GB", static_cast<double>(bytes) / 1e9);
  return text;
}

}  // namespace

void check_fits_memory(const TensorSet& tensors, const arch::GpuSpec& gpu, const std::string& origin, const std::string& what) {
  if (tensors.end_address() <= gpu.hbm.capacity.value) return;
  throw arch::ConfigError(arch::ValueOrigin{origin, 0, 0, {}}, "hbm.capacity",
                          what + " need " + gigabytes(tensors.end_address()) + ", more than the " +
                              gigabytes(gpu.hbm.capacity.value) + " the " + gpu.name + " holds");
}

PassPrograms build_pass(const Problem& p, const KernelSchedule& k, Direction dir, const arch::GpuSpec& gpu) {
  PassPrograms pp;
  pp.problem = p;
  pp.schedule = k;
  pp.direction = dir;
  pp.mask = std::make_unique<Mask>(p);
  pp.wave_size = gpu.cu.wave_size;
  const BwdSchedule& s = k.bwd;
  const bool expanded = dir == Direction::bwd && s.gqa == GqaMode::expand && p.group() > 1;
  const bool uses_dq_acc = dir == Direction::bwd && s.dq != DqMode::two_pass && s.dq_acc_fp32;
  if (dir == Direction::bwd && s.dq == DqMode::split) pp.dq_slices = static_cast<std::uint32_t>(ceil_div(p.seqlen_k, s.block_n));
  if (uses_dq_acc && s.dq == DqMode::atomic) pp.dq_slices = 1;
  pp.tensors = std::make_unique<TensorSet>(p, TensorNeeds{dir == Direction::bwd, uses_dq_acc ? pp.dq_slices : 0, expanded});
  check_fits_memory(*pp.tensors, gpu, "problem " + p.describe(), "the " + std::string(to_string(dir)) + " pass's tensors");

  if (dir == Direction::fwd) {
    pp.kernels.push_back(forward(p, k, *pp.mask, gpu));
    return pp;
  }
  {
    BodyBuilder ops("bwd_preprocess");
    ops.op("load_o", Action::load_o, Pipe::memory, lookups_cost(s.preprocess_l1_lookups), {}, TensorId::o, RowsOf::outer)
        .op("load_do", Action::load_do, Pipe::memory, lookups_cost(s.preprocess_l1_lookups), {}, TensorId::d_o, RowsOf::outer)
        .op("row_dot", Action::row_dot, Pipe::vector, fixed_cost(s.preprocess), {"load_o", "load_do"})
        .op("store_delta", Action::store_delta, Pipe::memory, {}, {"row_dot"}, TensorId::delta, RowsOf::outer);
    pp.kernels.push_back(
        rows_kernel(p, k, gpu, KernelKind::preprocess, s.preprocess_kernel, "bwd.preprocess_kernel", s.preprocess_rows,
                    p.heads_q, false, ops));
  }
  const bool needs_zero = (s.dq != DqMode::two_pass);  // atomics (fp32 or 16-bit) and split slices start from zero
  if (needs_zero) {
    BodyBuilder ops("bwd_zero_dq_acc");
    ops.op("zero", Action::zero_dq_acc, Pipe::memory, {}, {}, uses_dq_acc ? TensorId::dq_acc : TensorId::dq, RowsOf::outer);
    (s.zero_dq_acc ? pp.kernels : pp.caller_before)
        .push_back(rows_kernel(p, k, gpu, KernelKind::zero_dq_acc, s.zero_kernel, "bwd.zero_kernel", s.convert_rows,
                               p.heads_q, false, ops));
  }
  pp.kernels.push_back(backward_main(p, k, *pp.mask, gpu, expanded));
  if (s.dq == DqMode::two_pass) pp.kernels.push_back(backward_dq(p, k, *pp.mask, gpu));
  if (uses_dq_acc) {
    BodyBuilder ops("bwd_convert_dq");
    ops.op("load_dq_acc", Action::load_dq_acc, Pipe::memory, {}, {}, TensorId::dq_acc, RowsOf::outer)
        .op("sum", Action::sum_slices, Pipe::vector, fixed_cost(s.convert), {"load_dq_acc"})
        .op("store_dq", Action::store_dq, Pipe::memory, {}, {"sum"}, TensorId::dq, RowsOf::outer);
    pp.kernels.push_back(rows_kernel(p, k, gpu, KernelKind::convert_dq, s.convert_kernel, "bwd.convert_kernel",
                                     s.convert_rows, p.heads_q, false, ops));
  }
  if (expanded) {
    // The group sum (at::sum_out in aiter's and FlashAttention-2's interfaces): one elementwise
    // pass; its VALU count is an estimate of one add per element per group member.
    FixedMix sum;
    sum.valu = static_cast<std::uint32_t>(ceil_div(std::uint64_t{64} * (p.head_dim_qk + p.head_dim_v) * p.group(),
                                                   std::uint64_t{rows_kernel_waves(k, s.reduce_kernel)} * gpu.cu.wave_size));
    sum.source = "estimate (one add per element and group member)";
    BodyBuilder ops("bwd_reduce_dkdv");
    ops.op("load_dk", Action::load_dk_expanded, Pipe::memory, {}, {}, TensorId::dk_expanded, RowsOf::outer)
        .op("load_dv", Action::load_dv_expanded, Pipe::memory, {}, {}, TensorId::dv_expanded, RowsOf::outer)
        .op("sum", Action::sum_group, Pipe::vector, fixed_cost(sum), {"load_dk", "load_dv"})
        .op("store_dk", Action::store_dk, Pipe::memory, {}, {"sum"}, TensorId::dk, RowsOf::outer)
        .op("store_dv", Action::store_dv, Pipe::memory, {}, {"sum"}, TensorId::dv, RowsOf::outer);
    (s.sum_dkdv ? pp.kernels : pp.caller_after)
        .push_back(rows_kernel(p, k, gpu, KernelKind::reduce_dkdv, s.reduce_kernel, "bwd.reduce_kernel", 64, p.heads_kv, true, ops));
  }
  return pp;
}

KernelProgram::GridCoord KernelProgram::grid_coord(std::uint64_t dispatch_id) const {
  const std::uint64_t wg = remap_for_xcds(dispatch_id, workgroups(), xcd_remap);
  if (grid == GridOrder::blocks_first) return {wg % grid_blocks, (wg / grid_blocks) % heads, wg / grid_blocks / heads};
  if (grid == GridOrder::longest_first) {
    // Sections of section_heads heads x batch in turn; within one the heads vary fastest, the blocks
    // in block_order (FA3's tile_scheduler.hpp with its l2 divisions).
    const std::uint64_t all = static_cast<std::uint64_t>(heads) * batch, per_section = section_heads * grid_blocks;
    const std::uint64_t section = wg / per_section, within = wg % per_section;
    const std::uint64_t width = section < all / section_heads ? section_heads : all % section_heads;
    const std::uint64_t hb = section * section_heads + within % width;
    return {block_order[within / width], hb % heads, hb / heads};
  }
  return {(wg / heads) % grid_blocks, wg % heads, wg / heads / grid_blocks};
}

std::uint32_t KernelProgram::passes(std::uint64_t dispatch_id) const {
  if (!paired) return 1;
  const std::uint64_t t = grid_coord(dispatch_id).block;
  return (t != blocks - 1 - t) ? 2 : 1;
}

std::uint64_t remap_for_xcds(std::uint64_t id, std::uint64_t workgroups, std::uint32_t xcds) {
  if (xcds <= 1 || workgroups == 0) return id;
  const std::uint64_t n = xcds, q = workgroups / n, r = workgroups % n;
  const std::uint64_t xcd = id % n, local = id / n;
  const std::uint64_t chunk_start = xcd < r ? xcd * (q + 1) : r * (q + 1) + (xcd - r) * q;
  return chunk_start + local;
}

Pass KernelProgram::pass(std::uint64_t dispatch_id, std::uint32_t i) const {
  const GridCoord g = grid_coord(dispatch_id);
  Pass ps;
  ps.b = static_cast<std::uint32_t>(g.batch);
  ps.head = static_cast<std::uint32_t>(g.head);
  ps.outer = (i == 0) ? g.block : blocks - 1 - g.block;
  ps.inner_heads = walks_group ? group : 1;
  ps.inner_head0 = walks_group ? ps.head * group : ps.head;
  if (fixed_inner > 0) {
    ps.inner = {0, fixed_inner};
  } else if (inner_rows == 0 || !mask) {
    ps.inner = {};
  } else if (inner_is_keys) {
    ps.inner = mask->key_blocks(ps.outer * outer_rows, outer_rows, inner_rows);
  } else {
    ps.inner = mask->query_blocks(ps.outer * outer_rows, outer_rows, inner_rows);
  }
  return ps;
}

std::uint64_t KernelProgram::tile_ops(std::uint64_t wg) const {
  std::uint64_t ops = 0;
  for (std::uint32_t i = 0; i < passes(wg); ++i) {
    ops += prologue.ops.size() + epilogue.ops.size() + pass(wg, i).iterations() * body.ops.size();
  }
  return ops;
}

bool iteration_masked(const KernelProgram& kp, const Pass& pass, std::uint64_t iteration) {
  if (!kp.mask) return false;
  const std::uint64_t inner0 = iteration_block(pass, iteration) * kp.inner_rows;
  const std::uint64_t outer0 = pass.outer * kp.outer_rows;
  const TileMask m = kp.inner_is_keys ? kp.mask->classify(outer0, kp.outer_rows, inner0, kp.inner_rows)
                                      : kp.mask->classify(inner0, kp.inner_rows, outer0, kp.outer_rows);
  return m != TileMask::full;
}

Range full_inner_blocks(const KernelProgram& kp, const Pass& pass) {
  if (!kp.mask) return {0, ~std::uint64_t{0}};
  const std::uint64_t outer0 = pass.outer * kp.outer_rows;
  return kp.inner_is_keys ? kp.mask->full_key_blocks(outer0, kp.outer_rows, kp.inner_rows)
                          : kp.mask->full_query_blocks(outer0, kp.outer_rows, kp.inner_rows);
}

WorkgroupCursor::WorkgroupCursor(const PassPrograms& pp, const KernelProgram& kp, std::uint64_t wg,
                                 const OpFilter* filter, std::uint32_t batch)
    : pp_(pp), kp_(kp), wg_(wg), npasses_(kp.passes(wg)), filter_(filter), batch_(std::max<std::uint32_t>(1, batch)) {}

bool WorkgroupCursor::start_pass() {
  if (pass_index_ >= npasses_) return false;
  pass_ = kp_.pass(wg_, pass_index_);
  full_ = full_inner_blocks(kp_, pass_);
  body_ = 0;
  op_ = 0;
  iteration_ = 0;
  return true;
}

bool WorkgroupCursor::next(TileOp& out) {
  if (done_) return false;
  if (!started_) {
    started_ = true;
    if (!start_pass()) {
      done_ = true;
      return false;
    }
  }
  for (;;) {
    const CompiledBody& b = body_ == 0 ? kp_.prologue : body_ == 1 ? kp_.body : kp_.epilogue;
    const std::uint64_t iterations = body_ == 1 ? pass_.iterations() : 1;
    // The first and the last iteration are steps of their own (the pipeline fills and drains as
    // in the program), the iterations between them batches of batch_.
    const std::uint64_t middle = iterations > 2 ? (iterations - 2 + batch_ - 1) / batch_ : 0;
    const std::uint64_t reps = body_ != 1 ? 1 : std::min<std::uint64_t>(iterations, 2) + middle;
    const std::size_t size = filter_ ? filter_->ops[body_].size() : b.ops.size();
    if (op_ < size && iteration_ < reps) {
      if (op_ == 0) {
        first_ = body_ == 1 ? step_first(iteration_, iterations) : 0;
        count_ = body_ != 1 ? 1
                            : static_cast<std::uint32_t>(
                                  (iteration_ + 1 == reps ? iterations : step_first(iteration_ + 1, iterations)) - first_);
        masked_count_ = 0;
        for (std::uint32_t i = 0; body_ == 1 && i < count_; ++i) {
          const std::uint64_t block = iteration_block(pass_, first_ + i);
          masked_count_ += block < full_.first || block >= full_.last ? 1 : 0;  // iteration_masked
        }
      }
      const std::uint16_t index = filter_ ? filter_->ops[body_][op_] : op_;
      out.op = &b.ops[index];
      out.index = index;
      out.body = body_;
      out.masked = masked_count_ > 0;
      out.pass = pass_index_;
      out.iteration = iteration_;
      out.first = first_;
      out.count = count_;
      out.masked_count = masked_count_;
      if (++op_ == size) {
        op_ = 0;
        ++iteration_;
      }
      return true;
    }
    op_ = 0;
    iteration_ = 0;
    if (++body_ == 3) {
      ++pass_index_;
      if (!start_pass()) {
        done_ = true;
        return false;
      }
    }
  }
}

}  // namespace attnsim::workloads
