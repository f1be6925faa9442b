// The memory hierarchy of global memory, timed and counted in one place: the vector L1 of each CU
// (tags), the L2 of each XCD (tags, channels, write-back), the L2-to-fabric links, the memory-side
// cache (MALL) and the HBM channels, each channel a bandwidth server, with the configured added
// latency of each level and the request-size rules that the vendor's FETCH_SIZE and WRITE_SIZE
// counters depend on. (The CU's L1 port bandwidth is the CU's own: ComputeUnit.)
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arch/gpu_spec.h"
#include "sim/bandwidth_server.h"
#include "sim/cache.h"
#include "sim/channel_demand.h"
#include "sim/server_bank.h"
#include "sim/stats.h"
#include "sim/counters.h"
#include "sim/divisor.h"
#include "sim/group_cache.h"
#include "sim/hbm_write_queue.h"
#include "sim/l1_cache.h"
#include "sim/time.h"
#include "sim/time_breakdown.h"
#include "workloads/kernel_program.h"
#include "workloads/tensors.h"

namespace attnsim::sim {

// Busy time of each level's servers, summed over its channels.
struct LevelBusy {
  Tick l2 = 0, link = 0, mall = 0, hbm = 0;
  std::uint32_t l2_channels = 0, links = 0, mall_channels = 0, hbm_channels = 0;
};

// One line request of a memory operation: [lo, hi) of the L2 line at `address`.
struct LineRequest {
  std::uint64_t address = 0;
  std::uint32_t lo = 0, hi = 0;
};

// Rows of a tile for the approximate mode: `rows` rows of `row_bytes` bytes, `stride` bytes apart,
// the first being row `first_row` of its tensor. Rows are grouped by their index in the tensor, so
// every tile touching a row finds it in the same group whatever its own first row.
struct RowSpan {
  std::uint64_t address = 0;
  std::uint64_t row_bytes = 0;
  std::uint64_t stride = 0;
  std::uint32_t rows = 0;
  std::uint64_t first_row = 0;
};

// Appends the rows tile `t` of tensor `d` touches to `spans`, extending the last span where they
// continue it (consecutive tiles of a batch of loop iterations); returns their bytes.
std::uint64_t append_tile_rows(std::vector<RowSpan>& spans, const workloads::TensorDesc& d, const workloads::TileRef& t);

// How the tags of the caches are kept: exact set-associative LRU per line, or the approximate
// mode's groups of lines (a tile's rows of one head), bounded against the exact mode in tests.
enum class TagMode : std::uint8_t { exact, approximate };

// When a batch of line requests (one tile operation) is done, and for how long it holds the
// issuing CU's window of outstanding requests.
struct BatchTiming {
  Tick finish = 0;       // reads: data back; writes: accepted by the L2; atomics: performed and acknowledged
  Tick latency_sum = 0;  // each request's unloaded round trip, summed (a window slot is held that long)
  WaitCause bound = WaitCause::l2;  // the level whose channels (and latency) set `finish`
  Tick latency = 0;                 // that level's unloaded round trip, part of finish - issue
};

// Contract: requests are timed in the order they are presented (the event engine presents them in
// time order). Lines are identified by their L2 line address; `lo`/`hi` are the byte range [lo, hi)
// of the line a request touches; `cu` (any index below chip.xcds x chip.cus_per_xcd, one L1 each)
// is the issuing CU: a read looks up its L1 first, and an L1 hit is back after the L1 latency and
// goes no further (l1_cache.h). Writes pass the L1 (write-through, no allocation); atomics bypass it.
// A partitioned L2 (l2.partitions = 2): every line has a home partition (a hash of its address);
// a read probes the CU's near partition, which allocates a clean copy, and on a miss of a line homed
// in the other one goes on to it (counted as fabric sectors, the far round trip added), which
// allocates the line and fetches it on a miss; writes and atomics are performed at the home.
// Deterministic. Tags and counters are exact per line request in
// both forms; the batch forms time a tile operation as a whole: each channel on its way serves the
// bytes the batch puts on it once, all arriving when the batch is issued, and the batch is done when
// the last channel has served it plus the added latency of the deepest level it reached.
// Assumptions (docs/model.md): an L2 read miss fetches the 32 B sectors its request touches, as
// one 32, 64 or 128 B request; a dirty line is written back as two 64 B requests; device-scope
// atomics are performed where the arch spec's `l2.atomics` says: at the memory side (each 64 B
// chunk one write request beyond the L2, read through the memory-side cache and written to HBM) or
// in the L2 (a read-modify-write of the line: a miss fetches the sectors it touches, the line is
// left dirty); the memory-side cache allocates on reads (atomics included) and passes writes
// through to HBM; a request that hits a line whose fill is still in flight is timed as a hit.
class MemoryPath {
 public:
  // Copyable: a copy is a snapshot of every cache's tags and every server's queue.
  // Contract: throws arch::ConfigError unless the L2 line is 128 B (the request-size rules).
  // The approximate mode needs 64 B MALL lines (else throws arch::ConfigError) and takes only the
  // span forms below; the exact mode takes every form but the span ones.
  MemoryPath(const arch::GpuSpec& gpu, double engine_hz, TagMode mode = TagMode::exact);
  TagMode mode() const { return mode_; }
  // The approximate mode's group caches, as the constructor builds them (and the state-budget
  // estimate sizes them): each L2 instance's, with room for a cache full of groups a quarter valid
  // and victims drawn as the L2's sets of l2.ways would draw them (docs/model.md); the MALL's, the
  // same room and strict LRU.
  static GroupCacheGeometry approximate_l2(const arch::GpuSpec& gpu);
  static GroupCacheGeometry approximate_mall(const arch::GpuSpec& gpu);

