// Replays a pass's memory operations through the L2s and the memory-side cache, without timing,
// to predict traffic at every level and the vendor's profiler counters (FETCH_SIZE, WRITE_SIZE).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "arch/gpu_spec.h"
#include "workloads/kernel_program.h"

namespace attnsim::sim {

// Counters of one kernel or a whole pass. Request counts follow rocprofiler's gfx942 counters
// (arch-facts section 5.1); bytes are exact.
struct TrafficCounters {
  std::uint64_t requested_read_bytes = 0, requested_write_bytes = 0, atomic_bytes = 0;
  std::uint64_t tcc_req = 0, tcc_hit = 0, tcc_miss = 0;  // L2 line requests (hit-on-miss counts as a hit)
  std::uint64_t ea_rdreq = 0, ea_rdreq_32b = 0, ea_rdreq_64b = 0, ea_rdreq_128b = 0;  // 128 B = TCC_BUBBLE
  std::uint64_t ea_wrreq = 0, ea_wrreq_64b = 0;  // write-backs, write-throughs and atomics toward the fabric
  std::uint64_t mall_read_hits = 0, mall_read_misses = 0;
  std::uint64_t hbm_read_bytes = 0, hbm_write_bytes = 0;

  // rocprofiler-sdk gfx942 formulas, in bytes (the KB of the tools x 1024).
  std::uint64_t fetch_size_bytes() const {
    return 128 * ea_rdreq_128b + 64 * (ea_rdreq - ea_rdreq_128b - ea_rdreq_32b) + 32 * ea_rdreq_32b;
  }
  std::uint64_t write_size_bytes() const { return 32 * (ea_wrreq - ea_wrreq_64b) + 64 * ea_wrreq_64b; }
  double l2_hit_rate() const { return tcc_req ? static_cast<double>(tcc_hit) / static_cast<double>(tcc_hit + tcc_miss) : 0.0; }
  void add(const TrafficCounters& o);
  nlohmann::json to_json() const;
};

struct KernelTraffic {
  std::string name;
  std::uint64_t workgroups = 0;
  std::uint32_t resident_workgroups = 0;  // workgroups in flight together (CUs x occupancy)
  TrafficCounters counters;
};

struct TrafficReport {
  std::vector<KernelTraffic> kernels;
  TrafficCounters total;
};

// Replays every kernel of the pass in stream order. Workgroups are dispatched in id order to XCD
// (first_xcd + id) mod xcds_per_partition; the workgroups that occupancy lets run together advance
// one operation each in turn (a stand-in for time until the engine times them). L2s write back
// their dirty lines and are invalidated at each kernel boundary; the memory-side cache keeps its
// contents across kernels.
// Assumptions (docs/model.md): an L2 read miss fetches the 32 B sectors its run touches, as one
// 32, 64 or 128 B request; a dirty line is written back as two 64 B requests; device-scope atomics
// are performed beyond the L2 and travel as one 64 B write request per 64 B touched; the
// memory-side cache allocates on reads (atomics included) and passes writes through to HBM.
// Contract: deterministic; throws arch::ConfigError when the GPU has no L2 line size the rules
// cover (line must be 128 B) or a kernel cannot fit on a CU.
TrafficReport replay_traffic(const workloads::PassPrograms& pp, const arch::GpuSpec& gpu);

}  // namespace attnsim::sim
