#include "sim/micro_memory.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "arch/clock_model.h"
#include "arch/config_error.h"
#include "sim/bandwidth_server.h"
#include "sim/event_queue.h"
#include "sim/memory_path.h"

namespace attnsim::sim {

using arch::ConfigError;
using arch::ValueOrigin;

namespace {

// The lines one CU can usefully keep in flight at `level`: its share of the narrowest peak
// bandwidth on the way there (its L1 port, its L2's channels, their links to the fabric, the MALL's
// channels, HBM) times the unloaded round trip (the levels' latencies added), the bandwidth-delay
// product. A window beyond it only lengthens the queues; it sizes the timed passes, not the model.
std::uint64_t bandwidth_delay_lines(const arch::GpuSpec& gpu, const std::string& level, std::uint32_t cus,
                                    double engine_hz) {
  const double l2_sharers = gpu.l2.scope == arch::L2Scope::per_xcd ? gpu.chip.cus_per_xcd : cus;
  const double l2_channels = gpu.l2.channels;  // an XCD's, or the shared L2's (its partitions' together)
  double bytes_per_s = static_cast<double>(gpu.l1.bandwidth.value) * engine_hz;
  double seconds = static_cast<double>(gpu.l1.latency.value) / engine_hz;
  if (level != "l1") {
    bytes_per_s = std::min(bytes_per_s, l2_channels * static_cast<double>(gpu.l2.read_bandwidth.value) * engine_hz / l2_sharers);
    seconds += static_cast<double>(gpu.l2.latency.value + gpu.l2.far_latency.value) / engine_hz;
  }
  if (level == "mall" || level == "hbm") {
    bytes_per_s = std::min(bytes_per_s, l2_channels * static_cast<double>(gpu.fabric.l2_link_bandwidth.value) * engine_hz / l2_sharers);
    if (gpu.mall.present) {
      bytes_per_s = std::min(bytes_per_s, gpu.mall.channels * static_cast<double>(gpu.mall.bandwidth.value) *
                                              gpu.clock.fabric.value / cus);
      seconds += static_cast<double>(gpu.mall.latency.value) * 1e-12;
    }
  }
  if (level == "hbm") {
    bytes_per_s = std::min(bytes_per_s, gpu.hbm.peak_bandwidth.value / cus);
    seconds += static_cast<double>(gpu.hbm.latency.value) * 1e-12;
  }
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(bytes_per_s * seconds / static_cast<double>(gpu.l2.line.value))));
}

}  // namespace

const std::vector<std::string>& memory_patterns() {
  static const std::vector<std::string> p{"stream-read", "stream-write", "copy", "chase", "atomic"};
  return p;
}

