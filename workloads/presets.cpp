// Named kernel presets. Every figure cites its source: ../shared/reference/fa-schedules.md (FA-SCHED,
// with its own repository@commit citations) and aiter-v3-kernels.md (AITER-CO, counts read from the
// aiter code objects ROCm/aiter@e4048607). "estimate" marks a figure no source gave.
#include "workloads/presets.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace attnsim::workloads {
namespace {

// aiter asm v3 densities, per wave per iteration, from AITER-CO section 4 (bf16 d128, rtna, MI300).
LoopDensity aiter_fwd_density() {
  LoopDensity d;
  // 170 VALU (excl. transcendentals) for 256x32/8 = 1024 scores per wave = 16 per lane.
  d.valu_per_score_lane = 170.0 / 16.0;
  // "+mask" VALU when the masking blocks run: the causal kernel's (fwd_hd128_bf16_causal_rtna, 66 of
  // its 73 instructions), where masked tiles occur; the non-causal kernel's tail blocks run 33.
  d.mask_valu_per_score_lane = 66.0 / 16.0;
  // LDS read 16384 B per wave = the whole K and V tiles (2 x 32 x 128 x 2 B).
  d.lds_read_per_tile_byte = 16384.0 / 16384.0;
  // LDS write 1024 B ds_write (V) + 1024 B LDS-DMA (K) per wave.
  d.lds_write_per_tile_byte = 2048.0 / 16384.0;
  d.barriers = 5;
  d.extra_trans = 1;  // 17 v_exp_f32 = 16 for P + 1 for the running-max rescale
  // Issue-only turns: instructions less MFMA, VALU and exp, with each s_nop counted as its wait
  // states; copy A 297 - 32 - 170 - 17 - 10.5 + 72.5 = 140, copy B 293.5 - 32 - 170 - 17 - 8 + 52 =
  // 118.5 (half the waves run each copy): 129.25 per 16 scores per lane.
  d.issue_only_per_score_lane = 129.25 / 16.0;
  d.source = "AITER-CO section 4, fwd_hd128_bf16_rtna.co copy A (issue-only turns: both copies)";
  return d;
}

// The a32 backward: aiter's default conversion is rtna (AITER-CO section 1, mha.py), and its only a32
// rtna code objects are the psskddv ones (bwd_hd128_bf16_a32_rtna_psskddv, and causal_br_..._psskddv
// for causal problems, which the host code's bottom-right mask selects).
LoopDensity aiter_bwd_density(bool a16) {
  LoopDensity d;
  // 16 x 192 / 4 = 768 scores per wave = 12 per lane; 172 VALU (a32) or 182 (a16), both rtna.
  d.valu_per_score_lane = (a16 ? 182.0 : 172.0) / 12.0;
  // "+mask" VALU when the masking blocks run: the causal kernels' (a32 causal_br psskddv 45 of its 60
  // instructions; a16 causal rtna 12 of 35). Non-causal a32 tails run fewer (17).
  d.mask_valu_per_score_lane = (a16 ? 12.0 : 45.0) / 12.0;
  // Input tiles per iteration: Q and dO, 16 x 128 x 2 B each = 8192 B.
  d.lds_read_per_tile_byte = (a16 ? 24064.0 : 25088.0) / 8192.0;
  d.lds_write_per_tile_byte = (a16 ? 6656.0 + 256.0 : 7680.0 + 256.0) / 8192.0;
  d.barriers = 6;
  d.extra_trans = 0;
  // Issue-only turns (instructions less MFMA, VALU and exp; s_nop as its wait states, here 5 and 5):
  // a32 420.5 - 120 - 172 - 12 = 116.5, a16 413.5 - 120 - 182 - 12 = 94.5, per 12 scores per lane.
  d.issue_only_per_score_lane = (a16 ? 94.5 : 116.5) / 12.0;
  d.source = a16 ? "AITER-CO section 4, bwd_hd128_bf16_a16_rtna.co"
                 : "AITER-CO section 4, bwd_hd128_bf16_a32_rtna_psskddv.co (mask: causal_br_a32_rtna_psskddv.co)";
  return d;
}

// Kernels whose code objects were not read: the aiter densities of the same algorithm.
LoopDensity borrowed(LoopDensity d, const std::string& kernel) {
  d.source = "estimate (" + kernel + " code objects not read; density of " + d.source + ")";
  return d;
}

// The fixed mixes' last figure: issue-only instructions (all instructions less MFMA, VALU and
// transcendentals; s_nop counted once, its wait states are not given for these segments).
FixedMix aiter_fwd_prologue() {
  // AITER-CO section 6 "pre" (rtna): its 16 MFMA start the first tile and are counted in the loop.
  return {0, 219, 19, 8, 16384, 0, "AITER-CO section 6, fwd_hd128_bf16_rtna.co pre (MFMA counted in the loop)", 564 - 16 - 219 - 19};
}
FixedMix aiter_fwd_epilogue() {
  return {0, 450, 4, 3, 16384, 9216, "AITER-CO section 6, fwd_hd128_bf16_rtna.co post (MFMA counted in the loop)", 569 - 16 - 450 - 4};
}
FixedMix aiter_bwd_prologue() {
  return {0, 826, 1, 16, 45568, 40960, "AITER-CO section 6, bwd_hd128_bf16_a32_rtna_psskddv.co pre", 1795 - 826 - 1};
}
FixedMix aiter_bwd_epilogue() {
  return {0, 1302, 0, 11, 26624, 26624, "AITER-CO section 6, bwd_hd128_bf16_a32_rtna_psskddv.co post", 1546 - 1302};
}
FixedMix aiter_preprocess() { return {0, 499, 0, 8, 16384, 2048, "AITER-CO section 7, bwd_hd128_odo_bf16.co", 698 - 499}; }
FixedMix aiter_convert() { return {0, 324, 0, 24, 4096, 4096, "AITER-CO section 7, bwd_hd128_dq_convert_bf16_rtna.co", 554 - 324}; }

FixedMix borrowed(FixedMix m, const std::string& kernel) {
  m.source = "estimate (" + kernel + " code objects not read; counts of " + m.source + ")";
  return m;
}

KernelSchedule aiter_v3(bool a16) {
  KernelSchedule k;
  k.name = a16 ? "aiter-v3-a16" : "aiter-v3";
  k.source = "aiter asm v3, gfx942 (FA-SCHED B2; AITER-CO sections 1-7)";
  FwdSchedule& f = k.fwd;
  f.block_m = 256;  // ts_qo (fmha_fwd.csv)
  f.block_n = 32;   // ts_kv
  f.waves = 8;      // 512 threads (mha_fwd.cu)
  f.stages = 2;     // estimate: K double-buffered through LDS-DMA while the current tile computes
  f.pair_tiles = true;  // grid x halved with tg_div = 2 when masked; a WG takes a head and a tail tile
  f.grid = GridOrder::blocks_first;  // grid (q tiles, Hq, B)
  f.mfma = "v_mfma_f32_32x32x8_bf16";  // AITER-CO section 3
  f.vgprs = 256;      // AITER-CO section 2 (.vgpr_count)
  f.lds_bytes = 65536;
  f.loop = aiter_fwd_density();
  f.prologue = aiter_fwd_prologue();
  f.epilogue = aiter_fwd_epilogue();
  // The code objects shipped for gfx942, one per head dimension and dtype, with their tiles (ts_qo,
  // ts_kv). Only d=128 bf16 was disassembled (AITER-CO): the other shapes keep its densities,
  // VGPRs and LDS (docs/workloads.md).
  k.shapes_source =
      "ROCm/aiter hsa/gfx942/fmha_v3_fwd/fmha_fwd.csv @41f30ab6, fmha_v3_bwd/fmha_bwd_dqdkdv.csv @5adbf893; "
      "csrc/cpp_itfs/mha_fwd.cu @0207a01b, mha_bwd.cu @0a62dd57";
  // Masks: none, or causal along the bottom-right diagonal (top-left only where the two agree,
  // seqlen_q = seqlen_k; no window: mha_fwd.cu get_cfg_mask_type @0207a01b). The d=192:128 code
  // object launches 256 threads on a (heads, q tiles, batch) grid, head and tail tiles unpaired.
  const CodeObjectMasks fwd_masks{false, true, false};
  f.shapes = {{128, 128, {Dtype::bf16}, 256, 32, fwd_masks},
              {192, 128, {Dtype::bf16}, 128, 32, fwd_masks, false, 4, true},
              {128, 128, {Dtype::fp8}, 256, 64, fwd_masks}};

  BwdSchedule& b = k.bwd;
  b.block_m = 16;   // ts_qo (fmha_bwd_dqdkdv.csv)
  b.block_n = 192;  // ts(kv)
  b.waves = 4;      // 256 threads
  b.stages = 2;     // estimate
  b.pair_blocks = true;  // grid x halved for causal; the WG runs its loop twice (AITER-CO section 3)
  b.grid = GridOrder::blocks_first;
  b.dq = DqMode::atomic;  // a32: buffer_atomic_add_f32 into dq_acc, then dq_convert (a16: bf16 atomics, no convert)
  b.gqa = GqaMode::expand;  // FA-SCHED B1: aiter's interface writes dk/dv_expanded and sums them
  b.preprocess_rows = 128;  // odo ts
  b.convert_rows = 64;      // dq_convert ts
  b.mfma = "v_mfma_f32_16x16x16_bf16";
  b.vgprs = 512;
  b.lds_bytes = 65536;
  b.loop = aiter_bwd_density(a16);
  b.dq_loop = b.loop;
  b.prologue = aiter_bwd_prologue();
  b.epilogue = aiter_bwd_epilogue();
  b.preprocess = aiter_preprocess();
  b.convert = aiter_convert();
  b.dq_acc_fp32 = !a16;
  // (ts_qo, ts) and masks of the a32 and a16 code objects: a window only at d=128 a32, a16 causal
  // only along the top-left diagonal, no a16 code object at d=192; d=128 and 192 also run smaller
  // head dimensions padded (pddv; mha_bwd.cu get_padded_hdim and fmha_v3_bwd @0a62dd57).
  const std::vector<Dtype> b16{Dtype::bf16, Dtype::fp16};
  if (a16) {
    b.shapes = {{64, 64, b16, 32, 192, {true, false, false}}, {128, 128, b16, 16, 192, {true, false, false}, true}};
  } else {
    b.shapes = {{64, 64, b16, 32, 192, {true, true, false}},
                {128, 128, b16, 16, 192, {true, true, true}, true},
                {192, 192, b16, 16, 64, {true, true, false}, true}};
  }
  return k;
}

KernelSchedule ck() {
  KernelSchedule k;
  k.name = "ck";
  k.source = "Composable Kernel ck_tile FMHA, gfx942 bf16 d128 (FA-SCHED B1)";
  FwdSchedule& f = k.fwd;
  f.block_m = 128;  // kM0 (FmhaFwdTileSize d128)
  f.block_n = 128;  // kN0
  f.waves = 4;
  f.stages = 2;     // estimate: qr_async pipeline prefetches the next K tile
  f.grid = GridOrder::blocks_first;  // grid (ceil(Sq/kM0), nhead, batch)
  f.mfma = "v_mfma_f32_32x32x8_bf16";  // warp tile 32x32x16 = two 32x32x8 on gfx942
  f.vgprs = 256;     // estimate (two waves per SIMD, as the aiter forward)
  f.lds_bytes = 32768;  // estimate (K tile 128 x 32 x 2 B double-buffered plus V staging)
  f.loop = borrowed(aiter_fwd_density(), "CK");
  f.prologue = borrowed(aiter_fwd_prologue(), "CK");
  f.epilogue = borrowed(aiter_fwd_epilogue(), "CK");

  BwdSchedule& b = k.bwd;
  b.block_m = 16;    // kM0 (FmhaBwdDQDKDVTileSize d128)
  b.block_n = 128;   // kN0
  b.waves = 4;
  b.stages = 1;      // KR_KTR_VR: K, K^T, V resident in registers
  b.grid = GridOrder::blocks_first;  // grid (ceil(Sk/kN0), nhead_q, batch)
  b.dq = DqMode::atomic;
  b.gqa = GqaMode::expand;
  b.preprocess_rows = 64;  // dot_do_o M0_1D
  b.convert_rows = 64;     // estimate (convert_dq grid ceil(Sq/kM0) with the convert kernel's own tile)
  b.mfma = "v_mfma_f32_16x16x16_bf16";
  b.vgprs = 512;     // estimate (K, K^T, V in registers)
  b.lds_bytes = 49152;  // estimate
  b.loop = borrowed(aiter_bwd_density(false), "CK");
  b.dq_loop = b.loop;
  b.prologue = borrowed(aiter_bwd_prologue(), "CK");
  b.epilogue = borrowed(aiter_bwd_epilogue(), "CK");
  b.preprocess = borrowed(aiter_preprocess(), "CK");
  b.convert = borrowed(aiter_convert(), "CK");
  return k;
}

KernelSchedule triton_amd() {
  KernelSchedule k;
  k.name = "triton-amd";
  k.source = "aiter Triton AMD backend, gfx942 (FA-SCHED B2)";
  FwdSchedule& f = k.fwd;
  f.block_m = 128;  // BLOCK_M (fwd_prefill.py)
  f.block_n = 64;   // BLOCK_N
  f.waves = 4;      // num_warps
  f.stages = 1;     // num_stages
  f.grid = GridOrder::heads_first;  // grid (Hq, ceil(Sq/BLOCK_M), B)
  f.mfma = "v_mfma_f32_32x32x8_bf16";  // estimate (Triton's default 32x32 matrix instructions for the forward)
  f.vgprs = 256;    // waves_per_eu = 2
  f.lds_bytes = 32768;  // estimate (K and V tiles 64 x 128 x 2 B)
  f.loop = borrowed(aiter_fwd_density(), "Triton");
  f.prologue = borrowed(aiter_fwd_prologue(), "Triton");
  f.epilogue = borrowed(aiter_fwd_epilogue(), "Triton");

  BwdSchedule& b = k.bwd;
  b.block_m = 32;     // BLOCK_M1 (bwd.py "off" config)
  b.block_n = 128;    // BLOCK_N1
  b.waves = 4;
  b.stages = 1;
  b.grid = GridOrder::heads_first;  // grid (H_k, ceil(Sk/BLOCK_N1), B)
  b.dq = DqMode::two_pass;  // fused mode: dQ for a 128-row Q block in a second loop over K, no atomics
  b.gqa = GqaMode::kv_loop;  // for hqid in range(hkid*G, hkid*G+G)
  b.dq_block_m = 128;  // BLOCK_M2
  b.dq_block_n = 64;   // BLOCK_N2
  b.preprocess_rows = 64;  // PRE_BLOCK
  b.convert_rows = 64;
  b.mfma = "v_mfma_f32_16x16x16_bf16";  // nonkdim = 16
  b.vgprs = 512;  // waves_per_eu = 1
  b.lds_bytes = 65536;  // estimate
  b.loop = borrowed(aiter_bwd_density(false), "Triton");
  b.dq_loop = b.loop;
  b.prologue = borrowed(aiter_bwd_prologue(), "Triton");
  b.epilogue = borrowed(aiter_bwd_epilogue(), "Triton");
  b.preprocess = borrowed(aiter_preprocess(), "Triton");
  b.convert = borrowed(aiter_convert(), "Triton");
  return k;
}

KernelSchedule aotriton() {
  KernelSchedule k = triton_amd();
  k.name = "aotriton";
  k.source = "AOTriton, ROCm aten::_efficient_attention (FA-SCHED Part A: the seed; two-pass, 64x64 blocks; "
             "grids from ROCm/aotriton v2src/flash)";
  k.fwd.block_m = 128;  // estimate (not in the references)
  k.fwd.block_n = 64;   // estimate
  // Every AOTriton kernel's grid is (tiles, heads, batch), the tile index fastest: attn_fwd's
  // (cdiv(seqlen_q, BLOCK_M), Hq, B) (ROCm/aotriton v2src/flash/attn_fwd.cc @00e1e36a, its
  // grid_calculator; the persistent form, tritonsrc/fwd_kernel.py @52a37783, numbers its tiles the
  // same way: the Q tile, then the head, then the batch), bwd_kernel_dk_dv's (cdiv(seqlen_k,
  // BLOCK_N), Hkv, B) and bwd_kernel_dq's (cdiv(seqlen_q, BLOCK_M), Hq, B) (v2src/flash/attn_bwd.cc
  // @0039df31). Consecutive workgroups are one head's tiles, where the Triton AMD backend, whose
  // schedule this preset otherwise borrows, launches the heads of one tile one after another.
  k.fwd.grid = GridOrder::blocks_first;
  k.bwd.grid = GridOrder::blocks_first;
  k.bwd.block_m = 64;   // "block_q = block_kv = 64 (default for d=128)" (TraceLens PR #757 ec6e1ef0)
  k.bwd.block_n = 64;
  k.bwd.dq_block_m = 64;
  k.bwd.dq_block_n = 64;
  k.bwd.gqa = GqaMode::kv_loop;  // bwd_kernel_dk_dv runs one workgroup per KV head (grid y = K's heads, attn_bwd.cc)
  for (LoopDensity* d : {&k.fwd.loop, &k.bwd.loop, &k.bwd.dq_loop}) {
    d->source = std::string("estimate (AOTriton code objects not read; aiter-v3 density)");
  }
  return k;
}

// A kernel's measured fixed part: a prologue and an epilogue (borrowed mixes) whose issue-only
// counts grow or shrink, in proportion to each part's instructions, until the two together issue
// `instructions` per wave, each followed by `wait` cycles (FixedMix::issue_wait).
void set_measured_fixed(FixedMix& pro, FixedMix& epi, double instructions, float wait, const std::string& source) {
  const auto issued = [](const FixedMix& m) { return static_cast<double>(m.mfma + m.valu + m.trans + m.issue_only); };
  const double both = issued(pro) + issued(epi), extra = instructions - both;
  for (FixedMix* m : {&pro, &epi}) {
    const double share = extra * issued(*m) / both;
    m->issue_only = static_cast<std::uint32_t>(std::max(0.0, std::round(m->issue_only + share)));
    m->issue_wait = wait;
    m->source = source + "; " + m->source;
  }
}

KernelSchedule fa2() {
  KernelSchedule k;
  k.name = "fa2";
  k.native_arch = "h100";
  k.source = "FlashAttention-2 CUDA, sm80/sm90 d128 (FA-SCHED B3)";
  FwdSchedule& f = k.fwd;
  f.block_m = 128;  // kBlockM (Flash_fwd_kernel_traits<128, 128, 64, 4>)
  f.block_n = 64;   // kBlockN
  f.waves = 4;      // 4 warps
  f.stages = 2;     // estimate (cp.async double buffering of K/V)
  f.grid = GridOrder::blocks_first;  // grid (num_m_block, b, h)
  f.mfma = "mma.sync.m16n8k16.f32.bf16";
  // Measured (validation/measurements/h200_detail_20261204/h200_torch_fa2_ncu_raw_20261204.csv: ncu on
  // torch 2.11's flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>> on an H200): 255
  // registers, 65536 B of shared memory (Q 128x128 + K, V 64x128, bf16; the estimate was 49152),
  // two workgroups per SM.
  f.vgprs = 255;
  f.lds_bytes = 65536;
  f.loop = borrowed(aiter_fwd_density(), "FlashAttention-2");
  // The softmax's VALU and exp per score, counted from FlashAttention-2's source (FA2-SRC:
  // csrc/flash_attn/src/softmax.h and mask.h), not aiter's (whose bf16 rounding takes 4-6 VALU per
  // value where CUDA packs two in one cvt): per score one max (the row reduction), one FFMA
  // (x * scale - max, fed to exp2f), one add (the row sum) and half a pack to 16 bits for P V;
  // per O element one multiply (the rescale), d / kBlockN = 128 / 64 = 2 per score at d = 128.
  // 1 + 1 + 1 + 0.5 + 2 = 5.5 per score and lane. Each thread holds 4 rows (32 rows per warp,
  // m16n8 fragments), so 4 exp2 per warp and iteration rescale the running max. A causal tile's
  // mask: a compare and a select per score.
  f.loop.valu_per_score_lane = 5.5;
  f.loop.extra_trans = 4;
  f.loop.mask_valu_per_score_lane = 2.0;
  // Shared-memory traffic from the kernel's MMA layout (FA2-SRC flash_fwd_kernel.h with
  // Flash_fwd_kernel_traits<128, 128, 64, 4>: 4 warps along M, Q not held in registers, P V with P
  // from registers): per iteration each warp reads its 32 rows of Q (8 KiB) and the whole K and V
  // tiles (16 KiB each), 160 KiB for 4 warps over the K and V tiles' 32 KiB: 1.25 per byte per
  // wave; K and V are written once (cp.async), a quarter of the tiles per wave: 0.25.
  f.loop.lds_read_per_tile_byte = 40.0 / 32.0;
  f.loop.lds_write_per_tile_byte = 8.0 / 32.0;
  // Instructions and fixed-latency waits, measured (h200_torch_fa2_ncu_raw_20261204.csv, B = 4, 16
  // heads, N = 4096, d = 128): smsp__inst_executed 646,324,224 (dense) and 340,629,248 (causal) over
  // 8,192 warps, 78,897.0 and 41,580.7 per warp, = F + 64 I and F + 33 I + 2 (I + 128) for a warp's
  // fixed part F, I per iteration and the 128 mask VALU of each of a causal warp's two masked
  // iterations (the 64 and on average 33 iterations of a 128-row block over 64-key blocks): I =
  // 1,212.0 per warp and iteration (F = 1,329). Less the model's 256 mma.sync, 352 VALU and 68 exp:
  // 536 issue-only, 8.375 per score lane (64 per warp). `stall_wait` per issued instruction, 1.34 in
  // both (the stall counts of the instructions' control bits).
  f.loop.issue_only_per_score_lane = (1212.0 - 256 - 352 - 68) / 64;
  f.loop.issue_wait_per_instruction = 1.34;
  f.loop.source = "VALU, exp and mask per score counted from FA2-SRC softmax.h and mask.h (d = 128, kBlockN = 64); "
                  "LDS bytes from its MMA layout; instructions and fixed-latency waits measured (ncu, H200, d = 128); "
                  "barriers an estimate (aiter-v3 density)";
  f.prologue = borrowed(aiter_fwd_prologue(), "FlashAttention-2");
  f.epilogue = borrowed(aiter_fwd_epilogue(), "FlashAttention-2");
  // The warp's fixed part F = 1,329 instructions (above), 1.34 cycles of wait each (the kernels'
  // stall_wait, equal in both): the borrowed mixes' 1,101 scaled to it.
  set_measured_fixed(f.prologue, f.epilogue, 1329.0, 1.34f,
                     "instructions and waits of the prologue and epilogue together measured (ncu, H200, d = 128)");

  BwdSchedule& b = k.bwd;
  b.block_m = 64;    // kBlockM (Flash_bwd_kernel_traits<128, 64, 128, 8, ...>)
  b.block_n = 128;   // kBlockN
  b.waves = 8;       // 8 warps
  b.stages = 1;
  b.grid = GridOrder::blocks_first;  // grid (num_n_block, b, h)
  b.dq = DqMode::atomic;  // fp32 atomicAdd into dq_accum, then convert_dq
  b.gqa = GqaMode::expand;  // dk_expanded / dv_expanded, then summed
  b.preprocess_rows = 64;
  b.convert_rows = 64;
  b.mfma = "mma.sync.m16n8k16.f32.bf16";
  b.vgprs = 255;          // measured as the forward's (ncu on torch 2.11's flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel)
  b.lds_bytes = 147456;  // "smem >= 144 KB" selects these traits; ncu measured 147456
  b.loop = borrowed(aiter_bwd_density(false), "FlashAttention-2");
  // Per score, from FA2-SRC flash_bwd_kernel.h: P recomputed as exp2f of an FFMA with the row's LSE
  // (1 VALU, 1 exp; no running max, so no exp per row), dS = P (dP - D) (2), and P and dS packed to
  // 16 bits for the dV, dK and dQ MMAs (0.5 each): 4 per score and lane; a causal tile's mask a
  // compare and a select. Shared memory from the MMA layouts (Flash_bwd_kernel_traits<128, 64, 128,
  // 8, 2, 4, 2>: 8 warps, S and dP over 2 x 4 warps, dV and dK over 4 x 2, dQ over 2 x 4; every
  // operand from shared memory): each warp reads its A rows and B columns, S = Q K^T and dP = dO V^T
  // 4 x 64 x 128 + 2 x 128 x 128 elements each (128 KiB), dV = P^T dO and dK = dS^T Q 2 x 128 x 64 +
  // 4 x 128 x 64 (96 KiB each), dQ = dS K as S (128 KiB): 576 KiB per iteration for 8 waves over the
  // Q and dO tiles' 32 KiB, 2.25 per byte per wave; written: Q and dO (cp.async) and P and dS, 64 KiB,
  // 0.25 per byte per wave.
  b.loop.valu_per_score_lane = 4.0;
  b.loop.mask_valu_per_score_lane = 2.0;
  b.loop.lds_read_per_tile_byte = 576.0 / 8 / 32;
  b.loop.lds_write_per_tile_byte = 64.0 / 8 / 32;
  // Instructions and waits measured as the forward's: 1,065,058,304 and 600,506,368 over 16,384
  // warps, 65,006.0 and 36,652.0 per warp = F + 64 I and F + 33 I + 2 (I + 64) (64 and on average 33
  // iterations of 64 query rows per 128-key block, two of them masked, 64 mask VALU each): I = 918.8
  // (F = 6,203). Less 320 mma.sync, 128 VALU and 32 exp: 438.8 issue-only, 13.71 per score lane (32
  // per warp). `stall_wait` 2.22 and 2.07 per instruction, 144,313 and 75,870 cycles per warp: the
  // iterations' 31 I - 2 x 64 = 28,354 instructions took 68,443, 2.41 per instruction (the fixed
  // part 0.38).
  b.loop.issue_only_per_score_lane = (918.8 - 320 - 128 - 32) / 32;
  b.loop.issue_wait_per_instruction = 2.41;
  b.loop.source = "VALU, exp and mask per score counted from FA2-SRC flash_bwd_kernel.h; LDS bytes from its MMA layouts "
                  "(d = 128, kBlockM 64, kBlockN 128, 8 warps); instructions and fixed-latency waits measured (ncu, H200, "
                  "d = 128); barriers an estimate (aiter-v3 density)";
  b.dq_loop = b.loop;
  b.prologue = borrowed(aiter_bwd_prologue(), "FlashAttention-2");
  b.epilogue = borrowed(aiter_bwd_epilogue(), "FlashAttention-2");
  // F = 6,203 instructions (above), whose waits took 2.22 x 65,006.0 - 64 x 918.8 x 2.414 = 2,369
  // cycles, 0.38 each (2.414 = 68,443 / 28,354 unrounded): the borrowed mixes' 3,341 scaled to it.
  set_measured_fixed(b.prologue, b.epilogue, 6203.0, 0.38f,
                     "instructions and waits of the prologue and epilogue together measured (ncu, H200, d = 128)");
  b.preprocess = borrowed(aiter_preprocess(), "FlashAttention-2");
  b.convert = borrowed(aiter_convert(), "FlashAttention-2");
  // The loop-free kernels, measured (h200_torch_fa2_ncu_raw_20261204.csv, as the forward's):
  // flash_bwd_dot_do_o_kernel 256 threads, 50 registers, no shared memory; flash_bwd_convert_dq_kernel
  // 256 threads, 48 registers, 16,384 B. The dQ accumulator's zeroing is the caller's (not measured).
  b.preprocess_kernel = {8, 50, 0};
  b.convert_kernel = {8, 48, 16384};
  b.rows_kernels_source =
      "preprocess and convert measured (ncu on torch 2.11's flash_bwd_dot_do_o_kernel and flash_bwd_convert_dq_kernel, "
      "H200); zeroing and group sum as aiter's (AITER-CO section 2)";
  return k;
}

KernelSchedule fa3() {
  KernelSchedule k = fa2();
  k.name = "fa3";
  k.source = "FlashAttention-3 (Hopper), d128 bf16 (FA-SCHED B4)";
  k.fwd.block_m = 128;        // kBlockM
  k.fwd.block_n = 176;        // non-causal kBlockN (128 when causal or local)
  k.fwd.block_n_masked = 128;
  k.fwd.waves = 8;            // 2 MMA warpgroups ...
  k.fwd.load_waves = 4;       // ... + 1 producer warpgroup = 384 threads
  k.fwd.stages = 2;
  // Persistent on sm90 unless split (flash_fwd_launch_template.h, FA-SCHED B4): one CTA per SM
  // loops over tiles, its producer loading the next tile's Q, K and V while the MMA warpgroups
  // finish the last (FA3 paper Sec. 3.1). The backward's schedulers are single-tile (not persistent).
  k.fwd.persistent = true;
  // Tile order (tile_scheduler.hpp): causal forward tiles longest first (DynamicPersistentTileScheduler,
  // "longest-processing-time-first"), the heads x batch in sections whose K and V fit 32 MB of L2;
  // the causal backward's SingleTileBwdLPTScheduler the same with 40 MB for Q, dO and dQaccum.
  // Dense grids go blocks first (StaticPersistentTileScheduler, SingleTileScheduler).
  k.fwd.grid = GridOrder::longest_first;
  k.fwd.l2_section_bytes = 32u << 20;
  k.bwd.grid = GridOrder::longest_first;
  k.bwd.l2_section_bytes = 40u << 20;
  k.fwd.mfma = "wgmma.m64n256k16.f32.bf16";
  k.fwd.lds_bytes = 196608;   // estimate (Q + 2 stages of K and V, 128/176 x 128 bf16)
  // setmaxnreg: 240 registers per thread for the two MMA warpgroups, 24 for the producer
  // (Dao-AILab/flash-attention hopper/flash_fwd_kernel_sm90.h and flash_bwd_kernel_sm90.h,
  // LoadRegisterRequirement / MmaRegisterRequirement); one figure per wave here: the mean,
  // (2 x 128 x 240 + 128 x 24) / 384 = 168, which fills the SM's 64 Ki registers as the kernel does.
  k.fwd.vgprs = 168;
  k.bwd.block_m = 80;         // non-causal kBlockM (64 when causal)
  k.bwd.block_m_masked = 64;
  k.bwd.block_n = 128;
  k.bwd.waves = 8;            // 2 MMA warpgroups + 1 producer warpgroup
  k.bwd.load_waves = 4;
  k.bwd.stages = 2;           // Stages_dO = Stages_dS = 2
  k.bwd.mfma = "wgmma.m64n256k16.f32.bf16";
  k.bwd.lds_bytes = 196608;   // estimate
  k.bwd.vgprs = 168;          // as the forward (flash_bwd_kernel_sm90.h: 240 / 24)
  k.bwd.gqa = GqaMode::expand;  // FA3 reduce-adds dK/dV in fp32; modelled as expansion (see docs)
  k.bwd.rows_kernels_source = "estimate (FlashAttention-2's measured preprocess and convert; FA3's own not measured)";
  // FA3 has no two-pass dQ kernel; its dq_loop (bwd.dq=two_pass, a what-if) keeps FA2's backward
  // densities. The forward's and backward's loops get their own sources below.
  k.bwd.dq_loop.source = "as FlashAttention-2's backward (FA2-SRC); FlashAttention-3 has no two-pass dQ kernel";
  // FA3's instruction streams are its own (warpgroup MMA, a producer warpgroup) and were not
  // measured: its loops take aiter's issue-only density and no fixed-latency waits, not FA2's
  // measured ones.
  for (LoopDensity* d : {&k.fwd.loop, &k.bwd.loop}) d->issue_wait_per_instruction = 0;
  k.fwd.prologue = borrowed(aiter_fwd_prologue(), "FlashAttention-3");
  k.fwd.epilogue = borrowed(aiter_fwd_epilogue(), "FlashAttention-3");
  k.bwd.prologue = borrowed(aiter_bwd_prologue(), "FlashAttention-3");
  k.bwd.epilogue = borrowed(aiter_bwd_epilogue(), "FlashAttention-3");
  k.fwd.loop.issue_only_per_score_lane = aiter_fwd_density().issue_only_per_score_lane;
  k.bwd.loop.issue_only_per_score_lane = aiter_bwd_density(false).issue_only_per_score_lane;
  // LDS (shared memory) reads of the forward, derived: a warpgroup MMA reads its shared-memory
  // operands once for its four warps (WGMMA-GUIDE); Q K^T reads Q's 64-row slice and the K tile
  // from shared memory, P V reads the V tile (P from registers, MmaPV_is_RS, FA-SCHED B4). Per
  // warpgroup per iteration at d=128 and kBlockN=176: 16 KiB + 44 KiB + 44 KiB, a quarter per wave,
  // over the K and V tiles' 88 KiB. (Causal problems' kBlockN=128 would give 0.3125; aiter's
  // per-wave density, 1.0, counted each warp reading the whole tiles.)
  k.fwd.loop.lds_read_per_tile_byte = (64.0 * 128 * 2 + 2 * 176.0 * 128 * 2) / (4 * 2 * 176.0 * 128 * 2);
  // VALU and exp per score from FlashAttention-3's source (FA3-SRC: hopper/softmax.h and mask.h),
  // the same count as FlashAttention-2's: max, FFMA, add and half a pack per score (3.5), and the O
  // rescale, d / kBlockN = 128 / 176 per score at the non-causal tile (causal tiles' kBlockN 128
  // would make it 1.0, 6 % more VALU); each thread holds 2 rows of its warpgroup's 64 (two exp2 per
  // warp and iteration for the running max); a causal tile's mask a compare and a select per score.
  k.fwd.loop.valu_per_score_lane = 3.5 + 128.0 / 176.0;
  k.fwd.loop.extra_trans = 2;
  k.fwd.loop.mask_valu_per_score_lane = 2.0;
  // The producer's TMA writes each K and V tile once: an eighth per MMA wave.
  k.fwd.loop.lds_write_per_tile_byte = 1.0 / 8;
  k.fwd.loop.source =
      "LDS bytes derived from warpgroup MMA semantics and TMA (WGMMA-GUIDE, FA-SCHED B4); VALU, exp and mask per score "
      "counted from FA3-SRC softmax.h and mask.h (d = 128, kBlockN = 176); the rest an estimate (aiter-v3 density)";
  // The backward's, the same way (FA-SCHED B4, d128 non-causal: kBlockM 80, kBlockN 128, two MMA
  // warpgroups, SdP_swapAB, not dKV_swapAB, dQ_swapAB, atom layouts 1/2/1, so P and dS feed dV
  // and dK from registers): per iteration, S^T = K Q^T and dP^T = V dO^T each read K (or V, 32 KiB)
  // in both warpgroups and Q (or dO, 20 KiB) once between them: 84 KiB each; dQ^T = K^T dS^T the
  // same, 84 KiB; dV and dK read dO and Q as their shared-memory operand in both warpgroups, 40 KiB
  // each (an estimate: the warpgroups split the head dimension). 332 KiB for 8 waves, over the Q
  // and dO tiles' 40 KiB.
  // dQ's partial sums (kBlockM x d fp32 = 40 KiB per iteration) go through shared memory: the MMA
  // warpgroups write them and the producer's TMA reduce-adds them to the fp32 accumulator in global
  // memory (FA3-SRC mainloop_bwd_sm90_tma_gmma_ws.hpp, SM90_BULK_REDUCE_ADD for d < 256): 40 KiB more
  // read per iteration, 372 KiB in all.
  k.bwd.loop.lds_read_per_tile_byte = (3 * 84.0 + 2 * 40.0 + 40.0) / (8 * 40.0);
  // Written per iteration: Q and dO once each by TMA (40 KiB), dS for the dQ MMA (80 x 128 x 2 B =
  // 20 KiB; P stays in registers) and dQ's partial sums (40 KiB), 100 KiB for 8 waves over 40 KiB.
  // VALU, exp and mask per score as FlashAttention-2's backward (fa2 above): the same recompute of P
  // from the LSE and dS = P (dP - D).
  k.bwd.loop.lds_write_per_tile_byte = 100.0 / 8 / 40;
  k.bwd.loop.source =
      "LDS bytes derived from warpgroup MMA semantics and FA3's backward layouts (WGMMA-GUIDE, FA-SCHED B4; "
      "the dV/dK split an estimate); VALU, exp and mask per score as FA2-SRC's backward (the same algorithm); "
      "the rest an estimate (aiter-v3 density)";
  return k;
}

// A count measured per warp and iteration at d = 128 and d = 64 (the only head dimensions of the
// validation kernels), as a part per byte of the iteration's input tiles (the difference, which
// grows with d, over `tile_bytes_per_d` bytes per unit of d) and a part per score lane (the rest,
// over `score_lanes` per warp): both measured counts are reproduced exactly.
struct MeasuredSplit {
  double per_tile_byte = 0, per_score_lane = 0;
};
MeasuredSplit split_measured(double at_d128, double at_d64, double tile_bytes_per_d, double score_lanes) {
  const double per_d = (at_d128 - at_d64) / 64.0;
  return {per_d / tile_bytes_per_d, (at_d128 - 128.0 * per_d) / score_lanes};
}

// Sets a loop's LDS wavefront densities from the wavefronts measured per warp and iteration.
void set_measured_wavefronts(LoopDensity& d, double at_d128, double at_d64, double tile_bytes_per_d, double score_lanes) {
  const MeasuredSplit w = split_measured(at_d128, at_d64, tile_bytes_per_d, score_lanes);
  d.lds_wavefronts_per_tile_byte = w.per_tile_byte;
  d.lds_wavefronts_per_score_lane = w.per_score_lane;
}

// Sets a loop's issue-only densities from its issue-only instructions per warp and iteration (the
// measured instructions less the model's matrix, VALU and transcendental ones at each d), and its
// fixed-latency wait per instruction.
void set_measured_issue(LoopDensity& d, double at_d128, double at_d64, double tile_bytes_per_d, double score_lanes,
                        double wait) {
  const MeasuredSplit i = split_measured(at_d128, at_d64, tile_bytes_per_d, score_lanes);
  d.issue_only_per_tile_byte = i.per_tile_byte;
  d.issue_only_per_score_lane = i.per_score_lane;
  d.issue_wait_per_instruction = wait;
  d.source = "LDS wavefronts, instructions and fixed-latency waits measured (H200-REF ncu, d = 64 and 128); VALU, "
             "exp and barriers an estimate (aiter-v3 density: the validation kernels' VALU mix not read from their code)";
}

// The project's own validation kernels (validation/kernels/attention_kernels.h), built by hipcc for
// AMD (`ref-hip`) or nvcc for NVIDIA (`ref-cuda`): block sizes from attention_tiling.h, registers as
// the compilers reported them (hipcc 5.2 gfx940 -Rpass-analysis=kernel-resource-usage; nvcc 13.0
// sm_90 -Xptxas -v), LDS from fwd_lds_bytes / bwd_lds_bytes at d = 128.
KernelSchedule validation_kernels(bool amd) {
  KernelSchedule k;
  k.name = amd ? "ref-hip" : "ref-cuda";
  k.native_arch = amd ? "mi300x" : "h200";
  k.source = "attnsim validation kernels (validation/kernels/attention_kernels.h)";
  const std::string mix =
      "estimate (instruction mix of the validation kernels not read from their code objects; aiter-v3 density: "
      "their time is not expected to match, their traffic is)";
  FwdSchedule& f = k.fwd;
  f.block_m = 64;   // kFwdBlockM
  f.block_n = 64;   // kFwdBlockN
  f.waves = 4;      // kWaves
  f.stages = 1;     // one K/V tile in LDS at a time
  f.grid = GridOrder::blocks_first;  // grid (query blocks, Hq, B)
  f.mfma = amd ? "v_mfma_f32_16x16x16_bf16" : "mma.sync.m16n8k16.f32.bf16";
  f.vgprs = amd ? 300 : 167;  // gfx940: 256 VGPRs + 44 AGPRs; sm_90: 167 registers
  f.lds_bytes = 58112;        // fwd_lds_bytes(128)
  // The H200's driver gave the forward 196 KiB of shared memory (H200-REF: ncu
  // launch__shared_mem_config_size 200,704 at d = 64 and 128; split_l1's rule gives the same).
  f.lds_carveout = amd ? 0 : 200704;
  // L1 lookups per 32 B sector (NVIDIA): the forward loads Q element by element into mma.sync A
  // fragments (gpu_portability.h: a lane's 8 elements in rows lane/4 and lane/4 + 8, columns
  // 2 (lane % 4) + {0, 1, 8, 9}), so each instruction touches one sector in each of 8 rows and 4 of
  // the 8 touch each sector: 4 lookups, 3 of them hits. ncu on the H200 (H200-REF, d = 128, B = 1,
  // 16 heads, N = 4096): 69,206,016 sectors = 67,108,864 of K and V tiles (coalesced, 1 each) +
  // 4 x 524,288 of Q. On AMD the TCP counts a lookup per line a wave's instruction touches: the
  // 16x16x16 MFMA's A fragment (a lane's 4 elements in row lane % 16, columns 4 (lane / 16) + i)
  // makes each global_load_ushort touch one line in each of 16 rows (bytes 2i .. 2i + 25 of a
  // 16-column group's 32), so each 128 B line of Q is looked up by 4 (i) x 4 (16-column groups) =
  // 16 instructions (hipcc 5.2 gfx940 code of attention_fwd: offsets 0, 2, 4, 6, 32, ... from one
  // address per lane).
  f.q_l1_lookups = amd ? 16 : 4;
  // The loop's K and V tiles are loaded element by element, each load waiting for its store to the
  // LDS: on NVIDIA each LDG.E.U16 is followed by its STS.U16 (H200-REF: ref_kernels.sass), so a
  // warp keeps one 2-byte load per lane, 64 B, in flight (57 % of the forward's stall samples are
  // on it, ncu long scoreboard). On AMD hipcc issues the K and the V element's global_load_ushort
  // together, then `s_waitcnt vmcnt(1)`, ds_write_b16, `s_waitcnt vmcnt(0)`, ds_write_b16 (hipcc 5.2
  // gfx940 code of attention_fwd<128>'s tile loop): two 2-byte loads per lane, 256 B per wave.
  f.loop_load_bytes_in_flight = amd ? 256 : 64;
  const auto as_estimate = [&](auto counts) {
    counts.source = mix;
    return counts;
  };
  f.loop = as_estimate(aiter_fwd_density());
  if (!amd) {
    // Shared-memory wavefronts measured (H200-REF, ncu_raw.csv: l1tex__data_pipe_lsu_wavefronts_mem_shared,
    // B = 1, 16 heads, N = 4096, 64 iterations of 4 warps in each of 1,024 workgroups): 1,282,251,312 at
    // d = 128 and 996,698,161 at d = 64. The 2-byte fragment loads of K and V (the part that grows with
    // d, over the iteration's 256 d bytes of K and V) and the score and probability strips' fp32 and
    // 16-bit accesses (the rest, over the warp's 32 score lanes), 85 % of them bank conflicts.
    set_measured_wavefronts(f.loop, 1'282'251'312.0 / (4096 * 64), 996'698'161.0 / (4096 * 64), 256.0, 32.0);
    // Instructions (smsp__inst_executed, the same runs): 1,813,905,408 at d = 128 and 1,163,825,152
    // at d = 64 over the same 262,144 warp-iterations, 6,919.6 and 4,439.7 each (the prologue and
    // epilogue included: no causal run separates them). The model issues d mma.sync (Q K^T and P V,
    // d / 2 each), 340 VALU and 33 exp per warp and iteration: issue-only 6,418.6 and 4,002.7, the
    // fragment loads' part growing with d. stall_wait 1.92 per instruction at d = 128 (2.02 at 64).
    set_measured_issue(f.loop, 6'919.6 - 128 - 340 - 33, 4'439.7 - 64 - 340 - 33, 256.0, 32.0, 1.92);
  }
  f.prologue = as_estimate(aiter_fwd_prologue());
  f.epilogue = as_estimate(aiter_fwd_epilogue());

  BwdSchedule& b = k.bwd;
  b.block_m = 32;   // kBwdBlockM
  b.block_n = 64;   // kBwdBlockN
  b.waves = 4;
  b.stages = 1;
  b.grid = GridOrder::blocks_first;  // grid (key blocks, Hq, B)
  b.dq = DqMode::atomic;             // fp32 atomicAdd into dq_acc (zeroed by a memset), then convert
  b.gqa = GqaMode::expand;           // heads_q == heads_kv only: one workgroup per head
  b.preprocess_rows = 256;           // kPreprocessRows
  b.convert_rows = 64;               // kConvertRows
  // atomicAdd of the dQ accumulator fragment, element by element: on NVIDIA (mma.sync m16n8k16's C
  // layout, PTX ISA) one instruction adds 4 of the 8 floats of a 32 B sector in each of 8 rows, the
  // next the other 4 (the H200's ncu: 2.0 red sectors per 32 B of dQ, H200-REF); on AMD (16x16 MFMA
  // C layout) 16 lanes add one row's 64 contiguous bytes.
  b.atomic_requests_per_sector = amd ? 1 : 2;
  b.mfma = f.mfma;
  b.vgprs = amd ? 337 : 255;  // gfx940: 256 + 81 AGPRs; sm_90: 255 (88 B of spills)
  b.lds_bytes = 41216;        // bwd_lds_bytes(128)
  // And the backward 132 KiB (135,168 at d = 64 and 128), where split_l1's rule gives 100 KiB: two
  // workgroups of 42,240 B need 82.5 KiB (how the driver chooses is not published).
  b.lds_carveout = amd ? 0 : 135168;
  // L1 lookups per sector (NVIDIA, as the forward's Q): the main kernel loads K and V into A
  // fragments (4 each) and K once more, coalesced, into its LDS tile (1): 5 and 4; the preprocess
  // reads one row per thread, element by element, so 16 instructions look up each 32 B sector of
  // O and dO. ncu (H200-REF, d = 128, B = 1, N = 4096): the main kernel's 72,876,032 sectors =
  // 67,108,864 of Q and dO tiles + 1,048,576 of LSE and delta + (5 + 4) x 524,288 of K and V; the
  // preprocess's 16,777,216 = 16 x 1,048,576 (15,726,396 of them hits). On AMD, per line (as the
  // forward's Q): the K and V fragments 16 each, K's LDS tile 1 more; the preprocess's loop is not
  // unrolled (hipcc 5.2 gfx940: one global_load_ushort of O and one of dO per element), so each of
  // a line's 64 elements is an instruction that looks the line up: 64.
  b.k_l1_lookups = amd ? 17 : 5;
  b.v_l1_lookups = amd ? 16 : 4;
  b.preprocess_l1_lookups = amd ? 64 : 16;
  // The loop's Q and dO tiles as the forward's K and V (ref_kernels.sass: LDG.E.U16 then STS.U16,
  // now and then two pairs at once; the LSE and delta rows by 4-byte loads, two to eight at once;
  // hipcc 5.2 gfx940: a Q and a dO element's global_load_ushort together, then their waits and
  // ds_write_b16s, 256 B per wave, as the forward's K and V).
  b.loop_load_bytes_in_flight = amd ? 256 : 64;
  b.loop = as_estimate(aiter_bwd_density(false));
  if (!amd) {
    // As the forward's (H200-REF): the main kernel's 1,781,344,388 shared wavefronts at d = 128 and
    // 959,339,794 at d = 64 over 128 iterations of 4 warps in 1,024 workgroups; the iteration's Q and
    // dO tiles are 128 d bytes, a warp's score lanes 16.
    set_measured_wavefronts(b.loop, 1'781'344'388.0 / (4096 * 128), 959'339'794.0 / (4096 * 128), 128.0, 16.0);
    // Instructions: 2,218,967,040 and 1,396,056,064 over 524,288 warp-iterations, 4,232.3 and
    // 2,662.8 each, less the model's 5 x d / 4 mma.sync (S, dP, dV, dK, dQ), 229 VALU and 16 exp;
    // stall_wait 1.92 at d = 128 (1.97 at 64).
    set_measured_issue(b.loop, 4'232.3 - 160 - 229 - 16, 2'662.8 - 80 - 229 - 16, 128.0, 16.0, 1.92);
  }
  b.dq_loop = b.loop;
  b.prologue = as_estimate(aiter_bwd_prologue());
  b.epilogue = as_estimate(aiter_bwd_epilogue());
  b.preprocess = as_estimate(aiter_preprocess());
  b.convert = as_estimate(aiter_convert());
  // The loop-free kernels: 256 threads each (__launch_bounds__ in attention_kernels.h), no LDS, and
  // the registers the compilers gave them: nvcc sm_90 30, 28 and 16 for the preprocess, zeroing and
  // convert (H200-REF: ncu launch__registers_per_thread), hipcc 5.2 gfx940 16, 7 and 10 VGPRs and
  // no AGPRs (-Rpass-analysis=kernel-resource-usage). The pass has no group sum (heads_q == heads_kv).
  const std::uint32_t small_waves = 256 / (amd ? 64 : 32);
  b.preprocess_kernel = {small_waves, amd ? 16u : 30u, 0};
  b.zero_kernel = {small_waves, amd ? 7u : 28u, 0};
  b.convert_kernel = {small_waves, amd ? 10u : 16u, 0};
  b.rows_kernels_source = amd ? "hipcc 5.2 gfx940 kernel-resource-usage of attention_kernels.h"
                              : "H200-REF (ncu launch__block_size and launch__registers_per_thread)";
  // The kernels take d = 64 or 128 in bf16, at one tile (attention_tiling.h, unsupported()).
  k.shapes_source = "validation/kernels/attention_tiling.h (unsupported()), bf16 storage (gpu_portability.h)";
  const CodeObjectMasks causal{false, true, false};  // bottom-right causal only, no window (attention_tiling.h)
  f.shapes = {{64, 64, {Dtype::bf16}, f.block_m, f.block_n, causal}, {128, 128, {Dtype::bf16}, f.block_m, f.block_n, causal}};
  b.shapes = {{64, 64, {Dtype::bf16}, b.block_m, b.block_n, causal}, {128, 128, {Dtype::bf16}, b.block_m, b.block_n, causal}};
  // Each head dimension is its own instantiation with its own resources (the schedule's are
  // d = 128's): at d = 64 LDS from fwd_lds_bytes(64) and bwd_lds_bytes(64), 41,728 and 24,832 B
  // (H200-REF: ncu launch__shared_mem_per_block_dynamic), and the compilers' registers: nvcc sm_90
  // 101 and 166 (H200-REF detail.log, -Xptxas -v; ncu launch__registers_per_thread), hipcc 5.2
  // gfx940 163 + 16 and 203 + 36 VGPRs + AGPRs (-Rpass-analysis=kernel-resource-usage).
  f.shapes[0].vgprs = amd ? 179 : 101;
  f.shapes[0].lds_bytes = 41728;
  b.shapes[0].vgprs = amd ? 239 : 166;
  b.shapes[0].lds_bytes = 24832;
  return k;
}

}  // namespace

std::vector<std::string> preset_names() { return {"aiter-v3", "aiter-v3-a16", "ck", "triton-amd", "aotriton", "fa2", "fa3", "ref-hip", "ref-cuda"};
}

std::optional<KernelSchedule> preset(const std::string& name) {
  if (name == "aiter-v3") return aiter_v3(false);
  if (name == "aiter-v3-a16") return aiter_v3(true);
  if (name == "ck") return ck();
  if (name == "triton-amd") return triton_amd();
  if (name == "aotriton") return aotriton();
  if (name == "fa2") return fa2();
  if (name == "fa3") return fa3();
  if (name == "ref-hip") return validation_kernels(true);
  if (name == "ref-cuda") return validation_kernels(false);
  return std::nullopt;
}

}  // namespace attnsim::workloads
