#include "workloads/gemm.h"

#include <array>

#include "arch/config_error.h"
#include "workloads/kernel_program.h"

namespace attnsim::workloads {

using arch::ConfigError;
using arch::ValueOrigin;

GemmTiling gemm_tiling(const std::string& mfma, std::uint32_t wave_size, std::uint32_t tile_m, std::uint32_t tile_n,
                       std::uint32_t tile_k) {
  GemmTiling t;
  t.mfma = mfma;
  t.tile_m = tile_m;
  t.tile_n = tile_n;
  t.tile_k = tile_k;
  // Estimate (no code object of AMD's MAF kernel is public): one packing conversion per pair of
  // fp32 accumulators, each wave holding a (tile_m / waves_m) x (tile_n / waves_n) block.
  t.epilogue_valu = (t.tile_m / t.waves_m) * (t.tile_n / t.waves_n) / wave_size / 2;
  return t;
}

namespace {

// A [heads][rows][cols] view of a row-major matrix of `rows` x (heads * cols): head h is columns
// [h cols, (h + 1) cols) of every row, which is how the tile programs address a column slice.
TensorDesc column_slices(std::uint64_t rows, std::uint64_t total_cols, std::uint32_t cols, std::uint32_t elem_bytes) {
  TensorDesc t;
  t.present = true;
  t.elem_bytes = elem_bytes;
  t.batch = 1;
  t.heads = static_cast<std::uint32_t>(total_cols / cols);
  t.rows = rows;
  t.cols = cols;
  t.stride_row = total_cols;
  t.stride_head = cols;
  t.stride_batch = rows * total_cols;
  t.stride_slice = t.stride_batch;
  return t;
}

OpCost lds_cost(std::uint64_t read, std::uint64_t write) {
  OpCost c;
  c.lds_read = read;
  c.lds_write = write;
  return c;
}

void check_dimension(std::uint64_t value, std::uint32_t tile, const char* name, const std::string& origin) {
  if (value == 0 || tile == 0 || value % tile != 0) {
    throw ConfigError(ValueOrigin{origin, 0, 0, {}}, name,
                      std::to_string(value) + " is not a positive multiple of the " + std::to_string(tile) +
                          " tile (the GEMM microbenchmark runs whole tiles)");
  }
}

}  // namespace

PassPrograms build_gemm(const GemmShape& s, const GemmTiling& t, const arch::GpuSpec& gpu, const std::string& origin) {
  check_dimension(s.m, t.tile_m, "m", origin);
  check_dimension(s.n, t.tile_n, "n", origin);
  check_dimension(s.k, t.tile_k, "k", origin);
  // The engine times every K slice of every workgroup: bound the work so that a typo cannot turn
  // into hours of simulation (AMD's MAF shape is 156,256 slices; the bound is about a hundred times that).
  const std::uint64_t slices = (s.m / t.tile_m) * (s.n / t.tile_n) * (s.k / t.tile_k);
  if (s.m > kMaxGemmDimension || s.n > kMaxGemmDimension || s.k > kMaxGemmDimension || slices > kMaxGemmSlices) {
    throw ConfigError(ValueOrigin{origin, 0, 0, {}}, "shape",
                      "at most " + std::to_string(kMaxGemmDimension) + " per dimension and " +
                          std::to_string(kMaxGemmSlices) + " workgroup K slices (this shape has " +
                          std::to_string(slices) + ")");
  }
  const arch::MatrixInstruction* mfma = gpu.cu.matrix_instruction(t.mfma);
  if (!mfma || mfma->dtype != s.dtype) {
    throw ConfigError(ValueOrigin{origin, 0, 0, {}}, "mfma",
                      "'" + t.mfma + "' is not a " + std::string(arch::to_string(s.dtype)) + " matrix instruction of " +
                          gpu.name);
  }
  const std::uint32_t wave_m = t.waves_m ? t.tile_m / t.waves_m : 0, wave_n = t.waves_n ? t.tile_n / t.waves_n : 0;
  if (wave_m == 0 || wave_n == 0 || t.tile_m % t.waves_m || t.tile_n % t.waves_n || wave_m % mfma->m ||
      wave_n % (mfma->n * mfma->blocks) || t.tile_k % (2 * mfma->k)) {
    throw ConfigError(ValueOrigin{origin, 0, 0, {}}, "tile",
                      std::to_string(t.tile_m) + "x" + std::to_string(t.tile_n) + "x" + std::to_string(t.tile_k) +
                          " over " + std::to_string(t.waves_m) + "x" + std::to_string(t.waves_n) +
                          " waves does not split into " + mfma->name + " blocks in two K halves");
  }
  const std::uint32_t e = s.dtype == arch::Dtype::fp8 ? 1 : 2;

  PassPrograms pp;
  pp.problem.dtype = s.dtype;
  pp.schedule.name = "gemm";
  pp.schedule.source = "attnsim GEMM microbenchmark (workloads/gemm.h)";
  pp.direction = Direction::fwd;
  pp.wave_size = gpu.cu.wave_size;
  std::array<TensorDesc, kTensorCount> descs{};
  descs[static_cast<std::size_t>(TensorId::gemm_a)] = column_slices(s.m, s.k, t.tile_k, e);
  descs[static_cast<std::size_t>(TensorId::gemm_b)] = column_slices(s.n, s.k, t.tile_k, e);
  descs[static_cast<std::size_t>(TensorId::gemm_c)] = column_slices(s.m, s.n, t.tile_n, 2);
  pp.tensors = std::make_unique<TensorSet>(descs);
  check_fits_memory(*pp.tensors, gpu, origin, "the GEMM's matrices");

  KernelProgram kp;
  kp.kind = KernelKind::gemm;
  kp.name = "gemm";
  kp.waves = t.waves_m * t.waves_n;
  kp.vgprs = t.vgprs;
  const std::uint64_t slice_bytes = static_cast<std::uint64_t>(t.tile_m + t.tile_n) * t.tile_k * e;  // A and B
  kp.lds_bytes = static_cast<std::uint32_t>(slice_bytes);
  kp.mfma = mfma->name;
  const arch::MatrixInstruction unit = mfma->work_unit();  // what OpCost::mfma counts
  kp.mfma_flops = unit.flops();
  kp.outer_rows = t.tile_m;
  kp.inner_rows = t.tile_n;
  kp.blocks = kp.grid_blocks = s.m / t.tile_m;
  kp.heads = static_cast<std::uint32_t>(s.n / t.tile_n);
  kp.batch = 1;
  kp.grid = GridOrder::blocks_first;
  kp.fixed_inner = s.k / t.tile_k;

  // Per wave and K slice: its share of the slice written to the LDS; its operand rows read back
  // in two halves of the slice; the MFMAs of its block in two halves.
  const std::uint64_t stage_bytes = slice_bytes / kp.waves;
  const std::uint64_t operand_half = static_cast<std::uint64_t>(wave_m + wave_n) * (t.tile_k / 2) * e;
  OpCost mma;
  const double half_slice_flops = 2.0 * wave_m * wave_n * (t.tile_k / 2);  // one wave's block, half a K slice
  mma.mfma = static_cast<std::uint32_t>(half_slice_flops / unit.flops());
  if (mfma->n_step) mma.mfma_issued = static_cast<std::uint32_t>(half_slice_flops / mfma->flops());
  OpCost barrier;
  barrier.barriers = 1;
  BodyBuilder body("gemm loop");
  body.program_order()
      .op("load_a", Action::load_a, Pipe::memory, {}, {}, TensorId::gemm_a, RowsOf::outer)
      .op("load_b", Action::load_b, Pipe::memory, {}, {}, TensorId::gemm_b, RowsOf::inner)
      .op("stage", Action::lds_stage, Pipe::lds, lds_cost(0, stage_bytes), {"load_a", "load_b"})
      .op("sync", Action::barrier, Pipe::sync, barrier, {"stage"})  // every wave's slice is in the LDS
      .op("operands_0", Action::lds_operands, Pipe::lds, lds_cost(operand_half, 0), {"sync"})
      .op("mma_0", Action::mma, Pipe::matrix, mma, {"operands_0"})
      // The LDS serves the halves in order; the matrix pipe runs the halves in order.
      .op("operands_1", Action::lds_operands, Pipe::lds, lds_cost(operand_half, 0), {"operands_0"})
      .op("mma_1", Action::mma, Pipe::matrix, mma, {"operands_1"})
      // Registers hold `prefetch` slices in flight; the LDS buffer is free once the last slice's
      // operands are read; each half's operand registers are free once its MFMAs have run.
      .carried("load_a", "stage", static_cast<std::uint16_t>(t.prefetch))
      .carried("load_b", "stage", static_cast<std::uint16_t>(t.prefetch))
      .carried("stage", "operands_1", 1)
      .carried("operands_0", "mma_0", 1)
      .carried("operands_1", "mma_1", 1);
  kp.body = body.compile();
  BodyBuilder epi("gemm epilogue");
  OpCost convert;
  convert.valu = t.epilogue_valu;
  epi.op("convert", Action::finalize, Pipe::vector, convert)
      .op("store_c", Action::store_c, Pipe::memory, {}, {"convert"}, TensorId::gemm_c, RowsOf::outer);
  kp.epilogue = epi.compile();

  const ValueOrigin where{origin, 0, 0, {}};
  if (kp.waves * gpu.cu.wave_size > gpu.cu.max_workgroup_size || kp.vgprs > gpu.cu.max_vgprs_per_wave ||
      kp.lds_bytes > gpu.cu.lds_max_per_workgroup.value) {
    throw ConfigError(where, "tile",
                      "a workgroup of " + std::to_string(kp.waves) + " waves, " + std::to_string(kp.vgprs) +
                          " registers per wave and " + std::to_string(kp.lds_bytes) + " B of LDS does not fit a " +
                          gpu.name + " CU");
  }
  pp.kernels.push_back(std::move(kp));
  return pp;
}

}  // namespace attnsim::workloads