MemoryMicroResult run_memory_micro(const arch::GpuSpec& gpu, const MemoryMicroOptions& o, double engine_hz) {
  MemoryMicroResult r;
  r.pattern = o.pattern;
  r.level = o.level;
  r.engine_clock_hz = engine_hz;
  std::uint64_t footprint = o.footprint;
  const std::uint32_t xcds = gpu.dispatch.xcds_per_partition;
  const std::uint32_t cus = xcds * gpu.chip.cus_per_xcd;
  if (o.level == "l1") {
    // Half of each CU's L1: a chase runs on one CU, a stream gives every CU a slice of that size.
    const std::uint64_t half = gpu.l1.size.value / 2;
    footprint = footprint ? footprint : (o.pattern == "chase" ? half : half * cus);
  } else if (o.level == "l2") {
    footprint = footprint ? footprint : 2ull << 20;
  } else if (o.level == "mall") {
    footprint = footprint ? footprint : 64ull << 20;
  } else if (o.level == "hbm") {
    // Streams: eight times the largest cache level, so that the timed pass misses every cache and
    // what a kernel pays once (ramp, tail, the L2's write-back at its end) is a small part of its
    // time, as on the plateau of a benchmark's buffer-size sweep. A chase (one load at a time, no
    // kernel costs to amortise) and atomics (every XCD adds into each line: a pass moves xcds
    // times the buffer): twice the largest cache.
    const std::uint64_t l2_total = gpu.l2_total_bytes();
    const std::uint64_t times = o.pattern == "atomic" || o.pattern == "chase" ? 2 : 8;
    footprint = footprint ? footprint : times * std::max(l2_total, gpu.mall.present ? gpu.mall.size.value : 0);
  } else {
    throw ConfigError(ValueOrigin{"--level " + o.level, 0, 0, {}}, "level", "expected l1, l2, mall or hbm");
  }
  const std::uint64_t line = gpu.l2.line.value;
  if (footprint % line != 0 || footprint == 0) {
    throw ConfigError(ValueOrigin{"--footprint " + std::to_string(footprint), 0, 0, {}}, "footprint",
                      "expected a positive multiple of the " + std::to_string(line) + "-byte L2 line");
  }
  // The micro simulates every line of the buffer (and a chase keeps its order): beyond every cache
  // a larger buffer changes nothing but the run time and the host memory.
  constexpr std::uint64_t kMaxFootprint = 4ull << 30;
  if (footprint > kMaxFootprint) {
    throw ConfigError(ValueOrigin{"--footprint " + std::to_string(footprint), 0, 0, {}}, "footprint",
                      "at most 4GiB: beyond every cache a larger buffer measures the same, and the micro simulates each of its lines");
  }
  // A write or a copy's destination starts at the first MiB boundary a MiB past the source. Every
  // buffer lies in the GPU's memory, as a real one must (and the caches' tags cover no more).
  const std::uint64_t dst_base = (footprint + (1ull << 20)) / (1ull << 20) * (1ull << 20) + (1ull << 20);
  const bool writes = o.pattern == "stream-write" || o.pattern == "copy";
  const std::uint64_t end_address = writes ? dst_base + footprint : footprint;
  if (end_address > gpu.hbm.capacity.value) {
    throw ConfigError(ValueOrigin{"--footprint " + std::to_string(footprint), 0, 0, {}}, "footprint",
                      "the buffers need " + std::to_string(end_address) + " bytes of memory, more than the " +
                          std::to_string(gpu.hbm.capacity.value) + " of hbm.capacity");
  }
  const std::uint32_t inflight = o.inflight ? o.inflight : gpu.cu.memory_inflight_lines;
  r.inflight = inflight;
  r.footprint = footprint;
  MemoryPath path(gpu, engine_hz);
  const std::uint64_t lines = footprint / line;

  if (o.pattern == "chase") {
    // One dependent load at a time over a random permutation of the buffer's lines.
    std::vector<std::uint64_t> order(lines);
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 rng(42);  // Fisher-Yates with the raw generator: the same order on every platform
    for (std::uint64_t i = lines; i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
    Tick t = 0;
    TrafficCounters warm;
    for (std::uint64_t i = 0; i < lines; ++i) t = path.read(0, 0, order[i] * line, 0, static_cast<std::uint32_t>(line), t, warm);  // warm-up pass
    const Tick start = t;
    for (std::uint64_t i = 0; i < lines; ++i) t = path.read(0, 0, order[i] * line, 0, static_cast<std::uint32_t>(line), t, r.counters);
    r.latency_ns = static_cast<double>(t - start) / static_cast<double>(lines) / kTicksPerNs;
    return r;
  }
  const bool reads = o.pattern == "stream-read" || o.pattern == "copy";
  const bool atomics = o.pattern == "atomic";
  if (!reads && !writes && !atomics) {
    throw ConfigError(ValueOrigin{"--pattern " + o.pattern, 0, 0, {}}, "pattern",
                      "expected one of mfma, valu, trans, mfma+trans, lds, stream-read, stream-write, copy, chase, atomic");
  }
  if (atomics) {
    // One atomic at a time into one line, from each XCD in turn (after one from each XCD that
    // brings the line in), at the idle clock as a chase: one request in flight draws little power.
    MemoryPath chain(gpu, arch::sustained_clock(gpu, arch::Activity{}).clock.value);
    TrafficCounters warm;
    constexpr std::uint32_t kChain = 64;
    Tick t = 0;
    for (std::uint32_t x = 0; x < xcds; ++x) t = chain.atomic(x, 0, 0, 0, static_cast<std::uint32_t>(line), t, warm);
    const Tick start = t;
    for (std::uint32_t i = 0; i < kChain; ++i) t = chain.atomic(i % xcds, 0, 0, 0, static_cast<std::uint32_t>(line), t, warm);
    r.latency_ns = static_cast<double>(t - start) / kChain / kTicksPerNs;
  }
  // Each CU streams a slice of the buffer(s), keeping `inflight` line requests outstanding; a copy
  // reads a line of the source and writes a line of the destination per step. At the L1 level a CU
  // reads its own slice again each pass; beyond it the slices rotate among the XCD's CUs pass by
  // pass (as a benchmark's blocks walk their XCD's share), so that no L1 sees its lines again while
  // it could still hold them. Atomics: the CUs of a group, one per XCD, share a slice.
  const std::uint32_t slices = atomics ? cus / xcds : cus;
  const std::uint64_t per_cu = (lines + slices - 1) / slices;
  // Enough timed passes to hold at least 128 in-flight windows per CU (the ramp and the tail a
  // small part of the time), after a warm-up pass that brings the buffer into the caches it fits
  // (at the HBM level, which misses them, none). A window larger than four times the
  // bandwidth-delay product counts as that: the lines beyond the product only queue, and a window
  // of 4,096 lines per CU would make the run sixty times longer for the same figure. (Four, not
  // one: the figure moves a little with the number of passes, by the cold first pass of an L1 that
  // a kernel's start invalidates, and no shipped window reaches four times its product.)
  // On a partitioned L2 each half holds a copy of what its own CUs read: the slices rotate through
  // a CU of every half before the timed passes (one warm-up pass per partition).
  const bool warm_up = o.level != "hbm";
  const std::uint64_t warm_passes = warm_up ? (o.level != "l1" && !atomics ? gpu.l2.partitions : 1) : 0;
  const std::uint64_t sizing_window =
      std::min<std::uint64_t>(inflight, 4 * bandwidth_delay_lines(gpu, o.level, cus, engine_hz));
  const std::uint64_t passes = warm_passes + std::max<std::uint64_t>(1, (128 * sizing_window + per_cu - 1) / per_cu);
  const std::uint64_t steps = per_cu * passes;
  std::vector<std::uint64_t> issued(cus, 0);
  // Every request passes its CU's L1 port (l1.bandwidth), as in the engine.
  std::vector<BandwidthServer> l1_port(cus, BandwidthServer(static_cast<double>(gpu.l1.bandwidth.value) * engine_hz));
  const bool rotate = o.level != "l1" && !atomics;
  const auto step_bytes = static_cast<std::uint64_t>(line) * ((reads ? 1 : 0) + (writes ? 1 : 0) + (atomics ? 1 : 0));
  EventQueue q;
  const auto issue = [&](std::uint32_t cu, Tick t) {
    const std::uint64_t step = issued[cu]++;
    const std::uint64_t pass = step / per_cu;
    const std::uint64_t slice = atomics ? cu / xcds : (rotate ? (cu + pass * xcds) % cus : cu);  // same XCD
    const std::uint64_t l = (slice * per_cu + step % per_cu) % lines;
    const std::uint32_t xcd = cu % xcds;
    Tick done = l1_port[cu].serve(t, step_bytes);
    if (reads) done = std::max(done, path.read(xcd, cu, l * line, 0, static_cast<std::uint32_t>(line), t, r.counters));
    if (writes) done = std::max(done, path.write(xcd, cu, dst_base + l * line, 0, static_cast<std::uint32_t>(line), t, r.counters));
    if (atomics) done = std::max(done, path.atomic(xcd, cu, l * line, 0, static_cast<std::uint32_t>(line), t, r.counters));
    q.schedule(done, 0, cu, 0);
  };
  // One kernel: every CU issues its steps up to `last` from `start`, keeping `inflight` requests
  // outstanding; returns when the last one is done.
  const auto run_kernel = [&](std::uint64_t last, Tick start) {
    path.start_kernel();
    for (std::uint32_t cu = 0; cu < cus; ++cu) {
      for (std::uint32_t k = 0; k < inflight && issued[cu] < last; ++k) issue(cu, start);
    }
    Tick end = start;
    Event e;
    while (q.pop(e)) {
      end = std::max(end, e.time);
      if (issued[e.target] < last) issue(e.target, e.time);
    }
    return end;
  };
  // The warm-up passes are a kernel of their own, as a benchmark's warm-up launch; the timed passes are
  // the next kernel, timed from its launch to its last request's completion (ramp and tail
  // included, as a kernel's time is).
  const std::uint64_t warm_steps = warm_passes * per_cu;
  const Tick window_start = warm_steps ? run_kernel(warm_steps, 0) : 0;
  const Tick hbm_busy_start = path.busy().hbm;
  Tick end = run_kernel(steps, window_start);
  if (writes || atomics) {  // the dirty lines still in the L2s reach memory too
    std::vector<TrafficCounters> per_l2(1);
    end = std::max(end, path.end_kernel(end, per_l2));
    r.counters.add(per_l2[0]);
  }
  const auto timed_steps = static_cast<double>((steps - warm_steps) * cus);
  const double bytes = timed_steps * static_cast<double>(step_bytes);
  const double seconds = static_cast<double>(end - window_start) / 1e12;
  r.bandwidth_bytes_per_s = bytes / seconds;
  r.hbm_utilisation = static_cast<double>(path.busy().hbm - hbm_busy_start) /
                      (static_cast<double>(end - window_start) * gpu.hbm.channels);
  return r;
}

MemoryMicroResult run_memory_micro(const arch::GpuSpec& gpu, const MemoryMicroOptions& o) {
  arch::Activity activity;
  if (o.pattern != "chase") activity.stream = 1.0;
  double clock = arch::sustained_clock(gpu, activity).clock.value;
  MemoryMicroResult r = run_memory_micro(gpu, o, clock);
  for (int i = 1; i < 4 && o.pattern != "chase"; ++i) {
    activity.stream = r.hbm_utilisation;
    const double next = arch::sustained_clock(gpu, activity).clock.value;
    if (std::abs(next - clock) < 0.005 * clock) break;
    clock = next;
    r = run_memory_micro(gpu, o, clock);
  }
  return r;
}

}  // namespace attnsim::sim
