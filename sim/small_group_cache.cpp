#include "sim/small_group_cache.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace attnsim::sim {

SmallGroupCache::SmallGroupCache(std::uint64_t capacity_bytes, std::uint32_t max_groups, std::uint32_t sets)
    : capacity_units_(std::max<std::uint64_t>(1, capacity_bytes / 64)),
      set_capacity_units_(std::max<std::uint64_t>(1, capacity_units_ / std::max<std::uint32_t>(1, sets))),
      max_groups_(std::max<std::uint32_t>(max_groups, 2)),
      sets_(std::max<std::uint32_t>(1, sets)),
      width_(sets_ + 1) {
  if (max_groups_ > kMaxGroups) {
    throw std::invalid_argument("SmallGroupCache: at most " + std::to_string(kMaxGroups) + " groups, not " +
                                std::to_string(max_groups_));
  }
  keys_.assign(max_groups_, 0);
  valid_.assign(max_groups_, 0);
  masks_.assign(std::size_t{max_groups_} * width_, 0);
  used_in_set_.assign(sets_, 0);
  slots_in_set_.assign(sets_, 0);
}

std::uint32_t SmallGroupCache::find(std::uint64_t key) const {
  const std::uint8_t tag = tag_of(key);
  std::uint64_t candidates = 0;
#if defined(__SSE2__)
  const __m128i t = _mm_set1_epi8(static_cast<char>(tag));
  for (std::uint32_t i = 0; i < kMaxGroups; i += 16) {
    const __m128i v = _mm_load_si128(reinterpret_cast<const __m128i*>(tags_ + i));
    candidates |= std::uint64_t{static_cast<std::uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, t)))} << i;
  }
#else
  for (std::uint32_t i = 0; i < kMaxGroups; ++i) candidates |= std::uint64_t{tags_[i] == tag} << i;
#endif
  for (candidates &= occupied_; candidates; candidates &= candidates - 1) {
    const auto s = static_cast<std::uint32_t>(__builtin_ctzll(candidates));
    if (keys_[s] == key) return s;
  }
  return kNone;
}

std::uint32_t SmallGroupCache::least_recent(std::uint64_t among) const {
  for (std::uint8_t s = head_; s != kEnd; s = next_[s]) {
    if (among >> s & 1) return s;
  }
  return kNone;
}

template <int Sign>
void SmallGroupCache::count_in_sets(std::uint32_t s, std::uint64_t units) {
  const std::uint64_t* m = set_units(s);
  const std::uint64_t bit = std::uint64_t{1} << s;
  for_each_set(m, sets_, [&](std::uint32_t k) {
    const std::uint64_t n = count_units(units & m[k]);
    if (n == 0) return;
    if constexpr (Sign > 0) {
      used_in_set_[k] += n;
      slots_in_set_[k] |= bit;
    } else {
      used_in_set_[k] -= n;
      slots_in_set_[k] &= ~bit;  // its valid units all go
    }
  });
}

void SmallGroupCache::unlink(std::uint32_t s) {
  const std::uint8_t p = prev_[s], n = next_[s];
  (p == kEnd ? head_ : next_[p]) = n;
  (n == kEnd ? tail_ : prev_[n]) = p;
}

void SmallGroupCache::push_back(std::uint32_t s) {
  prev_[s] = tail_;
  next_[s] = kEnd;
  (tail_ == kEnd ? head_ : next_[tail_]) = static_cast<std::uint8_t>(s);
  tail_ = static_cast<std::uint8_t>(s);
}

void SmallGroupCache::evict(std::uint32_t s) {
  used_units_ -= count_units(valid_[s]);
  count_in_sets<-1>(s, valid_[s]);
  occupied_ &= ~(std::uint64_t{1} << s);
  unlink(s);
  --count_;
}

void SmallGroupCache::fit_sets(std::uint32_t keep, std::uint64_t added) {
  const std::uint64_t* m = set_units(keep);
  const std::uint64_t others = ~(std::uint64_t{1} << keep);
  const auto fit = [&](std::uint32_t k) {
    // The least recently used groups with units in set k first, while it is over its share.
    while (used_in_set_[k] > set_capacity_units_) {
      const std::uint32_t victim = least_recent(slots_in_set_[k] & others);
      if (victim == kNone) return;
      evict(victim);
    }
  };
  for_each_set(m, sets_, [&](std::uint32_t k) {
    if (added & m[k]) fit(k);
  });
}

std::uint64_t SmallGroupCache::access(std::uint64_t key, const GroupShape& shape, std::uint64_t mask,
                                      std::uint64_t fill, GroupSetMasks& masks) {
  std::uint32_t s = find(key);
  if (s == kNone) {
    if (fill == 0) return 0;
    if (count_ == max_groups_) evict(head_);
    s = static_cast<std::uint32_t>(__builtin_ctzll(~occupied_));  // a free slot below max_groups_
    occupied_ |= std::uint64_t{1} << s;
    tags_[s] = tag_of(key);
    keys_[s] = key;
    valid_[s] = 0;
    std::copy_n(masks.of(key, shape), width_, &masks_[std::size_t{s} * width_]);
    ++count_;
    push_back(s);
  } else if (tail_ != s) {
    unlink(s);
    push_back(s);
  }
  const std::uint64_t hits = valid_[s] & mask;
  const std::uint64_t added = fill & ~valid_[s];
  valid_[s] |= fill;
  used_units_ += count_units(added);
  if (added) {
    count_in_sets<+1>(s, added);
    fit_sets(s, added);
  }
  while (used_units_ > capacity_units_ && count_ > 1) evict(least_recent(occupied_ & ~(std::uint64_t{1} << s)));
  return hits;
}

void SmallGroupCache::invalidate() {
  count_ = 0;
  occupied_ = 0;
  used_units_ = 0;
  head_ = tail_ = kEnd;
  std::fill(used_in_set_.begin(), used_in_set_.end(), 0);
  std::fill(slots_in_set_.begin(), slots_in_set_.end(), 0);
}

std::uint64_t SmallGroupCache::state_bytes_for(std::uint32_t max_groups, std::uint32_t sets) {
  const std::uint64_t slots = std::max<std::uint32_t>(max_groups, 2), n = std::max<std::uint32_t>(1, sets);
  return sizeof(SmallGroupCache) + (2 * slots + slots * (n + 1) + 2 * n) * sizeof(std::uint64_t);
}

std::uint64_t SmallGroupCache::state_bytes() const {
  return sizeof(*this) + (keys_.capacity() + valid_.capacity() + masks_.capacity() + used_in_set_.capacity() +
                          slots_in_set_.capacity()) *
                             sizeof(std::uint64_t);
}

}  // namespace attnsim::sim
