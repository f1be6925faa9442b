#include "sim/memory_path.h"

#include "arch/clock_model.h"
#include "arch/config_error.h"
#include "sim/state_budget.h"

namespace attnsim::sim {

namespace {
SetIndex set_index(arch::SetIndex i) { return i == arch::SetIndex::hashed ? SetIndex::hashed : SetIndex::modulo; }
static_assert(arch::kDefaultIndexPrime == SetAssocCache::kDefaultIndexPrime, "one default index function");
}  // namespace

MemoryPath::MemoryPath(const arch::GpuSpec& gpu, double engine_hz, TagMode mode)
    : gpu_(&check_state_budget(gpu, mode)),  // before any cache is allocated (the first member)
      line_(static_cast<std::uint32_t>(gpu.l2.line.value)),
      mall_latency_(gpu.mall.present ? gpu.mall.latency.value : 0),
      hbm_latency_(gpu.hbm.latency.value),
      l1_(gpu, mode == TagMode::approximate) {
  if (line_ != 128) {
    throw arch::ConfigError(arch::ValueOrigin{gpu.name, 0, 0, {}}, "l2.line",
                            "the request-size rules are written for 128 B L2 lines, not " + std::to_string(line_));
  }
  l2_channels_ = Divisor(gpu.l2_instance_channels());
  partitioned_ = gpu.l2.partitions > 1;
  interleave_ = Divisor(gpu.hbm.interleave.value);
  hbm_channels_ = Divisor(gpu.hbm.channels);
  if (gpu.mall.present) mall_channels_ = Divisor(gpu.mall.channels);
  mode_ = mode;
  has_mall_ = gpu.mall.present;
  l2_atomics_ = gpu.l2.atomics == arch::AtomicSite::l2;
  const std::uint32_t instances = gpu.l2_instances();
  for (std::uint32_t i = 0; i < instances; ++i) {
    if (mode == TagMode::exact) {
      l2_.emplace_back(gpu.l2_instance_bytes(), gpu.l2.ways, line_, WritePolicy::write_back, 1, set_index(gpu.l2.set_index),
                       0, gpu.hbm.capacity.value, gpu.l2.index_prime);
    } else {
      l2_groups_.emplace_back(approximate_l2(gpu));
    }
  }
  const std::uint32_t channels = instances * gpu.l2_instance_channels();
  l2_read_.resize(channels);
  channel_requests_.assign(channels, 0);
  channel_hits_.assign(channels, 0);
  writeback_queue_.assign(static_cast<std::size_t>(channels) * gpu.l2.writeback_queue, 0);
  writeback_next_.assign(channels, 0);
  l2_write_.resize(channels);
  link_.resize(channels);
  set_engine_clock(engine_hz);
  l2_demand_.resize(channels);
  link_demand_.resize(channels);
  hbm_demand_.resize(gpu.hbm.channels);
  if (gpu.mall.present) {
    mall_demand_.resize(gpu.mall.channels);
    // One tag entry per L2 line while every access covers whole L2 lines (docs/model.md): the
    // same hits as a line-by-line MALL, half the probes for 64 B MALL lines.
    const auto mall_line = static_cast<std::uint32_t>(gpu.mall.line.value);
    const std::uint32_t granule = line_ > mall_line ? line_ / mall_line : 1;
    const std::uint64_t mall_sets = gpu.mall.size.value / (std::uint64_t{gpu.mall.ways} * mall_line);
    if (mode == TagMode::exact) {
      mall_.emplace(gpu.mall.size.value, gpu.mall.ways, mall_line, WritePolicy::write_through,
                    mall_sets % granule == 0 ? granule : 1, set_index(gpu.mall.set_index), 0, gpu.hbm.capacity.value,
                    gpu.mall.index_prime);
    } else {
      if (mall_line != 64) {
        throw arch::ConfigError(arch::ValueOrigin{gpu.name, 0, 0, {}}, "mall.line",
                                "the approximate mode keeps 64 B units; it needs 64 B MALL lines, not " +
                                    std::to_string(mall_line));
      }
      mall_groups_.emplace(approximate_mall(gpu));
    }
    mall_ch_ = ServerBank(gpu.mall.channels, static_cast<double>(gpu.mall.bandwidth.value) * gpu.clock.fabric.value);
  }
  hbm_ch_ = ServerBank(gpu.hbm.channels, gpu.hbm.peak_bandwidth.value / gpu.hbm.channels);
  hbm_writes_ = HbmWriteQueues(gpu.hbm.channels, gpu.hbm.write_queue.value / line_,
                               gpu.hbm.peak_bandwidth.value / gpu.hbm.channels, gpu.hbm.write_burst.value,
                               static_cast<Tick>(gpu.hbm.turnaround.value + 0.5));
}

GroupCacheGeometry MemoryPath::approximate_l2(const arch::GpuSpec& gpu) {
  const std::uint64_t bytes = gpu.l2_instance_bytes();
  const auto line = static_cast<std::uint32_t>(gpu.l2.line.value);
  // Evicting as often as the exact mode's L2 of the same sets and index (docs/model.md).
  const SetIndexMap sets(bytes / (std::uint64_t{gpu.l2.ways} * line), set_index(gpu.l2.set_index), 1, gpu.l2.index_prime);
  return {bytes, GroupCache::room_for(bytes), 1, line, gpu.l2.ways, FillSets{sets, gpu.l2.ways}};
}

GroupCacheGeometry MemoryPath::approximate_mall(const arch::GpuSpec& gpu) {
  // By capacity alone, strict LRU: set fill counts moved one problem of 343 drawn at random, away
  // from the exact mode (docs/model.md).
  GroupCacheGeometry g;
  g.capacity_bytes = gpu.mall.size.value;
  g.max_groups = GroupCache::room_for(gpu.mall.size.value);
  return g;
}

void MemoryPath::set_engine_clock(double engine_hz) {
  // Each L2 instance (and its CUs' L1s) at its XCD's clock (clock.xcd_spread); one shared L2 at the
  // controller's.
  const std::uint32_t instances = gpu_->l2_instances(), per = gpu_->l2_instance_channels();
  l1_latencies_.resize(instances);
  l2_latencies_.resize(instances);
  for (std::uint32_t i = 0; i < instances; ++i) {
    const double hz = gpu_->l2.scope == arch::L2Scope::per_xcd ? arch::xcd_clock(*gpu_, i, engine_hz) : engine_hz;
    const Clock engine(hz);
    l1_latencies_[i] = engine.ticks(static_cast<double>(gpu_->l1.latency.value));
    l2_latencies_[i] = engine.ticks(static_cast<double>(gpu_->l2.latency.value));
    for (std::uint32_t ch = i * per; ch < (i + 1) * per; ++ch) {
      l2_read_[ch].set_rate(static_cast<double>(gpu_->l2.read_bandwidth.value) * hz);
      l2_write_[ch].set_rate(static_cast<double>(gpu_->l2.write_bandwidth.value) * hz);
      link_[ch].set_rate(static_cast<double>(gpu_->fabric.l2_link_bandwidth.value) * hz);
    }
  }
  far_latency_ = Clock(engine_hz).ticks(static_cast<double>(gpu_->l2.far_latency.value));
  use_clock_of(0);
}

MemoryPath::Fetch MemoryPath::route_fetch(std::uint64_t address, std::uint32_t size, TrafficCounters& c) {
  Fetch f{address, size, size};
  if (mall_) {
    // A request that does not cover whole granules ends the granular MALL (exactly: docs/model.md).
    if (mall_->granular() && (size % mall_->unit_bytes() != 0 || address % mall_->unit_bytes() != 0)) mall_->split();
    const std::uint32_t mall_line = mall_->line_bytes(), unit = mall_->unit_bytes();
    std::uint32_t misses = 0;
    bool evicted = false;  // the MALL holds no dirty lines
    std::uint64_t victim = 0;
    for (std::uint64_t a = address / unit * unit; a < address + size; a += unit) {
      if (!mall_->access_line(a, false, evicted, victim)) misses += unit / mall_line;
    }
    c.mall_read_hits += (size + address % mall_line + mall_line - 1) / mall_line - misses;
    c.mall_read_misses += misses;
    f.hbm_bytes = misses * mall_line;
  }
  c.hbm_read_bytes += f.hbm_bytes;
  return f;
}

MemoryPath::ReadRoute MemoryPath::route_read(std::uint32_t inst, std::uint32_t home, const LineRequest& q,
                                             TrafficCounters& c, bool atomic) {
  ReadRoute r;
  r.channel = l2_channel(inst, q.address);
  c.add_request(atomic, q.hi - q.lo, sectors_touched(q.lo, q.hi));
  r.hit = l2_[inst].access_line(q.address, atomic, r.evicted, r.victim);
  ++c.tcc_req;
  if (!r.hit && home != inst) {
    // The near partition's copy missed: the request goes on to the line's home, which allocates it
    // (a clean line) and serves it or fetches it.
    r.far = true;
    count_fabric(inst, home, q.lo, q.hi, c);
    r.far_channel = l2_channel(home, q.address);
    r.hit = l2_[home].access_line(q.address, false, r.far_evicted, r.far_victim);
  }
  count_channel(r.channel, 1, r.hit ? 1 : 0);  // a far hit is a hit of the request's channel
  if (r.hit) {
    ++c.tcc_hit;
    return r;
  }
  ++c.tcc_miss;
  const SectorRequest f = sector_request(q.lo, q.hi, c);
  r.fetch = route_fetch(q.address + f.offset, f.size, c);
  return r;
}

MemoryPath::SectorRequest MemoryPath::sector_request(std::uint32_t lo, std::uint32_t hi, TrafficCounters& c) {
  const std::uint32_t first_sector = lo / 32, last_sector = (hi - 1) / 32;
  SectorRequest r;
  if (first_sector == last_sector) {
    r = SectorRequest{first_sector * 32, 32};
  } else if (first_sector / 2 == last_sector / 2) {
    r = SectorRequest{first_sector / 2 * 64, 64};
  }
  ++c.ea_rdreq;
  if (r.size == 32) ++c.ea_rdreq_32b;
  if (r.size == 64) ++c.ea_rdreq_64b;
  if (r.size == 128) ++c.ea_rdreq_128b;
  return r;
}

Tick MemoryPath::read_latency(const ReadRoute& r) const {
  return l1_latency_ + l2_latency_ + far_latency(r.far) + (r.hit ? 0 : fetch_latency(r.fetch));
}

Tick MemoryPath::time_fetch(const Fetch& f, Tick t) {
  if (has_mall_) t = mall_ch_.serve(mall_channel(f.address), t, f.size);
  return f.hbm_bytes ? hbm_ch_.serve(hbm_channel(f.address), t, f.hbm_bytes) : t;
}

Tick MemoryPath::read(std::uint32_t xcd, std::uint32_t cu, std::uint64_t line_address, std::uint32_t lo,
                      std::uint32_t hi, Tick t, TrafficCounters& c) {
  use_clock_of(xcd);
  const LineRequest q{line_address, lo, hi};
  if (read_l1(cu, q, c)) return t + l1_latency_;
  return time_route(route_read(gpu_->l2_instance_of(xcd, cu), home_of(xcd, line_address), q, c), hi - lo, t, l2_read_, c);
}

Tick MemoryPath::time_route(const ReadRoute& r, std::uint32_t bytes, Tick t, std::vector<BandwidthServer>& l2,
                            TrafficCounters& c) {
  Tick at = l2[r.channel].serve(t + l1_latency_, bytes);
  // A dirty victim goes to the channel's write-back queue; the request waits only while the queue
  // is full (this is what throttles a stream to the slowest level).
  if (r.evicted) at = evict(r.channel, r.victim, at, c);
  if (r.far) {
    at = l2[r.far_channel].serve(at, bytes);
    if (r.far_evicted) at = evict(r.far_channel, r.far_victim, at, c);
  }
  const Tick through = l2_latency_ + far_latency(r.far);
  if (r.hit) return at + through;
  at = link_[r.fill_channel()].serve(at, r.fetch.size);
  return time_fetch(r.fetch, at) + fetch_latency(r.fetch) + through;
}

Tick MemoryPath::write(std::uint32_t xcd, std::uint32_t cu, std::uint64_t line_address, std::uint32_t lo,
                       std::uint32_t hi, Tick t, TrafficCounters& c) {
  use_clock_of(xcd);
  const std::uint32_t home = home_of(xcd, line_address);
  std::optional<std::uint64_t> victim;  // one line probed: at most one eviction
  write_l1(c);
  count_fabric(gpu_->l2_instance_of(xcd, cu), home, lo, hi, c);
  const std::uint32_t ch = route_write(home, LineRequest{line_address, lo, hi}, c, [&](std::uint64_t v) { victim = v; });
  const Tick accepted = l2_write_[ch].serve(t + l1_latency_, hi - lo);
  return victim ? std::max(accepted, evict(ch, *victim, accepted, c)) : accepted;
}

std::uint32_t MemoryPath::route_atomic(std::uint32_t inst, const LineRequest& q, TrafficCounters& c) {
  c.add_request(true, q.hi - q.lo, sectors_touched(q.lo, q.hi));
  ++c.tcc_req;
  ++c.tcc_miss;
  const std::uint32_t ch = l2_channel(inst, q.address);
  count_channel(ch, 1, 0);
  return ch;
}

Tick MemoryPath::atomic(std::uint32_t xcd, std::uint32_t cu, std::uint64_t line_address, std::uint32_t lo,
                        std::uint32_t hi, Tick t, TrafficCounters& c) {
  use_clock_of(xcd);
  const std::uint32_t home = home_of(xcd, line_address);
  count_fabric(gpu_->l2_instance_of(xcd, cu), home, lo, hi, c);
  if (l2_atomics_) {
    // Performed in the L2, at the line's home: a read-modify-write of the line, through the L2's
    // write port.
    return time_route(route_read(home, home, LineRequest{line_address, lo, hi}, c, true), hi - lo, t, l2_write_, c) +
           far_latency(home != gpu_->l2_instance_of(xcd, cu));
  }
  const std::uint32_t ch = route_atomic(home, LineRequest{line_address, lo, hi}, c);
  const Tick at = l2_write_[ch].serve(t + l1_latency_, hi - lo);
  Tick done = at;
  bool mall_missed = false;
  // Read-modify-write at the memory side, per 64 B chunk: the line is read (through the MALL, which
  // allocates it) and the sum written to HBM. The channels are reserved when the request reaches
  // them; the latencies are added to the completion only: the acknowledgement returns from the
  // memory side once the chunk is read (from HBM on a MALL miss) and summed.
  route_atomic_chunks(line_address, lo, hi, c, [&](const Fetch& f) {
    const Tick read = time_fetch(f, link_[ch].serve(at, 64));
    done = std::max(done, hbm_ch_.serve(hbm_channel(f.address), read, 64));
    mall_missed = mall_missed || f.hbm_bytes > 0;
  });
  return done + atomic_ack_latency(mall_missed);
}

[[gnu::always_inline]] inline Tick MemoryPath::evict(std::uint32_t ch, std::uint64_t line_address, Tick t, TrafficCounters& c) {
  const std::size_t depth = gpu_->l2.writeback_queue;
  Tick& slot = writeback_queue_[ch * depth + writeback_next_[ch]];
  if (++writeback_next_[ch] == depth) writeback_next_[ch] = 0;
  const Tick start = std::max(t, slot);  // the oldest write-back in the queue must have left
  // The write-back joins the links' and channels' queues now (their order is the order requests
  // are presented in); the request itself waits for its queue slot.
  slot = write_back(ch, line_address, t, c);
  return start;
}

Tick MemoryPath::write_back_victims(Tick t, TrafficCounters& c) {
  Tick slots = t;
  for (const Victim& v : victims_) slots = std::max(slots, evict(v.channel, v.line, t, c));
  victims_.clear();
  return slots;
}

[[gnu::always_inline]] inline Tick MemoryPath::write_back(std::uint32_t ch, std::uint64_t line_address, Tick t, TrafficCounters& c) {
  c.ea_wrreq += 2;
  c.ea_wrreq_64b += 2;
  c.hbm_write_bytes += line_;
  Tick at = link_[ch].serve(t, line_);
  MemorySideChannels& side = writeback_side_;
  side.of(*this, line_address);
  if (has_mall_) at = mall_ch_.serve(side.mall, at, line_);
  // A write-through refreshes a MALL line it finds (the approximate mode does so in evict_group).
  if (mall_) mall_->access(line_address, line_, true, [](std::uint64_t, std::uint64_t) {}, [](std::uint64_t) {});
  // The channel's controller acknowledges the write once its queue accepts it; the write's time
  // (and a turnaround, when it ends a burst between reads) is booked on the channel from then on.
  const std::uint32_t hch = side.hbm;
  const HbmWriteQueues::Accepted w = hbm_writes_.accept(hch, at, line_, hbm_ch_.bytes(hch));
  hbm_ch_.serve(hch, w.at, line_, w.turnaround);
  return w.at;
}

void MemoryPath::empty_caches() {
  l1_.invalidate();
  for (auto& l2 : l2_) l2.invalidate();
  for (auto& l2 : l2_groups_) l2.invalidate();
  if (mall_) mall_->invalidate();
  if (mall_groups_) mall_groups_->invalidate();
}

Tick MemoryPath::end_kernel(Tick t, std::vector<TrafficCounters>& per_xcd) {
  Tick done = t;
  if (gpu_->l2.kernel_end == arch::L2KernelEnd::keep) return done;
  for (std::uint32_t inst = 0; inst < gpu_->l2_instances(); ++inst) {
    TrafficCounters& c = per_xcd[std::min<std::size_t>(inst, per_xcd.size() - 1)];
    if (mode_ == TagMode::exact) {
      l2_[inst].flush([&](std::uint64_t line) { done = std::max(done, write_back(l2_channel(inst, line), line, t, c)); });
      l2_[inst].invalidate();
      continue;
    }
    l2_groups_[inst].flush_and_invalidate([&](std::uint64_t key, const GroupShape& shape, std::uint64_t dirty) {
      // The write-throughs refresh the MALL's group once (as evict_group: a refresh neither fills
      // nor evicts, so once per line is the same).
      mall_group_access(key, shape, dirty, 0);
      for_each_line(key, shape, dirty, [&](std::uint64_t line, std::uint64_t, std::uint32_t) {
        done = std::max(done, write_back(l2_channel(inst, line), line, t, c));
      });
    });
  }
  return done;
}

LevelBusy MemoryPath::busy() const {
  LevelBusy b;
  for (const auto& s : l2_read_) b.l2 += s.busy();
  for (const auto& s : l2_write_) b.l2 += s.busy();
  for (const auto& s : link_) b.link += s.busy();
  b.mall += mall_ch_.busy();
  b.hbm += hbm_ch_.busy();
  b.l2_channels = static_cast<std::uint32_t>(l2_read_.size());
  b.links = static_cast<std::uint32_t>(link_.size());
  b.mall_channels = static_cast<std::uint32_t>(mall_ch_.size());
  b.hbm_channels = static_cast<std::uint32_t>(hbm_ch_.size());
  return b;
}

std::string MemoryPath::l2_stats_name(std::uint32_t inst) const {
  if (gpu_->l2.scope == arch::L2Scope::per_xcd) return "xcd[" + std::to_string(inst) + "].l2";
  return partitioned_ ? "l2.partition[" + std::to_string(inst) + "]" : std::string("l2");
}

void MemoryPath::add_stats(Stats& stats) const {
  const std::uint32_t per = gpu_->l2_instance_channels();
  for (std::uint32_t ch = 0; ch < l2_read_.size(); ++ch) {
    const std::string name = l2_stats_name(ch / per) + ".channel[" + std::to_string(ch % per) + "].";
    if (mode_ == TagMode::exact) {
      stats.counter(name + "requests") += channel_requests_[ch];
      stats.counter(name + "hits") += channel_hits_[ch];
    }
    stats.counter(name + "read_bytes") += l2_read_[ch].bytes();
    stats.counter(name + "write_bytes") += l2_write_[ch].bytes();
    stats.counter(name + "link_bytes") += link_[ch].bytes();
    stats.counter(name + "read_busy_ps") += static_cast<std::uint64_t>(l2_read_[ch].busy());
    stats.counter(name + "write_busy_ps") += static_cast<std::uint64_t>(l2_write_[ch].busy());
    stats.counter(name + "link_busy_ps") += static_cast<std::uint64_t>(link_[ch].busy());
  }
  const auto bank = [&](const ServerBank& b, const std::string& level) {
    for (std::uint32_t ch = 0; ch < b.size(); ++ch) {
      const std::string name = level + ".channel[" + std::to_string(ch) + "].";
      stats.value(name + "bytes") += b.bytes(ch);
      stats.counter(name + "busy_ps") += static_cast<std::uint64_t>(b.busy(ch));
    }
  };
  if (has_mall_) bank(mall_ch_, "mall");
  bank(hbm_ch_, "hbm");
}

std::uint64_t MemoryPath::state_bytes() const {
  std::uint64_t n = (mall_ ? mall_->state_bytes() : 0) + l1_.state_bytes();
  for (const auto& c : l2_) n += c.state_bytes();
  if (mall_groups_) n += mall_groups_->state_bytes();
  for (const auto& c : l2_groups_) n += c.state_bytes();
  return n;
}

}  // namespace attnsim::sim