  // Re-rates the engine-clocked servers (L2 channels, links) for a kernel at another clock.
  void set_engine_clock(double engine_hz);

  // CU `cu` on `xcd` reads [lo, hi) of a line, issued at `t`: the time the data is back.
  Tick read(std::uint32_t xcd, std::uint32_t cu, std::uint64_t line_address, std::uint32_t lo, std::uint32_t hi,
            Tick t, TrafficCounters& c);
  // A CU writes [lo, hi) of a line: the time the L2 has accepted it (writes are posted) or, when the
  // allocation evicts a dirty line, the time that line's write-back has been served.
  Tick write(std::uint32_t xcd, std::uint32_t cu, std::uint64_t line_address, std::uint32_t lo, std::uint32_t hi, Tick t,
             TrafficCounters& c);
  // A device-scope atomic add to [lo, hi) of a line: the time its acknowledgement is back from the
  // level that performed it (l2.atomics).
  Tick atomic(std::uint32_t xcd, std::uint32_t cu, std::uint64_t line_address, std::uint32_t lo, std::uint32_t hi, Tick t,
              TrafficCounters& c);

  // The same three for a tile operation's `n` line requests, issued together at `t`.
  BatchTiming read_batch(std::uint32_t xcd, std::uint32_t cu, const LineRequest* lines, std::size_t n, Tick t,
                         TrafficCounters& c);
  BatchTiming write_batch(std::uint32_t xcd, std::uint32_t cu, const LineRequest* lines, std::size_t n, Tick t,
                          TrafficCounters& c);
  // `requests_per_sector`: the atomic instructions each 32 B sector receives, each adding a share of
  // its bytes; every one is an L2 sector operation (counted, and a sector's slot on its channel).
  BatchTiming atomic_batch(std::uint32_t xcd, std::uint32_t cu, const LineRequest* lines, std::size_t n, Tick t,
                           TrafficCounters& c, std::uint32_t requests_per_sector = 1);

  // The approximate mode's forms of the three: a tile operation's rows, issued together at `t`.
  // Counters follow the same per-request rules; tags are kept per group of lines (GroupCache).
  BatchTiming read_spans(std::uint32_t xcd, std::uint32_t cu, const RowSpan* spans, std::size_t n, Tick t,
                         TrafficCounters& c);
  BatchTiming write_spans(std::uint32_t xcd, std::uint32_t cu, const RowSpan* spans, std::size_t n, Tick t,
                          TrafficCounters& c);
  BatchTiming atomic_spans(std::uint32_t xcd, std::uint32_t cu, const RowSpan* spans, std::size_t n, Tick t,
                           TrafficCounters& c, std::uint32_t requests_per_sector = 1);

  // Kernel start: the command processor invalidates every CU's L1.
  void start_kernel() { l1_.invalidate(); }
  // Gives every CU's L1 `bytes` of capacity, empty (before a kernel whose L1 shares the LDS's
  // array: sim::split_l1). The capacity stays until the next call.
  void set_l1_bytes(std::uint64_t bytes) { l1_.resize(bytes); }
  // Kernel end, as `l2.kernel_end` says: `write_back` writes back every dirty L2 line from `t` on
  // and invalidates the L2s, returning when the last write-back is served; `keep` leaves the L2s as
  // they are and returns `t`. The memory-side cache keeps its contents either way.
  Tick end_kernel(Tick t, std::vector<TrafficCounters>& per_xcd);
  // Empties every cache (L1s, L2s, memory-side cache) outside any kernel: no counter, no channel
  // time. What a profiler's cache control does before each profiled kernel (`ncu --cache-control
  // all`, Nsight Compute's default): the dirty lines reach memory before the kernel starts.
  void empty_caches();

