#include "sim/traffic_replay.h"

#include <algorithm>
#include <memory>

#include "arch/config_error.h"
#include "sim/cache.h"
#include "sim/occupancy.h"

namespace attnsim::sim {

using workloads::Action;
using workloads::KernelProgram;
using workloads::PassPrograms;
using workloads::TileOp;
using workloads::TileRef;
using workloads::WorkgroupCursor;

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

namespace {

// The L2s of the partition and the memory-side cache, with the request-size rules.
class Hierarchy {
 public:
  Hierarchy(const arch::GpuSpec& gpu) : gpu_(gpu) {
    if (gpu.l2.line.value != 128) {
      throw arch::ConfigError(arch::ValueOrigin{"traffic replay", 0, 0, {}}, "l2.line",
                              "the request-size rules are written for 128 B L2 lines");
    }
    for (std::uint32_t x = 0; x < gpu.l2_instances(); ++x) {
      l2_.push_back(std::make_unique<SetAssocCache>(gpu.l2.size.value, gpu.l2.ways, 128, WritePolicy::write_back));
    }
    if (gpu.mall.present) {
      mall_ = std::make_unique<SetAssocCache>(gpu.mall.size.value, gpu.mall.ways,
                                              static_cast<std::uint32_t>(gpu.mall.line.value), WritePolicy::write_through);
    }
  }

  void read(std::uint32_t xcd, std::uint64_t a, std::uint64_t n, TrafficCounters& c) {
    c.requested_read_bytes += n;
    const ProbeResult r = l2(xcd).access(
        a, n, false,
        [&](std::uint64_t ma, std::uint64_t lines) {
          for (std::uint64_t i = 0; i < lines; ++i) {
            const std::uint64_t line = ma + i * 128;
            const std::uint64_t lo = std::max(a, line), hi = std::min(a + n, line + 128);
            fetch(line, lo - line, hi - line, c);
          }
        },
        [&](std::uint64_t wa) { write_back(wa, c); });
    count(r, c);
  }

  void write(std::uint32_t xcd, std::uint64_t a, std::uint64_t n, TrafficCounters& c) {
    c.requested_write_bytes += n;
    const ProbeResult r = l2(xcd).access(a, n, true, [](std::uint64_t, std::uint64_t) {},
                                         [&](std::uint64_t wa) { write_back(wa, c); });
    count(r, c);
  }

  // Device-scope atomics pass the L2 (counted as misses) and are performed at the memory side.
  void atomic(std::uint64_t a, std::uint64_t n, TrafficCounters& c) {
    c.atomic_bytes += n;
    const std::uint64_t first = a / 128, last = (a + n - 1) / 128;
    c.tcc_req += last - first + 1;
    c.tcc_miss += last - first + 1;
    for (std::uint64_t chunk = a / 64 * 64; chunk < a + n; chunk += 64) {
      ++c.ea_wrreq;
      ++c.ea_wrreq_64b;
      memory_read(chunk, 64, c);  // read-modify-write at the memory side
      c.hbm_write_bytes += 64;
    }
  }

  // Kernel boundary: write back every dirty line, then drop the L2s' contents.
  void end_kernel(TrafficCounters& c) {
    for (auto& cache : l2_) {
      cache->flush([&](std::uint64_t wa) { write_back(wa, c); });
      cache->invalidate();
    }
  }

 private:
  SetAssocCache& l2(std::uint32_t xcd) { return *l2_[gpu_.l2_instance_of(xcd)]; }

  static void count(const ProbeResult& r, TrafficCounters& c) {
    c.tcc_req += r.hits + r.misses;
    c.tcc_hit += r.hits;
    c.tcc_miss += r.misses;
  }

  // A read miss: one request covering the 32 B sectors touched in [lo, hi) of the line.
  void fetch(std::uint64_t line, std::uint64_t lo, std::uint64_t hi, TrafficCounters& c) {
    const std::uint64_t first_sector = lo / 32, last_sector = (hi - 1) / 32;
    std::uint64_t size = 128;
    if (first_sector == last_sector) {
      size = 32;
    } else if (first_sector / 2 == last_sector / 2) {
      size = 64;
    }
    ++c.ea_rdreq;
    if (size == 32) ++c.ea_rdreq_32b;
    if (size == 64) ++c.ea_rdreq_64b;
    if (size == 128) ++c.ea_rdreq_128b;
    const std::uint64_t start = line + (size == 128 ? 0 : (size == 64 ? first_sector / 2 * 64 : first_sector * 32));
    memory_read(start, size, c);
  }

