// Inline and template definitions of cache.h (the probe loop is the simulator's hot path).
#pragma once

#include <stdexcept>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace attnsim::sim {

#if defined(__SSE2__)
namespace cache_simd {
// Lanes of one 128-bit register for a word type, and the operations the probe needs on them. Word
// values compared here (tags without the dirty bit, ranks up to 1024) are below the word's top bit,
// so the signed compares order them as unsigned.
template <class Word>
struct Lanes;
template <>
struct Lanes<std::uint16_t> {
  static constexpr std::uint32_t kCount = 8;
  static __m128i splat(std::uint32_t v) { return _mm_set1_epi16(static_cast<short>(v)); }
  static __m128i eq(__m128i a, __m128i b) { return _mm_cmpeq_epi16(a, b); }
  static __m128i gt(__m128i a, __m128i b) { return _mm_cmpgt_epi16(a, b); }
  static __m128i sub(__m128i a, __m128i b) { return _mm_sub_epi16(a, b); }
  // One bit per lane (lane i at bit i) of a compare result.
  static std::uint32_t bits(__m128i m) {
    return static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_packs_epi16(m, _mm_setzero_si128()))) & 0xFFu;
  }
};
template <>
struct Lanes<std::uint32_t> {
  static constexpr std::uint32_t kCount = 4;
  static __m128i splat(std::uint32_t v) { return _mm_set1_epi32(static_cast<int>(v)); }
  static __m128i eq(__m128i a, __m128i b) { return _mm_cmpeq_epi32(a, b); }
  static __m128i gt(__m128i a, __m128i b) { return _mm_cmpgt_epi32(a, b); }
  static __m128i sub(__m128i a, __m128i b) { return _mm_sub_epi32(a, b); }
  static std::uint32_t bits(__m128i m) { return static_cast<std::uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(m))); }
};
template <class Word>
__m128i load(const Word* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
template <class Word>
void store(Word* p, __m128i v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v);
}
// Whether the fixed-size vector loops apply: W a multiple of the lanes, at most 64 ways (a 64-bit mask).
template <std::uint32_t W, class Word>
constexpr bool kVector = W != 0 && W % Lanes<Word>::kCount == 0 && W <= 64;
}  // namespace cache_simd
#endif

// The recency order of a set of at most 16 ways in one 64-bit word: nibble p is the way at recency
// position p, 0 the most recent; nibbles beyond the ways are 0.
namespace lru_order {
constexpr std::uint64_t kNibbles = 0x1111111111111111ull;
// The nibbles that hold positions of a set of `ways` ways.
inline std::uint64_t mask(std::uint32_t ways) { return ways >= 16 ? ~std::uint64_t{0} : (std::uint64_t{1} << (4 * ways)) - 1; }
// An empty set: every way invalid, way 0 at the least recent position, so that misses fill ways
// 0, 1, 2, ... in turn. Contract: ways <= 16.
inline std::uint64_t empty(std::uint32_t ways) {
  std::uint64_t order = 0;
  for (std::uint32_t p = 0; p < ways; ++p) order |= std::uint64_t{ways - 1 - p} << (4 * p);
  return order;
}
// The position of `way` (which the order holds exactly once among its positions): the lowest
// nibble equal to it, found as the lowest zero nibble of order ^ way (a borrow can only mark
// nibbles above a zero one).
inline std::uint32_t position_of(std::uint64_t order, std::uint32_t way) {
  const std::uint64_t x = order ^ (kNibbles * way);
  const std::uint64_t zero = (x - kNibbles) & ~x & (kNibbles << 3);
  return static_cast<std::uint32_t>(__builtin_ctzll(zero)) >> 2;
}
// Moves the way at position p to the front (the most recent); the ways before it age by one.
inline std::uint64_t to_front(std::uint64_t order, std::uint32_t p, std::uint32_t way) {
  const std::uint64_t newer = (std::uint64_t{1} << (4 * p)) - 1;  // positions 0 .. p - 1
  return (order & ~((newer << 4) | 0xF)) | ((order & newer) << 4) | way;
}
}  // namespace lru_order