  std::uint32_t line_bytes() const { return line_; }
  // Hints that a line is about to be requested from L2 instance `inst`: its tag sets are fetched into the
  // host's cache ahead of the probe. No effect on results.
  void prefetch(std::uint32_t inst, std::uint64_t line_address) const {
    l2_[inst].prefetch(line_address);
    if (mall_) {
      for (std::uint32_t b = 0; b < line_; b += mall_->unit_bytes()) mall_->prefetch(line_address + b);
    }
  }
  LevelBusy busy() const;
  std::uint64_t state_bytes() const;  // memory held by the tag state
  // Adds, per channel, the bytes served and the busy time since construction, and in the exact
  // mode the L2 requests and hits, to `stats`: <l2>.channel[c].{requests, hits, read_bytes,
  // write_bytes, link_bytes, read_busy_ps, write_busy_ps, link_busy_ps} with <l2> = xcd[i].l2 for
  // an L2 per XCD (l2 for one shared L2), mall.channel[m].{bytes, busy_ps}, hbm.channel[h].{bytes,
  // busy_ps}. Channel requests and hits sum to TCC_REQ and TCC_HIT.
  void add_stats(Stats& stats) const;
  // The stats name of L2 instance `inst` (xcd[i].l2; l2 when one L2 serves every XCD; l2.partition[i]
  // for the partitions of one).
  std::string l2_stats_name(std::uint32_t inst) const;
  // The stats name XCD `xcd`'s L2 counters are kept under: its own L2's (an L2 per XCD), or `l2`
  // for one shared L2, its partitions together (the XCD's requests reach both).
  std::string xcd_l2_stats_name(std::uint32_t xcd) const {
    return gpu_->l2.scope == arch::L2Scope::per_xcd ? l2_stats_name(xcd) : std::string("l2");
  }
  // The approximate mode: calls f(key, shape, units, lo, hi) for each group a span touches, with the
  // group's 64 B units it covers; [lo, hi) is the byte range within a 4 KiB chunk group (flat
  // tensors, and rows not aligned to 128 B), [0, max) for a group of whole-line rows.
  template <class F>
  static void for_each_group(const RowSpan& s, F&& f);

