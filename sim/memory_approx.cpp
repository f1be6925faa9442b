// The approximate mode of MemoryPath: a tile operation's rows probe the tags once per group of
// lines (GroupCache) instead of once per line; every request is still counted by the exact mode's
// rules and puts its bytes on its own channels, and the batch is timed as the exact mode times it.
#include "sim/memory_path.h"

namespace attnsim::sim {

std::uint64_t append_tile_rows(std::vector<RowSpan>& spans, const workloads::TensorDesc& d, const workloads::TileRef& t) {
  const workloads::TileRows r = workloads::tile_rows(d, t.slice, t.b, t.head, t.row0, t.rows);
  if (r.rows == 0) return 0;
  if (!spans.empty()) {
    RowSpan& p = spans.back();
    if (p.row_bytes == r.row_bytes && p.stride == r.stride && p.first_row + p.rows == t.row0 &&
        p.address + p.rows * p.stride == r.address) {
      p.rows += static_cast<std::uint32_t>(r.rows);
      return r.rows * r.row_bytes;
    }
  }
  spans.push_back(RowSpan{r.address, r.row_bytes, r.stride, static_cast<std::uint32_t>(r.rows), t.row0});
  return r.rows * r.row_bytes;
}

namespace {
// The byte range [lo, hi) of the L2 line at `line` (an offset within a flat chunk group, or of a
// whole-line row: then lo = 0 and hi = ~0) that a group's request covers, relative to the line.
struct LineRange {
  std::uint32_t lo = 0, hi = 128;
};
LineRange line_range(std::uint64_t key, std::uint64_t line, std::uint64_t lo, std::uint64_t hi) {
  if (hi == ~std::uint64_t{0}) return {};
  const std::uint64_t begin = line - key;  // flat groups: the line's offset in the chunk
  return LineRange{static_cast<std::uint32_t>(std::max(lo, begin) - begin),
                   static_cast<std::uint32_t>(std::min(hi, begin + 128) - begin)};
}
// Both 64 B units of each line that has one in `units` (an L2 line is allocated whole).
std::uint64_t whole_lines(std::uint64_t units) {
  const std::uint64_t first = line_starts(units);
  return first | (first << 1);
}
// The units a request of `size` bytes at `offset` within the line whose first unit is `first` covers.
std::uint64_t fetched_units(std::uint32_t first, std::uint32_t offset, std::uint32_t size) {
  std::uint64_t m = 0;
  if (offset < 64) m |= std::uint64_t{1} << first;
  if (offset + size > 64) m |= std::uint64_t{2} << first;
  return m;
}
}  // namespace

void MemoryPath::add_hbm_rows(std::uint64_t key, const GroupShape& shape, std::uint64_t hbm, std::uint64_t hbm_more) {
  const std::uint64_t row_bytes = 64 * std::uint64_t{shape.units_per_row};
  const auto put = [&](std::uint64_t address, std::uint64_t in) {  // `in`: the units concerned
    hbm_demand_.add(hbm_channel(address), 64 * (count_units(hbm & in) + count_units(hbm_more & in)));
  };
  for_each_row(key, shape, hbm | hbm_more, [&](std::uint64_t row, std::uint64_t in_row, std::uint32_t) {
    if (interleave_.mod(row) + row_bytes <= interleave_.value()) {
      put(row, in_row);
      return;
    }
    // A row across interleave chunks: line by line.
    for_each_line(key, shape, in_row, [&](std::uint64_t line, std::uint64_t line_units, std::uint32_t) {
      put(line, line_units);
    });
  });
}

void MemoryPath::spread_on_channels(ChannelDemand& demand, std::uint32_t inst, std::uint64_t bytes) {
  const std::uint32_t channels = l2_channels_.value();
  demand.add_spread(inst * channels, channels, bytes);
}

void MemoryPath::evict_group(std::uint32_t inst, std::uint64_t key, const GroupShape& shape, std::uint64_t dirty) {
  // The write-through refreshes the lines the MALL holds (once for the group: the same outcome as
  // once per line, since a refresh neither fills nor evicts).
  mall_group_access(key, shape, dirty, 0);
  for_each_line(key, shape, dirty, [&](std::uint64_t line, std::uint64_t, std::uint32_t) {
    victims_.push_back(Victim{l2_channel(inst, line), line});
  });
}

BatchTiming MemoryPath::read_spans(std::uint32_t xcd, std::uint32_t cu, const RowSpan* spans, std::size_t n, Tick t,
                                   TrafficCounters& c) {
  use_clock_of(xcd);
  return time_read_batch(t, fill_spans(xcd, cu, spans, n, c, false), c, l2_read_);
}

std::uint64_t MemoryPath::homed_units(std::uint32_t inst, std::uint64_t key, const GroupShape& shape,
                                      std::uint64_t units) const {
  std::uint64_t homed = 0;
  for_each_line(key, shape, units, [&](std::uint64_t line, std::uint64_t line_units, std::uint32_t) {
    if (partition_of(line) == inst) homed |= line_units;
  });
  return homed;
}

MemoryPath::GroupProbe MemoryPath::probe_l2_group(std::uint32_t near, std::uint64_t key, const GroupShape& shape,
                                                  std::uint64_t request, bool write) {
  const auto on_evict_at = [this](std::uint32_t inst) {
    return [this, inst](std::uint64_t k, const GroupShape& sh, std::uint64_t dirty) { evict_group(inst, k, sh, dirty); };
  };
  GroupProbe p;
  const std::uint32_t far = 1 - near;  // the other partition (used only when partitioned)
  if (write) {
    // Writes and in-L2 atomics: at each line's home, allocated and left dirty.
    const std::uint64_t near_home = partitioned_ ? homed_units(near, key, shape, request) : request;
    const std::uint64_t far_home = request & ~near_home;
    if (near_home) p.hits = l2_groups_[near].access(key, shape, near_home, near_home, near_home, on_evict_at(near));
    if (far_home) p.hits |= l2_groups_[far].access(key, shape, far_home, far_home, far_home, on_evict_at(far));
    p.far = far_home;
    return p;
  }
  // Reads: the near partition allocates every line (a copy of those homed in the other one); the
  // lines homed in the other one that it missed go on to their home, which allocates them.
  p.hits = l2_groups_[near].access(key, shape, request, request, 0, on_evict_at(near));
  const std::uint64_t missed = request & ~p.hits;
  if (!missed || !partitioned_) return p;
  p.far = missed & ~homed_units(near, key, shape, missed);
  if (p.far) p.hits |= l2_groups_[far].access(key, shape, p.far, p.far, 0, on_evict_at(far));
  return p;
}

MemoryPath::FillSummary MemoryPath::fill_spans(std::uint32_t xcd, std::uint32_t cu, const RowSpan* spans,
                                               std::size_t n, TrafficCounters& c, bool atomic) {
  const std::uint32_t inst = gpu_->l2_instance_of(xcd, cu);  // the near partition (or the XCD's L2)
  prefetch_groups(inst, spans, n);
  Tick latency_sum = 0;
  bool reached_l2 = false, fetched = false, from_hbm = false, far = false;
  const Tick hit_latency = l1_latency_ + l2_latency_;
  std::uint64_t spread_l2 = 0, spread_link = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for_each_group(spans[i], [&](std::uint64_t key, const GroupShape& shape, std::uint64_t units, std::uint64_t lo,
                                 std::uint64_t hi) {
      if (!atomic) {
        // The reading CU's L1 first: a line whose touched units it all holds goes no further.
        const std::uint64_t held = l1_.read_group(cu, key, shape, units);
        const std::uint64_t missed = line_starts(units & ~held);
        const auto lines = count_units(line_starts(units)), forwarded = count_units(missed);
        c.tcp_accesses += lines;
        c.tcp_read_hits += lines - forwarded;
        c.tcp_tcc_read_req += forwarded;
        latency_sum += static_cast<Tick>(lines - forwarded) * l1_latency_;
        const std::uint64_t served = units & ~(missed | (missed << 1));
        if (hi == ~std::uint64_t{0}) {
          const auto served_lines = count_units(line_starts(served));
          c.l1_read_hit_bytes += 128 * served_lines;
          c.l1_read_hit_sectors += 4 * served_lines;
        } else {
          for_each_line(key, shape, served, [&](std::uint64_t line, std::uint64_t, std::uint32_t) {
            const LineRange r = line_range(key, line, lo, hi);
            c.l1_read_hit_bytes += r.hi - r.lo;
            c.l1_read_hit_sectors += sectors_touched(r.lo, r.hi);
          });
        }
        units &= ~served;
        if (!units) return;
      }
      reached_l2 = true;
      const std::uint64_t request = whole_lines(units);
      // An in-L2 atomic's read-modify-write fills the line and leaves it dirty.
      const GroupProbe probe = probe_l2_group(inst, key, shape, request, atomic);
      const std::uint64_t hits = probe.hits;
      // The L2: every line a request, hit or miss; the misses' sectors go beyond.
      const auto lines = count_units(line_starts(request));
      const auto hit_lines = count_units(line_starts(request & hits));
      c.tcc_req += lines;
      c.tcc_hit += hit_lines;
      c.tcc_miss += lines - hit_lines;
      latency_sum += static_cast<Tick>(hit_lines) * hit_latency + static_cast<Tick>(count_units(line_starts(probe.far))) * far_latency_;
      far = far || probe.far;
      std::uint64_t fetch = 0;
      bool whole = false;
      if (hi == ~std::uint64_t{0} && mall_groups_ && !partitioned_) {
        // Rows of whole lines: every request is a line, every miss one 128 B request (the sector
        // rule's outcome for a whole line); count them per group, their L2 and link bytes spread
        // over the XCD's channels at the batch's end, each fetched line on its memory-side channel.
        const std::uint64_t misses = line_starts(request) & ~line_starts(request & hits);
        const std::uint64_t miss_lines = lines - hit_lines;
        c.add_request(atomic, 128 * lines, 4 * lines);
        c.ea_rdreq += miss_lines;
        c.ea_rdreq_128b += miss_lines;
        fetch = misses | (misses << 1);
        spread_l2 += 128 * lines;
        spread_link += 128 * miss_lines;
        whole = true;
      } else {
        for_each_line(key, shape, request, [&](std::uint64_t line, std::uint64_t line_units, std::uint32_t first) {
          const LineRange r = line_range(key, line, lo, hi);
          // Reads at the near partition (and at the home when they went on to it), atomics at the home.
          const std::uint32_t home = home_of(xcd, line);
          const std::uint32_t ch = l2_channel(atomic ? home : inst, line);
          c.add_request(atomic, r.hi - r.lo, sectors_touched(r.lo, r.hi));
          l2_demand_.add(ch, r.hi - r.lo);
          if (probe.far & line_units) {
            c.l2_fabric_sectors += sectors_touched(r.lo, r.hi);
            if (!atomic) l2_demand_.add(l2_channel(home, line), r.hi - r.lo);
          }
          if (hits & line_units) return;
          const SectorRequest f = sector_request(r.lo, r.hi, c);
          link_demand_.add(l2_channel(home, line), f.size);
          if (mall_groups_) {
            fetch |= fetched_units(first, f.offset, f.size);
            mall_demand_.add(mall_channel(line + f.offset), f.size);
            return;
          }
          // No memory-side cache: the request goes to HBM as it is.
          latency_sum += hit_latency + hbm_latency_;
          c.hbm_read_bytes += f.size;
          hbm_demand_.add(hbm_channel(line + f.offset), f.size);
        });
      }
      if (hit_lines < lines) {
        fetched = true;
        from_hbm = from_hbm || !mall_groups_;
      }
      if (!fetch) return;
      // The memory side: the fetched units hit or miss the MALL (which allocates them); each
      // fetched line's round trip reaches the MALL, and HBM for the lines with a missed unit.
      const std::uint64_t mall_hits = mall_group_access(key, shape, fetch, fetch);
      const std::uint64_t missed = fetch & ~mall_hits;
      c.mall_read_hits += count_units(mall_hits);
      c.mall_read_misses += count_units(missed);
      const auto fetched_lines = count_units(line_starts(fetch));
      const auto hbm_lines = count_units(line_starts(missed));
      latency_sum += static_cast<Tick>(fetched_lines) * (hit_latency + mall_latency_) + static_cast<Tick>(hbm_lines) * hbm_latency_;
      if (missed) from_hbm = true;
      c.hbm_read_bytes += 64 * count_units(missed);
      // Rows of whole lines: their MALL bytes spread evenly over the channels (docs/model.md).
      if (whole) mall_demand_.add_even(64 * count_units(fetch));
      add_hbm_rows(key, shape, missed, 0);
    });
  }
  spread_on_channels(l2_demand_, inst, spread_l2);
  spread_on_channels(link_demand_, inst, spread_link);
  return FillSummary{latency_sum, reached_l2, fetched, from_hbm, far};
}

