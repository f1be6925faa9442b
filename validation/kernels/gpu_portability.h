// The validation kernels' portability layer: one source builds with hipcc (AMD, wave64, MFMA) and
// with nvcc (NVIDIA, warp32, mma.sync), and its host-side parts with any C++17 compiler (the unit
// tests). It covers the runtime API the harness uses, bf16 storage, and a 16x16x16 bf16 matrix
// multiply-accumulate on one wave whose operand and result layouts are explicit (which lane holds
// which element), so kernels can load operands from LDS with any strides and scale rows of results.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#define ATTN_GPU_AMD 1
#elif defined(__CUDACC__)
#include <cuda_runtime.h>
#define ATTN_GPU_NVIDIA 1
#endif

#if defined(ATTN_GPU_AMD) || defined(ATTN_GPU_NVIDIA)
#define ATTN_HD __host__ __device__
#define ATTN_DEVICE __device__
#else
#define ATTN_HD
#define ATTN_DEVICE
#endif
// Unrolls a loop over fragment elements (so they stay in registers) where the compiler knows the
// pragma: device passes and clang; GCC (nvcc's host pass, the unit tests) would warn.
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__) || defined(__clang__)
#define ATTN_UNROLL _Pragma("unroll")
#else
#define ATTN_UNROLL
#endif

namespace attn {

// ---- Vendors and their wave-level matrix layouts (host-visible, so tests can check them) ----

enum class Vendor { amd, nvidia };

#if defined(ATTN_GPU_NVIDIA)
inline constexpr Vendor kVendor = Vendor::nvidia;
#else
inline constexpr Vendor kVendor = Vendor::amd;  // also the host-only default
#endif

// Lanes of a wave, and elements per lane of each 16x16 fragment.
template <Vendor V>
struct Layout;

// AMD v_mfma_f32_16x16x16_bf16 (gfx90a "_1k", gfx94x): 64 lanes. A (16x16, row m, k): lane l holds
// A[l % 16][4 (l / 16) + i]; B (k, column n): B[4 (l / 16) + i][l % 16]; C: C[4 (l / 16) + i][l % 16],
// i = 0..3 (AMD matrix instruction calculator, CDNA3 ISA section 7).
template <>
struct Layout<Vendor::amd> {
  static constexpr int lanes = 64, a_elems = 4, b_elems = 4, c_elems = 4;
  ATTN_HD static constexpr int a_row(int lane, int) { return lane % 16; }
  ATTN_HD static constexpr int a_col(int lane, int i) { return 4 * (lane / 16) + i; }
  ATTN_HD static constexpr int b_row(int lane, int i) { return 4 * (lane / 16) + i; }
  ATTN_HD static constexpr int b_col(int lane, int) { return lane % 16; }
  ATTN_HD static constexpr int c_row(int lane, int i) { return 4 * (lane / 16) + i; }
  ATTN_HD static constexpr int c_col(int lane, int) { return lane % 16; }
};

// NVIDIA mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32, twice (n = 0..7 and 8..15): 32
// lanes, g = lane / 4, t = lane % 4 (PTX ISA, "Matrix Fragments for mma.m16n8k16"). A: elements
// (g, 2t..2t+1), (g+8, 2t..), (g, 2t+8..), (g+8, 2t+8..); B per n-half h: (2t..2t+1, 8h+g),
// (2t+8..2t+9, 8h+g); C per n-half h: (g, 8h+2t..2t+1), (g+8, 8h+2t..2t+1).
template <>
struct Layout<Vendor::nvidia> {
  static constexpr int lanes = 32, a_elems = 8, b_elems = 8, c_elems = 8;
  ATTN_HD static constexpr int a_row(int lane, int i) { return lane / 4 + 8 * ((i / 2) % 2); }
  ATTN_HD static constexpr int a_col(int lane, int i) { return 2 * (lane % 4) + i % 2 + 8 * (i / 4); }
  ATTN_HD static constexpr int b_row(int lane, int i) { return 2 * (lane % 4) + i % 2 + 8 * ((i / 2) % 2); }
  ATTN_HD static constexpr int b_col(int lane, int i) { return 8 * (i / 4) + lane / 4; }
  ATTN_HD static constexpr int c_row(int lane, int i) { return lane / 4 + 8 * ((i / 2) % 2); }
  ATTN_HD static constexpr int c_col(int lane, int i) { return 8 * (i / 4) + 2 * (lane % 4) + i % 2; }
};

using Native = Layout<kVendor>;
inline constexpr int kWaveLanes = Native::lanes;

// ---- bf16 as raw 16-bit storage (no vendor type: both toolchains and the host agree) ----

ATTN_HD inline std::uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}
ATTN_HD inline float bits_float(std::uint32_t u) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}
ATTN_HD inline std::uint16_t to_bf16(float f) {
  std::uint32_t u = float_bits(f);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) return static_cast<std::uint16_t>((u >> 16) | 0x40);  // NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
  return static_cast<std::uint16_t>(u >> 16);
}
ATTN_HD inline float from_bf16(std::uint16_t h) { return bits_float(static_cast<std::uint32_t>(h) << 16); }

// ---- Wave-level 16x16x16 fragments and their multiply-accumulate (device code) ----

struct FragA {
  std::uint16_t v[Native::a_elems];
};
struct FragB {
  std::uint16_t v[Native::b_elems];
};
struct FragC {
  float v[Native::c_elems];
};

