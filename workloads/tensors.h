// The tensors of an attention call laid out in one address space, and the address runs of a tile.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "workloads/problem.h"

namespace attnsim::workloads {

// Every tensor a forward or backward pass may touch.
enum class TensorId : std::uint8_t {
  q, k, v, o, lse,      // forward inputs and outputs (lse: fp32 per row)
  d_o, delta,           // backward: dO, and D = rowsum(dO * O) (fp32 per row)
  dq, dk, dv,           // gradients, in the input dtype
  dq_acc,               // fp32 dQ accumulator (atomic mode: one slice; split mode: one slice per key block)
  dk_expanded, dv_expanded,  // GQA by expansion: dK and dV per query head, reduced afterwards
  gemm_a, gemm_b, gemm_c,    // the GEMM microbenchmark's operands and product (workloads/gemm.h)
  count
};
inline constexpr std::size_t kTensorCount = static_cast<std::size_t>(TensorId::count);
std::string_view to_string(TensorId t);

// A 4-D tensor [slices][batch][heads][rows x cols] in one byte address space.
struct TensorDesc {
  bool present = false;
  std::uint64_t base = 0;       // byte address of element 0
  std::uint32_t elem_bytes = 0;
  std::uint32_t slices = 1;     // > 1 only for the split dQ accumulator
  std::uint32_t batch = 0, heads = 0;
  std::uint64_t rows = 0;       // sequence length (or 1 column of fp32 per row for lse/delta)
  std::uint32_t cols = 0;
  // Strides in elements.
  std::uint64_t stride_slice = 0, stride_batch = 0, stride_head = 0, stride_row = 0;

  std::uint64_t bytes() const { return static_cast<std::uint64_t>(slices) * batch * heads * rows * cols * elem_bytes; }
  std::uint64_t element_index(std::uint32_t slice, std::uint32_t b, std::uint32_t h, std::uint64_t row,
                              std::uint32_t col) const {
    return slice * stride_slice + b * stride_batch + h * stride_head + row * stride_row + col;
  }
};

// What a pass needs allocated beyond Q, K, V, O, LSE.
struct TensorNeeds {
  bool backward = false;
  std::uint32_t dq_acc_slices = 0;  // 0: no fp32 dQ accumulator
  bool expanded_dkdv = false;
};

// All tensors of one call. Allocations are 4 KiB aligned, in TensorId order, as a caching
// allocator would hand them out; the layout (BSHD or BHSD) sets the strides of the 4-D tensors.
class TensorSet {
 public:
  TensorSet(const Problem& p, const TensorNeeds& needs);
  // A set of the given descriptors (those marked present), allocated like the above in TensorId
  // order; their `base` fields are set here.
  explicit TensorSet(const std::array<TensorDesc, kTensorCount>& descs);
  const TensorDesc& operator[](TensorId t) const { return descs_[static_cast<std::size_t>(t)]; }
  std::uint64_t end_address() const { return end_; }

 private:
  void allocate();
  std::array<TensorDesc, kTensorCount> descs_{};
  std::uint64_t end_ = 0;
};

// The rows [row0, row0 + nrows) x all columns of one (slice, batch, head) of a tensor, clamped to
// the tensor's rows (kernels clamp out-of-range rows, so they cost no traffic): `rows` rows of
// `row_bytes`, `stride` bytes apart, the first at `address`. rows = 0 past the tensor's end.
struct TileRows {
  std::uint64_t address = 0, row_bytes = 0, stride = 0, rows = 0;
};
inline TileRows tile_rows(const TensorDesc& t, std::uint32_t slice, std::uint32_t b, std::uint32_t h, std::uint64_t row0,
                          std::uint64_t nrows) {
  if (row0 >= t.rows) return {};
  return TileRows{t.base + t.element_index(slice, b, h, row0, 0) * t.elem_bytes,
                  static_cast<std::uint64_t>(t.cols) * t.elem_bytes, t.stride_row * t.elem_bytes,
                  std::min(nrows, t.rows - row0)};
}

// Calls f(address, bytes) for each contiguous run of tile_rows(...). Returns the bytes covered.
template <class F>
std::uint64_t for_each_run(const TensorDesc& t, std::uint32_t slice, std::uint32_t b, std::uint32_t h,
                           std::uint64_t row0, std::uint64_t nrows, F&& f) {
  const TileRows r = tile_rows(t, slice, b, h, row0, nrows);
  if (r.rows == 0) return 0;
  if (r.stride == r.row_bytes) {  // rows are adjacent: one run
    f(r.address, r.rows * r.row_bytes);
  } else {
    for (std::uint64_t i = 0; i < r.rows; ++i) f(r.address + i * r.stride, r.row_bytes);
  }
  return r.rows * r.row_bytes;
}

// Bytes of a tile without enumerating its runs.
inline std::uint64_t tile_bytes(const TensorDesc& t, std::uint64_t row0, std::uint64_t nrows) {
  if (row0 >= t.rows) return 0;
  return std::min(nrows, t.rows - row0) * t.cols * t.elem_bytes;
}

}  // namespace attnsim::workloads
