#include "sim/cache.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace attnsim::sim {

SetAssocCache::SetAssocCache(std::uint64_t size_bytes, std::uint32_t ways, std::uint32_t line_bytes, WritePolicy policy,
                             std::uint32_t granule_lines, SetIndex index, std::uint32_t displacement_lines)
    : ways_(ways), line_bytes_(line_bytes), granule_lines_(granule_lines), hashed_(index == SetIndex::hashed), policy_(policy) {
  if (ways == 0 || line_bytes == 0 || (line_bytes & (line_bytes - 1)) != 0 || size_bytes % (std::uint64_t{ways} * line_bytes) != 0 ||
      size_bytes == 0) {
    throw std::invalid_argument("cache geometry: size must be a positive multiple of ways x line, line a power of two");
  }
  sets_ = size_bytes / (std::uint64_t{ways} * line_bytes);
  if (granule_lines == 0 || (granule_lines & (granule_lines - 1)) != 0 || sets_ % granule_lines != 0) {
    throw std::invalid_argument("cache granule: a power of two of lines that divides the sets");
  }
  const std::uint32_t step = displacement_lines ? displacement_lines : granule_lines;
  if ((step & (step - 1)) != 0 || step % granule_lines != 0 || sets_ % step != 0) {
    throw std::invalid_argument("cache displacement: a power of two of lines, a multiple of the granule, dividing the sets");
  }
  displacement_div_ = Divisor(sets_ / step);
  displacement_unit_ = step / granule_lines;
  sets_ /= granule_lines;
  set_div_ = Divisor(sets_);
  line_shift_ = 0;
  while ((1u << line_shift_) < line_bytes * granule_lines) ++line_shift_;
  state_.assign(sets_ * 2 * ways_, 0);
}

void SetAssocCache::split() {
  if (granule_lines_ == 1) return;
  const std::uint64_t g = granule_lines_;
  std::vector<std::uint32_t, HugePageAllocator<std::uint32_t>> lines(sets_ * g * 2 * ways_);
  // Granule set s stands for line sets g s .. g s + g - 1, each holding the same tags and stamps.
  for (std::uint64_t set = 0; set < sets_; ++set) {
    for (std::uint64_t j = 0; j < g; ++j) std::copy_n(set_tags(set), 2 * ways_, &lines[(set * g + j) * 2 * ways_]);
  }
  state_.swap(lines);
  sets_ *= g;
  set_div_ = Divisor(sets_);
  displacement_unit_ *= g;  // line set = g x granule set + j: the same displacement, in line sets
  while ((1u << line_shift_) > line_bytes_) --line_shift_;
  granule_lines_ = 1;
}

void SetAssocCache::invalidate() {
  std::fill(state_.begin(), state_.end(), 0);
  clock_ = 0;
}

std::uint64_t SetAssocCache::state_bytes() const { return state_.size() * sizeof(std::uint32_t); }

bool SetAssocCache::contains(std::uint64_t address) const {
  const std::uint64_t line = address >> line_shift_;
  const std::uint64_t set = set_of(line);
  const auto tag = static_cast<std::uint32_t>(set_div_.div(line));
  const std::uint32_t* tags = set_tags(set);
  for (std::uint32_t i = 0; i < ways_; ++i) {
    if ((tags[i] & ~kDirty) == tag && tags[ways_ + i] != 0) return true;
  }
  return false;
}

// Re-ranks each set's stamps 1..ways in LRU order when the cache-wide clock is about to wrap
// (after 4 billion probes); order within every set, which is all LRU needs, is kept.
void SetAssocCache::renumber() {
  std::vector<std::uint32_t> order(ways_);
  std::uint32_t top = 0;
  for (std::uint64_t set = 0; set < sets_; ++set) {
    std::uint32_t* stamps = set_tags(set) + ways_;
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return stamps[a] < stamps[b]; });
    std::uint32_t next = 1;
    for (std::uint32_t i : order) {
      if (stamps[i] != 0) stamps[i] = next++;
    }
    top = std::max(top, next);
  }
  clock_ = top;
}

}  // namespace attnsim::sim
