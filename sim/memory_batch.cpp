// The batch forms of MemoryPath: a tile operation's line requests probed line by line (exact tags
// and counters) and timed as a whole, each channel serving the batch's bytes on it once.
#include "sim/memory_path.h"

#include <optional>

namespace attnsim::sim {

BatchTiming MemoryPath::read_batch(std::uint32_t xcd, std::uint32_t cu, const LineRequest* lines, std::size_t n, Tick t,
                                   TrafficCounters& c) {
  use_clock_of(xcd);
  return time_read_batch(t, fill_lines(xcd, cu, lines, n, c, false), c, l2_read_);
}

MemoryPath::FillSummary MemoryPath::fill_lines(std::uint32_t xcd, std::uint32_t cu, const LineRequest* lines,
                                               std::size_t n, TrafficCounters& c, bool atomic) {
  const std::uint32_t near = gpu_->l2_instance_of(xcd, cu);
  // Atomics go to each line's home; reads probe the near instance first (its home, unpartitioned).
  const auto first_probe = [&](std::uint64_t address) { return atomic ? home_of(xcd, address) : near; };
  FillSummary f;
  for (std::size_t i = 0; i < n; ++i) {
    prefetch_ahead(lines, n, i, first_probe);
    const LineRequest& q = lines[i];
    if (!atomic && read_l1(cu, q, c)) {
      f.latency_sum += l1_latency_;
      continue;
    }
    f.reached_l2 = true;
    const std::uint32_t home = home_of(xcd, q.address);
    if (atomic) count_fabric(near, home, q.lo, q.hi, c);
    const ReadRoute r = route_read(atomic ? home : near, home, q, c, atomic);
    const bool far = r.far || (atomic && home != near);
    l2_demand_.add(r.channel, q.hi - q.lo);
    if (r.evicted) victims_.push_back(Victim{r.channel, r.victim});
    if (r.far) {
      l2_demand_.add(r.far_channel, q.hi - q.lo);
      if (r.far_evicted) victims_.push_back(Victim{r.far_channel, r.far_victim});
    }
    f.latency_sum += read_latency(r) + (atomic ? far_latency(far) : 0);
    f.far = f.far || far;
    if (r.hit) continue;
    f.fetched = true;
    link_demand_.add(r.fill_channel(), r.fetch.size);
    if (mall_) mall_demand_.add(mall_channel(r.fetch.address), r.fetch.size);
    if (r.fetch.hbm_bytes) {
      f.from_hbm = true;
      hbm_demand_.add(hbm_channel(r.fetch.address), r.fetch.hbm_bytes);
    }
  }
  return f;
}

BatchTiming MemoryPath::time_read_batch(Tick t, const FillSummary& f, TrafficCounters& c,
                                        std::vector<BandwidthServer>& l2) {
  BatchTiming b{t, f.latency_sum, WaitCause::l2, 0};
  const Tick arrival = t + l1_latency_;
  if (!f.reached_l2) {  // every request hit its L1
    b.finish = arrival;
    b.latency = l1_latency_;
    return b;
  }
  Tick l2_done = l2_demand_.serve(l2, arrival);
  // Dirty victims take write-back queue slots; the batch waits only while a queue is full.
  l2_done = std::max(l2_done, write_back_victims(arrival, c));
  const Tick far = far_latency(f.far);  // a request through the far partition: its round trip on every bound
  const auto bound_by = [&](Tick end, WaitCause level, Tick latency) {
    end += far;
    latency += far;
    if (end <= b.finish) return;
    b.finish = end;
    b.bound = level;
    b.latency = latency;
  };
  bound_by(l2_done + l2_latency_, WaitCause::l2, l1_latency_ + l2_latency_);
  if (f.fetched) {
    Tick beyond = link_demand_.serve(link_, arrival);
    if (has_mall_) beyond = std::max(beyond, mall_demand_.serve(mall_ch_, arrival));
    bound_by(beyond + mall_latency_ + l2_latency_, WaitCause::fabric, l1_latency_ + l2_latency_ + mall_latency_);
  }
  if (f.from_hbm) {
    bound_by(hbm_demand_.serve(hbm_ch_, arrival) + mall_latency_ + hbm_latency_ + l2_latency_, WaitCause::hbm,
             l1_latency_ + l2_latency_ + mall_latency_ + hbm_latency_);
  }
  return b;
}

BatchTiming MemoryPath::write_batch(std::uint32_t xcd, std::uint32_t cu, const LineRequest* lines, std::size_t n,
                                    Tick t, TrafficCounters& c) {
  use_clock_of(xcd);
  const std::uint32_t near = gpu_->l2_instance_of(xcd, cu);
  const auto home = [&](std::uint64_t address) { return home_of(xcd, address); };
  for (std::size_t i = 0; i < n; ++i) {
    prefetch_ahead(lines, n, i, home);
    const LineRequest& q = lines[i];
    std::optional<std::uint64_t> victim;  // one line probed: at most one eviction
    write_l1(c);
    const std::uint32_t at = home(q.address);
    count_fabric(near, at, q.lo, q.hi, c);
    const std::uint32_t ch = route_write(at, q, c, [&](std::uint64_t v) { victim = v; });
    l2_demand_.add(ch, q.hi - q.lo);
    if (victim) victims_.push_back(Victim{ch, *victim});
  }
  return time_write_batch(t, n, c);
}

BatchTiming MemoryPath::time_write_batch(Tick t, std::size_t n, TrafficCounters& c) {
  // Writes are posted: a request holds its window slot until the L2 has accepted it.
  BatchTiming b{t, static_cast<Tick>(n) * l1_latency_, WaitCause::l2, l1_latency_};
  const Tick accepted = l2_demand_.serve(l2_write_, t + l1_latency_);
  b.finish = accepted;
  const Tick slots = write_back_victims(accepted, c);
  if (slots > b.finish) {  // every write-back slot of a channel busy: memory's write rate binds
    b.finish = slots;
    b.bound = WaitCause::hbm;
  }
  return b;
}

BatchTiming MemoryPath::atomic_batch(std::uint32_t xcd, std::uint32_t cu, const LineRequest* lines, std::size_t n,
                                     Tick t, TrafficCounters& c, std::uint32_t requests_per_sector) {
  use_clock_of(xcd);
  const std::uint32_t near = gpu_->l2_instance_of(xcd, cu);
  const AtomicSectors before(c);
  if (l2_atomics_) {
    const FillSummary f = fill_lines(xcd, cu, lines, n, c, true);
    repeat_atomic_requests(requests_per_sector, before, c);
    return time_l2_atomic_batch(t, f, c);
  }
  bool mall_missed = false;
  for (std::size_t i = 0; i < n; ++i) {
    if (mall_ && i + kPrefetchAhead < n) mall_->prefetch(lines[i + kPrefetchAhead].address);
    const LineRequest& q = lines[i];
    const std::uint32_t home = home_of(xcd, q.address);
    count_fabric(near, home, q.lo, q.hi, c);
    const std::uint32_t ch = route_atomic(home, q, c);
    l2_demand_.add(ch, q.hi - q.lo);
    // Read-modify-write at the memory side, per 64 B chunk: read through the MALL (which allocates
    // the line), the sum written to HBM.
    route_atomic_chunks(q.address, q.lo, q.hi, c, [&](const Fetch& f) {
      link_demand_.add(ch, 64);
      if (mall_) mall_demand_.add(mall_channel(f.address), f.size);
      hbm_demand_.add(hbm_channel(f.address), f.hbm_bytes + 64);
      mall_missed = mall_missed || f.hbm_bytes > 0;
    });
  }
  repeat_atomic_requests(requests_per_sector, before, c);
  return time_atomic_batch(t, mall_missed);
}

BatchTiming MemoryPath::time_atomic_batch(Tick t, bool mall_missed) {
  // Atomics are posted: they hold no window slot; `finish` is when the memory side has performed
  // them (every channel on their way has served them) and the acknowledgement is back: the round
  // trip of a memory-side cache hit, or of HBM when a chunk's read missed it.
  BatchTiming b{t, 0, mall_missed ? WaitCause::hbm : WaitCause::fabric, l1_latency_ + atomic_ack_latency(mall_missed)};
  const Tick at = l2_demand_.serve(l2_write_, t + l1_latency_);
  Tick beyond = link_demand_.serve(link_, at);
  if (has_mall_) beyond = std::max(beyond, mall_demand_.serve(mall_ch_, at));
  beyond = std::max(beyond, hbm_demand_.serve(hbm_ch_, at));
  b.finish = beyond + atomic_ack_latency(mall_missed);
  return b;
}

}  // namespace attnsim::sim
