// Memory microbenchmarks on the simulated hierarchy: streaming bandwidth, pointer-chase latency and
// cross-XCD atomic throughput and latency at a chosen level
// (`attnsim micro --pattern stream-read|stream-write|copy|chase|atomic --level l1|l2|mall|hbm`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arch/gpu_spec.h"
#include "sim/counters.h"

namespace attnsim::sim {

struct MemoryMicroOptions {
  std::string pattern = "stream-read";  // stream-read | stream-write | copy | chase | atomic
  std::string level = "hbm";            // l1 | l2 | mall | hbm: sets the default footprint
  std::uint64_t footprint = 0;          // bytes per buffer; 0: half an L1 per CU (l1; chase: half one L1), 2 MiB
                                        // (l2), 64 MiB (mall), 8 x the largest cache (hbm; chase and atomic: 2 x)
  std::uint32_t inflight = 0;           // outstanding line requests per CU (streams); 0: cu.memory_inflight_lines
};

struct MemoryMicroResult {
  std::string pattern, level;
  std::uint64_t footprint = 0;
  double bandwidth_bytes_per_s = 0;  // streams: bytes moved by the CUs in the timed kernel / its time
                                     // (atomic: bytes added into, four per fp32 add)
  double latency_ns = 0;             // chase: mean load-to-use latency; atomic: mean round trip of one
                                     // atomic at a time, issued from each XCD in turn to one line,
                                     // at the idle clock
  double hbm_utilisation = 0;        // HBM channels' busy fraction over the timed passes
  double engine_clock_hz = 0;
  std::uint32_t inflight = 0;        // the window used
  TrafficCounters counters;          // of every request (the warm-up kernel's included; chase: timed pass only)
};

// The patterns this module runs.
const std::vector<std::string>& memory_patterns();

// The atomic pattern: every CU keeps `inflight` whole-line fp32 atomic adds outstanding; the CUs
// are taken in groups of one per XCD, each group walking its own slice of the buffer, so that every
// line is added into from every XCD (a one-line footprint: every CU into the same line). The
// atomics are performed where l2.atomics says (docs/model.md).
// Contract: throws arch::ConfigError on an unknown pattern or level, a zero or unaligned
// footprint (it must be a positive multiple of the L2 line, at most 4 GiB).
MemoryMicroResult run_memory_micro(const arch::GpuSpec& gpu, const MemoryMicroOptions& o, double engine_hz);

// The same at the modelled clock: a chase runs at the idle (maximum) clock; a stream at the
// power-limited clock of its own HBM traffic, found by fixed-point iteration (at most 4 runs,
// until the clock moves by less than 0.5 %). A pinned clock (clock.engine) is used as is.
MemoryMicroResult run_memory_micro(const arch::GpuSpec& gpu, const MemoryMicroOptions& o);

}  // namespace attnsim::sim
