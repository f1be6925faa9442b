// Traffic counters of a kernel or a pass: bytes at every level and predictions of the vendor's
// profiler counters (rocprofiler gfx942 names, arch-facts section 5.1; Nsight Compute names on
// NVIDIA GPUs).
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "arch/gpu_spec.h"

namespace attnsim::sim {

// The 32 B sectors a request of bytes [lo, hi) of a line touches.
inline std::uint64_t sectors_touched(std::uint32_t lo, std::uint32_t hi) { return (hi + 31) / 32 - lo / 32; }

// Request counts follow rocprofiler's gfx942 counters; bytes are exact.
struct TrafficCounters {
  std::uint64_t requested_read_bytes = 0, requested_write_bytes = 0, atomic_bytes = 0;
  std::uint64_t read_sectors = 0, write_sectors = 0;  // 32 B sectors the read / write requests touch
  std::uint64_t atomic_sectors = 0;                   // 32 B sectors the atomics touch
  // L1 (TCP) line requests: reads and writes look up the tags (atomics bypass the L1); read hits stay
  // in the CU; read misses and every write go on to the L2.
  std::uint64_t tcp_accesses = 0, tcp_read_hits = 0, tcp_tcc_read_req = 0, tcp_tcc_write_req = 0;
  std::uint64_t l1_read_hit_bytes = 0, l1_read_hit_sectors = 0;  // of the reads the L1 served
  std::uint64_t tcc_req = 0, tcc_hit = 0, tcc_miss = 0;  // L2 line requests (hit-on-miss counts as a hit)
  std::uint64_t ea_rdreq = 0, ea_rdreq_32b = 0, ea_rdreq_64b = 0, ea_rdreq_128b = 0;  // 128 B = TCC_BUBBLE
  std::uint64_t ea_wrreq = 0, ea_wrreq_64b = 0;  // write-backs, write-throughs and atomics toward the fabric
  std::uint64_t mall_read_hits = 0, mall_read_misses = 0;  // in memory-side cache lines
  std::uint64_t hbm_read_bytes = 0, hbm_write_bytes = 0;
  // 32 B sectors requested of a partitioned L2's far partition (reads that missed the near copy,
  // writes and atomics homed there): Nsight Compute's lts__t_sectors_srcunit_ltcfabric.
  std::uint64_t l2_fabric_sectors = 0;

  // rocprofiler-sdk gfx942 formulas, in bytes (the KB of the tools x 1024).
  std::uint64_t fetch_size_bytes() const {
    return 128 * ea_rdreq_128b + 64 * (ea_rdreq - ea_rdreq_128b - ea_rdreq_32b) + 32 * ea_rdreq_32b;
  }
  std::uint64_t write_size_bytes() const { return 32 * (ea_wrreq - ea_wrreq_64b) + 64 * ea_wrreq_64b; }
  // The L1's read lookups in the unit `vendor`'s profiler counts them: NVIDIA 32 B sectors
  // (l1tex__t_sectors_pipe_lsu_mem_global_op_ld), AMD line requests (TCP accesses less writes).
  std::uint64_t l1_read_lookups(arch::Vendor vendor) const {
    return vendor == arch::Vendor::nvidia ? read_sectors + l1_read_hit_sectors : tcp_read_hits + tcp_tcc_read_req;
  }
  // `n` more read lookups that hit, in that unit: a load's instructions looking a unit up again
  // (workloads::OpCost::l1_lookups). Counters only: no bytes move.
  void add_l1_repeat_hits(arch::Vendor vendor, std::uint64_t n) {
    if (vendor == arch::Vendor::nvidia) {
      l1_read_hit_sectors += n;
    } else {
      tcp_accesses += n;
      tcp_read_hits += n;
    }
  }
  // The share of those lookups that hit (ncu's lookup_hit / sectors; AMD: 1 - TCP_TCC_READ_REQ /
  // read accesses).
  double l1_read_hit_rate(arch::Vendor vendor) const {
    const std::uint64_t reads = l1_read_lookups(vendor);
    const std::uint64_t hits = vendor == arch::Vendor::nvidia ? l1_read_hit_sectors : tcp_read_hits;
    return reads ? static_cast<double>(hits) / static_cast<double>(reads) : 0.0;
  }
  double l2_hit_rate() const {
    return tcc_hit + tcc_miss ? static_cast<double>(tcc_hit) / static_cast<double>(tcc_hit + tcc_miss) : 0.0;
  }
  // A read request of `bytes` touching `sectors` 32 B sectors, or an atomic one (`atomic`).
  void add_request(bool atomic, std::uint64_t bytes, std::uint64_t sectors) {
    (atomic ? atomic_bytes : requested_read_bytes) += bytes;
    (atomic ? atomic_sectors : read_sectors) += sectors;
  }
  void add(const TrafficCounters& o);
  // Calls f(a.x, b.x) for every counter x, a's by reference: the one list of the fields.
  template <class F>
  static void zip(TrafficCounters& a, const TrafficCounters& b, F&& f);
  // Every counter by its profiler name on `vendor`'s GPUs: rocprofiler's TCP and TCC counters with
  // FETCH_SIZE_bytes and WRITE_SIZE_bytes on AMD; Nsight Compute's lts__t_sectors_srcunit_tex_op_read,
  // _write and _red (.sum) and dram__bytes_read and _write (.sum) on NVIDIA; plus the bytes and hit
  // rate both share.
  nlohmann::json to_json(arch::Vendor vendor = arch::Vendor::amd) const;
};

template <class F>
void TrafficCounters::zip(TrafficCounters& a, const TrafficCounters& b, F&& f) {
  f(a.requested_read_bytes, b.requested_read_bytes);
  f(a.requested_write_bytes, b.requested_write_bytes);
  f(a.atomic_bytes, b.atomic_bytes);
  f(a.read_sectors, b.read_sectors);
  f(a.write_sectors, b.write_sectors);
  f(a.atomic_sectors, b.atomic_sectors);
  f(a.tcp_accesses, b.tcp_accesses);
  f(a.tcp_read_hits, b.tcp_read_hits);
  f(a.tcp_tcc_read_req, b.tcp_tcc_read_req);
  f(a.tcp_tcc_write_req, b.tcp_tcc_write_req);
  f(a.l1_read_hit_bytes, b.l1_read_hit_bytes);
  f(a.l1_read_hit_sectors, b.l1_read_hit_sectors);
  f(a.tcc_req, b.tcc_req);
  f(a.tcc_hit, b.tcc_hit);
  f(a.tcc_miss, b.tcc_miss);
  f(a.ea_rdreq, b.ea_rdreq);
  f(a.ea_rdreq_32b, b.ea_rdreq_32b);
  f(a.ea_rdreq_64b, b.ea_rdreq_64b);
  f(a.ea_rdreq_128b, b.ea_rdreq_128b);
  f(a.ea_wrreq, b.ea_wrreq);
  f(a.ea_wrreq_64b, b.ea_wrreq_64b);
  f(a.mall_read_hits, b.mall_read_hits);
  f(a.mall_read_misses, b.mall_read_misses);
  f(a.hbm_read_bytes, b.hbm_read_bytes);
  f(a.hbm_write_bytes, b.hbm_write_bytes);
  f(a.l2_fabric_sectors, b.l2_fabric_sectors);
}

}  // namespace attnsim::sim
