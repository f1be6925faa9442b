// The immutable description of a GPU: what the hardware is, with no notion of attention or time.
#pragma once

#include <algorithm>
#include <array>
#include <optional>
#include <cstdint>
#include <string>
#include <vector>

#include "arch/units.h"

namespace attnsim::arch {

// Element types the matrix units are described for.
enum class Dtype { bf16, fp16, fp8 };
inline constexpr std::array kDtypes{Dtype::bf16, Dtype::fp16, Dtype::fp8};
std::string_view to_string(Dtype d);
// The Dtype named `text` (bf16, fp16, fp8); nullopt for anything else.
std::optional<Dtype> parse_dtype(std::string_view text);

// Whose profiler counters the simulator predicts (rocprof TCC_* names or Nsight Compute metrics).
enum class Vendor { amd, nvidia };
std::string_view to_string(Vendor v);

// Whether each XCD has its own L2 (MI300X) or one L2 serves the whole chip (H100).
enum class L2Scope { per_xcd, shared };
std::string_view to_string(L2Scope s);

enum class WritePolicy { write_back, write_through };
std::string_view to_string(WritePolicy p);

// How a cache finds a line's set: `modulo` (line mod sets) or `hashed` (displaced by a hash of the
// address bits above the index, as GPUs spread power-of-two strides; docs/model.md).
enum class SetIndex { modulo, hashed };
std::string_view to_string(SetIndex i);
// The hashed index's multiplier where a config gives none (`l2.index_prime`, `mall.index_prime`):
// a prime near 2^32 / the golden ratio. The real index functions are not published.
inline constexpr std::uint64_t kDefaultIndexPrime = 2654435761u;

// Where device-scope atomic read-modify-writes are performed: beyond the L2, at the memory side
// (MI300X, whose eight L2s are not coherent with each other), or in the L2 (NVIDIA's L2 slices).
enum class AtomicSite { memory_side, l2 };
std::string_view to_string(AtomicSite a);

// What an L2 does when a kernel ends: `write_back` every dirty line and invalidate (MI300X: its
// per-XCD L2s are not coherent, so a kernel's results must reach memory), or `keep` its lines,
// dirty ones included, for the next kernel (NVIDIA: the L2 is the device's point of coherence).
enum class L2KernelEnd { write_back, keep };
std::string_view to_string(L2KernelEnd e);

// How workgroup ids are spread over the XCDs of a partition; round_robin: WG i -> XCD i mod n.
// round_robin: workgroup i to XCD (first_xcd + i) mod n, each XCD starting its share as it gains
// room; round_robin_blocking: the same mapping, one dispatcher handing ids out in order and waiting
// at an id whose XCD is full.
enum class DispatchOrder { round_robin, round_robin_blocking };
std::string_view to_string(DispatchOrder o);

// Chip topology.
struct ChipSpec {
  std::uint32_t xcds = 0;         // compute dies (XCDs on AMD; 1 on a monolithic GPU)
  std::uint32_t cus_per_xcd = 0;  // active compute units (SMs on NVIDIA) per XCD
};

// Clock domains and the power-limited clock model's parameters.
struct ClockSpec {
  Hertz engine_max;   // highest engine clock (boost)
  Hertz matrix_max;   // highest engine clock while matrix units are busy (NVIDIA's tensor boost)
  Hertz memory;       // HBM memory clock (MCLK)
  Hertz fabric;       // clock of the fabric and memory-side cache
  // Spread of the XCDs' engine clocks around the clock the power controller sets, as a fraction of
  // it: XCD i of n runs at 1 + xcd_spread x (1/2 - i / (n - 1)) of it (XCD 0 fastest, the mean
  // unchanged), none above engine_max. 0: one clock for every XCD (arch/clock_model.h).
  double xcd_spread = 0;
  Watts power_limit;  // board power cap
  Watts power_baseline;  // power that does not scale with the engine clock (static, uncore, memory)
  // Dynamic power each activity class would draw at power_reference_clock with the unit fully
  // busy; dynamic power scales as (f / power_reference_clock)^3 (voltage tracking frequency).
  std::array<Watts, kDtypes.size()> power_matrix{};  // indexed by Dtype
  Watts power_stream;  // a memory-streaming kernel's engine-side activity
  Watts power_vector;  // every SIMD's vector pipe busy (VALU and transcendental instructions)
  // The chip the classes above are stated for: its SIMDs (the matrix and vector classes) and its HBM
  // peak (the stream class). A chip of other SIMDs or another HBM peak draws them in proportion, the
  // same energy per operation and per byte moved (arch/clock_model.h, chip_clock).
  std::uint32_t power_reference_simds = 0;
  BytesPerSecond power_reference_hbm_bandwidth;
  // The engine clock the classes above are stated at (the cube law's reference): a what-if of
  // another engine_max moves the cap, not the energy per operation at a given clock.
  Hertz power_reference_clock;
  // When set, the engine clock is pinned here instead of modelled (AMD's validation practice of
  // fixing the clock, e.g. `rocm-smi --setperfdeterminism 1900`). Set only by an override or config.
  std::optional<Hertz> engine_pinned;
  // How often the power controller re-sets the engine clock from the activity it saw since.
  Picoseconds control_interval;
  // Published clocks of full matrix work per data type (a GEMM's median clock at the power limit),
  // where measured: reference data, not model inputs (`attnsim validate` pins its second column to
  // them). Unset where no measurement is published.
  std::array<std::optional<Hertz>, kDtypes.size()> measured_matrix{};
};

// Workgroup dispatch to XCDs.
struct DispatchSpec {
  std::uint32_t xcds_per_partition = 0;  // 8 in MI300X SPX mode, 1 in CPX mode
  DispatchOrder order = DispatchOrder::round_robin;
  std::uint32_t first_xcd = 0;  // XCD that receives workgroup 0
  Picoseconds launch_overhead;  // gap between the end of a kernel and the start of the next in one stream
};

// One matrix instruction shape (MFMA on AMD, MMA/WGMMA on NVIDIA).
struct MatrixInstruction {
  std::string name;
  Dtype dtype = Dtype::bf16;
  std::uint32_t m = 0, n = 0, k = 0;
  std::uint32_t blocks = 1;              // independent blocks computed by one instruction
  std::uint32_t simds = 1;               // SIMDs (sub-partitions) one instruction occupies
  std::uint32_t cycles = 0;              // issue-to-issue cycles on those SIMDs
  std::uint32_t valu_coexec_cycles = 0;  // of those, cycles open to independent VALU issue
  // Cycles from issue until a dependent instruction may read the result; 0: not modelled (results
  // when the pipe frees, `cycles` after issue).
  std::uint32_t latency = 0;
  // 0: the shape is fixed. Else N may be any multiple of n_step up to n, the cycles in proportion
  // (Hopper's wgmma: .m64nNk16, N = 8..256 in steps of 8).
  std::uint32_t n_step = 0;
  double flops() const { return 2.0 * m * n * k * blocks; }
  // The unit a kernel's matrix work is counted in: the instruction itself, or for a variable-N
  // instruction its N = n_step slice (cycles and co-issue cycles scaled by n_step / n; the config
  // check makes them divide exactly).
  MatrixInstruction work_unit() const {
    if (n_step == 0) return *this;
    MatrixInstruction u = *this;
    u.n = n_step;
    u.cycles = cycles * n_step / n;
    u.valu_coexec_cycles = valu_coexec_cycles * n_step / n;
    return u;
  }
};

// Compute unit (CU on AMD, SM on NVIDIA).
struct CuSpec {
  std::uint32_t wave_size = 0;             // lanes per wave (warp)
  std::uint32_t simds = 0;                 // SIMDs (sub-partitions) per CU
  std::uint32_t wave_slots_per_simd = 0;   // resident waves per SIMD
  std::uint32_t max_workgroup_size = 0;    // threads per workgroup
  Bytes vgpr_file;                         // vector register file per CU
  std::uint32_t vgpr_alloc_granule = 0;    // registers per lane a wave's allocation rounds up to
  std::uint32_t max_vgprs_per_wave = 0;    // registers per lane one wave may hold
  std::uint32_t valu_lanes_per_simd = 0;   // VALU lanes issued per clock per SIMD
  std::uint32_t trans_lanes_per_simd = 0;  // transcendental results per clock per SIMD
  Bytes lds_size;                          // LDS (shared memory) per CU
  Bytes lds_max_per_workgroup;
  std::uint32_t lds_banks = 0;
  Bytes lds_bank_width;
  BytesPerClock lds_bandwidth;  // per CU
  Cycles lds_latency;
  Cycles barrier_latency;                // s_barrier (bar.sync) once every wave has arrived
  Cycles wave_issue_interval;            // clocks between two instruction issues of one wave
  std::uint32_t memory_inflight_lines = 0;  // outstanding vector-memory line requests per CU
  std::array<std::uint64_t, kDtypes.size()> matrix_flops_per_clk{};  // dense, per CU, by Dtype
  std::vector<MatrixInstruction> matrix_instructions;
  // The instruction named `name`, or nullptr.
  const MatrixInstruction* matrix_instruction(std::string_view name) const {
    for (const auto& i : matrix_instructions) {
      if (i.name == name) return &i;
    }
    return nullptr;
  }
};

// A set-associative cache level.
struct CacheSpec {
  Bytes size;
  std::uint32_t ways = 0;
  Bytes line;
  std::uint64_t sets() const { return size.value / (static_cast<std::uint64_t>(ways) * line.value); }
};

// Vector L1 per CU.
struct L1Spec : CacheSpec {
  BytesPerClock bandwidth;  // per CU
  Cycles latency;           // load-to-use latency of a hit
  WritePolicy write_policy = WritePolicy::write_through;
  // An L1 that shares one array with the LDS (NVIDIA's unified L1/shared memory): the shared-memory
  // sizes the array can be split into, increasing, the largest cu.lds_size (empty: L1 and LDS apart,
  // `size` always). A kernel's L1 is then size + cu.lds_size less its carve-out, in the sets `ways`
  // gives at `size` (the ways follow the carve-out).
  std::vector<Bytes> carveouts;
  Bytes carveout_reserve;  // shared memory the driver adds per workgroup (with carveouts)
};

// L2, per XCD or shared by the chip.
struct L2Spec : CacheSpec {
  L2Scope scope = L2Scope::per_xcd;
  std::uint32_t channels = 0;      // per L2 instance
  BytesPerClock read_bandwidth;    // per channel, engine clock
  BytesPerClock write_bandwidth;   // per channel, engine clock
  Cycles latency;                  // added latency of an L2 hit beyond an L1 miss
  std::uint32_t writeback_queue = 0;  // dirty lines per channel that may wait to be written back
  WritePolicy write_policy = WritePolicy::write_back;
  SetIndex set_index = SetIndex::hashed;
  std::uint64_t index_prime = kDefaultIndexPrime;  // the hashed index's multiplier (odd, below 2^32)
  AtomicSite atomics = AtomicSite::memory_side;  // where device-scope atomics are performed
  L2KernelEnd kernel_end = L2KernelEnd::write_back;  // what the L2 does at a kernel's end
  // A shared L2 split in `partitions` halves (1 or 2), each with size / partitions bytes and
  // channels / partitions channels: a line's home is one of them; a CU's near one caches what the
  // CU reads (docs/model.md, L2 partitions). far_latency: the added round trip through the far one.
  std::uint32_t partitions = 1;
  Cycles far_latency{0};  // 0: not set; unused with one partition
};

// The link from an L2 to the fabric.
struct FabricSpec {
  BytesPerClock l2_link_bandwidth;  // per L2 channel, engine clock
};

// Memory-side cache (AMD Infinity Cache / MALL); absent on GPUs without one.
struct MallSpec : CacheSpec {
  bool present = false;
  std::uint32_t channels = 0;
  BytesPerClock bandwidth;  // per channel, fabric clock
  Picoseconds latency;      // added latency of a MALL hit beyond an L2 miss
  SetIndex set_index = SetIndex::hashed;
  std::uint64_t index_prime = kDefaultIndexPrime;  // the hashed index's multiplier (odd, below 2^32)
};

// High-bandwidth memory.
struct HbmSpec {
  std::uint32_t stacks = 0;
  std::uint32_t channels = 0;  // independent channels in all stacks
  BytesPerSecond peak_bandwidth;  // datasheet peak of all channels together
  Bytes capacity;                 // memory all stacks hold (datasheet): a problem's tensors must fit
  Bytes interleave;               // consecutive address bytes per channel before the next
  Picoseconds latency;            // added latency of a DRAM access beyond a MALL miss
  Bytes write_queue;              // per channel: writes the memory controller accepts before they drain
  Bytes write_burst;              // per channel: bytes drained per switch from reads to writes and back
  Picoseconds turnaround;         // data-bus time lost per such switch pair (read-to-write and write-to-read)
};

// A whole GPU. Built only by the loader, which validates every field; immutable afterwards.
struct GpuSpec {
  int schema_version = 0;
  std::string name;
  Vendor vendor = Vendor::amd;
  std::string isa;
  ChipSpec chip;
  ClockSpec clock;
  DispatchSpec dispatch;
  CuSpec cu;
  L1Spec l1;
  L2Spec l2;
  FabricSpec fabric;
  MallSpec mall;
  HbmSpec hbm;