template <std::uint32_t W, class Word>
inline std::uint32_t SetAssocCache::victim_way(const Word* ranks) const {
  const std::uint32_t ways = W ? W : ways_;
#if defined(__SSE2__)
  if constexpr (cache_simd::kVector<W, Word>) {
    using L = cache_simd::Lanes<Word>;
    std::uint64_t invalid = 0, oldest = 0;
    const __m128i zero = _mm_setzero_si128(), last = L::splat(W);
    for (std::uint32_t k = 0; k < W / L::kCount; ++k) {
      const __m128i r = cache_simd::load(ranks + L::kCount * k);
      invalid |= std::uint64_t{L::bits(L::eq(r, zero))} << (L::kCount * k);
      oldest |= std::uint64_t{L::bits(L::eq(r, last))} << (L::kCount * k);
    }
    return static_cast<std::uint32_t>(__builtin_ctzll(invalid ? invalid : oldest));
  }
#endif
  std::uint32_t oldest = 0;
  for (std::uint32_t i = 0; i < ways; ++i) {
    if (ranks[i] == 0) return i;
    if (std::uint32_t{ranks[i]} == ways) oldest = i;
  }
  return oldest;
}

template <std::uint32_t W, class Word>
inline void SetAssocCache::make_most_recent(Word* ranks, std::uint32_t way, Word rank) const {
  const std::uint32_t ways = W ? W : ways_;
  // Every valid way more recent than `way` (every valid way, when `way` was invalid) ages by one.
  const std::uint32_t bound = rank ? rank : ways + 1;
#if defined(__SSE2__)
  if constexpr (cache_simd::kVector<W, Word>) {
    using L = cache_simd::Lanes<Word>;
    const __m128i zero = _mm_setzero_si128(), b = L::splat(bound);
    for (std::uint32_t k = 0; k < W / L::kCount; ++k) {
      const __m128i r = cache_simd::load(ranks + L::kCount * k);
      const __m128i older = _mm_andnot_si128(L::eq(r, zero), L::gt(b, r));  // all ones: add 1
      cache_simd::store(ranks + L::kCount * k, L::sub(r, older));
    }
    ranks[way] = 1;
    return;
  }
#endif
  for (std::uint32_t i = 0; i < ways; ++i) ranks[i] = static_cast<Word>(ranks[i] + (ranks[i] != 0 && std::uint32_t{ranks[i]} < bound));
  ranks[way] = 1;
}

template <std::uint32_t W, class Word>
inline std::uint32_t SetAssocCache::find_way(const Word* tags, std::uint32_t tag) const {
  const std::uint32_t ways = W ? W : ways_;
  // A tag occurs at most once in a set, and never as kInvalidTag (tags are below tag_limit_).
#if defined(__SSE2__)
  if constexpr (cache_simd::kVector<W, Word>) {
    using L = cache_simd::Lanes<Word>;
    const __m128i key = L::splat(tag), clean = L::splat(static_cast<Word>(~kDirtyBit<Word>));
    std::uint64_t found = 0;
    for (std::uint32_t k = 0; k < W / L::kCount; ++k) {
      const __m128i t = _mm_and_si128(cache_simd::load(tags + L::kCount * k), clean);
      found |= std::uint64_t{L::bits(L::eq(t, key))} << (L::kCount * k);
    }
    return found ? static_cast<std::uint32_t>(__builtin_ctzll(found)) : ways;
  }
#endif
  std::uint32_t hit = ways;
  for (std::uint32_t i = 0; i < ways; ++i) hit = static_cast<std::uint32_t>(tags[i] & ~kDirtyBit<Word>) == tag ? i : hit;
  return hit;
}

template <std::uint32_t W, class Word>
inline bool SetAssocCache::probe(std::uint64_t set, std::uint32_t tag, bool write, bool& evicted_dirty,
                                 std::uint64_t& victim_line) {
  constexpr Word kDirty = kDirtyBit<Word>;
  const std::uint32_t ways = W ? W : ways_;
  const bool ordered = W ? W <= 16 : ordered_;  // a constant when the associativity is
  Word* tags = set_words<Word>(set);
  Word* ranks = tags + tag_words_;  // ranked sets only
  const std::uint32_t hit = find_way<W>(tags, tag);
  evicted_dirty = false;
  const bool dirtying = write && policy_ == WritePolicy::write_back;
  if (hit != ways) {
    if (ordered) {
      const std::uint64_t order = order_of(tags);
      if ((order & 0xF) != hit) set_order(tags, lru_order::to_front(order, lru_order::position_of(order, hit), hit));
    } else if (ranks[hit] != 1) {  // the most recent already: no change
      make_most_recent<W>(ranks, hit, ranks[hit]);
    }
    if (dirtying) tags[hit] = static_cast<Word>(tags[hit] | kDirty);
    return true;
  }
  if (write && policy_ == WritePolicy::write_through) return false;  // no allocation
  const std::uint64_t order = ordered ? order_of(tags) : 0;
  const std::uint32_t victim =
      ordered ? static_cast<std::uint32_t>(order >> (4 * (ways - 1))) & 0xF : victim_way<W>(ranks);
  if (tags[victim] & kDirty) {  // never set on kInvalidTag
    evicted_dirty = true;
    victim_line = line_of(static_cast<std::uint32_t>(tags[victim] & ~kDirty), set);
  }
  tags[victim] = static_cast<Word>(tag | (dirtying ? kDirty : 0));
  if (ordered) {
    set_order(tags, ((order << 4) | victim) & lru_order::mask(ways));  // the least recent to the front
  } else {
    make_most_recent<W>(ranks, victim, ranks[victim]);
  }
  return false;
}