 private:
  // What a request needs from the levels beyond the L2, found from the tags (no timing).
  struct Fetch {
    std::uint64_t address = 0;   // of the request beyond the L2
    std::uint32_t size = 0;      // bytes requested from the MALL (or HBM without one)
    std::uint32_t hbm_bytes = 0; // bytes read from HBM (0: served by the MALL)
  };
  // What a read request needs from every level (no timing): its L2 channel, whether it hit, the
  // dirty line its allocation evicted, and its fetch on a miss. Counts it.
  struct ReadRoute {
    std::uint32_t channel = 0;  // instance x channel
    bool hit = false, evicted = false;  // hit: served by the L2 (the near partition or the far one)
    std::uint64_t victim = 0;
    // A near miss of a line homed in the other partition, served through it: its channel there and
    // the dirty line its allocation evicted.
    bool far = false, far_evicted = false;
    std::uint32_t far_channel = 0;
    std::uint64_t far_victim = 0;
    Fetch fetch;
    // The channel whose link fetches a miss (the home's).
    std::uint32_t fill_channel() const { return far ? far_channel : channel; }
  };
  // The request probes instance `inst`; `home` is the line's home (home_of), where a miss of a
  // partitioned L2's near copy goes on. `atomic`: an in-L2 atomic's read-modify-write at the home
  // (inst = home; counted as atomic bytes; the line is left dirty).
  ReadRoute route_read(std::uint32_t inst, std::uint32_t home, const LineRequest& q, TrafficCounters& c,
                       bool atomic = false);
  // The home L2 instance of a line requested from XCD `xcd`: its XCD's L2, or the partition a hash
  // of the line address names (the parity of its bits: half the lines of any aligned power-of-two
  // block of two or more lines in each).
  std::uint32_t home_of(std::uint32_t xcd, std::uint64_t line_address) const {
    return partitioned_ ? partition_of(line_address) : gpu_->l2_instance_of(xcd);
  }
  // The partition of a partitioned L2 that homes a line (home_of's hash, whatever the XCD).
  static std::uint32_t partition_of(std::uint64_t line_address) {
    return static_cast<std::uint32_t>(__builtin_parityll(line_address >> 7));  // 128 B lines (constructor)
  }
  // Counts a request of [lo, hi) that crosses from partition `near` to `home` (none when they agree).
  static void count_fabric(std::uint32_t near, std::uint32_t home, std::uint32_t lo, std::uint32_t hi, TrafficCounters& c) {
    if (near != home) c.l2_fabric_sectors += sectors_touched(lo, hi);
  }
  // Probes the MALL for `size` bytes at `address` (allocating on a miss) and counts it.
  Fetch route_fetch(std::uint64_t address, std::uint32_t size, TrafficCounters& c);
  // A write request's L2 channel (instance x channel), found by probing the home's tags (allocating,
  // making the line dirty) and counted; each dirty line the allocation evicts goes to on_victim(line_address).
  template <class OnVictim>
  std::uint32_t route_write(std::uint32_t inst, const LineRequest& q, TrafficCounters& c, OnVictim&& on_victim);
  // A memory-side atomic request's L2 channel at its home, counted (it passes the L2 as a miss).
  std::uint32_t route_atomic(std::uint32_t inst, const LineRequest& q, TrafficCounters& c);
  // A request whose route is known, timed through L2 channel servers `l2` (reads: l2_read_; in-L2
  // atomics: l2_write_): when its data (or acknowledgement) is back.
  Tick time_route(const ReadRoute& r, std::uint32_t bytes, Tick t, std::vector<BandwidthServer>& l2, TrafficCounters& c);
  // What a batch of L2 read-modify-write requests (reads, or in-L2 atomics) found, for its timing.
  struct FillSummary {
    Tick latency_sum = 0;
    bool reached_l2 = false;  // some request missed the L1 (atomics always reach the L2)
    bool fetched = false, from_hbm = false;
    bool far = false;  // some request went through the far partition
  };
  // Hints the tag sets the probe of lines[i + kPrefetchAhead] needs (and at i = 0 those of the lines before it),
  // in the L2 instance instance_of(address) names: called once per line of a batch of `n`, in
  // order, before its probe. No effect on results.
  static constexpr std::size_t kPrefetchAhead = 8;  // lines whose tag sets are fetched ahead of their probe
  template <class InstanceOf>
  void prefetch_ahead(const LineRequest* lines, std::size_t n, std::size_t i, InstanceOf&& instance_of) const {
    constexpr std::size_t ahead = kPrefetchAhead;
    const auto fetch = [&](std::size_t j) { prefetch(instance_of(lines[j].address), lines[j].address); };
    if (i == 0) {
      for (std::size_t j = 0; j < std::min(n, ahead); ++j) fetch(j);
    }
    if (i + ahead < n) fetch(i + ahead);
  }
  // The exact mode's probe of a batch's line requests for reads by CU `cu` (atomic = false) or
  // in-L2 atomics (which bypass the L1): tags, counters and each channel's demand; the timing is
  // left to the caller.
  FillSummary fill_lines(std::uint32_t xcd, std::uint32_t cu, const LineRequest* lines, std::size_t n,
                         TrafficCounters& c, bool atomic);
  // The approximate mode's L2 probe of a group's whole-line units `request` from instance `near`
  // (the XCD's L2, or the CU's near partition): `write` (writes and in-L2 atomics) at each line's
  // home, allocated dirty; else reads, as route_read. hits: the units the L2 served; far: those of
  // the lines that went to the other partition.
  struct GroupProbe {
    std::uint64_t hits = 0, far = 0;
  };
  GroupProbe probe_l2_group(std::uint32_t near, std::uint64_t key, const GroupShape& shape, std::uint64_t request,
                            bool write);
  // The units of `units` whose lines are homed in partition `inst` of a partitioned L2.
  std::uint64_t homed_units(std::uint32_t inst, std::uint64_t key, const GroupShape& shape, std::uint64_t units) const;
  // The approximate mode's probe of a batch's rows, as fill_lines.
  FillSummary fill_spans(std::uint32_t xcd, std::uint32_t cu, const RowSpan* spans, std::size_t n, TrafficCounters& c,
                         bool atomic);
  // A read's L1 lookup by CU `cu`, counted: true on a hit (the request goes no further).
  bool read_l1(std::uint32_t cu, const LineRequest& q, TrafficCounters& c) {
    ++c.tcp_accesses;
    if (l1_.read(cu, q.address, q.lo, q.hi)) {
      ++c.tcp_read_hits;
      c.l1_read_hit_bytes += q.hi - q.lo;
      c.l1_read_hit_sectors += sectors_touched(q.lo, q.hi);
      return true;
    }
    ++c.tcp_tcc_read_req;
    return false;
  }
  // A write's pass through the L1 (write-through, no allocation), counted.
  static void write_l1(TrafficCounters& c) {
    ++c.tcp_accesses;
    ++c.tcp_tcc_write_req;
  }
  // The unloaded round trip of a read: L1 and L2 latency, plus the levels its fetch reached.
  Tick read_latency(const ReadRoute& r) const;
  Tick far_latency(bool far) const { return far ? far_latency_ : 0; }
  // Folds address bits so that power-of-two strides spread over channels (the hardware hashes
  // addresses to channels; the exact hash is not published, so this one is an estimate).
  static std::uint64_t fold(std::uint64_t x) { return x ^ (x >> 7) ^ (x >> 13) ^ (x >> 19); }
  // The L2 channel of a line of L2 instance `inst`, numbered across instances (instance x channel).
  std::uint32_t l2_channel(std::uint32_t inst, std::uint64_t address) const {
    return inst * l2_channels_.value() +
           static_cast<std::uint32_t>(l2_channels_.mod(fold(address >> 7)));  // 128 B lines (constructor)
  }
  // The folded memory-side interleave chunk of an address, which the MALL's and HBM's channel
  // numbers are taken modulo.
  std::uint64_t memory_side_chunk(std::uint64_t address) const { return fold(interleave_.div(address)); }
  std::uint32_t mall_channel(std::uint64_t address) const {
    return static_cast<std::uint32_t>(mall_channels_.mod(memory_side_chunk(address)));
  }
  // The MALL and HBM channels of the memory-side interleave chunk of the last address asked for,
  // found again only when the chunk changes (a row of lines usually lies in one chunk). A memo of
  // a fixed function of the address: keeping one across calls changes no result.
  struct MemorySideChannels {
    void of(const MemoryPath& path, std::uint64_t address) {
      const std::uint64_t c = path.interleave_.div(address);
      if (c == chunk) return;
      chunk = c;
      const std::uint64_t folded = fold(c);  // memory_side_chunk of the address, from the division above
      mall = path.has_mall_ ? static_cast<std::uint32_t>(path.mall_channels_.mod(folded)) : 0;
      hbm = static_cast<std::uint32_t>(path.hbm_channels_.mod(folded));
    }
    std::uint64_t chunk = ~std::uint64_t{0};
    std::uint32_t mall = 0, hbm = 0;
  };
  // Consecutive interleave-sized chunks go to consecutive channels (NPS1).
  std::uint32_t hbm_channel(std::uint64_t address) const {
    return static_cast<std::uint32_t>(hbm_channels_.mod(memory_side_chunk(address)));
  }
  // Writes a dirty line of L2 channel `ch` (instance x channel) back to memory from `t` (link, MALL
  // channel, HBM channel): returns when the HBM channel's memory controller has accepted (and
  // acknowledged) it, which is when its L2 write-back slot frees (hbm_writes_).
  // (evict and write_back are inline, defined in memory_path.cpp and used there only: a batch's
  // victims write back in one loop, write_back_victims.)
  inline Tick write_back(std::uint32_t ch, std::uint64_t line_address, Tick t, TrafficCounters& c);
  // The timing tails of the batch forms (both modes): each level's channels serve the demand the
  // batch put on them; dirty victims take write-back queue slots.
  // `l2`: the L2 channel servers the batch passes (reads: l2_read_; in-L2 atomics: l2_write_).
  BatchTiming time_read_batch(Tick t, const FillSummary& f, TrafficCounters& c, std::vector<BandwidthServer>& l2);
  // In-L2 atomics are posted: the batch's timing as a read's, holding no window slot.
  BatchTiming time_l2_atomic_batch(Tick t, const FillSummary& f, TrafficCounters& c) {
    BatchTiming b = time_read_batch(t, f, c, l2_write_);
    b.latency_sum = 0;
    return b;
  }
  BatchTiming time_write_batch(Tick t, std::size_t requests, TrafficCounters& c);
  // The counters an atomic batch repeats per request of a sector (repeat_atomic_requests), as they
  // stood before it.
  struct AtomicSectors {
    std::uint64_t atomic = 0, fabric = 0;
    explicit AtomicSectors(const TrafficCounters& c) : atomic(c.atomic_sectors), fabric(c.l2_fabric_sectors) {}
  };
  // An atomic batch whose requests each add a k-th of a sector: the sectors (and fabric sectors)
  // counted since `before` and the batch's L2 channel demand, k times over (k = requests per sector).
  void repeat_atomic_requests(std::uint32_t k, const AtomicSectors& before, TrafficCounters& c) {
    if (k <= 1) return;
    c.atomic_sectors += (k - 1) * (c.atomic_sectors - before.atomic);
    c.l2_fabric_sectors += (k - 1) * (c.l2_fabric_sectors - before.fabric);
    l2_demand_.scale(k);
  }
  // `mall_missed`: a chunk's read missed the memory-side cache (its acknowledgement waits for HBM).
  BatchTiming time_atomic_batch(Tick t, bool mall_missed);
  // The approximate mode's L2-side demand of a batch's rows of whole lines: `bytes` spread evenly
  // over the channels of L2 instance `inst` (the remainder one byte each on the first channels).
  // The folded hash maps every aligned block of as many lines as channels onto each channel once,
  // so a tile's rows fall evenly on them (docs/model.md, approximate mode).
  void spread_on_channels(ChannelDemand& demand, std::uint32_t inst, std::uint64_t bytes);
  // A dirty L2 group leaves the approximate L2: the MALL sees the write-through of each dirty line,
  // and each line is queued for write-back.
  void evict_group(std::uint32_t inst, std::uint64_t key, const GroupShape& shape, std::uint64_t dirty);
  // The approximate MALL's access (GroupCache::access; it holds nothing dirty): the units of `mask`
  // it held, then `fill` allocated. No MALL: nothing held.
  std::uint64_t mall_group_access(std::uint64_t key, const GroupShape& shape, std::uint64_t mask, std::uint64_t fill) {
    return mall_groups_ ? mall_groups_->access(key, shape, mask, fill, 0, [](auto&&...) {}) : 0;
  }
  // Fetches the L2's (instance `inst`) and the MALL's table slots of every group the spans touch
  // into the host's cache, ahead of their probes (the MALL's table is larger than the host's L2).
  void prefetch_groups(std::uint32_t inst, const RowSpan* spans, std::size_t n) const {
    for (std::size_t i = 0; i < n; ++i) {
      for_each_group(spans[i], [&](std::uint64_t key, const GroupShape&, std::uint64_t, std::uint64_t, std::uint64_t) {
        l2_groups_[inst].prefetch(key);
        if (mall_groups_) mall_groups_->prefetch(key);
      });
    }
  }
  // Calls f(row_address, row_units, first_unit) for each row of group `key` with units in `units`:
  // row_units = the units of `units` in that row (in place), the row's first unit being first_unit.
  template <class F>
  static void for_each_row(std::uint64_t key, const GroupShape& shape, std::uint64_t units, F&& f);
  // Puts the units `hbm` and `hbm_more` of group `key` (counted twice where both hold a unit) on
  // their HBM channels, 64 B each: a row at a time where it lies in one interleave chunk, else line
  // by line. The same totals as line by line.
  void add_hbm_rows(std::uint64_t key, const GroupShape& shape, std::uint64_t hbm, std::uint64_t hbm_more);
  // Calls f(line_address, line_units, first_unit) for each L2 line with units in `units`:
  // line_units = units & (3 << first_unit), its first 64 B unit being first_unit.
  template <class F>
  static void for_each_line(std::uint64_t key, const GroupShape& shape, std::uint64_t units, F&& f);
  // The request an L2 read miss of [lo, hi) of a line sends beyond the L2: the 32 B sectors it
  // touches as one 32, 64 or 128 B request at `offset` within the line. Counts it.
  struct SectorRequest {
    std::uint32_t offset = 0, size = 128;
  };
  static SectorRequest sector_request(std::uint32_t lo, std::uint32_t hi, TrafficCounters& c);
  // A dirty line leaves L2 channel `ch` at `t`: it takes a slot of the channel's write-back queue
  // (waiting while every slot's write-back is still unacknowledged). Returns when it has a slot.
  inline Tick evict(std::uint32_t ch, std::uint64_t line_address, Tick t, TrafficCounters& c);
  // The batch's dirty victims (victims_, in the order found) leave their L2 channels at `t`, each
  // as evict(); empties victims_ and returns when the last of them has a queue slot (`t` if none).
  Tick write_back_victims(Tick t, TrafficCounters& c);
  // Per-line timing of a fetch reaching the MALL at `t`: when its last channel has served it.
  Tick time_fetch(const Fetch& f, Tick t);
  Tick fetch_latency(const Fetch& f) const { return mall_latency_ + (f.hbm_bytes ? hbm_latency_ : 0); }
  // A memory-side atomic's acknowledgement after its last channel has served it: back through the
  // L2 from the MALL, or from HBM when a chunk's read missed the MALL.
  Tick atomic_ack_latency(bool mall_missed) const {
    return l2_latency_ + mall_latency_ + (mall_missed ? hbm_latency_ : 0);
  }
  // The fetches of an atomic's 64 B chunks of [lo, hi) of a line, in chunk order, each counted as a
  // 64 B write request toward the fabric and 64 B written to HBM: a whole line is probed as one MALL
  // granule while the MALL is granular (exactly as its chunks one by one).
  template <class PerChunk>
  void route_atomic_chunks(std::uint64_t line_address, std::uint32_t lo, std::uint32_t hi, TrafficCounters& c,
                           PerChunk&& per_chunk);