BatchTiming MemoryPath::write_spans(std::uint32_t xcd, std::uint32_t cu, const RowSpan* spans, std::size_t n, Tick t,
                                    TrafficCounters& c) {
  use_clock_of(xcd);
  const std::uint32_t inst = gpu_->l2_instance_of(xcd, cu);
  std::size_t requests = 0;
  std::uint64_t spread_l2 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for_each_group(spans[i], [&](std::uint64_t key, const GroupShape& shape, std::uint64_t units, std::uint64_t lo,
                                 std::uint64_t hi) {
      // Write-allocate without a fill, at each line's home: the line is present and dirty.
      const std::uint64_t request = whole_lines(units);
      const GroupProbe probe = probe_l2_group(inst, key, shape, request, true);
      const std::uint64_t hits = probe.hits;
      if (hi == ~std::uint64_t{0} && mall_groups_ && !partitioned_) {
        // Rows of whole lines: each line a 128 B write request, hit if the L2 held a unit of it;
        // counted per group, the bytes spread over the XCD's channels at the batch's end.
        const auto lines = count_units(line_starts(request));
        const auto hit_lines = count_units(line_starts(request & hits));
        c.tcp_accesses += lines;
        c.tcp_tcc_write_req += lines;
        c.requested_write_bytes += 128 * lines;
        c.write_sectors += 4 * lines;
        c.tcc_req += lines;
        c.tcc_hit += hit_lines;
        c.tcc_miss += lines - hit_lines;
        spread_l2 += 128 * lines;
        requests += lines;
        return;
      }
      for_each_line(key, shape, request, [&](std::uint64_t line, std::uint64_t line_units, std::uint32_t) {
        const LineRange r = line_range(key, line, lo, hi);
        write_l1(c);
        c.requested_write_bytes += r.hi - r.lo;
        c.write_sectors += sectors_touched(r.lo, r.hi);
        ++c.tcc_req;
        ++(hits & line_units ? c.tcc_hit : c.tcc_miss);
        if (probe.far & line_units) c.l2_fabric_sectors += sectors_touched(r.lo, r.hi);
        l2_demand_.add(l2_channel(home_of(xcd, line), line), r.hi - r.lo);
        ++requests;
      });
    });
  }
  spread_on_channels(l2_demand_, inst, spread_l2);
  return time_write_batch(t, requests, c);
}

