#include "sim/counters.h"

namespace attnsim::sim {

void TrafficCounters::add(const TrafficCounters& o) {
  requested_read_bytes += o.requested_read_bytes;
  requested_write_bytes += o.requested_write_bytes;
  atomic_bytes += o.atomic_bytes;
  tcc_req += o.tcc_req;
  tcc_hit += o.tcc_hit;
  tcc_miss += o.tcc_miss;
  ea_rdreq += o.ea_rdreq;
  ea_rdreq_32b += o.ea_rdreq_32b;
  ea_rdreq_64b += o.ea_rdreq_64b;
  ea_rdreq_128b += o.ea_rdreq_128b;
  ea_wrreq += o.ea_wrreq;
  ea_wrreq_64b += o.ea_wrreq_64b;
  mall_read_hits += o.mall_read_hits;
  mall_read_misses += o.mall_read_misses;
  hbm_read_bytes += o.hbm_read_bytes;
  hbm_write_bytes += o.hbm_write_bytes;
}

nlohmann::json TrafficCounters::to_json() const {
  return {{"requested_read_bytes", requested_read_bytes},
          {"requested_write_bytes", requested_write_bytes},
          {"atomic_bytes", atomic_bytes},
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
          {"WRITE_SIZE_bytes", write_size_bytes()},
          {"l2_hit_rate", l2_hit_rate()},
          {"mall_read_hits", mall_read_hits},
          {"mall_read_misses", mall_read_misses},
          {"hbm_read_bytes", hbm_read_bytes},
          {"hbm_write_bytes", hbm_write_bytes}};
}

}  // namespace attnsim::sim