  const arch::GpuSpec* gpu_;
  std::uint32_t line_;
  Divisor l2_channels_, interleave_, mall_channels_, hbm_channels_;
  Tick l1_latency_ = 0, l2_latency_ = 0, mall_latency_, hbm_latency_;  // L1 and L2: of the XCD being served
  Tick far_latency_ = 0;     // a partitioned L2's far round trip, at the engine clock
  bool partitioned_ = false;  // l2.partitions > 1
  std::vector<Tick> l1_latencies_, l2_latencies_;  // per L2 instance, at its XCD's clock
  // Makes l1_latency_ and l2_latency_ those of XCD `xcd`'s clock (every entry point calls it first).
  void use_clock_of(std::uint32_t xcd) {
    const std::uint32_t inst = gpu_->l2_instance_of(xcd);  // the partitions of one L2 share a clock
    l1_latency_ = l1_latencies_[inst];
    l2_latency_ = l2_latencies_[inst];
  }
  L1Caches l1_;
  std::vector<SetAssocCache> l2_;
  std::optional<SetAssocCache> mall_;  // exact mode's MALL tags
  TagMode mode_ = TagMode::exact;
  bool has_mall_ = false;
  bool l2_atomics_ = false;  // l2.atomics = "l2": atomics are performed in the L2
  std::vector<GroupCache> l2_groups_;       // approximate mode: per L2 instance
  std::optional<GroupCache> mall_groups_;   // approximate mode
  std::vector<Tick> writeback_queue_;             // per L2 channel: completion of each queue slot's write-back
  std::vector<std::uint32_t> writeback_next_;      // per L2 channel: the oldest slot
  std::vector<BandwidthServer> l2_read_, l2_write_, link_;  // instance x channel
  // The exact mode's L2 requests and hits per channel (instance x channel).
  std::vector<std::uint64_t> channel_requests_, channel_hits_;
  void count_channel(std::uint32_t channel, std::uint64_t requests, std::uint64_t hits) {
    channel_requests_[channel] += requests;
    channel_hits_[channel] += hits;
  }
  ServerBank mall_ch_, hbm_ch_;
  HbmWriteQueues hbm_writes_;  // the memory controllers' write queues (write-backs)
  // A batch's demand on each level (scratch of the batch forms).
  ChannelDemand l2_demand_, link_demand_, mall_demand_, hbm_demand_;
  struct Victim {
    std::uint32_t channel;
    std::uint64_t line;
  };
  std::vector<Victim> victims_;
  MemorySideChannels writeback_side_;  // write_back's memo: a victim's row usually lies in one chunk
};

template <class F>
void MemoryPath::for_each_row(std::uint64_t key, const GroupShape& shape, std::uint64_t units, F&& f) {
  // Row by row (no division per unit): row r holds units [r per_row, (r + 1) per_row).
  const std::uint32_t per_row = shape.units_per_row;
  const std::uint64_t row_mask = per_row == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << per_row) - 1;
  std::uint64_t row = key;
  for (std::uint32_t first = 0; units; first += per_row, row += shape.stride) {
    const std::uint64_t in_row = units & (row_mask << first);
    if (!in_row) continue;
    units &= ~in_row;
    f(row, in_row, first);
  }
}

