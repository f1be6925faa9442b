// The validation kernels' tiling, shared by the device code, the harness and the unit tests: the
// problem, the block sizes (which attnsim's `ref-hip` and `ref-cuda` presets model), the grids,
// which key blocks a query block visits and which query blocks a key block visits under the
// bottom-right causal mask, and the tensors' BSHD addressing.
#pragma once

#include <cstdint>

#include "gpu_portability.h"

namespace attn {

// Block sizes of the kernels (attnsim presets ref-hip / ref-cuda, workloads/presets.cpp).
inline constexpr int kWaves = 4;          // waves (warps) per workgroup
inline constexpr int kFwdBlockM = 64;     // forward: query rows per workgroup (16 per wave)
inline constexpr int kFwdBlockN = 64;     // forward: key rows per iteration
inline constexpr int kBwdBlockN = 64;     // backward: key rows per workgroup (16 per wave)
inline constexpr int kBwdBlockM = 32;     // backward: query rows per iteration
inline constexpr int kPreprocessRows = 256;  // rows per workgroup of the preprocess (one per thread)
inline constexpr int kConvertRows = 64;      // rows per workgroup of the dQ conversion

// One attention call. Tensors are BSHD: Q, O, dO, dQ and the fp32 dQ accumulator [B][Nq][Hq][D];
// K, V, dK, dV [B][Nk][Hkv][D]; LSE and delta fp32 [B][Hq][Nq].
struct Shape {
  int batch = 1, heads_q = 1, heads_kv = 1, seqlen_q = 1, seqlen_k = 1, head_dim = 128;
  bool causal = false;  // bottom-right aligned (FlashAttention): query i sees keys j <= i + Nk - Nq
};

ATTN_HD inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Whether query row i sees key j.
ATTN_HD inline bool visible(const Shape& s, int i, int j) { return !s.causal || j <= i + (s.seqlen_k - s.seqlen_q); }

// Key blocks [0, end) of `block_n` keys that query rows [q0, q0 + rows) visit (clamped to the rows
// that exist): every block holding a key some row sees. 0 when all the rows are masked out.
ATTN_HD inline int kv_blocks_end(const Shape& s, int q0, int rows, int block_n) {
  const int last_row = (q0 + rows < s.seqlen_q ? q0 + rows : s.seqlen_q) - 1;
  if (last_row < q0) return 0;
  int last_key = s.causal ? last_row + (s.seqlen_k - s.seqlen_q) : s.seqlen_k - 1;
  if (last_key >= s.seqlen_k) last_key = s.seqlen_k - 1;
  return last_key < 0 ? 0 : last_key / block_n + 1;
}

// The first query block of `block_m` rows that sees any key of [k0, k0 + block_n): query blocks
// [first, ceil(Nq / block_m)) are the backward's loop for that key block.
ATTN_HD inline int q_blocks_begin(const Shape& s, int k0, int block_m) {
  if (!s.causal) return 0;
  const int first_row = k0 - (s.seqlen_k - s.seqlen_q);  // the first row that sees key k0
  return first_row <= 0 ? 0 : first_row / block_m;
}

// Element offsets of BSHD tensors.
ATTN_HD inline std::int64_t q_offset(const Shape& s, int b, int i, int h, int d) {
  return ((static_cast<std::int64_t>(b) * s.seqlen_q + i) * s.heads_q + h) * s.head_dim + d;
}
ATTN_HD inline std::int64_t kv_offset(const Shape& s, int b, int j, int h, int d) {
  return ((static_cast<std::int64_t>(b) * s.seqlen_k + j) * s.heads_kv + h) * s.head_dim + d;
}
ATTN_HD inline std::int64_t row_offset(const Shape& s, int b, int h, int i) {
  return (static_cast<std::int64_t>(b) * s.heads_q + h) * s.seqlen_q + i;
}
ATTN_HD inline int kv_head(const Shape& s, int h) { return h / (s.heads_q / s.heads_kv); }

// Why the kernels cannot run a shape, or nullptr when they can.
inline const char* unsupported(const Shape& s) {
  if (s.batch < 1 || s.heads_q < 1 || s.heads_kv < 1 || s.seqlen_q < 1 || s.seqlen_k < 1) return "every size must be positive";
  if (s.head_dim != 64 && s.head_dim != 128) return "head_dim must be 64 or 128";
  if (s.heads_q % s.heads_kv != 0) return "heads_q must be a multiple of heads_kv";
  if (s.causal && s.seqlen_k < s.seqlen_q) return "causal needs seqlen_k >= seqlen_q (bottom-right mask)";
  return nullptr;
}
// The backward kernel computes dK and dV per query head: it needs heads_q == heads_kv.
inline const char* unsupported_backward(const Shape& s) {
  if (const char* why = unsupported(s)) return why;
  if (s.heads_q != s.heads_kv) return "the backward kernels need heads_q == heads_kv (no GQA reduction)";
  return nullptr;
}

// Dynamic LDS bytes of each kernel for head dimension `d` (must stay within 64 KiB for AMD).
inline constexpr int fwd_lds_bytes(int d) {
  return 2 * kFwdBlockN * d * 2                     // K and V tiles, bf16
         + kWaves * 16 * kFwdBlockN * 4             // each wave's 16 x 64 scores, fp32
         + kWaves * 16 * kFwdBlockN * 2             // each wave's probabilities, bf16
         + kWaves * 16 * 3 * 4;                     // each wave's row max, sum and rescale
}
inline constexpr int bwd_lds_bytes(int d) {
  return kBwdBlockN * d * 2                         // K tile (the dQ product), bf16
         + 2 * kBwdBlockM * d * 2                   // Q and dO tiles, bf16
         + kWaves * 16 * kBwdBlockM * 2             // each wave's P transposed, bf16
         + kBwdBlockM * kBwdBlockN * 2              // dS, bf16
         + 2 * kBwdBlockM * 4;                      // LSE and delta of the query rows
}
static_assert(fwd_lds_bytes(128) <= 65536 && bwd_lds_bytes(128) <= 65536, "LDS beyond 64 KiB");

}  // namespace attn
