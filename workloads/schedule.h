// A flash-attention kernel's structure: tile sizes, waves, buffering, grid order, dQ and GQA
// strategies, and the instruction density its loops issue. Named presets reproduce real kernels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workloads/problem.h"

namespace attnsim::workloads {

// How the backward pass produces dQ.
enum class DqMode {
  atomic,    // fp32 atomic adds into dq_acc from every key block, then a convert kernel (CK, aiter a32, FA2)
  two_pass,  // a second kernel per query block re-reads K and V and accumulates dQ in registers (Triton, AOTriton)
  split,     // each key block writes its own dq_acc slice; the convert kernel sums the slices (deterministic)
};
std::string_view to_string(DqMode m);

// How the backward pass handles grouped-query attention.
enum class GqaMode {
  expand,   // one workgroup per query head; dK/dV per query head, then summed over the group (CK, FA2)
  kv_loop,  // one workgroup per KV head looping over its query heads; dK/dV summed in registers (Triton)
};
std::string_view to_string(GqaMode m);

// Which grid index varies fastest in the linear workgroup id (the dispatch order).
enum class GridOrder {
  blocks_first,   // (blocks, heads, batch): CK, aiter
  heads_first,    // (heads, blocks, batch): Triton
  // Under a mask, the longest blocks first, heads fastest within sections of the heads x batch whose
  // loop tensors fill `l2_section_bytes` (FlashAttention-3's DynamicPersistentTileScheduler forward,
  // SingleTileBwdLPTScheduler backward); without a mask, blocks_first (FA3's dense schedulers).
  longest_first,
};
std::string_view to_string(GridOrder o);

// Instruction density of a loop, per wave, as coefficients that scale with the tile shape.
// Counts come from a kernel's code object where one was read (see `source`).
struct LoopDensity {
  double valu_per_score_lane = 0;      // VALU instructions per (score / wave size)
  double mask_valu_per_score_lane = 0; // extra VALU on a tile that needs masking
  double lds_read_per_tile_byte = 0;   // LDS bytes read per byte of the loop's input tiles, per wave
  double lds_write_per_tile_byte = 0;  // LDS bytes written per byte of the loop's input tiles, per wave
  std::uint32_t barriers = 0;          // s_barrier per iteration
  std::uint32_t extra_trans = 0;       // transcendentals per iteration besides one exp per score
  // Issue-only instructions (OpCost::issue_only) per (score / wave size), on the loop's VALU work,
  // and per byte of the loop's input tiles, on its matrix products (shared as their LDS bytes are):
  // the instructions that grow with the head dimension (fragment loads, say), 0 where a code
  // object's count was read at one head dimension only.
  double issue_only_per_score_lane = 0;
  double issue_only_per_tile_byte = 0;
  // LDS wavefronts (OpCost::lds_wavefronts: passes through the LDS banks, one per clock) per wave:
  // a part per byte of the loop's input tiles, on its matrix products, and a part per
  // (score / wave size), on its softmax work. 0 and 0: the LDS bytes at the LDS's bandwidth, right for
  // wide accesses without bank conflicts; a kernel whose accesses are narrow or conflict states them.
  double lds_wavefronts_per_tile_byte = 0;
  double lds_wavefronts_per_score_lane = 0;
  // Fixed-latency waits (OpCost::issue_wait): engine cycles a wave waits, on average, after issuing
  // each instruction of the loop's compute operations before it may issue its next, beyond its turn.
  // On NVIDIA these are the stall counts of each instruction's control bits (ncu's `stall_wait`); on
  // CDNA the compiler writes them as s_nop, counted among the issue-only instructions, so 0 there.
  double issue_wait_per_instruction = 0;
  std::string source;
};

// Per-wave instruction counts of a loop-free kernel or of a loop's prologue/epilogue.
struct FixedMix {
  std::uint32_t mfma = 0, valu = 0, trans = 0, barriers = 0;
  std::uint64_t lds_read_bytes = 0, lds_write_bytes = 0;
  std::string source;
  std::uint32_t issue_only = 0;  // OpCost::issue_only
  float issue_wait = 0;          // OpCost::issue_wait: cycles after each instruction (LoopDensity's)
};

// The masks a code object implements (a causal mask along either diagonal, a sliding window).
struct CodeObjectMasks {
  bool causal_top_left = true, causal_bottom_right = true, window = false;
};

// A head-dimension and dtype combination that one of a precompiled kernel's shipped code objects
// covers, the tile that code object uses (fwd: query rows per workgroup x key rows per iteration;
// bwd: query rows per iteration x key rows per workgroup), the masks it implements, and how its
// launch differs from the schedule's where it does.
struct CodeObjectShape {
  std::uint32_t head_dim_qk = 0, head_dim_v = 0;
  std::vector<Dtype> dtypes;
  std::uint32_t block_m = 0, block_n = 0;
  CodeObjectMasks masks;
  // Also runs a smaller head dimension (a multiple of 8, Q/K and V equal) padded to its own, when
  // no smaller code object of the list covers it (aiter's padded "pddv" variants).
  bool pads = false;
  std::uint32_t waves = 0;         // 0: the schedule's
  bool heads_first_grid = false;   // the grid's fastest index is the head (no head+tail pairing)
  // The code object's launch resources where they differ from the schedule's (0: the schedule's
  // `vgprs` and `lds_bytes`): a kernel compiled per head dimension has them per head dimension.
  std::uint32_t vgprs = 0, lds_bytes = 0;
};

// Forward kernel: a Q block per workgroup looping over key blocks with online softmax.
struct FwdSchedule {
  std::uint32_t block_m = 128;  // query rows per workgroup
  std::uint32_t block_n = 64;   // key rows per iteration
  std::uint32_t block_n_masked = 0;  // key rows per iteration under a causal or window mask (0: block_n)
  std::uint32_t waves = 4;       // waves that compute (split the query rows)
  std::uint32_t load_waves = 0;  // producer waves that only issue loads (FlashAttention-3's load warpgroup)
  std::uint32_t stages = 1;     // key/value tiles in flight (buffering depth)
  bool pair_tiles = false;      // with a mask, one workgroup takes Q tile t and tile T-1-t (aiter tg_div = 2)
  // One workgroup per CU loops over tiles (a persistent kernel): its producer waves load the next
  // tile while the compute waves finish the last one (FlashAttention-3 on sm90; docs/model.md).
  bool persistent = false;
  GridOrder grid = GridOrder::blocks_first;
  // longest_first: the L2 share one section's K and V may fill (its heads: the largest power of two
  // that fits, at least one, times the query heads per KV head); 0: one section of every head.
  std::uint32_t l2_section_bytes = 0;
  std::uint32_t xcd_remap = 0;  // > 1: remap workgroup ids so consecutive blocks share one of this many XCDs
  std::string mfma;             // matrix instruction name, as in the arch config
  std::uint32_t vgprs = 0;      // per wave (arch + acc)
  std::uint32_t lds_bytes = 0;  // per workgroup
  // On a GPU whose L1 shares the LDS's array (l1.carveouts): the shared-memory carve-out the driver
  // chose for the kernel, as a profiler reported it (ncu launch__shared_mem_config_size); 0: the
  // smallest that holds the resident workgroups (docs/model.md, **L1 carve-out**). Unused elsewhere.
  std::uint32_t lds_carveout = 0;
  // L1 tag lookups the prologue's Q loads make per unit the profiler counts (NVIDIA: a 32 B
  // sector; AMD: a 128 B line): 1 for loads whose lanes cover each unit once; more for loads of
  // single elements in a matrix fragment's layout, each unit looked up by several instructions
  // (docs/model.md, **Counters**). The repeats hit; they change the L1 counters, not the traffic.
  std::uint32_t q_l1_lookups = 1;
  // Bytes each wave keeps in flight while it loads the loop's tiles (0: no limit of the kernel's own,
  // only the CU's window, cu.memory_inflight_lines): a kernel that waits for each load before the
  // next (a load into registers, then its store to the LDS) has one load instruction's bytes.
  std::uint32_t loop_load_bytes_in_flight = 0;
  LoopDensity loop;
  FixedMix prologue, epilogue;
  // The shapes its code objects cover (a precompiled kernel); empty: any head dimension and dtype
  // (a kernel compiled for the problem, such as a CK or Triton template).
  std::vector<CodeObjectShape> shapes;
};

// Backward kernels: preprocess, main (a key block per workgroup looping over query blocks),
// and dQ by atomics + convert, by a second pass, or by split slices + reduction.
// The launch resources of one of the backward's loop-free kernels (preprocess, dQ zeroing, dQ
// convert, dK/dV group sum), per workgroup.
struct RowsKernelResources {
  std::uint32_t waves = 0;         // waves (warps on NVIDIA) per workgroup; 0: the main kernel's (BwdSchedule::waves)
  std::uint32_t vgprs = 128;       // registers per lane
  std::uint32_t lds_bytes = 40960;
};

struct BwdSchedule {
  std::uint32_t block_m = 64;    // query rows per iteration of the main loop
  std::uint32_t block_m_masked = 0;  // query rows per iteration under a mask (0: block_m)
  std::uint32_t block_n = 128;   // key rows per workgroup
  std::uint32_t waves = 4;       // waves that compute (split the key rows)
  std::uint32_t load_waves = 0;  // producer waves that only issue loads
  std::uint32_t stages = 1;
  bool pair_blocks = false;      // with a mask, one workgroup takes key block t and block T-1-t
  bool persistent = false;       // the looped kernels (main, two-pass dQ) are persistent (as FwdSchedule::persistent)
  GridOrder grid = GridOrder::blocks_first;
  // longest_first: the L2 share one section's Q, dO and fp32 dQ accumulator may fill (as FwdSchedule's).
  std::uint32_t l2_section_bytes = 0;
  std::uint32_t xcd_remap = 0;   // > 1: remap workgroup ids so consecutive blocks share one of this many XCDs
  DqMode dq = DqMode::atomic;
  bool dq_acc_fp32 = true;       // atomic mode: fp32 dq_acc + convert kernel; false: 16-bit atomics into dQ (aiter a16)
  GqaMode gqa = GqaMode::expand;
  // Whether the pass launches the dQ accumulator's memset (false: the caller zeroes it outside
  // the pass, as aiter's C++ API does when it allocates it) and, with expand GQA, the sum of the
  // expanded dK/dV over each group (false: dK/dV stay per query head, as aiter's C++ API returns them).
  bool zero_dq_acc = true;
  bool sum_dkdv = true;
  std::uint32_t dq_block_m = 128;  // two-pass dQ kernel: query rows per workgroup
  std::uint32_t dq_block_n = 64;   // two-pass dQ kernel: key rows per iteration
  std::uint32_t preprocess_rows = 64;
  std::uint32_t convert_rows = 64;
  // dq = atomic: how many of the kernel's atomic instructions reach each 32 B sector of dQ, each
  // adding its share of the sector's elements (1: an instruction's lanes cover whole sectors; 2:
  // half of each, as atomicAdd of an mma.sync accumulator fragment: docs/model.md, **Counters**).
  std::uint32_t atomic_requests_per_sector = 1;
  // L1 tag lookups per profiler unit (as FwdSchedule::q_l1_lookups) of the main kernel's prologue
  // K and V loads and of the preprocess's O and dO loads.
  std::uint32_t k_l1_lookups = 1, v_l1_lookups = 1, preprocess_l1_lookups = 1;
  std::uint32_t loop_load_bytes_in_flight = 0;  // of the main kernel's loop loads, as FwdSchedule's
  std::string mfma;
  std::uint32_t vgprs = 0, lds_bytes = 0;
  std::uint32_t lds_carveout = 0;  // of the main (and two-pass dQ) kernel, as FwdSchedule's
  LoopDensity loop, dq_loop;
  FixedMix prologue, epilogue, preprocess, convert;
  // The loop-free kernels' resources; the default is aiter's (AITER-CO section 2: odo and dq_convert
  // use 128 VGPRs and 40,960 B of LDS, with the main kernel's 4 waves).
  RowsKernelResources preprocess_kernel, zero_kernel, convert_kernel, reduce_kernel;
  std::string rows_kernels_source = "AITER-CO section 2 (odo and dq_convert: 128 VGPRs, 40,960 B of LDS)";
  std::vector<CodeObjectShape> shapes;  // as FwdSchedule::shapes, for the main kernel
};

// A named kernel: its forward and backward schedules and where they come from.
struct KernelSchedule {
  std::string name;
  std::string source;
  std::string native_arch = "mi300x";  // the GPU the preset was written for
  FwdSchedule fwd;
  BwdSchedule bwd;
  std::string shapes_source;  // where the code objects' shapes were read
  bool any_shape = false;     // field `shapes=any`: simulate a shape no code object covers (a what-if)
  std::vector<std::string> overridden;  // the fields `--kernel` set (parse_kernel_spec)

  // Block sizes in force for a problem (FlashAttention-3 uses smaller tiles under a mask).
  std::uint32_t fwd_block_n(const Problem& p) const;
  std::uint32_t bwd_block_m(const Problem& p) const;
};

// Names of the presets: ck, aiter-v3, aiter-v3-a16, triton-amd, aotriton, fa2, fa3.
std::vector<std::string> preset_names();

// `PRESET[,field=value,...]`, e.g. "aiter-v3,fwd.block_n=64,bwd.dq=split".
// Contract: throws arch::ConfigError naming the preset or field on an unknown name, an unknown
// field or a bad value (and on a schedule that is structurally invalid).
KernelSchedule parse_kernel_spec(const std::string& spec);

// Fields `--kernel` can override, with their current value in `k`: ("fwd.block_m", "256"), ...
std::vector<std::pair<std::string, std::string>> schedule_fields(const KernelSchedule& k);

// Structural checks independent of a problem (block sizes positive, waves within limits, ...).
void validate(const KernelSchedule& k, const std::string& origin);

}  // namespace attnsim::workloads