template <class F>
void MemoryPath::for_each_line(std::uint64_t key, const GroupShape& shape, std::uint64_t units, F&& f) {
  // Rows hold whole lines: each line's first unit, row by row.
  for_each_row(key, shape, line_starts(units), [&](std::uint64_t row, std::uint64_t starts, std::uint32_t first) {
    for (; starts; starts &= starts - 1) {
      const auto u = static_cast<std::uint32_t>(__builtin_ctzll(starts));
      f(row + (u - first) * std::uint64_t{64}, units & (std::uint64_t{3} << u), u);
    }
  });
}

template <class F>
void MemoryPath::for_each_group(const RowSpan& s, F&& f) {
  constexpr std::uint64_t kChunk = 4096;
  const bool whole_lines = s.stride != s.row_bytes && s.address % 128 == 0 && s.row_bytes % 128 == 0 &&
                           s.stride % 128 == 0 && s.row_bytes <= 64 * 64;
  if (whole_lines) {
    // Groups of up to 16 rows (at most 64 units), aligned on the row index.
    const auto per_row = static_cast<std::uint32_t>(s.row_bytes / 64);
    std::uint32_t group_rows = 16;
    while (group_rows * per_row > 64) group_rows /= 2;
    const GroupShape shape{s.stride, per_row};
    for (std::uint32_t r = 0; r < s.rows;) {
      const auto in_group = static_cast<std::uint32_t>((s.first_row + r) % group_rows);
      const std::uint32_t k = std::min(group_rows - in_group, s.rows - r);
      const std::uint32_t bits = k * per_row;
      const std::uint64_t mask = (bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1) << (in_group * per_row);
      f(s.address + std::uint64_t{r} * s.stride - std::uint64_t{in_group} * s.stride, shape, mask, std::uint64_t{0},
        ~std::uint64_t{0});
      r += k;
    }
    return;
  }
  // Flat: the span's contiguous runs, in aligned 4 KiB chunks of 64 units.
  const GroupShape shape{kChunk, 64};
  const bool contiguous = s.stride == s.row_bytes;
  const std::uint32_t runs = contiguous ? 1 : s.rows;
  const std::uint64_t run_bytes = contiguous ? s.row_bytes * s.rows : s.row_bytes;
  for (std::uint32_t i = 0; i < runs; ++i) {
    const std::uint64_t begin = s.address + i * s.stride, end = begin + run_bytes;
    for (std::uint64_t chunk = begin / kChunk * kChunk; chunk < end; chunk += kChunk) {
      const std::uint64_t lo = std::max(begin, chunk) - chunk, hi = std::min(end, chunk + kChunk) - chunk;
      const std::uint64_t first = lo / 64, last = (hi + 63) / 64;
      const std::uint64_t mask = (last - first == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << (last - first)) - 1) << first;
      f(chunk, shape, mask, lo, hi);
    }
  }
}