  void write_back(std::uint64_t line, TrafficCounters& c) {
    c.ea_wrreq += 2;
    c.ea_wrreq_64b += 2;
    c.hbm_write_bytes += 128;
    if (mall_) mall_->access(line, 128, true, [](std::uint64_t, std::uint64_t) {}, [](std::uint64_t) {});
  }

  void memory_read(std::uint64_t a, std::uint64_t n, TrafficCounters& c) {
    if (!mall_) {
      c.hbm_read_bytes += n;
      return;
    }
    const ProbeResult r = mall_->access(a, n, false, [](std::uint64_t, std::uint64_t) {}, [](std::uint64_t) {});
    c.mall_read_hits += r.hits;
    c.mall_read_misses += r.misses;
    c.hbm_read_bytes += r.misses * mall_->line_bytes();
  }

  const arch::GpuSpec& gpu_;
  std::vector<std::unique_ptr<SetAssocCache>> l2_;
  std::unique_ptr<SetAssocCache> mall_;
};

// One resident workgroup: its cursor and XCD.
struct Slot {
  std::unique_ptr<WorkgroupCursor> cursor;
  std::uint32_t xcd = 0;
};

}  // namespace

TrafficReport replay_traffic(const PassPrograms& pp, const arch::GpuSpec& gpu) {
  Hierarchy h(gpu);
  TrafficReport report;
  const std::uint32_t xcds = gpu.dispatch.xcds_per_partition;
  const std::uint32_t cus = xcds * gpu.chip.cus_per_xcd;
  for (const KernelProgram& kp : pp.kernels) {
    KernelTraffic kt;
    kt.name = kp.name;
    kt.workgroups = kp.workgroups();
    const Occupancy occ = occupancy(gpu, kp.waves + kp.load_waves, std::max<std::uint32_t>(kp.vgprs, 1), kp.lds_bytes);
    if (occ.workgroups_per_cu == 0) {
      throw arch::ConfigError(arch::ValueOrigin{"--kernel " + pp.schedule.name, 0, 0, {}}, kp.name,
                              "a workgroup does not fit on a " + gpu.name + " CU (limited by " + occ.limited_by + ")");
    }
    kt.resident_workgroups = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(kp.workgroups(), static_cast<std::uint64_t>(cus) * occ.workgroups_per_cu));
    std::vector<Slot> slots(kt.resident_workgroups);
    std::uint64_t next_wg = 0;
    const auto start = [&](Slot& s) {
      if (next_wg >= kp.workgroups()) {
        s.cursor.reset();
        return;
      }
      s.cursor = std::make_unique<WorkgroupCursor>(pp, kp, next_wg);
      s.xcd = static_cast<std::uint32_t>((gpu.dispatch.first_xcd + next_wg) % xcds);
      ++next_wg;
    };
    for (Slot& s : slots) start(s);
    TrafficCounters& c = kt.counters;
    for (bool busy = true; busy;) {
      busy = false;
      for (Slot& s : slots) {
        if (!s.cursor) continue;
        TileOp op;
        while (!s.cursor->next(op)) {
          start(s);
          if (!s.cursor) break;
        }
        if (!s.cursor) continue;
        busy = true;
        if (!workloads::is_memory(op.op->action)) continue;
        const workloads::TensorDesc& d = (*pp.tensors)[op.op->tensor];
        const Action a = op.op->action;
        workloads::for_each_tile(pp, kp, *op.op, s.cursor->current_pass(), op.iteration, [&](const TileRef& t) {
          workloads::for_each_run(d, t.slice, t.b, t.head, t.row0, t.rows, [&](std::uint64_t addr, std::uint64_t n) {
            if (a == Action::atomic_dq) {
              h.atomic(addr, n, c);
            } else if (workloads::is_store(a)) {
              h.write(s.xcd, addr, n, c);
            } else {
              h.read(s.xcd, addr, n, c);
            }
          });
        });
      }
    }
    h.end_kernel(c);
    report.total.add(c);
    report.kernels.push_back(std::move(kt));
  }
  return report;
}

}  // namespace attnsim::sim