BatchTiming MemoryPath::atomic_spans(std::uint32_t xcd, std::uint32_t cu, const RowSpan* spans, std::size_t n, Tick t,
                                     TrafficCounters& c, std::uint32_t requests_per_sector) {
  use_clock_of(xcd);
  const std::uint32_t inst = gpu_->l2_instance_of(xcd, cu);
  const AtomicSectors before(c);
  if (l2_atomics_) {
    const FillSummary f = fill_spans(xcd, cu, spans, n, c, true);
    repeat_atomic_requests(requests_per_sector, before, c);
    return time_l2_atomic_batch(t, f, c);
  }
  bool mall_missed = false;
  std::uint64_t spread_l2 = 0, spread_link = 0;
  prefetch_groups(inst, spans, n);
  for (std::size_t i = 0; i < n; ++i) {
    for_each_group(spans[i], [&](std::uint64_t key, const GroupShape& shape, std::uint64_t units, std::uint64_t lo,
                                 std::uint64_t hi) {
      // Performed at the memory side per 64 B chunk: each chunk read through the MALL (which
      // allocates it) and the sum written to HBM; the L2 passes them as misses.
      const std::uint64_t mall_hits = mall_group_access(key, shape, units, units);
      const std::uint64_t missed = units & ~mall_hits;
      const auto chunks = count_units(units);
      const auto lines = count_units(line_starts(units));
      c.mall_read_hits += count_units(mall_hits);
      if (mall_groups_) c.mall_read_misses += count_units(missed);
      c.tcc_req += lines;
      c.tcc_miss += lines;
      c.ea_wrreq += chunks;  // each 64 B chunk a write request toward the fabric, its sum written to HBM
      c.ea_wrreq_64b += chunks;
      c.hbm_write_bytes += 64 * chunks;
      c.hbm_read_bytes += 64 * count_units(missed);
      if (missed) mall_missed = true;
      if (hi == ~std::uint64_t{0}) {
        // Rows of whole lines: each line a 128 B request, both its chunks written; the L2 and link
        // bytes spread over the XCD's channels at the batch's end.
        c.add_request(true, 128 * lines, 4 * lines);
        spread_l2 += 128 * lines;
        spread_link += 64 * chunks;
        if (has_mall_) mall_demand_.add_even(64 * chunks);
        add_hbm_rows(key, shape, units, missed);
        return;
      }
      // Both chunks of a line lie in one interleave chunk of the memory side: one MALL and HBM
      // channel, the same for every line of the chunk (found once per chunk).
      MemorySideChannels side;
      for_each_line(key, shape, units, [&](std::uint64_t line, std::uint64_t line_units, std::uint32_t) {
        const LineRange r = line_range(key, line, lo, hi);
        const std::uint32_t ch = l2_channel(inst, line);
        c.add_request(true, r.hi - r.lo, sectors_touched(r.lo, r.hi));
        l2_demand_.add(ch, r.hi - r.lo);
        const auto written = static_cast<std::uint32_t>(64 * count_units(line_units));
        const auto read = static_cast<std::uint32_t>(64 * count_units(line_units & missed));
        link_demand_.add(ch, written);
        side.of(*this, line);
        if (has_mall_) mall_demand_.add(side.mall, written);
        hbm_demand_.add(side.hbm, read + written);
      });
    });
  }
  spread_on_channels(l2_demand_, inst, spread_l2);
  spread_on_channels(link_demand_, inst, spread_link);
  repeat_atomic_requests(requests_per_sector, before, c);
  return time_atomic_batch(t, mall_missed);
}

}  // namespace attnsim::sim