// Element (r, c) of an operand held at p[r * row_stride + c * col_stride]: any layout or transpose.
ATTN_HD inline void load_a(FragA& f, const std::uint16_t* p, int row_stride, int col_stride, int lane) {
ATTN_UNROLL
  for (int i = 0; i < Native::a_elems; ++i) f.v[i] = p[Native::a_row(lane, i) * row_stride + Native::a_col(lane, i) * col_stride];
}
ATTN_HD inline void load_b(FragB& f, const std::uint16_t* p, int row_stride, int col_stride, int lane) {
ATTN_UNROLL
  for (int i = 0; i < Native::b_elems; ++i) f.v[i] = p[Native::b_row(lane, i) * row_stride + Native::b_col(lane, i) * col_stride];
}
ATTN_HD inline void zero(FragC& f) {
  for (int i = 0; i < Native::c_elems; ++i) f.v[i] = 0.0f;
}

#if defined(ATTN_GPU_AMD)
typedef short attn_bf16x4 __attribute__((ext_vector_type(4)));
typedef float attn_f32x4 __attribute__((ext_vector_type(4)));
// C += A B on one wave (all 64 lanes must call it).
ATTN_DEVICE inline void mma(FragC& c, const FragA& a, const FragB& b) {
  attn_bf16x4 x, y;
  attn_f32x4 acc;
  for (int i = 0; i < 4; ++i) {
    x[i] = static_cast<short>(a.v[i]);
    y[i] = static_cast<short>(b.v[i]);
    acc[i] = c.v[i];
  }
  acc = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(x, y, acc, 0, 0, 0);
  for (int i = 0; i < 4; ++i) c.v[i] = acc[i];
}
ATTN_DEVICE inline int lane_id() { return static_cast<int>(threadIdx.x % 64); }
#elif defined(ATTN_GPU_NVIDIA)
ATTN_DEVICE inline std::uint32_t pack(std::uint16_t lo, std::uint16_t hi) { return lo | (static_cast<std::uint32_t>(hi) << 16); }
// C += A B on one warp (all 32 lanes must call it): two m16n8k16 MMAs, one per half of N.
ATTN_DEVICE inline void mma(FragC& c, const FragA& a, const FragB& b) {
  const std::uint32_t a0 = pack(a.v[0], a.v[1]), a1 = pack(a.v[2], a.v[3]), a2 = pack(a.v[4], a.v[5]), a3 = pack(a.v[6], a.v[7]);
  for (int h = 0; h < 2; ++h) {
    const std::uint32_t b0 = pack(b.v[4 * h], b.v[4 * h + 1]), b1 = pack(b.v[4 * h + 2], b.v[4 * h + 3]);
    float* d = c.v + 4 * h;
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
}
ATTN_DEVICE inline int lane_id() { return static_cast<int>(threadIdx.x % 32); }
#endif

// ---- Runtime API, one spelling for both vendors (host code of the harness) ----

#if defined(ATTN_GPU_AMD)
#define gpuError_t hipError_t
#define gpuSuccess hipSuccess
#define gpuGetErrorString hipGetErrorString
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuMemcpy hipMemcpy
#define gpuMemset hipMemset
#define gpuMemcpyHostToDevice hipMemcpyHostToDevice
#define gpuMemcpyDeviceToHost hipMemcpyDeviceToHost
#define gpuDeviceSynchronize hipDeviceSynchronize
#define gpuEvent_t hipEvent_t
#define gpuEventCreate hipEventCreate
#define gpuEventRecord hipEventRecord
#define gpuEventSynchronize hipEventSynchronize
#define gpuEventElapsedTime hipEventElapsedTime
#define gpuEventDestroy hipEventDestroy
#define gpuGetLastError hipGetLastError
#define gpuDeviceProp hipDeviceProp_t
#define gpuGetDeviceProperties hipGetDeviceProperties
#define gpuDeviceGetAttribute hipDeviceGetAttribute
#define gpuOccupancyMaxActiveBlocksPerMultiprocessor hipOccupancyMaxActiveBlocksPerMultiprocessor
inline const char* kRuntimeName = "HIP";
#elif defined(ATTN_GPU_NVIDIA)
#define gpuError_t cudaError_t
#define gpuSuccess cudaSuccess
#define gpuGetErrorString cudaGetErrorString
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMemcpy cudaMemcpy
#define gpuMemset cudaMemset
#define gpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define gpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define gpuDeviceSynchronize cudaDeviceSynchronize
#define gpuEvent_t cudaEvent_t
#define gpuEventCreate cudaEventCreate
#define gpuEventRecord cudaEventRecord
#define gpuEventSynchronize cudaEventSynchronize
#define gpuEventElapsedTime cudaEventElapsedTime
#define gpuEventDestroy cudaEventDestroy
#define gpuGetLastError cudaGetLastError
#define gpuDeviceProp cudaDeviceProp
#define gpuGetDeviceProperties cudaGetDeviceProperties
#define gpuDeviceGetAttribute cudaDeviceGetAttribute
#define gpuOccupancyMaxActiveBlocksPerMultiprocessor cudaOccupancyMaxActiveBlocksPerMultiprocessor
inline const char* kRuntimeName = "CUDA";
#endif

}  // namespace attn
