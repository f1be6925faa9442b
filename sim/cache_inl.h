// Inline and template definitions of cache.h (the probe loop is the simulator's hot path).
#pragma once

#include <stdexcept>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace attnsim::sim {

template <std::uint32_t W>
inline std::uint32_t SetAssocCache::oldest_way(const std::uint32_t* stamps) const {
  const std::uint32_t ways = W ? W : ways_;
#if defined(__SSE2__)
  if constexpr (W != 0 && W % 4 == 0 && W <= 64) {
    // The smallest stamp 4 ways at a time (unsigned, compared as signed after flipping the top
    // bit), then the first way that holds it: the same way as the scalar search.
    const __m128i bias = _mm_set1_epi32(static_cast<int>(0x80000000u));
    __m128i low = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(stamps)), bias);
    const auto lower = [](__m128i a, __m128i b) {
      const __m128i less = _mm_cmplt_epi32(b, a);
      return _mm_or_si128(_mm_and_si128(less, b), _mm_andnot_si128(less, a));
    };
    for (std::uint32_t k = 1; k < W / 4; ++k) {
      low = lower(low, _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(stamps + 4 * k)), bias));
    }
    // The minimum of the four lanes in every lane: lanes swapped in pairs, then the pairs swapped.
    low = lower(low, _mm_shuffle_epi32(low, _MM_SHUFFLE(2, 3, 0, 1)));
    low = lower(low, _mm_shuffle_epi32(low, _MM_SHUFFLE(1, 0, 3, 2)));
    for (std::uint32_t k = 0; k < W / 4; ++k) {
      const __m128i v = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(stamps + 4 * k)), bias);
      const int eq = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v, low)));
      if (eq) return 4 * k + static_cast<std::uint32_t>(__builtin_ctz(static_cast<unsigned>(eq)));
    }
  }
#endif
  std::uint32_t oldest = stamps[0], victim = 0;
  for (std::uint32_t i = 1; i < ways; ++i) {
    const bool older = stamps[i] < oldest;  // strict: the first of equal stamps (invalid ways) wins
    oldest = older ? stamps[i] : oldest;
    victim = older ? i : victim;
  }
  return victim;
}

template <std::uint32_t W>
inline bool SetAssocCache::probe(std::uint64_t set, std::uint32_t tag, bool write, bool& evicted_dirty,
                                 std::uint64_t& victim_line) {
  const std::uint32_t ways = W ? W : ways_;
  std::uint32_t* tags = set_tags(set);
  std::uint32_t* stamps = tags + ways;
  if (++clock_ == 0xFFFFFFFFu) renumber();
  const std::uint32_t now = clock_;
  std::uint32_t hit = ways;
#if defined(__SSE2__)
  if constexpr (W != 0 && W % 4 == 0 && W <= 64) {  // 4-way compares; a valid tag occurs at most once in a set
    const __m128i key = _mm_set1_epi32(static_cast<int>(tag));
    const __m128i clean = _mm_set1_epi32(static_cast<int>(~kDirty));
    const __m128i zero = _mm_setzero_si128();
    std::uint64_t found = 0;
    for (std::uint32_t k = 0; k < W / 4; ++k) {
      const __m128i t = _mm_and_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tags + 4 * k)), clean);
      const __m128i valid = _mm_loadu_si128(reinterpret_cast<const __m128i*>(stamps + 4 * k));
      const __m128i match = _mm_andnot_si128(_mm_cmpeq_epi32(valid, zero), _mm_cmpeq_epi32(t, key));
      found |= static_cast<std::uint64_t>(_mm_movemask_ps(_mm_castsi128_ps(match))) << (4 * k);
    }
    if (found) hit = static_cast<std::uint32_t>(__builtin_ctzll(found));
  } else
#endif
  {
    for (std::uint32_t i = 0; i < ways; ++i) hit = ((tags[i] & ~kDirty) == tag && stamps[i] != 0) ? i : hit;
  }
  evicted_dirty = false;
  const bool dirtying = write && policy_ == WritePolicy::write_back;
  if (hit != ways) {
    stamps[hit] = now;
    if (dirtying) tags[hit] |= kDirty;
    return true;
  }
  if (write && policy_ == WritePolicy::write_through) return false;  // no allocation
  // The least recently used way; invalid ways (stamp 0) come first.
  const std::uint32_t victim = oldest_way<W>(stamps);
  if (stamps[victim] != 0 && (tags[victim] & kDirty)) {
    evicted_dirty = true;
    victim_line = line_of(tags[victim] & ~kDirty, set);
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
  if (set_div_.div(last) >= kDirty) throw std::out_of_range("address beyond the cache model's tag range");
  std::uint64_t index = set_div_.mod(first);
  auto tag = static_cast<std::uint32_t>(set_div_.div(first));
  std::uint64_t set = set_of(first);
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
    if (++index == sets_) {  // the next tag: a new displacement
      index = 0;
      ++tag;
      set = displacement(tag);
    } else if (++set == sets_) {
      set = 0;
    }
  }
  if (run_length) on_miss(run_start << line_shift_, run_length);
  return r;
}

inline bool SetAssocCache::access_line(std::uint64_t address, bool write, bool& evicted, std::uint64_t& victim_address) {
  const std::uint64_t line = address >> line_shift_;
  const std::uint64_t tag = set_div_.div(line);
  if (tag >= kDirty) throw std::out_of_range("address beyond the cache model's tag range");
  const std::uint64_t set = set_of(line);
  std::uint64_t victim = 0;
  bool dirty = false;
  const auto t = static_cast<std::uint32_t>(tag);
  const bool hit = ways_ == 16   ? probe<16>(set, t, write, dirty, victim)
                   : ways_ == 64 ? probe<64>(set, t, write, dirty, victim)
                                 : probe<0>(set, t, write, dirty, victim);
  evicted = dirty;
  if (dirty) victim_address = victim << line_shift_;
  return hit;
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
  // Line by line in the order of the line cache's sets (a granule's lines lie in consecutive sets).
  std::uint64_t n = 0;
  for (std::uint64_t set = 0; set < sets_; ++set) {
    std::uint32_t* tags = set_tags(set);
    const std::uint32_t* stamps = tags + ways_;
    for (std::uint32_t j = 0; j < granule_lines_; ++j) {
      for (std::uint32_t i = 0; i < ways_; ++i) {
        if (stamps[i] != 0 && (tags[i] & kDirty)) {
          ++n;
          on_writeback((line_of(tags[i] & ~kDirty, set) << line_shift_) + std::uint64_t{j} * line_bytes_);
        }
      }
    }
    for (std::uint32_t i = 0; i < ways_; ++i) tags[i] &= ~kDirty;
  }
  return n;
}

}  // namespace attnsim::sim
