// Traffic counters of a kernel or a pass: bytes at every level and predictions of the vendor's
// profiler counters (rocprofiler gfx942 names; arch-facts section 5.1).
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

namespace attnsim::sim {

// Request counts follow rocprofiler's gfx942 counters; bytes are exact.
struct TrafficCounters {
  std::uint64_t requested_read_bytes = 0, requested_write_bytes = 0, atomic_bytes = 0;
  std::uint64_t tcc_req = 0, tcc_hit = 0, tcc_miss = 0;  // L2 line requests (hit-on-miss counts as a hit)
  std::uint64_t ea_rdreq = 0, ea_rdreq_32b = 0, ea_rdreq_64b = 0, ea_rdreq_128b = 0;  // 128 B = TCC_BUBBLE
  std::uint64_t ea_wrreq = 0, ea_wrreq_64b = 0;  // write-backs, write-throughs and atomics toward the fabric
  std::uint64_t mall_read_hits = 0, mall_read_misses = 0;  // in memory-side cache lines
  std::uint64_t hbm_read_bytes = 0, hbm_write_bytes = 0;

  // rocprofiler-sdk gfx942 formulas, in bytes (the KB of the tools x 1024).
  std::uint64_t fetch_size_bytes() const {
    return 128 * ea_rdreq_128b + 64 * (ea_rdreq - ea_rdreq_128b - ea_rdreq_32b) + 32 * ea_rdreq_32b;
  }
  std::uint64_t write_size_bytes() const { return 32 * (ea_wrreq - ea_wrreq_64b) + 64 * ea_wrreq_64b; }
  double l2_hit_rate() const {
    return tcc_hit + tcc_miss ? static_cast<double>(tcc_hit) / static_cast<double>(tcc_hit + tcc_miss) : 0.0;
  }
  void add(const TrafficCounters& o);
  // Every counter by its profiler name (plus FETCH_SIZE_bytes, WRITE_SIZE_bytes, l2_hit_rate).
  nlohmann::json to_json() const;
};

}  // namespace attnsim::sim