template <class OnMiss, class OnWriteback>
ProbeResult SetAssocCache::access(std::uint64_t address, std::uint64_t bytes, bool write, OnMiss&& on_miss,
                                  OnWriteback&& on_writeback) {
  // The shipped geometries are 16-way (L2, MALL): fixed-size loops vectorise.
  if (ways_ == 16) return access_words<16>(address, bytes, write, on_miss, on_writeback);
  if (ways_ == 64) return access_words<64>(address, bytes, write, on_miss, on_writeback);
  return access_words<0>(address, bytes, write, on_miss, on_writeback);
}

template <std::uint32_t W, class Word, class OnMiss, class OnWriteback>
ProbeResult SetAssocCache::access_impl(std::uint64_t address, std::uint64_t bytes, bool write, OnMiss&& on_miss,
                                       OnWriteback&& on_writeback) {
  ProbeResult r;
  if (bytes == 0) return r;
  const std::uint64_t first = address >> line_shift_;
  const std::uint64_t last = (address + bytes - 1) >> line_shift_;
  if (index_map_.tag_of(last) >= tag_limit_) throw std::out_of_range("address beyond the cache model's tag range");
  std::uint64_t index = index_map_.undisplaced_set_of(first);
  auto tag = static_cast<std::uint32_t>(index_map_.tag_of(first));
  std::uint64_t set = set_of(first);
  std::uint64_t run_start = 0, run_length = 0;
  // Write-through writes go on to the next level whether they hit or not.
  const bool forward_all = write && policy_ == WritePolicy::write_through;
  for (std::uint64_t line = first; line <= last; ++line) {
    bool dirty = false;
    std::uint64_t victim = 0;
    const bool hit = probe<W, Word>(set, tag, write, dirty, victim);
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
  const std::uint64_t tag = index_map_.tag_of(line);
  if (tag >= tag_limit_) throw std::out_of_range("address beyond the cache model's tag range");
  const std::uint64_t set = set_of(line);
  std::uint64_t victim = 0;
  bool dirty = false;
  const auto t = static_cast<std::uint32_t>(tag);
  bool hit;
  if (narrow_) {
    hit = ways_ == 16 ? probe<16, std::uint16_t>(set, t, write, dirty, victim) : probe<0, std::uint16_t>(set, t, write, dirty, victim);
  } else {
    hit = ways_ == 16 ? probe<16, std::uint32_t>(set, t, write, dirty, victim) : probe<0, std::uint32_t>(set, t, write, dirty, victim);
  }
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
  return narrow_ ? flush_words<std::uint16_t>(on_writeback) : flush_words<std::uint32_t>(on_writeback);
}

template <class Word, class OnWriteback>
std::uint64_t SetAssocCache::flush_words(OnWriteback&& on_writeback) {
  constexpr Word kDirty = kDirtyBit<Word>;
  // Line by line in the order of the line cache's sets (a granule's lines lie in consecutive sets).
  std::uint64_t n = 0;
  for (std::uint64_t set = 0; set < sets_; ++set) {
    Word* tags = set_words<Word>(set);
    for (std::uint32_t j = 0; j < granule_lines_; ++j) {
      for (std::uint32_t i = 0; i < ways_; ++i) {
        if (tags[i] & kDirty) {  // never set on kInvalidTag
          ++n;
          on_writeback((line_of(static_cast<std::uint32_t>(tags[i] & ~kDirty), set) << line_shift_) +
                       std::uint64_t{j} * line_bytes_);
        }
      }
    }
    for (std::uint32_t i = 0; i < ways_; ++i) tags[i] = static_cast<Word>(tags[i] & ~kDirty);
  }
  return n;
}

}  // namespace attnsim::sim
