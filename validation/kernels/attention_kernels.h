// The validation kernels: FlashAttention forward, and the backward as preprocess (delta), the
// main kernel (dK and dV per key block, dQ by fp32 atomics) and the dQ conversion, on the wave-level
// matrix instructions of gpu_portability.h and the tiling of attention_tiling.h. They favour plain
// code over speed: their purpose is a schedule attnsim models (presets ref-hip and ref-cuda) whose
// traffic and time can be measured, not the fastest kernel.
#pragma once

#include "attention_tiling.h"

namespace attn {

// Device pointers and the problem of one call (bf16 tensors as raw 16-bit storage).
struct Tensors {
  const std::uint16_t *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr, *d_o = nullptr;
  std::uint16_t *out = nullptr, *dq = nullptr, *dk = nullptr, *dv = nullptr;
  float *lse = nullptr, *delta = nullptr, *dq_acc = nullptr;
  const float* lse_in = nullptr;
  Shape shape;
  float scale = 1.0f;  // softmax scale, 1 / sqrt(head_dim)
};

#if defined(ATTN_GPU_AMD) || defined(ATTN_GPU_NVIDIA)

ATTN_DEVICE inline float neg_inf() { return -__builtin_huge_valf(); }

// Forward: a workgroup per (64-row query block, head, batch); wave w owns rows 16w..16w+15. Q stays
// in registers; K and V tiles go through LDS; each wave's scores and probabilities pass its own LDS
// strip, where one lane per row keeps the online softmax's max and sum.
template <int D>
__global__ void __launch_bounds__(kWaves * kWaveLanes) attention_fwd(Tensors t) {
  extern __shared__ unsigned char lds[];
  const Shape& s = t.shape;
  std::uint16_t* k_tile = reinterpret_cast<std::uint16_t*>(lds);
  std::uint16_t* v_tile = k_tile + kFwdBlockN * D;
  const int wave = static_cast<int>(threadIdx.x) / kWaveLanes, lane = lane_id();
  float* scores = reinterpret_cast<float*>(v_tile + kFwdBlockN * D) + wave * 16 * kFwdBlockN;
  std::uint16_t* probs = reinterpret_cast<std::uint16_t*>(reinterpret_cast<float*>(v_tile + kFwdBlockN * D) + kWaves * 16 * kFwdBlockN) +
                         wave * 16 * kFwdBlockN;
  float* stats = reinterpret_cast<float*>(reinterpret_cast<std::uint16_t*>(reinterpret_cast<float*>(v_tile + kFwdBlockN * D) +
                                                                           kWaves * 16 * kFwdBlockN) +
                                          kWaves * 16 * kFwdBlockN) +
                 wave * 16 * 3;
  float* row_max = stats;
  float* row_sum = stats + 16;
  float* rescale = stats + 32;
  const int b = static_cast<int>(blockIdx.z), h = static_cast<int>(blockIdx.y), hk = kv_head(s, h);
  const int q_block = static_cast<int>(blockIdx.x) * kFwdBlockM, q0 = q_block + 16 * wave;

  FragA qf[D / 16];
  ATTN_UNROLL
  for (int kc = 0; kc < D / 16; ++kc) {
    ATTN_UNROLL
    for (int i = 0; i < Native::a_elems; ++i) {
      const int r = q0 + Native::a_row(lane, i), c = kc * 16 + Native::a_col(lane, i);
      qf[kc].v[i] = r < s.seqlen_q ? t.q[q_offset(s, b, r, h, c)] : 0;
    }
  }
  FragC acc[D / 16];
ATTN_UNROLL
  for (auto& f : acc) zero(f);
  if (lane < 16) {
    row_max[lane] = neg_inf();
    row_sum[lane] = 0.0f;
  }

  const int blocks = kv_blocks_end(s, q_block, kFwdBlockM, kFwdBlockN);
  for (int kb = 0; kb < blocks; ++kb) {
    const int k0 = kb * kFwdBlockN;
    __syncthreads();  // the previous tiles are no longer read
    for (int e = static_cast<int>(threadIdx.x); e < kFwdBlockN * D; e += kWaves * kWaveLanes) {
      const int j = k0 + e / D, d = e % D;
      k_tile[e] = j < s.seqlen_k ? t.k[kv_offset(s, b, j, hk, d)] : 0;
      v_tile[e] = j < s.seqlen_k ? t.v[kv_offset(s, b, j, hk, d)] : 0;
    }
    __syncthreads();
    // Scores of this wave's 16 rows against the 64 keys, scaled and masked, into its strip.
    ATTN_UNROLL
    for (int nt = 0; nt < kFwdBlockN / 16; ++nt) {
      FragC sc;
      zero(sc);
      ATTN_UNROLL
      for (int kc = 0; kc < D / 16; ++kc) {
        FragB kf;
        load_b(kf, k_tile + nt * 16 * D + kc * 16, 1, D, lane);  // B(d, key) = K(key, d)
        mma(sc, qf[kc], kf);
      }
      ATTN_UNROLL
      for (int i = 0; i < Native::c_elems; ++i) {
        const int r = Native::c_row(lane, i), c = nt * 16 + Native::c_col(lane, i);
        const int j = k0 + c;
        const bool keep = j < s.seqlen_k && visible(s, q0 + r, j);
        scores[r * kFwdBlockN + c] = keep ? sc.v[i] * t.scale : neg_inf();
      }
    }
    __syncthreads();
    if (lane < 16) {  // the online softmax of row `lane`
      const float old_max = row_max[lane];
      float m = old_max;
      for (int c = 0; c < kFwdBlockN; ++c) m = fmaxf(m, scores[lane * kFwdBlockN + c]);
      float sum = 0.0f;
      for (int c = 0; c < kFwdBlockN; ++c) {
        const float p = m == neg_inf() ? 0.0f : expf(scores[lane * kFwdBlockN + c] - m);
        probs[lane * kFwdBlockN + c] = to_bf16(p);
        sum += p;
      }
      const float alpha = m == neg_inf() ? 1.0f : expf(old_max - m);
      rescale[lane] = alpha;
      row_sum[lane] = row_sum[lane] * alpha + sum;
      row_max[lane] = m;
    }
    __syncthreads();
    ATTN_UNROLL
    for (int dt = 0; dt < D / 16; ++dt) {
      ATTN_UNROLL
      for (int i = 0; i < Native::c_elems; ++i) acc[dt].v[i] *= rescale[Native::c_row(lane, i)];
      ATTN_UNROLL
      for (int kc = 0; kc < kFwdBlockN / 16; ++kc) {
        FragA pf;
        FragB vf;
        load_a(pf, probs + kc * 16, kFwdBlockN, 1, lane);           // A(row, key) = P(row, key)
        load_b(vf, v_tile + kc * 16 * D + dt * 16, D, 1, lane);     // B(key, d) = V(key, d)
        mma(acc[dt], pf, vf);
      }
    }
  }
  __syncthreads();
  ATTN_UNROLL
  for (int dt = 0; dt < D / 16; ++dt) {
    ATTN_UNROLL
    for (int i = 0; i < Native::c_elems; ++i) {
      const int r = Native::c_row(lane, i), row = q0 + r;
      if (row >= s.seqlen_q) continue;
      const float l = row_sum[r];
      t.out[q_offset(s, b, row, h, dt * 16 + Native::c_col(lane, i))] = to_bf16(l > 0.0f ? acc[dt].v[i] / l : 0.0f);
    }
  }
  if (lane < 16 && q0 + lane < s.seqlen_q) {
    t.lse[row_offset(s, b, h, q0 + lane)] = row_sum[lane] > 0.0f ? row_max[lane] + logf(row_sum[lane]) : neg_inf();
  }
}

// Backward preprocess: delta = rowsum(dO * O), one row per thread (rows in BSHD order are contiguous).
__global__ void __launch_bounds__(kPreprocessRows) attention_bwd_preprocess(Tensors t) {
  const Shape& s = t.shape;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kPreprocessRows + threadIdx.x;  // (b, i, h) flattened
  const std::int64_t rows = static_cast<std::int64_t>(s.batch) * s.seqlen_q * s.heads_q;
  if (row >= rows) return;
  float sum = 0.0f;
  for (int d = 0; d < s.head_dim; ++d) sum += from_bf16(t.d_o[row * s.head_dim + d]) * from_bf16(t.o[row * s.head_dim + d]);
  const int h = static_cast<int>(row % s.heads_q), i = static_cast<int>(row / s.heads_q % s.seqlen_q);
  const int b = static_cast<int>(row / (static_cast<std::int64_t>(s.heads_q) * s.seqlen_q));
  t.delta[row_offset(s, b, h, i)] = sum;
}

// Backward main: a workgroup per (64-key block, head, batch); wave w owns keys 16w..16w+15 and keeps
// them (K, V) and their dK, dV in registers. For each 32-row query block that sees the keys: Q and
// dO through LDS, P^T and dP^T per wave, dS for the whole block in LDS, then dQ += dS K added to the
// fp32 accumulator with atomics (each wave a share of the 32 x D tiles).
template <int D>
__global__ void __launch_bounds__(kWaves * kWaveLanes) attention_bwd(Tensors t) {
  extern __shared__ unsigned char lds[];
  const Shape& s = t.shape;
  std::uint16_t* k_tile = reinterpret_cast<std::uint16_t*>(lds);          // [64 keys][D]
  std::uint16_t* q_tile = k_tile + kBwdBlockN * D;                         // [32 rows][D]
  std::uint16_t* do_tile = q_tile + kBwdBlockM * D;                        // [32 rows][D]
  const int wave = static_cast<int>(threadIdx.x) / kWaveLanes, lane = lane_id();
  std::uint16_t* pt = do_tile + kBwdBlockM * D + wave * 16 * kBwdBlockM;  // this wave's P^T [16 keys][32 rows]
  std::uint16_t* ds = do_tile + kBwdBlockM * D + kWaves * 16 * kBwdBlockM; // dS [32 rows][64 keys]
  float* lse = reinterpret_cast<float*>(ds + kBwdBlockM * kBwdBlockN);
  float* delta = lse + kBwdBlockM;
  const int b = static_cast<int>(blockIdx.z), h = static_cast<int>(blockIdx.y);
  const int k_block = static_cast<int>(blockIdx.x) * kBwdBlockN, k0 = k_block + 16 * wave;

  FragA kf[D / 16], vf[D / 16];
  ATTN_UNROLL
  for (int kc = 0; kc < D / 16; ++kc) {
    ATTN_UNROLL
    for (int i = 0; i < Native::a_elems; ++i) {
      const int j = k0 + Native::a_row(lane, i), d = kc * 16 + Native::a_col(lane, i);
      kf[kc].v[i] = j < s.seqlen_k ? t.k[kv_offset(s, b, j, h, d)] : 0;
      vf[kc].v[i] = j < s.seqlen_k ? t.v[kv_offset(s, b, j, h, d)] : 0;
    }
  }
  for (int e = static_cast<int>(threadIdx.x); e < kBwdBlockN * D; e += kWaves * kWaveLanes) {
    const int j = k_block + e / D;
    k_tile[e] = j < s.seqlen_k ? t.k[kv_offset(s, b, j, h, e % D)] : 0;
  }
  FragC dk[D / 16], dv[D / 16];
  ATTN_UNROLL
  for (int dt = 0; dt < D / 16; ++dt) {
    zero(dk[dt]);
    zero(dv[dt]);
  }

  const int q_blocks = ceil_div(s.seqlen_q, kBwdBlockM);
  for (int qb = q_blocks_begin(s, k_block, kBwdBlockM); qb < q_blocks; ++qb) {
    const int q0 = qb * kBwdBlockM;
    __syncthreads();
    for (int e = static_cast<int>(threadIdx.x); e < kBwdBlockM * D; e += kWaves * kWaveLanes) {
      const int i = q0 + e / D;
      q_tile[e] = i < s.seqlen_q ? t.q[q_offset(s, b, i, h, e % D)] : 0;
      do_tile[e] = i < s.seqlen_q ? t.d_o[q_offset(s, b, i, h, e % D)] : 0;
    }
    for (int r = static_cast<int>(threadIdx.x); r < kBwdBlockM; r += kWaves * kWaveLanes) {
      lse[r] = q0 + r < s.seqlen_q ? t.lse_in[row_offset(s, b, h, q0 + r)] : 0.0f;
      delta[r] = q0 + r < s.seqlen_q ? t.delta[row_offset(s, b, h, q0 + r)] : 0.0f;
    }
    __syncthreads();
    ATTN_UNROLL
    for (int nt = 0; nt < kBwdBlockM / 16; ++nt) {
      FragC st, dpt;  // S^T and dP^T: this wave's 16 keys x 16 query rows
      zero(st);
      zero(dpt);
      ATTN_UNROLL
      for (int kc = 0; kc < D / 16; ++kc) {
        FragB qb_frag, dob;
        load_b(qb_frag, q_tile + nt * 16 * D + kc * 16, 1, D, lane);  // B(d, row) = Q(row, d)
        load_b(dob, do_tile + nt * 16 * D + kc * 16, 1, D, lane);     // B(d, row) = dO(row, d)
        mma(st, kf[kc], qb_frag);
        mma(dpt, vf[kc], dob);
      }
      ATTN_UNROLL
      for (int i = 0; i < Native::c_elems; ++i) {
        const int key = Native::c_row(lane, i), r = nt * 16 + Native::c_col(lane, i);
        const int j = k0 + key, row = q0 + r;
        const bool keep = j < s.seqlen_k && row < s.seqlen_q && visible(s, row, j) && lse[r] != neg_inf();
        const float p = keep ? expf(st.v[i] * t.scale - lse[r]) : 0.0f;
        pt[key * kBwdBlockM + r] = to_bf16(p);
        ds[r * kBwdBlockN + 16 * wave + key] = to_bf16(p * (dpt.v[i] - delta[r]));
      }
    }
    __syncthreads();
    ATTN_UNROLL
    for (int dt = 0; dt < D / 16; ++dt) {
      ATTN_UNROLL
      for (int kc = 0; kc < kBwdBlockM / 16; ++kc) {
        FragA pa, dsa;
        FragB dob, qbf;
        load_a(pa, pt + kc * 16, kBwdBlockM, 1, lane);                     // A(key, row) = P^T
        load_a(dsa, ds + kc * 16 * kBwdBlockN + 16 * wave, 1, kBwdBlockN, lane);  // A(key, row) = dS(row, key)
        load_b(dob, do_tile + kc * 16 * D + dt * 16, D, 1, lane);         // B(row, d) = dO(row, d)
        load_b(qbf, q_tile + kc * 16 * D + dt * 16, D, 1, lane);          // B(row, d) = Q(row, d)
        mma(dv[dt], pa, dob);
        mma(dk[dt], dsa, qbf);
      }
    }
    // dQ += dS K: the block's (32 / 16) x (D / 16) tiles shared round-robin by the waves.
    for (int tile = wave; tile < (kBwdBlockM / 16) * (D / 16); tile += kWaves) {
      const int mt = tile / (D / 16), dt = tile % (D / 16);
      FragC dq;
      zero(dq);
      ATTN_UNROLL
      for (int kc = 0; kc < kBwdBlockN / 16; ++kc) {
        FragA dsa;
        FragB kb_frag;
        load_a(dsa, ds + mt * 16 * kBwdBlockN + kc * 16, kBwdBlockN, 1, lane);  // A(row, key) = dS
        load_b(kb_frag, k_tile + kc * 16 * D + dt * 16, D, 1, lane);            // B(key, d) = K
        mma(dq, dsa, kb_frag);
      }
      ATTN_UNROLL
      for (int i = 0; i < Native::c_elems; ++i) {
        const int row = q0 + mt * 16 + Native::c_row(lane, i);
        if (row < s.seqlen_q) atomicAdd(&t.dq_acc[q_offset(s, b, row, h, dt * 16 + Native::c_col(lane, i))], dq.v[i] * t.scale);
      }
    }
  }
  ATTN_UNROLL
  for (int dt = 0; dt < D / 16; ++dt) {
    ATTN_UNROLL
    for (int i = 0; i < Native::c_elems; ++i) {
      const int j = k0 + Native::c_row(lane, i), d = dt * 16 + Native::c_col(lane, i);
      if (j >= s.seqlen_k) continue;
      t.dk[kv_offset(s, b, j, h, d)] = to_bf16(dk[dt].v[i] * t.scale);
      t.dv[kv_offset(s, b, j, h, d)] = to_bf16(dv[dt].v[i]);
    }
  }
}

// The fp32 dQ accumulator set to zero before the backward's atomics (a kernel of its own, so that
// profilers see it under this name; attnsim's bwd_zero_dq_acc).
__global__ void __launch_bounds__(256) attention_bwd_zero_dq_acc(Tensors t) {
  const Shape& s = t.shape;
  const std::int64_t total = static_cast<std::int64_t>(s.batch) * s.seqlen_q * s.heads_q * s.head_dim;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * 256 + threadIdx.x; e < total; e += static_cast<std::int64_t>(gridDim.x) * 256) {
    t.dq_acc[e] = 0.0f;
  }
}

// dQ conversion: the fp32 accumulator to bf16, kConvertRows rows of D per workgroup.
__global__ void __launch_bounds__(256) attention_bwd_convert(Tensors t) {
  const Shape& s = t.shape;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * kConvertRows * s.head_dim;
  const std::int64_t total = static_cast<std::int64_t>(s.batch) * s.seqlen_q * s.heads_q * s.head_dim;
  for (std::int64_t e = first + threadIdx.x; e < first + static_cast<std::int64_t>(kConvertRows) * s.head_dim && e < total; e += 256) {
    t.dq[e] = to_bf16(t.dq_acc[e]);
  }
}

#endif  // a GPU compiler

}  // namespace attn
