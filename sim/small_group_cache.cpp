#include "sim/small_group_cache.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace attnsim::sim {

GroupSetMasks::GroupSetMasks(std::uint32_t sets, std::uint32_t line_bytes)
    : sets_(sets),
      line_div_(std::max<std::uint32_t>(64, line_bytes)),
      period_div_(std::uint64_t{std::max<std::uint32_t>(64, line_bytes)} * std::max<std::uint32_t>(1, sets)),
      scratch_(std::size_t{sets} + 1, 0) {
  if (sets == 0) throw std::invalid_argument("GroupSetMasks: a cache has at least one set");
  if (line_bytes == 0 || line_bytes % 64 != 0) {
    throw std::invalid_argument("GroupSetMasks: the line must be a positive multiple of 64 B, not " +
                                std::to_string(line_bytes) + " B");
  }
}

const std::uint64_t* GroupSetMasks::of(std::uint64_t key, const GroupShape& shape) {
  // A unit's set depends on the key only through key mod the period: the sets of a shape at each
  // 64 B offset within the period are found once.
  if (key % 64 != 0) {
    find_group_sets(scratch_.data(), key, shape, sets_, line_div_);
    return scratch_.data();
  }
  const std::uint64_t offset = period_div_.mod(key);
  if (offset == last_offset_ && shape.stride == last_shape_.stride && shape.units_per_row == last_shape_.units_per_row) {
    return last_;
  }
  const std::size_t width = std::size_t{sets_} + 1;
  const std::uint64_t offsets = period_div_.value() / 64;
  const std::uint64_t entry = shapes_.index_of(shape) * offsets + offset / 64;
  if (entry >= ready_.size()) {
    ready_.resize((entry / offsets + 1) * offsets, 0);
    memo_.resize(ready_.size() * width, 0);
  }
  std::uint64_t* m = &memo_[entry * width];
  if (!ready_[entry]) {
    find_group_sets(m, key, shape, sets_, line_div_);
    ready_[entry] = 1;
  }
  last_shape_ = shape;
  last_offset_ = offset;
  last_ = m;
  return m;
}

std::uint64_t GroupSetMasks::state_bytes() const {
  return (memo_.capacity() + scratch_.capacity()) * sizeof(std::uint64_t) + ready_.capacity();
}

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
  const auto count = [&](std::uint32_t k) {
    const std::uint64_t n = count_units(units & m[k]);
    if (n == 0) return;
    if constexpr (Sign > 0) {
      used_in_set_[k] += n;
      slots_in_set_[k] |= bit;
    } else {
      used_in_set_[k] -= n;
      slots_in_set_[k] &= ~bit;  // its valid units all go
    }
  };
  if (sets_ > 64) {  // the word of sets has a bit for the first 64 only
    for (std::uint32_t k = 0; k < sets_; ++k) count(k);
    return;
  }
  for (std::uint64_t in = m[sets_]; in; in &= in - 1) count(static_cast<std::uint32_t>(__builtin_ctzll(in)));
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
  if (sets_ > 64) {  // the word of sets has a bit for the first 64 only
    for (std::uint32_t k = 0; k < sets_; ++k) {
      if (added & m[k]) fit(k);
    }
    return;
  }
  for (std::uint64_t in = m[sets_]; in; in &= in - 1) {
    const auto k = static_cast<std::uint32_t>(__builtin_ctzll(in));
    if (added & m[k]) fit(k);
  }
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

std::uint64_t SmallGroupCache::state_bytes() const {
  return sizeof(*this) + (keys_.capacity() + valid_.capacity() + masks_.capacity() + used_in_set_.capacity() +
                          slots_in_set_.capacity()) *
                             sizeof(std::uint64_t);
}

}  // namespace attnsim::sim
