// Inline and template definitions of cache.h (the probe loop is the simulator's hot path).
#pragma once

#include <stdexcept>

namespace attnsim::sim {

template <std::uint32_t W>
inline bool SetAssocCache::probe(std::uint64_t set, std::uint32_t tag, bool write, bool& evicted_dirty,
                                 std::uint64_t& victim_line) {
  const std::uint32_t ways = W ? W : ways_;
  std::uint32_t* tags = set_tags(set);
  std::uint32_t* stamps = tags + ways;
  if (++clock_ == 0xFFFFFFFFu) renumber();
  const std::uint32_t now = clock_;
  std::uint32_t hit = ways;
  for (std::uint32_t i = 0; i < ways; ++i) hit = ((tags[i] & ~kDirty) == tag && stamps[i] != 0) ? i : hit;
  evicted_dirty = false;
  const bool dirtying = write && policy_ == WritePolicy::write_back;
  if (hit != ways) {
    stamps[hit] = now;
    if (dirtying) tags[hit] |= kDirty;
    return true;
  }
  if (write && policy_ == WritePolicy::write_through) return false;  // no allocation
  // The least recently used way; invalid ways (stamp 0) come first.
  std::uint32_t oldest = stamps[0];
  for (std::uint32_t i = 1; i < ways; ++i) oldest = stamps[i] < oldest ? stamps[i] : oldest;
  std::uint32_t victim = 0;
  while (stamps[victim] != oldest) ++victim;
  if (stamps[victim] != 0 && (tags[victim] & kDirty)) {
    evicted_dirty = true;
    victim_line = static_cast<std::uint64_t>(tags[victim] & ~kDirty) * sets_ + set;
  }
  tags[victim] = tag | (dirtying ? kDirty : 0);
  stamps[victim] = now;
  return false;
}

template <class OnMiss, class OnWriteback>
ProbeResult SetAssocCache::access(std::uint64_t address, std::uint64_t bytes, bool write, OnMiss&& on_miss,
                                  OnWriteback&& on_writeback) {
  // The shipped geometries are 16-way (L2, MALL) and 64-way (L1): fixed-size loops vectorise.
  if (ways_ == 16) return access_impl<16>(address, bytes, write, on_miss, on_writeback);
  if (ways_ == 64) return access_impl<64>(address, bytes, write, on_miss, on_writeback);
  return access_impl<0>(address, bytes, write, on_miss, on_writeback);
}

template <std::uint32_t W, class OnMiss, class OnWriteback>
ProbeResult SetAssocCache::access_impl(std::uint64_t address, std::uint64_t bytes, bool write, OnMiss&& on_miss,
                                       OnWriteback&& on_writeback) {
  ProbeResult r;
  if (bytes == 0) return r;
  const std::uint64_t first = address >> line_shift_;
  const std::uint64_t last = (address + bytes - 1) >> line_shift_;
  std::uint64_t set = set_div_.mod(first);
  if (set_div_.div(last) >= kDirty) throw std::out_of_range("address beyond the cache model's tag range");
  auto tag = static_cast<std::uint32_t>(set_div_.div(first));
  std::uint64_t run_start = 0, run_length = 0;
  // Write-through writes go on to the next level whether they hit or not.
  const bool forward_all = write && policy_ == WritePolicy::write_through;
  for (std::uint64_t line = first; line <= last; ++line) {
    bool dirty = false;
    std::uint64_t victim = 0;
    const bool hit = probe<W>(set, tag, write, dirty, victim);
    if (hit) {
      ++r.hits;
    } else {
      ++r.misses;
    }
    if (hit && !forward_all) {
      if (run_length) {
        on_miss(run_start << line_shift_, run_length);
        run_length = 0;
      }
    } else {
      if (run_length == 0) run_start = line;
      ++run_length;
    }
    if (dirty) {
      ++r.writebacks;
      on_writeback(victim << line_shift_);
    }
    if (++set == sets_) {
      set = 0;
      ++tag;
    }
  }
  if (run_length) on_miss(run_start << line_shift_, run_length);
  return r;
}

template <class OnMiss, class OnWriteback>
ProbeResult SetAssocCache::access_runs(const Run* runs, std::size_t count, bool write, OnMiss&& on_miss,
                                       OnWriteback&& on_writeback) {
  for (std::size_t i = 0; i < count; ++i) {
    prefetch(runs[i].address);
  }
  ProbeResult total;
  for (std::size_t i = 0; i < count; ++i) {
    const ProbeResult r = access(runs[i].address, runs[i].bytes, write, on_miss, on_writeback);
    total.hits += r.hits;
    total.misses += r.misses;
    total.writebacks += r.writebacks;
  }
  return total;
}

template <class OnWriteback>
std::uint64_t SetAssocCache::flush(OnWriteback&& on_writeback) {
  std::uint64_t n = 0;
  for (std::uint64_t set = 0; set < sets_; ++set) {
    std::uint32_t* tags = set_tags(set);
    const std::uint32_t* stamps = tags + ways_;
    for (std::uint32_t i = 0; i < ways_; ++i) {
      if (stamps[i] != 0 && (tags[i] & kDirty)) {
        tags[i] &= ~kDirty;
        ++n;
        on_writeback((static_cast<std::uint64_t>(tags[i]) * sets_ + set) << line_shift_);
      }
    }
  }
  return n;
}

}  // namespace attnsim::sim