  std::uint32_t total_cus() const { return chip.xcds * chip.cus_per_xcd; }
  // Every SIMD of the chip: what the matrix and vector activities are fractions of, and what
  // clock.power.reference_simds counts.
  std::uint32_t total_simds() const { return total_cus() * cu.simds; }
  // The L2's tag stores: one per XCD, or the partitions of one shared L2; each instance's bytes and
  // channels.
  std::uint32_t l2_instances() const { return l2.scope == L2Scope::per_xcd ? chip.xcds : l2.partitions; }
  std::uint64_t l2_instance_bytes() const { return l2.scope == L2Scope::per_xcd ? l2.size.value : l2.size.value / l2.partitions; }
  std::uint32_t l2_instance_channels() const { return l2.scope == L2Scope::per_xcd ? l2.channels : l2.channels / l2.partitions; }
  // Every L2 instance's bytes together.
  std::uint64_t l2_total_bytes() const { return l2_instance_bytes() * l2_instances(); }
  // The instance CU `cu` (numbered across the chip) of XCD `xcd` reads through: its XCD's, or its
  // near partition (the CUs alternate between the partitions: docs/model.md).
  std::uint32_t l2_instance_of(std::uint32_t xcd, std::uint32_t cu = 0) const {
    return l2.scope == L2Scope::per_xcd ? xcd : cu % l2.partitions;
  }
  // An L1 shared with the LDS (l1.carveouts): whether `bytes` is one of its carve-outs, and the L1
  // a carve-out leaves of the array (l1.size + cu.lds_size less it).
  bool is_l1_carveout(std::uint64_t bytes) const {
    return std::any_of(l1.carveouts.begin(), l1.carveouts.end(), [&](const Bytes& c) { return c.value == bytes; });
  }
  std::uint64_t l1_left_by(std::uint64_t carveout) const { return l1.size.value + cu.lds_size.value - carveout; }
  // The L1's sets, fixed by its geometry at l1.size (size / (ways x line)): a carve-out takes ways,
  // not sets, so an L1 of `bytes` has bytes / (sets x line) ways (docs/model.md, L1 carve-out).
  std::uint64_t l1_sets() const { return l1.size.value / (std::uint64_t{l1.ways} * l1.line.value); }
  std::uint64_t l1_ways_at(std::uint64_t bytes) const { return bytes / (l1_sets() * l1.line.value); }
};

inline constexpr int kSchemaVersion = 1;

}  // namespace attnsim::arch
