#include "sim/counters.h"

namespace attnsim::sim {

void TrafficCounters::add(const TrafficCounters& o) {
  zip(*this, o, [](std::uint64_t& a, std::uint64_t b) { a += b; });
}

nlohmann::json TrafficCounters::to_json(arch::Vendor vendor) const {
  nlohmann::json shared = {{"requested_read_bytes", requested_read_bytes},
                           {"requested_write_bytes", requested_write_bytes},
                           {"atomic_bytes", atomic_bytes},
                           {"l1_read_hit_rate", l1_read_hit_rate(vendor)},
                           {"l2_hit_rate", l2_hit_rate()},
                           {"mall_read_hits", mall_read_hits},
                           {"mall_read_misses", mall_read_misses},
                           {"hbm_read_bytes", hbm_read_bytes},
                           {"hbm_write_bytes", hbm_write_bytes}};
  if (vendor == arch::Vendor::nvidia) {
    // The SMs' global loads at the L1 (every 32 B sector they touch) and the sectors the L1 held.
    shared["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] = read_sectors + l1_read_hit_sectors;
    shared["l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum"] = l1_read_hit_sectors;
    // The L2 (LTS) sectors the SMs' loads, stores and reductions touch: the attention kernels'
    // atomics return nothing (an fp32 atomicAdd whose result is unused compiles to a RED).
    shared["lts__t_sectors_srcunit_tex_op_read.sum"] = read_sectors;
    shared["lts__t_sectors_srcunit_tex_op_write.sum"] = write_sectors;
    shared["lts__t_sectors_srcunit_tex_op_red.sum"] = atomic_sectors;
    // Sectors one L2 partition requested of the other.
    shared["lts__t_sectors_srcunit_ltcfabric.sum"] = l2_fabric_sectors;
    shared["dram__bytes_read.sum"] = hbm_read_bytes;
    shared["dram__bytes_write.sum"] = hbm_write_bytes;
    return shared;
  }
  nlohmann::json amd = {{"TCP_TOTAL_CACHE_ACCESSES", tcp_accesses},
          {"TCP_TCC_READ_REQ", tcp_tcc_read_req},
          {"TCP_TCC_WRITE_REQ", tcp_tcc_write_req},
          {"TCC_REQ", tcc_req},
          {"TCC_HIT", tcc_hit},
          {"TCC_MISS", tcc_miss},
          {"TCC_EA0_RDREQ", ea_rdreq},
          {"TCC_EA0_RDREQ_32B", ea_rdreq_32b},
          {"TCC_EA0_RDREQ_64B", ea_rdreq_64b},
          {"TCC_BUBBLE", ea_rdreq_128b},
          {"TCC_EA0_WRREQ", ea_wrreq},
          {"TCC_EA0_WRREQ_64B", ea_wrreq_64b},
          {"FETCH_SIZE_bytes", fetch_size_bytes()},
          {"WRITE_SIZE_bytes", write_size_bytes()}};
  amd.update(shared);
  return amd;
}

}  // namespace attnsim::sim