template <class PerChunk>
void MemoryPath::route_atomic_chunks(std::uint64_t line_address, std::uint32_t lo, std::uint32_t hi, TrafficCounters& c,
                                     PerChunk&& per_chunk) {
  const bool whole = mall_ && mall_->granular() && lo == 0 && hi == line_;
  const Fetch line = whole ? route_fetch(line_address, line_, c) : Fetch{};
  for (std::uint32_t chunk = lo / 64 * 64; chunk < hi; chunk += 64) {
    ++c.ea_wrreq;
    ++c.ea_wrreq_64b;
    c.hbm_write_bytes += 64;
    per_chunk(whole ? Fetch{line_address + chunk, 64, line.hbm_bytes / (line_ / 64)} : route_fetch(line_address + chunk, 64, c));
  }
}

template <class OnVictim>
std::uint32_t MemoryPath::route_write(std::uint32_t inst, const LineRequest& q, TrafficCounters& c, OnVictim&& on_victim) {
  // `inst`: the line's home (writes are performed there).
  c.requested_write_bytes += q.hi - q.lo;
  c.write_sectors += sectors_touched(q.lo, q.hi);
  const ProbeResult r = l2_[inst].access(q.address, line_, true, [](std::uint64_t, std::uint64_t) {}, on_victim);
  ++c.tcc_req;
  c.tcc_hit += r.hits;
  c.tcc_miss += r.misses;
  const std::uint32_t ch = l2_channel(inst, q.address);
  count_channel(ch, 1, r.hits);
  return ch;
}

}  // namespace attnsim::sim
